// The Python half of the JS client's conversion layer, run once at boot inside Pyodide.
//
// Isolated on purpose: tensorbridge.bridge (issue 3) holds the real conversion registries and
// handle table, but today it imports NumPy at module level and uses threads, neither of which
// Pyodide has offline. This module mirrors its descriptor rules ("js" language: ints beyond
// 2**53-1 as BigInt, tensors as {data, shape, dtype}, everything else as a reference) so that
// switching to `bridge.session("js")` later changes only this file and convert.js.
export const GLUE_PY = String.raw`
import itertools, sys, traceback, types
import tensorbridge as tb
from tensorbridge.runtime.tensor import Tensor

MAX_SAFE = 2**53 - 1
_handles = {}          # id -> object (one reference per id)
_next = itertools.count(1).__next__


def register(obj):
    hid = _next()
    _handles[hid] = obj
    return hid


def release(hid):
    return _handles.pop(int(hid), None) is not None


class DisposedHandleError(ReferenceError):
    pass


def resolve(hid):
    try:
        return _handles[int(hid)]
    except KeyError:
        raise DisposedHandleError(f"handle {hid} was disposed; the Python object is gone") from None


def stats():
    by_type = {}
    for o in _handles.values():
        n = type(o).__name__
        by_type[n] = by_type.get(n, 0) + 1
    return {"count": len(_handles), "byType": by_type}


def describe_tensor(t, hid=None):
    return {"$tensor": register(t) if hid is None else hid, "shape": list(t.shape),
            "dtype": t.dtype.name, "backend": t.backend.name}


def to_js(v):
    """Python value -> transport value (plain data the JS side turns into native values)."""
    if v is None or isinstance(v, (bool, str, float)):
        return v
    if isinstance(v, int):
        return v if -MAX_SAFE <= v <= MAX_SAFE else {"$bigint": str(v)}
    if isinstance(v, Tensor):
        return describe_tensor(v)
    if isinstance(v, (bytes, bytearray)):
        return {"$bytes": bytes(v)}
    if isinstance(v, memoryview):  # typed arrays come back as typed arrays (one copy)
        return v
    if type(v) in (list, tuple):  # exact types: subclasses (namedtuple...) cross as handles
        return [to_js(x) for x in v]
    if type(v) is dict and all(isinstance(k, str) for k in v):
        return {"$dict": [[k, to_js(x)] for k, x in v.items()]}
    kind = "function" if callable(v) and not isinstance(v, type) else "ref"
    return {"$" + kind: register(v), "type": type(v).__name__,
            "name": getattr(v, "__name__", None) if kind == "function" else None}


class JsCallbackError(Exception):
    """A JavaScript callback threw; the message and JS stack are kept."""


_call_main = None       # set by the worker core: (cbId, transport args) -> transport result
_release_main = None


class MainThreadFunction:
    """A JS function living on the page's main thread, called from Python in the worker."""

    def __init__(self, cb_id, name):
        self.cb_id, self.__name__ = cb_id, name or "js_function"

    def __call__(self, *args, **kwargs):
        res = _call_main(self.cb_id, to_js(list(args)), to_js(kwargs) if kwargs else None)
        res = res.to_py() if hasattr(res, "to_py") else res
        if isinstance(res, dict) and "$error" in res:
            err = res["$error"]
            raise JsCallbackError(f"{err.get('name', 'Error')}: {err.get('message')}\n"
                                  f"(JavaScript stack)\n{err.get('stack', '')}")
        if hasattr(res, "then"):  # no synchronous channel: an awaitable for async Python
            return res
        return from_js(res)

    def __del__(self):
        try:
            if _release_main is not None:
                _release_main(self.cb_id)
        except Exception:
            pass

    def __repr__(self):
        return f"<JS function {self.__name__} on the main thread>"


def from_js(x):
    """Transport value (already to_py()'d: dicts, lists, memoryviews, JsProxy) -> Python."""
    if isinstance(x, dict):
        if "$h" in x:
            return resolve(x["$h"])
        if "$cb" in x:
            return MainThreadFunction(x["$cb"], x.get("name"))
        if "$bigint" in x:
            return int(x["$bigint"])
        if "$map" in x:
            return {from_js(k): from_js(v) for k, v in x["$map"]}
        if "$undefined" in x:
            return None
        if "$set" in x:
            return {from_js(v) for v in x["$set"]}
        return {k: from_js(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_js(v) for v in x]
    if isinstance(x, memoryview):
        return x
    return x


def call(target_hid, attr, args, kwargs):
    fn = resolve(target_hid) if target_hid is not None else tb
    if attr is not None:
        for part in attr.split("."):
            fn = getattr(fn, part)
    return to_js(fn(*from_js(args), **(from_js(kwargs) or {})))


def get_attr(target_hid, attr):
    obj = resolve(target_hid)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return to_js(obj)


def op(name, args, kwargs):
    fn = getattr(tb, name, None)
    if fn is None or name.startswith("_"):
        raise AttributeError(f"tensorbridge has no op {name!r}")
    return to_js(fn(*from_js(args), **(from_js(kwargs) or {})))


def import_module(name):
    import importlib
    return to_js(importlib.import_module(name))


def adopt(backend, host_id, dtype):
    t = tb.get_backend(backend).adopt(host_id, dtype)
    return describe_tensor(t)


def tensor_from(data, shape, dtype, backend):
    t = tb.tensor(data, dtype=dtype, backend=backend)
    if tuple(t.shape) != tuple(shape):
        t = tb.reshape(t, tuple(shape))
    return describe_tensor(t)


def host_id(hid):
    t = resolve(hid)
    return t.backend.host_id(t) if t.backend.name == "tfjs" else -1


def tensor_list(hid):
    return to_js(resolve(hid).tolist())


def tensor_bytes(hid):
    t = resolve(hid)
    if t.backend.name == "numpy":
        return memoryview(t.numpy().tobytes())
    return None


def dispose_tensor(hid):
    t = _handles.pop(int(hid), None)
    if t is not None and isinstance(t, Tensor) and sys.getrefcount(t) <= 2:
        t.dispose()
    return t is not None


# -- programs: JS functions traced into op lists, run here (under grad / value_and_grad) --------
_METHODS = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "pow": "power",
            "neg": "negative", "matmul": "matmul", "T": "transpose"}


def run_program(prog, inputs):
    env = list(inputs)

    def ref(a):
        if isinstance(a, dict) and "$sym" in a:
            return env[a["$sym"]]
        if isinstance(a, list):
            return [ref(x) for x in a]
        if isinstance(a, dict) and "$h" not in a and "$cb" not in a and "$bigint" not in a:
            return {k: ref(v) for k, v in a.items()}
        return from_js(a)

    for node in prog["nodes"]:
        if node["fn"] == "$call":
            fn = from_js(node["target"])
        else:
            fn = getattr(tb, _METHODS.get(node["fn"], node["fn"]))
        env.append(fn(*ref(node["args"]), **ref(node.get("kwargs") or {})))
    return ref(prog["out"])


def transform(kind, prog, args, argnums):
    args = from_js(args)
    nargs = len(args)
    f = lambda *xs: run_program(prog, xs[:nargs])
    nums = tuple(argnums) if argnums is not None else 0
    if kind == "grad":
        return to_js(tb.grad(f, argnums=nums)(*args))
    if kind == "value_and_grad":
        v, g = tb.value_and_grad(f, argnums=nums)(*args)
        return to_js([v, g])
    return to_js(f(*args))


def format_error(e):
    return {"type": type(e).__name__, "message": str(e),
            "traceback": "".join(traceback.format_exception(e))}
`;
