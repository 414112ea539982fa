# A keras-for-R user's walkthrough: each test pins a bug found that way.

iris_model <- function() {
  m <- model_sequential(input_shape = 4) |>
    layer_dense(8, activation = "relu", kernel_initializer = initializer_glorot_uniform(seed = 1)) |>
    layer_dense(3, activation = "softmax", kernel_initializer = initializer_glorot_uniform(seed = 2))
  m |> compile(loss = "sparse_categorical_crossentropy", optimizer = "adam",
               metrics = "accuracy")
  m
}

test_that("iris end to end: fit, predict, evaluate, save/load", {
  skip_if_no_python()
  x <- as.matrix(iris[, 1:4]); y <- as.integer(iris$Species) - 1L
  m <- iris_model()
  h <- fit(m, x, y, epochs = 3, batch_size = 16, verbose = 0)
  expect_identical(nrow(as.data.frame(h)), 3L)
  p <- predict(m, x)
  expect_identical(dim(p), c(150L, 3L))
  expect_equal(unname(rowSums(p)), rep(1, 150), tolerance = 1e-5)
  e <- evaluate(m, x, y)
  expect_named(e, c("loss", "accuracy"))
  f <- tempfile(); on.exit(unlink(f, recursive = TRUE))
  save_model_tb(m, f)
  expect_equal(predict(load_model_tb(f), x), p)
})

test_that("class ids out of range are an error, not a loss of 0", {
  skip_if_no_python()
  x <- as.matrix(iris[, 1:4]); y <- as.integer(iris$Species) - 1L
  m <- iris_model()
  expect_error(evaluate(m, x, y + 5L), "class ids must be whole numbers from 0 to 2")
  expect_error(fit(m, x, as.integer(iris$Species), epochs = 1, verbose = 0),
               "got values from 1 to 3")
  expect_error(fit(m, x, y - 1L, epochs = 1, verbose = 0), "got values from -1 to 1")
})

test_that("an unknown metric is called a metric", {
  skip_if_no_python()
  m <- model_sequential(input_shape = 4) |> layer_dense(3)
  expect_error(compile(m, loss = "mse", optimizer = "adam", metrics = "nope"),
               "unknown metric 'nope'")
})

test_that("data frames and factors get messages that say what to give", {
  skip_if_no_python()
  m <- iris_model()
  y <- as.integer(iris$Species) - 1L
  expect_error(fit(m, iris, y, epochs = 1, verbose = 0),
               "x is a data frame with non-numeric columns \\(Species\\)")
  expect_error(fit(m, as.matrix(iris[, 1:4]), iris$Species, epochs = 1, verbose = 0),
               "y is a factor; give class ids from 0 \\(as.integer\\(y\\) - 1L\\)")
  h <- fit(m, iris[, 1:4], y, epochs = 1, verbose = 0)     # numeric data frames are fine
  expect_s3_class(h, "tb_history")
})

test_that("a lone wrong value for units/rate names that argument", {
  skip_if_no_python()
  expect_error(layer_dense("a"), "^units must be a positive whole number, not \"a\"$")
  expect_error(layer_dropout("a"), "^rate must be a number in \\[0, 1\\), not \"a\"$")
  expect_error(layer_dense(TRUE), "units must be a positive whole number, not TRUE")
  expect_s3_class(layer_dense(4), "tb_layer")
})

test_that("an R callback that errors stops fit with that error; the model still works", {
  skip_if_no_python()
  x <- as.matrix(iris[, 1:4]); y <- as.integer(iris$Species) - 1L
  m <- iris_model()
  expect_error(
    fit(m, x, y, epochs = 3, verbose = 0,
        callbacks = list(callback_lambda(on_epoch_end = function(epoch, logs) stop("boom")))),
    "boom"
  )
  expect_identical(dim(predict(m, x[1:2, ])), c(2L, 3L))
  expect_identical(nrow(as.data.frame(fit(m, x, y, epochs = 1, verbose = 0))), 1L)
})
