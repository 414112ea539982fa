"""The JavaScript front door of ``tensorbridge.runtime.layers`` (``js-client/src/layers.js``).

The npm client builds layer specs in JS (``tb.layers.dense({units: 32})`` ->
``{class_name: "Dense", config: {units: 32}}``, camelCase keys already turned into the Python
names) and calls the functions here through the bridge; models stay Python objects held by
handle. Everything works without NumPy (Pyodide, ``tfjs`` backend).

Progress of ``fit`` goes to JS through the client's event channel (a progress sink for the call,
``runtime.progress_events``: the ``FitProgress`` events' fields in camelCase), the JS module
``_tensorbridge_events`` that the client registers in Pyodide: ``emit(channel, json_text)`` is
fire and forget (in a browser a ``postMessage`` from the worker to the page, so training never
waits for the page), and ``aborted(channel)`` tells whether the page asked to stop (a shared
memory word in a browser, ``model.stopTraining`` / an ``AbortSignal`` on the JS side).
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...runtime import layers as L
from ...runtime.argument_checks import door_name
from ...runtime.layers import optimizers
from ...runtime.layers import serialization as _ser
from ...runtime.progress_events import FitProgress, Sink, progress_sinks

__all__ = [
    "add",
    "build_layer",
    "compile",
    "evaluate",
    "fit",
    "from_artifacts",
    "get_weights",
    "info",
    "predict",
    "sequential",
    "set_weights",
    "summary",
    "to_artifacts",
]


def _events() -> Any:
    import _tensorbridge_events  # registered by the JS client (core.js)

    return _tensorbridge_events


def _plain(v: Any) -> Any:
    """A logs value as JSON: floats (non-finite ones as strings JS turns back into numbers)."""
    if isinstance(v, bool | int | str) or v is None:
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f if math.isfinite(f) else repr(f)


def _logs(logs: dict[str, Any] | None) -> dict[str, Any]:
    return {k: _plain(v) for k, v in (logs or {}).items()}


def _fit_sink(model: Any, channel: int, hooks: list[str]) -> Sink:
    """The progress sink of one ``fit`` from JS: the ``FitProgress`` events whose hook JS listens
    to (``on_`` + stage in camelCase: ``onEpochEnd``) go to the channel with the event's fields
    in camelCase; a stop asked by JS ends training after the current batch."""
    ev = _events()
    send, aborted = ev.emit, ev.aborted
    wanted = set(hooks)

    def forward(event: FitProgress) -> None:
        if not isinstance(event, FitProgress):
            return
        if door_name("on_" + event.stage, "js") in wanted:
            fields = event.as_dict("js")
            fields["logs"] = _logs(event.logs)
            send(channel, json.dumps(fields))
        if event.stage != "train_end" and aborted(channel):
            model.stop_training = True

    return forward


# -- building ------------------------------------------------------------------------------------
def build_layer(spec: Any) -> Any:
    """A layer from ``{"class_name", "config"}`` (or a layer, returned as it is)."""
    if isinstance(spec, L.Layer):
        return spec
    if not isinstance(spec, dict) or "class_name" not in spec:
        raise TypeError(f"layers: expected a layer (tb.layers.dense(...)), got {spec!r}")
    return _ser.deserialize_layer({"class_name": spec["class_name"],
                                   "config": dict(spec.get("config") or {})})


def sequential(specs: list[Any] | None = None, name: str | None = None) -> Any:
    return L.Sequential([build_layer(s) for s in specs or []], name=name)


def add(model: Any, spec: Any) -> None:
    model.add(build_layer(spec))


def compile(model: Any, optimizer: Any = "rmsprop", loss: Any = None, metrics: Any = None,
            loss_weights: Any = None) -> None:
    model.compile(optimizer=optimizers.get(optimizer), loss=loss, metrics=metrics,
                  loss_weights=loss_weights)


def info(model: Any) -> dict[str, Any]:
    """Name, input/output shapes and layers (name, class, output shape, parameter count)."""
    def shape(s: Any) -> Any:
        return [None if d is None else int(d) for d in s]

    layers = []
    for layer in model.layers:
        nodes = getattr(layer, "_inbound_nodes", None) or []
        outs = [shape(t.shape) for t in nodes[0].outputs] if nodes else []
        try:
            params = int(layer.count_params())
        except Exception:  # not built yet
            params = 0
        layers.append({"name": layer.name, "className": type(layer).__name__,
                       "outputShape": outs[0] if len(outs) == 1 else outs or None,
                       "params": params})
    inputs = [shape(t.shape) for t in getattr(model, "inputs", None) or []]
    outputs = [shape(t.shape) for t in getattr(model, "outputs", None) or []]
    return {"name": model.name, "layers": layers, "inputs": inputs, "outputs": outputs}


# -- training ------------------------------------------------------------------------------------
def fit(model: Any, x: Any, y: Any, options: dict[str, Any] | None = None,
        channel: int | None = None, hooks: list[str] | None = None) -> dict[str, Any]:
    """``model.fit`` with the JS options (already in Python names); progress as events."""
    opts = dict(options or {})
    callbacks = list(opts.pop("callbacks", None) or [])
    sink = None if channel is None else _fit_sink(model, int(channel), list(hooks or []))
    vd = opts.get("validation_data")
    if isinstance(vd, list):
        opts["validation_data"] = tuple(vd)
    opts.setdefault("verbose", 0)
    with progress_sinks(sink):
        h = model.fit(x, y, callbacks=callbacks, **opts)
    return {"epoch": list(h.epoch), "history": {k: [_plain(v) for v in vals]
                                                for k, vals in h.history.items()},
            "params": {k: v for k, v in h.params.items() if isinstance(v, int | float | str)}}


def predict(model: Any, x: Any, batch_size: int | None = None) -> Any:
    return model.predict(x, batch_size=batch_size, verbose=0)


def evaluate(model: Any, x: Any, y: Any, batch_size: int | None = None) -> dict[str, Any]:
    logs = model.evaluate(x, y, batch_size=batch_size, verbose=0, return_dict=True)
    return _logs(logs)


def summary(model: Any, line_length: int | None = None) -> str:
    return model.summary_text(line_length)


def get_weights(model: Any) -> list[Any]:
    return [w.read() for w in model.weights]


def set_weights(model: Any, values: list[Any]) -> None:
    model.set_weights(values)


# -- the portable format ---------------------------------------------------------------------------
def to_artifacts(model: Any, include_optimizer: bool = True) -> list[Any]:
    """``[model.json text, weights.bin bytes]``."""
    doc, blob = _ser.to_artifacts(model, include_optimizer=include_optimizer)
    return [json.dumps(doc, indent=1), bytes(blob)]


def from_artifacts(model_json: Any, weights: Any, compile: bool = True) -> Any:
    """A model from ``model.json`` (text or a dict) and the weights bytes (a memoryview from a
    JS ``Uint8Array``)."""
    doc = json.loads(model_json) if isinstance(model_json, str | bytes) else dict(model_json)
    return _ser.from_artifacts(doc, bytes(weights) if weights is not None else b"",
                               compile=compile)
