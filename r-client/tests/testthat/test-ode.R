# ode_solve(): R functions as derivatives, tensors and lazy arrays, against exact solutions.

test_that("ode_solve integrates an R derivative to the exact solution", {
  decay <- function(y, t, k) -k * y
  times <- seq(0, 2, by = 0.5)
  y <- as.array(ode_solve(decay, c(1, 2), times, k = 0.7, rtol = 1e-9, atol = 1e-9))
  expect_equal(dim(y), c(5L, 2L))
  expect_equal(y, outer(exp(-0.7 * times), c(1, 2)), tolerance = 1e-7)
  osc <- function(y, t, w) c(y[2], -w * w * y[1])
  z <- as.array(ode_solve(osc, c(1, 0), c(1, 2, 3), w = 1.5, t0 = 0, rtol = 1e-6, atol = 1e-6,
                          method = "rosenbrock"))
  expect_equal(z[, 1], cos(1.5 * c(1, 2, 3)), tolerance = 1e-3)
})

test_that("ode_solve is differentiable with grad()", {
  times <- c(1, 2)
  loss <- function(k) sum(ode_solve(function(y, t, k) -k * y, 1.5, times, k = k, t0 = 0,
                                    rtol = 1e-10, atol = 1e-12))
  g <- as.array(grad(loss)(0.4))
  expect_equal(as.numeric(g), sum(-times * 1.5 * exp(-0.4 * times)), tolerance = 1e-7)
})

test_that("ode_solve in a model gives a lazy array that opt() fits", {
  times <- c(1, 2, 3, 4)
  obs <- 2 * exp(-0.6 * times)
  k <- normal(1, 1, truncation = c(0, Inf))
  y <- ode_solve(function(y, t, k) -k * y, 2, times, k = k, t0 = 0)
  expect_equal(dim(y), c(4L, 1L))
  distribution(obs) <- normal(y, 0.01)
  fit <- opt(model(k))
  expect_equal(as.numeric(fit$par$k), 0.6, tolerance = 1e-3)
})

test_that("ode_solve's errors name the argument", {
  expect_error(ode_solve(function(y, t) -y, 1, c(0, 1, 1)), "strictly increasing")
  expect_error(ode_solve(function(y, t) c(y, y), 1, c(0, 1)), "must return 1 rates")
  expect_error(ode_solve(1, 1, c(0, 1)), "derivative must be a function")
})
