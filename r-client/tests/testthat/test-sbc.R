# sbc(): simulation-based calibration through the runtime's tb.sbc (small runs)

sbc_model <- function() {
  mu <- normal(0, 1)
  sd <- exponential(1)
  y <- as_data(rep(0, 4))
  distribution(y) <- normal(mu, sd)
  list(m = model(mu, sd), mu = mu, sd = sd)
}

test_that("sbc() ranks the true values, named as mcmc's columns, seeded per replication", {
  skip_if_no_python()
  s <- sbc_model()
  kw <- list(n_samples = 10, warmup = 20, thin_to = 9, bins = 5, seed = 4,
             backend = "numpy", verbose = FALSE)
  res <- do.call(sbc, c(list(s$m, nsim = 5), kw))
  expect_s3_class(res, "tb_sbc")
  expect_identical(colnames(res$ranks), c("mu", "sd"))
  expect_identical(dim(res$ranks), c(5L, 2L))
  expect_true(all(res$ranks >= 0 & res$ranks <= 9))
  expect_equal(colSums(res$counts), c(mu = 5, sd = 5))
  expect_true(all(res$truth[, "sd"] > 0))
  expect_equal(res$threshold, 0.01 / 2)
  # replication i depends on (seed, i) only: a shorter run is a prefix
  short <- do.call(sbc, c(list(s$m, nsim = 3), kw))
  expect_identical(short$ranks, res$ranks[1:3, , drop = FALSE])
  # a derived quantity, by element (1-based, column-major as mcmc's columns)
  both <- do.call(sbc, c(list(s$m, nsim = 2, parameters = list(v = c(s$mu, s$sd))), kw))
  expect_identical(colnames(both$ranks), c("v[1,1]", "v[2,1]"))
  expect_identical(both$ranks[, "v[1,1]"], res$ranks[1:2, "mu"])
  expect_output(print(res), "Simulation-based calibration: 5 replications")
})

test_that("sbc() fails a sampler that stays where it started", {
  skip_if_no_python()
  mu <- normal(0, 1)
  y <- as_data(rep(0, 5))
  distribution(y) <- normal(mu, 1)
  res <- sbc(model(mu), nsim = 20, n_samples = 10, warmup = 0, thin_to = 19, bins = 10,
             sampler = rwmh(epsilon = 1e-6), seed = 2, backend = "numpy", verbose = FALSE)
  expect_false(res$passed[["mu"]])
  expect_lt(res$p_values[["mu"]], 1e-4)
})

test_that("sbc() names a bad argument", {
  skip_if_no_python()
  s <- sbc_model()
  expect_error(sbc(s$m, nsim = 0), "sbc: nsim must be a whole number >= 1")
  expect_error(sbc(s$m, bins = 7, verbose = FALSE), "bins: must divide thin_to \\+ 1 = 100")
  expect_error(sbc(s$m, cluster = "tcp://127.0.0.1:1"), "sbc: cluster must be NULL or tb_cluster")
  expect_error(sbc(s$m, parameters = list(s$mu)), "sbc: parameters must be NULL or a named list")
  expect_error(sbc(list()), "sbc: model must be a model from model()")
})
