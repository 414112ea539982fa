"""Errors that cross: Python exceptions as descriptors, foreign errors as ForeignError, and
both coming back unchanged."""

from __future__ import annotations

import json
import pickle

import pytest

import tensorbridge.bridge as br
from tensorbridge.bridge import Error, ForeignError, error_from_descriptor, error_to_descriptor

from .toyhost import ToyError


def inner():
    raise KeyError("missing key 'w'")


def outer():
    try:
        inner()
    except KeyError as e:
        raise ValueError("could not build the model") from e


def test_python_exception_descriptor():
    with pytest.raises(ValueError) as info:
        outer()
    d = error_to_descriptor(info.value)
    assert (d.language, d.type, d.module) == ("python", "ValueError", "builtins")
    assert d.message == "could not build the model"
    assert d.classes == ("builtins.ValueError", "builtins.Exception", "builtins.BaseException")
    assert any("in outer" in frame for frame in d.traceback)
    assert d.cause is not None and d.cause_kind == "cause"
    assert (d.cause.type, d.cause.message) == ("KeyError", "\"missing key 'w'\"")
    assert any("in inner" in frame for frame in d.cause.traceback)
    assert d.exception is info.value


def test_implicit_context_and_suppressed_context():
    try:
        try:
            _ = 1 / 0
        except ZeroDivisionError:
            raise RuntimeError("while handling") from None
    except RuntimeError as e:
        assert error_to_descriptor(e).cause is None
    try:
        try:
            _ = 1 / 0
        except ZeroDivisionError:
            raise RuntimeError("while handling")  # noqa: B904 - implicit chaining is the point
    except RuntimeError as e:
        d = error_to_descriptor(e)
        assert d.cause.type == "ZeroDivisionError" and d.cause_kind == "context"


def test_descriptor_serializes_to_json_and_back():
    with pytest.raises(ValueError) as info:
        outer()
    exc = info.value
    exc.add_note("fitting model 3")
    d = error_to_descriptor(exc)
    text = json.dumps(d.to_dict())
    back = Error.from_dict(json.loads(text))
    assert back.exception is None
    assert (back.type, back.message, back.traceback, back.classes) == (
        d.type, d.message, d.traceback, d.classes
    )
    assert back.cause.message == d.cause.message and back.data == {"notes": ["fitting model 3"]}
    # without the live exception (e.g. it crossed a process boundary) it arrives as ForeignError
    err = error_from_descriptor(back)
    assert isinstance(err, ForeignError) and err.language == "python"
    assert isinstance(err.__cause__, ForeignError) and err.__cause__.foreign_class == "KeyError"


def test_unprintable_and_cyclic_exceptions():
    class BadError(Exception):
        def __str__(self):
            raise RuntimeError("no str for you")

    message = error_to_descriptor(BadError()).message
    assert message == "<unprintable test_unprintable_and_cyclic_exceptions.<locals>.BadError>"
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__context__ = b, a
    d = error_to_descriptor(a)
    assert d.cause.message == "b" and d.cause.cause is None


def test_foreign_error_fields_and_message():
    cause = Error(language="r", type="simpleError", message="singular matrix")
    err = ForeignError(
        "r", "stanError", "sampling failed", ["fit(model)", "sample(chains = 4)"],
        classes=["stanError", "error", "condition"], data={"call": "sample()"}, cause=cause,
    )
    assert str(err) == "[r stanError] sampling failed"
    assert err.message == "sampling failed" and err.classes == ("stanError", "error", "condition")
    assert err.foreign_traceback == ("fit(model)", "sample(chains = 4)")
    assert err.__notes__ == ["r traceback (oldest first):\n  fit(model)\n  sample(chains = 4)"]
    assert isinstance(err.__cause__, ForeignError) and err.__cause__.message == "singular matrix"
    again = pickle.loads(pickle.dumps(err))
    assert str(again) == str(err) and again.descriptor.data == {"call": "sample()"}


def test_foreign_error_recrosses_unchanged():
    desc = Error(language="js", type="TypeError", message="x is undefined", traceback=("at f",))
    err = br.from_foreign("js", desc)
    assert isinstance(err, ForeignError)
    assert br.to_foreign("js", err) is desc
    # also when Python chained it under its own error
    try:
        try:
            raise err
        except ForeignError as e:
            raise RuntimeError("callback failed") from e
    except RuntimeError as e:
        d = br.to_foreign("js", e)
    assert d.type == "RuntimeError" and d.cause is desc


def test_python_error_travelling_through_the_host_comes_back_as_itself(toy):
    """Python -> toy -> Python raises; toy does not catch; the same exception object reaches
    the outer Python caller."""
    original = []  # ids only: holding the exception here would make a cycle through the
    # handle table (handle -> py_fails -> original -> exc -> traceback -> toy proxy), which no
    # garbage collector can see as a whole (the limit of every two-heap bridge)

    def py_fails(x):
        exc = ArithmeticError(f"bad input {x}")
        original.append(id(exc))
        raise exc

    def toy_calls_back(py_fn):
        return py_fn(3)  # toy code calling Python; the Python error becomes a ToyError

    fn = toy.function(toy_calls_back)
    with pytest.raises(ArithmeticError) as info:
        fn(py_fails)
    assert id(info.value) == original[0]


def test_foreign_error_travelling_through_python_comes_back_as_itself(toy):
    """toy -> Python -> toy raises; Python does not catch; toy gets its own error back."""

    def toy_raises():
        raise ToyError("deep toy failure")

    raiser = toy.function(toy_raises)

    def py_middle():
        return raiser()  # raises ForeignError, not caught

    def toy_top(py_fn):
        try:
            py_fn()
        except ToyError as e:
            return e

    top = toy.function(toy_top)
    got = top(py_middle)  # the toy error value came back to Python from toy
    assert isinstance(got, ForeignError) and got.message == "deep toy failure"
    assert got.foreign_traceback == ("toy: at top level", "toy: in callback")


def test_raised_from_call_python_carries_the_error():
    out = br.call_python("js", 10**9, [])
    assert isinstance(out, br.Raised) and out.error.type == "HandleError"
    assert "handle 1000000000 is unknown" in out.error.message

    hid = br.register({"a": 1})
    out = br.call_python("js", hid, [br.Str("b")], attr="__getitem__")
    assert isinstance(out, br.Raised) and out.error.type == "KeyError"
    ok = br.call_python("js", hid, [br.Str("a")], attr="__getitem__")
    assert ok == br.Int(1)
    assert br.get_attribute("js", hid, "nope").error.type == "AttributeError"
    br.release(hid)


def test_conversion_errors_of_results_become_raised():
    hid = br.register(lambda: 2**70)
    out = br.call_python("r", hid)
    assert isinstance(out, br.Raised) and out.error.type == "ConversionError"
    assert "does not fit an R number" in out.error.message
    br.release(hid)


def test_raised_descriptor_raises_on_arrival():
    with pytest.raises(ForeignError, match=r"\[js RangeError\] too big"):
        br.from_foreign("js", br.Raised(Error(language="js", type="RangeError",
                                               message="too big")))
