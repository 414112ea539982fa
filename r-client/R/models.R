# Models: sequential stacks and functional graphs of layers, their display and weights.

#' Sequential models
#'
#' A linear stack of layers: add layers with the `layer_*()` functions (`|>` chains them).
#' The model is built as soon as the shape of one sample is known: from `input_shape` here,
#' from the first layer's `input_shape`, or from the first data given to [fit()] or
#' [predict()].
#'
#' The model is the runtime's `Sequential` (Python), held by reference: adding layers,
#' compiling and fitting change it in place (the `|>` chains simply return it).
#'
#' @param input_shape `NULL`, or the shape of one sample without the samples dimension
#'   (`20` for rows of 20 features, `c(28, 28)` for 28 x 28 images). It is given to the
#'   first layer added, whose dtype then is the input's (integer ids for an embedding).
#' @param layers A list of layers (`layer_*()` without `object`) to add at once.
#' @param name `NULL` or the model's name.
#' @param input_dtype `NULL`, or the dtype of the input (`"float32"`, `"float64"`,
#'   `"int32"`): then the input is created at once rather than from the first layer.
#' @return A model (class `tb_model`).
#' @seealso [layers], [compile()], [fit()], [model_functional()].
#' @examples
#' \dontrun{
#' model <- model_sequential(input_shape = 20) |>
#'   layer_dense(32, activation = "relu") |>
#'   layer_dense(1)
#' summary(model)
#' }
#' @export
model_sequential <- function(input_shape = NULL, layers = NULL, name = NULL,
                             input_dtype = NULL) {
  shape <- check_shape(input_shape, "input_shape")
  name <- check_string(name, "name", null_ok = TRUE)
  input_dtype <- check_string(input_dtype, "input_dtype", null_ok = TRUE,
                              choices = c("float32", "float64", "int32", "int64"))
  if (!is.null(layers) && (!is.list(layers) || is.object(layers) ||
                           !all(vapply(layers, is_nn_layer, logical(1))))) {
    nn_fail(sprintf("layers must be a list of layers (layer_*() without a model), not %s",
                    describe_value(layers)))
  }
  model <- as_nn_model(do.call(nn()$Sequential, compact(list(name = name))))
  if (!is.null(shape)) {
    if (is.null(input_dtype)) {
      assign(".pending_input_shape", shape, envir = handle_of(model))
    } else {
      model$add(nn()$input(shape = shape, dtype = input_dtype))
    }
  }
  for (layer in layers) {
    h <- handle_of(model)
    pending <- h[[".pending_input_shape"]]
    if (!is.null(pending)) {
      assign(".pending_input_shape", NULL, envir = h)
      # the shape reaches the stack through an input placed first, of the first layer's dtype
      model$add(nn()$input(shape = pending, dtype = input_dtype_for(layer)))
    }
    model$add(layer)
  }
  model
}

# The input dtype a first layer wants: integer ids for an embedding, else its own dtype.
input_dtype_for <- function(layer) {
  if (identical(py_type_name(layer), "Embedding")) return("int32")
  dt <- layer$dtype
  if (is.null(dt)) "float32" else dt$name
}

#' Functional models
#'
#' A model from symbolic inputs ([layer_input()]) to outputs (layers called on them), for
#' graphs that are not a plain stack: several inputs or outputs, shared layers, merges
#' ([merge_layers]). `tb_model()` is the same function.
#'
#' @param inputs A symbolic tensor from [layer_input()], or a list of them.
#' @param outputs A symbolic tensor computed from the inputs, or a list of them.
#' @param name `NULL` or the model's name.
#' @return A model (class `tb_model`).
#' @examples
#' \dontrun{
#' inp <- layer_input(shape = 20)
#' out <- inp |> layer_dense(8, activation = "tanh") |> layer_dense(1)
#' model <- model_functional(inputs = inp, outputs = out)
#' }
#' @export
model_functional <- function(inputs, outputs, name = NULL) {
  check_symbolic_arg(inputs, "inputs")
  check_symbolic_arg(outputs, "outputs")
  as_nn_model(do.call(nn()$Model, compact(list(
    inputs = if (is.list(inputs)) unname(inputs) else inputs,
    outputs = if (is.list(outputs)) unname(outputs) else outputs,
    name = check_string(name, "name", null_ok = TRUE)
  ))))
}

#' @rdname model_functional
#' @export
tb_model <- model_functional

check_symbolic_arg <- function(x, name) {
  ok <- is_symbolic(x) || is.list(x) && !is.object(x) && length(x) &&
    all(vapply(x, is_symbolic, logical(1)))
  if (!ok) {
    nn_fail(sprintf("%s must be a symbolic tensor (layer_input() or a layer's output) or a list of them, not %s",
                    name, describe_value(x)))
  }
}

#' Model inputs (functional API)
#'
#' A symbolic tensor standing for the model's input: one sample has shape `shape`; the
#' number of samples stays open. Call layers on it, then make a model with
#' [model_functional()].
#'
#' @param shape The shape of one sample (without the samples dimension), e.g. `20`;
#'   `NA` for an extent that is not fixed.
#' @param dtype The input's dtype: `"float32"` (the default), `"float64"`, `"int32"` or
#'   `"int64"` (ids for an embedding).
#' @param name `NULL` or the input's name (the name of its data in [fit()] when data are
#'   given as a named list).
#' @return A symbolic tensor (class `tb.SymbolicTensor`).
#' @export
layer_input <- function(shape, dtype = "float32", name = NULL) {
  do.call(nn()$input, compact(list(
    shape = check_shape(shape, "shape", null_ok = FALSE),
    dtype = check_string(dtype, "dtype", choices = c("float32", "float64", "int32", "int64")),
    name = check_string(name, "name", null_ok = TRUE)
  )))
}

#' @export
format.tb_model <- function(x, ...) {
  check_live(handle_of(x))
  built <- tryCatch(length(x$inputs) > 0L, error = function(e) FALSE)
  if (!built) {
    return(sprintf(
      "Model: \"%s\" (%s; not built yet: give an input shape, or call fit() or predict() on data)",
      x$name, py_type_name(x)
    ))
  }
  x$summary_text()
}

#' @export
print.tb_model <- function(x, ...) {
  cat(format(x), "\n", sep = "")
  invisible(x)
}

#' Summary of a model
#'
#' A table of the model's layers with their output shapes (`None` is the samples
#' dimension) and parameter counts, as the runtime prints it in every language.
#'
#' @param object A model.
#' @param ... Unused.
#' @return An object of class `tb_model_summary` (the text), printed by `print()`.
#' @export
summary.tb_model <- function(object, ...) {
  structure(format(object), class = "tb_model_summary")
}

#' @export
print.tb_model_summary <- function(x, ...) {
  cat(unclass(x), "\n", sep = "")
  invisible(x)
}

#' A layer of a model
#'
#' @param object A model.
#' @param name The layer's name, or `NULL`.
#' @param index The layer's position (1-based, in `object$layers` order), or `NULL`.
#' @return The layer (class `tb_layer`).
#' @export
get_layer <- function(object, name = NULL, index = NULL) {
  check_model(object, "get_layer")
  if (is.null(name) == is.null(index)) nn_fail("get_layer(): give either name or index")
  if (!is.null(index)) {
    index <- check_int(index, "index")
    n <- length(object$layers)
    if (index > n) nn_fail(sprintf("index must be at most %d (the number of layers), not %d", n, index))
    return(as_nn_layer(object$get_layer(index = index - 1L)))
  }
  as_nn_layer(object$get_layer(name = check_string(name, "name")))
}

#' Weights of a model or layer
#'
#' `get_weights()` returns the weights as a list of R arrays, in the order of
#' `object$weights` (for a dense layer: the kernel, a matrix `[input features, units]`, then
#' the bias, a vector). `set_weights()` replaces them from such a list (shapes must match;
#' values are converted to each weight's dtype). Both work on models and on layers.
#'
#' @param object A model or a layer.
#' @param weights A list of arrays, one per weight.
#' @return `get_weights()`: a list of arrays. `set_weights()`: `object`, invisibly.
#' @examples
#' \dontrun{
#' w <- get_weights(model)
#' set_weights(model, lapply(w, function(a) a * 0))
#' }
#' @export
get_weights <- function(object) {
  check_weighted(object, "get_weights")
  object$get_weights()
}

#' @rdname get_weights
#' @export
set_weights <- function(object, weights) {
  check_weighted(object, "set_weights")
  if (!is.list(weights) || is.object(weights)) {
    nn_fail(sprintf("weights must be a list of arrays (as get_weights() returns), not %s",
                    describe_value(weights)))
  }
  info <- weight_info(object)
  n <- length(info)
  if (length(weights) != n) {
    nn_fail(sprintf("weights must have one array per weight: %d, not %d", n, length(weights)))
  }
  for (i in seq_along(weights)) {
    w <- weights[[i]]
    if (inherits(w, "tb_tensor")) next
    if (!is.numeric(w) || anyNA(w)) {
      nn_fail(sprintf("weights[[%d]] must be a numeric array without NA, not %s", i,
                      describe_value(w)))
    }
    shape <- as.integer(unlist(info[[i]]$shape))
    have <- if (is.null(dim(w))) length(w) else dim(w)
    fits <- if (is.null(dim(w))) length(w) == prod(shape) && length(shape) <= 1L else
      identical(as.integer(have), shape)
    if (!fits) {
      nn_fail(sprintf("weights[[%d]] has shape %s, but the weight %s has shape %s", i,
                      paste(have, collapse = " x "), info[[i]]$name,
                      if (length(shape)) paste(shape, collapse = " x ") else "() (a scalar)"))
    }
    # a vector of one value would cross as a scalar: give it its one dimension
    if (is.null(dim(w)) && length(shape) == 1L) dim(w) <- shape
    weights[[i]] <- w
  }
  object$set_weights(unname(weights))
  invisible(object)
}

# Name and shape of each weight of a model or layer.
weight_info <- function(object) {
  f <- .tb$api_fns[["nn_weight_info"]]
  if (is.null(f)) {
    f <- tb_eval("lambda m: [{'name': w.name, 'shape': list(w.shape)} for w in m.weights]")
    assign("nn_weight_info", f, envir = .tb$api_fns)
  }
  f(object)
}

check_weighted <- function(object, fn) {
  if (!is_nn_model(object) && !is_nn_layer(object)) {
    nn_fail(sprintf("%s(): expected a model or a layer, not %s", fn, describe_value(object)))
  }
  check_live(handle_of(object))
}

#' Set an attribute of a model or layer
#'
#' `x$name <- value` sets the attribute of the Python model or layer, e.g.
#' `model$stop_training <- TRUE` in a callback to end [fit()] after the current batch, or
#' `layer$trainable <- FALSE` to freeze a layer's weights (compile the model again after
#' changing what is trainable).
#'
#' @param x A model or a layer.
#' @param name Attribute name.
#' @param value New value.
#' @return `x`.
#' @export
`$<-.tb_nn` <- function(x, name, value) {
  h <- handle_of(x)
  check_live(h)
  tb_call_py(.tb$m_setattr, list(.subset2(h, "id"), name, tb_wire(value)))
  x
}
