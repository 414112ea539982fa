# Constructors of layers, initializers, optimizers, losses, metrics: what they build in the
# runtime, and the argument checks (errors that name the argument).

py_layers <- function() tb_import("tensorbridge.runtime.layers")

test_that("integer arguments are validated in R with messages naming the argument", {
  skip_if_no_python()
  expect_error(layer_dense(units = -3), "units must be a positive whole number, not -3", fixed = TRUE)
  expect_error(layer_dense(units = 2.5), "units must be a positive whole number, not 2.5", fixed = TRUE)
  expect_error(layer_dense(units = "a"), "units must be a positive whole number, not \"a\"", fixed = TRUE)
  expect_error(layer_dense(units = c(1, 2)), "units must be a positive whole number, not a double vector of length 2", fixed = TRUE)
  expect_error(layer_dense(units = NA), "units must be a positive whole number, not NA", fixed = TRUE)
  expect_error(layer_dense(), "units is missing")
  expect_error(initializer_glorot_uniform(seed = -1), "seed must be a non-negative whole number, not -1", fixed = TRUE)
  expect_error(layer_dropout(rate = 1), "rate must be a number in [0, 1), not 1", fixed = TRUE)
  expect_error(layer_embedding(input_dim = 0, output_dim = 3), "input_dim must be a positive whole number, not 0", fixed = TRUE)
  expect_error(model_sequential(input_shape = c(4, -1)), "input_shape[2] must be a positive whole number, not -1", fixed = TRUE)
  expect_error(layer_dense(units = 2, activation = tanh), "activation must be the name of an activation function")
  expect_error(optimizer_sgd(momentum = 2), "momentum must be a number in [0, 1], not 2", fixed = TRUE)
  expect_error(optimizer_adam(learning_rate = -1), "learning_rate must be a number >= 0, not -1", fixed = TRUE)
  expect_error(optimizer_sgd(clipnorm = 1, clipvalue = 1), "at most one of clipnorm")
  expect_error(callback_early_stopping(patience = -1), "patience must be a non-negative whole number, not -1", fixed = TRUE)
  expect_error(loss_huber(delta = 0), "delta must be a number > 0, not 0", fixed = TRUE)
  expect_error(layer_concatenate(axis = 0), "axis must be positive")
  expect_error(layer_add(list(1, 2)), "inputs must be a list of at least two symbolic tensors")
  # an unknown activation name is the runtime's error, listing the known ones
  expect_error(layer_dense(units = 2, activation = "relu6"), "unknown activation 'relu6'.*relu")
})

test_that("fit/predict arguments are validated before any work", {
  skip_if_no_python()
  model <- model_sequential(input_shape = 2) |> layer_dense(1)
  model |> compile(optimizer = "sgd", loss = "mse")
  x <- matrix(1:8 / 8, 4)
  y <- c(1, 2, 3, 4)
  expect_error(fit(model, x, y, epochs = 0), "epochs must be a positive whole number, not 0", fixed = TRUE)
  expect_error(fit(model, x, y, batch_size = 1.5), "batch_size must be a positive whole number, not 1.5", fixed = TRUE)
  expect_error(fit(model, x, y, validation_split = 1), "validation_split must be a number in [0, 1)", fixed = TRUE)
  expect_error(fit(model, x, y, epochs = 2, initial_epoch = 2), "initial_epoch (2) must be less than epochs (2)", fixed = TRUE)
  expect_error(fit(model, x, y, verbose = 3), "verbose must be 0, 1, 2")
  expect_error(fit(model, x, y, bacth_size = 2), "unknown argument(s): bacth_size", fixed = TRUE)
  expect_error(fit(model, x, y, callbacks = list(1)), "callbacks[[1]] must be a callback", fixed = TRUE)
  x_na <- x
  x_na[2, 1] <- NA
  expect_error(fit(model, x_na, y), "x holds NA")
  expect_error(predict(model, letters), "x must be a numeric matrix")
  expect_error(predict(42, x), "no applicable method|expected a model")
  expect_error(compile(model, optimizer = "sgd"), "give a loss")
  # shape errors come from the runtime and name the input and both shapes
  expect_error(predict(model, matrix(1, 3, 5)), "expects data of shape \\(None, 2\\), got \\(3, 5\\)")
})

test_that("layers compose with models, symbolic tensors, data, or nothing", {
  skip_if_no_python()
  d <- layer_dense(units = 3, name = "lonely")
  expect_s3_class(d, "tb_layer")
  expect_output(print(d), "Dense name='lonely'")
  expect_identical(tensorbridge:::py_type_name(d), "Dense")
  expect_s3_class(layer_dense(4), "tb_layer") # a lone number is the units
  expect_s3_class(layer_dropout(0.5), "tb_layer")
  expect_s3_class(layer_activation("relu"), "tb_layer")
  emb <- layer_embedding(10, 3)
  expect_identical(emb$input_dim, 10L)
  expect_identical(emb$output_dim, 3L)
  # applied to data at once: an R array back, rows still samples
  act <- layer_activation(matrix(c(-1, 2, -3, 4, 5, -6), 2), activation = "relu")
  expect_identical(act, matrix(c(0, 2, 0, 4, 5, 0), 2))
  flat <- layer_flatten(array(1:24 + 0.5, c(2, 3, 4)))
  # row-major flattening (as Python and TF.js): sample 1's values in C order
  expect_identical(dim(flat), c(2L, 12L))
  expect_identical(flat[1, ], as.vector(t(matrix(1:24 + 0.5, 2)[1, , drop = FALSE])) * 0 +
                     as.vector(aperm(array(1:24 + 0.5, c(2, 3, 4))[1, , , drop = FALSE], c(1, 3, 2))))
  model <- model_sequential(input_shape = 4)
  expect_output(print(model), "not built yet")
  out <- model |> layer_dense(2)
  expect_identical(out, model)
  expect_identical(length(model$layers), 1L)
  inp <- layer_input(shape = 4)
  expect_s3_class(inp, "tb.SymbolicTensor")
  expect_identical(unlist(inp$shape), 4L)
  h <- inp |> layer_dense(7)
  expect_identical(unlist(h$shape), 7L)
  f <- model_functional(inp, h)
  expect_error(f |> layer_dense(1), "only to a sequential model")
})

test_that("model_sequential(input_shape =) reaches the first layer; layers = list(...) works", {
  skip_if_no_python()
  m <- model_sequential(input_shape = c(3, 2)) |> layer_flatten() |> layer_dense(5, dtype = "float64")
  s <- format(summary(m))
  expect_match(s, "flatten.*\\(None, 6\\)")
  expect_match(s, "\\(None, 5\\)\\s+35")
  expect_output(print(summary(m)), "Total params: 35")
  m2 <- model_sequential(input_shape = 4, layers = list(layer_dense(units = 3), layer_dense(units = 1)))
  expect_identical(length(m2$layers), 2L)
  expect_match(format(m2), "Total params: 19")
  m2b <- model_sequential(input_shape = 3, layers = list(layer_dense(units = 2, dtype = "float64")))
  expect_identical(m2b$inputs[[1]]$dtype$name, "float64")
  m2c <- model_sequential(input_shape = 3, layers = list(layer_embedding(input_dim = 5, output_dim = 2)))
  expect_identical(m2c$inputs[[1]]$dtype$name, "int32")
  expect_error(model_sequential(layers = list(1)), "layers must be a list of layers")
  # an embedding first layer gets an integer input
  m3 <- model_sequential(input_shape = 5) |> layer_embedding(20, 4) |> layer_flatten()
  expect_identical(m3$inputs[[1]]$dtype$name, "int32")
  ids <- matrix(c(0L, 3L, 19L, 7L, 2L, 1L, 1L, 1L, 1L, 1L), 2, byrow = TRUE)
  out <- predict(m3, ids)
  table <- get_weights(m3)[[1]]
  expect_identical(dim(table), c(20L, 4L))
  expect_equal(out[1, 1:4], table[1, ], tolerance = 1e-7)   # id 0 -> row 1
  expect_equal(out[1, 9:12], table[20, ], tolerance = 1e-7) # id 19 -> row 20
})

test_that("seeded initializers give the Python runtime's weights", {
  skip_if_no_python()
  L <- py_layers()
  for (nm in c("glorot_uniform", "glorot_normal", "he_normal", "he_uniform",
               "lecun_normal", "lecun_uniform", "truncated_normal")) {
    r_init <- get(paste0("initializer_", nm))(seed = 7)
    expect_s3_class(r_init, "tb_initializer")
    py_init <- L$initializers$get(list(class_name = nm, config = list(seed = 7L)))
    shape <- list(3L, 4L)
    expect_identical(r_init(shape, "float64"), py_init(shape, "float64"), info = nm)
  }
  m1 <- model_sequential(input_shape = 3) |> layer_dense(4, kernel_initializer = initializer_he_normal(seed = 3))
  m2 <- model_sequential(input_shape = 3) |> layer_dense(4, kernel_initializer = initializer_he_normal(seed = 3))
  expect_identical(get_weights(m1), get_weights(m2))
  z <- model_sequential(input_shape = 3) |>
    layer_dense(2, kernel_initializer = initializer_zeros(), bias_initializer = initializer_ones())
  expect_identical(get_weights(z), list(matrix(0, 3, 2), c(1, 1)))
  k <- get_weights(model_sequential(input_shape = 2) |>
                     layer_dense(2, kernel_initializer = initializer_constant(0.25)))[[1]]
  expect_identical(k, matrix(0.25, 2, 2))
  u <- get_weights(model_sequential(input_shape = 50) |>
                     layer_dense(40, kernel_initializer = initializer_random_uniform(-0.1, 0.3, seed = 1)))[[1]]
  expect_true(min(u) >= -0.1 && max(u) < 0.3)
  expect_gt(max(u) - min(u), 0.35)
  vs <- initializer_variance_scaling(2, "fan_avg", "uniform", seed = 2)
  expect_identical(vs$get_config()$mode, "fan_avg")
})

test_that("optimizers, losses and metrics carry their settings", {
  skip_if_no_python()
  sgd <- optimizer_sgd(0.1, momentum = 0.9, nesterov = TRUE, clipnorm = 1)
  cfg <- sgd$get_config()
  expect_equal(cfg$learning_rate, 0.1)
  expect_equal(cfg$momentum, 0.9)
  expect_true(cfg$nesterov)
  expect_equal(sgd$clipnorm, 1)
  adam <- optimizer_adam(0.02, beta_1 = 0.8, amsgrad = TRUE)
  expect_equal(adam$beta_1, 0.8)
  expect_true(adam$amsgrad)
  rms <- optimizer_rmsprop(rho = 0.5, centered = TRUE)
  expect_equal(rms$rho, 0.5)
  expect_true(rms$centered)
  expect_equal(optimizer_adagrad(initial_accumulator_value = 0.3)$initial_accumulator_value, 0.3)
  sched <- optimizer_sgd(function(step) 1 / step)
  expect_equal(sched$current_learning_rate(), 1)
  sched$iterations <- 3L
  expect_equal(sched$current_learning_rate(), 1 / 4)
  expect_true(loss_binary_crossentropy(from_logits = TRUE)$from_logits)
  expect_identical(loss_huber(2, name = "h")$name, "h")
  expect_identical(loss_sparse_categorical_crossentropy()$name, "sparse_categorical_crossentropy")
  expect_identical(loss_mean_squared_error(reduction = "sum")$reduction, "sum")
  acc <- metric_binary_accuracy(0.3)
  expect_identical(acc$get_config()$threshold, 0.3)
  acc$update_state(matrix(c(1, 0, 1, 0)), matrix(c(0.35, 0.2, 0.25, 0.4)))
  expect_equal(acc$result(), 0.5) # 0.35 > 0.3 right, 0.2 right, 0.25 wrong, 0.4 wrong
  expect_s3_class(metric_categorical_accuracy(), "tb_metric")
  # losses computed in R agree with their definitions
  lf <- loss_mean_absolute_error()
  expect_equal(as.vector(lf(matrix(c(1, 2, 3, 4), 2), as_tensor(matrix(c(1.5, 2, 2, 4), 2)))),
               mean(c(0.5, 0, 1, 0)))
  h <- loss_huber(1)
  expect_equal(as.vector(h(matrix(0, 1, 1), as_tensor(matrix(3, 1, 1)))), 0.5 + 2)
})

test_that("get_weights / set_weights round-trip, with shapes checked", {
  skip_if_no_python()
  m <- model_sequential(input_shape = 3) |> layer_dense(2) |> layer_dense(1)
  w <- get_weights(m)
  expect_identical(lapply(w, dim), list(c(3L, 2L), NULL, c(2L, 1L), NULL))
  expect_identical(length(w[[4]]), 1L) # the bias of one unit: an R vector of length 1
  new <- lapply(w, function(a) a * 0 + 0.5)
  set_weights(m, new)
  expect_identical(get_weights(m), new)
  expect_error(set_weights(m, w[1:3]), "one array per weight: 4, not 3")
  expect_error(set_weights(m, list(matrix(0, 2, 3), w[[2]], w[[3]], w[[4]])),
               "weights\\[\\[1\\]\\] has shape 2 x 3, but the weight dense.*/kernel has shape 3 x 2")
  expect_error(set_weights(m, list(w[[1]], c(1, NA), w[[3]], w[[4]])), "without NA")
  layer <- get_layer(m, index = 2)
  expect_s3_class(layer, "tb_layer")
  set_weights(layer, list(matrix(c(1, 2), 2), 3))
  expect_identical(get_weights(layer), list(matrix(c(1, 2), 2), 3))
  expect_identical(get_layer(m, name = layer$name)$name, layer$name)
  expect_error(get_layer(m, index = 3), "index must be at most 2")
})
