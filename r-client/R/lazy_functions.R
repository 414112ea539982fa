# More of greta's functions of lazy arrays: zeros(), ones(), greta_array(), cbind(), rbind(),
# c() and rowSums()/colSums()/rowMeans()/colMeans() (which, as in greta, mask base R's and
# fall back to them for anything that is not a lazy array).

#' Lazy arrays of constants, and binding lazy arrays together
#'
#' As in greta: `zeros(2, 3)` and `ones(4)` are data arrays of zeros and ones (one number is
#' a column), `greta_array(data, dim)` is data of the given dimensions (R's `array()` rules);
#' `cbind()`, `rbind()` and `c()` bind lazy arrays, R numbers and matrices together (a lazy
#' scalar or vector is a column, an R vector a column in `cbind()` and a row in `rbind()`;
#' `c()` gives one column, in R's column-major order).
#'
#' @param ... Dimensions (`zeros()`, `ones()`).
#' @param data Numbers (recycled to fill `dim`), or a lazy array (then `dim(data) <- dim`).
#' @param dim Dimensions; one number is a column.
#' @return A lazy array.
#' @examples
#' \dontrun{
#' z <- zeros(3, 2); g <- greta_array(1:6, dim = c(2, 3))
#' mu <- normal(0, 1); cbind(mu, 1); c(mu, normal(0, 1, dim = 2))   # 1 x 2; 3 x 1
#' }
#' @export
zeros <- function(...) ppl_constant(0, c(...), "zeros")

#' @rdname zeros
#' @export
ones <- function(...) ppl_constant(1, c(...), "ones")

#' @rdname zeros
#' @export
greta_array <- function(data = 0, dim = length(data)) {
  if (is_lazy(data)) { # greta: a lazy array is reshaped, as dim(data) <- dim
    if (!identical(as.integer(dim), dim(data))) dim(data) <- dim
    return(data)
  }
  ppl_array_arg(data, "data", "greta_array")
  ppl_constant(data, dim, "greta_array")
}

ppl_constant <- function(value, dim, fn) {
  if (is.null(dim) || !length(dim)) dim <- 1L
  d <- unlist(ppl_dim(dim, fn))
  as_data(array(as.double(value), dim = d))
}

ppl_bind <- function(args, axis, fn) {
  args <- Filter(Negate(is.null), args)
  if (!length(args)) stop(sprintf("%s: nothing to bind", fn), call. = FALSE)
  for (k in seq_along(args)) ppl_array_arg(args[[k]], sprintf("argument %d", k), fn)
  args <- lapply(args, function(a) {
    if (is.integer(a) || is.logical(a)) storage.mode(a) <- "double"
    if (axis == 0L && !is_lazy(a) && is.null(dim(a))) a <- matrix(a, nrow = 1L) # as rbind()
    a
  })
  new_lazy(ppl("bind")(unname(args), axis, fn))
}

#' @export
cbind.tb_lazy_array <- function(..., deparse.level = 1) ppl_bind(list(...), 1L, "cbind")

#' @export
rbind.tb_lazy_array <- function(..., deparse.level = 1) ppl_bind(list(...), 0L, "rbind")

#' @export
c.tb_lazy_array <- function(...) ppl_bind(list(...), -1L, "c")

#' Row and column sums and means
#'
#' greta's versions: for a lazy array `rowSums(x)` and `rowMeans(x)` are columns with one
#' entry per row, `colSums(x)` and `colMeans(x)` columns with one entry per column; with
#' `dims = k` (arrays of more than two dimensions) the sums or means over the dimensions after
#' the first `k` (rows) or over the first `k` (columns), keeping the others' dimensions as base
#' R does (one left: a column). Anything else goes to base R's function.
#'
#' @param x A lazy array, or what base R's functions take.
#' @param na.rm,dims As in base R (lazy arrays have no `NA`; `dims` says which dimensions are
#'   rows, as in base R, for lazy arrays of two or more dimensions).
#' @return A lazy array (or what base R returns).
#' @export
rowSums <- function(x, na.rm = FALSE, dims = 1L) UseMethod("rowSums")

#' @rdname rowSums
#' @export
colSums <- function(x, na.rm = FALSE, dims = 1L) UseMethod("colSums")

#' @rdname rowSums
#' @export
rowMeans <- function(x, na.rm = FALSE, dims = 1L) UseMethod("rowMeans")

#' @rdname rowSums
#' @export
colMeans <- function(x, na.rm = FALSE, dims = 1L) UseMethod("colMeans")

#' @export
rowSums.default <- function(x, na.rm = FALSE, dims = 1L) base::rowSums(x, na.rm, dims)

#' @export
colSums.default <- function(x, na.rm = FALSE, dims = 1L) base::colSums(x, na.rm, dims)

#' @export
rowMeans.default <- function(x, na.rm = FALSE, dims = 1L) base::rowMeans(x, na.rm, dims)

#' @export
colMeans.default <- function(x, na.rm = FALSE, dims = 1L) base::colMeans(x, na.rm, dims)

# axis 1: rows (reduce the dimensions after the first `dims`), 0: columns (the first `dims`)
ppl_margin <- function(x, op, axis, dims, fn) {
  n <- length(dim(x))
  if (!is.numeric(dims) || length(dims) != 1L || dims != round(dims) || dims < 1 ||
      dims > n - 1L) {
    stop(sprintf("%s: dims must be a whole number from 1 to %d for a lazy array of dim = c(%s)",
                 fn, n - 1L, paste(dim(x), collapse = ", ")), call. = FALSE)
  }
  axes <- if (axis == 1L) seq.int(dims, n - 1L) else seq_len(dims) - 1L
  array_call("margin_reduce", x, op, array(as.integer(axes)))
}

#' @export
rowSums.tb_lazy_array <- function(x, na.rm = FALSE, dims = 1L) {
  ppl_margin(x, "sum", 1L, dims, "rowSums")
}

#' @export
colSums.tb_lazy_array <- function(x, na.rm = FALSE, dims = 1L) {
  ppl_margin(x, "sum", 0L, dims, "colSums")
}

#' @export
rowMeans.tb_lazy_array <- function(x, na.rm = FALSE, dims = 1L) {
  ppl_margin(x, "mean", 1L, dims, "rowMeans")
}

#' @export
colMeans.tb_lazy_array <- function(x, na.rm = FALSE, dims = 1L) {
  ppl_margin(x, "mean", 0L, dims, "colMeans")
}

#' Diagonals of lazy arrays
#'
#' greta's `diag()`: of a lazy matrix, its diagonal (a column); of a lazy column vector, the
#' diagonal matrix with it on the diagonal. Anything else goes to base R's `diag()`.
#'
#' @param x A lazy array, or what base R's `diag()` takes.
#' @param nrow,ncol,names As in base R (not used for lazy arrays).
#' @return A lazy array (or what base R returns).
#' @export
diag <- function(x = 1, nrow, ncol, names = TRUE) {
  if (!is_lazy(x)) { # base::diag() counts its arguments (diag(2) is a 2 x 2 identity)
    call <- match.call()
    call[[1L]] <- quote(base::diag)
    return(eval(call, parent.frame()))
  }
  d <- dim(x)
  if (length(d) != 2L) {
    stop(sprintf("diag: takes a lazy array with two dimensions, not dim = c(%s)",
                 paste(d, collapse = ", ")), call. = FALSE)
  }
  if (d[[2L]] == 1L && d[[1L]] > 1L) return(x * base::diag(d[[1L]])) # a column: the matrix
  k <- seq_len(min(d))
  x[(k - 1L) * d[[1L]] + k]
}

#' Cholesky factor of a lazy array
#'
#' As base R's [chol()]: the upper-triangular `R` with `t(R) %*% R == x`, for a symmetric
#' positive-definite lazy array `x` (greta's `chol`). Differentiable, so it can sit inside a
#' model (e.g. a covariance built from variables).
#'
#' @param x A square lazy array.
#' @param ... Unused.
#' @return A lazy array.
#' @export
chol.tb_lazy_array <- function(x, ...) {
  check_live(x)
  d <- dim(x)
  if (length(d) != 2L || d[[1L]] != d[[2L]]) {
    stop(sprintf("chol: x must be a square matrix, not of dimension %s",
                 paste(d, collapse = " x ")), call. = FALSE)
  }
  t(lazy_op("cholesky", x))
}

# solve.tb_lazy_array: in maths_functions.R
