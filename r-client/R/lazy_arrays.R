# Lazy arrays (greta arrays): R handles of the runtime's lazy arrays, with greta's operators.
#
# Shapes follow greta: every lazy array has at least two dimensions in R (a scalar is 1 x 1, a
# vector of n is n x 1), and R vectors given where an array is expected are column vectors. The
# Python side (bridge/r/ppl.py) applies the same rule, so dim() needs no round trip.

# The R function for a function of tensorbridge.bridge.r.ppl (cached).
ppl <- function(name) {
  tb_init()
  if (is.null(.tb$ppl_fns)) .tb$ppl_fns <- new.env(parent = emptyenv())
  f <- .tb$ppl_fns[[name]]
  if (is.null(f)) {
    if (is.null(.tb$ppl)) .tb$ppl <- tb_import("tensorbridge.bridge.r.ppl")
    f <- py_getattr(.tb$ppl, name)
    assign(name, f, envir = .tb$ppl_fns)
  }
  f
}

# A lazy array from what the Python side returns: list(ref, shape, kind).
new_lazy <- function(res) {
  h <- res$ref
  assign("shape", as.integer(unlist(res$shape)), envir = h)
  assign("kind", res$kind, envir = h)
  class(h) <- c("tb_lazy_array", "tb_object")
  h
}

lazy_op <- function(name, ...) new_lazy(ppl("op")(name, ...))

# Evaluate `expr`; errors from the Python side that show Python idioms are re-signalled with
# the R ones (the condition keeps its classes).
ppl_r_idiom <- function(expr) {
  withCallingHandlers(expr, tensorbridge_error = function(e) {
    msg <- conditionMessage(e)
    r_msg <- gsub("distribution\\(([a-z_]+), ([a-z_]+)\\(([^()]*)\\)\\)",
                  "distribution(\\1) <- \\2(\\3)", msg)
    r_msg <- gsub("tb\\.([a-z_]+)\\(", "\\1(", r_msg)
    r_msg <- gsub("(\\w+) = ([a-z_]+\\()", "\\1 <- \\2", r_msg)
    if (!identical(r_msg, msg)) {
      e$message <- r_msg
      stop(e)
    }
  })
}

# greta's dimensions for a Python shape: at least two.
ppl_greta_dim <- function(shape) {
  switch(as.character(length(shape)),
    "0" = c(1L, 1L),
    "1" = c(shape, 1L),
    shape
  )
}

is_lazy <- function(x) inherits(x, "tb_lazy_array")

# What may be given where an array is expected: a lazy array, a tensor or numeric R data.
ppl_array_arg <- function(x, arg, fn) {
  if (is_lazy(x) || inherits(x, "tb_tensor")) return(invisible(x))
  if (!(is.numeric(x) || is.logical(x)) || is.object(x) && !is.array(x)) {
    stop(sprintf(
      "%s: %s must be numeric (a number, vector, matrix or array) or a lazy array, not %s",
      fn, arg, ppl_describe(x)
    ), call. = FALSE)
  }
  if (!length(x)) stop(sprintf("%s: %s is empty", fn, arg), call. = FALSE)
  if (anyNA(x) && !all(is.nan(x[is.na(x)]))) {
    stop(sprintf("%s: %s contains NA; lazy arrays have no missing values", fn, arg),
         call. = FALSE)
  }
  invisible(x)
}

ppl_describe <- function(x) {
  if (is.null(x)) return("NULL")
  cls <- class(x)[[1L]]
  if (is.atomic(x)) sprintf("a %s vector of length %d", typeof(x), length(x)) else paste("a", cls)
}

#' Lazy arrays: data and variables
#'
#' Lazy arrays (greta's "greta arrays") are the arrays of a model: `as_data()` wraps known
#' values, `variable()` makes an unknown array with a flat prior on `(lower, upper)`, and the
#' distributions ([normal()] and the others) make variables with a prior. Everything computed
#' from them with the arithmetic and comparison operators, `Math` functions (`exp`, `log`,
#' `sqrt`, `abs`, ...), `sum`, `prod`, `max`, `min`, `mean`, `%*%`, `t()`, `[`, [ilogit()] and
#' [log1pe()] is again a lazy array: an operation recorded by the runtime, with its shape
#' checked where it is made (shape errors name both shapes).
#'
#' As in greta, lazy arrays have at least two dimensions in R: a scalar is 1 x 1 and an R vector
#' is a column (`dim(normal(0, 1, dim = 8))` is `c(8, 1)`). `print()` shows the node kind and
#' the values: numbers when they are known (data, and operations on data only), `?` where they
#' depend on variables.
#'
#' The arguments are checked by the runtime's front-door spec (the same checks, with the same
#' words, in every door): a wrong one is named (`variable: lower must be less than upper`).
#'
#' @param x Numeric data (a number, vector, matrix or array, or a data frame of numeric
#'   columns) or a lazy array of data.
#' @param lower,upper Bounds of the variable's support: numbers (`-Inf`/`Inf` for none), or
#'   vectors or arrays that broadcast against `dim`, each element with its own bounds (a vector
#'   of `prod(dim)` values fills `dim` in R's column-major order).
#' @param dim Dimensions: `NULL` (a scalar), a number `n` (an n x 1 column) or a vector.
#' @return A lazy array (class `tb_lazy_array`).
#' @examples
#' \dontrun{
#' y <- as_data(c(1.2, 0.4, 2.2))
#' y                                   # numbers
#' sigma <- variable(lower = 0)
#' z <- y / sigma                      # an operation: prints ?
#' dim(z)                              # 3 1
#' }
#' @export
as_data <- function(x) {
  if (is_lazy(x)) {
    if (!identical(.subset2(x, "kind"), "data")) {
      stop(sprintf("as_data: x is already a %s array (only data can be wrapped again)",
                   .subset2(x, "kind")), call. = FALSE)
    }
    return(x)
  }
  if (is.data.frame(x)) x <- ppl_frame_matrix(x)
  if (is.integer(x) || is.logical(x)) storage.mode(x) <- "double"
  # the runtime's spec checks x (what R sends: numbers, or what it refuses by name)
  new_lazy(ppl("as_data")(x))
}

# A data frame's numeric columns as a double matrix; an error names the other columns.
ppl_frame_matrix <- function(x) {
  bad <- names(x)[!vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1L))]
  if (length(bad)) {
    stop(sprintf(paste("as_data: x is a data frame with non-numeric columns: %s",
                       "(only numeric columns can be data)"),
                 paste(bad, collapse = ", ")), call. = FALSE)
  }
  m <- matrix(as.double(unlist(x, use.names = FALSE)), nrow = nrow(x), ncol = ncol(x))
  dimnames(m) <- NULL
  m
}

#' @rdname as_data
#' @export
variable <- function(lower = -Inf, upper = Inf, dim = NULL) {
  # the runtime's spec checks every argument (naming it), as in the other doors
  new_lazy(ppl("variable")(lower, upper, dim))
}

# `dim` as greta takes it: NULL, n (a column) or a vector of positive whole numbers.
ppl_dim <- function(dim, fn) {
  if (is.null(dim)) return(NULL)
  if (!is.numeric(dim) || !length(dim) || anyNA(dim) || any(dim < 1) ||
      any(dim != round(dim))) {
    stop(sprintf("%s: dim must be NULL or positive whole numbers, not %s", fn,
                 if (is.numeric(dim)) paste(format(dim), collapse = ", ") else ppl_describe(dim)),
         call. = FALSE)
  }
  dim <- as.integer(dim)
  if (length(dim) == 1L) dim <- c(dim, 1L)
  as.list(dim)
}

#' @export
dim.tb_lazy_array <- function(x) ppl_greta_dim(.subset2(x, "shape"))

#' @export
length.tb_lazy_array <- function(x) as.integer(prod(.subset2(x, "shape")))

lazy_header <- function(inf) {
  kind <- inf$kind
  what <- if (!is.null(inf$distribution)) {
    if (identical(kind, "variable")) {
      sprintf("variable following %s %s distribution",
              if (grepl("^[aeiou]", inf$distribution)) "an" else "a", inf$distribution)
    } else {
      sprintf("%s with a %s distribution", kind, inf$distribution)
    }
  } else if (identical(kind, "variable") && !identical(inf$support, "real")) {
    sprintf("variable, support %s", inf$support)
  } else {
    kind
  }
  sprintf("lazy array (%s)", what)
}

#' @export
format.tb_lazy_array <- function(x, ...) {
  if (!identical(.subset2(x, "session"), .tb$session)) {
    return("<lazy array from a previous R session>")
  }
  check_live(x)
  lazy_header(ppl("info")(x))
}

#' @export
print.tb_lazy_array <- function(x, ...) {
  if (!identical(.subset2(x, "session"), .tb$session)) {
    cat("<lazy array from a previous R session>\n")
    return(invisible(x))
  }
  check_live(x)
  inf <- ppl("info")(x)
  cat(lazy_header(inf), "\n\n", sep = "")
  d <- dim(x)
  if (prod(d) > 1000) {
    cat("  (", prod(d), " values, ", paste(d, collapse = " x "), ")\n", sep = "")
    return(invisible(x))
  }
  if (isTRUE(inf$known)) {
    v <- inf$values
    dim(v) <- d
    print(v, ...)
  } else {
    print(noquote(array("?", d)), right = FALSE, ...)
  }
  invisible(x)
}

#' @export
str.tb_lazy_array <- function(object, ...) {
  cat(sprintf(" lazy array (%s) [%s]\n", .subset2(object, "kind"),
              paste(dim(object), collapse = " x ")))
}

#' @export
as.character.tb_lazy_array <- function(x, ...) format.tb_lazy_array(x)

#' @export
as.array.tb_lazy_array <- function(x, ...) {
  inf <- ppl("info")(x)
  if (!isTRUE(inf$known)) {
    stop(paste0(
      "this ", inf$kind, " array has no values yet (it depends on variables); use ",
      "calculate(x, values = ...) or fit a model with mcmc() or opt()"
    ), call. = FALSE)
  }
  v <- inf$values
  dim(v) <- dim(x)
  v
}

#' @export
as.matrix.tb_lazy_array <- function(x, ...) as.array.tb_lazy_array(x)

#' @export
Ops.tb_lazy_array <- function(e1, e2) {
  if (missing(e2)) {
    return(switch(.Generic,
      "-" = lazy_op("negative", e1),
      "+" = e1,
      "!" = lazy_op("logical_not", e1),
      stop(sprintf("unary %s is not defined for lazy arrays", .Generic), call. = FALSE)
    ))
  }
  for (a in list(e1, e2)) ppl_array_arg(a, "each operand", .Generic)
  lazy_op(ops_map[[.Generic]], e1, e2)
}

#' @export
Math.tb_lazy_array <- function(x, ...) {
  g <- .Generic
  extra <- list(...)
  if (g == "log" && length(extra)) return(lazy_op("log", x) / log(extra[[1L]]))
  if (g %in% c("log2", "log10")) return(lazy_op("log", x) / log(if (g == "log2") 2 else 10))
  if (g == "cosh") return((exp(x) + exp(-x)) / 2)
  if (g == "sinh") return((exp(x) - exp(-x)) / 2)
  if (g == "round" && length(extra) && !identical(extra[[1L]], 0)) {
    stop("round() of a lazy array supports digits = 0 only", call. = FALSE)
  }
  if (g %in% c("cumsum", "cumprod")) return(array_call("cumulate", x, g)) # column-major
  fn <- math_map[g]
  if (is.na(fn)) stop(sprintf("%s() is not available for lazy arrays", g), call. = FALSE)
  lazy_op(fn[[1L]], x)
}

#' @export
Summary.tb_lazy_array <- function(..., na.rm = FALSE) {
  args <- list(...)
  one <- function(x) {
    switch(.Generic,
      sum = lazy_op("sum", x),
      prod = lazy_op("prod", x),
      max = lazy_op("max", x),
      min = lazy_op("min", x),
      stop(sprintf("%s() is not available for lazy arrays", .Generic), call. = FALSE)
    )
  }
  parts <- lapply(args, one)
  if (length(parts) == 1L) return(parts[[1L]])
  switch(.Generic,
    sum = Reduce(`+`, parts),
    prod = Reduce(`*`, parts),
    max = Reduce(function(a, b) lazy_op("maximum", a, b), parts),
    min = Reduce(function(a, b) lazy_op("minimum", a, b), parts)
  )
}

#' @export
mean.tb_lazy_array <- function(x, ...) lazy_op("mean", x)

#' @export
t.tb_lazy_array <- function(x) {
  if (length(.subset2(x, "shape")) > 2L) {
    stop("t(): a lazy array with more than two dimensions", call. = FALSE)
  }
  if (length(.subset2(x, "shape")) == 1L) return(lazy_op("reshape", x, list(1L, -1L)))
  lazy_op("transpose", x)
}

#' @export
`[.tb_lazy_array` <- function(x, ..., drop = FALSE) {
  check_live(x)
  d <- dim(x)
  sub <- subscripts(sys.call(), parent.frame())
  if (is.null(sub)) return(x)
  values <- sub$values
  empty <- sub$empty
  if (length(values) == 1L) {
    if (empty[[1L]]) return(x)
    pos <- index_positions(values[[1L]], prod(d))
    if (!length(pos)) stop("[: the subscript selects no elements", call. = FALSE)
    return(new_lazy(ppl("subset")(x, list(array(pos)), TRUE)))
  }
  if (length(values) != length(d)) {
    stop(sprintf("[: %d subscripts for a lazy array with %d dimensions", length(values),
                 length(d)), call. = FALSE)
  }
  specs <- lapply(seq_along(values), function(k) {
    if (empty[[k]]) return(NULL)
    pos <- index_positions(values[[k]], d[[k]])
    if (!length(pos)) stop("[: a subscript selects no elements", call. = FALSE)
    array(pos)
  })
  new_lazy(ppl("subset")(x, specs, FALSE))
}

#' Functions of lazy arrays
#'
#' greta's link functions: `ilogit(x)` is the inverse logit `1 / (1 + exp(-x))` and
#' `log1pe(x)` is `log(1 + exp(x))` (softplus), computed stably; `iprobit(x)` is the normal CDF
#' `pnorm(x)`, `icloglog(x)` is `1 - exp(-exp(x))`, `icauchit(x)` the Cauchy CDF
#' `pcauchy(x)`, and `imultilogit(x)` turns an n x (K - 1) matrix of log-odds against the last
#' category into n x K probabilities (each row's softmax with a 0 appended). They work on lazy
#' arrays and (as plain R) on numbers.
#'
#' @param x A lazy array or numbers.
#' @return A lazy array (or numbers).
#' @export
ilogit <- function(x) {
  if (is_lazy(x)) return(lazy_op("sigmoid", x))
  ppl_check_numeric_arg(x, "ilogit")
  stats::plogis(x)
}

# ilogit()/log1pe() of something that is neither a lazy array nor numeric.
ppl_check_numeric_arg <- function(x, fn) {
  if (!is.numeric(x) && !is.logical(x)) {
    stop(sprintf("%s: x must be numeric or a lazy array, not %s", fn, ppl_describe(x)),
         call. = FALSE)
  }
}

#' @rdname ilogit
#' @export
log1pe <- function(x) {
  if (is_lazy(x)) return(lazy_op("softplus", x))
  ppl_check_numeric_arg(x, "log1pe")
  ifelse(x > 0, x + log1p(exp(-x)), log1p(exp(x)))
}

#' @rdname ilogit
#' @export
iprobit <- function(x) {
  if (is_lazy(x)) return(lazy_op("iprobit", x))
  ppl_check_numeric_arg(x, "iprobit")
  stats::pnorm(x)
}

#' @rdname ilogit
#' @export
icloglog <- function(x) {
  if (is_lazy(x)) return(lazy_op("icloglog", x))
  ppl_check_numeric_arg(x, "icloglog")
  -expm1(-exp(x))
}

#' @rdname ilogit
#' @export
icauchit <- function(x) {
  if (is_lazy(x)) return(lazy_op("icauchit", x))
  ppl_check_numeric_arg(x, "icauchit")
  stats::pcauchy(x)
}

#' @rdname ilogit
#' @export
imultilogit <- function(x) {
  if (is_lazy(x)) return(lazy_op("imultilogit", x))
  ppl_check_numeric_arg(x, "imultilogit")
  if (!is.matrix(x)) {
    stop("imultilogit: x must be a matrix (n x (K - 1)) or a lazy array", call. = FALSE)
  }
  e <- cbind(x, 0)
  e <- exp(e - apply(e, 1, max)) # each row shifted by its largest entry: no overflow
  e / rowSums(e)
}
