# Layer constructors (tensorbridge.runtime.layers): Dense, Dropout, Flatten, Embedding,
# Activation, and the merge layers. Each one composes with its first argument.

#' Layers
#'
#' Each constructor makes a layer of the runtime and composes it with `object`:
#'
#' * a sequential model ([model_sequential()]): the layer is added to it and the model is
#'   returned (invisibly), so layers chain with `|>`;
#' * a symbolic tensor ([layer_input()] or another layer's output), or a list of them for
#'   the merge layers: the layer is called on it and its symbolic output returned (the
#'   functional API, see [model_functional()]);
#' * data (an R array or a tensor): the layer is applied at once and the result returned as
#'   an R array;
#' * missing or `NULL`: the layer itself is returned (class `tb_layer`), to add or call later
#'   (`layer_dense(units = 4)`, or `layer_dense(4)`).
#'
#' Layers are those of the Python runtime, with the Keras / TensorFlow.js arguments and
#' defaults:
#'
#' * `layer_dense()`: `activation(x %*% kernel + bias)` on the last axis; the kernel has
#'   shape `[input features, units]`.
#' * `layer_dropout()`: while training, sets a fraction `rate` of its inputs to zero and
#'   scales the rest by `1 / (1 - rate)`; the identity in [predict()] and [evaluate()].
#' * `layer_flatten()`: every dimension but the first (samples) into one, in row-major
#'   order (as in Python and TensorFlow.js; R's `dim<-` flattens column-major).
#' * `layer_embedding()`: integer ids `0, ..., input_dim - 1` (0-based, as in Python) to
#'   trainable vectors of length `output_dim`.
#' * `layer_activation()`: applies an activation function.
#'
#' Activations are given by name: `"linear"`, `"relu"`, `"elu"`, `"selu"`, `"gelu"`,
#' `"tanh"`, `"sigmoid"`, `"softplus"`, `"softmax"` (`NULL`: linear).
#'
#' @param object What to compose the layer with (see above).
#' @param units Number of output units (a positive whole number).
#' @param activation Name of the activation function, or `NULL` (none).
#' @param use_bias Whether the layer has a bias vector.
#' @param kernel_initializer,bias_initializer,embeddings_initializer Initializers
#'   ([initializers]) or their names.
#' @param rate Dropout: the fraction of inputs dropped, in `[0, 1)`.
#' @param noise_shape Dropout: `NULL`, or the shape of the dropout mask including the
#'   samples dimension, with `NA` for "as the input" (e.g. `c(NA, 1, NA)`: the same units
#'   dropped at every time step).
#' @param seed Dropout: a seed (non-negative whole number) for reproducible masks.
#' @param input_dim,output_dim Embedding: number of ids and length of each vector.
#' @param input_length Embedding: the length of the id sequences (sets `input_shape`).
#' @param input_shape For the first layer of a sequential model: the shape of one sample
#'   (without the samples dimension), e.g. `20` or `c(28, 28)`.
#' @param dtype `NULL` or the dtype of the layer's weights and outputs (`"float32"`, the
#'   default of the runtime, or `"float64"`).
#' @param name `NULL` (an automatic unique name) or the layer's name.
#' @param trainable Whether [fit()] updates the layer's weights.
#' @return See Details: a model, a symbolic tensor, an R array or a layer.
#' @examples
#' \dontrun{
#' model <- model_sequential(input_shape = 20) |>
#'   layer_dense(32, activation = "relu") |>
#'   layer_dropout(0.1) |>
#'   layer_dense(1)
#' }
#' @name layers
NULL

# Compose a new layer with `object` (see ?layers). `args` are the layer's own arguments;
# `common` the ones every layer takes.
create_layer <- function(object, class_name, args, common = list()) {
  pending <- NULL
  if (is_nn_model(object)) {
    h <- handle_of(object)
    pending <- h[[".pending_input_shape"]]
    if (!is.null(pending) && is.null(common$input_shape)) common$input_shape <- pending
  }
  layer <- as_nn_layer(do.call(py_getattr(nn(), class_name), compact(c(args, common))))
  out <- compose_layer(object, layer)
  if (is_nn_model(object)) {
    if (!is.null(pending)) assign(".pending_input_shape", NULL, envir = handle_of(object))
    return(invisible(out))
  }
  out
}

compose_layer <- function(object, layer) {
  if (is.null(object)) return(layer)
  if (is_nn_model(object)) {
    if (!identical(py_type_name(object), "Sequential")) {
      nn_fail(paste0(
        "layers can be added only to a sequential model (model_sequential()); to extend a ",
        "functional model, call the layer on a symbolic tensor (layer_input(), or a layer's output)"
      ))
    }
    check_live(handle_of(object))
    object$add(layer)
    return(invisible(object))
  }
  if (is_symbolic(object)) return(layer(object))
  if (is.list(object) && !is.object(object) && length(object) &&
      all(vapply(object, is_symbolic, logical(1)))) {
    return(layer(unname(object)))
  }
  if (inherits(object, "tb_tensor") || is.numeric(object) || is.logical(object)) {
    return(layer(prepare_data(object, "object")))
  }
  nn_fail(sprintf(
    "cannot compose a layer with %s: give a sequential model, a symbolic tensor (layer_input()), data, or nothing",
    describe_value(object)
  ))
}

common_args <- function(input_shape, dtype, name, trainable) {
  list(
    input_shape = check_shape(input_shape, "input_shape"),
    dtype = check_string(dtype, "dtype", null_ok = TRUE, choices = c("float32", "float64")),
    name = check_string(name, "name", null_ok = TRUE),
    trainable = check_flag(trainable, "trainable")
  )
}

check_activation <- function(x, name = "activation") {
  if (is.null(x)) return(NULL)
  if (is.character(x)) return(check_string(x, name))
  nn_fail(sprintf("%s must be the name of an activation function (e.g. \"relu\") or NULL, not %s",
                  name, describe_value(x)))
}

# `layer_dense(4)`: a lone number in the place of `object` is the first argument.
# Also any other lone value (`layer_dense("a")`), so that its check names the argument it was
# meant for ("units must be a positive whole number, not \"a\"").
lone_number <- function(object) {
  (is.numeric(object) || is.character(object) || is.logical(object)) &&
    length(object) == 1L && is.null(dim(object))
}

#' @rdname layers
#' @export
layer_dense <- function(object = NULL, units, activation = NULL, use_bias = TRUE,
                        kernel_initializer = "glorot_uniform", bias_initializer = "zeros",
                        input_shape = NULL, dtype = NULL, name = NULL, trainable = TRUE) {
  if (missing(units) && lone_number(object)) {
    units <- object
    object <- NULL
  }
  if (missing(units)) nn_fail("layer_dense(): units is missing")
  create_layer(object, "Dense", list(
    units = check_int(units, "units"),
    activation = check_activation(activation),
    use_bias = check_flag(use_bias, "use_bias"),
    kernel_initializer = as_initializer(kernel_initializer, "kernel_initializer"),
    bias_initializer = as_initializer(bias_initializer, "bias_initializer")
  ), common_args(input_shape, dtype, name, trainable))
}

#' @rdname layers
#' @export
layer_dropout <- function(object = NULL, rate, noise_shape = NULL, seed = NULL,
                          input_shape = NULL, dtype = NULL, name = NULL, trainable = TRUE) {
  if (missing(rate) && lone_number(object)) {
    rate <- object
    object <- NULL
  }
  if (missing(rate)) nn_fail("layer_dropout(): rate is missing")
  create_layer(object, "Dropout", list(
    rate = check_number(rate, "rate", 0, 1, upper_open = TRUE),
    noise_shape = check_shape(noise_shape, "noise_shape"),
    seed = check_int(seed, "seed", min = 0L, null_ok = TRUE)
  ), common_args(input_shape, dtype, name, trainable))
}

#' @rdname layers
#' @export
layer_flatten <- function(object = NULL, input_shape = NULL, dtype = NULL, name = NULL,
                          trainable = TRUE) {
  create_layer(object, "Flatten", list(), common_args(input_shape, dtype, name, trainable))
}

#' @rdname layers
#' @export
layer_activation <- function(object = NULL, activation, input_shape = NULL, dtype = NULL,
                             name = NULL, trainable = TRUE) {
  if (missing(activation) && is.character(object)) {
    activation <- object
    object <- NULL
  }
  if (missing(activation)) nn_fail("layer_activation(): activation is missing")
  if (is.null(activation)) activation <- "linear"
  create_layer(object, "Activation", list(activation = check_activation(activation)),
               common_args(input_shape, dtype, name, trainable))
}

#' @rdname layers
#' @export
layer_embedding <- function(object = NULL, input_dim, output_dim,
                            embeddings_initializer = "random_uniform", input_length = NULL,
                            input_shape = NULL, dtype = NULL, name = NULL, trainable = TRUE) {
  if (lone_number(object) && missing(output_dim)) {
    output_dim <- if (missing(input_dim)) NULL else input_dim
    input_dim <- object
    object <- NULL
  }
  if (missing(input_dim) || missing(output_dim) || is.null(output_dim)) {
    nn_fail("layer_embedding(): give input_dim and output_dim")
  }
  create_layer(object, "Embedding", list(
    input_dim = check_int(input_dim, "input_dim"),
    output_dim = check_int(output_dim, "output_dim"),
    embeddings_initializer = as_initializer(embeddings_initializer, "embeddings_initializer"),
    input_length = check_int(input_length, "input_length", null_ok = TRUE)
  ), common_args(input_shape, dtype, name, trainable))
}

#' Merge layers (functional models)
#'
#' Layers that combine several symbolic tensors of a functional model: element-wise sum,
#' difference (exactly two inputs), product and mean (shapes broadcast), and concatenation
#' along an axis. With `inputs` (a list of symbolic tensors) they return the merged
#' symbolic tensor; without it, the layer.
#'
#' @param inputs A list of symbolic tensors, or `NULL` for the layer itself.
#' @param axis Concatenation axis: negative counts from the end (`-1`, the default, is the
#'   last: features); positive is 1-based and counts the samples dimension (so `2` is the
#'   first feature axis).
#' @param name `NULL` or the layer's name.
#' @return A symbolic tensor, or a layer (class `tb_layer`).
#' @examples
#' \dontrun{
#' a <- layer_input(shape = 4); b <- layer_input(shape = 4)
#' out <- layer_concatenate(list(layer_add(list(a, b)), b)) |> layer_dense(1)
#' model <- model_functional(inputs = list(a, b), outputs = out)
#' }
#' @name merge_layers
NULL

merge_layer <- function(inputs, class_name, args, name) {
  if (!is.null(inputs) && (!is.list(inputs) || is.object(inputs) || length(inputs) < 2L ||
                           !all(vapply(inputs, is_symbolic, logical(1))))) {
    nn_fail(sprintf(
      "inputs must be a list of at least two symbolic tensors (layer_input() or layer outputs), not %s",
      describe_value(inputs)
    ))
  }
  create_layer(inputs, class_name, args, list(name = check_string(name, "name", null_ok = TRUE)))
}

#' @rdname merge_layers
#' @export
layer_add <- function(inputs = NULL, name = NULL) merge_layer(inputs, "Add", list(), name)

#' @rdname merge_layers
#' @export
layer_subtract <- function(inputs = NULL, name = NULL) {
  if (!is.null(inputs) && length(inputs) != 2L) {
    nn_fail(sprintf("layer_subtract(): inputs must be a list of exactly two symbolic tensors, not %d",
                    length(inputs)))
  }
  merge_layer(inputs, "Subtract", list(), name)
}

#' @rdname merge_layers
#' @export
layer_multiply <- function(inputs = NULL, name = NULL) {
  merge_layer(inputs, "Multiply", list(), name)
}

#' @rdname merge_layers
#' @export
layer_average <- function(inputs = NULL, name = NULL) {
  merge_layer(inputs, "Average", list(), name)
}

#' @rdname merge_layers
#' @export
layer_concatenate <- function(inputs = NULL, axis = -1, name = NULL) {
  axis <- check_int(axis, "axis", min = -Inf)
  if (axis == 0L) nn_fail("axis must be positive (1-based) or negative (from the end), not 0")
  merge_layer(inputs, "Concatenate", list(axis = if (axis > 0L) axis - 1L else axis), name)
}
