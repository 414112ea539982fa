# The R API of the tensor runtime. Tensors stay in Python; R holds handles (tb_tensor).

# A tb_tensor: a handle environment (see new_handle_env()) with shape and dtype, made in C.
new_tensor <- function(id, shape, dtype) {
  .Call(tb_c_new_tensor, id, shape, dtype, .tb$session, finalize_tensor)
}

# The finalizer of a tensor: C queues its release in Python through a function pointer
# (tb_c_release_tensor()) instead of a reticulate call per tensor; finalize_handle() where that
# pointer is not set.
finalize_tensor <- function(h) {
  if (isTRUE(.tb$closing)) return(invisible(NULL))
  if (!.Call(tb_c_release_tensor, h)) finalize_handle(h)
  invisible(NULL)
}

# The R function for a function of tensorbridge.bridge.r.api (cached).
api <- function(name) {
  tb_init()
  f <- .tb$api_fns[[name]]
  if (is.null(f)) {
    if (is.null(.tb$api)) .tb$api <- tb_import("tensorbridge.bridge.r.api")
    f <- py_getattr(.tb$api, name)
    assign(name, f, envir = .tb$api_fns)
  }
  f
}

tensor_op <- function(name, ...) api("call_op")(name, ...)

# Call the function `name` of tensorbridge.bridge.r.api with arguments that reticulate maps as
# they are (numbers, strings, NULL; no wire values) through the R host, by the handle id of the
# function (cached). Its tensor result comes as the text "id dtype dims..." (one string converts
# faster than a tagged list) that C makes the tb_tensor of. The R door's per-op cost is mostly
# this path.
api_call <- function(name, args) {
  fid <- .tb$api_ids[[name]]
  if (is.null(fid)) {
    fid <- .subset2(attr(api(name), "tb_handle", exact = TRUE), "id")
    assign(name, fid, envir = .tb$api_ids)
  }
  res <- .tb$pci(.tb$m_call, c(list(fid), args), NULL)
  if (is.list(res)) res <- tb_decode_result(res) # an error is raised, warnings signalled
  if (is.character(res)) .Call(tb_c_tensor_from_text, res, .tb$session, finalize_tensor) else res
}

# A binary op whose operands tb_c_tensor_operands() cleared (tensors as handle ids, an R number
# as it is).
tensor_op_ids <- function(name, args) api_call("call_op_ids", list(name, args[[1L]], args[[2L]]))

# Give C the address of Python's as_tensor callback for this session, then try x again; NULL
# (the general path) when that cannot be done.
as_tensor_fast_init <- function(x) {
  tryCatch(
    .Call(tb_c_set_as_tensor, api("as_tensor_callback")(), .tb$session),
    error = function(e) NULL
  )
  t <- .Call(tb_c_as_tensor, x, .tb$session, finalize_tensor)
  if (isFALSE(t)) NULL else t
}

#' Tensors
#'
#' `as_tensor()` makes a tensor of the tensorbridge runtime from R data (numeric,
#' integer or logical vectors, matrices and arrays; dims and column-major order are
#' kept, and R's memory is shared rather than copied where the dtype allows). R doubles
#' give `float64` tensors whatever their length, integers `int32`, logicals `bool`; `dtype`
#' casts (e.g. `"float32"`; a value that does not fit, such as `3e9` as `"int32"`, is an
#' error). Anything else (lists, strings, factors, `NULL`) is an error naming `x`. Tensors have
#' no NA: data with NA is refused (NaN is fine).
#'
#' Tensors support `dim()`, `length()`, `print()`, `as.array()`, `as.vector()`, the
#' arithmetic, comparison and logic operators (group generic `Ops`), `Math` functions
#' (`exp`, `log`, `sqrt`, `abs`, `tanh`, ...), `Summary` functions (`sum`, `prod`,
#' `max`, `min`), `%*%` (matrix product), `t()` and `[`. Results are the runtime's, so
#' they are identical to the Python API on the same inputs (R numbers are Python floats:
#' "weak" scalars that keep a `float32` tensor `float32`).
#'
#' @param x R data or a tensor.
#' @param dtype `NULL` (keep) or one of `"float32"`, `"float64"`, `"int32"`,
#'   `"int64"`, `"bool"`.
#' @return A `tb_tensor`.
#' @examples
#' \dontrun{
#' x <- as_tensor(matrix(c(1, 2, 3, 4), 2))
#' y <- tanh(x %*% t(x)) + 1
#' dim(y); as.array(y)
#' }
#' @export
as_tensor <- function(x, dtype = NULL) {
  # A plain numeric, integer or logical vector or array of two or more values (or one with
  # attributes) without NA: C checks it and gives the text by which Python views R's memory;
  # Python renames the runtime's `data` as `x` in errors, so this path has no R handler.
  if (is.null(dtype)) { # the common case through a C function pointer: no reticulate call
    t <- .Call(tb_c_as_tensor, x, .tb$session, finalize_tensor)
    if (isFALSE(t)) t <- as_tensor_fast_init(x)
    if (!is.null(t)) return(t)
  }
  view <- .Call(tb_c_view_text, x)
  if (!is.null(view)) {
    return(api_call("as_tensor_r", if (is.null(dtype)) list(view) else list(view, dtype)))
  }
  if (inherits(x, "tb_tensor") && is.null(dtype)) return(x)
  numbers <- (is.numeric(x) || is.logical(x)) && !is.object(x)
  if (!inherits(x, "tb_tensor") && !numbers) {
    stop(structure(
      class = c("tensorbridge_error", "TypeError", "error", "condition"),
      list(message = sprintf(paste0(
        "as_tensor: x must be a numeric, integer or logical vector, matrix or array, not %s"
      ), describe_value(x)), call = NULL, type = "TypeError", classes = "TypeError")
    ))
  }
  withCallingHandlers(
    api("as_tensor")(x, dtype),
    tensorbridge_error = function(e) {
      msg <- conditionMessage(e)
      if (grepl("data: ", msg, fixed = TRUE)) { # the runtime names its argument `data`
        e$message <- sub("data: ", "as_tensor: x: ", msg, fixed = TRUE)
        stop(e)
      }
    }
  )
}

#' @rdname as_tensor
#' @export
is_tensor <- function(x) inherits(x, "tb_tensor")

#' @export
dim.tb_tensor <- function(x) {
  s <- .subset2(x, "shape")
  if (length(s)) s else NULL
}

#' @export
length.tb_tensor <- function(x) as.integer(prod(.subset2(x, "shape")))

#' @export
as.array.tb_tensor <- function(x, ...) {
  check_live(x)
  a <- api("to_array")(x)
  if (is.null(dim(a))) dim(a) <- length(a)
  a
}

#' @export
as.vector.tb_tensor <- function(x, mode = "any") {
  check_live(x)
  v <- api("to_array")(x)
  dim(v) <- NULL
  as.vector(v, mode)
}

#' @export
as.double.tb_tensor <- function(x, ...) as.double(as.vector.tb_tensor(x))

#' @export
as.integer.tb_tensor <- function(x, ...) as.integer(as.vector.tb_tensor(x))

#' @export
as.logical.tb_tensor <- function(x, ...) as.logical(as.vector.tb_tensor(x))

tensor_header <- function(x) {
  s <- .subset2(x, "shape")
  sprintf("<tb_tensor %s [%s]>", .subset2(x, "dtype"), paste(s, collapse = ", "))
}

#' @export
format.tb_tensor <- function(x, ...) tensor_header(x)

#' @export
print.tb_tensor <- function(x, ...) {
  if (!identical(.subset2(x, "session"), .tb$session)) {
    cat("<tb_tensor from a previous R session>\n")
    return(invisible(x))
  }
  cat(tensor_header(x), "\n", sep = "")
  if (length(x) <= 1000L) {
    v <- api("to_array")(x)
    print(v, ...)
  } else {
    cat("  (", length(x), " values; as.array() to see them)\n", sep = "")
  }
  invisible(x)
}

#' @importFrom utils str
#' @export
str.tb_tensor <- function(object, ...) cat(" ", tensor_header(object), "\n", sep = "")

ops_map <- c(
  "+" = "add", "-" = "subtract", "*" = "multiply", "/" = "divide", "^" = "power",
  "%%" = "mod", "%/%" = "floor_divide", "==" = "equal", "!=" = "not_equal",
  "<" = "less", ">" = "greater", "<=" = "less_equal", ">=" = "greater_equal",
  "&" = "logical_and", "|" = "logical_or"
)

#' @export
Ops.tb_tensor <- function(e1, e2) {
  if (missing(e2)) {
    return(switch(.Generic,
      "-" = tensor_op("negative", e1),
      "+" = e1,
      "!" = tensor_op("logical_not", e1),
      stop(sprintf("tensorbridge: unary %s is not defined for tensors", .Generic), call. = FALSE)
    ))
  }
  op <- ops_map[[.Generic]]
  args <- .Call(tb_c_tensor_operands, e1, e2, .tb$session, FALSE)
  if (!is.null(args)) return(tensor_op_ids(op, args))
  ops <- r_operands(e1, e2, .Generic)
  tensor_op(op, ops[[1L]], ops[[2L]])
}

# The dims of an operand as R sees them: a tensor's shape, an R array's dim, NULL for an R
# vector.
operand_dims <- function(x) {
  if (inherits(x, "tb_tensor")) return(.subset2(x, "shape"))
  dim(x)
}

# R's rule for operators on a tensor and R data, where the runtime would broadcast as NumPy
# does: an R vector (no dim) is recycled over the tensor's elements in column-major order
# (with R's warning when its length does not divide the tensor's; an error when it is longer,
# as R has for arrays); a tensor or array with one dimension against one with two or more,
# which R would recycle and NumPy would broadcast along the last dimension, is refused. Other
# operands (equal dims, scalars, a 0-d tensor) go to the runtime as they are.
r_operands <- function(e1, e2, op) {
  d1 <- operand_dims(e1)
  d2 <- operand_dims(e2)
  vector_vs_matrix <- function(a, b) length(a) == 1L && a[[1L]] > 1L && length(b) >= 2L
  if (!is.null(d1) && !is.null(d2) && (vector_vs_matrix(d1, d2) || vector_vs_matrix(d2, d1))) {
    stop(sprintf(paste0(
      "tensorbridge: %s of operands with dims %s and %s: R would recycle the one-dimensional ",
      "operand down the columns, the runtime would broadcast it along the last dimension; ",
      "give both operands the same dims (or use an R vector, which is recycled R's way)"
    ), op, paste(d1, collapse = " x "), paste(d2, collapse = " x ")), call. = FALSE)
  }
  tensor_first <- inherits(e1, "tb_tensor")
  t <- if (tensor_first) e1 else e2
  other <- if (tensor_first) e2 else e1
  if (inherits(other, "tb_tensor") || !is.atomic(other) || !is.null(dim(other)) ||
      length(other) <= 1L) {
    return(list(e1, e2))
  }
  shape <- .subset2(t, "shape")
  if (!length(shape)) return(list(e1, e2)) # a 0-d tensor is a scalar, in R as in NumPy
  size <- prod(shape)
  n <- length(other)
  if (n > size) {
    stop(sprintf(paste0(
      "tensorbridge: %s: the R vector (length %d) is longer than the tensor (dims %s, %s ",
      "values); R does not recycle an array to a longer vector"
    ), op, n, paste(shape, collapse = " x "), format(size)), call. = FALSE)
  }
  if (size %% n != 0) {
    warning("longer object length is not a multiple of shorter object length", call. = FALSE)
  }
  other <- array(rep_len(other, size), dim = shape)
  if (tensor_first) list(e1, other) else list(other, e2)
}

math_map <- c(
  abs = "abs", sign = "sign", sqrt = "sqrt", floor = "floor", ceiling = "ceil",
  exp = "exp", expm1 = "expm1", log = "log", log1p = "log1p", cos = "cos", sin = "sin",
  tan = "tan", tanh = "tanh", lgamma = "lgamma", digamma = "digamma", round = "round",
  acos = "arccos", asin = "arcsin", atan = "arctan", acosh = "arccosh", asinh = "arcsinh",
  atanh = "arctanh", cospi = "cospi", sinpi = "sinpi", tanpi = "tanpi", trigamma = "trigamma"
)

#' @export
Math.tb_tensor <- function(x, ...) {
  g <- .Generic
  if (g == "log" && length(list(...))) {
    base <- list(...)[[1L]]
    return(tensor_op("log", x) / log(base))
  }
  if (g == "round" && length(list(...)) && !identical(list(...)[[1L]], 0)) {
    stop("tensorbridge: round() of a tensor supports digits = 0 only", call. = FALSE)
  }
  if (g == "cumsum") {
    return(tensor_op("cumsum", flatten_column_major(x), axis = 0L))
  }
  if (g %in% c("log2", "log10")) {
    return(tensor_op("log", x) / log(if (g == "log2") 2 else 10))
  }
  if (g == "cosh") return((exp(x) + exp(-x)) / 2)
  if (g == "sinh") return((exp(x) - exp(-x)) / 2)
  fn <- math_map[g]
  if (is.na(fn)) {
    stop(sprintf("tensorbridge: %s() is not available for tensors", g), call. = FALSE)
  }
  tensor_op(fn[[1L]], x)
}

flatten_column_major <- function(x) {
  if (length(.subset2(x, "shape")) <= 1L) return(x)
  tensor_op("reshape", tensor_op("transpose", x), -1L)
}

#' @export
Summary.tb_tensor <- function(..., na.rm = FALSE) {
  args <- list(...)
  if (length(args) != 1L) {
    stop(sprintf("tensorbridge: %s() of several tensors: combine them first", .Generic), call. = FALSE)
  }
  x <- args[[1L]]
  switch(.Generic,
    sum = tensor_op("sum", x),
    prod = tensor_op("prod", x),
    max = tensor_op("max", x),
    min = tensor_op("min", x),
    any = tensor_op("max", tensor_op("cast", x, "bool")),
    all = tensor_op("min", tensor_op("cast", x, "bool")),
    range = list(min = tensor_op("min", x), max = tensor_op("max", x)),
    stop(sprintf("tensorbridge: %s() is not available for tensors", .Generic), call. = FALSE)
  )
}

#' @export
mean.tb_tensor <- function(x, ...) tensor_op("mean", x)

#' Matrix product
#'
#' For tensors, `x %*% y` is the runtime's `matmul` (batched for more than two
#' dimensions); for lazy arrays (see [as_data()]) it is a lazy matrix product. For other
#' values it is base R's `%*%`.
#'
#' @param x,y Tensors or R matrices.
#' @return A tensor, or what base `%*%` returns.
#' @export
`%*%` <- function(x, y) {
  if (inherits(x, "tb_lazy_array") || inherits(y, "tb_lazy_array")) {
    return(lazy_op("matmul", x, y))
  }
  if (inherits(x, "tb_tensor") || inherits(y, "tb_tensor")) {
    args <- .Call(tb_c_tensor_operands, x, y, .tb$session, TRUE)
    if (!is.null(args)) return(tensor_op_ids("matmul", args))
    return(tensor_op("matmul", x, y))
  }
  base::`%*%`(x, y)
}

#' @export
t.tb_tensor <- function(x) tensor_op("transpose", x)

index_positions <- function(i, n) {
  if (is.logical(i)) {
    i <- which(rep_len(i, n))
  } else if (is.character(i)) {
    stop("tensorbridge: tensors have no dimnames; index by position", call. = FALSE)
  }
  i <- as.integer(i)
  if (anyNA(i)) stop("tensorbridge: NA index", call. = FALSE)
  if (length(i) && all(i <= 0L)) {
    i <- setdiff(seq_len(n), -i)
  } else if (any(i < 0L)) {
    stop("tensorbridge: cannot mix positive and negative subscripts", call. = FALSE)
  }
  i <- i[i != 0L]
  if (any(i > n)) stop(sprintf("tensorbridge: subscript out of bounds (extent %d)", n), call. = FALSE)
  i - 1L
}

# The subscripts of a `[` call on a tensor or lazy array, evaluated in the caller's frame:
# list(values, empty) with NULL for an empty subscript (x[, 1]); NULL when there are none
# (x[]). `drop = ` is not a subscript.
subscripts <- function(call, env) {
  cl <- as.list(call)[-c(1L, 2L)]
  if (!is.null(names(cl))) cl <- cl[names(cl) != "drop"]
  if (!length(cl)) return(NULL)
  empty <- vapply(cl, function(a) identical(a, quote(expr = )), logical(1))
  values <- lapply(seq_along(cl), function(k) if (empty[[k]]) NULL else eval(cl[[k]], env))
  list(values = values, empty = empty)
}

#' @export
`[.tb_tensor` <- function(x, ..., drop = TRUE) {
  check_live(x)
  shape <- .subset2(x, "shape")
  sub <- subscripts(sys.call(), parent.frame())
  if (is.null(sub)) return(x)
  values <- sub$values
  empty <- sub$empty
  if (length(values) == 1L) {
    if (empty[[1L]]) return(x)
    pos <- index_positions(values[[1L]], prod(shape))
    linear <- length(shape) != 1L
    return(api("index")(x, list(array(pos)), drop, linear))
  }
  if (length(values) != length(shape)) {
    stop(sprintf(
      "tensorbridge: %d subscripts for a tensor with %d dimensions", length(values), length(shape)
    ), call. = FALSE)
  }
  specs <- lapply(seq_along(values), function(k) {
    if (empty[[k]]) NULL else array(index_positions(values[[k]], shape[[k]]))
  })
  api("index")(x, specs, isTRUE(drop), FALSE)
}

#' Derivatives of R functions of tensors
#'
#' `grad(f)` is a function returning the gradient of the scalar-valued `f` with
#' respect to its argument(s) `argnums` (1-based); `value_and_grad(f)` returns
#' `list(value, grad)`; `jacobian(f)` the Jacobian of a tensor-valued `f`;
#' `hessian(f)` the Hessian. `f` is an ordinary R function: inside it, its arguments
#' are tensors (the runtime's tracers) and everything it does with them (operators,
#' `sum()`, `exp()`, `%*%`, `[`...) is recorded by the runtime, so the results are
#' those of the Python API (`tensorbridge.grad` etc.) on the same inputs.
#'
#' @param f An R function of tensors.
#' @param argnums Which argument(s) to differentiate with respect to (1-based).
#' @return A function taking the arguments of `f` (R arrays or tensors) and returning
#'   tensors.
#' @examples
#' \dontrun{
#' f <- function(w) sum(tanh(w))
#' grad(f)(c(0.1, 0.2))
#' }
#' @export
grad <- function(f, argnums = 1L) {
  force(f)
  force(argnums)
  function(...) api("grad")(f, as.integer(argnums) - 1L, ...)
}

#' @rdname grad
#' @export
value_and_grad <- function(f, argnums = 1L) {
  force(f)
  force(argnums)
  function(...) api("value_and_grad")(f, as.integer(argnums) - 1L, ...)
}

#' @rdname grad
#' @export
jacobian <- function(f, argnums = 1L) {
  force(f)
  force(argnums)
  function(...) api("jacobian")(f, as.integer(argnums) - 1L, ...)
}

#' @rdname grad
#' @export
hessian <- function(f, argnums = 1L) {
  force(f)
  force(argnums)
  function(...) api("hessian")(f, as.integer(argnums) - 1L, ...)
}
