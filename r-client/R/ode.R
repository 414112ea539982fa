# ode_solve(): ordinary differential equations, as in greta.dynamics, on tensorbridge's
# ode_solve (Python: tensorbridge.ode_solve; bridge/r/ode.py converts).

#' Solve an ordinary differential equation
#'
#' Integrates `dy/dt = derivative(y, t, ...)` from `y0` at time `t0` and returns `y` at each of
#' `times`, one row per time (greta.dynamics' `ode_solve()`). `derivative` is an ordinary R
#' function: it receives `y` (a tensor with one element per element of `y0`), `t` (a scalar
#' tensor) and the arguments given in `...`, in that order and with their names, and returns
#' the rates as a tensor or as `c()` of tensors (e.g. `c(du, dv)`). When `y0` or an argument
#' in `...` is a lazy array (a model parameter), the result is a lazy array that models can
#' use, and its gradient comes from forward sensitivities; otherwise it is a tensor.
#' A solve that fails inside a model (too many steps) makes the density `NaN`, which samplers
#' reject; outside a model it is an error.
#'
#' @param derivative An R function `function(y, t, ...)` returning `dy/dt`.
#' @param y0 Initial state: numbers, a tensor or a lazy array.
#' @param times Increasing times at which to return the state (numbers).
#' @param ... Further arguments of `derivative` (numbers, tensors or lazy arrays), passed on
#'   with their names.
#' @param method `"rk45"` (Dormand-Prince 5(4), also `"dp"`) or, for stiff systems,
#'   `"rosenbrock"` (linearly implicit Euler extrapolated to fourth order; `"bdf"` is accepted
#'   as a name for it).
#' @param rtol,atol Relative and absolute error tolerated per step.
#' @param max_steps Most steps (accepted and rejected) before giving up.
#' @param t0 Initial time; `NULL` (the default) is `times[1]`, so the first row is `y0`.
#' @return A `length(times)` x `length(y0)` lazy array or tensor.
#' @examples
#' \dontrun{
#' decay <- function(y, t, k) -k * y
#' ode_solve(decay, c(1, 2), seq(0, 2, by = 0.5), k = 0.7)
#' theta <- normal(1, 0.5, truncation = c(0, Inf))
#' z <- ode_solve(decay, 1, 1:5, k = theta, t0 = 0)
#' }
#' @export
ode_solve <- function(derivative, y0, times, ...,
                      method = c("rk45", "rosenbrock", "bdf", "dp"), rtol = 1e-6, atol = 1e-6, max_steps = 100000L, t0 = NULL) {
  if (!is.function(derivative)) {
    stop("ode_solve: derivative must be a function(y, t, ...)", call. = FALSE)
  }
  method <- match.arg(method)
  if (method == "dp") method <- "rk45"
  if (!is.numeric(times) || !length(times) || anyNA(times)) {
    stop("ode_solve: times must be numbers (no NA)", call. = FALSE)
  }
  args <- list(...)
  arg_names <- names(args)
  fn <- function(y, t, ...) {
    a <- list(...)
    names(a) <- arg_names
    do.call(derivative, c(list(y, t), a))
  }
  res <- ode_module()(
    fn, y0, as.list(as.double(times)), unname(args), method, as.double(rtol), as.double(atol),
    as.integer(max_steps), if (is.null(t0)) NULL else as.double(t0)
  )
  if (isTRUE(res$lazy)) new_lazy(res$value) else res$value
}

# The Python function behind ode_solve() (cached).
ode_module <- function() {
  tb_init()
  if (is.null(.tb$ode_solve)) {
    .tb$ode_solve <- py_getattr(tb_import("tensorbridge.bridge.r.ode"), "ode_solve")
  }
  .tb$ode_solve
}
