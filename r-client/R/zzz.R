#' @useDynLib tensorbridge, .registration = TRUE
#' @keywords internal
"_PACKAGE"

.onLoad <- function(libname, pkgname) {
  .tb$session <- paste0(
    Sys.getpid(), "-", format(unclass(Sys.time()), digits = 17), "-", basename(tempfile(""))
  )
  .tb$initialized <- FALSE
  .tb$r_converters <- list()
  .tb$py_converters <- list()
  # reticulate's own entry points: call a Python object with R arguments (converted by
  # reticulate's r_to_py), and convert the Python result to R.
  get <- function(name) tryCatch(utils::getFromNamespace(name, "reticulate"), error = function(e) NULL)
  call_impl <- get("py_call_impl")
  ref_to_r <- get("py_ref_to_r")
  .tb$call_impl <- call_impl
  .tb$ref_to_r <- ref_to_r
  .tb$pci <- if (is.null(call_impl) || is.null(ref_to_r)) {
    function(x, args, kwargs) {
      reticulate::py_to_r(do.call(reticulate::py_call, c(list(x), args, kwargs)))
    }
  } else {
    function(x, args, kwargs) ref_to_r(call_impl(x, args, kwargs))
  }
  .Call(tb_c_init)
  invisible(NULL)
}

.onUnload <- function(libpath) {
  .tb$closing <- TRUE
  try(.Call(tb_c_event_loop_stop), silent = TRUE)
  library.dynam.unload("tensorbridge", libpath)
}
