# Errors crossing the boundary, and R functions called from Python.

# The R condition of an error wire ("E"/"X", language, type, message, module, classes,
# traceback, r_condition, cause).
error_condition <- function(w) {
  language <- w[[2L]]
  if (identical(language, "r") && !is.null(w[[8L]])) {
    cond <- stored_condition(w[[8L]])
    if (!is.null(cond)) return(cond)
  }
  type <- w[[3L]]
  msg <- w[[4L]]
  cls <- if (identical(language, "r")) {
    unique(c("tensorbridge_error", as.character(unlist(w[[6L]])), "error", "condition"))
  } else {
    unique(c(
      if (identical(type, "HandleError")) "tensorbridge_released_error",
      "tensorbridge_error", type, "error", "condition"
    ))
  }
  structure(
    class = cls,
    list(
      message = if (identical(language, "python")) paste0(type, ": ", msg) else msg,
      call = NULL,
      language = language,
      type = type,
      python_message = msg,
      module = w[[5L]],
      classes = as.character(unlist(w[[6L]])),
      traceback = as.character(unlist(w[[7L]])),
      cause = w[[9L]]
    )
  )
}

#' @export
print.tensorbridge_error <- function(x, ...) {
  cat("<", class(x)[[2L]], ": ", conditionMessage(x), ">\n", sep = "")
  tb <- x$traceback
  if (length(tb)) {
    lang <- x$language %||% "python"
    if (identical(lang, "python")) lang <- "Python"
    cat(sprintf("%s traceback (most recent call last):\n", lang))
    cat(paste0("  ", gsub("\n", "\n  ", trimws(tb, which = "right"))), sep = "\n")
  }
  if (!is.null(x$cause)) cat("caused by: ", x$cause, "\n", sep = "")
  invisible(x)
}

`%||%` <- function(a, b) if (is.null(a)) b else a

# Python warnings raised during a call, signalled as R warnings (class `tensorbridge_warning`
# and the Python category, e.g. `UserWarning`), so suppressWarnings() and
# withCallingHandlers() work on them as on R's own.
python_warnings <- function(categories, messages) {
  for (k in seq_along(messages)) {
    warning(structure(
      class = unique(c("tensorbridge_warning", categories[[k]], "warning", "condition")),
      list(message = paste0(categories[[k]], ": ", messages[[k]]), call = NULL)
    ))
  }
}

#' The last Python error, with its traceback
#'
#' Errors raised in Python reach R as conditions whose message is the Python exception's
#' (`"ValueError: ..."`). `tb_last_error()` returns the last one (as reticulate's
#' `py_last_error()`); printing it shows the Python traceback (most recent call last) and the
#' exception's cause. The condition also has the fields `type`, `python_message`, `module`,
#' `classes` (the Python class chain) and `traceback`.
#'
#' @return The condition (class `tensorbridge_error`), or `NULL` when no Python error has
#'   reached R in this session.
#' @examples
#' \dontrun{
#' try(tb_import("math")$sqrt(-1), silent = TRUE)
#' tb_last_error()
#' }
#' @export
tb_last_error <- function() .tb$last_error

# R conditions raised in callbacks are kept (a ring of the last 256) so that when the error
# comes back to R through Python, R signals the very same condition.
store_condition <- function(cond) {
  n <- (.tb$cond_counter %||% 0L) + 1L
  .tb$cond_counter <- n
  if (is.null(.tb$conds)) .tb$conds <- vector("list", 256L)
  .tb$conds[[(n - 1L) %% 256L + 1L]] <- list(n, cond)
  n
}

stored_condition <- function(n) {
  slot <- .tb$conds[[(as.integer(n) - 1L) %% 256L + 1L]]
  if (!is.null(slot) && identical(slot[[1L]], as.integer(n))) slot[[2L]] else NULL
}

signal_interrupt <- function() {
  cond <- structure(class = c("interrupt", "condition"), list(message = "interrupted", call = NULL))
  signalCondition(cond)
  invokeRestart("abort")
}

format_calls <- function(calls) {
  vapply(calls, function(cl) {
    paste(deparse(cl, width.cutoff = 100L, nlines = 1L), collapse = "")
  }, character(1))
}

wire_error <- function(e, calls) {
  frames <- if (is.null(calls)) character() else format_calls(calls)
  tag("X",
    classes = as.list(class(e)),
    message = conditionMessage(e),
    traceback = as.list(frames),
    cond = store_condition(e)
  )
}

# Python calls this (on R's main thread) to run the R function kept under `token`. Interrupts
# are suspended meanwhile: a Ctrl-C that arrives during the callback is handed to Python when
# it ends (tag "I"), which then cancels the work cleanly instead of R unwinding through
# reticulate.
r_dispatch <- function(token, args, kwargs) {
  suspendInterrupts({
    out <- r_dispatch_body(token, args, kwargs)
    if (.Call(tb_c_take_interrupt)) out <- tag("I")
    out
  })
}

r_dispatch_body <- function(token, args, kwargs) {
  f <- .Call(tb_c_get, token)
  calls <- NULL
  depth <- sys.nframe()
  tryCatch(
    withCallingHandlers(
      {
        a <- lapply(args, tb_decode_any)
        if (length(kwargs)) a <- c(a, lapply(kwargs, tb_decode_any))
        tb_wire(do.call(f, a))
      },
      error = function(e) {
        cs <- sys.calls()
        keep <- seq_along(cs) > depth + 3L
        calls <<- cs[keep & seq_along(cs) < length(cs) - 1L]
      }
    ),
    error = function(e) wire_error(e, calls),
    interrupt = function(e) tag("I")
  )
}
