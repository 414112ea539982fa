# Shared helpers of the neural network API (layers, models, training): the Python module,
# argument checks with messages that name the argument, and the S3 classes put on Python
# layers, models and other objects as they reach R.

# The Python module tensorbridge.runtime.layers (cached).
nn <- function() {
  tb_init()
  m <- .tb$nn_module
  if (is.null(m)) {
    m <- tb_import("tensorbridge.runtime.layers")
    .tb$nn_module <- m
  }
  m
}

nn_fail <- function(msg) stop(msg, call. = FALSE)

describe_value <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (is.factor(x)) return(sprintf("a factor of length %d", length(x)))
  if (is.data.frame(x)) return(sprintf("a data frame with %d columns", ncol(x)))
  if (!is.atomic(x)) return(paste0("a ", class(x)[[1L]]))
  if (length(x) != 1L) {
    type <- typeof(x)
    return(sprintf("%s %s vector of length %d", if (type == "integer") "an" else "a", type,
                   length(x)))
  }
  if (is.character(x)) return(sprintf("\"%s\"", x))
  format(x)
}

# A whole number (given as integer or double) as an R integer, or an error naming `name`.
check_int <- function(x, name, min = 1L, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(NULL)
  ok <- is.numeric(x) && length(x) == 1L && !is.na(x) &&
    is.finite(x) && x == round(x) && abs(x) <= .Machine$integer.max && x >= min
  if (!isTRUE(ok)) {
    what <- if (min == 1L) {
      "a positive whole number"
    } else if (min == 0L) {
      "a non-negative whole number"
    } else if (min == -Inf) {
      "a whole number"
    } else {
      sprintf("a whole number >= %d", min)
    }
    nn_fail(sprintf("%s must be %s, not %s", name, what, describe_value(x)))
  }
  as.integer(x)
}

# A number (one finite double), optionally within [lower, upper] / (lower, upper).
check_number <- function(x, name, lower = -Inf, upper = Inf, lower_open = FALSE,
                         upper_open = FALSE, null_ok = FALSE) {
  if (is.null(x) && null_ok) return(NULL)
  ok <- is.numeric(x) && length(x) == 1L && !is.na(x) && is.finite(x) &&
    (if (lower_open) x > lower else x >= lower) && (if (upper_open) x < upper else x <= upper)
  if (!isTRUE(ok)) {
    range <- if (is.finite(lower) && is.finite(upper)) {
      sprintf(" in %s%s, %s%s", if (lower_open) "(" else "[", format(lower), format(upper),
              if (upper_open) ")" else "]")
    } else if (is.finite(lower)) {
      sprintf(" %s %s", if (lower_open) ">" else ">=", format(lower))
    } else if (is.finite(upper)) {
      sprintf(" %s %s", if (upper_open) "<" else "<=", format(upper))
    } else {
      ""
    }
    nn_fail(sprintf("%s must be a number%s, not %s", name, range, describe_value(x)))
  }
  as.double(x)
}

check_flag <- function(x, name) {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    nn_fail(sprintf("%s must be TRUE or FALSE, not %s", name, describe_value(x)))
  }
  x
}

check_string <- function(x, name, null_ok = FALSE, choices = NULL) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.character(x) || length(x) != 1L || is.na(x) || !nzchar(x)) {
    nn_fail(sprintf("%s must be a single string, not %s", name, describe_value(x)))
  }
  if (!is.null(choices) && !x %in% choices) {
    nn_fail(sprintf("%s must be one of %s, not \"%s\"", name,
                    paste0("\"", choices, "\"", collapse = ", "), x))
  }
  x
}

# A shape without the batch dimension: whole numbers (NA for an unknown extent), as a list
# of Python ints/None.
check_shape <- function(x, name, null_ok = TRUE) {
  if (is.null(x) && null_ok) return(NULL)
  if (!is.numeric(x) && !(is.logical(x) && all(is.na(x))) || length(x) < 1L) {
    nn_fail(sprintf("%s must be a vector of positive whole numbers (NA: unknown), not %s",
                    name, describe_value(x)))
  }
  lapply(seq_along(x), function(i) {
    if (is.na(x[[i]])) return(NULL)
    check_int(x[[i]], sprintf("%s[%d]", name, i))
  })
}

# Python keyword arguments: drop NULL entries (Python defaults apply).
compact <- function(args) args[!vapply(args, is.null, logical(1))]

# Put an S3 class in front of the classes of a Python object that reached R (a handle
# environment or, for callable objects such as layers and models, an R function).
with_class <- function(x, cls) {
  class(x) <- unique(c(cls, "tb_nn", class(x)))
  x
}

# The Python class name of a layer or model (cached on its handle).
py_type_name <- function(x) {
  h <- handle_of(x)
  name <- h[[".class_name"]]
  if (is.null(name)) {
    check_live(h)
    name <- py_getattr(py_getattr(x, "__class__"), "__name__")
    assign(".class_name", name, envir = h)
  }
  name
}

is_nn_model <- function(x) inherits(x, "tb_model")
is_nn_layer <- function(x) inherits(x, "tb_layer")
is_symbolic <- function(x) inherits(x, "tb.SymbolicTensor")

# The R object for a Python model (Sequential or functional Model).
as_nn_model <- function(x) with_class(x, "tb_model")

as_nn_layer <- function(x) with_class(x, "tb_layer")

# Python objects that are not models come back unclassed; tell which R class a layer or model
# needs to be.
check_model <- function(x, fn) {
  if (!is_nn_model(x)) {
    nn_fail(sprintf("%s(): expected a model (from model_sequential(), model_functional() or load_model_tb()), not %s",
                    fn, describe_value(x)))
  }
  check_live(handle_of(x))
  invisible(x)
}

# Data for fit/evaluate/predict: R matrices and arrays cross as they are (rows are samples;
# NumPy sees R's column-major memory with the same logical indices, without a copy); a plain
# vector is one feature per sample; a data frame becomes a matrix. Lists are taken element by
# element (several inputs or outputs). Targets (`column = FALSE`) may stay vectors.
prepare_data <- function(x, name, column = TRUE) {
  if (is.null(x)) return(NULL)
  if (inherits(x, "tb_tensor")) return(x)
  if (is.factor(x)) {
    nn_fail(sprintf("%s is a factor; give class ids from 0 (as.integer(%s) - 1L) or numbers",
                    name, name))
  }
  if (is.data.frame(x)) {
    bad <- names(x)[!vapply(x, function(col) is.numeric(col) || is.logical(col), logical(1))]
    if (length(bad)) {
      nn_fail(sprintf(
        "%s is a data frame with non-numeric columns (%s); give only the numeric columns, e.g. as.matrix(%s[, c(%s)])",
        name, paste(bad, collapse = ", "), name,
        paste0("\"", setdiff(names(x), bad), "\"", collapse = ", ")))
    }
    x <- as.matrix(x)
  }
  if (is.list(x) && !is.object(x)) {
    out <- lapply(seq_along(x), function(i) {
      label <- if (is.null(names(x))) i else sprintf("\"%s\"", names(x)[[i]])
      prepare_data(x[[i]], sprintf("%s[[%s]]", name, label), column)
    })
    names(out) <- names(x)
    return(out)
  }
  if (!is.numeric(x) && !is.logical(x)) {
    nn_fail(sprintf("%s must be a numeric matrix or array (rows are samples), not %s",
                    name, describe_value(x)))
  }
  if (anyNA(x)) {
    nn_fail(sprintf("%s holds NA; models cannot use missing values (remove or impute them first)",
                    name))
  }
  if (column && is.null(dim(x))) dim(x) <- c(length(x), 1L)
  x
}

#' @export
print.tb_nn <- function(x, ...) {
  cat(py_repr(handle_of(x)), "\n", sep = "")
  invisible(x)
}

#' @export
format.tb_nn <- function(x, ...) py_repr(handle_of(x))
