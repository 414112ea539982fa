# Weight initializers: the runtime's (tensorbridge.runtime.layers.initializers), by R name.

new_initializer <- function(class_name, args) {
  init <- do.call(py_getattr(nn()$initializers, class_name), compact(args))
  with_class(init, "tb_initializer")
}

check_seed <- function(seed) check_int(seed, "seed", min = 0L, null_ok = TRUE)

#' Weight initializers
#'
#' Initializers set the starting values of a layer's weights; give them to a layer's
#' `kernel_initializer`, `bias_initializer` or `embeddings_initializer` (a name such as
#' `"glorot_uniform"` works too and uses the default settings). They are the runtime's
#' initializers (Keras / TensorFlow.js names and defaults), so a seeded initializer gives
#' the same weights in R, Python and JavaScript.
#'
#' A random initializer with a `seed` owns a random stream started from that seed: two
#' layers sharing one seeded initializer get different (but reproducible) weights. Without
#' a seed it draws from the runtime's default generator.
#'
#' * `initializer_glorot_uniform()`, `initializer_glorot_normal()`: Glorot (Xavier),
#'   scale by `fan_in + fan_out`.
#' * `initializer_he_normal()`, `initializer_he_uniform()`: He, scale by `fan_in`
#'   (for ReLU layers).
#' * `initializer_lecun_normal()`, `initializer_lecun_uniform()`: LeCun, scale by `fan_in`.
#' * `initializer_truncated_normal()`, `initializer_random_normal()`,
#'   `initializer_random_uniform()`: fixed distributions (the truncated normal redraws
#'   values more than two standard deviations from the mean).
#' * `initializer_variance_scaling()`: the general form of the Glorot/He/LeCun ones.
#' * `initializer_zeros()`, `initializer_ones()`, `initializer_constant()`.
#'
#' @param seed `NULL` or a non-negative whole number.
#' @param mean,stddev Mean and standard deviation of the normal distributions.
#' @param minval,maxval Bounds of the uniform distribution.
#' @param value The constant.
#' @param scale,mode,distribution Variance scaling: the variance is `scale / n` where `n`
#'   is `fan_in`, `fan_out` or their mean (`mode`: `"fan_in"`, `"fan_out"`, `"fan_avg"`);
#'   `distribution` is `"truncated_normal"`, `"untruncated_normal"` or `"uniform"`.
#' @return An initializer (class `tb_initializer`).
#' @examples
#' \dontrun{
#' layer_dense(units = 4, kernel_initializer = initializer_he_normal(seed = 1))
#' }
#' @name initializers
NULL

#' @rdname initializers
#' @export
initializer_glorot_uniform <- function(seed = NULL) {
  new_initializer("GlorotUniform", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_glorot_normal <- function(seed = NULL) {
  new_initializer("GlorotNormal", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_he_normal <- function(seed = NULL) {
  new_initializer("HeNormal", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_he_uniform <- function(seed = NULL) {
  new_initializer("HeUniform", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_lecun_normal <- function(seed = NULL) {
  new_initializer("LecunNormal", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_lecun_uniform <- function(seed = NULL) {
  new_initializer("LecunUniform", list(seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_truncated_normal <- function(mean = 0, stddev = 0.05, seed = NULL) {
  new_initializer("TruncatedNormal", list(
    mean = check_number(mean, "mean"), stddev = check_number(stddev, "stddev", lower = 0),
    seed = check_seed(seed)
  ))
}

#' @rdname initializers
#' @export
initializer_random_normal <- function(mean = 0, stddev = 0.05, seed = NULL) {
  new_initializer("RandomNormal", list(
    mean = check_number(mean, "mean"), stddev = check_number(stddev, "stddev", lower = 0),
    seed = check_seed(seed)
  ))
}

#' @rdname initializers
#' @export
initializer_random_uniform <- function(minval = -0.05, maxval = 0.05, seed = NULL) {
  minval <- check_number(minval, "minval")
  maxval <- check_number(maxval, "maxval")
  if (maxval < minval) nn_fail(sprintf("maxval (%g) must not be below minval (%g)", maxval, minval))
  new_initializer("RandomUniform", list(minval = minval, maxval = maxval, seed = check_seed(seed)))
}

#' @rdname initializers
#' @export
initializer_variance_scaling <- function(scale = 1, mode = "fan_in",
                                         distribution = "truncated_normal", seed = NULL) {
  new_initializer("VarianceScaling", list(
    scale = check_number(scale, "scale", lower = 0, lower_open = TRUE),
    mode = check_string(mode, "mode", choices = c("fan_in", "fan_out", "fan_avg")),
    distribution = check_string(distribution, "distribution",
                                choices = c("truncated_normal", "untruncated_normal", "uniform")),
    seed = check_seed(seed)
  ))
}

#' @rdname initializers
#' @export
initializer_zeros <- function() new_initializer("Zeros", list())

#' @rdname initializers
#' @export
initializer_ones <- function() new_initializer("Ones", list())

#' @rdname initializers
#' @export
initializer_constant <- function(value = 0) {
  new_initializer("Constant", list(value = check_number(value, "value")))
}

# An initializer argument: a name, an initializer object, or NULL (the layer's default).
as_initializer <- function(x, name) {
  if (is.null(x) || inherits(x, "tb_initializer")) return(x)
  if (is.character(x)) return(check_string(x, name))
  nn_fail(sprintf("%s must be an initializer (initializer_*()) or its name, not %s",
                  name, describe_value(x)))
}
