# greta's linear-algebra functions on lazy arrays: forwardsolve(), backsolve(), chol2inv(),
# chol2symm(), cov2cor(), rdist(), solve() and eigen(). Each is a thin codec over
# tensorbridge.bridge.r.maths_functions (runtime ops, differentiable). Base R does not dispatch
# forwardsolve, backsolve, chol2inv, cov2cor or eigen, so they are masked here and go to base R
# unless an argument is a lazy array: given a lazy array they return one, given data what base
# R returns. chol2symm() and rdist() are greta's own (on data they give data).

# The R function for a function of tensorbridge.bridge.r.maths_functions (cached).
ppl_maths <- function(name) {
  tb_init()
  if (is.null(.tb$maths_fns)) .tb$maths_fns <- new.env(parent = emptyenv())
  f <- .tb$maths_fns[[name]]
  if (is.null(f)) {
    if (is.null(.tb$maths_module)) {
      .tb$maths_module <- tb_import("tensorbridge.bridge.r.maths_functions")
    }
    f <- py_getattr(.tb$maths_module, name)
    assign(name, f, envir = .tb$maths_fns)
  }
  f
}

maths_call <- function(name, ...) new_lazy(ppl_maths(name)(...))

maths_any_lazy <- function(...) any(vapply(list(...), is_lazy, logical(1L)))

maths_flag <- function(x, arg, fn) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    stop(sprintf("%s: %s must be TRUE or FALSE", fn, arg), call. = FALSE)
  }
  x
}

maths_whole <- function(x, arg, fn) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != round(x)) {
    stop(sprintf("%s: %s must be a whole number", fn, arg), call. = FALSE)
  }
  as.double(x)
}

#' Triangular solves with lazy arrays
#'
#' As base R's [base::forwardsolve()] and [base::backsolve()]: `y` with `l %*% y = x`
#' (`forwardsolve`, `l` lower triangular) or `r %*% y = x` (`backsolve`, `r` upper
#' triangular), using the leading `k x k` triangle (the other triangle is not read);
#' `upper.tri` says which triangle, `transpose = TRUE` solves with its transpose. Given a lazy
#' array, the result is a lazy array (`x` a vector gives a column), differentiable in both
#' arguments; given data only, base R's result.
#'
#' @param l,r A lower (`l`) or upper (`r`) triangular matrix: a lazy array or R data.
#' @param x A matrix or vector of right-hand sides.
#' @param k The number of leading rows and columns of `l` or `r` to use.
#' @param upper.tri Whether the upper triangle is the one to use.
#' @param transpose Whether to solve with the triangle's transpose.
#' @return A lazy array (given one), else base R's result.
#' @examples
#' \dontrun{
#' L <- t(chol(wishart(4, diag(2))))
#' forwardsolve(L, c(1, 2)); backsolve(t(L), c(1, 2))
#' }
#' @export
forwardsolve <- function(l, x, k = ncol(l), upper.tri = FALSE, transpose = FALSE) {
  if (!maths_any_lazy(l, x)) {
    return(base::forwardsolve(l, x, k = k, upper.tri = upper.tri, transpose = transpose))
  }
  maths_call("triangular_solve", l, x, maths_whole(k, "k", "forwardsolve"),
             maths_flag(upper.tri, "upper.tri", "forwardsolve"),
             maths_flag(transpose, "transpose", "forwardsolve"), "forwardsolve")
}

#' @rdname forwardsolve
#' @export
backsolve <- function(r, x, k = ncol(r), upper.tri = TRUE, transpose = FALSE) {
  if (!maths_any_lazy(r, x)) {
    return(base::backsolve(r, x, k = k, upper.tri = upper.tri, transpose = transpose))
  }
  maths_call("backsolve", r, x, maths_whole(k, "k", "backsolve"),
             maths_flag(upper.tri, "upper.tri", "backsolve"),
             maths_flag(transpose, "transpose", "backsolve"))
}

#' Matrices from Cholesky factors, correlations and distances
#'
#' `chol2inv(x)` is base R's [base::chol2inv()]: the inverse of `t(R) %*% R` from the upper
#' triangle `R` of `x[1:size, 1:size]`. `chol2symm(x)` is greta's: the symmetric matrix
#' `t(x) %*% x` from its upper Cholesky factor `x`. `cov2cor(V)` is [stats::cov2cor()]: the
#' correlation matrix of the covariance `V` (its diagonal exactly 1). `rdist(x1, x2)` is
#' greta's: the Euclidean distances between the rows of `x1` and the rows of `x2` (of `x1`
#' when `x2` is `NULL`), an `nrow(x1) x nrow(x2)` matrix. Given a lazy array each returns a
#' lazy array (differentiable; `rdist`'s derivative at a zero distance is taken as 0); given
#' data, base R's result (`chol2symm` and `rdist` compute theirs in R).
#'
#' @param x For `chol2inv` and `chol2symm`, a matrix whose upper triangle is a Cholesky
#'   factor.
#' @param size The number of leading rows and columns of `x` to use.
#' @param LINPACK Unused (base R's defunct argument); must be `FALSE`.
#' @param V A symmetric positive-definite (covariance) matrix.
#' @param x1,x2 Matrices with the same number of columns (`x2` may be `NULL`).
#' @return A lazy array (given one), else a matrix.
#' @examples
#' \dontrun{
#' R <- chol(wishart(4, diag(2)))
#' chol2inv(R); chol2symm(R); cov2cor(chol2symm(R))
#' rdist(normal(0, 1, dim = c(3, 2)))
#' }
#' @export
chol2inv <- function(x, size = NCOL(x), LINPACK = FALSE) {
  if (!isFALSE(LINPACK)) stop("chol2inv: LINPACK must be FALSE", call. = FALSE)
  if (!is_lazy(x)) return(base::chol2inv(x, size = size))
  maths_call("chol2inv", x, maths_whole(size, "size", "chol2inv"))
}

#' @rdname chol2inv
#' @export
chol2symm <- function(x) {
  if (!is_lazy(x)) {
    if (!is.matrix(x) || nrow(x) != ncol(x)) {
      stop("chol2symm: x must be a square matrix", call. = FALSE)
    }
    r <- x
    r[lower.tri(r)] <- 0
    return(crossprod(r))
  }
  maths_call("chol2symm", x)
}

#' @rdname chol2inv
#' @export
cov2cor <- function(V) {
  if (!is_lazy(V)) return(stats::cov2cor(V))
  maths_call("cov2cor", V)
}

#' @rdname chol2inv
#' @export
rdist <- function(x1, x2 = NULL) {
  if (!maths_any_lazy(x1, x2)) {
    x1 <- as.matrix(x1)
    x2 <- if (is.null(x2)) x1 else as.matrix(x2)
    if (ncol(x1) != ncol(x2)) {
      stop("rdist: x1 and x2 must have the same number of columns", call. = FALSE)
    }
    d2 <- outer(rowSums(x1^2), rowSums(x2^2), "+") - 2 * tcrossprod(x1, x2)
    return(sqrt(pmax(d2, 0)))
  }
  maths_call("rdist", x1, x2)
}

#' Solving linear systems and eigendecompositions of lazy arrays
#'
#' `solve(a, b)` is base R's [base::solve()] for a lazy `a`: `x` with `a %*% x = b`, or the
#' inverse of `a` when `b` is missing. `eigen(x)` is base R's [base::eigen()] for a symmetric
#' lazy `x` (greta's): a list with the eigenvalues in decreasing order (`values`, a column)
#' and the eigenvectors as the columns of `vectors` (`NULL` with `only.values = TRUE`); only
#' the lower triangle of `x` is read. Both are differentiable (the eigenvectors' derivative
#' needs distinct eigenvalues; each vector's sign is the decomposition's). Given data only,
#' `eigen` is base R's.
#'
#' @param a A square lazy array.
#' @param b A matrix or vector of right-hand sides (a lazy array or data); missing: the
#'   inverse.
#' @param ... Unused.
#' @param x A symmetric matrix: a lazy array or R data.
#' @param symmetric Must be `TRUE` (or missing) for a lazy array.
#' @param only.values Whether to leave out the eigenvectors.
#' @param EISPACK Unused (base R's defunct argument); must be `FALSE`.
#' @return `solve`: a lazy array. `eigen`: a list of `values` and `vectors`.
#' @examples
#' \dontrun{
#' S <- wishart(4, diag(2)); solve(S, c(1, 2)); solve(S)
#' e <- eigen(S); e$values; e$vectors
#' }
#' @export
solve.tb_lazy_array <- function(a, b, ...) {
  if (...length()) stop("solve: no further arguments for lazy arrays", call. = FALSE)
  maths_call("solve", a, if (missing(b)) NULL else b)
}

#' @rdname solve.tb_lazy_array
#' @export
eigen <- function(x, symmetric, only.values = FALSE, EISPACK = FALSE) {
  if (!isFALSE(EISPACK)) stop("eigen: EISPACK must be FALSE", call. = FALSE)
  if (!is_lazy(x)) return(base::eigen(x, symmetric = symmetric, only.values = only.values))
  if (!missing(symmetric) && !isTRUE(symmetric)) {
    stop("eigen: only symmetric matrices are supported for lazy arrays (symmetric = TRUE)",
         call. = FALSE)
  }
  out <- ppl_maths("eigen")(x, maths_flag(only.values, "only.values", "eigen"))
  list(values = new_lazy(out$values),
       vectors = if (isTRUE(only.values)) NULL else new_lazy(out$vectors))
}
