"""The session API a client uses: one object per language."""

from __future__ import annotations

import threading

import pytest

import tensorbridge.bridge as br


class Model:
    def __init__(self):
        self.scale = 2

    def predict(self, x):
        return [v * self.scale for v in x]


def test_one_session_per_language():
    assert br.session("r") is br.session("r")
    assert br.session("r") is not br.session("js")
    with pytest.raises(KeyError, match="define_language"):
        br.session("fortran")


def test_a_client_drives_python_objects_through_handles():
    s = br.session("r")
    before = s.stats()["by_type"].get("Model", 0)
    ctor = s.to_foreign(Model)  # the class crosses as a callable
    assert isinstance(ctor, br.PyFunction)
    model = s.call(ctor, [])
    assert isinstance(model, br.Ref) and model.type_name == "Model"
    assert s.stats()["by_type"]["Model"] == before + 1
    out = s.call(model, [br.List((br.Int(1), br.Float(2.5)))], attr="predict")
    assert out == br.List((br.Int(2), br.Float(5.0)))
    assert s.getattr(model, "scale") == br.Int(2)
    assert s.resolve(model.id).scale == 2
    assert s.retain(model.id) == 2  # a second R object shares the handle
    s.release(model.id)
    s.release_deferred(model.id)  # the last proxy's finalizer
    assert s.pump() == 0  # no host registered: drains deferred releases
    assert s.stats()["by_type"].get("Model", 0) == before
    err = s.call(model, [], attr="predict")
    assert isinstance(err, br.Raised) and err.error.type == "HandleError"
    assert f"handle {model.id} was released" in err.error.message
    assert "released by a finalizer of the r client" in err.error.message
    s.release(ctor.id)


def test_run_and_host_through_the_session():
    br.define_language("sess-host", like="r")
    s = br.session("sess-host")
    assert s.host is None
    assert s.run(threading.get_ident) == threading.get_ident()  # no host: inline
    ex = s.register_host(stall_timeout=5)
    try:
        assert s.host is ex and "sess-host" in repr(s)
        assert s.run(threading.get_ident, timeout=5) != threading.get_ident()  # on a worker
        assert s.pump() == 0
    finally:
        s.close()
    assert s.host is None and ex.closed


def test_define_language_like_copies_then_diverges():
    out, inp = br.define_language("copy-of-r", like="r")
    assert br.define_language("copy-of-r") == (out, inp)  # idempotent
    assert br.to_foreign("copy-of-r", 2**40) == br.Float(float(2**40))  # R's int rule
    out.register(int, lambda v, cx: br.Str(str(v)))
    assert br.to_foreign("copy-of-r", 2**40) == br.Str(str(2**40))
    assert br.to_foreign("r", 2**40) == br.Float(float(2**40))
