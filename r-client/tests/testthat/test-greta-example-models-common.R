# greta's example-model vignette (fixtures/greta/example_models.Rmd), models 1-17: "Common
# models", "Common Bayesian priors" and "Advanced Bayesian models". Each model's code runs
# verbatim (run_greta_example), is sampled with mcmc(), and is compared with a reference computed
# here from base R only, never with numbers this package produced:
#   - linear-Gaussian models (every model but the Poisson, categorical and factor-analysis ones):
#     given its scale parameters the coefficients are Gaussian in closed form, so quadrature over
#     the scales (a grid on their logs; importance sampling for the seven scales of the LASSO)
#     gives the exact posterior mean and sd of every parameter; with flat priors the coefficients'
#     posterior mean is the least-squares estimate exactly; lm()/glm() as a second reference;
#   - the Poisson and categorical regressions: self-normalised importance sampling from a
#     Student-t around the posterior mode (optim), adapted to the weighted draws, on a log
#     density written from the likelihood and dnorm;
#   - factor analysis (not identified under rotation): rotation-invariant quantities (psi,
#     W W') against a Gibbs sampler written here, and the data's second moments.
# Differences are scaled by the Monte Carlo standard errors of both sides (posterior's
# mcse_mean/mcse_sd), never by one machine's numbers. Each check was also run, locally and not
# in the suite, against a deliberately wrong reference (a prior scale or form changed): the
# "could fail" notes say by how much it failed, or why the data outweigh the prior there.
# Two vignette models have an improper posterior as written (the response is also a covariate);
# they run verbatim, the impropriety is shown from base R, and the evident intent (another
# response) is checked instead: see "Differences from greta" in r-client/README.md.
#
# Cost: about 100 s on two CPUs shared with other work (load average 5). With
# TB_GRETA_EXAMPLES=all, factor analysis also runs (about 45 s more; psi[3,3] mixes slowly, for
# NUTS and for the Gibbs reference alike) and the marginal formulation takes its full-size run
# (about 4 minutes more: a 150-dimensional multivariate normal whose covariance moves).

# ---- base-R references ---------------------------------------------------------------------

# Posterior of y ~ N(X b, s^2 I), b ~ N(0, diag(1 / prec)) (prec 0: flat), where s and prec
# depend on scale parameters given as weighted points (rows of s / prec; log_w: log prior density
# of the point on the integration scale plus log quadrature or importance weight). b given the
# scales is Gaussian, so the mixture over the points is the posterior, exact up to quadrature.
# `scales`: a matrix of functions of the scales whose posterior moments are also returned.
lg_posterior <- function(X, y, s, prec, log_w, scales = NULL) {
  X <- as.matrix(X)
  XtX <- crossprod(X)
  Xty <- drop(crossprod(X, y))
  yty <- sum(y^2)
  n <- length(y)
  k <- ncol(X)
  N <- length(s)
  if (is.null(dim(prec))) prec <- matrix(prec, N, k, byrow = TRUE)  # one row for all points
  stopifnot(identical(dim(prec), c(N, k)))
  lml <- numeric(N)
  m <- v <- matrix(0, N, k)
  for (i in seq_len(N)) {
    p <- prec[i, ]
    R <- base::chol(XtX / s[i]^2 + diag(p, k))
    z <- base::backsolve(R, Xty / s[i]^2, transpose = TRUE)
    m[i, ] <- base::backsolve(R, z)
    v[i, ] <- rowSums(base::backsolve(R, diag(k))^2)
    lml[i] <- -n * log(s[i]) - yty / (2 * s[i]^2) + 0.5 * sum(log(p[p > 0])) -
      sum(log(diag(R))) + 0.5 * sum(z^2)
  }
  res <- mixture_moments(lml + log_w, m, v, cbind(s = s, scales))
  res$lml <- lml
  res
}

# Moments of a mixture whose components have means m and variances v (rows), plus moments of
# point quantities q, under log weights lw. ess: Kish's effective size of the weights.
mixture_moments <- function(lw, m, v, q) {
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  mean <- colSums(w * m)
  sd <- sqrt(colSums(w * (v + m^2)) - mean^2)
  list(mean = mean, sd = sd, q_mean = colSums(w * q), q_sd = sqrt(colSums(w * q^2) -
    colSums(w * q)^2), ess = 1 / sum(w^2), w = w)
}

# An equally spaced grid on the log of a scale: points and log(cell width * Jacobian).
log_grid <- function(lo, hi, n) {
  u <- seq(lo, hi, length.out = n)
  list(x = exp(u), log_j = u + log(u[2] - u[1]))
}

# Grid half-width for log(sd) of a normal likelihood with n observations: 8 posterior sds.
sd_grid <- function(sigma_hat, n, points = 41) {
  h <- 8 / sqrt(2 * n)
  log_grid(log(sigma_hat) - h, log(sigma_hat) + h, points)
}

dhalfcauchy <- function(x, scale, log = TRUE) log(2) + stats::dcauchy(x, 0, scale, log = TRUE)
dinvgamma <- function(x, a, b) stats::dgamma(1 / x, a, b, log = TRUE) - 2 * log(x)

# Self-normalised importance sampling from a multivariate t (df 5): first around the mode of
# log_post (a function of a matrix of draws, one per column) with `inflate` times the inverse
# Hessian, then `adapt` times around the weighted mean and covariance of the previous draws.
# Returns the mean, sd, their Monte Carlo errors and the ess of the weights.
snis <- function(log_post, init, M, seed, inflate = 1.5, df = 5, adapt = 0) {
  f <- function(b) -log_post(matrix(b))
  fit <- stats::optim(init, f, method = "BFGS", hessian = TRUE,
                      control = list(maxit = 1000, reltol = 1e-12))
  k <- length(init)
  centre <- fit$par
  S <- solve(fit$hessian) * inflate
  set.seed(seed)
  for (it in 0:adapt) {
    L <- t(base::chol(S))
    zs <- matrix(stats::rnorm(k * M), k) / rep(sqrt(stats::rchisq(M, df) / df), each = k)
    draws <- centre + L %*% zs
    log_q <- -(df + k) / 2 * log1p(colSums(zs^2) / df) - sum(log(base::diag(L)))
    lw <- log_post(draws) - log_q
    w <- exp(lw - max(lw))
    w <- w / sum(w)
    centre <- drop(draws %*% w)
    S <- inflate * stats::cov.wt(t(draws), w)$cov
  }
  sd <- sqrt(drop(draws^2 %*% w) - centre^2)
  ess <- 1 / sum(w^2)
  list(mean = centre, sd = sd, mcse = sd / sqrt(ess), ess = ess)
}

# Importance sampling of log scales u for the linear-Gaussian model of lg_posterior: a
# multivariate t around `centre` with covariance `cov`, then `adapt` times around the weighted
# mean and covariance of the previous draws. log_prior, to_s and to_prec take the M x d matrix u.
lg_adaptive_is <- function(X, y, log_prior, to_s, to_prec, centre, cov, M, seed, adapt = 2,
                           df = 5, inflate = 1.5) {
  set.seed(seed)
  d <- length(centre)
  for (it in 0:adapt) {
    L <- t(base::chol(cov))
    zs <- matrix(stats::rnorm(d * M), d) / rep(sqrt(stats::rchisq(M, df) / df), each = d)
    u <- t(centre + L %*% zs)
    log_q <- -(df + d) / 2 * log1p(colSums(zs^2) / df) - sum(log(base::diag(L)))
    ref <- lg_posterior(X, y, to_s(u), to_prec(u), log_prior(u) - log_q, scales = u)
    centre <- ref$q_mean[-1]
    cov <- inflate * stats::cov.wt(u, ref$w)$cov
  }
  ref
}

# Gibbs sampler for greta's factor-analysis example (all full conditionals conjugate): returns
# the draws of psi (diagonal) and of the upper triangle of W W'.
fa_gibbs <- function(X, q, iters, burn, seed) {
  set.seed(seed)
  n <- nrow(X)
  p <- ncol(X)
  W <- matrix(stats::rnorm(p * q), p)
  psi <- rep(1, p)
  up <- which(upper.tri(base::diag(p), diag = TRUE))
  out <- matrix(0, iters - burn, p + length(up))
  for (it in seq_len(iters)) {
    # z_i | W, psi ~ N(P^-1 W' Psi^-1 x_i, P^-1), P = W' Psi^-1 W + I
    R <- base::chol(crossprod(W / sqrt(psi)) + base::diag(q))
    b <- crossprod(W / psi, t(X))
    Z <- base::backsolve(R, base::backsolve(R, b, transpose = TRUE) +
                           matrix(stats::rnorm(q * n), q))
    # row j of W | Z, psi ~ N(P_j^-1 Z x_j / psi_j, P_j^-1), P_j = Z Z' / psi_j + I
    ZZ <- tcrossprod(Z)
    ZX <- Z %*% X
    for (j in seq_len(p)) {
      Rj <- base::chol(ZZ / psi[j] + base::diag(q))
      W[j, ] <- base::backsolve(Rj, base::backsolve(Rj, ZX[, j] / psi[j], transpose = TRUE) +
                                  stats::rnorm(q))
    }
    # psi_j | W, Z ~ inverse gamma(1 + n / 2, 1 + RSS_j / 2)
    rss <- colSums((X - t(W %*% Z))^2)
    psi <- 1 / stats::rgamma(p, 1 + n / 2, 1 + rss / 2)
    if (it > burn) out[it - burn, ] <- c(psi, tcrossprod(W)[up])
  }
  out
}

# ---- comparing draws with a reference ------------------------------------------------------

# Per column of the draws (optionally transformed): mean, sd, their Monte Carlo standard errors,
# R-hat and bulk ESS, from the posterior package.
draw_stats <- function(draws, cols, transform = identity) {
  a <- posterior::as_draws_array(draws)
  out <- t(vapply(cols, function(v) {
    x <- transform(matrix(a[, , v], ncol = dim(a)[2]))
    c(mean = mean(x), sd = stats::sd(x), mcse_mean = posterior::mcse_mean(x),
      mcse_sd = posterior::mcse_sd(x), rhat = posterior::rhat(x), ess = posterior::ess_bulk(x))
  }, numeric(6)))
  rownames(out) <- cols
  out
}

# Converged (R-hat below its bound, bulk ESS > min_ess), and mean (and sd) within z combined Monte
# Carlo standard errors of the reference's (ref_mcse: the reference's own error, 0 for quadrature).
# R-hat of converged chains is itself noisy, by about 1 / ESS: for 4 AR(1) chains of 1000
# (posterior::rhat, 3000 runs) (R-hat - 1) * ESS had 99% point 9, 99.9% point 11.5, maximum 13,
# so a fixed 1.01 was the 99% point at ESS 1000 (a hundred checks here miss it by chance; this
# run had 1.0075 at ESS 1871). The bound is max_rhat or 1 + 25 / ESS, at most 1.05: chains that
# disagree (stuck, or in different modes) give R-hat 1.1 and more with an ESS below min_ess.
# z = 4.5: the file makes about 190 mean and sd checks; at z = 4 one of them would miss by chance
# in about 1% of runs (190 x 6.3e-5), at 4.5 in 0.13%; the "could fail" notes below are 7-50 se
# off (factor analysis 4-11).
expect_posterior <- function(st, ref_mean, ref_sd = NULL, ref_mcse = 0, z = 4.5, min_ess = 400,
                             max_rhat = 1.01, label = "") {
  for (i in seq_len(nrow(st))) {
    name <- paste(label, rownames(st)[i])
    rhat_bound <- min(1.05, max(max_rhat, 1 + 25 / st[i, "ess"]))
    expect(st[i, "rhat"] < rhat_bound, sprintf("%s: R-hat %.4f (bound %.4f at bulk ESS %.0f)",
                                               name, st[i, "rhat"], rhat_bound, st[i, "ess"]))
    expect(st[i, "ess"] > min_ess, sprintf("%s: bulk ESS %.0f", name, st[i, "ess"]))
    se <- sqrt(st[i, "mcse_mean"]^2 + rep_len(ref_mcse, nrow(st))[i]^2)
    dev <- abs(st[i, "mean"] - ref_mean[i]) / se
    expect(dev < z, sprintf("%s: posterior mean %.5g vs reference %.5g (%.1f Monte Carlo se)",
                            name, st[i, "mean"], ref_mean[i], dev))
    if (!is.null(ref_sd)) {
      dev_sd <- abs(st[i, "sd"] - ref_sd[i]) / st[i, "mcse_sd"]
      expect(dev_sd < z, sprintf("%s: posterior sd %.5g vs reference %.5g (%.1f Monte Carlo se)",
                                 name, st[i, "sd"], ref_sd[i], dev_sd))
    }
  }
}

sample_example <- function(m, n_samples = 1000, warmup = 500, chains = 4, seed = 1) {
  mcmc(m, n_samples = n_samples, warmup = warmup, chains = chains, seed = seed, verbose = FALSE)
}

# Runs a vignette model with one exact text substitution in its code (a documented difference).
run_greta_example_with <- function(name, from, to, seed = 1) {
  ex <- greta_examples()[[name]]
  hits <- vapply(ex$r, function(code) grepl(from, code, fixed = TRUE), logical(1))
  stopifnot(sum(hits) == 1)
  env <- new.env(parent = globalenv())
  set.seed(seed)
  code <- c(ex$text, sub(from, to, ex$r, fixed = TRUE))
  for (chunk in code) eval(parse(text = chunk, keep.source = FALSE), envir = env)
  env
}

vec <- function(name, k) sprintf("%s[%d,1]", name, seq_len(k))

# ---- Common models -------------------------------------------------------------------------

test_that("greta example: Linear regression (quadrature over sd; lm)", {
  skip_if_no_python()
  e <- run_greta_example("Linear regression")
  d <- sample_example(with(e, model(int, coef, sd)))
  X <- cbind(1, attitude$complaints)
  y <- attitude$rating
  fit <- stats::lm(y ~ X - 1)
  g <- sd_grid(summary(fit)$sigma, nrow(X))
  ref <- lg_posterior(X, y, g$x, 1 / 10^2, dhalfcauchy(g$x, 3) + g$log_j)
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "linear")
  # lm: the normal(0, 10) prior pulls the intercept (se 7) towards 0 by under one posterior sd
  expect_true(all(abs(st[1:2, "mean"] - coef(fit)) < 1 * st[1:2, "sd"]))
  # could fail: a prior sd of 100 instead of 10 in the reference: int off by 31 mcse
})

test_that("greta example: Multiple linear regression (quadrature over sd; lm)", {
  skip_if_no_python()
  e <- run_greta_example("Multiple linear regression")
  d <- sample_example(with(e, model(int, coefs, sd)))
  X <- cbind(1, e$design)
  y <- attitude$rating
  fit <- stats::lm(y ~ X - 1)
  g <- sd_grid(summary(fit)$sigma, nrow(X))
  ref <- lg_posterior(X, y, g$x, 1 / 10^2, dhalfcauchy(g$x, 3) + g$log_j)
  cols <- c("int", vec("coefs", 6), "sd")
  st <- draw_stats(d, cols)
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "multiple")
  expect_true(all(abs(st[2:7, "mean"] - coef(fit)[-1]) < 1 * st[2:7, "sd"]))
  # could fail: a prior sd of 3 instead of 10 in the reference: int off by 24 mcse
})

test_that("greta example: Multiple Poisson regression (importance sampling; glm)", {
  skip_if_no_python()
  e <- run_greta_example("Multiple Poisson regression")
  d <- sample_example(with(e, model(beta)))
  X <- stats::model.matrix(breaks ~ wool + tension, warpbreaks)
  y <- warpbreaks$breaks
  # int = variable() is flat; the other coefficients are normal(0, 5)
  log_post <- function(B) {
    eta <- X %*% B
    colSums(y * eta - exp(eta)) + colSums(stats::dnorm(B[-1, , drop = FALSE], 0, 5, log = TRUE))
  }
  fit <- stats::glm(breaks ~ wool + tension, stats::poisson(), warpbreaks)
  ref <- snis(log_post, coef(fit), M = 20000, seed = 3)
  expect_gt(ref$ess, 5000)
  st <- draw_stats(d, vec("beta", 4))
  expect_posterior(st, ref$mean, ref$sd, ref_mcse = ref$mcse, label = "poisson")
  expect_true(all(abs(st[, "mean"] - coef(fit)) < 0.25 * st[, "sd"]))
  # could fail: normal(0, 0.5) for the coefficients in the reference: off by 7 mcse
})

test_that("greta example: Multiple categorical regression (importance sampling)", {
  skip_if_no_python()
  e <- run_greta_example("Multiple categorical regression")
  d <- sample_example(with(e, model(beta)), n_samples = 500, warmup = 300)
  X <- as.matrix(cbind(1, iris[, 1:4]))
  Y <- stats::model.matrix(~ Species - 1, iris)
  # greta's imultilogit: softmax of cbind(eta, 0), the last category the reference
  log_post <- function(B) {
    e1 <- X %*% B[1:5, , drop = FALSE]
    e2 <- X %*% B[6:10, , drop = FALSE]
    mx <- pmax(e1, e2, 0)
    lse <- mx + log(exp(e1 - mx) + exp(e2 - mx) + exp(-mx))
    colSums(Y[, 1] * e1 + Y[, 2] * e2 - lse) + colSums(stats::dnorm(B, 0, 5, log = TRUE))
  }
  ref <- snis(log_post, rep(0, 10), M = 20000, seed = 4, adapt = 2)
  expect_gt(ref$ess, 1000)
  st <- draw_stats(d, sprintf("beta[%d,%d]", rep(1:5, 2), rep(1:2, each = 5)))
  expect_posterior(st, ref$mean, ref$sd, ref_mcse = ref$mcse, min_ess = 200, label = "categorical")
  # could fail: normal(0, 3) in the reference: off by up to 38 mcse
})

test_that("greta example: Multiple linear regression with LASSO prior (importance sampling)", {
  skip_if_no_python()
  e <- run_greta_example("Multiple linear regression with LASSO prior")
  d <- sample_example(with(e, model(int, coefs, sd, tau)))
  X <- cbind(1, e$design)
  y <- attitude$rating
  sigma_hat <- summary(stats::lm(y ~ X - 1))$sigma
  # importance sampling over u = (log sd, log tau), the coefficients integrated exactly
  log_prior <- function(u) {
    dhalfcauchy(exp(u[, 1]), 3) + u[, 1] + rowSums(stats::dexp(exp(u[, -1]), 0.5, log = TRUE) +
                                                    u[, -1])
  }
  ref <- lg_adaptive_is(X, y, log_prior, function(u) exp(u[, 1]),
                        function(u) cbind(1 / 10^2, exp(-2 * u[, -1])),
                        centre = c(log(sigma_hat), rep(log(2), 6)),
                        cov = base::diag(c(0.3, rep(1, 6))^2), M = 10000, seed = 5)
  expect_gt(ref$ess, 1000)
  ref$q_mean <- ref$q_mean[-2]  # s, then log(tau)
  ref$q_sd <- ref$q_sd[-2]
  st <- draw_stats(d, c("int", vec("coefs", 6), "sd"))
  mc <- c(ref$sd, ref$q_sd[1]) / sqrt(ref$ess)
  expect_posterior(st, c(ref$mean, ref$q_mean[1]), ref_mcse = mc, label = "lasso")
  lt <- draw_stats(d, vec("tau", 6), log)
  expect_posterior(lt, ref$q_mean[-1], ref_mcse = ref$q_sd[-1] / sqrt(ref$ess), label = "log")
  # could fail: tau ~ exponential(2) in the reference: log(tau) off by 16-28 mcse
})

test_that("greta example: Hierarchical linear regression (quadrature over both sds)", {
  skip_if_no_python()
  e <- run_greta_example("Hierarchical linear regression")
  d <- sample_example(with(e, model(int, coef, sd, species_sd, species_offset)))
  sp <- as.numeric(iris$Species)
  X <- cbind(1, iris$Sepal.Width, sp == 2, sp == 3)
  y <- iris$Sepal.Length
  gs <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, nrow(X), 25)
  gh <- log_grid(-7, 5, 61)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gh$x))
  s <- gs$x[pts$i]
  h <- gh$x[pts$j]
  log_w <- dhalfcauchy(s, 3) + gs$log_j[pts$i] + stats::dlnorm(h, 0, 1, log = TRUE) +
    gh$log_j[pts$j]
  ref <- lg_posterior(X, y, s, cbind(1 / 100, 1 / 100, 1 / h^2, 1 / h^2), log_w,
                      scales = log(h))
  st <- draw_stats(d, c("int", "coef", vec("species_offset", 2), "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean[1]), c(ref$sd, ref$q_sd[1]), label = "hier")
  lh <- draw_stats(d, "species_sd", log)
  expect_posterior(lh, ref$q_mean[2], ref$q_sd[2], label = "hier log")
  # could fail: lognormal(0, 2) for species_sd in the reference: off by 15 mcse
})

test_that("greta example: Random intercept-slope model (quadrature over three sds)", {
  skip_if_no_python()
  e <- run_greta_example("Random intercept-slope model")
  d <- sample_example(with(e, model(int, coef, sd, species_int_sd, species_int,
                                    species_slope_sd, species_slope)))
  sp <- as.numeric(iris$Species)
  w <- iris$Sepal.Width
  X <- cbind(1, w, sp == 2, sp == 3, w * (sp == 2), w * (sp == 3))
  y <- iris$Sepal.Length
  gs <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, nrow(X), 15)
  gh <- log_grid(-7, 4, 34)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gh$x), l = seq_along(gh$x))
  s <- gs$x[pts$i]
  a <- gh$x[pts$j]
  b <- gh$x[pts$l]
  log_w <- dhalfcauchy(s, 3) + gs$log_j[pts$i] + stats::dlnorm(a, 0, 1, log = TRUE) +
    gh$log_j[pts$j] + stats::dlnorm(b, 0, 1, log = TRUE) + gh$log_j[pts$l]
  ref <- lg_posterior(X, y, s, cbind(1 / 100, 1 / 100, 1 / a^2, 1 / a^2, 1 / b^2, 1 / b^2),
                      log_w, scales = cbind(log(a), log(b)))
  st <- draw_stats(d, c("int", "coef", vec("species_int", 2), vec("species_slope", 2), "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean[1]), c(ref$sd, ref$q_sd[1]), label = "slopes")
  lh <- draw_stats(d, c("species_int_sd", "species_slope_sd"), log)
  expect_posterior(lh, ref$q_mean[2:3], ref$q_sd[2:3], label = "slopes log")
  # could fail: lognormal(0, 2) for species_int_sd in the reference: off by 22-40 mcse
})

test_that("greta example: Random intercept-slope model (with correlated effects) (4-d grid)", {
  skip_if_no_python()
  e <- run_greta_example("Random intercept-slope model (with correlated effects)")
  d <- sample_example(with(e, model(tau, Omega, z, sigma_e)))
  ab <- e$ab
  ab <- calculate(ab, values = d)
  # Given tau, the correlation r and sigma_e, each species' (intercept, slope) row of ab is
  # N(0, Sigma), Sigma = diag(tau) Omega diag(tau), and its 50 observations are a linear
  # regression on it: closed form per species (2 x 2), vectorised over a 4-d grid.
  y <- iris$Sepal.Length
  sp <- as.numeric(iris$Species)
  gs <- sd_grid(summary(stats::lm(Sepal.Length ~ Species * Sepal.Width, iris))$sigma, 150, 11)
  gt <- log_grid(-5, 4, 28)
  zr <- seq(-3.5, 3.5, length.out = 29)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gt$x), l = seq_along(gt$x),
                     k = seq_along(zr))
  s <- gs$x[pts$i]
  t1 <- gt$x[pts$j]
  t2 <- gt$x[pts$l]
  r <- tanh(zr[pts$k])
  # lkj_correlation(3) on a 2 x 2 correlation: density proportional to (1 - r^2)^(3 - 1);
  # dr/dz = 1 - r^2
  log_w <- dhalfcauchy(s, 3) + gs$log_j[pts$i] + stats::dexp(t1, 0.5, log = TRUE) +
    gt$log_j[pts$j] + stats::dexp(t2, 0.5, log = TRUE) + gt$log_j[pts$l] + 3 * log1p(-r^2)
  det_s <- t1^2 * t2^2 * (1 - r^2)
  lml <- 0
  m <- v <- matrix(0, length(s), 6)
  for (j in 1:3) {
    Xj <- cbind(1, iris$Sepal.Width[sp == j])
    yj <- y[sp == j]
    xx <- crossprod(Xj)
    xy <- drop(crossprod(Xj, yj))
    a11 <- xx[1, 1] / s^2 + t2^2 / det_s
    a22 <- xx[2, 2] / s^2 + t1^2 / det_s
    a12 <- xx[1, 2] / s^2 - r * t1 * t2 / det_s
    det_a <- a11 * a22 - a12^2
    b1 <- xy[1] / s^2
    b2 <- xy[2] / s^2
    m1 <- (a22 * b1 - a12 * b2) / det_a
    m2 <- (a11 * b2 - a12 * b1) / det_a
    lml <- lml - length(yj) * log(s) - sum(yj^2) / (2 * s^2) - 0.5 * log(det_s) -
      0.5 * log(det_a) + 0.5 * (b1 * m1 + b2 * m2)
    m[, c(j, j + 3)] <- cbind(m1, m2)
    v[, c(j, j + 3)] <- cbind(a22 / det_a, a11 / det_a)
  }
  ref <- mixture_moments(lml + log_w, m, v, cbind(s, log(t1), log(t2), r))
  st_ab <- draw_stats(ab, sprintf("ab[%d,%d]", rep(1:3, 2), rep(1:2, each = 3)))
  expect_posterior(st_ab, ref$mean, ref$sd, label = "correlated")
  st <- draw_stats(d, c("sigma_e", "Omega[1,2]"))
  expect_posterior(st, ref$q_mean[c(1, 4)], ref$q_sd[c(1, 4)], label = "correlated")
  lt <- draw_stats(d, c("tau[1,1]", "tau[2,1]"), log)
  expect_posterior(lt, ref$q_mean[2:3], ref$q_sd[2:3], label = "correlated log")
  # could fail: lkj_correlation(1) (uniform r) in the reference: Omega[1,2] off by 42 mcse
})

# ---- Common Bayesian priors ----------------------------------------------------------------

attitude_x <- function() cbind(1, attitude$complaints)

test_that("greta example: Improper flat prior (exact: least squares and sd quadrature)", {
  skip_if_no_python()
  e <- run_greta_example("Improper flat prior")
  d <- sample_example(with(e, model(int, coef, sd)))
  X <- attitude_x()
  y <- attitude$rating
  fit <- stats::lm(rating ~ complaints, attitude)
  # flat priors: b | sd ~ N(least squares, sd^2 (X'X)^-1), so the posterior mean is exactly
  # coef(lm) and the posterior sd sqrt(E[sd^2] diag((X'X)^-1)); E[sd^2] by quadrature over
  # p(sd | y) proportional to halfcauchy(sd; 3) sd^-(n - 2) exp(-RSS / (2 sd^2))
  g <- sd_grid(summary(fit)$sigma, nrow(X))
  rss <- sum(stats::residuals(fit)^2)
  lw <- dhalfcauchy(g$x, 3) + g$log_j - (nrow(X) - 2) * log(g$x) - rss / (2 * g$x^2)
  w <- exp(lw - max(lw))
  w <- w / sum(w)
  e_s2 <- sum(w * g$x^2)
  exact_sd <- sqrt(e_s2 * diag(solve(crossprod(X))))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st[1:2, ], unname(coef(fit)), exact_sd, label = "flat")
  expect_posterior(st[3, , drop = FALSE], sum(w * g$x), sqrt(e_s2 - sum(w * g$x)^2),
                   label = "flat")
  # the same from the general quadrature (prec 0 = flat)
  ref <- lg_posterior(X, y, g$x, 0, dhalfcauchy(g$x, 3) + g$log_j)
  expect_equal(ref$mean, unname(coef(fit)), tolerance = 1e-8)
  expect_equal(ref$sd, exact_sd, tolerance = 1e-8)
})

test_that("greta example: Ridge prior (quadrature over sd and tau)", {
  skip_if_no_python()
  e <- run_greta_example("Ridge prior")
  d <- sample_example(with(e, model(int, coef, sd, tau)))
  X <- attitude_x()
  y <- attitude$rating
  gs <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, nrow(X), 31)
  gt <- log_grid(-6, 9, 61)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gt$x))
  s <- gs$x[pts$i]
  tau <- gt$x[pts$j]
  log_w <- dhalfcauchy(s, 3) + gs$log_j[pts$i] + dinvgamma(tau, 1, 1) + gt$log_j[pts$j]
  ref <- lg_posterior(X, y, s, cbind(0, 1 / tau^2), log_w, scales = log(tau))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean[1]), c(ref$sd, ref$q_sd[1]), label = "ridge")
  lt <- draw_stats(d, "tau", log)
  expect_posterior(lt, ref$q_mean[2], ref$q_sd[2], label = "ridge log")
  # could fail: inverse_gamma(1, 2) for tau in the reference: log(tau) off by 24 mcse
})

test_that("greta example: Exponential-normal prior (quadrature over sd, tau and lambda)", {
  skip_if_no_python()
  e <- run_greta_example("Exponential-normal prior")
  d <- sample_example(with(e, model(int, coef, sd, lambda, tau)))
  X <- attitude_x()
  y <- attitude$rating
  gs <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, nrow(X), 31)
  gt <- log_grid(-8, 6, 57)
  gl <- log_grid(-8, 4, 97)
  # tau | lambda ~ exponential(rate 0.5 lambda^2), lambda ~ gamma(1, 1): p(tau) and
  # E[log lambda | tau] by quadrature over lambda
  k <- outer(gt$x, gl$x, function(t, l) stats::dexp(t, 0.5 * l^2)) *
    rep(stats::dgamma(gl$x, 1, 1) * exp(gl$log_j), each = length(gt$x))
  log_p_tau <- log(rowSums(k))
  e_log_lambda <- drop(k %*% log(gl$x)) / rowSums(k)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gt$x))
  s <- gs$x[pts$i]
  tau <- gt$x[pts$j]
  log_w <- dinvgamma(s, 1, 1) + gs$log_j[pts$i] + log_p_tau[pts$j] + gt$log_j[pts$j]
  ref <- lg_posterior(X, y, s, cbind(0, 1 / tau^2), log_w,
                      scales = cbind(log(tau), e_log_lambda[pts$j]))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean[1]), c(ref$sd, ref$q_sd[1]), label = "exp-normal")
  lt <- draw_stats(d, c("tau", "lambda"), log)
  expect_posterior(lt, ref$q_mean[2:3], label = "exp-normal log")
  # could fail: rate 2 lambda^2 for tau in the reference: log(lambda) off by 26 mcse
})

# The quadrature grid of the attitude regression under a local-scale prior: the residual sd
# (31 points) times lambda, log-spaced on exp(-4)..exp(log_upper); log_w holds sd's
# inverse-gamma(1, 1) prior, lambda's half-Cauchy(0, 1) and both grids' log Jacobians.
attitude_sd_lambda_grid <- function(log_upper, n_lambda) {
  X <- attitude_x()
  y <- attitude$rating
  gs <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, nrow(X), 31)
  gl <- log_grid(-4, log_upper, n_lambda)
  pts <- expand.grid(i = seq_along(gs$x), j = seq_along(gl$x))
  s <- gs$x[pts$i]
  lambda <- gl$x[pts$j]
  list(X = X, y = y, s = s, lambda = lambda,
       log_w = dinvgamma(s, 1, 1) + gs$log_j[pts$i] + dhalfcauchy(lambda, 1) +
         gl$log_j[pts$j])
}

test_that("greta example: Horseshoe prior (quadrature over sd and lambda)", {
  skip_if_no_python()
  e <- run_greta_example("Horseshoe prior")
  d <- sample_example(with(e, model(int, coef, sd)))
  g <- attitude_sd_lambda_grid(10, 71)
  # greta's vignette as written: coef ~ normal(0, tau^2 lambda^2), tau = 1
  ref <- with(g, lg_posterior(X, y, s, cbind(0, 1 / lambda^4), log_w))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "horseshoe")
  # lambda is local to horseshoe(), so it cannot be sampled, and the data (coef = 0.75, se 0.1)
  # outweigh the prior's form: sd = lambda instead of lambda^2 in the reference moves int,
  # coef and sd by under 4 mcse. This checks the likelihood, the sd prior and the flat int.
})

test_that("greta example: Regularised horseshoe prior (quadrature over sd and lambda)", {
  skip_if_no_python()
  e <- run_greta_example("Regularised horseshoe prior")
  d <- sample_example(with(e, model(int, coef, sd)))
  g <- attitude_sd_lambda_grid(16, 101)
  lambda_tilde <- g$lambda^2 / (1 + g$lambda^2)   # c = 1, tau = 1
  ref <- with(g, lg_posterior(X, y, s, cbind(0, 1 / lambda_tilde^4), log_w))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "reg horseshoe")
  # as for the horseshoe, the prior's form is outweighed by the data here (sqrt(lambda_tilde)
  # in the reference moves nothing by 4 mcse)
})

# ---- Advanced Bayesian models --------------------------------------------------------------

# The design of the two general formulations: int, coef * Sepal.Width and Z %*% gamma.
general_design <- function() {
  Z <- stats::model.matrix(~ Species + Sepal.Length * Species - 1, data = iris)
  list(X = cbind(1, iris$Sepal.Width), Z = Z)
}

test_that("greta example: Hierarchical linear regression in general conditional formulation", {
  skip_if_no_python()
  name <- "Hierarchical linear regression in general conditional formulation"
  # Verbatim it builds, but Sepal.Length is both the response and a column of Z, so the data
  # can be fitted exactly and the posterior is improper: p(sd | y) grows like sd^-(n - 7) as
  # sd -> 0 (here from base R), and any sampler drifts to sd = 0.
  e <- run_greta_example(name)
  expect_s3_class(with(e, model(int, coef, sd, gamma_matrix)), "tb_ppl_model")
  des <- general_design()
  X <- cbind(des$X, des$Z)
  prec <- c(1 / 100, 1 / 100, rep(1, 6))
  low <- lg_posterior(X, iris$Sepal.Length, c(1e-2, 1e-3, 1e-4), prec, 0)$lml
  expect_equal(diff(low) / log(10), rep(150 - 7, 2), tolerance = 1e-3)
  # The evident intent, with another response (Petal.Length): a proper posterior, Gaussian
  # given sd, so quadrature over sd is exact.
  e <- run_greta_example_with(name, "distribution(iris$Sepal.Length)",
                              "distribution(iris$Petal.Length)")
  d <- sample_example(with(e, model(int, coef, sd, gamma_matrix)))
  y <- iris$Petal.Length
  g <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, length(y))
  ref <- lg_posterior(X, y, g$x, prec, dhalfcauchy(g$x, 3) + g$log_j)
  st <- draw_stats(d, c("int", "coef", sprintf("gamma_matrix[%d,%d]", rep(1:3, 2),
                                                rep(1:2, each = 3)), "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "conditional")
  # could fail: gamma ~ normal(0, 2) in the reference: sds off by up to 50 mcse
})

test_that("greta example: Hierarchical linear regression in general marginal formulation", {
  skip_if_no_python()
  name <- "Hierarchical linear regression in general marginal formulation"
  des <- general_design()
  G <- matrix(0, 6, 6)
  for (s in 1:3) G[c(s, s + 3), c(s, s + 3)] <- diag(2)
  ZGZ <- des$Z %*% G %*% t(des$Z)
  # y ~ N(X b, V), V = diag(sd) + Z G Z' (the vignette puts sd on the diagonal of the
  # covariance); int flat, coef ~ normal(0, 5): b is Gaussian given sd (whitened by chol(V))
  marginal <- function(y, sds) {
    out <- lapply(sds, function(v) {
      Ri <- base::chol(ZGZ + diag(v, 150))
      Xw <- base::backsolve(Ri, des$X, transpose = TRUE)
      yw <- base::backsolve(Ri, y, transpose = TRUE)
      r <- lg_posterior(Xw, yw, 1, c(0, 1 / 25), 0)
      list(lml = r$lml - sum(log(diag(Ri))), m = r$mean, v = r$sd^2)
    })
    list(lml = vapply(out, `[[`, 0, "lml"), m = t(vapply(out, `[[`, numeric(2), "m")),
         v = t(vapply(out, `[[`, numeric(2), "v")))
  }
  # Verbatim, Sepal.Width is the response and the covariate: int = 0, coef = 1 fits exactly
  # and p(sd | y) grows without bound as sd -> 0, an improper posterior (base R shows it).
  e <- run_greta_example(name)
  expect_s3_class(with(e, model(int, coef, sd)), "tb_ppl_model")
  low <- marginal(iris$Sepal.Width, c(1e-4, 1e-5, 1e-6))$lml
  expect_true(all(diff(low) > 50))
  # The evident intent, with another response (Petal.Length): quadrature over sd.
  e <- run_greta_example_with(name, "sep <- t(iris$Sepal.Width)", "sep <- t(iris$Petal.Length)")
  # (a 150-dimensional multivariate normal with a covariance that moves: slow; full-size run
  # with TB_GRETA_EXAMPLES=all)
  full <- identical(Sys.getenv("TB_GRETA_EXAMPLES"), "all")
  d <- if (full) sample_example(with(e, model(int, coef, sd))) else
    sample_example(with(e, model(int, coef, sd)), n_samples = 200, warmup = 150, chains = 2)
  g <- log_grid(-4, 1, 51)
  mg <- marginal(iris$Petal.Length, g$x)
  ref <- mixture_moments(mg$lml + dhalfcauchy(g$x, 3) + g$log_j, mg$m, mg$v, cbind(g$x))
  st <- draw_stats(d, c("int", "coef", "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd),
                   min_ess = if (full) 400 else 100, max_rhat = if (full) 1.01 else 1.02,
                   label = "marginal")
  # could fail: sd as the standard deviation (diag(V) <- sd^2) in the reference: sd's mean off
  # by over 20 posterior sds. (The scale of G barely matters with three species: doubling it
  # moves int and coef by under a tenth of a posterior sd.)
})

test_that("greta example: Bayesian neural network (quadrature over sd; recovers the weights)", {
  skip_if_no_python()
  e <- run_greta_example("Bayesian neural network")
  d <- sample_example(with(e, model(weights, sd)))
  X <- e$X
  y <- drop(e$y)
  g <- sd_grid(summary(stats::lm(y ~ X - 1))$sigma, length(y))
  ref <- lg_posterior(X, y, g$x, 1, dinvgamma(g$x, 1, 1) + g$log_j)
  st <- draw_stats(d, c(vec("weights", 10), "sd"))
  expect_posterior(st, c(ref$mean, ref$q_mean), c(ref$sd, ref$q_sd), label = "bnn")
  # the generating values (beta, sd 0.1) within four posterior sds
  expect_true(all(abs(st[1:10, "mean"] - e$beta) < 4 * st[1:10, "sd"]))
  expect_lt(abs(st[11, "mean"] - 0.1), 4 * st[11, "sd"])
  # the data (noise sd 0.1) outweigh the normal(0, 1) prior (normal(0, 2) in the reference
  # moves nothing by 4 mcse): this checks the likelihood and the recovery of the weights
})

test_that("greta example: Factor analysis (rotation-invariant quantities)", {
  skip_if_no_python()
  if (!identical(Sys.getenv("TB_GRETA_EXAMPLES"), "all")) {
    skip("slow (about 45 s, with its Gibbs reference): set TB_GRETA_EXAMPLES=all")
  }
  skip_if_not_installed("MASS")
  e <- run_greta_example("Factor analysis")
  d <- sample_example(with(e, model(W, Z, psi)), warmup = 1000)
  X <- e$X
  n <- nrow(X)
  # W W', psi and W Z are invariant to rotations and sign flips of the factors
  W <- e$W
  ww <- W %*% t(W)
  wz <- e$W %*% e$Z
  up <- which(upper.tri(base::diag(5), diag = TRUE))
  ww_names <- sprintf("ww[%d,%d]", row(base::diag(5))[up], col(base::diag(5))[up])
  st <- rbind(draw_stats(d, sprintf("psi[%d,%d]", 1:5, 1:5)),
              draw_stats(calculate(ww, values = d), ww_names))
  # the reference: a Gibbs sampler in base R (every full conditional is conjugate)
  g <- fa_gibbs(X, 2, iters = 21000, burn = 1000, seed = 1)
  ref_mcse <- apply(g, 2, posterior::mcse_mean)
  expect_true(all(apply(g, 2, posterior::ess_bulk) > 150))
  expect_posterior(st, colMeans(g), ref_mcse = ref_mcse, min_ess = 100, max_rhat = 1.02,
                   label = "factor analysis")
  # the posterior predictive second moment E[W Z Z' W' / n + psi] is the data's X'X / n, to
  # within a fraction of its sampling sd
  fit <- as.matrix(calculate(wz, values = d))
  psi_draws <- as.matrix(d)[, sprintf("psi[%d,%d]", 1:5, 1:5)]
  pred <- Reduce(`+`, lapply(seq_len(nrow(fit)), function(i) {
    tcrossprod(matrix(fit[i, ], 5)) / n + base::diag(psi_draws[i, ])
  })) / nrow(fit)
  S <- crossprod(X) / n
  se <- sqrt((outer(base::diag(S), base::diag(S)) + S^2) / n)
  expect_lt(max(abs(pred - S) / se), 0.5)
  # could fail: inverse_gamma(3, 1) for psi in the Gibbs reference: psi off by 4-11 mcse
})
