# greta's variable types from R (ordered_variable, simplex_variable, cholesky_variable),
# array bounds in variable(), and as_data() of a data frame. The bijectors and their
# log-Jacobians are tested in Python (tests/ppl/test_variable_types.py); here: greta's shapes
# and conventions, and draws on each support.

test_that("the variable types have greta's shapes and supports", {
  skip_if_no_python()
  expect_identical(dim(simplex_variable(3)), c(1L, 3L))  # dim = n: a row
  expect_identical(dim(ordered_variable(c(2, 4))), c(2L, 4L))
  expect_identical(dim(cholesky_variable(3)), c(3L, 3L))
  expect_error(ordered_variable(1), "ordered_variable: dim's last dimension must be at least 2")
  expect_error(simplex_variable("a"), "simplex_variable: dim must be")
  expect_error(cholesky_variable(c(2, 3)), "cholesky_variable: dim must be n")
})

test_that("draws of each variable type lie on its support", {
  skip_if_no_python()
  p <- simplex_variable(3)
  counts <- t(c(3, 9, 1))
  distribution(counts) <- multinomial(13, p)
  o <- ordered_variable(3)
  y_o <- c(1, 0, 0.5)
  distribution(y_o) <- normal(t(o), 1)
  U <- cholesky_variable(2)
  y <- matrix(c(0.3, -1.2, 1.5, 0.4, -0.7, 0.9, 2.1, 0.2), ncol = 2)
  distribution(y) <- multivariate_normal(t(c(0, 0)), t(U) %*% U)
  C <- cholesky_variable(2, correlation = TRUE)
  x <- variable(lower = c(0, -Inf), upper = c(1, Inf))
  y_x <- c(0.5, 3)
  distribution(y_x) <- normal(x, c(0.2, 1))
  draws <- mcmc(model(p, o, U, C, x), n_samples = 100, warmup = 100, chains = 1, seed = 3,
                verbose = FALSE)
  d <- as.matrix(draws[[1]])
  pcols <- d[, c("p[1,1]", "p[1,2]", "p[1,3]")]
  expect_true(all(pcols > 0))
  expect_equal(unname(rowSums(pcols)), rep(1, nrow(d)), tolerance = 1e-12)
  ocols <- d[, c("o[1,1]", "o[1,2]", "o[1,3]")]
  expect_true(all(ocols[, 2] > ocols[, 1] & ocols[, 3] > ocols[, 2]))
  # greta's factor is R's chol(): upper triangular, positive diagonal
  expect_true(all(d[, "U[2,1]"] == 0) && all(d[, "U[1,1]"] > 0) && all(d[, "U[2,2]"] > 0))
  expect_true(all(d[, "C[2,1]"] == 0))
  expect_equal(unname(d[, "C[1,2]"]^2 + d[, "C[2,2]"]^2), rep(1, nrow(d)), tolerance = 1e-12)
  expect_true(all(d[, "x[1,1]"] > 0 & d[, "x[1,1]"] < 1))
})

test_that("variable() takes array bounds, in R's column-major order over dim", {
  skip_if_no_python()
  lo <- matrix(c(0, 1, 2, 3), 2, 2)
  v <- variable(lower = lo, upper = lo + 0.5, dim = c(2, 2))
  draws <- mcmc(model(v), n_samples = 20, warmup = 20, chains = 1, seed = 1, verbose = FALSE)
  d <- as.matrix(draws[[1]])
  for (i in 1:2) for (j in 1:2) {
    col <- d[, sprintf("v[%d,%d]", i, j)]
    expect_true(all(col > lo[i, j] & col < lo[i, j] + 0.5))
  }
  expect_error(variable(lower = c(0, 2), upper = c(1, 1)),
               "variable: lower must be less than upper, got lower = 2, upper = 1")
  expect_error(variable(lower = NaN), "variable: lower must be a number or an array of numbers")
})

test_that("as_data() takes a data frame's numeric columns and names the others", {
  skip_if_no_python()
  df <- data.frame(a = 1:3, b = c(0.5, 1, 2), ok = c(TRUE, FALSE, TRUE))
  x <- as_data(df)
  expect_identical(dim(x), c(3L, 3L))
  expect_equal(calculate(x)[[1]], unname(as.matrix(df)) + 0)
  bad <- data.frame(a = 1:2, s = c("u", "v"), f = factor(c("p", "q")))
  expect_error(as_data(bad), "as_data: x is a data frame with non-numeric columns: s, f")
})
