"""Saving and loading models in one portable format (TensorFlow.js "layers-model" style).

A saved model is a directory — or, for a path ending in ``.zip``, a zip file (stored, not
compressed) — holding two files:

``model.json``
    ``{"format": "layers-model", "formatVersion": 1, "generatedBy": "tensorbridge ...",
    "modelTopology": {"class_name": "Sequential" | "Model", "config": {...}},
    "trainingConfig": {"loss": ..., "metrics": [...], "loss_weights": ...,
    "optimizer_config": {"class_name": "Adam", "config": {...}}} | null,
    "weightsManifest": [{"paths": ["weights.bin"], "weights": [entry, ...]}]}``

    Each weight ``entry`` is ``{"name": "dense/kernel", "shape": [784, 128], "dtype":
    "float32", "offset": 0, "byteLength": 401408, "group": "model"}``; optimizer state entries
    have ``"group": "optimizer"`` and names ``optimizer/iterations`` and
    ``optimizer/<weight name>/<slot>``. Layer configs use the Keras field names (``units``,
    ``activation``, ``kernel_initializer``…), the functional config lists ``inbound_nodes`` as
    ``[[layer_name, node_index, tensor_index, {}], ...]``.

``weights.bin``
    The raw values, little-endian, row-major, one after another in manifest order. ``offset`` is
    authoritative: an entry starts on a multiple of its item size (padding is inserted only
    where a smaller type precedes it, so an all-float32 file is exactly TF.js's layout), which
    lets JavaScript map a ``Float32Array``/``Float64Array`` onto the buffer without copying.
    dtypes: ``float32``, ``float64``, ``int32``, ``int64``, ``bool`` (one byte, 0 or 1).

Nothing here needs NumPy (``array`` and ``struct`` do the byte work when it is absent), so R and
JavaScript clients can read and write the same files with their own byte tools.
"""

from __future__ import annotations

import array
import inspect
import io
import json
import os
import sys
import warnings
import zipfile
from typing import Any

from .. import dtypes as D
from ..backends import get_backend
from ..host_arrays import HostList
from ..ops.creation import tensor
from ..tensor import Tensor
from . import losses as _losses
from . import metrics as _metrics
from . import optimizers as _optimizers
from .base import LAYERS, Layer

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "deserialize_layer",
    "from_artifacts",
    "load_model",
    "load_weights",
    "model_topology",
    "save_model",
    "save_weights",
    "serialize_layer",
    "to_artifacts",
    "weight_names",
]

FORMAT = "layers-model"
FORMAT_VERSION = 1
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.bin"

# dtype -> (array typecode, item size), from DType's table; bool is stored as one byte ("B")
# since array.array has no "?"; "<" byte order is applied explicitly
_CODES = {n: ("B" if d.buffer_format == "?" else d.buffer_format, d.itemsize)
          for n, d in D.DTYPES.items()}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("tensorbridge")
    except Exception:  # pragma: no cover - not installed as a distribution
        return "0"


# -- layers ------------------------------------------------------------------------------------
def serialize_layer(layer: Layer) -> dict[str, Any]:
    return {"class_name": type(layer).__name__, "config": layer.get_config()}


def deserialize_layer(spec: dict[str, Any]) -> Layer:
    """A layer (or model) from ``{"class_name", "config"}``. Unknown config keys whose value is
    null are ignored (Keras/TF.js files carry ``kernel_regularizer: null`` and the like)."""
    name = spec["class_name"]
    cls = LAYERS.lookup(name)
    config = dict(spec.get("config") or {})
    if not isinstance(cls, type) or not hasattr(cls, "from_config"):
        raise ValueError(f"cannot deserialize {name!r}")
    if getattr(cls, "_is_model", False):  # a model rebuilds itself from its config
        return cls.from_config(config)
    accepted = _accepted_args(cls)
    if accepted is not None:
        unknown = [k for k in config if k not in accepted]
        for k in unknown:
            if config[k] is None or k in _IGNORED_KEYS:
                del config[k]
            else:
                raise ValueError(f"layer {config.get('name', name)!r} ({name}): unsupported "
                                 f"setting {k}={config[k]!r}")
    return cls.from_config(config)


_IGNORED_KEYS = {"autocast", "build_config", "module", "registered_name"}


def _accepted_args(cls: type) -> set[str] | None:
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        params = inspect.signature(init).parameters
        names.update(p for p in params if p != "self")
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return names
    return names


def model_topology(model: Any) -> dict[str, Any]:
    return {"class_name": type(model).__name__, "config": model.get_config(),
            "keras_version": f"tensorbridge {_version()}", "backend": "tensorbridge"}


# -- weights -----------------------------------------------------------------------------------
def weight_names(model: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """``(name, variable)`` for every weight in ``model.weights`` order; weights of a nested
    model are prefixed with its name so names stay unique."""
    out: list[tuple[str, Any]] = []
    seen: set[int] = set()
    for layer in model.layers:
        if layer._is_model:
            pairs = weight_names(layer, f"{prefix}{layer.name}/")
        else:
            pairs = [(f"{prefix}{w.name}", w) for w in layer.weights]
        for n, w in pairs:
            if id(w) not in seen:
                seen.add(id(w))
                out.append((n, w))
    return out


def _encode(t: Tensor) -> bytes:
    dt = t.dtype.name
    code, _ = _CODES[dt]
    try:
        import numpy as np

        np_dt = {"bool": "u1"}.get(dt, None)
        arr = t.numpy()
        arr = arr.astype(np.uint8) if dt == "bool" else arr
        return np.ascontiguousarray(arr, dtype=np.dtype(np_dt or arr.dtype).newbyteorder(
            "<")).tobytes()
    except ImportError:  # pragma: no cover - Pyodide without NumPy
        a = _host_array(t, code)
        if a is None:
            flat = _flatten(t.tolist())
            a = array.array(code, [int(v) for v in flat] if code in "iqB" else flat)
        if sys.byteorder == "big":
            a.byteswap()
        return a.tobytes()


def _host_array(t: Tensor, code: str) -> array.array | None:
    """The values as an ``array`` of ``code`` straight from the backend's buffer, where the
    backend hands one out (``to_buffer``: the tfjs backend's storage, a memoryview); None
    elsewhere. No Python list of the values is made."""
    reader = getattr(t.backend, "to_buffer", None)
    if reader is None:
        return None
    view = reader(t._raw())
    fmt = view.format.lstrip("@=<")
    if fmt == code:
        a = array.array(code)
        a.frombytes(view.cast("B"))
        return a
    return array.array(code, view.cast(fmt) if view.ndim != 1 else view)


def _flatten(x: Any) -> list[Any]:
    if not isinstance(x, list):
        return [x]
    out: list[Any] = []
    for v in x:
        out.extend(_flatten(v))
    return out


def _decode(buf: bytes, entry: dict[str, Any], backend: Any) -> Tensor:
    dt = entry["dtype"]
    if dt not in _CODES:
        raise ValueError(f"weight {entry['name']!r}: unsupported dtype {dt!r}")
    code, size = _CODES[dt]
    shape = tuple(int(d) for d in entry["shape"])
    n = 1
    for d in shape:
        n *= d
    off = int(entry["offset"])
    nbytes = n * size
    if off + nbytes > len(buf):
        raise ValueError(f"weight {entry['name']!r}: bytes {off}..{off + nbytes} lie beyond the "
                         f"end of the weights file ({len(buf)} bytes)")
    try:
        import numpy as np

        np_dt = "<" + _CODES[dt][0]  # little-endian; bool as uint8 ("<B")
        arr = np.frombuffer(buf, dtype=np_dt, count=n, offset=off).reshape(shape)
        arr = arr.astype(bool) if dt == "bool" else arr.astype(arr.dtype.newbyteorder("="),
                                                               copy=False)
        return tensor(arr, dtype=dt, backend=backend)
    except ImportError:  # pragma: no cover - Pyodide without NumPy
        a = array.array(code)
        a.frombytes(buf[off:off + nbytes])
        if sys.byteorder == "big":
            a.byteswap()
        if dt != "bool":  # the array itself as the host values: no Python list of them

            be = get_backend(backend)
            return be.from_host(HostList(a, shape, D.as_dtype(dt)), D.as_dtype(dt), copy=False)
        values = [bool(v) for v in a] if dt == "bool" else list(a)
        t = tensor(values, dtype=dt, backend=backend) if values else tensor(
            [], dtype=dt, backend=backend)
        return t.reshape(shape)


def _pack(entries: list[tuple[str, Tensor, str]]) -> tuple[list[dict[str, Any]], bytes]:
    out = io.BytesIO()
    manifest = []
    for name, t, group in entries:
        _, size = _CODES[t.dtype.name]
        pad = (-out.tell()) % size
        if pad:
            out.write(b"\0" * pad)
        data = _encode(t)
        manifest.append({"name": name, "shape": list(t.shape), "dtype": t.dtype.name,
                         "offset": out.tell(), "byteLength": len(data), "group": group})
        out.write(data)
    return manifest, out.getvalue()


def _optimizer_entries(model: Any, names: dict[int, str]) -> list[tuple[str, Tensor, str]]:
    opt = model.optimizer
    if opt is None or opt.state is None:
        return []
    out: list[tuple[str, Tensor, str]] = [("optimizer/iterations", opt.state["iterations"],
                                           "optimizer")]
    for var, slots in zip(opt.variables, opt.state["slots"]):
        vname = names.get(id(var), var.name)
        for slot, value in slots.items():
            out.append((f"optimizer/{vname}/{slot}", value, "optimizer"))
    return out


def _training_config(model: Any) -> dict[str, Any] | None:
    args = getattr(model, "_compile_args", None)
    if args is None or model.optimizer is None:
        return None

    def enc(spec: Any, kind: str) -> Any:
        if spec is None or isinstance(spec, str | int | float | bool):
            return spec
        if isinstance(spec, list | tuple):
            return [enc(s, kind) for s in spec]
        if isinstance(spec, dict):
            return {k: enc(v, kind) for k, v in spec.items()}
        if kind == "loss" and isinstance(spec, _losses.Loss):
            return _losses.serialize(spec)
        if kind == "metric" and isinstance(spec, _metrics.Metric):
            return _metrics.serialize(spec)
        raise TypeError(f"{kind} {spec!r} cannot be saved")

    try:
        return {"loss": enc(args["loss"], "loss"), "metrics": enc(args["metrics"], "metric"),
                "loss_weights": args["loss_weights"],
                "optimizer_config": _optimizers.serialize(model.optimizer)}
    except TypeError as e:
        warnings.warn(f"the training configuration is not saved: {e}", RuntimeWarning,
                      stacklevel=3)
        return None


# -- artifacts (in memory) -------------------------------------------------------------------
def to_artifacts(model: Any, include_optimizer: bool = True,
                 weights_only: bool = False) -> tuple[dict[str, Any], bytes]:
    """``(model.json as a dict, weights.bin bytes)`` without touching the file system."""
    pairs = weight_names(model)
    names = {id(w): n for n, w in pairs}
    entries = [(n, w.read(), "model") for n, w in pairs]
    if include_optimizer and not weights_only:
        entries += _optimizer_entries(model, names)
    manifest, blob = _pack(entries)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "formatVersion": FORMAT_VERSION,
        "generatedBy": f"tensorbridge {_version()}",
        "convertedBy": None,
        "modelTopology": None if weights_only else model_topology(model),
        "trainingConfig": None if weights_only else _training_config(model),
        "weightsManifest": [{"paths": [WEIGHTS_FILE], "weights": manifest}],
    }
    return doc, blob


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for group in doc.get("weightsManifest") or []:
        paths = group.get("paths") or [WEIGHTS_FILE]
        if len(paths) != 1:
            raise ValueError("weightsManifest: sharded weight files are not supported")
        offset = 0
        for e in group.get("weights", []):
            e = dict(e)
            if "offset" not in e:  # a TF.js file: entries are contiguous
                _, size = _CODES[e["dtype"]]
                n = 1
                for d in e["shape"]:
                    n *= int(d)
                e["offset"] = offset
                offset += n * size
            out.append(e)
    return out


def _assign_model_weights(model: Any, doc: dict[str, Any], blob: bytes, by_name: bool) -> None:
    entries = [e for e in _entries(doc) if e.get("group", "model") == "model"]
    pairs = weight_names(model)
    if by_name:
        table = {e["name"]: e for e in entries}
        for name, var in pairs:
            e = table.get(name)
            if e is None:
                raise ValueError(f"load_weights: the file has no weight {name!r}")
            _assign(var, e, blob, name)
        return
    if len(entries) != len(pairs):
        raise ValueError(f"load_weights: the file has {len(entries)} weights, the model "
                         f"{len(pairs)}")
    for (name, var), e in zip(pairs, entries):
        _assign(var, e, blob, name)


def _assign(var: Any, entry: dict[str, Any], blob: bytes, name: str) -> None:
    shape = tuple(int(d) for d in entry["shape"])
    if shape != var.shape:
        raise ValueError(f"weight {name!r}: the file has shape {list(shape)}, the model "
                         f"{list(var.shape)}")
    t = _decode(blob, entry, var.backend)
    var.assign(t if t.dtype is var.dtype else t.astype(var.dtype))


def _restore_optimizer(model: Any, doc: dict[str, Any], blob: bytes) -> None:
    opt = model.optimizer
    entries = {e["name"]: e for e in _entries(doc) if e.get("group") == "optimizer"}
    if opt is None or not entries:
        return
    names = {id(w): n for n, w in weight_names(model)}
    variables = model.trainable_weights
    opt.build(variables)
    backend = variables[0].backend if variables else None
    slots = []
    for var, current in zip(opt.variables, opt.state["slots"]):
        new = {}
        for slot, value in current.items():
            e = entries.get(f"optimizer/{names.get(id(var), var.name)}/{slot}")
            new[slot] = value if e is None else _decode(blob, e, backend)
        slots.append(new)
    it = entries.get("optimizer/iterations")
    iterations = opt.state["iterations"] if it is None else _decode(blob, it, backend).astype(
        D.int64)
    opt.state = {"iterations": iterations, "slots": slots}
    opt.iterations = int(iterations.item())


def from_artifacts(doc: dict[str, Any], blob: bytes, compile: bool = True) -> Any:
    """A model from ``model.json`` (a dict or JSON text) and the weights bytes."""
    if isinstance(doc, str | bytes):
        doc = json.loads(doc)
    if doc.get("format") not in (FORMAT, None):
        raise ValueError(f"model.json: unsupported format {doc.get('format')!r}")
    version = int(doc.get("formatVersion", 1))
    if version > FORMAT_VERSION:
        raise ValueError(f"model.json: format version {version} is newer than this tensorbridge "
                         f"reads ({FORMAT_VERSION}); upgrade tensorbridge")
    topo = doc.get("modelTopology")
    if not topo:
        raise ValueError("model.json has no modelTopology (a weights-only file?); build the "
                         "model and use load_weights")
    if "model_config" in topo:  # Keras' own JSON wraps the config once more
        topo = topo["model_config"]
    model = deserialize_layer(topo)
    _assign_model_weights(model, doc, blob, by_name=True)
    tc = doc.get("trainingConfig")
    if compile and tc:
        model.compile(optimizer=_optimizers.get(tc["optimizer_config"]),
                      loss=_decode_spec(tc.get("loss"), "loss"),
                      metrics=_decode_spec(tc.get("metrics"), "metric"),
                      loss_weights=tc.get("loss_weights"))
        _restore_optimizer(model, doc, blob)
    return model


def _decode_spec(spec: Any, kind: str) -> Any:
    """Saved loss/metric specs back to what ``compile`` takes: names stay names, serialised
    objects (``{"class_name", "config"}``) become objects, lists and per-output dicts recurse."""
    if isinstance(spec, list):
        return [_decode_spec(s, kind) for s in spec]
    if isinstance(spec, dict):
        if set(spec) == {"class_name", "config"}:
            return (_losses if kind == "loss" else _metrics).get(spec)
        return {k: _decode_spec(v, kind) for k, v in spec.items()}
    return spec


# -- files -------------------------------------------------------------------------------------
def _is_zip(path: str) -> bool:
    return path.lower().endswith(".zip")


def _write(path: Any, doc: dict[str, Any], blob: bytes, overwrite: bool) -> None:
    path = os.fspath(path)
    text = json.dumps(doc, indent=1).encode("utf-8")
    if _is_zip(path):
        if os.path.exists(path) and not overwrite:
            raise FileExistsError(path)
        tmp = path + ".tmp"
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(MODEL_FILE, text)
            z.writestr(WEIGHTS_FILE, blob)
        os.replace(tmp, path)
        return
    os.makedirs(path, exist_ok=True)
    target = os.path.join(path, MODEL_FILE)
    if os.path.exists(target) and not overwrite:
        raise FileExistsError(target)
    for name, data in ((WEIGHTS_FILE, blob), (MODEL_FILE, text)):
        tmp = os.path.join(path, name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, os.path.join(path, name))


def _read(path: Any) -> tuple[dict[str, Any], bytes]:
    path = os.fspath(path)
    if os.path.isdir(path):
        model_path = os.path.join(path, MODEL_FILE)
    elif _is_zip(path) or zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as z:
            doc = json.loads(z.read(MODEL_FILE).decode("utf-8"))
            blob = z.read(_weights_path(doc))
        return doc, blob
    else:
        model_path = path
    with open(model_path, encoding="utf-8") as f:
        doc = json.load(f)
    with open(os.path.join(os.path.dirname(model_path), _weights_path(doc)), "rb") as f:
        blob = f.read()
    return doc, blob


def _weights_path(doc: dict[str, Any]) -> str:
    groups = doc.get("weightsManifest") or [{}]
    paths = groups[0].get("paths") or [WEIGHTS_FILE]
    return paths[0]


def save_model(model: Any, path: Any, include_optimizer: bool = True,
               overwrite: bool = True) -> None:
    """Write ``model`` to a directory (``model.json`` + ``weights.bin``) or a ``.zip``."""
    doc, blob = to_artifacts(model, include_optimizer=include_optimizer)
    _write(path, doc, blob, overwrite)


def load_model(path: Any, compile: bool = True) -> Any:
    """Read a model saved by any tensorbridge client (directory, ``.zip`` or ``model.json``)."""
    doc, blob = _read(path)
    return from_artifacts(doc, blob, compile=compile)


def save_weights(model: Any, path: Any, overwrite: bool = True) -> None:
    """Write only the weights (same layout; ``modelTopology`` is null)."""
    doc, blob = to_artifacts(model, include_optimizer=False, weights_only=True)
    _write(path, doc, blob, overwrite)


def load_weights(model: Any, path: Any, by_name: bool = False) -> None:
    """Set ``model``'s weights from a file saved by ``save``/``save_weights``: in order (shapes
    checked), or matched by name with ``by_name=True``."""
    doc, blob = _read(path)
    _assign_model_weights(model, doc, blob, by_name=by_name)
