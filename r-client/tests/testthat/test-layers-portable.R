# The portable model format (model.json + weights.bin): a model trained and saved from R
# loads back in R and in Python with the same predictions; the committed cross-language
# fixture (tests/fixtures/shared/model_from_r/, written by make_model_from_r.R) agrees.

portable_data <- function() {
  x <- outer(1:12, 1:4, function(i, j) round(sin(0.7 * i + 1.3 * j), 4))
  y <- cbind(round(cos(x[, 1] - x[, 2]), 4), round(x[, 3] * x[, 4], 4))
  list(x = x, y = y)
}

# The model of tests/fixtures/shared/make_model_from_r.R.
portable_model <- function() {
  d <- portable_data()
  model <- model_sequential(input_shape = 4, name = "model_from_r") |>
    layer_dense(6, activation = "tanh", kernel_initializer = initializer_glorot_uniform(seed = 21),
                name = "hidden") |>
    layer_dense(2, kernel_initializer = initializer_glorot_uniform(seed = 22), name = "out")
  model |> compile(optimizer = optimizer_adam(0.05), loss = "mse", metrics = "mae")
  history <- model |> fit(d$x, d$y, epochs = 3, batch_size = 4, shuffle = FALSE, verbose = 0)
  list(model = model, history = history)
}

test_that("a model trained in R is deterministic, and save/load in R predicts the same", {
  skip_if_no_python()
  d <- portable_data()
  first <- portable_model()
  second <- portable_model()
  expect_identical(first$history$metrics, second$history$metrics)
  expect_identical(get_weights(first$model), get_weights(second$model))
  model <- first$model
  pred <- predict(model, d$x)
  dir <- tempfile("tb_model_")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  expect_identical(save_model_tb(model, dir), dir)
  expect_true(all(file.exists(file.path(dir, c("model.json", "weights.bin")))))
  doc <- jsonlite::fromJSON(file.path(dir, "model.json"), simplifyVector = FALSE)
  expect_identical(doc$format, "layers-model")
  expect_identical(doc$modelTopology$class_name, "Sequential")
  entries <- vapply(doc$weightsManifest[[1]]$weights, function(e) e$name, "")
  expect_identical(entries[1:4], c("hidden/kernel", "hidden/bias", "out/kernel", "out/bias"))
  # weights.bin: little-endian float32, row-major: the first entry is hidden/kernel [4, 6]
  raw <- readBin(file.path(dir, "weights.bin"), "double", n = 24, size = 4, endian = "little")
  expect_identical(matrix(raw, 4, 6, byrow = TRUE), get_weights(model)[[1]])

  m2 <- load_model_tb(dir)
  expect_s3_class(m2, "tb_model")
  expect_identical(predict(m2, d$x), pred)
  expect_identical(get_weights(m2), get_weights(model))
  expect_identical(format(summary(m2)), format(summary(model)))
  # the optimizer state came along: one more epoch continues identically
  h1 <- model |> fit(d$x, d$y, epochs = 1, batch_size = 4, shuffle = FALSE, verbose = 0)
  h2 <- m2 |> fit(d$x, d$y, epochs = 1, batch_size = 4, shuffle = FALSE, verbose = 0)
  expect_identical(h2$metrics, h1$metrics)
  expect_identical(predict(m2, d$x), predict(model, d$x))

  # .zip, weights only, compile = FALSE, overwrite = FALSE
  zip <- tempfile(fileext = ".zip")
  on.exit(unlink(zip), add = TRUE)
  save_model_tb(model, zip, include_optimizer = FALSE)
  expect_identical(predict(load_model_tb(zip), d$x), predict(model, d$x))
  expect_error(save_model_tb(model, zip, overwrite = FALSE), "exists")
  wfile <- tempfile("weights_")
  on.exit(unlink(wfile, recursive = TRUE), add = TRUE)
  save_weights_tb(model, wfile)
  fresh <- portable_model()$model
  set_weights(fresh, lapply(get_weights(fresh), function(a) a * 0))
  load_weights_tb(fresh, wfile)
  expect_identical(get_weights(fresh), get_weights(model))
  uncompiled <- load_model_tb(dir, compile = FALSE)
  expect_error(evaluate(uncompiled, d$x, d$y), "must be compiled")
  expect_error(load_model_tb(file.path(dir, "nope")), "does not exist")
})

test_that("Python loads the model R saved and predicts the same numbers", {
  skip_if_no_python()
  d <- portable_data()
  model <- portable_model()$model
  dir <- tempfile("tb_model_")
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  save_model_tb(model, dir)
  py <- tb_eval(paste0(
    "lambda path, x: __import__('tensorbridge').layers.load_model(path)",
    ".predict(__import__('numpy').asarray(x, order='C')).numpy()"
  ))
  expect_identical(py(dir, d$x), predict(model, d$x))
})

test_that("the committed cross-language fixture matches what R computes", {
  skip_if_no_python()
  dir <- fixture_dir()
  if (is.null(dir) || !file.exists(file.path(dir, "model_from_r", "model.json"))) {
    skip("tests/fixtures/shared/model_from_r not found")
  }
  expected <- jsonlite::fromJSON(file.path(dir, "expected_predictions.json"))
  d <- portable_data()
  expect_identical(expected$x, d$x)
  fresh <- portable_model()
  # the fixture was trained on another machine in float32: the tolerance policy for a chained
  # float32 computation (3 epochs x 3 batches, each summing 4 rows x fan-in 6), normwise
  n_fit <- chained_length(3 * 3, 4 * 6)
  for (k in names(expected$history)) {
    want <- unlist(expected$history[[k]])
    expect_close(unlist(fresh$history$metrics[[k]]), want, dtype = "float32", n = n_fit,
                 magnitude = max(abs(want)), info = k)
  }
  loaded <- load_model_tb(file.path(dir, "model_from_r"))
  scale <- max(abs(expected$predictions))
  # the same float32 weights: one forward pass, fan-in at most 6
  expect_close(predict(loaded, expected$x), expected$predictions, dtype = "float32", n = 6,
               magnitude = scale)
  expect_close(predict(fresh$model, expected$x), expected$predictions, dtype = "float32",
               n = n_fit, magnitude = scale)
})
