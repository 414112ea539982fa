#' Simulation-based calibration of mcmc() on a model
#'
#' Checks that [mcmc()] draws from the right posterior of `model` (Talts et al. 2018,
#' "Validating Bayesian inference algorithms with simulation-based calibration"): each of
#' `nsim` replications draws the parameters and the data from the model's prior (and prior
#' predictive), fits the model to that data with [mcmc()], thins the pooled draws of all
#' chains to `thin_to` and records the rank of each true value among them (0 to `thin_to`).
#' If the sampler is right, every rank is uniform; a chi-square test over `bins` equal bins of
#' ranks gives a p-value per scalar parameter, which passes when it is above
#' `alpha / (number of scalars)` (Bonferroni's correction).
#'
#' Replication `i` draws its simulation and its chains from seeds of `(seed, i)` only, so the
#' result is the same in this process, with `n_cores` worker processes and on any number of
#' Dask workers ([tb_cluster()]), and the first replications of a longer run are those of a
#' shorter one. The model travels to the workers as data (its graph and data).
#'
#' @param model A model from [model()], whose data arrays have a likelihood.
#' @param nsim Number of replications.
#' @param data `NULL` (every data array of the model that has a distribution) or the data
#'   arrays to simulate and refit (a lazy array or a list of them).
#' @param parameters `NULL` (every variable of the model, named as in [mcmc()]'s draws) or a
#'   named list of lazy arrays to rank (derived quantities such as `mu + tau * eta` too).
#' @param n_samples,warmup,chains Per replication, as [mcmc()]'s.
#' @param thin_to The pooled draws are thinned to this many; ranks take `thin_to + 1` values.
#' @param bins Bins of the uniformity test; must divide `thin_to + 1`.
#' @param sampler [nuts()] (the default), [hmc()], [rwmh()] or [slice()].
#' @param backend As [mcmc()]'s, chosen once for every replication.
#' @param seed `NULL` (drawn from R's random number generator) or a whole number.
#' @param alpha Family-wise level of the uniformity tests, in (0, 1).
#' @param cluster `NULL` or a Dask cluster from [tb_cluster()]: one replication per task.
#' @param n_cores `NULL` or a number of local worker processes (not with `cluster`).
#' @param verbose Report replications as they finish.
#' @return An object of class `tb_sbc`: `ranks` and `truth` (matrices, replications by
#'   scalars, columns named as [mcmc()]'s), `counts` (bins by scalars), `p_values`, `passed`
#'   (named by scalar), `threshold`, `divergences` and `ess_bulk_min` (per replication: the
#'   divergent transitions and the lowest bulk ESS of the ranked scalars), and the settings
#'   (`nsim`, `thin_to`, `bins`, `seed`, `alpha`).
#' @examples
#' \dontrun{
#' mu <- normal(0, 1)
#' y <- as_data(rep(0, 5))
#' distribution(y) <- normal(mu, 1)
#' res <- sbc(model(mu), nsim = 100, seed = 1)
#' res$p_values
#' }
#' @export
sbc <- function(model, nsim = 100, data = NULL, parameters = NULL, n_samples = 250,
                warmup = 400, chains = 2, thin_to = 99, bins = 10, sampler = nuts(),
                backend = "auto", seed = NULL, alpha = 0.01, cluster = NULL, n_cores = NULL,
                verbose = TRUE) {
  fn <- "sbc"
  ppl_model_arg(model, fn)
  nsim <- ppl_count(nsim, "nsim", fn)
  n_samples <- ppl_count(n_samples, "n_samples", fn)
  warmup <- ppl_count(warmup, "warmup", fn, lower = 0L)
  chains <- ppl_count(chains, "chains", fn)
  thin_to <- ppl_count(thin_to, "thin_to", fn)
  bins <- ppl_count(bins, "bins", fn, lower = 2L)
  ppl_check_sampler(sampler, fn)
  if (!is.numeric(alpha) || length(alpha) != 1L || is.na(alpha) || alpha <= 0 || alpha >= 1) {
    stop("sbc: alpha must be a number in (0, 1)", call. = FALSE)
  }
  run <- ppl_run_args(verbose, seed, n_cores, cluster, fn)
  seed <- run$seed
  n_cores <- run$n_cores
  if (is_lazy(data)) data <- list(data)
  if (!is.null(data) && (!is.list(data) || !all(vapply(data, is_lazy, logical(1L))))) {
    stop("sbc: data must be NULL, a lazy array or a list of lazy arrays", call. = FALSE)
  }
  if (!is.null(parameters) && (!is.list(parameters) || is.null(names(parameters)) ||
                               !all(nzchar(names(parameters))) ||
                               !all(vapply(parameters, is_lazy, logical(1L))))) {
    stop("sbc: parameters must be NULL or a named list of lazy arrays", call. = FALSE)
  }
  py_sampler <- do.call(ppl("sampler"), sampler)
  res <- ppl_r_idiom(ppl("sbc_run")(
    model$py, nsim, data, parameters, n_samples, warmup, chains, thin_to, bins, py_sampler,
    backend, seed, alpha, if (is.null(cluster)) NULL else cluster$py, n_cores, verbose))
  names_ <- unlist(res$names)
  shape <- function(m, rows) matrix(m, nrow = rows, ncol = length(names_),
                                    dimnames = list(NULL, names_))
  structure(list(
    ranks = shape(res$ranks, nsim), truth = shape(res$truth, nsim),
    counts = shape(res$counts, bins),
    p_values = stats::setNames(as.numeric(res$p_values), names_),
    passed = stats::setNames(as.logical(unlist(res$passed)), names_),
    threshold = res$threshold, divergences = as.integer(res$divergences),
    ess_bulk_min = as.numeric(res$ess_bulk_min), nsim = nsim, thin_to = thin_to,
    bins = bins, seed = seed, alpha = alpha
  ), class = "tb_sbc")
}

#' @export
print.tb_sbc <- function(x, ...) {
  cat(sprintf(paste0("Simulation-based calibration: %d replications, ranks 0..%d in %d bins;",
                     " PASS when p > %.4g\n"), x$nsim, x$thin_to, x$bins, x$threshold))
  tab <- data.frame(p_value = round(x$p_values, 4),
                    result = ifelse(x$passed, "PASS", "MISS"),
                    counts = apply(x$counts, 2L, paste, collapse = " "),
                    row.names = names(x$p_values))
  print(tab)
  cat(sprintf("%d divergent transitions in all\n", sum(x$divergences)))
  invisible(x)
}
