# The shared, language-neutral fixtures (tests/fixtures/shared/layers_*.json, written by the
# Python runtime): the same model, initial weights, data and optimizer trained from R must
# give the same loss history, final weights and predictions.

replay_fixture <- function(name) {
  skip_if_no_python()
  skip_if_not_installed("jsonlite")
  dir <- fixture_dir()
  if (is.null(dir)) {
    if (identical(Sys.getenv("TENSORBRIDGE_REQUIRE_PYTHON"), "1")) {
      stop("tests/fixtures/shared not found next to the Python checkout")
    }
    skip("shared fixtures not found")
  }
  fx <- jsonlite::fromJSON(file.path(dir, paste0(name, ".json")), simplifyVector = TRUE,
                           simplifyMatrix = TRUE)
  expect_identical(fx$dtype, "float64")
  model <- model_sequential(input_shape = fx$input_shape)
  for (i in seq_len(nrow(fx$layers))) {
    model |> layer_dense(fx$layers$units[[i]], activation = fx$layers$activation[[i]],
                         dtype = "float64")
  }
  # weights: kernels [in][out] arrive as matrices, biases as vectors
  weights <- lapply(fx$initial_weights, function(w) if (is.list(w)) do.call(rbind, w) else w)
  set_weights(model, weights)
  opt <- fx$optimizer
  optimizer <- switch(opt$class,
    sgd = optimizer_sgd(opt$learning_rate, momentum = opt$momentum),
    adam = optimizer_adam(opt$learning_rate, beta_1 = opt$beta_1, beta_2 = opt$beta_2,
                          epsilon = opt$epsilon)
  )
  model |> compile(optimizer = optimizer, loss = fx$loss, metrics = fx$metrics)
  x <- fx$x
  y <- fx$y
  expect_true(is.matrix(x))
  expect_identical(NROW(y), nrow(x))
  history <- model |> fit(x, y, epochs = fx$fit$epochs, batch_size = fx$fit$batch_size,
                          shuffle = fx$fit$shuffle, verbose = 0)
  # the tolerance policy for a chained float64 computation: (epochs x batches) steps, each
  # summing batch_size rows x the widest fan-in, normwise (helper-tolerance.R)
  steps <- fx$fit$epochs * ceiling(nrow(x) / fx$fit$batch_size)
  n <- chained_length(steps, fx$fit$batch_size * max(fx$input_shape, fx$layers$units))
  for (k in names(fx$expected$history)) {
    want <- fx$expected$history[[k]]
    expect_close(history$metrics[[k]], want, n = n, magnitude = max(abs(want)),
                 info = paste(name, k))
  }
  expected_w <- lapply(fx$expected$final_weights,
                       function(w) if (is.list(w)) do.call(rbind, w) else w)
  got_w <- get_weights(model)
  expect_identical(length(got_w), length(expected_w))
  for (i in seq_along(got_w)) {
    e <- expected_w[[i]]
    g <- got_w[[i]]
    if (is.matrix(e)) expect_identical(dim(g), dim(e), info = paste(name, "weight", i))
    expect_close(as.vector(g), as.vector(e), n = n, magnitude = max(abs(e)),
                 info = paste(name, "weight", i))
  }
  pred <- predict(model, x)
  expected_pred <- fx$expected$predictions
  expect_identical(dim(pred), dim(expected_pred))
  expect_close(pred, expected_pred, n = n, magnitude = max(abs(expected_pred)))
}

test_that("layers_linear.json: R training reproduces the Python runtime's numbers", {
  replay_fixture("layers_linear")
})

test_that("layers_mlp.json: R training reproduces the Python runtime's numbers", {
  replay_fixture("layers_mlp")
})
