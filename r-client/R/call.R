# Calling Python.

# Call a method of the R host with already-wired arguments; decode the result.
tb_call_py <- function(method, args, kwargs = NULL) {
  res <- .tb$pci(method, args, kwargs)
  if (is.list(res)) tb_decode_result(res) else res
}

wire_args <- function(args) {
  nms <- names(args)
  if (is.null(nms)) return(list(lapply(args, tb_wire), NULL))
  named <- nzchar(nms)
  list(unname(lapply(args[!named], tb_wire)), lapply(args[named], tb_wire))
}

# The R function for a Python callable held by handle `id`.
new_py_function <- function(id, name, doc = "") {
  id <- as.integer(id)
  session <- .tb$session
  handle <- new_handle_env(id, "function", session)
  method <- .tb$m_call
  call_impl <- .tb$call_impl
  ref_to_r <- .tb$ref_to_r
  pci <- .tb$pci
  f <- if (is.null(call_impl) || is.null(ref_to_r)) function(...) {
    check_live(handle)
    w <- wire_args(list(...))
    res <- pci(method, c(list(id), w[[1L]]), w[[2L]])
    if (is.list(res)) tb_decode_result(res) else res
  } else function(...) {
    args <- list(...)
    if (.Call(tb_c_simple_args, args) && is.null(names(args)) &&
        identical(session, .tb$session)) {
      res <- ref_to_r(call_impl(method, c(list(id), args), NULL))
    } else {
      check_live(handle)
      w <- wire_args(args)
      res <- ref_to_r(call_impl(method, c(list(id), w[[1L]]), w[[2L]]))
    }
    if (is.list(res)) tb_decode_result(res) else res
  }
  attr(f, "tb_handle") <- handle
  attr(f, "tb_name") <- name
  attr(f, "tb_doc") <- doc
  class(f) <- c("tb_function", "function")
  f
}

#' Call a Python function, optionally on a worker thread
#'
#' `tb_call(f, ...)` calls the Python callable `f` with converted arguments. With
#' `.background = TRUE` the call runs on a Python worker thread while R's main thread
#' services callbacks into R from any Python thread, and Ctrl-C (SIGINT) cancels the
#' work cleanly: the worker stops at its next safe point (a callback into R, or
#' `tensorbridge.bridge.check_cancelled()`), and R gets the interrupt. `tb_background(f)`
#' returns a function that always calls `f` that way.
#'
#' Ordinary calls run Python on R's main thread (the fastest way); R callbacks that
#' Python threads make meanwhile are still served: the waiting Python code is woken by a
#' signal whose handler runs them.
#'
#' @param f A Python function (from [tb_import()] or a Python method).
#' @param ... Arguments; named ones become keyword arguments.
#' @param .background Run on a worker thread (see Details).
#' @return The converted result.
#' @export
tb_call <- function(f, ..., .background = FALSE) {
  h <- attr(f, "tb_handle", exact = TRUE)
  if (is.null(h)) stop("tb_call(): f is not a Python function", call. = FALSE)
  check_live(h)
  w <- wire_args(list(...))
  method <- if (isTRUE(.background)) .tb$m_call_bg else .tb$m_call
  tb_call_py(method, c(list(.subset2(h, "id")), w[[1L]]), w[[2L]])
}

#' @rdname tb_call
#' @export
tb_background <- function(f) {
  force(f)
  function(...) tb_call(f, ..., .background = TRUE)
}

#' Import a Python module
#'
#' The module comes back as a handle-backed object: `$` reaches its attributes; its
#' functions, classes and submodules are cached on first use, so calling `mod$f(...)` in
#' a loop costs one Python call, not an attribute lookup each time. Arguments and
#' results convert through the bridge's "r" registries: numeric vectors and arrays enter
#' Python as NumPy views of R's memory (no copy), NA stays apart from NaN, character
#' vectors become lists of str, named lists become dicts, R functions become Python
#' callables that may be called from any thread; NumPy arrays and tensors come back as R
#' arrays, dicts as named lists, other objects as handles.
#'
#' @param module Module name, e.g. `"math"` or `"tensorbridge"`.
#' @return A `tb_object` of class `tb.module`.
#' @examples
#' \dontrun{
#' np <- tb_import("numpy")
#' np$sum(c(1, 2, 3))
#' }
#' @export
tb_import <- function(module) {
  stopifnot(is.character(module), length(module) == 1L)
  tb_init()
  tb_call_py(.tb$m_import, list(module))
}

#' Evaluate a Python expression
#'
#' @param code A Python expression (evaluated in a fresh namespace).
#' @return The converted value.
#' @export
tb_eval <- function(code) {
  tb_init()
  tb_call_py(.tb$m_eval, list(code))
}

#' Convert an R value to Python and keep it there
#'
#' @param x Any R value.
#' @return A `tb_object` handle to the converted Python value.
#' @export
tb_py <- function(x) {
  tb_init()
  tb_call_py(.tb$m_to_python, list(tb_wire(x)))
}

handle_of <- function(x) {
  if (inherits(x, "tb_function")) attr(x, "tb_handle", exact = TRUE) else x
}

py_getattr <- function(x, name) {
  h <- handle_of(x)
  cache <- .subset2(h, ".cache")
  if (!is.null(cache)) {
    v <- cache[[name]]
    if (!is.null(v) && cached_live(v)) return(v)
  }
  check_live(h)
  res <- .tb$pci(.tb$m_getattr, list(.subset2(h, "id"), name), NULL)
  if (!is.list(res)) return(res)
  if (identical(res[[1L]], "C")) {
    v <- tb_decode_any(res[[2L]])
    if (length(.tb$taken)) release_taken()
    if (is.null(cache)) {
      cache <- new.env(parent = emptyenv())
      assign(".cache", cache, envir = h)
    }
    assign(name, v, envir = cache)
    return(v)
  }
  tb_decode_result(res)
}

#' Attributes and items of Python objects
#'
#' `x$name` gets an attribute (a method comes back as an R function), `x$name <- value`
#' sets one, `x[[key]]` indexes (`obj[key]` in Python), `names(x)` lists attributes.
#'
#' @param x A Python object held by R.
#' @param name Attribute name.
#' @param value New value.
#' @param i Key or index (used as is: 0-based for Python sequences).
#' @param ... Unused.
#' @name tb_object
NULL

#' @rdname tb_object
#' @export
`$.tb_object` <- function(x, name) {
  cache <- .subset2(x, ".cache")
  if (!is.null(cache)) {
    v <- .subset2(cache, name)
    if (!is.null(v) && cached_live(v)) return(v)
  }
  py_getattr(x, name)
}

# FALSE when a cached attribute (a module's function, class or submodule) was released with
# tb_release(): the module then fetches it again instead of handing out a dead object.
cached_live <- function(v) {
  h <- if (inherits(v, "tb_function")) attr(v, "tb_handle", exact = TRUE) else v
  !is.environment(h) || !is.null(.subset2(h, "id"))
}

#' @rdname tb_object
#' @export
`$.tb_function` <- function(x, name) py_getattr(x, name)

#' @rdname tb_object
#' @export
`$<-.tb_object` <- function(x, name, value) {
  check_live(x)
  tb_call_py(.tb$m_setattr, list(.subset2(x, "id"), name, tb_wire(value)))
  cache <- .subset2(x, ".cache")
  if (!is.null(cache) && exists(name, envir = cache, inherits = FALSE)) {
    rm(list = name, envir = cache)
  }
  x
}

#' @rdname tb_object
#' @export
`[[.tb_object` <- function(x, i, ...) {
  check_live(x)
  tb_call_py(.tb$m_getitem, list(.subset2(x, "id"), tb_wire(i)))
}

#' @rdname tb_object
#' @export
names.tb_object <- function(x) {
  check_live(x)
  tb_call_py(.tb$m_dir, list(.subset2(x, "id")))
}

#' @importFrom utils .DollarNames
#' @export
.DollarNames.tb_object <- function(x, pattern = "") {
  n <- tryCatch(names(x), error = function(e) character())
  n <- n[!startsWith(n, "_")]
  if (nzchar(pattern)) n[grepl(pattern, n)] else n
}

py_repr <- function(h) {
  if (!identical(.subset2(h, "session"), .tb$session)) {
    return("<Python object from a previous R session>")
  }
  if (is.null(.subset2(h, "id"))) return("<released Python object>")
  tb_call_py(.tb$m_repr, list(.subset2(h, "id")))
}

#' @export
format.tb_object <- function(x, ...) py_repr(x)

#' @export
print.tb_object <- function(x, ...) {
  cat(py_repr(x), "\n", sep = "")
  invisible(x)
}

#' @export
as.character.tb_object <- function(x, ...) py_repr(x)

#' @export
print.tb_function <- function(x, ...) {
  h <- attr(x, "tb_handle", exact = TRUE)
  cat("<Python function ", attr(x, "tb_name", exact = TRUE), ">\n", sep = "")
  doc <- attr(x, "tb_doc", exact = TRUE)
  if (length(doc) && nzchar(doc)) cat("  ", doc, "\n", sep = "")
  if (!identical(.subset2(h, "session"), .tb$session)) {
    cat("  (from a previous R session: no longer callable)\n")
  }
  invisible(x)
}
