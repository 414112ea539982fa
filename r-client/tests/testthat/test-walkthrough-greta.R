# A greta user's walkthrough beyond the README: each test pins a bug found that way. (The README
# blocks themselves run in test-readme-blocks.R.)

test_that("rowSums/colSums/rowMeans/colMeans work on lazy arrays and fall back to base R", {
  skip_if_no_python()
  a <- normal(0, 1, dim = c(2, 3))
  expect_identical(dim(rowSums(a)), c(2L, 1L))
  expect_identical(dim(colSums(a)), c(3L, 1L))
  expect_identical(dim(rowMeans(a)), c(2L, 1L))
  expect_identical(dim(colMeans(a)), c(3L, 1L))
  m <- matrix(1:6, 2)
  v <- calculate(rowSums(a), colSums(a), rowMeans(a), colMeans(a), values = list(a = m))
  expect_equal(as.vector(v[[1]]), rowSums(m))
  expect_equal(as.vector(v[[2]]), colSums(m))
  expect_equal(as.vector(v[[3]]), rowMeans(m))
  expect_equal(as.vector(v[[4]]), colMeans(m))
  expect_identical(rowSums(m), base::rowSums(m))
  expect_identical(colMeans(m), base::colMeans(m))
  # 3-d arrays take dims = (test-greta-array-functions.R compares them with base R)
  expect_identical(dim(rowSums(normal(0, 1, dim = c(2, 2, 2)))), c(2L, 1L))
  expect_error(rowSums(normal(0, 1, dim = c(2, 2, 2)), dims = 3), "rowSums: dims must be")
})

test_that("cbind, rbind and c bind lazy arrays and R numbers as in R", {
  skip_if_no_python()
  a <- normal(0, 1, dim = c(2, 3)); mu <- normal(0, 1)
  expect_identical(dim(cbind(a, a)), c(2L, 6L))
  expect_identical(dim(rbind(a, a)), c(4L, 3L))
  expect_identical(dim(c(mu, mu)), c(2L, 1L))
  expect_identical(dim(cbind(mu, 1)), c(1L, 2L))
  expect_identical(dim(rbind(a, 1:3)), c(3L, 3L))        # an R vector is a row in rbind()
  m <- matrix(1:6, 2)
  v <- calculate(c(a), cbind(a, 9), rbind(mu, a[1, 1]), values = list(a = m, mu = 7))
  expect_equal(as.vector(v[[1]]), 1:6)                   # column-major, as c(m)
  expect_equal(v[[2]], cbind(m, 9), ignore_attr = TRUE)  # scalars recycled
  expect_equal(as.vector(v[[3]]), c(7, 1))
  expect_error(cbind(a, 1:3), "cbind: the arrays must have the same number of rows")
  expect_error(c(mu, "a"), "c: argument 2 must be numeric")
})

test_that("zeros(), ones() and greta_array() exist as in greta", {
  skip_if_no_python()
  z <- zeros(2, 3)
  expect_identical(dim(z), c(2L, 3L))
  expect_equal(as.array(z), matrix(0, 2, 3), ignore_attr = TRUE)
  expect_identical(dim(ones(3)), c(3L, 1L))
  g <- greta_array(1:6, dim = c(2, 3))
  expect_equal(as.array(g), matrix(1:6, 2), ignore_attr = TRUE)
  expect_error(zeros(-1), "zeros: dim must be")
  expect_error(greta_array("a"), "greta_array: data must be numeric")
})

test_that("making a lazy operation warns about nothing (no division by the reference zeros)", {
  skip_if_no_python()
  a <- normal(0, 1, dim = c(2, 3))
  expect_no_warning(b <- 2 / a)
  expect_no_warning(log(a))
  expect_s3_class(b, "tb_lazy_array")
})

test_that("ilogit/log1pe of a non-number and opt(optimiser =) name the argument", {
  skip_if_no_python()
  expect_error(ilogit("a"), "ilogit: x must be numeric or a lazy array")
  expect_error(log1pe("a"), "log1pe: x must be numeric or a lazy array")
  expect_equal(ilogit(0), 0.5)
  mu <- normal(0, 1)
  expect_error(opt(model(mu), optimiser = "nope"),
               "opt: optimiser must be \"lbfgs\", \"adam\" or an optimiser such as adam\\(\\), not \"nope\"")
  expect_error(opt(model(mu), optimiser = 3), "opt: optimiser must be")
  expect_equal(opt(model(mu), optimiser = "adam", max_iterations = 5)$iterations, 5)
})

test_that("the sampling progress bar counts sampling divergences only", {
  skip_if_no_python()
  y <- as_data(c(28, 8, -3, 7, -1, 1, 18, 12)); sigma <- c(15, 10, 16, 11, 9, 11, 10, 18)
  mu <- normal(0, 5); tau <- cauchy(0, 5, truncation = c(0, Inf))
  eta <- normal(0, 1, dim = 8)
  distribution(y) <- normal(mu + tau * eta, sigma)
  msgs <- capture.output(
    draws <- mcmc(model(mu, tau), n_samples = 100, warmup = 100, chains = 2, seed = 1,
                  pb_update = 10),
    type = "message"
  )
  diag <- attr(draws, "sampler_diagnostics")
  last <- tail(strsplit(paste(msgs, collapse = "\n"), "\r", fixed = TRUE)[[1]], 1)
  expect_match(last, "^sampling")
  shown <- as.integer(sub(".*\\| (\\d+) divergences.*", "\\1", last))
  expect_identical(shown, as.integer(diag$divergences))
})

test_that("a greta linear and logistic regression run end to end", {
  skip_if_no_python()
  set.seed(2)
  x <- cbind(1, rnorm(40), rnorm(40))
  y <- as_data(x %*% c(1, 2, -1) + rnorm(40, sd = 0.5))
  beta <- normal(0, 1, dim = c(3, 1)); sd <- lognormal(0, 1)
  distribution(y) <- normal(x %*% beta, sd)
  draws <- mcmc(model(beta, sd), n_samples = 200, warmup = 200, chains = 2, seed = 1,
                verbose = FALSE)
  expect_identical(colnames(as.matrix(draws)), c("beta[1,1]", "beta[2,1]", "beta[3,1]", "sd"))
  expect_s3_class(coda::gelman.diag(draws), "gelman.diag")
  expect_equal(unname(colMeans(as.matrix(draws))[1:3]), c(1, 2, -1), tolerance = 0.3)

  xb <- matrix(rnorm(60), 30); yb <- as_data(rbinom(30, 1, 0.5))
  alpha <- normal(0, 5); b <- normal(0, 2, dim = 2)
  distribution(yb) <- bernoulli(ilogit(alpha + xb %*% b))
  d <- mcmc(model(alpha, b), n_samples = 50, warmup = 50, chains = 2, n_cores = 2, seed = 3,
            verbose = FALSE)
  expect_identical(dim(as.matrix(d)), c(100L, 3L))
})

test_that("diag() of lazy arrays works as in greta and base diag() is unchanged", {
  skip_if_no_python()
  a <- normal(0, 1, dim = c(2, 3)); v <- normal(0, 1, dim = 3)
  expect_identical(dim(diag(a)), c(2L, 1L))
  expect_identical(dim(diag(v)), c(3L, 3L))
  out <- calculate(diag(a), diag(v), values = list(a = matrix(1:6, 2), v = c(1, 2, 3)))
  expect_equal(as.vector(out[[1]]), c(1, 4))
  expect_equal(out[[2]], base::diag(c(1, 2, 3)), ignore_attr = TRUE)
  expect_identical(diag(2), base::diag(2))
  expect_identical(diag(c(1, 2)), base::diag(c(1, 2)))
  expect_identical(diag(matrix(1:4, 2)), base::diag(matrix(1:4, 2)))
  expect_identical(diag(nrow = 3), base::diag(nrow = 3))
  expect_identical(diag(1, 2, 3), base::diag(1, 2, 3))
})

test_that("distribution shape errors and a second distribution<- name what went wrong", {
  skip_if_no_python()
  expect_error(lognormal(0, c(1, 2), dim = 3),
               "lognormal: the dimensions of meanlog, sdlog, dim do not fit together")
  y <- as_data(1:3); mu <- normal(0, 1)
  distribution(y) <- normal(mu, 1)
  expect_error(distribution(y) <- normal(mu, 2),
               "distribution<-: greta_array already has a distribution", class = "ValueError")
  expect_identical(capture.output(print(inverse_gamma(2, 1)))[[1]],
                   "lazy array (variable following an inverse_gamma distribution)")
})

test_that("calculate(y, values = draws, nsim) simulates the posterior predictive", {
  y <- as_data(c(1, 2, 3, 2.5))
  mu <- normal(0, 5)
  sd <- exponential(1)
  distribution(y) <- normal(mu, sd)
  draws <- mcmc(model(mu, sd), n_samples = 300, warmup = 300, chains = 2, seed = 1,
                verbose = FALSE)
  pp <- calculate(y, values = draws, nsim = 200, seed = 2)
  expect_named(pp, "y")
  expect_equal(dim(pp$y), c(200L, 4L, 1L))
  # predictive spread exceeds the data's: it includes sd and the posterior of mu
  expect_gt(stats::var(as.vector(pp$y)), 0.5)
  expect_lt(abs(mean(pp$y) - mean(as.matrix(draws)[, "mu"])), 0.4)
  again <- calculate(y, values = draws, nsim = 200, seed = 2)
  expect_identical(again$y, pp$y)
})

test_that("chol() of a lazy array is base R's upper factor; solve() is base R's inverse", {
  a <- matrix(c(4, 2, 2, 3), 2)
  s <- as_data(a)
  r <- chol(s)
  expect_s3_class(r, "tb_lazy_array")
  expect_equal(calculate(r)[[1]], chol(a), tolerance = 1e-12)
  v <- variable(lower = 0.5, upper = 2)
  expect_output(print(chol(s * v)), "\\?")
  expect_error(chol(as_data(matrix(1:6, 2))), "square matrix")
  si <- solve(s)
  expect_s3_class(si, "tb_lazy_array")
  expect_equal(calculate(si)[[1]], solve(a), tolerance = 1e-12)
})
