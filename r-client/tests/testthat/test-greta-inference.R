# model(), mcmc(), calculate(), opt(), simulate(): against Python, closed forms and coda/posterior.

eight_schools <- function() {
  env <- new.env()
  local({
    y <- as_data(c(28, 8, -3, 7, -1, 1, 18, 12))
    sigma <- c(15, 10, 16, 11, 9, 11, 10, 18)
    mu <- normal(0, 5)
    tau <- cauchy(0, 5, truncation = c(0, Inf))
    eta <- normal(0, 1, dim = 8)
    theta <- mu + tau * eta
    distribution(y) <- normal(theta, sigma)
    m <- model(mu, tau)
  }, envir = env)
  env
}

python_eight_schools <- function(n_samples, warmup, chains, seed) {
  reticulate::py_run_string(sprintf("
import numpy as np
import tensorbridge as tb
_y = tb.as_data(np.array([28., 8., -3., 7., -1., 1., 18., 12.]))
_sigma = tb.as_data(np.array([15., 10., 16., 11., 9., 11., 10., 18.]))
_mu = tb.normal(0.0, 5.0)
_tau = tb.cauchy(0.0, 5.0, truncation=(0.0, float('inf')))
_eta = tb.normal(0.0, 1.0, dim=8)
_theta = _mu + _tau * _eta
tb.distribution(_y, tb.normal(_theta, _sigma))
_m = tb.model(mu=_mu, tau=_tau, eta=_eta)
_d = tb.mcmc(_m, n_samples=%d, warmup=%d, chains=%d, seed=%d, progress=False)
tb_ref = {'mu': np.asarray(_d['mu']), 'tau': np.asarray(_d['tau']),
          'theta': np.asarray(tb.calculate(_theta, values=_d)).reshape(%d, %d, 8),
          'divergent': np.asarray(_d.stats['divergent'], dtype=float)}
", n_samples, warmup, chains, seed, chains, n_samples))
  reticulate::py$tb_ref
}

test_that("eight schools: the same seed gives Python's draws bit for bit", {
  skip_if_no_python()
  e <- eight_schools()
  draws <- mcmc(e$m, n_samples = 150, warmup = 150, chains = 2, seed = 11, verbose = FALSE)
  ref <- python_eight_schools(150, 150, 2, 11)
  expect_s3_class(draws, "mcmc.list")
  expect_identical(coda::varnames(draws), c("mu", "tau"))
  expect_identical(coda::nchain(draws), 2L)
  expect_identical(coda::niter(draws), 150L)
  for (k in 1:2) {
    expect_identical(as.vector(draws[[k]][, "mu"]), as.vector(ref$mu[k, ]))
    expect_identical(as.vector(draws[[k]][, "tau"]), as.vector(ref$tau[k, ]))
  }
  expect_identical(colMeans(as.matrix(draws))[["mu"]], mean(ref$mu))
  theta <- e$theta
  theta <- calculate(theta, values = draws)
  expect_s3_class(theta, "mcmc.list")
  expect_identical(coda::varnames(theta), sprintf("theta[%d,1]", 1:8))
  for (k in 1:2) expect_identical(unname(unclass(theta[[k]])[, 3]), ref$theta[k, , 3])
  diag <- attr(draws, "sampler_diagnostics")
  expect_identical(dim(diag$divergent), c(150L, 2L))
  expect_identical(as.vector(diag$divergent), as.vector(t(ref$divergent)))
  expect_identical(diag$divergences, as.integer(sum(ref$divergent)))
  expect_length(diag$step_size, 2L)
  expect_false(diag$interrupted)
})

test_that("n_cores splits the chains over worker processes with the same draws", {
  skip_if_no_python()
  skip_on_os("windows")
  if (!tb_eval(paste0("'n_cores' in __import__('inspect').signature(",
                      "__import__('tensorbridge').mcmc).parameters"))) {
    skip("this runtime's mcmc() has no n_cores")
  }
  e <- eight_schools()
  # two chains per worker, as in one process (the runtime's batches of chains line up)
  one <- mcmc(e$m, n_samples = 30, warmup = 30, chains = 4, seed = 8, verbose = FALSE)
  two <- mcmc(e$m, n_samples = 30, warmup = 30, chains = 4, seed = 8, verbose = FALSE,
              n_cores = 2)
  for (k in 1:4) expect_identical(unclass(two[[k]]), unclass(one[[k]]))
  expect_error(mcmc(e$m, n_cores = 0), "n_cores must be a whole number >= 1")
})

test_that("columns are named as greta names them; model() names variables", {
  skip_if_no_python()
  e <- eight_schools()
  m2 <- with(e, model(mu, tau, eta, effect = theta))
  d <- mcmc(m2, n_samples = 20, warmup = 20, chains = 1, seed = 3, verbose = FALSE)
  expect_identical(coda::varnames(d), c("mu", "tau", sprintf("eta[%d,1]", 1:8),
                                        sprintf("effect[%d,1]", 1:8)))
  x <- matrix(rnorm(6), 2)
  w <- normal(0, 1, dim = c(2, 3))
  distribution(x) <- normal(w, 1)
  d <- mcmc(model(w), n_samples = 5, warmup = 5, chains = 1, seed = 1, verbose = FALSE)
  expect_identical(coda::varnames(d), c("w[1,1]", "w[2,1]", "w[1,2]", "w[2,2]", "w[1,3]",
                                        "w[2,3]"))
  expect_output(print(m2), "model of mu, tau, eta, effect")
  expect_error(model(), "at least one lazy array")
  expect_error(model(e$mu, 2), "argument 2 \\(2\\) must be a lazy array")
})

test_that("normal-normal conjugate posterior within Monte Carlo error; opt() finds its mode", {
  skip_if_no_python()
  set.seed(42)
  obs <- rnorm(20, 1.5, 2)
  m0 <- -1; s0 <- 3; s <- 2
  post_var <- 1 / (1 / s0^2 + length(obs) / s^2)
  post_mean <- post_var * (m0 / s0^2 + sum(obs) / s^2)
  mu <- normal(m0, s0)
  y <- as_data(obs)
  distribution(y) <- normal(mu, s)
  m <- model(mu)
  draws <- mcmc(m, n_samples = 1000, warmup = 500, chains = 4, seed = 5, verbose = FALSE)
  smry <- tb_summary(draws)
  ess <- smry["mu", "ess_bulk"]
  expect_gt(ess, 500)
  mc_se <- sqrt(post_var / ess)
  expect_lt(abs(smry["mu", "mean"] - post_mean), 4 * mc_se)
  expect_lt(abs(smry["mu", "sd"] / sqrt(post_var) - 1), 0.1)
  expect_lt(smry["mu", "rhat"], 1.02)
  # tb_summary agrees with posterior's summary (same definitions)
  ps <- posterior::summarise_draws(posterior::as_draws_array(draws))
  expect_equal(as.numeric(ps$mean), smry$mean)
  expect_equal(as.numeric(ps$rhat), smry$rhat, tolerance = 1e-6)
  expect_equal(as.numeric(ps$ess_bulk), smry$ess_bulk, tolerance = 1e-6)

  fit <- opt(m)
  expect_named(fit, c("par", "value", "iterations", "convergence"))
  expect_identical(fit$convergence, 0L)
  expect_equal(fit$par$mu[1, 1], post_mean, tolerance = 1e-6)
  expect_identical(dim(fit$par$mu), c(1L, 1L))
  log_joint <- dnorm(post_mean, m0, s0, log = TRUE) + sum(dnorm(obs, post_mean, s, log = TRUE))
  expect_equal(fit$value, -log_joint, tolerance = 1e-8)
  fit_adam <- opt(m, optimiser = "adam", max_iterations = 5000, learning_rate = 0.05)
  expect_equal(fit_adam$par$mu[1, 1], post_mean, tolerance = 1e-3)
  expect_error(opt(m, optimiser = "newton"),
               "optimiser must be \"lbfgs\", \"adam\" or an optimiser such as adam\\(\\), not \"newton\"")
  expect_error(opt(m, max_iterations = 0), "max_iterations must be a whole number >= 1")
})

test_that("opt() respects bounds: the MLE of a scale with a flat prior on (0, Inf)", {
  skip_if_no_python()
  obs <- c(-1.2, 0.3, 2.5, -0.7, 1.1, 0.2)
  sd <- variable(lower = 0)
  y <- as_data(obs)
  distribution(y) <- normal(0, sd)
  fit <- opt(model(sd), initial_values = initials(sd = 5))
  expect_identical(fit$convergence, 0L)
  expect_equal(fit$par$sd[1, 1], sqrt(mean(obs^2)), tolerance = 1e-6)
})

test_that("mcmc results convert to posterior and plot with coda", {
  skip_if_no_python()
  e <- eight_schools()
  draws <- mcmc(e$m, n_samples = 50, warmup = 50, chains = 2, seed = 2, verbose = FALSE)
  arr <- posterior::as_draws_array(draws)
  expect_identical(dim(arr), c(50L, 2L, 2L))
  expect_identical(posterior::variables(arr), c("mu", "tau"))
  expect_identical(as.vector(arr[, 2, "tau"]), as.vector(draws[[2]][, "tau"]))
  expect_s3_class(summary(draws), "summary.mcmc")
  expect_s3_class(coda::gelman.diag(draws), "gelman.diag")
  expect_output(print(draws), "2 chains x 50 draws of mu, tau")
  pdf(NULL)
  on.exit(dev.off(), add = TRUE)
  expect_silent(plot(draws))
  expect_silent(coda::traceplot(draws))
})

test_that("calculate() with values, with nsim, and simulate() from the priors", {
  skip_if_no_python()
  e <- eight_schools()
  mu <- e$mu; tau <- e$tau; eta <- e$eta; theta <- e$theta
  out <- calculate(theta, values = list(mu = 1, tau = 2, eta = seq(-1, 1, length.out = 8)))
  expect_named(out, "theta")
  expect_identical(dim(out$theta), c(8L, 1L))
  expect_equal(as.vector(out$theta), 1 + 2 * seq(-1, 1, length.out = 8))
  expect_error(calculate(theta, values = list(mu = 1)), "tau|eta")
  expect_error(calculate(theta, values = list(nothing = 1)),
               "no variable named nothing")
  # names that are not R objects here are looked up among the model's variable names
  rm(mu, tau, eta)
  by_name <- calculate(theta, values = list(mu = 1, tau = 0, eta = rep(0, 8)))
  expect_equal(as.vector(by_name$theta), rep(1, 8))
  mu <- e$mu
  expect_error(calculate(theta, values = list(mu = 1, tau = 2, eta = 1:3)),
               "expected 8 values")
  expect_error(calculate(theta, values = 3), "values must be the result of mcmc")
  expect_error(calculate(3), "argument 1 \\(3\\) must be a lazy array")
  plain <- coda::mcmc.list(coda::mcmc(matrix(1, 3, 1, dimnames = list(NULL, "mu"))))
  expect_error(calculate(theta, values = plain), "without the draws")

  if (!tb_eval("hasattr(__import__('tensorbridge'), 'simulate')")) {
    skip("this runtime has no simulate()")
  }
  sims <- calculate(mu, theta, nsim = 4000, seed = 1)
  expect_identical(dim(sims$mu), c(4000L, 1L, 1L))
  expect_identical(dim(sims$theta), c(4000L, 8L, 1L))
  expect_equal(mean(sims$mu), 0, tolerance = 0.3)
  expect_equal(stats::sd(sims$mu), 5, tolerance = 0.05)
  expect_identical(calculate(mu, nsim = 3, seed = 9), calculate(mu, nsim = 3, seed = 9))
  fixed <- calculate(theta, nsim = 2, seed = 1, values = list(mu = 3, tau = 0))
  expect_equal(as.vector(fixed$theta), rep(3, 16))

  sm <- simulate(e$m, nsim = 7, seed = 3)
  expect_true(all(c("mu", "tau", "eta", "y") %in% names(sm)))
  expect_identical(dim(sm$y), c(7L, 8L, 1L))
  expect_true(all(sm$tau > 0))
})

test_that("mcmc() checks its arguments and initial values, naming them", {
  skip_if_no_python()
  e <- eight_schools()
  m <- e$m
  expect_error(mcmc(m, chains = 0), "mcmc: chains must be a whole number >= 1, not 0")
  expect_error(mcmc(m, n_samples = 2.5), "n_samples must be a whole number")
  expect_error(mcmc(m, warmup = -1), "warmup must be a whole number >= 0")
  expect_error(mcmc(m, thin = "a"), "thin must be a whole number")
  expect_error(mcmc(m, sampler = "nuts"),
               "sampler must be nuts\\(\\), hmc\\(\\), rwmh\\(\\) or slice\\(\\)")
  expect_error(mcmc(list()), "model must be a model from model\\(\\)")
  expect_error(mcmc(m, verbose = NA), "verbose must be TRUE or FALSE")
  expect_error(nuts(max_depth = 40), "max_depth must be at most 30")
  expect_error(hmc(target_accept = 1.5), "target_accept must be a number in \\(0, 1\\)")
  expect_error(mcmc(m, initial_values = initials(tau = -1), chains = 1, warmup = 1,
                    n_samples = 1, verbose = FALSE), "'tau'.*outside its support")
  expect_error(mcmc(m, initial_values = initials(zeta = 1)), "no variable 'zeta'")
  expect_error(mcmc(m, initial_values = list(initials(mu = 1)), chains = 2),
               "1 sets of initials for 2 chains")
  expect_error(initials(1), "must be named")
  expect_error(mcmc(m, backend = "gpu", verbose = FALSE),
               "backend: expected one of 'auto', 'compiled', 'numpy', got 'gpu'")
  # both samplers from R: the same chains up to rounding, so the same first draws
  dn <- mcmc(m, n_samples = 5, warmup = 0, chains = 1, seed = 3, verbose = FALSE,
             backend = "numpy", sampler = nuts(step_size = 0.1))
  dc <- mcmc(m, n_samples = 5, warmup = 0, chains = 1, seed = 3, verbose = FALSE,
             sampler = nuts(step_size = 0.1))
  expect_equal(unclass(dc[[1]]), unclass(dn[[1]]), tolerance = 1e-9)
  d <- mcmc(m, sampler = hmc(n_leapfrog = 5), n_samples = 20, warmup = 20, chains = 2, seed = 4,
            verbose = FALSE, initial_values = list(initials(mu = 1, tau = 2),
                                                   initials(eta = rep(0.1, 8))))
  expect_identical(coda::niter(d), 20L)
  d2 <- mcmc(m, n_samples = 10, warmup = 10, chains = 1, thin = 2, seed = 4, verbose = FALSE)
  expect_identical(coda::niter(d2), 10L)
  expect_identical(coda::thin(d2), 2)
})

test_that("the progress bar is drawn from the sampler's callbacks", {
  skip_if_no_python()
  e <- eight_schools()
  msgs <- capture.output(
    d <- mcmc(e$m, n_samples = 40, warmup = 40, chains = 1, seed = 1, pb_update = 10),
    type = "message"
  )
  text <- paste(msgs, collapse = "\n")
  expect_match(text, "sampling [==============================] 80/80", fixed = TRUE)
  expect_match(text, "divergences")
  expect_identical(coda::niter(d), 40L)
})

test_that("handles return to baseline after models, draws and calculations are dropped", {
  skip_if_no_python()
  warm <- eight_schools()
  invisible(mcmc(warm$m, n_samples = 5, warmup = 5, chains = 1, seed = 1, verbose = FALSE))
  invisible(calculate(warm$theta, values = list(mu = 1, tau = 1, eta = rep(0, 8))))
  invisible(opt(warm$m, max_iterations = 2))
  capture.output(print(warm$theta))
  rm(warm)
  # model graphs are reference cycles in Python (parents <-> children): Python's cyclic
  # collector frees them, and with them the R vectors their constants view without copies
  py_gc <- tb_import("gc")$collect
  settle <- function() {
    for (i in 1:3) {
      live_handles()
      py_gc()
    }
    live_handles()
  }
  base <- settle()
  for (i in 1:3) {
    e <- eight_schools()
    d <- mcmc(e$m, n_samples = 5, warmup = 5, chains = 1, seed = i, verbose = FALSE)
    th <- calculate(e$theta, values = d)
    o <- opt(e$m, max_iterations = 5)
    capture.output(print(e$theta))
  }
  expect_gt(tb_handles()$live, base[["live"]])
  rm(e, d, th, o)
  now <- settle()
  expect_lte(now[["live"]], base[["live"]])
  expect_lte(now[["r_objects"]], base[["r_objects"]])
})

test_that("Ctrl-C during sampling keeps the draws taken so far", {
  skip_if_no_python()
  skip_on_os("windows")
  dir <- tempfile("mcmcint")
  dir.create(dir)
  script <- file.path(dir, "child.R")
  writeLines(c(
    "library(tensorbridge)",
    "y <- as_data(c(28, 8, -3, 7, -1, 1, 18, 12)); sigma <- c(15, 10, 16, 11, 9, 11, 10, 18)",
    "mu <- normal(0, 5); tau <- cauchy(0, 5, truncation = c(0, Inf))",
    "eta <- normal(0, 1, dim = 8); distribution(y) <- normal(mu + tau * eta, sigma)",
    "d <- withCallingHandlers(",
    "  mcmc(model(mu, tau), n_samples = 1e6, warmup = 20, chains = 2, seed = 1, pb_update = 5),",
    "  warning = function(w) { cat('WARNING:', conditionMessage(w), '\\n');",
    "    invokeRestart('muffleWarning') })",
    "cat('CLASS:', class(d), '\\n')",
    "cat('DRAWS>0:', coda::niter(d) > 0, '\\n')",
    "cat('INTERRUPTED:', attr(d, 'sampler_diagnostics')$interrupted, '\\n')",
    "cat('STILL WORKS:', as.array(as_data(40) + 2), '\\n')",
    "cat('DONE\\n')"
  ), script)
  out <- file.path(dir, "out")
  pidfile <- file.path(dir, "pid")
  cmd <- sprintf("%s %s --vanilla %s > %s 2>&1 & echo $! > %s; wait",
                 paste(python_env(), collapse = " "),
                 shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script), shQuote(out),
                 shQuote(pidfile))
  system2("bash", c("-c", shQuote(cmd)), wait = FALSE)
  deadline <- Sys.time() + 90
  seen <- function(pattern) {
    file.exists(out) && any(grepl(pattern, readLines(out, warn = FALSE), fixed = TRUE))
  }
  while (!seen("sampling [") && Sys.time() < deadline) Sys.sleep(0.05)
  expect_true(seen("sampling ["))
  Sys.sleep(0.3)
  tools::pskill(as.integer(readLines(pidfile)), tools::SIGINT)
  while (!seen("DONE") && Sys.time() < deadline) Sys.sleep(0.05)
  text <- paste(readLines(out, warn = FALSE), collapse = "\n")
  expect_match(text, "WARNING: mcmc: interrupted; returning the [0-9]+ draws per chain")
  expect_match(text, "CLASS: tb_mcmc_list mcmc.list")
  expect_match(text, "DRAWS>0: TRUE")
  expect_match(text, "INTERRUPTED: TRUE")
  expect_match(text, "STILL WORKS: 42")
})

# tests/fixtures/shared of the checkout (absent when the package is checked from its tarball
# outside the checkout: then the test is skipped).
shared_fixture <- function(name) {
  py <- tensorbridge:::.tb$python
  starts <- c(getwd(), if (!is.null(py)) dirname(dirname(dirname(py))))
  for (dir in normalizePath(starts, mustWork = FALSE)) {
    repeat {
      path <- file.path(dir, "tests", "fixtures", "shared", name)
      if (file.exists(path)) return(path)
      parent <- dirname(dir)
      if (identical(parent, dir)) break
      dir <- parent
    }
  }
  NULL
}

test_that("eight schools agrees with the shared long-run reference posterior", {
  skip_if_no_python()
  skip_if_not_installed("jsonlite")
  path <- shared_fixture("eight_schools.json")
  if (is.null(path)) skip("tests/fixtures/shared is not reachable from here")
  fx <- jsonlite::read_json(path)
  y <- as_data(unlist(fx$data$y))
  sigma <- unlist(fx$data$sigma)
  mu <- normal(0, 5)
  tau <- cauchy(0, 5, truncation = c(0, Inf))
  eta <- normal(0, 1, dim = 8)
  theta <- mu + tau * eta
  distribution(y) <- normal(theta, sigma)
  draws <- mcmc(model(mu, tau, theta), n_samples = 1000, warmup = 1000, chains = 4, seed = 2024,
                verbose = FALSE)
  smry <- tb_summary(draws)
  ref <- fx$reference$posterior
  for (p in c("mu", "tau", sprintf("theta[%d]", 0:7))) {
    r_name <- if (startsWith(p, "theta")) {
      sprintf("theta[%d,1]", as.integer(sub("theta\\[(\\d+)\\]", "\\1", p)) + 1L)
    } else {
      p
    }
    mc_se <- smry[r_name, "sd"] / sqrt(smry[r_name, "ess_bulk"])
    expect_lt(abs(smry[r_name, "mean"] - ref[[p]]$mean), 5 * mc_se, label = r_name)
    expect_lt(abs(smry[r_name, "sd"] / ref[[p]]$sd - 1), 0.15, label = r_name)
  }
  expect_true(all(smry$rhat < 1.02))
})
