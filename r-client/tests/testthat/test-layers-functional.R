# The functional API: layer_input(), layers called on symbolic tensors, merge layers,
# several inputs and outputs.

test_that("a functional model computes what its graph says (two inputs, merges)", {
  skip_if_no_python()
  a <- layer_input(shape = 3, dtype = "float64", name = "a")
  b <- layer_input(shape = 3, dtype = "float64", name = "b")
  s <- layer_add(list(a, b))
  d <- layer_subtract(list(a, b))
  p <- layer_multiply(list(a, b))
  v <- layer_average(list(a, b))
  cat_ <- layer_concatenate(list(s, d, p, v)) # 12 features
  expect_identical(unlist(cat_$shape), 12L)
  out <- cat_ |> layer_dense(2, dtype = "float64", name = "head")
  m <- model_functional(inputs = list(a, b), outputs = out)
  expect_s3_class(m, "tb_model")
  set.seed(4)
  kernel <- matrix(stats::rnorm(24), 12, 2)
  set_weights(m, list(kernel, c(0.1, 0.2)))
  xa <- matrix(stats::rnorm(12), 4, 3)
  xb <- matrix(stats::rnorm(12), 4, 3)
  feats <- cbind(xa + xb, xa - xb, xa * xb, (xa + xb) / 2)
  expected <- feats %*% kernel + matrix(c(0.1, 0.2), 4, 2, byrow = TRUE)
  expect_equal(predict(m, list(xa, xb)), expected, tolerance = 1e-13)
  expect_equal(predict(m, list(b = xb, a = xa)), expected, tolerance = 1e-13) # by input name
  expect_match(format(summary(m)), "head \\(Dense\\)\\s+\\(None, 2\\)\\s+26")
  # concatenation along a positive (1-based) axis: axis 2 is the features axis
  c2 <- layer_concatenate(list(a, b), axis = 2)
  expect_identical(unlist(c2$shape), 6L)
  expect_error(model_functional(inputs = 1, outputs = out), "inputs must be a symbolic tensor")
})

test_that("tb_model() is model_functional(); multi-output models train with per-output losses", {
  skip_if_no_python()
  inp <- layer_input(shape = 4)
  h <- inp |> layer_dense(8, activation = "tanh")
  out1 <- h |> layer_dense(1, name = "reg")
  out2 <- h |> layer_dense(3, activation = "softmax", name = "cls")
  m <- tb_model(inputs = inp, outputs = list(out1, out2))
  expect_s3_class(m, "tb_model")
  m |> compile(optimizer = optimizer_adam(0.01),
               loss = list(reg = "mse", cls = "sparse_categorical_crossentropy"),
               metrics = list(cls = "accuracy"), loss_weights = c(1, 0.5))
  set.seed(1)
  x <- matrix(stats::rnorm(200), 50, 4)
  yr <- x[, 1]
  yc <- as.integer(x[, 2] > 0)
  hist <- m |> fit(x, list(reg = yr, cls = yc), epochs = 3, verbose = 0)
  expect_true(all(c("loss", "cls_accuracy") %in% names(hist$metrics)))
  pred <- predict(m, x)
  expect_true(is.list(pred))
  expect_identical(lapply(pred, dim), list(c(50L, 1L), c(50L, 3L)))
  ev <- evaluate(m, x, list(reg = yr, cls = yc))
  expect_identical(names(ev)[[1]], "loss")
})

test_that("layers compose with layer objects made beforehand (shared layers)", {
  skip_if_no_python()
  shared <- layer_dense(units = 2, kernel_initializer = initializer_ones(), use_bias = FALSE,
                        dtype = "float64")
  a <- layer_input(shape = 3, dtype = "float64")
  b <- layer_input(shape = 3, dtype = "float64")
  out <- layer_add(list(shared(a), shared(b)))
  m <- model_functional(list(a, b), out)
  expect_identical(length(get_weights(m)), 1L) # one kernel, used twice
  xa <- matrix(1:6, 2) + 0
  xb <- matrix(6:1, 2) + 0
  expect_equal(predict(m, list(xa, xb)), cbind(rowSums(xa + xb), rowSums(xa + xb)))
})
