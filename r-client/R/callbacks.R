# Callbacks for fit(): R functions run at points of training (on R's main thread, whatever
# thread the training loop runs on), and the runtime's built-in callbacks.

new_callback <- function(class_name, args) {
  with_class(do.call(py_getattr(nn(), class_name), compact(args)), "tb_callback")
}

# An R hook for Python: indices become 1-based; the hook's value is ignored (so that any R
# value may be returned); logs arrive as a named list.
indexed_hook <- function(f, name) {
  if (is.null(f)) return(NULL)
  if (!is.function(f)) nn_fail(sprintf("%s must be a function, not %s", name, describe_value(f)))
  force(f)
  function(index, logs = NULL) {
    f(as.integer(index) + 1L, as.list(logs))
    NULL
  }
}

logs_hook <- function(f, name) {
  if (is.null(f)) return(NULL)
  if (!is.function(f)) nn_fail(sprintf("%s must be a function, not %s", name, describe_value(f)))
  force(f)
  function(logs = NULL) {
    f(as.list(logs))
    NULL
  }
}

#' Callbacks for training
#'
#' Callbacks run at points of [fit()]. R functions given to `callback_lambda()` run on R's
#' main thread (the training loop may run on another thread: the bridge hands the call to
#' R), get epoch and batch numbers counted from 1 and the logs as a named list (`loss`,
#' metrics, `val_*` at the end of an epoch). An error in a callback stops training and is
#' raised by `fit()` as that same R error. A plain function in `fit(callbacks = )` is an
#' `on_epoch_end` hook; Python callback objects (e.g. from [tb_import()]) may be given too.
#'
#' * `callback_lambda()`: hooks from R functions; `function(epoch, logs)` for epoch hooks,
#'   `function(batch, logs)` for batch hooks, `function(logs)` for `on_train_begin` /
#'   `on_train_end`. To stop training from a hook, set `model$stop_training <- TRUE`.
#' * `callback_early_stopping()`: stop when `monitor` has not improved for `patience`
#'   epochs (an improvement must exceed `min_delta`); `restore_best_weights` puts back the
#'   weights of the best epoch; `baseline`: also stop unless it is beaten within `patience`
#'   epochs; nothing is monitored during the first `start_from_epoch` epochs.
#' * `callback_terminate_on_nan()`: stop as soon as the loss is NaN or infinite.
#' * `callback_learning_rate_scheduler()`: before each epoch, set the optimizer's learning
#'   rate to `schedule(epoch, lr)` (or `schedule(epoch)`), with `epoch` counted from 1.
#'
#' @param on_epoch_begin,on_epoch_end,on_batch_begin,on_batch_end,on_train_begin,on_train_end
#'   `NULL` or R functions (see Details).
#' @param monitor The log entry to watch (e.g. `"val_loss"`, `"loss"`, `"val_mae"`).
#' @param min_delta Smallest change that counts as an improvement.
#' @param patience Epochs without improvement before stopping (a whole number >= 0).
#' @param verbose 0 (quiet) or 1 (print when stopping / changing the rate).
#' @param mode `"auto"`, `"min"` or `"max"`: whether smaller or larger is better (`"auto"`:
#'   larger for accuracy-like names).
#' @param baseline `NULL` or a value to beat.
#' @param restore_best_weights Restore the weights of the best epoch at the end.
#' @param start_from_epoch Number of epochs to wait before monitoring.
#' @param schedule An R function `function(epoch, lr)` (or `function(epoch)`) returning the
#'   learning rate.
#' @return A callback (class `tb_callback`).
#' @examples
#' \dontrun{
#' losses <- numeric()
#' history <- model |> fit(x, y, epochs = 50, validation_split = 0.2, callbacks = list(
#'   callback_lambda(on_epoch_end = function(epoch, logs) losses[epoch] <<- logs$loss),
#'   callback_early_stopping(patience = 3, restore_best_weights = TRUE)
#' ))
#' }
#' @name callbacks
NULL

#' @rdname callbacks
#' @export
callback_lambda <- function(on_epoch_begin = NULL, on_epoch_end = NULL, on_batch_begin = NULL,
                            on_batch_end = NULL, on_train_begin = NULL, on_train_end = NULL) {
  hooks <- compact(list(
    on_epoch_begin = indexed_hook(on_epoch_begin, "on_epoch_begin"),
    on_epoch_end = indexed_hook(on_epoch_end, "on_epoch_end"),
    on_train_batch_begin = indexed_hook(on_batch_begin, "on_batch_begin"),
    on_train_batch_end = indexed_hook(on_batch_end, "on_batch_end"),
    on_train_begin = logs_hook(on_train_begin, "on_train_begin"),
    on_train_end = logs_hook(on_train_end, "on_train_end")
  ))
  if (!length(hooks)) nn_fail("callback_lambda(): give at least one hook function")
  new_callback("LambdaCallback", hooks)
}

#' @rdname callbacks
#' @export
callback_early_stopping <- function(monitor = "val_loss", min_delta = 0, patience = 0,
                                    verbose = 0, mode = "auto", baseline = NULL,
                                    restore_best_weights = FALSE, start_from_epoch = 0) {
  new_callback("EarlyStopping", list(
    monitor = check_string(monitor, "monitor"),
    min_delta = check_number(min_delta, "min_delta", lower = 0),
    patience = check_int(patience, "patience", min = 0L),
    verbose = check_int(verbose, "verbose", min = 0L),
    mode = check_string(mode, "mode", choices = c("auto", "min", "max")),
    baseline = check_number(baseline, "baseline", null_ok = TRUE),
    restore_best_weights = check_flag(restore_best_weights, "restore_best_weights"),
    start_from_epoch = check_int(start_from_epoch, "start_from_epoch", min = 0L)
  ))
}

#' @rdname callbacks
#' @export
callback_terminate_on_nan <- function() new_callback("TerminateOnNaN", list())

#' @rdname callbacks
#' @export
callback_learning_rate_scheduler <- function(schedule, verbose = 0) {
  if (!is.function(schedule)) {
    nn_fail(sprintf("schedule must be a function(epoch, lr), not %s", describe_value(schedule)))
  }
  two_args <- length(formals(schedule)) >= 2L || "..." %in% names(formals(schedule))
  force(schedule)
  hook <- function(epoch, lr) {
    epoch <- as.integer(epoch) + 1L
    value <- if (two_args) schedule(epoch, lr) else schedule(epoch)
    check_number(value, "the learning rate returned by schedule", lower = 0)
  }
  new_callback("LearningRateScheduler", list(
    schedule = hook, verbose = check_int(verbose, "verbose", min = 0L)
  ))
}

# The callbacks argument of fit(): callbacks, R functions (on_epoch_end) or named lists of hook
# functions, alone or in a list.
as_callbacks <- function(x) {
  if (is.null(x)) return(list())
  if (inherits(x, "tb_callback") || is.function(x)) x <- list(x)
  if (!is.list(x)) {
    nn_fail(sprintf("callbacks must be a list of callbacks (callback_*()), not %s",
                    describe_value(x)))
  }
  if (!is.null(names(x)) && all(nzchar(names(x))) && all(vapply(x, is.function, logical(1))) &&
      !any(vapply(x, function(v) inherits(v, "tb_callback"), logical(1)))) {
    x <- list(do.call(callback_lambda, x)) # list(on_epoch_end = f, ...)
  }
  lapply(seq_along(x), function(i) {
    cb <- x[[i]]
    if (inherits(cb, "tb_callback") || inherits(cb, "tb_object")) return(cb) # also Python ones
    if (is.function(cb)) return(callback_lambda(on_epoch_end = cb))
    if (is.list(cb) && !is.null(names(cb))) return(do.call(callback_lambda, cb))
    nn_fail(sprintf("callbacks[[%d]] must be a callback (callback_*()) or a function(epoch, logs), not %s",
                    i, describe_value(cb)))
  })
}
