# greta's array functions on lazy arrays: `[<-`, `dim<-`, `diag<-`, rep(), aperm(), abind(),
# cumsum()/cumprod() (through Math), outer()/%o%, kronecker()/%x%, sweep(), apply() and
# tapply(). Each is a thin codec over tensorbridge.bridge.r.array_functions (runtime ops); the
# functions that base R does not dispatch (outer, kronecker, sweep, apply, tapply, abind,
# diag<-) are masked here and go to base R unless an argument is a lazy array: given a lazy
# array they return one, given data they return what base R does.

# The R function for a function of tensorbridge.bridge.r.array_functions (cached).
ppl_arrays <- function(name) {
  tb_init()
  if (is.null(.tb$array_fns)) .tb$array_fns <- new.env(parent = emptyenv())
  f <- .tb$array_fns[[name]]
  if (is.null(f)) {
    if (is.null(.tb$array_module)) {
      .tb$array_module <- tb_import("tensorbridge.bridge.r.array_functions")
    }
    f <- py_getattr(.tb$array_module, name)
    assign(name, f, envir = .tb$array_fns)
  }
  f
}

array_call <- function(name, ...) new_lazy(ppl_arrays(name)(...))

any_lazy <- function(...) any(vapply(list(...), is_lazy, logical(1L)))

# FUN as its name: a string, or one of base R's functions of that name.
ppl_fun_name <- function(FUN, choices, fn) {
  if (is.character(FUN) && length(FUN) == 1L && FUN %in% choices) return(FUN)
  if (is.function(FUN)) {
    for (name in choices) if (identical(FUN, get(name, envir = baseenv()))) return(name)
  }
  stop(sprintf("%s: FUN must be one of %s for lazy arrays", fn,
               paste0("\"", choices, "\"", collapse = ", ")), call. = FALSE)
}

arith_funs <- c("*", "+", "-", "/", "^")

#' Assign into, reshape and repeat lazy arrays
#'
#' greta's replacement functions: `x[i] <- value` and `x[i, j] <- value` replace entries of a
#' lazy array `x` by `value` (a lazy array or numbers, recycled as R does when its length
#' divides the number of entries; R's subscripts: positive, negative, logical, matrix);
#' `dim(x) <- value` gives the entries, in R's column-major order, new dimensions;
#' `diag(x) <- value` replaces the diagonal of a matrix. Each returns a new lazy array (the
#' entries are a function of `x` and `value`, differentiable in both). `rep(x, times, each,
#' length.out)` repeats the entries of a lazy array (a column, as greta has it).
#'
#' A lazy `value` assigned into a plain R array `x` cannot dispatch (R dispatches `[<-` on `x`):
#' make `x` a lazy array first with [as_data()].
#'
#' @param x A lazy array (for `diag<-`, also an R matrix).
#' @param ... Subscripts (`[<-`), or `times`, `each` and `length.out` as in base R (`rep`).
#' @param value A lazy array or numbers: the new entries (`[<-`, `diag<-`) or the new
#'   dimensions (`dim<-`, numbers).
#' @return A lazy array.
#' @examples
#' \dontrun{
#' x <- zeros(3, 2); y <- normal(0, 1)
#' x[2, 1] <- y; dim(x) <- c(2, 3); diag(x) <- 1; rep(y, times = 3)
#' }
#' @name subassign
#' @aliases [<-.tb_lazy_array dim<-.tb_lazy_array diag<- rep.tb_lazy_array
#' @export
`[<-.tb_lazy_array` <- function(x, ..., value) {
  check_live(x)
  cl <- as.list(sys.call())[-c(1L, 2L)]
  if (!is.null(names(cl))) cl <- cl[names(cl) != "value"]
  ppl_array_arg(value, "value", "[<-")
  n <- length(x)
  d <- dim(x)
  idx <- array(seq_len(n), d)
  # the positions x[...] selects, by R's own rules for these subscripts
  pos <- if (!length(cl)) seq_len(n) else as.vector(eval(as.call(c(list(as.name("["), idx), cl)),
                                                          parent.frame()))
  if (anyNA(pos)) stop(sprintf("[<-: subscript out of bounds (a lazy array of %d entries)", n),
                       call. = FALSE)
  array_call("subassign", x, array(as.integer(pos) - 1L), value)
}

#' @rdname subassign
#' @export
`dim<-.tb_lazy_array` <- function(x, value) {
  check_live(x)
  if (is.null(value)) value <- length(x) # greta: no dimensions is a column
  if (!is.numeric(value) || anyNA(value) || any(value != round(value))) {
    stop("dim<-: value must be whole numbers (the new dimensions)", call. = FALSE)
  }
  if (length(value) == 1L) value <- c(value, 1L)
  array_call("set_dim", x, array(as.integer(value)))
}

#' @rdname subassign
#' @export
`diag<-` <- function(x, value) {
  if (!is_lazy(x) && !is_lazy(value)) return(base::`diag<-`(x, value))
  if (!is_lazy(x)) x <- as_data(x)
  d <- dim(x)
  if (length(d) != 2L) {
    stop(sprintf("diag<-: x must be a matrix, not of dimension %s", paste(d, collapse = " x ")),
         call. = FALSE)
  }
  m <- min(d)
  if (!(length(value) %in% c(1L, m))) {
    stop(sprintf("diag<-: value must have length 1 or %d (the length of the diagonal), not %d",
                 m, length(value)), call. = FALSE)
  }
  k <- seq_len(m)
  array_call("subassign", x, array((k - 1L) * d[[1L]] + k - 1L), value)
}

#' @rdname subassign
#' @export
rep.tb_lazy_array <- function(x, ...) {
  check_live(x)
  a <- list(...)
  nm <- names(a)
  if (is.null(nm)) nm <- rep("", length(a))
  known <- c("times", "length.out", "each") # base rep()'s positional order
  for (k in seq_along(a)) if (!nzchar(nm[[k]])) nm[[k]] <- setdiff(known, nm)[[1L]]
  names(a) <- nm
  bad <- setdiff(nm, known)
  if (length(bad)) stop(sprintf("rep: unused argument %s", bad[[1L]]), call. = FALSE)
  times <- if (is.null(a$times)) 1L else a$times
  each <- if (is.null(a$each)) 1L else a$each
  len <- a$length.out
  if (!is.null(len) && is.na(len)) len <- NULL
  whole <- function(v, arg) {
    if (!is.numeric(v) || anyNA(v) || any(v < 0) || any(v != round(v))) {
      stop(sprintf("rep: %s must be non-negative whole numbers", arg), call. = FALSE)
    }
    as.integer(v)
  }
  times <- whole(times, "times")
  each <- whole(each, "each")
  if (length(each) != 1L) stop("rep: each must be one number", call. = FALSE)
  if (!is.null(len)) len <- whole(len, "length.out")
  array_call("rep", x, array(times), each, len)
}

#' Permute, bind, sweep and apply over lazy arrays
#'
#' greta's versions of base R's array functions, for lazy arrays: `aperm(a, perm)` permutes
#' the dimensions; `abind(..., along)` binds arrays along a dimension (`along = N + 1`, N the
#' largest number of dimensions, adds a last one, `along = 0` a first one, as the abind
#' package does); `sweep(x, MARGIN, STATS, FUN)` applies `FUN` (`"-"`, `"+"`, `"*"`, `"/"`,
#' `"^"`) to `x` and `STATS` laid along the `MARGIN` dimensions; `apply(X, MARGIN, FUN)` with
#' `FUN` one of `"sum"`, `"mean"`, `"max"`, `"min"`, `"prod"` (one value per entry of the
#' margin, a column), `"cumsum"` or `"cumprod"` (base R's layout); `tapply(X, INDEX, FUN)`
#' reduces the entries of each group of `INDEX` (data) with one of those reductions, a
#' column in the order of `INDEX`'s levels. Given no lazy array they are base R's functions
#' (`abind` on data binds R arrays itself).
#'
#' @param a,x,X A lazy array (or R data).
#' @param perm The new order of the dimensions (default: reversed).
#' @param resize Must be `TRUE` for lazy arrays.
#' @param ... Arrays to bind (`abind`); passed to base R otherwise.
#' @param along The dimension to bind along (0, `N + 1` or a fraction: a new one, as in
#'   the abind package).
#' @param rev.along `along` counted from the end (`along = N + 1 - rev.along`).
#' @param MARGIN Dimensions (numbers) of `x` or `X`.
#' @param STATS The values to sweep out: as many as the `MARGIN` extents hold.
#' @param FUN A function name (a string) or base R's function of that name.
#' @param check.margin As in base R (lazy arrays always check).
#' @param simplify As in base R (must be `TRUE` for lazy arrays).
#' @param INDEX Group labels (data: a vector or factor as long as `X`).
#' @param default As in base R (not used for lazy arrays, which refuse empty groups).
#' @return A lazy array (given one), else what base R returns.
#' @examples
#' \dontrun{
#' x <- as_data(matrix(1:6, 2))
#' aperm(x); abind(x, x, along = 3); sweep(x, 2, colMeans(x)); apply(x, 1, "sum")
#' tapply(as_data(1:6), c(1, 1, 2, 2, 3, 3), "max")
#' }
#' @name aperm.tb_lazy_array
#' @aliases abind sweep apply tapply
#' @export
aperm.tb_lazy_array <- function(a, perm = NULL, resize = TRUE, ...) {
  check_live(a)
  n <- length(dim(a))
  if (is.null(perm)) perm <- rev(seq_len(n))
  if (!isTRUE(resize)) stop("aperm: resize must be TRUE for lazy arrays", call. = FALSE)
  if (!is.numeric(perm) || length(perm) != n || !setequal(perm, seq_len(n))) {
    stop(sprintf("aperm: perm must be a permutation of 1:%d", n), call. = FALSE)
  }
  array_call("aperm", a, array(as.integer(perm) - 1L))
}

#' @rdname aperm.tb_lazy_array
#' @export
abind <- function(..., along = NULL, rev.along = NULL) {
  args <- Filter(Negate(is.null), list(...))
  if (!length(args)) stop("abind: nothing to bind", call. = FALSE)
  for (k in seq_along(args)) ppl_array_arg(args[[k]], sprintf("argument %d", k), "abind")
  dims <- lapply(args, function(a) if (is.null(dim(a))) length(a) else dim(a))
  n <- max(lengths(dims))
  if (!is.null(rev.along)) {
    if (!is.numeric(rev.along) || length(rev.along) != 1L || is.na(rev.along)) {
      stop("abind: rev.along must be one number", call. = FALSE)
    }
    along <- n + 1 - rev.along
  }
  if (is.null(along)) along <- n
  if (!is.numeric(along) || length(along) != 1L || is.na(along) || along < 0 ||
      along > n + 1) {
    stop(sprintf("abind: along must be a number from 0 to %d", n + 1), call. = FALSE)
  }
  # as the abind package: a whole number within 1..n binds along that dimension; 0, n + 1
  # or a fraction makes a new dimension (before dimension ceiling(along))
  new <- along != round(along) || along == 0 || along == n + 1
  at <- if (new) as.integer(ceiling(along)) else as.integer(along)
  if (new && at == 0L) at <- 1L
  if (any(vapply(args, is_lazy, logical(1L)))) {
    return(array_call("abind", unname(args), at - 1L, new))
  }
  abind_data(args, dims, n, at, new)
}

# abind() of R data: each array with the bound dimension moved last, the entries joined,
# moved back.
abind_data <- function(args, dims, n, at, new) {
  dims <- lapply(dims, function(d) {
    d <- c(d, rep(1L, n - length(d)))
    if (new) append(d, 1L, after = at - 1L) else d
  })
  m <- length(dims[[1L]])
  others <- setdiff(seq_len(m), at)
  rest <- unique(lapply(dims, function(d) d[others]))
  if (length(rest) != 1L) {
    stop(sprintf("abind: the arrays must have the same extents except along dimension %d",
                 at), call. = FALSE)
  }
  parts <- lapply(seq_along(args), function(j) {
    as.vector(aperm(array(as.vector(args[[j]]), dims[[j]]), c(others, at)))
  })
  out <- array(unlist(parts), c(rest[[1L]], sum(vapply(dims, `[[`, 1L, at))))
  aperm(out, order(c(others, at)))
}

#' @rdname aperm.tb_lazy_array
#' @export
sweep <- function(x, MARGIN, STATS, FUN = "-", check.margin = TRUE, ...) {
  if (!is_lazy(x) && !is_lazy(STATS)) {
    return(base::sweep(x, MARGIN, STATS, FUN = FUN, check.margin = check.margin, ...))
  }
  if (!is_lazy(x)) x <- as_data(x)
  ppl_array_arg(STATS, "STATS", "sweep")
  fun <- ppl_fun_name(FUN, arith_funs, "sweep")
  array_call("sweep", x, array(as.integer(MARGIN) - 1L), STATS, fun)
}

#' @rdname aperm.tb_lazy_array
#' @export
apply <- function(X, MARGIN, FUN, ..., simplify = TRUE) {
  if (!is_lazy(X)) return(base::apply(X, MARGIN, FUN, ..., simplify = simplify))
  if (!isTRUE(simplify)) stop("apply: simplify must be TRUE for lazy arrays", call. = FALSE)
  if (...length()) stop("apply: FUN takes no further arguments for lazy arrays", call. = FALSE)
  if (!is.numeric(MARGIN)) {
    stop("apply: MARGIN must be dimension numbers for lazy arrays", call. = FALSE)
  }
  fun <- ppl_fun_name(FUN, c("sum", "mean", "max", "min", "prod", "cumsum", "cumprod"),
                      "apply")
  array_call("apply", X, array(as.integer(MARGIN) - 1L), fun)
}

#' @rdname aperm.tb_lazy_array
#' @export
tapply <- function(X, INDEX, FUN = NULL, ..., default = NA, simplify = TRUE) {
  if (!is_lazy(X)) {
    return(base::tapply(X, INDEX, FUN, ..., default = default, simplify = simplify))
  }
  if (is_lazy(INDEX)) stop("tapply: INDEX must be data (group labels)", call. = FALSE)
  if (...length()) stop("tapply: FUN takes no further arguments for lazy arrays", call. = FALSE)
  fun <- ppl_fun_name(FUN, c("sum", "mean", "max", "min", "prod"), "tapply")
  if (length(INDEX) != length(X)) {
    stop(sprintf("tapply: INDEX has %d labels for %d entries of X", length(INDEX), length(X)),
         call. = FALSE)
  }
  if (anyNA(INDEX)) stop("tapply: INDEX contains NA", call. = FALSE)
  groups <- split(seq_len(length(X)) - 1L, INDEX)
  empty <- names(groups)[lengths(groups) == 0L]
  if (length(empty)) {
    stop(sprintf("tapply: no entries have the level %s of INDEX", empty[[1L]]), call. = FALSE)
  }
  array_call("tapply", X, unname(lapply(groups, array)), fun)
}

#' Outer and Kronecker products of lazy arrays
#'
#' `outer(X, Y, FUN)` (and `X %o% Y`) is `FUN(X[i], Y[j])` for every pair of entries, with
#' dimensions `c(dim(X), dim(Y))` (a lazy column vector counts as a vector, so two columns
#' give a matrix); `kronecker(X, Y, FUN)` (and `X %x% Y`) the blocks `FUN(X[i, j], Y)`. `FUN`
#' is `"*"` (the runtime's `outer` and `kron`), `"+"`, `"-"`, `"/"` or `"^"` for lazy arrays.
#' Given no lazy array they are base R's functions.
#'
#' @param X,Y Lazy arrays or R data.
#' @param FUN A function name (a string) or base R's arithmetic function of that name.
#' @param make.dimnames As in base R (not used for lazy arrays).
#' @param ... Passed to base R (none for lazy arrays).
#' @return A lazy array (given one), else what base R returns.
#' @examples
#' \dontrun{
#' x <- normal(0, 1, dim = 3); outer(x, 1:2); x %o% x; kronecker(diag(2), x)
#' }
#' @export
outer <- function(X, Y, FUN = "*", ...) {
  if (!any_lazy(X, Y)) return(base::outer(X, Y, FUN, ...))
  if (...length()) stop("outer: FUN takes no further arguments for lazy arrays", call. = FALSE)
  ppl_array_arg(X, "X", "outer")
  ppl_array_arg(Y, "Y", "outer")
  fun <- ppl_fun_name(FUN, arith_funs, "outer")
  dim_of <- function(a) {
    d <- dim(a)
    if (is.null(d) || is_lazy(a) && length(d) == 2L && d[[2L]] == 1L) length(a) else d
  }
  array_call("outer", X, Y, array(as.integer(c(dim_of(X), dim_of(Y)))), fun)
}

#' @rdname outer
#' @export
`%o%` <- function(X, Y) outer(X, Y)

#' @rdname outer
#' @export
kronecker <- function(X, Y, FUN = "*", make.dimnames = FALSE, ...) {
  if (!any_lazy(X, Y)) {
    return(base::kronecker(X, Y, FUN = FUN, make.dimnames = make.dimnames, ...))
  }
  if (...length()) {
    stop("kronecker: FUN takes no further arguments for lazy arrays", call. = FALSE)
  }
  ppl_array_arg(X, "X", "kronecker")
  ppl_array_arg(Y, "Y", "kronecker")
  array_call("kronecker", X, Y, ppl_fun_name(FUN, arith_funs, "kronecker"))
}

#' @rdname outer
#' @export
`%x%` <- function(X, Y) kronecker(X, Y)
