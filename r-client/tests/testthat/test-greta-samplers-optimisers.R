# greta's inference functions: rwmh(), slice(), hmc(Lmin, Lmax, epsilon, diag_sd),
# nuts(max_treedepth, ...), extra_samples() and the optimiser objects for opt().

conjugate_model <- function() {
  set.seed(1)
  yv <- rnorm(20, 1.5, 1)
  mu <- normal(0, 10)
  y <- as_data(yv)
  distribution(y) <- normal(mu, 1)
  post_var <- 1 / (1 / 100 + 20)
  list(m = model(mu), mean = post_var * sum(yv), var = post_var)
}

within_mc_error <- function(x, mean, var) {
  ess <- coda::effectiveSize(x)
  expect_gt(ess, 100)
  expect_lt(abs(mean(unlist(x)) - mean), 5 * sqrt(var / ess))
  expect_lt(abs(var(unlist(x)) - var), 5 * var * sqrt(2 / ess))
}

test_that("rwmh() and slice() sample a conjugate posterior and reproduce with a seed", {
  skip_if_no_python()
  cm <- conjugate_model()
  for (s in list(rwmh(), rwmh("uniform"), slice())) {
    d <- mcmc(cm$m, sampler = s, n_samples = 2000, warmup = 500, chains = 2, seed = 3,
              verbose = FALSE)
    within_mc_error(d, cm$mean, cm$var)
    d2 <- mcmc(cm$m, sampler = s, n_samples = 2000, warmup = 500, chains = 2, seed = 3,
               verbose = FALSE)
    expect_identical(unlist(d), unlist(d2))
  }
  expect_error(rwmh("cauchy"), "rwmh: proposal must be \"normal\" or \"uniform\"")
  expect_error(slice(0), "slice: max_doublings")
  expect_error(mcmc(cm$m, sampler = rwmh(), backend = "compiled", verbose = FALSE),
               "NumPy sampler only")
})

test_that("greta's hmc() and nuts() arguments reach the runtime", {
  skip_if_no_python()
  cm <- conjugate_model()
  d <- mcmc(cm$m, sampler = hmc(Lmin = 3, Lmax = 6, epsilon = 0.1, diag_sd = 1),
            n_samples = 1000, warmup = 300, chains = 2, seed = 2, verbose = FALSE)
  steps <- attr(d, "sampler_diagnostics")$n_leapfrog
  expect_equal(range(steps), c(3, 6))
  within_mc_error(d, cm$mean, cm$var)
  d <- mcmc(cm$m, sampler = nuts(max_treedepth = 4, epsilon = 0.05, diag_sd = 0.5),
            n_samples = 500, warmup = 300, chains = 2, seed = 2, verbose = FALSE)
  expect_lte(max(attr(d, "sampler_diagnostics")$tree_depth), 4)
  expect_error(hmc(Lmin = 5, Lmax = 2), "hmc: Lmin \\(5\\) must be at most Lmax \\(2\\)")
  expect_error(nuts(diag_sd = -1), "nuts: diag_sd must be positive numbers")
  expect_output(print(hmc(Lmin = 2, Lmax = 4)), "hmc sampler .*Lmin = 2, Lmax = 4")
})

test_that("extra_samples() continues the chains: one longer run's draws", {
  skip_if_no_python()
  cm <- conjugate_model()
  args <- list(cm$m, n_samples = 100, warmup = 200, chains = 2, seed = 5, verbose = FALSE,
               backend = "numpy")
  first <- do.call(mcmc, args)
  more <- extra_samples(first, n_samples = 50, verbose = FALSE)
  expect_s3_class(more, "tb_mcmc_list")
  expect_equal(nrow(more[[1]]), 150L)
  args$n_samples <- 150
  whole <- do.call(mcmc, args)
  expect_identical(unclass(more[[1]])[, 1], unclass(whole[[1]])[, 1])
  expect_identical(unclass(more[[2]])[1:100, 1], unclass(first[[2]])[, 1])
  more <- extra_samples(more, n_samples = 2000, verbose = FALSE)
  within_mc_error(more, cm$mean, cm$var)
  expect_error(extra_samples(list(1)), "extra_samples: draws must be the result of mcmc()")
})

test_that("greta's optimisers reach the mode", {
  skip_if_no_python()
  cm <- conjugate_model()
  optimisers <- list(gradient_descent(learning_rate = 0.02), momentum(learning_rate = 0.005),
                     adagrad(), adadelta(learning_rate = 1, rho = 0.95, epsilon = 1e-4),
                     rms_prop(learning_rate = 0.01), adam(learning_rate = 0.1),
                     adamax(learning_rate = 0.05), nadam(learning_rate = 0.05), bfgs(),
                     l_bfgs_b(maxcor = 5), nelder_mead())
  for (o in optimisers) {
    res <- opt(cm$m, optimiser = o, max_iterations = 20000)
    expect_equal(res$convergence, 0L, info = o$name)
    # the unadjusted mode of a normal mean under a normal(0, 10) prior: the posterior mean
    expect_equal(as.numeric(res$par$mu), cm$mean, tolerance = 1e-3, info = o$name)
  }
  expect_error(adam(learning_rate = -1), "adam: learning_rate must be a positive number")
  expect_output(print(adam()), "adam optimiser \\(learning_rate = 0.1")
})

test_that("model(precision = \"single\") computes in float32, as greta's", {
  skip_if_no_python()
  set.seed(2)
  yv <- rnorm(20, 1.5, 1)
  mu <- normal(0, 10)
  y <- as_data(yv)
  distribution(y) <- normal(mu, 1)
  m32 <- model(mu, precision = "single")
  m64 <- model(mu)
  o32 <- opt(m32)
  o64 <- opt(m64)
  expect_equal(as.numeric(o32$par$mu), as.numeric(o64$par$mu), tolerance = 1e-4)
  d <- mcmc(m32, n_samples = 300, warmup = 300, chains = 2, seed = 1, verbose = FALSE)
  expect_lt(abs(mean(unlist(d)) - as.numeric(o64$par$mu)), 0.1)
  expect_error(model(mu, precision = "half"), "model: precision must be \"double\" or \"single\"")
})
