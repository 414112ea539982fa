# Optimizers: the runtime's (tensorbridge.runtime.layers.optimizers).

check_learning_rate <- function(x) {
  if (is.function(x)) return(schedule_function(x))
  check_number(x, "learning_rate", lower = 0)
}

# A learning-rate schedule: an R function of the (1-based) step number.
schedule_function <- function(f) {
  force(f)
  function(step) {
    lr <- f(as.integer(step) + 1L)
    check_number(lr, "the learning rate returned by the schedule", lower = 0)
  }
}

new_optimizer <- function(class_name, args, clipnorm, clipvalue, global_clipnorm) {
  clips <- list(
    clipnorm = check_number(clipnorm, "clipnorm", lower = 0, lower_open = TRUE, null_ok = TRUE),
    clipvalue = check_number(clipvalue, "clipvalue", lower = 0, lower_open = TRUE, null_ok = TRUE),
    global_clipnorm = check_number(global_clipnorm, "global_clipnorm", lower = 0,
                                   lower_open = TRUE, null_ok = TRUE)
  )
  clips <- compact(clips)
  if (length(clips) > 1L) {
    nn_fail("give at most one of clipnorm, clipvalue and global_clipnorm")
  }
  opt <- do.call(py_getattr(nn()$optimizers, class_name), c(compact(args), clips))
  with_class(opt, "tb_optimizer")
}

#' Optimizers
#'
#' The optimizers of the runtime, with the formulas and defaults of Keras 3 / TensorFlow.js
#' (see the Python module `tensorbridge.runtime.layers.optimizers`). Give one to
#' [compile()]; a name (`"sgd"`, `"adam"`, `"rmsprop"`, `"adagrad"`) gives the defaults.
#'
#' `learning_rate` may also be an R function of the step number (1 for the first update)
#' returning the rate: a schedule. An optimizer object keeps its state (moments, step
#' count) across calls to [fit()], so training continues where it stopped.
#'
#' @param learning_rate The step size (a non-negative number), or a schedule function.
#' @param momentum SGD and RMSprop: momentum in `[0, 1]` (0: none).
#' @param nesterov SGD: Nesterov momentum.
#' @param beta_1,beta_2 Adam: decay rates of the first and second moment estimates.
#' @param epsilon A small constant added for numerical stability.
#' @param amsgrad Adam: use the AMSGrad variant (running maximum of the second moments).
#' @param rho RMSprop: decay rate of the squared-gradient average.
#' @param centered RMSprop: normalise by the gradient's estimated variance.
#' @param initial_accumulator_value Adagrad: starting value of the accumulators.
#' @param clipnorm,clipvalue,global_clipnorm Gradient clipping (at most one): by each
#'   gradient's norm, by value, or by the norm of all gradients together.
#' @return An optimizer (class `tb_optimizer`).
#' @examples
#' \dontrun{
#' model |> compile(optimizer = optimizer_sgd(0.1, momentum = 0.9), loss = "mse")
#' optimizer_adam(function(step) 0.01 / sqrt(step))
#' }
#' @name optimizers
NULL

#' @rdname optimizers
#' @export
optimizer_sgd <- function(learning_rate = 0.01, momentum = 0, nesterov = FALSE,
                          clipnorm = NULL, clipvalue = NULL, global_clipnorm = NULL) {
  new_optimizer("SGD", list(
    learning_rate = check_learning_rate(learning_rate),
    momentum = check_number(momentum, "momentum", 0, 1),
    nesterov = check_flag(nesterov, "nesterov")
  ), clipnorm, clipvalue, global_clipnorm)
}

#' @rdname optimizers
#' @export
optimizer_adam <- function(learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7,
                           amsgrad = FALSE, clipnorm = NULL, clipvalue = NULL,
                           global_clipnorm = NULL) {
  new_optimizer("Adam", list(
    learning_rate = check_learning_rate(learning_rate),
    beta_1 = check_number(beta_1, "beta_1", 0, 1, upper_open = TRUE),
    beta_2 = check_number(beta_2, "beta_2", 0, 1, upper_open = TRUE),
    epsilon = check_number(epsilon, "epsilon", lower = 0),
    amsgrad = check_flag(amsgrad, "amsgrad")
  ), clipnorm, clipvalue, global_clipnorm)
}

#' @rdname optimizers
#' @export
optimizer_rmsprop <- function(learning_rate = 0.001, rho = 0.9, momentum = 0, epsilon = 1e-7,
                              centered = FALSE, clipnorm = NULL, clipvalue = NULL,
                              global_clipnorm = NULL) {
  new_optimizer("RMSprop", list(
    learning_rate = check_learning_rate(learning_rate),
    rho = check_number(rho, "rho", 0, 1),
    momentum = check_number(momentum, "momentum", 0, 1),
    epsilon = check_number(epsilon, "epsilon", lower = 0),
    centered = check_flag(centered, "centered")
  ), clipnorm, clipvalue, global_clipnorm)
}

#' @rdname optimizers
#' @export
optimizer_adagrad <- function(learning_rate = 0.001, initial_accumulator_value = 0.1,
                              epsilon = 1e-7, clipnorm = NULL, clipvalue = NULL,
                              global_clipnorm = NULL) {
  new_optimizer("Adagrad", list(
    learning_rate = check_learning_rate(learning_rate),
    initial_accumulator_value = check_number(initial_accumulator_value,
                                             "initial_accumulator_value", lower = 0),
    epsilon = check_number(epsilon, "epsilon", lower = 0)
  ), clipnorm, clipvalue, global_clipnorm)
}
