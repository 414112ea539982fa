"""tensorbridge.bridge: the language-neutral boundary the R and JS clients stand on.

* Conversion: ``py_to_foreign[lang]`` / ``foreign_to_py[lang]`` registries ("r", "js"; more
  with :func:`define_language`) turn Python values into descriptors and back.
* Handles: Python objects held by a host, by reference-counted id (:func:`register`,
  :func:`retain`, :func:`release`, :func:`release_deferred`, :func:`resolve`, :func:`stats`).
* Dispatch: :class:`MainThreadExecutor` runs host callbacks on the host's main thread and long
  work on workers, with interrupts, timeouts and cancellation tokens.
* Errors: Python exceptions cross as :class:`Error` descriptors; foreign errors arrive as
  :class:`ForeignError`.
* NA: ``NA``, ``NA_integer``, ``NA_character``, ``NA_REAL``, :func:`is_na`.

See ``bridge/README.md`` for the protocol a client implements.
"""

from .arrays import DESCRIPTOR_DTYPES, ArrayPolicy, array_from_descriptor, array_to_descriptor
from .builtins_js import JS_ARRAYS, install_js
from .builtins_r import R_ARRAYS, install_r
from .callables import ForeignCallable, ForeignObject, call_python, get_attribute
from .descriptors import (
    Array,
    BigInt,
    Bool,
    Bytes,
    Desc,
    Dict,
    Error,
    Float,
    ForeignFunction,
    ForeignRef,
    Int,
    List,
    NAValue,
    Null,
    PyFunction,
    Raised,
    Ref,
    Str,
)
from .dispatch import (
    CancellationToken,
    MainThreadExecutor,
    call_on_main,
    check_cancelled,
    current_token,
    get_host,
    register_host,
    unregister_host,
)
from .errors import (
    BridgeError,
    Cancelled,
    ConversionError,
    DispatchError,
    DispatchTimeoutError,
    ForeignError,
    HandleError,
    HostClosedError,
    HostNotPumpingError,
    error_from_descriptor,
    error_to_descriptor,
)
from .handles import (
    HandleTable,
    drain,
    refcount,
    register,
    release,
    release_deferred,
    resolve,
    retain,
    stats,
)
from .handles import handles as handle_table
from .na import (
    INT_MIN,
    NA,
    NA_REAL,
    NA_REAL_BITS,
    NA_character,
    NA_integer,
    NAType,
    is_na,
    is_na_real,
    na_mask,
)
from .registry import (
    Context,
    Registry,
    define_language,
    foreign_to_py,
    from_foreign,
    languages,
    py_to_foreign,
    to_foreign,
)
from .session import Session, session

install_r(*define_language("r"))
install_js(*define_language("js"))

__all__ = [
    "DESCRIPTOR_DTYPES",
    "INT_MIN",
    "JS_ARRAYS",
    "NA",
    "NA_REAL",
    "NA_REAL_BITS",
    "R_ARRAYS",
    "Array",
    "ArrayPolicy",
    "BigInt",
    "Bool",
    "BridgeError",
    "Bytes",
    "CancellationToken",
    "Cancelled",
    "Context",
    "ConversionError",
    "Desc",
    "Dict",
    "DispatchError",
    "DispatchTimeoutError",
    "Error",
    "Float",
    "ForeignCallable",
    "ForeignError",
    "ForeignFunction",
    "ForeignObject",
    "ForeignRef",
    "HandleError",
    "HandleTable",
    "HostClosedError",
    "HostNotPumpingError",
    "Int",
    "List",
    "MainThreadExecutor",
    "NAType",
    "NAValue",
    "NA_character",
    "NA_integer",
    "Null",
    "PyFunction",
    "Raised",
    "Ref",
    "Registry",
    "Session",
    "Str",
    "array_from_descriptor",
    "array_to_descriptor",
    "call_on_main",
    "call_python",
    "check_cancelled",
    "current_token",
    "define_language",
    "drain",
    "error_from_descriptor",
    "error_to_descriptor",
    "foreign_to_py",
    "from_foreign",
    "get_attribute",
    "get_host",
    "handle_table",
    "install_js",
    "install_r",
    "is_na",
    "is_na_real",
    "languages",
    "na_mask",
    "py_to_foreign",
    "refcount",
    "register",
    "register_host",
    "release",
    "release_deferred",
    "resolve",
    "retain",
    "session",
    "stats",
    "to_foreign",
    "unregister_host",
]
