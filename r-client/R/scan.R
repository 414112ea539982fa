# tb_scan(): a loop with carried state on tensorbridge's scan (Python: tensorbridge.scan;
# bridge/r/scan.py converts). Named tb_scan because base R's scan() reads files.

#' Loop with carried state (recurrences)
#'
#' Runs `fn(carry, x)` once per slice `x` of `xs` along its first dimension, passing each
#' step's new carry to the next, as `tensorbridge.scan` (JAX's `lax.scan`) does; the result
#' is differentiable, and usable in models, so that AR, ARMA, GARCH and hidden Markov models
#' can be written step by step. `fn` is an ordinary R function returning `list(carry, y)`:
#' the new carry (same shape as `init`) and this step's output `y` (any fixed shape, or
#' `NULL`). Carries and slices may also be R lists of arrays.
#'
#' When `init` or `xs` holds a lazy array, or `fn` uses one (a model's parameter) from its
#' environment, `fn` receives lazy arrays (R numbers among `init` and `xs` become data
#' arrays), may combine them with the model's variables, and the results are lazy arrays for
#' the model. Otherwise `fn` receives tensors (tracers inside `grad()`) and the results are
#' tensors. The name differs from the Python and JavaScript `scan` so that base R's
#' `scan()` stays available.
#'
#' @param fn An R function `function(carry, x)` returning `list(carry, y)`.
#' @param init The first carry: numbers, a tensor, a lazy array, or a list of them.
#' @param xs What to loop over, along the first dimension (numbers, a tensor, a lazy array or
#'   a list of them with equal first dimensions), or `NULL`: then `fn` gets `x = NULL` and
#'   `length` says how many steps to run.
#' @param length The number of steps when `xs` is `NULL` (optional otherwise, and then it
#'   must equal the first dimension of `xs`).
#' @param reverse `TRUE` to run from the last slice to the first (outputs stay in the order of
#'   `xs`).
#' @return `list(carry = , ys = )`: the last carry and each step's `y` stacked along a new
#'   first dimension.
#' @examples
#' \dontrun{
#' step <- function(s, e) { s <- 0.8 * s + e; list(s, s) }
#' out <- tb_scan(step, 0, c(1, 0, 0, 0))
#' as.array(out[[2]])  # 1, 0.8, 0.64, 0.512
#' phi <- uniform(-1, 1)
#' y <- as_data(c(0.3, 0.5, 0.2, -0.1))
#' pred <- tb_scan(function(p, y_prev) list(phi * y_prev, phi * y_prev), 0, y[1:3])[[2]]
#' }
#' @export
tb_scan <- function(fn, init, xs = NULL, length = NULL, reverse = FALSE) {
  if (!is.function(fn)) {
    stop("tb_scan: fn must be a function(carry, x) returning list(carry, y)", call. = FALSE)
  }
  if (!is.null(length) && (!is.numeric(length) || base::length(length) != 1L ||
                           is.na(length) || length != round(length))) {
    stop("tb_scan: length must be one whole number", call. = FALSE)
  }
  if (!is.logical(reverse) || base::length(reverse) != 1L || is.na(reverse)) {
    stop("tb_scan: reverse must be TRUE or FALSE", call. = FALSE)
  }
  lazy <- scan_has_lazy(init) || scan_has_lazy(xs) || scan_closes_over_lazy(fn)
  step <- function(carry, x) {
    out <- fn(scan_from_py(carry), scan_from_py(x))
    if (!is.list(out) || base::length(out) != 2L) {
      stop("tb_scan: fn must return list(carry, y)", call. = FALSE)
    }
    scan_to_py(out)
  }
  res <- scan_module()(
    step, scan_to_py(init), scan_to_py(xs), if (is.null(length)) NULL else as.integer(length), reverse, lazy
  )
  list(carry = scan_from_py(res[[1L]]), ys = scan_from_py(res[[2L]]))
}

scan_has_lazy <- function(x) {
  if (inherits(x, "tb_lazy_array")) return(TRUE)
  if (is.list(x) && !inherits(x, "tb_object")) return(any(vapply(x, scan_has_lazy, TRUE)))
  FALSE
}

# Whether fn reads a lazy array from its environment (a model's parameter): then the scan is
# part of the model even when init and xs are R data.
scan_closes_over_lazy <- function(fn) {
  env <- environment(fn)
  if (is.null(env)) return(FALSE)
  for (n in all.names(body(fn), unique = TRUE)) {
    if (!exists(n, envir = env)) next
    v <- tryCatch(get(n, envir = env), error = function(e) NULL)
    if (scan_has_lazy(v)) return(TRUE)
  }
  FALSE
}

# R lists stay lists (of tensors) on the way to Python: R numbers in them become tensors, so
# that list(0, 0) is two carries, not one vector.
scan_to_py <- function(x) {
  if (is.list(x) && !inherits(x, "tb_object")) return(lapply(x, scan_to_py))
  if (is.numeric(x) || is.logical(x)) return(as_tensor(x))
  x
}

# What Python hands back: tensors already as tb_tensor, lazy arrays as list(lazy = ...), lists
# walked.
scan_from_py <- function(x) {
  if (is.list(x) && !inherits(x, "tb_object")) {
    if (identical(names(x), "lazy")) return(new_lazy(x$lazy))
    return(lapply(x, scan_from_py))
  }
  x
}

# The Python function behind tb_scan() (cached).
scan_module <- function() {
  tb_init()
  if (is.null(.tb$scan)) {
    .tb$scan <- py_getattr(tb_import("tensorbridge.bridge.r.scan"), "scan")
  }
  .tb$scan
}
