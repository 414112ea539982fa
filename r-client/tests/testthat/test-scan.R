# tb_scan(): R functions as loop steps, on tensors, under grad() and in models.

test_that("tb_scan runs an R step function like an R loop", {
  step <- function(s, e) {
    s <- 0.8 * s + e
    list(s, s * s)
  }
  e <- c(1, -0.5, 2, 0.25)
  out <- tb_scan(step, 0, e)
  s <- 0
  ys <- numeric(0)
  for (v in e) {
    s <- 0.8 * s + v
    ys <- c(ys, s * s)
  }
  expect_equal(as.numeric(as.array(out$carry)), s, tolerance = 1e-12)
  expect_equal(as.numeric(as.array(out$ys)), ys, tolerance = 1e-12)
  rev <- tb_scan(function(c, x) list(c * 2, c), 1, length = 3, reverse = TRUE)
  expect_equal(as.numeric(as.array(rev$ys)), c(4, 2, 1))
})

test_that("tb_scan carries lists and is differentiable with grad()", {
  e <- c(1, 2, -1)
  loss <- function(p) {
    out <- tb_scan(function(c, x) list(list(p * c[[1]] + x, c[[2]] + x), NULL), list(0, 0), e)
    out$carry[[1]]
  }
  p <- 0.3
  expect_equal(as.numeric(as.array(grad(loss)(p))), 2 * p * e[1] + e[2], tolerance = 1e-12)
})

test_that("tb_scan in a model gives lazy arrays that opt() fits", {
  y <- c(0.5, 0.9, 1.1, 0.7, 0.2, -0.1)
  phi <- uniform(-1, 1)
  pred <- tb_scan(function(c, y_prev) list(c, phi * y_prev), 0, as_data(y[1:5]))$ys
  expect_s3_class(pred, "tb_lazy_array")
  y_next <- as_data(y[2:6])
  distribution(y_next) <- normal(pred, 1)
  fit <- opt(model(phi))
  expect_equal(as.numeric(fit$par$phi), sum(y[1:5] * y[2:6]) / sum(y[1:5]^2),
               tolerance = 1e-4)
  # R data as xs: fn uses the parameter phi, so the scan is part of the model all the same
  pred2 <- tb_scan(function(c, y_prev) list(c, phi * y_prev), 0, y[1:5])$ys
  expect_s3_class(pred2, "tb_lazy_array")
  expect_equal(dim(pred2), dim(pred))
})

test_that("tb_scan's errors name the argument", {
  expect_error(tb_scan(1, 0, c(1, 2)), "fn must be a function")
  expect_error(tb_scan(function(c, x) c + x, 0, c(1, 2)), "fn must return list\\(carry, y\\)")
  expect_error(tb_scan(function(c, x) list(c(c, x), x), 0, c(1, 2)), "carry")
  expect_error(tb_scan(function(c, x) list(c, x), 0), "length")
  expect_identical(scan(text = "1 2", quiet = TRUE), c(1, 2))  # base R's scan() still there
})
