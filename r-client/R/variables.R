# greta's constrained variable types. The runtime makes them (runtime/graph/nodes.py) and its
# front-door spec checks their arguments, naming a wrong one; this file only passes R's values.

#' Constrained variables: ordered, simplex and Cholesky factors
#'
#' greta's variable types, each with a flat prior on its support, seen by the samplers through
#' a bijector onto unconstrained values: `ordered_variable()` increases along its last
#' dimension, `simplex_variable()` is positive and sums to 1 along its last dimension, and
#' `cholesky_variable()` is the upper-triangular Cholesky factor (as [chol()] returns it) of a
#' covariance matrix, or with `correlation = TRUE` of a correlation matrix (columns of unit
#' length), so that `t(U) %*% U` is the matrix.
#'
#' As in greta, the constraint of `ordered_variable()` and `simplex_variable()` acts on the
#' last dimension, which must have at least 2 elements: `dim = n` is a 1 x n row.
#'
#' @param dim Dimensions: for `ordered_variable()` and `simplex_variable()` a number `n` (a
#'   1 x n row) or a vector; for `cholesky_variable()` `n` or `c(n, n)`.
#' @param correlation `TRUE` for the Cholesky factor of a correlation matrix.
#' @return A lazy array (class `tb_lazy_array`): a variable.
#' @examples
#' \dontrun{
#' p <- simplex_variable(3)                  # 1 x 3, rows sum to 1
#' cuts <- ordered_variable(4)               # 1 x 4, increasing
#' U <- cholesky_variable(3)                 # 3 x 3, upper triangular
#' Sigma <- t(U) %*% U
#' }
#' @export
ordered_variable <- function(dim) {
  new_lazy(ppl("constrained_variable")("ordered_variable", dim))
}

#' @rdname ordered_variable
#' @export
simplex_variable <- function(dim) {
  new_lazy(ppl("constrained_variable")("simplex_variable", dim))
}

#' @rdname ordered_variable
#' @export
cholesky_variable <- function(dim, correlation = FALSE) {
  new_lazy(ppl("constrained_variable")("cholesky_variable", dim, correlation))
}
