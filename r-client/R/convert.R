# User converters.

#' Register converters for your own R classes and Python types
#'
#' `to_python` (for R objects whose class vector contains `r_class`) gets the R object
#' and returns any R value to send instead (for example a list, or a Python object made
#' with a call to Python). `to_r` (for Python objects of type `py_type`, given as
#' `"module.Class"`) gets the Python object as a handle and returns the R value to use;
#' the Python type is registered on the bridge's "r" table, so it applies wherever
#' Python values reach R.
#'
#' @param r_class An R class name.
#' @param to_python A function of one argument (the R object).
#' @param py_type A Python type, `"module.QualifiedName"`.
#' @param to_r A function of one argument (the Python object, as a handle).
#' @return `NULL`, invisibly.
#' @examples
#' \dontrun{
#' tb_register_converter(r_class = "money",
#'                       to_python = function(x) list(amount = unclass(x), currency = "EUR"))
#' tb_register_converter(py_type = "fractions.Fraction",
#'                       to_r = function(f) f$numerator / f$denominator)
#' }
#' @export
tb_register_converter <- function(r_class = NULL, to_python = NULL, py_type = NULL, to_r = NULL) {
  if (!is.null(r_class)) {
    if (!is.function(to_python)) stop("tb_register_converter(): to_python must be a function", call. = FALSE)
    conv <- .tb$r_converters
    conv[[r_class]] <- to_python
    .tb$r_converters <- conv
  }
  if (!is.null(py_type)) {
    if (!is.function(to_r)) stop("tb_register_converter(): to_r must be a function", call. = FALSE)
    tb_init()
    conv <- .tb$py_converters
    conv[[py_type]] <- to_r
    .tb$py_converters <- conv
    tb_call_py(.tb$m_register_py_converter, list(py_type))
  }
  if (is.null(r_class) && is.null(py_type)) {
    stop("tb_register_converter(): give r_class (with to_python) or py_type (with to_r)", call. = FALSE)
  }
  invisible(NULL)
}

#' @rdname tb_register_converter
#' @export
tb_unregister_converter <- function(r_class = NULL, py_type = NULL) {
  if (!is.null(r_class)) {
    conv <- .tb$r_converters
    conv[[r_class]] <- NULL
    .tb$r_converters <- conv
  }
  if (!is.null(py_type)) {
    conv <- .tb$py_converters
    conv[[py_type]] <- NULL
    .tb$py_converters <- conv
    tb_call_py(.tb$m_register_py_converter, list(py_type, FALSE))
  }
  invisible(NULL)
}
