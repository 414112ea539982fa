# compile / fit / evaluate / predict from R: orientation of R matrices, numbers against
# closed forms, callbacks (R functions on R's main thread), history.

linear_model <- function(kernel, bias, dtype = "float64") {
  m <- model_sequential(input_shape = nrow(kernel)) |>
    layer_dense(ncol(kernel), dtype = dtype)
  set_weights(m, list(kernel, bias))
  m
}

test_that("predict: rows of an R matrix are samples, and the result is an R matrix", {
  skip_if_no_python()
  set.seed(11)
  kernel <- matrix(stats::rnorm(6), 3, 2) # 3 features -> 2 outputs
  bias <- c(0.5, -1)
  m <- linear_model(kernel, bias)
  x <- matrix(stats::rnorm(15), 5, 3) # non-square: 5 samples x 3 features
  expected <- x %*% kernel + matrix(bias, 5, 2, byrow = TRUE)
  pred <- predict(m, x)
  expect_true(is.matrix(pred))
  expect_identical(dim(pred), c(5L, 2L))
  # a 3-term dot product plus the bias: the tolerance policy (helper-tolerance.R)
  mag <- abs(x) %*% abs(kernel) + matrix(abs(bias), 5, 2, byrow = TRUE)
  expect_close(pred, expected, n = 4, magnitude = mag)
  # a single sample, a data frame, a tensor, and a small batch size give the same rows
  expect_close(predict(m, x[2, , drop = FALSE]), expected[2, , drop = FALSE], n = 4,
               magnitude = mag[2, ])
  expect_close(predict(m, as.data.frame(x)), expected, n = 4, magnitude = mag)
  expect_close(predict(m, as_tensor(x)), expected, n = 4, magnitude = mag)
  expect_close(predict(m, x, batch_size = 2), expected, n = 4, magnitude = mag)
  # a vector is one feature per sample
  m1 <- linear_model(matrix(2, 1, 1), 1)
  expect_close(predict(m1, c(1, 2, 3)), matrix(c(3, 5, 7)), n = 2)
  # float32 models: the same up to float32 rounding (inputs and weights rounded to float32
  # too: one more term's worth)
  m32 <- linear_model(kernel, bias, dtype = "float32")
  expect_close(predict(m32, x), expected, dtype = "float32", n = 5, magnitude = mag)
})

test_that("big matrices cross without per-element work and keep their orientation", {
  skip_if_no_python()
  n <- 200000L
  x <- matrix(stats::runif(n * 10), n, 10)
  kernel <- matrix(seq_len(10) / 10, 10, 1)
  m <- linear_model(kernel, 0)
  took <- system.time(pred <- predict(m, x, batch_size = 50000))[["elapsed"]]
  expect_identical(dim(pred), c(n, 1L))
  rows <- c(1L, 2L, 99999L, n)
  expect_equal(pred[rows, 1], as.vector(x[rows, ] %*% kernel), tolerance = 1e-12)
  expect_lt(took, 20)
})

test_that("fit learns a linear map; evaluate matches the closed-form loss and metric", {
  skip_if_no_python()
  set.seed(5)
  n <- 256
  x <- matrix(stats::rnorm(n * 3), n, 3)
  w_true <- matrix(c(1.5, -2, 0.5), 3, 1)
  y <- x %*% w_true + 0.25
  m <- model_sequential(input_shape = 3) |> layer_dense(1, dtype = "float64")
  m |> compile(optimizer = optimizer_adam(0.05), loss = "mse", metrics = "mae")
  h <- m |> fit(x, y, epochs = 60, batch_size = 32, verbose = 0, seed = 1)
  expect_s3_class(h, "tb_history")
  expect_identical(h$epoch, 1:60)
  expect_identical(names(h$metrics), c("loss", "mae"))
  expect_lt(h$metrics$loss[60], h$metrics$loss[1] / 100)
  w <- get_weights(m)
  expect_equal(w[[1]], w_true, tolerance = 0.02)
  expect_equal(w[[2]], 0.25, tolerance = 0.02)
  ev <- evaluate(m, x, y)
  pred <- predict(m, x)
  expect_identical(names(ev), c("loss", "mae"))
  expect_equal(ev[["loss"]], mean((pred - y)^2), tolerance = 1e-10)
  expect_equal(ev[["mae"]], mean(abs(pred - y)), tolerance = 1e-10)
  expect_output(evaluate(m, x, y, verbose = 1), "loss: [0-9.]+ - mae: [0-9.]+")
  # a model without input_shape is built from the first data
  m2 <- model_sequential() |> layer_dense(1, dtype = "float64")
  m2 |> compile(optimizer = "sgd", loss = "mse")
  expect_silent(m2 |> fit(x, y, epochs = 1, verbose = 0))
  expect_identical(dim(get_weights(m2)[[1]]), c(3L, 1L))
})

test_that("validation data, validation_split and history as a data frame / plot", {
  skip_if_no_python()
  set.seed(2)
  x <- matrix(stats::rnorm(200), 100, 2)
  y <- x[, 1] - x[, 2]
  m <- model_sequential(input_shape = 2) |> layer_dense(4, activation = "tanh", dtype = "float64") |>
    layer_dense(1, dtype = "float64")
  m |> compile(optimizer = optimizer_sgd(0.05), loss = "mse", metrics = c("mae", "mse"))
  xv <- x[1:20, ]
  yv <- y[1:20]
  h <- m |> fit(x, y, epochs = 4, batch_size = 10, validation_data = list(xv, yv), verbose = 0)
  expect_identical(names(h$metrics), c("loss", "mae", "mse", "val_loss", "val_mae", "val_mse"))
  ev <- evaluate(m, xv, yv, batch_size = 10)
  expect_equal(h$metrics$val_loss[4], ev[["loss"]], tolerance = 1e-12)
  df <- as.data.frame(h)
  expect_identical(names(df), c("epoch", "loss", "mae", "mse", "val_loss", "val_mae", "val_mse"))
  expect_identical(df$epoch, 1:4)
  expect_identical(df$val_mae, h$metrics$val_mae)
  expect_output(print(h), "Trained on 100 samples for 4 epochs \\(batch size 10\\)")
  expect_output(print(h), "Final epoch: loss: ")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(h), h)
  expect_identical(plot(h, metrics = "mae"), h)
  expect_error(plot(h, metrics = "accuracy"), "no metric \"accuracy\"")
  h2 <- m |> fit(x, y, epochs = 2, validation_split = 0.25, verbose = 0)
  expect_identical(h2$params$samples, 75L) # the last 25% held out
  expect_true(all(c("val_loss", "val_mae") %in% names(h2$metrics)))
  # every fit option of the runtime has its R argument (runtime/spec.py OPTIONS)
  h3 <- m |> fit(x, y, epochs = 1, validation_split = 0.25, validation_batch_size = 5,
                 verbose = 0)
  expect_true("val_loss" %in% names(h3$metrics))
  expect_error(m |> fit(x, y, epochs = 1, validation_batch_size = 0, verbose = 0),
               "validation_batch_size")
})

test_that("R callbacks: 1-based epochs, logs as named lists, batch hooks, stop_training", {
  skip_if_no_python()
  set.seed(3)
  x <- matrix(stats::rnorm(80), 40, 2)
  y <- rowSums(x)
  m <- model_sequential(input_shape = 2) |> layer_dense(1)
  m |> compile(optimizer = "adam", loss = "mse", metrics = "mae")
  epochs_seen <- integer()
  losses <- numeric()
  batches <- 0L
  began <- ended <- 0L
  starts <- integer()
  thread_ok <- logical()
  threading <- tb_import("threading")
  main_thread <- threading$get_ident()
  fit_threads <- numeric()
  # a Python callback records the thread the training loop runs on
  py_cb <- tb_eval(paste0(
    "__import__('tensorbridge').layers.LambdaCallback(on_epoch_end=lambda e, logs: ",
    "__import__('builtins').__dict__.setdefault('_tb_fit_threads', []).append(",
    "__import__('threading').get_ident()))"
  ))
  cb <- callback_lambda(
    on_epoch_begin = function(epoch, logs) starts <<- c(starts, epoch),
    on_epoch_end = function(epoch, logs) {
      epochs_seen <<- c(epochs_seen, epoch)
      losses <<- c(losses, logs$loss)
      thread_ok <<- c(thread_ok, is.list(logs) && identical(names(logs), c("loss", "mae")) &&
                        identical(threading$get_ident(), main_thread)) # R's main thread
    },
    on_batch_end = function(batch, logs) {
      batches <<- batches + 1L
      stopifnot(batch >= 1L, batch <= 4L)
    },
    on_train_begin = function(logs) began <<- began + 1L,
    on_train_end = function(logs) ended <<- ended + 1L
  )
  plain <- numeric()
  h <- m |> fit(x, y, epochs = 3, batch_size = 10, verbose = 0,
                callbacks = list(cb, function(epoch, logs) plain[epoch] <<- logs$mae, py_cb))
  fit_threads <- unlist(tb_eval("__import__('builtins').__dict__.pop('_tb_fit_threads')"))
  expect_length(fit_threads, 3L)
  expect_false(any(fit_threads == main_thread)) # the loop ran on a worker thread
  expect_identical(epochs_seen, 1:3)
  expect_identical(starts, 1:3)
  expect_identical(losses, h$metrics$loss)
  expect_identical(plain, h$metrics$mae)
  expect_true(all(thread_ok))
  expect_identical(batches, 12L) # 3 epochs x 4 batches
  expect_identical(c(began, ended), c(1L, 1L))
  # stop from a hook: model$stop_training <- TRUE
  h2 <- m |> fit(x, y, epochs = 10, verbose = 0, callbacks = list(
    callback_lambda(on_epoch_end = function(epoch, logs) if (epoch == 2) m$stop_training <- TRUE)
  ))
  expect_identical(h2$epoch, 1:2)
  expect_output(print(h2), "stopped early \\(of 10\\)")
  # a named list of hook functions works as a callback too
  n <- 0L
  m |> fit(x, y, epochs = 2, verbose = 0, callbacks = list(on_epoch_end = function(e, l) n <<- n + 1L))
  expect_identical(n, 2L)
})

test_that("an error in an R callback stops fit with that R error; the model stays usable", {
  skip_if_no_python()
  x <- matrix(stats::rnorm(40), 20, 2)
  y <- x[, 1]
  m <- model_sequential(input_shape = 2) |> layer_dense(1, dtype = "float64")
  m |> compile(optimizer = optimizer_sgd(0.1), loss = "mse")
  w0 <- get_weights(m)
  done <- integer()
  err <- tryCatch(
    m |> fit(x, y, epochs = 5, batch_size = 5, verbose = 0, callbacks = list(callback_lambda(
      on_epoch_end = function(epoch, logs) {
        done <<- c(done, epoch)
        if (epoch == 2) stop("boom at epoch ", epoch)
      }
    ))),
    error = function(e) e
  )
  expect_s3_class(err, "error")
  expect_identical(conditionMessage(err), "boom at epoch 2")
  expect_identical(done, 1:2) # training stopped there
  w1 <- get_weights(m)
  expect_false(isTRUE(all.equal(w0, w1))) # two epochs of training were kept
  pred <- predict(m, x)
  expect_true(all(is.finite(pred)))
  # a custom condition class survives the trip through Python
  cond <- structure(class = c("my_stop", "error", "condition"),
                    list(message = "custom stop", call = NULL))
  expect_error(
    m |> fit(x, y, epochs = 2, verbose = 0, callbacks = list(function(epoch, logs) stop(cond))),
    class = "my_stop"
  )
  # and the model trains normally afterwards
  expect_s3_class(m |> fit(x, y, epochs = 1, verbose = 0), "tb_history")
})

test_that("early stopping, restore_best_weights, learning-rate schedules, terminate on NaN", {
  skip_if_no_python()
  x <- matrix(stats::rnorm(40), 20, 2)
  y <- x[, 1]
  m <- model_sequential(input_shape = 2) |> layer_dense(1, dtype = "float64")
  # learning rate 0: the loss never improves, so patience 0 stops at the second epoch
  m |> compile(optimizer = optimizer_sgd(0), loss = "mse")
  # (no shuffling: the same batches give bit-identical epoch losses)
  h <- m |> fit(x, y, epochs = 10, verbose = 0, shuffle = FALSE,
                callbacks = list(callback_early_stopping(monitor = "loss", patience = 0)))
  expect_identical(h$epoch, 1:2)
  h <- m |> fit(x, y, epochs = 10, verbose = 0, shuffle = FALSE,
                callbacks = list(callback_early_stopping(monitor = "loss", patience = 3)))
  expect_identical(h$epoch, 1:4)
  # a run that diverges from epoch 3 (the schedule raises the rate): early stopping on
  # val_loss stops after two epochs without improvement and restore_best_weights puts back
  # the weights of the end of epoch 2
  m2 <- model_sequential(input_shape = 2) |> layer_dense(1, dtype = "float64")
  set_weights(m2, list(matrix(c(0.5, 0.5), 2), 0))
  best <- NULL
  m2 |> compile(optimizer = optimizer_sgd(0.01), loss = "mse")
  lr_seen <- numeric()
  sched <- callback_learning_rate_scheduler(function(epoch, lr) {
    lr_seen <<- c(lr_seen, lr)
    if (epoch <= 2) 0.01 else 5
  })
  snap <- callback_lambda(on_epoch_end = function(epoch, logs) if (epoch == 2) best <<- get_weights(m2))
  h2 <- m2 |> fit(x, y, epochs = 10, batch_size = 20, shuffle = FALSE, verbose = 0,
                  validation_data = list(x, y), callbacks = list(
    sched, snap,
    callback_early_stopping(monitor = "val_loss", patience = 2, restore_best_weights = TRUE)
  ))
  expect_identical(h2$epoch, 1:4)
  expect_identical(lr_seen, c(0.01, 0.01, 0.01, 5))
  expect_identical(h2$metrics$learning_rate, c(0.01, 0.01, 5, 5))
  expect_lt(h2$metrics$val_loss[2], h2$metrics$val_loss[1])
  expect_gt(h2$metrics$val_loss[4], h2$metrics$val_loss[2])
  expect_identical(get_weights(m2), best)
  # one-argument schedules work too
  m3 <- model_sequential(input_shape = 2) |> layer_dense(1)
  m3 |> compile(optimizer = "sgd", loss = "mse")
  h3 <- m3 |> fit(x, y, epochs = 3, verbose = 0,
                  callbacks = list(callback_learning_rate_scheduler(function(epoch) 0.1 / epoch)))
  expect_equal(h3$metrics$learning_rate, 0.1 / (1:3), tolerance = 1e-12)
  # NaN loss stops training at once (NumPy's overflow warnings, raised on fit's worker
  # thread, are filtered meanwhile)
  tb_import("warnings")$filterwarnings("ignore", message = "overflow|invalid value")
  on.exit(tb_eval("lambda: __import__('warnings').filters.pop(0)")(), add = TRUE)
  m4 <- model_sequential(input_shape = 2) |> layer_dense(1, dtype = "float64")
  m4 |> compile(optimizer = optimizer_sgd(1e6), loss = "mse")
  h4 <- capture.output(res <- m4 |> fit(x * 1e3, y, epochs = 50, batch_size = 2, verbose = 0,
                                        callbacks = list(callback_terminate_on_nan())))
  expect_lt(length(res$epoch), 50L)
})

test_that("verbose output goes through R's console", {
  skip_if_no_python()
  x <- matrix(stats::rnorm(40), 20, 2)
  y <- x[, 1]
  m <- model_sequential(input_shape = 2) |> layer_dense(1)
  m |> compile(optimizer = "sgd", loss = "mse", metrics = "mae")
  out <- capture.output(m |> fit(x, y, epochs = 2, verbose = 2))
  expect_identical(length(grep("^Epoch [12]/2 - .*loss: [0-9.]+ - mae: [0-9.]+", out)), 2L)
  out1 <- capture.output(m |> fit(x, y, epochs = 2, verbose = 1))
  expect_true(any(grepl("Epoch 1/2", out1)))
  expect_true(any(grepl("loss: ", out1)))
  expect_silent(m |> fit(x, y, epochs = 1, verbose = 0))
  old <- options(tensorbridge.verbose = 2)
  on.exit(options(old))
  expect_output(m |> fit(x, y, epochs = 1), "Epoch 1/1")
})

test_that("dropout is active in fit and off in predict/evaluate; classification with accuracy", {
  skip_if_no_python()
  set.seed(9)
  n <- 300
  x <- matrix(stats::rnorm(n * 2), n, 2)
  cls <- as.integer(x[, 1] > 0) + as.integer(x[, 2] > 0) # classes 0, 1, 2
  m <- model_sequential(input_shape = 2) |>
    layer_dense(16, activation = "relu", kernel_initializer = initializer_he_normal(seed = 1)) |>
    layer_dropout(0.2, seed = 4) |>
    layer_dense(3, activation = "softmax", kernel_initializer = initializer_glorot_uniform(seed = 2))
  m |> compile(optimizer = optimizer_adam(0.02), loss = "sparse_categorical_crossentropy",
               metrics = "accuracy")
  h <- m |> fit(x, cls, epochs = 40, batch_size = 32, verbose = 0, seed = 1)
  expect_identical(names(h$metrics), c("loss", "accuracy"))
  p1 <- predict(m, x)
  expect_identical(predict(m, x), p1) # no dropout when predicting
  # three float32 softmax outputs (ulps of exp and the division) summed
  expect_close(rowSums(p1), rep(1, n), dtype = "float32", n = 3, ulps = 32)
  acc <- mean(max.col(p1) - 1L == cls)
  ev <- evaluate(m, x, cls)
  expect_equal(ev[["accuracy"]], acc, tolerance = 1e-6)
  expect_gt(acc, 0.9)
  # one-hot targets with categorical cross-entropy and a loss object
  onehot <- diag(3)[cls + 1L, ]
  m |> compile(optimizer = optimizer_adam(0.01), loss = loss_categorical_crossentropy(),
               metrics = list(metric_categorical_accuracy()))
  ev2 <- evaluate(m, x, onehot)
  expect_equal(ev2[["categorical_accuracy"]], acc, tolerance = 1e-6)
})

test_that("a frozen layer (layer$trainable <- FALSE) keeps its weights while the rest trains", {
  skip_if_no_python()
  x <- matrix(stats::rnorm(60), 20, 3)
  y <- rowSums(x)
  m <- model_sequential(input_shape = 3) |>
    layer_dense(4, name = "frozen") |>
    layer_dense(1, name = "free")
  frozen <- get_layer(m, name = "frozen")
  frozen$trainable <- FALSE
  expect_false(frozen$trainable)
  m |> compile(optimizer = optimizer_sgd(0.05), loss = "mse")
  before <- get_weights(m)
  m |> fit(x, y, epochs = 2, verbose = 0)
  after <- get_weights(m)
  expect_identical(after[1:2], before[1:2])
  expect_false(isTRUE(all.equal(after[3:4], before[3:4])))
})
