# Issue 16, bugs: a failed Cholesky inside a proposal is a divergence, never an abort; building
# chol() of a variable runs no failing kernel; calculate() simulates new stochastic arrays
# given posterior draws; greta's argument rules for uniform() and lkj_correlation().

test_that("mcmc samples an LKJ prior for seeds 1-5 and matches its analytic marginal", {
  skip_if_no_python()
  eta <- 4
  for (seed in 1:5) {
    r <- lkj_correlation(eta, dimension = 2)
    draws <- mcmc(model(r), n_samples = 300, warmup = 300, chains = 2, seed = seed,
                  verbose = FALSE)
    x <- unlist(lapply(draws, function(ch) ch[, "r[1,2]"]))
    expect_true(all(abs(x) < 1))
  }
  # r = 2 * Beta(eta, eta) - 1: mean 0, E r^2 = 1 / (2 eta + 1), E r^4 = 3 / ((2 eta + 1)(2 eta + 3))
  r <- lkj_correlation(eta, dimension = 2)
  draws <- mcmc(model(r), n_samples = 1000, warmup = 500, chains = 4, seed = 11,
                verbose = FALSE)
  x <- unlist(lapply(draws, function(ch) ch[, "r[1,2]"]))
  ess <- sum(coda::effectiveSize(coda::as.mcmc.list(lapply(draws, function(ch)
    coda::mcmc(ch[, "r[1,2]"])))))
  m2 <- 1 / (2 * eta + 1)
  m4 <- 3 / ((2 * eta + 1) * (2 * eta + 3))
  expect_lt(abs(mean(x)) / sqrt(m2 / ess), 4.5)
  expect_lt(abs(mean(x^2) - m2) / sqrt((m4 - m2^2) / ess), 4.5)
})

test_that("chol() of a variable builds, and calculate() gives the factor", {
  skip_if_no_python()
  x <- variable(dim = c(2, 2))
  l <- chol(x)
  expect_equal(dim(l), c(2L, 2L))
  v <- matrix(c(4, 2, 2, 3), 2, 2)
  got <- calculate(l, values = list(x = v))
  expect_equal(unname(as.matrix(got[[1]])), chol(v), tolerance = 1e-12)
})

test_that("calculate() simulates a new stochastic array given each posterior draw", {
  skip_if_no_python()
  a <- normal(0, 1)
  y <- as_data(c(0.5, 1, 0.8))
  distribution(y) <- normal(a, 1)
  draws <- mcmc(model(a), n_samples = 50, warmup = 100, chains = 2, seed = 1, verbose = FALSE)
  b <- normal(a, 0.001)
  sims <- calculate(b, values = draws, nsim = 10)
  expect_equal(length(sims[[1]]), 10L)
  a_draws <- unlist(lapply(draws, function(ch) ch[, "a"]))
  expect_true(all(vapply(sims[[1]], function(s) min(abs(s - a_draws)), 0) < 6e-3))
  expect_warning(calculate(b, values = draws, nsim = 250),
                 "250 is more than the 100 posterior draws")
})

test_that("uniform bounds must be finite and lkj_correlation's eta one number", {
  skip_if_no_python()
  expect_error(uniform(-Inf, Inf), "min must be finite")
  expect_error(uniform(0, Inf), "max must be finite")
  expect_error(lkj_correlation(c(3, 3)), "eta must be a single number")
  expect_error(lkj_correlation(3, dimension = c(2, 2)), "dimension")
  expect_equal(dim(lkj_correlation(3, dimension = 3)), c(3L, 3L))
})

test_that("a multivariate normal with an LKJ correlation and scales samples", {
  skip_if_no_python()
  set.seed(3)
  z <- matrix(rnorm(120), 60, 2)
  y <- z %*% chol(matrix(c(1, 0.6, 0.6, 1), 2)) %*% diag(c(1.5, 0.7))
  corr <- lkj_correlation(2, dimension = 2)
  sd <- lognormal(0, 1, dim = 2)
  Sigma <- corr * (sd %*% t(sd))
  distribution(y) <- multivariate_normal(matrix(0, 1, 2), Sigma, n_realisations = 60)
  draws <- mcmc(model(corr, sd), n_samples = 300, warmup = 300, chains = 2, seed = 1,
                verbose = FALSE)
  m <- summary(draws)$statistics[, "Mean"]
  # 60 observations: the posterior sits near the sample's correlation and scales
  expect_lt(abs(m[["corr[1,2]"]] - cor(y)[1, 2]), 0.15)
  expect_equal(unname(m[c("sd[1,1]", "sd[2,1]")]), apply(y, 2, stats::sd), tolerance = 0.15)
})
