# Issue 16 through the R door: wishart, f, hypergeometric, dirichlet_multinomial, mixture(),
# joint() and the links iprobit, icloglog, icauchit, imultilogit, with greta's argument names;
# draws against analytic moments, a joint likelihood's posterior, the links against base R.
# (The densities are tested against SciPy in tests/ppl/test_distributions_greta_extra.py.)

test_that("the new distributions exist with greta's arguments", {
  expect_identical(names(formals(wishart)), c("df", "Sigma", "dimension"))
  expect_identical(names(formals(f)), c("df1", "df2", "dim", "truncation"))
  expect_identical(names(formals(hypergeometric)), c("m", "n", "k", "dim"))
  expect_identical(names(formals(dirichlet_multinomial)),
                   c("size", "alpha", "n_realisations", "dimension"))
  expect_identical(names(formals(mixture)), c("...", "weights", "dim"))
  expect_identical(names(formals(joint)), c("...", "dim"))
})

test_that("distributions check their arguments, naming them", {
  skip_if_no_python()
  expect_error(wishart(1, diag(3)), "wishart: df must be greater than K - 1")
  expect_error(wishart(5, matrix(c(1, 2, 2, 1), 2)), "Sigma must be positive definite")
  expect_error(f(-1, 2), "f: df1 must be positive")
  expect_error(hypergeometric(3, 2, 6), "k must be at most m \\+ n")
  expect_error(dirichlet_multinomial(2.5, c(1, 1)), "size must be a non-negative integer")
  expect_error(mixture(normal(0, 1), normal(1, 1), weights = c(1, 2, 3)),
               "weights must have 2 entries")
  expect_error(mixture(normal(0, 1), normal(1, 1)), "weights is missing")
  expect_error(joint(normal(0, 1), 3), "argument 2 must be a distribution")
})

test_that("draws of wishart, f and hypergeometric have their analytic moments", {
  skip_if_no_python()
  S <- matrix(c(2, 0.3, 0.3, 1), 2)
  w <- wishart(6, S)
  sims <- calculate(w, nsim = 8000, seed = 1)[[1]]
  expect_identical(dim(sims), c(8000L, 2L, 2L))
  m <- apply(sims, c(2, 3), mean)
  v <- 6 * (S^2 + outer(diag(S), diag(S)))
  expect_true(all(abs(m - 6 * S) < 5 * sqrt(v / 8000)))

  x <- f(4, 12, dim = 3)
  fs <- calculate(x, nsim = 8000, seed = 2)[[1]]
  mean_f <- 12 / 10
  var_f <- 2 * 12^2 * (4 + 12 - 2) / (4 * 10^2 * 8)
  expect_true(abs(mean(fs) - mean_f) < 5 * sqrt(var_f / length(fs)))

  y <- as_data(matrix(c(2, 5, 3, 4), ncol = 1))
  distribution(y) <- hypergeometric(10, 7, 8)
  hs <- calculate(y, nsim = 8000, seed = 3)[[1]]
  expect_true(all(hs == round(hs)))
  expect_true(abs(mean(hs) - 8 * 10 / 17) < 0.05)
})

test_that("mixture() and joint() through R: shapes, moments and a model", {
  skip_if_no_python()
  a <- mixture(normal(-2, 1), normal(3, 1), weights = c(1, 3))
  expect_identical(dim(a), c(1L, 1L))
  sims <- calculate(a, nsim = 8000, seed = 4)[[1]]
  mean_a <- 0.25 * -2 + 0.75 * 3
  expect_true(abs(mean(sims) - mean_a) < 0.1)
  b <- mixture(normal(-2, 1), normal(3, 1), weights = c(1, 3), dim = 5)
  expect_identical(dim(b), c(5L, 1L))
  x <- joint(normal(-3, 0.5), normal(3, 0.5))
  expect_identical(dim(x), c(1L, 2L))
  x10 <- joint(normal(-3, 0.5), beta(2, 2), dim = 10)
  expect_identical(dim(x10), c(10L, 2L))
  # data with a joint likelihood: the means recovered
  set.seed(1)
  yd <- cbind(rnorm(40, 2, 0.5), rnorm(40, -1, 0.3))
  mu1 <- normal(0, 10)
  mu2 <- normal(0, 10)
  y <- as_data(yd)
  distribution(y) <- joint(normal(mu1, 0.5), normal(mu2, 0.3), dim = 40)
  d <- mcmc(model(mu1, mu2), n_samples = 300, warmup = 300, chains = 2, seed = 5,
            verbose = FALSE)
  post <- as.matrix(d)
  expect_true(abs(mean(post[, "mu1"]) - mean(yd[, 1])) < 0.1)
  expect_true(abs(mean(post[, "mu2"]) - mean(yd[, 2])) < 0.06)
})

test_that("the links match base R and work on lazy arrays", {
  skip_if_no_python()
  x <- c(-3, -0.5, 0, 1.2, 4)
  expect_equal(iprobit(x), pnorm(x))
  expect_equal(icloglog(x), 1 - exp(-exp(x)))
  expect_equal(icauchit(x), pcauchy(x))
  eta <- matrix(c(0.5, 2, -1, 0), 2)
  p <- imultilogit(eta)
  expect_equal(p, exp(cbind(eta, 0)) / rowSums(exp(cbind(eta, 0))))
  expect_error(iprobit("a"), "iprobit: x must be numeric or a lazy array")
  xl <- as_data(matrix(x, ncol = 1))
  expect_equal(as.vector(calculate(iprobit(xl))[[1]]), pnorm(x), tolerance = 1e-12)
  expect_equal(as.vector(calculate(icloglog(xl))[[1]]), 1 - exp(-exp(x)), tolerance = 1e-12)
  expect_equal(as.vector(calculate(icauchit(xl))[[1]]), pcauchy(x), tolerance = 1e-12)
  pl <- calculate(imultilogit(as_data(eta)))[[1]]
  expect_equal(matrix(pl, 2), p, tolerance = 1e-12)
})
