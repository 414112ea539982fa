# Training and using models: compile(), fit(), evaluate(), predict().

#' Configure a model for training
#'
#' Chooses the optimizer, the loss and the metrics used by [fit()] and [evaluate()]. The
#' model is changed in place and returned invisibly.
#'
#' @param object A model.
#' @param optimizer An optimizer ([optimizers]) or its name (`"sgd"`, `"adam"`,
#'   `"rmsprop"`, `"adagrad"`).
#' @param loss A loss ([losses]) or its name (`"mse"`, `"binary_crossentropy"`, ...); for
#'   several outputs, a list (one per output) or a list named by output.
#' @param metrics `NULL`, metric names or objects ([metrics]), e.g. `"mae"` or
#'   `c("accuracy", "mse")`; for several outputs, a list named by output.
#' @param loss_weights `NULL`, or one weight per output (the total loss is the weighted sum).
#' @param run_eagerly Run the training step op by op instead of compiling it (slower; for
#'   debugging).
#' @param ... Unused.
#' @return `object`, invisibly.
#' @export
compile <- function(object, ...) UseMethod("compile")

#' @rdname compile
#' @export
compile.tb_model <- function(object, optimizer = "rmsprop", loss, metrics = NULL,
                             loss_weights = NULL, run_eagerly = FALSE, ...) {
  check_model(object, "compile")
  check_dots_empty(list(...), "compile")
  if (missing(loss)) nn_fail("compile(): give a loss (e.g. loss = \"mse\")")
  if (!inherits(optimizer, "tb_optimizer")) optimizer <- check_string(optimizer, "optimizer")
  if (!is.null(loss_weights)) {
    if (!is.numeric(loss_weights) && !is.list(loss_weights) || anyNA(unlist(loss_weights))) {
      nn_fail(sprintf("loss_weights must be numbers (one per output), not %s",
                      describe_value(loss_weights)))
    }
    loss_weights <- as.list(loss_weights)
  }
  object$compile(
    optimizer = optimizer,
    loss = as_loss_spec(loss),
    metrics = as_metric_spec(metrics),
    loss_weights = loss_weights,
    run_eagerly = check_flag(run_eagerly, "run_eagerly")
  )
  invisible(object)
}

check_dots_empty <- function(dots, fn) {
  if (length(dots)) {
    nms <- names(dots)
    what <- if (is.null(nms) || !all(nzchar(nms))) {
      "unnamed arguments"
    } else {
      paste(nms, collapse = ", ")
    }
    nn_fail(sprintf("%s(): unknown argument(s): %s", fn, what))
  }
}

# The verbose argument: 0 silent, 1 progress, 2 one line per epoch; "auto": 1 in interactive
# sessions, else 0.
resolve_verbose <- function(verbose) {
  if (identical(verbose, "auto")) return(if (interactive()) 1L else 0L)
  v <- check_int(verbose, "verbose", min = 0L)
  if (v > 2L) nn_fail(sprintf("verbose must be 0, 1, 2 or \"auto\", not %d", v))
  v
}

# The runtime's fit progress sink (ProgbarLogger: it draws from the FitProgress events, as the
# JS door's sink forwards them) writing through R's console (cat), so that progress shows where
# R's output goes (RStudio, knitr, sink()) rather than on the process's standard output. It goes
# in as a callback of this fit (the training runs on a worker thread, which a sink scoped on
# R's main thread would not reach).
progress_logger <- function(verbose) {
  stream <- tb_import("types")$SimpleNamespace(
    write = function(s) {
      cat(s)
      NULL
    },
    flush = function() {
      utils::flush.console()
      NULL
    },
    isatty = function() interactive()
  )
  nn()$ProgbarLogger(verbose, stream = stream)
}

# x/y as fit/evaluate/predict pass them to Python: one array, or a list/named list of arrays
# (several inputs or outputs).
data_arg <- function(x, name, column = TRUE) prepare_data(x, name, column)

#' Train a model
#'
#' Trains the model for `epochs` passes over `(x, y)` with the optimizer, loss and metrics
#' given to [compile()], and returns the history of the loss and metrics.
#'
#' Data: `x` is an R matrix (or array) whose rows are the samples (`x[i, ]` is sample `i`;
#' R's column-major memory is read in place, not copied or transposed), a numeric vector (one
#' feature), a data frame of numeric columns, a tensor, or for several inputs a list (named
#' by input). `y` likewise; targets for a sparse cross-entropy are class indices from 0.
#'
#' Training runs on a worker thread while R's main thread serves the R callbacks and the
#' progress display; Ctrl-C (or Esc) stops it at the end of the current batch, keeping the
#' weights learnt so far, and signals an interrupt. An error in an R callback stops
#' training and is raised here as that R error.
#'
#' @param object A compiled model.
#' @param x,y Inputs and targets (see Details).
#' @param epochs Number of passes over the data (a positive whole number).
#' @param batch_size Samples per gradient step (a positive whole number).
#' @param validation_split Fraction in `[0, 1)` of the samples, taken from the end before
#'   shuffling, held out to compute `val_*` losses and metrics at the end of each epoch.
#' @param validation_data `NULL`, or `list(x_val, y_val)` (used instead of
#'   `validation_split`).
#' @param shuffle Reorder the training samples every epoch.
#' @param callbacks A list of callbacks ([callbacks]) or R functions (`function(epoch,
#'   logs)`, called at the end of each epoch).
#' @param verbose 0 (silent), 1 (progress per epoch), 2 (one line per epoch) or `"auto"` (1
#'   in interactive sessions, else 0; the default, or `getOption("tensorbridge.verbose")`).
#' @param sample_weight `NULL` or one weight per sample.
#' @param initial_epoch Epochs already done (training continues from there; epochs counts
#'   the total).
#' @param seed `NULL` or a seed for the shuffling (reproducible sample order).
#' @param validation_batch_size `NULL` (`batch_size`) or the samples per validation batch.
#' @param ... Unused.
#' @return A `tb_history` (invisibly): see [as.data.frame.tb_history()] and
#'   [plot.tb_history()].
#' @examples
#' \dontrun{
#' history <- model |> fit(x, y, epochs = 20, batch_size = 32, validation_split = 0.2)
#' plot(history)
#' }
#' @export
fit <- function(object, ...) UseMethod("fit")

#' @rdname fit
#' @export
fit.tb_model <- function(object, x, y, epochs = 10, batch_size = 32, validation_split = 0,
                         validation_data = NULL, shuffle = TRUE, callbacks = NULL,
                         verbose = getOption("tensorbridge.verbose", "auto"),
                         sample_weight = NULL, initial_epoch = 0, seed = NULL,
                         validation_batch_size = NULL, ...) {
  check_model(object, "fit")
  check_dots_empty(list(...), "fit")
  if (missing(x)) nn_fail("fit(): x (the inputs) is missing")
  if (missing(y)) nn_fail("fit(): y (the targets) is missing")
  epochs <- check_int(epochs, "epochs")
  batch_size <- check_int(batch_size, "batch_size")
  initial_epoch <- check_int(initial_epoch, "initial_epoch", min = 0L)
  if (initial_epoch >= epochs) {
    nn_fail(sprintf("initial_epoch (%d) must be less than epochs (%d)", initial_epoch, epochs))
  }
  validation_split <- check_number(validation_split, "validation_split", 0, 1, upper_open = TRUE)
  if (!is.null(validation_data)) {
    if (!is.list(validation_data) || is.object(validation_data) ||
        !length(validation_data) %in% 2:3) {
      nn_fail("validation_data must be list(x_val, y_val) or list(x_val, y_val, sample_weight)")
    }
    validation_data <- list(
      data_arg(validation_data[[1L]], "validation_data[[1]]"),
      data_arg(validation_data[[2L]], "validation_data[[2]]", column = FALSE),
      if (length(validation_data) == 3L) prepare_data(validation_data[[3L]], "validation_data[[3]]", FALSE)
    )[seq_along(validation_data)]
  }
  verbose <- resolve_verbose(verbose)
  cbs <- as_callbacks(callbacks)
  if (verbose > 0L) cbs <- c(list(progress_logger(verbose)), cbs)
  x <- data_arg(x, "x")
  y <- data_arg(y, "y", column = FALSE)
  args <- compact(list(
    x = x, y = y, batch_size = batch_size, epochs = epochs, verbose = 0L,
    callbacks = unname(cbs), validation_split = validation_split,
    validation_data = validation_data, shuffle = check_flag(shuffle, "shuffle"),
    sample_weight = prepare_data(sample_weight, "sample_weight", column = FALSE),
    initial_epoch = initial_epoch, seed = check_int(seed, "seed", min = 0L, null_ok = TRUE),
    validation_batch_size = check_int(validation_batch_size, "validation_batch_size",
                                      null_ok = TRUE)
  ))
  history <- do.call(tb_call, c(list(object$fit), args, list(.background = TRUE)))
  invisible(new_history(history))
}

#' Evaluate a model
#'
#' The loss and metrics of the compiled model on `(x, y)`, computed in batches with
#' training-only behaviour (dropout) off.
#'
#' @inheritParams fit
#' @param batch_size Samples per batch.
#' @param verbose 0 (silent) or 1 (print the results).
#' @return A named numeric vector: `loss`, then one entry per metric.
#' @export
evaluate <- function(object, ...) UseMethod("evaluate")

#' @rdname evaluate
#' @export
evaluate.tb_model <- function(object, x, y, batch_size = 32, verbose = 0, sample_weight = NULL,
                              ...) {
  check_model(object, "evaluate")
  check_dots_empty(list(...), "evaluate")
  if (missing(x) || missing(y)) nn_fail("evaluate(): give x and y")
  verbose <- check_int(verbose, "verbose", min = 0L)
  logs <- tb_call(object$evaluate, x = data_arg(x, "x"), y = data_arg(y, "y", column = FALSE),
                  batch_size = check_int(batch_size, "batch_size"), verbose = 0L,
                  sample_weight = prepare_data(sample_weight, "sample_weight", column = FALSE),
                  return_dict = TRUE, .background = TRUE)
  out <- unlist(logs)
  if (verbose > 0L) {
    cat(paste(sprintf("%s: %.4f", names(out), out), collapse = " - "), "\n", sep = "")
  }
  out
}

#' Predictions of a model
#'
#' The model's outputs for `x` (rows are samples, as in [fit()]), computed in batches with
#' training-only behaviour (dropout) off.
#'
#' @param object A model (compiled or not).
#' @param x Inputs: a matrix or array whose rows are samples, a numeric vector (one
#'   feature), a data frame, a tensor, or a list of them for several inputs.
#' @param batch_size Samples per batch.
#' @param ... Unused.
#' @return An R matrix (or array) with one row per sample: row `i` is the prediction for
#'   `x[i, ]`. For several outputs, a list of them.
#' @examples
#' \dontrun{
#' pred <- predict(model, x_new)
#' }
#' @importFrom stats predict
#' @export
predict.tb_model <- function(object, x, batch_size = 32, ...) {
  check_model(object, "predict")
  check_dots_empty(list(...), "predict")
  if (missing(x)) nn_fail("predict(): x (the inputs) is missing")
  tb_call(object$predict, data_arg(x, "x"), batch_size = check_int(batch_size, "batch_size"),
          .background = TRUE)
}
