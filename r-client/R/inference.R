# Models and inference: model(), mcmc() with nuts()/hmc(), calculate(), opt().

#' Define a model
#'
#' `model(...)` gathers everything connected to the given lazy arrays (their variables, the
#' data and the distributions assigned to it) into a joint model, compiled by the runtime.
#' The arguments are the arrays of interest, usually the parameters: [mcmc()] returns their
#' draws and [opt()] their values at the mode. As in greta, they are named after the
#' arguments (`model(mu, tau)` gives `mu` and `tau`; `model(effect = mu)` names it `effect`),
#' and every other variable of the model after the R object that holds it in the calling
#' environment (so that [calculate()] can evaluate any array over the draws).
#'
#' @param ... Lazy arrays (named, or named after the expressions).
#' @param precision `"double"` (float64) or `"single"` (float32), as greta's: the precision of
#'   the log density and its gradient (a single-precision model samples on the NumPy
#'   sampler; it applies on whatever backend the model's arrays live on).
#' @return A `tb_ppl_model`.
#' @examples
#' \dontrun{
#' mu <- normal(0, 5)
#' y <- as_data(c(0.3, -0.2, 1.1))
#' distribution(y) <- normal(mu, 1)
#' m <- model(mu)
#' }
#' @export
model <- function(..., precision = c("double", "single")) {
  if (identical(precision, c("double", "single"))) precision <- "double"
  if (!is.character(precision) || length(precision) != 1L ||
      !precision %in% c("double", "single")) {
    stop("model: precision must be \"double\" or \"single\"", call. = FALSE)
  }
  targets <- list(...)
  if (!length(targets)) {
    stop("model: give at least one lazy array (usually the parameters)", call. = FALSE)
  }
  nms <- ppl_target_names(targets, as.list(substitute(list(...)))[-1L], "model")
  if (anyDuplicated(nms)) {
    stop(sprintf("model: the arrays need distinct names; %s is used twice",
                 nms[anyDuplicated(nms)]), call. = FALSE)
  }
  env <- parent.frame()
  others <- list()
  for (n in ls(env, sorted = TRUE)) {
    v <- get0(n, envir = env, inherits = FALSE)
    if (is_lazy(v)) others[[n]] <- v
  }
  py <- ppl_r_idiom(ppl("build_model")(unname(targets), as.list(nms), others, precision))
  structure(list(py = py, targets = unname(targets), names = nms,
                 dims = lapply(targets, dim), arrays = others),
            class = "tb_ppl_model")
}

#' @export
print.tb_ppl_model <- function(x, ...) {
  cat("tensorbridge model of ", paste(x$names, collapse = ", "), "\n", sep = "")
  cat("  ", py_repr(x$py), "\n", sep = "")
  invisible(x)
}

ppl_model_arg <- function(model, fn) {
  if (!inherits(model, "tb_ppl_model")) {
    stop(sprintf("%s: model must be a model from model(), not %s", fn, ppl_describe(model)),
         call. = FALSE)
  }
  invisible(model)
}

# A single whole number >= lower, as an integer; errors name the argument.
ppl_count <- function(x, name, fn, lower = 1L) {
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x != round(x) || x < lower ||
      x > .Machine$integer.max) {
    stop(sprintf("%s: %s must be a whole number >= %d, not %s", fn, name, lower,
                 if (is.numeric(x) && length(x) == 1L) format(x) else ppl_describe(x)),
         call. = FALSE)
  }
  as.integer(x)
}

ppl_real <- function(x, name, fn, lower = -Inf, upper = Inf, null_ok = FALSE) {
  if (null_ok && is.null(x)) return(NULL)
  if (!is.numeric(x) || length(x) != 1L || is.na(x) || x <= lower || x >= upper) {
    stop(sprintf("%s: %s must be a number in (%s, %s), not %s", fn, name, format(lower),
                 format(upper), if (is.numeric(x) && length(x) == 1L) format(x) else
                   ppl_describe(x)), call. = FALSE)
  }
  as.double(x)
}

#' MCMC samplers
#'
#' `nuts()` is the No-U-Turn sampler (multinomial, as in Stan) and `hmc()` static Hamiltonian
#' Monte Carlo with `n_leapfrog` (jittered) leapfrog steps; both adapt the step size to
#' `target_accept` (unless `step_size` is given) and a diagonal metric during warmup.
#' greta's arguments are taken alongside: `max_treedepth` (`max_depth`), `Lmin` and `Lmax`
#' (each iteration's leapfrog count drawn uniformly from `Lmin:Lmax`, per chain), `epsilon`
#' (the initial step size, adapted in warmup) and `diag_sd` (the initial standard deviations
#' of the diagonal metric, adapted in warmup). greta's options run on the NumPy sampler.
#'
#' `rwmh()` is random-walk Metropolis-Hastings with a normal or uniform proposal of scale
#' `epsilon * diag_sd`, adapted in warmup (toward an acceptance rate of 0.234, 0.44 in one
#' dimension); `slice()` univariate slice sampling with doubling (Neal 2003), one parameter
#' after another. Both run on the NumPy sampler.
#'
#' @param max_depth Largest tree depth of NUTS (1 to 30).
#' @param n_leapfrog Leapfrog steps per HMC iteration.
#' @param target_accept Target mean acceptance statistic, in (0, 1).
#' @param step_size `NULL` (adapt) or a fixed positive step size.
#' @param max_treedepth greta's name of `max_depth`.
#' @param Lmin,Lmax `NULL` or the range of leapfrog steps per iteration.
#' @param epsilon Initial step size (`NULL`: found by Stan's heuristic); for `rwmh()` the
#'   initial proposal scale.
#' @param diag_sd Initial standard deviations of the diagonal metric (one number, or one per
#'   free parameter).
#' @param proposal `"normal"` or `"uniform"`.
#' @param max_doublings Most doublings of the slice interval per update.
#' @return A sampler (class `tb_sampler`) for [mcmc()].
#' @export
nuts <- function(max_depth = 10, target_accept = 0.8, step_size = NULL, max_treedepth = NULL,
                 epsilon = NULL, diag_sd = NULL) {
  max_depth <- ppl_count(max_depth, "max_depth", "nuts")
  if (!is.null(max_treedepth)) max_treedepth <- ppl_count(max_treedepth, "max_treedepth", "nuts")
  if (max_depth > 30L) stop("nuts: max_depth must be at most 30", call. = FALSE)
  structure(list(kind = "nuts", max_depth = max_depth,
                 target_accept = ppl_real(target_accept, "target_accept", "nuts", 0, 1),
                 step_size = ppl_real(step_size, "step_size", "nuts", 0, Inf, TRUE),
                 max_treedepth = max_treedepth,
                 epsilon = ppl_real(epsilon, "epsilon", "nuts", 0, Inf, TRUE),
                 diag_sd = ppl_sds(diag_sd, "nuts")),
            class = "tb_sampler")
}

#' @rdname nuts
#' @export
hmc <- function(n_leapfrog = 10, target_accept = 0.8, step_size = NULL, Lmin = NULL,
                Lmax = NULL, epsilon = NULL, diag_sd = NULL) {
  if (!is.null(Lmin)) Lmin <- ppl_count(Lmin, "Lmin", "hmc")
  if (!is.null(Lmax)) Lmax <- ppl_count(Lmax, "Lmax", "hmc")
  if (!is.null(Lmin) && !is.null(Lmax) && Lmin > Lmax) {
    stop(sprintf("hmc: Lmin (%d) must be at most Lmax (%d)", Lmin, Lmax), call. = FALSE)
  }
  structure(list(kind = "hmc", n_leapfrog = ppl_count(n_leapfrog, "n_leapfrog", "hmc"),
                 target_accept = ppl_real(target_accept, "target_accept", "hmc", 0, 1),
                 step_size = ppl_real(step_size, "step_size", "hmc", 0, Inf, TRUE),
                 Lmin = Lmin, Lmax = Lmax,
                 epsilon = ppl_real(epsilon, "epsilon", "hmc", 0, Inf, TRUE),
                 diag_sd = ppl_sds(diag_sd, "hmc")),
            class = "tb_sampler")
}

#' @rdname nuts
#' @export
rwmh <- function(proposal = c("normal", "uniform"), epsilon = 0.1, diag_sd = 1) {
  if (identical(proposal, c("normal", "uniform"))) proposal <- "normal"
  if (!is.character(proposal) || length(proposal) != 1L ||
      !proposal %in% c("normal", "uniform")) {
    stop("rwmh: proposal must be \"normal\" or \"uniform\"", call. = FALSE)
  }
  structure(list(kind = "rwmh", proposal = proposal,
                 epsilon = ppl_real(epsilon, "epsilon", "rwmh", 0, Inf),
                 diag_sd = ppl_sds(diag_sd, "rwmh")),
            class = "tb_sampler")
}

#' @rdname nuts
#' @export
slice <- function(max_doublings = 5) {
  max_doublings <- ppl_count(max_doublings, "max_doublings", "slice")
  if (max_doublings > 30L) stop("slice: max_doublings must be at most 30", call. = FALSE)
  structure(list(kind = "slice", max_doublings = max_doublings), class = "tb_sampler")
}

ppl_sds <- function(x, fn) {
  if (is.null(x)) return(NULL)
  if (!is.numeric(x) || !length(x) || anyNA(x) || any(x <= 0) || any(!is.finite(x))) {
    stop(sprintf("%s: diag_sd must be positive numbers", fn), call. = FALSE)
  }
  as.numeric(x)
}

#' @export
print.tb_sampler <- function(x, ...) {
  args <- x[setdiff(names(x), "kind")]
  args <- args[!vapply(args, is.null, logical(1))]
  shown <- vapply(args, function(a) paste(format(a), collapse = " "), "")
  cat(sprintf("%s sampler (%s)\n", x$kind,
              paste(names(args), shown, sep = " = ", collapse = ", ")))
  invisible(x)
}

#' Initial values
#'
#' `initials(mu = 1, tau = 2)` gives initial values for variables of a model, by name (the
#' names [model()] gives them). Variables not named start at random points (uniform on
#' (-2, 2) on the unconstrained scale, as Stan). Values outside a variable's support are
#' refused with an error naming the variable.
#'
#' @param ... Named values (numbers, vectors, matrices, arrays).
#' @return An object of class `tb_initials`.
#' @export
initials <- function(...) {
  values <- list(...)
  if (length(values) && (is.null(names(values)) || !all(nzchar(names(values))))) {
    stop("initials: every value must be named after a variable, e.g. initials(mu = 1)",
         call. = FALSE)
  }
  for (n in names(values)) ppl_array_arg(values[[n]], n, "initials")
  structure(values, class = "tb_initials")
}

#' @export
print.tb_initials <- function(x, ...) {
  cat("initial values for ", if (length(x)) paste(names(x), collapse = ", ") else
    "no variables", "\n", sep = "")
  invisible(x)
}

# initial_values for Python: NULL, a dict, or a list of dicts (one per chain).
ppl_initials <- function(initial_values, chains, fn) {
  if (is.null(initial_values)) return(NULL)
  if (inherits(initial_values, "tb_initials")) {
    if (!length(initial_values)) return(NULL)
    return(unclass(initial_values))
  }
  if (is.list(initial_values) && length(initial_values) &&
      all(vapply(initial_values, inherits, logical(1), "tb_initials"))) {
    if (!is.null(chains) && length(initial_values) != chains) {
      stop(sprintf("%s: initial_values has %d sets of initials for %d chains", fn,
                   length(initial_values), chains), call. = FALSE)
    }
    return(lapply(initial_values, function(iv) {
      iv <- unclass(iv)
      if (length(iv)) iv else stats::setNames(list(), character())
    }))
  }
  stop(sprintf(paste0(
    "%s: initial_values must be initials(...) or a list of initials(...), one per chain, ",
    "not %s"
  ), fn, ppl_describe(initial_values)), call. = FALSE)
}

# A text progress bar on stderr: the R door's progress sink (bridge/r/ppl.py's sample()) calls
# it on R's main thread with the runtime's McmcProgress event, fields by their R names
# (iteration, total, phase, divergences, warmup_divergences, elapsed), every pb_update
# iterations and at the last.
ppl_progress_bar <- function(total) {
  width <- 30L
  state <- new.env(parent = emptyenv())
  state$last <- 0
  function(info) {
    done <- info$iteration
    now <- info$elapsed
    if (done < total && now - state$last < 0.1) return(NULL)
    state$last <- now
    filled <- as.integer(floor(width * done / total))
    eta <- if (done > 0 && done < total) sprintf(" | eta %3.0fs", now / done * (total - done))
           else sprintf(" | %5.1fs", now)
    # the sampling bar counts the divergences of sampling only (as print(draws) does)
    divs <- info$divergences
    if (identical(info$phase, "sampling") && !is.null(info$warmup_divergences)) {
      divs <- divs - info$warmup_divergences
    }
    cat(sprintf("\r%8s [%s%s] %d/%d%s | %d divergences ", info$phase,
                strrep("=", filled), strrep(" ", width - filled), done, total, eta,
                divs), file = stderr())
    if (done >= total) cat("\n", file = stderr())
    NULL
  }
}

ppl_names <- function(names, dims) {
  unlist(Map(function(n, d) {
    if (prod(d) == 1) return(n)
    idx <- arrayInd(seq_len(prod(d)), d)
    paste0(n, "[", apply(idx, 1L, paste, collapse = ","), "]")
  }, names, dims), use.names = FALSE)
}

# An mcmc.list from an array (draws, columns, chains).
ppl_mcmc_list <- function(values, columns, start, thin) {
  d <- dim(values)
  chains <- lapply(seq_len(d[[3L]]), function(k) {
    mat <- matrix(values[, , k], nrow = d[[1L]], ncol = d[[2L]],
                  dimnames = list(NULL, columns))
    coda::mcmc(mat, start = start, thin = thin)
  })
  coda::mcmc.list(chains)
}

#' Draw from the posterior of a model by MCMC
#'
#' Runs `chains` chains in lockstep (batched by the runtime) with `warmup` adaptation
#' iterations and then `n_samples` draws each (every `thin`-th kept). The result is a
#' `coda::mcmc.list` (one `coda::mcmc` per chain) of the model's target arrays, with columns
#' named as greta does (`mu`, `eta[1,1]`, `eta[2,1]`, ...), so `summary()`, `plot()` and
#' `posterior::as_draws_array()` work on it. Attributes: `sampler_diagnostics` (per-draw
#' `accept_stat`, `n_leapfrog`, `tree_depth`, `divergent`, `energy`, `lp` as draws x chains
#' matrices, `divergences`, `warmup_divergences`, `step_size`, `interrupted`) and `model_info`
#' (what [calculate()] uses to evaluate other arrays over the draws).
#'
#' With `verbose = TRUE` a progress bar on stderr is updated from the sampler (R callbacks on
#' R's main thread). An interrupt (Ctrl-C) stops sampling at the next iteration and returns
#' the draws taken so far, with a warning.
#'
#' The same `seed` gives the same draws as the Python API (`tensorbridge.mcmc(..., seed=)`) on
#' the same model. Without a seed, one is drawn from R's random number generator, so
#' `set.seed()` makes runs reproducible.
#'
#' @param model A model from [model()].
#' @param sampler [nuts()] (the default) or [hmc()].
#' @param n_samples Draws per chain after warmup (before thinning).
#' @param thin Keep every `thin`-th draw.
#' @param warmup Warmup (adaptation) iterations per chain.
#' @param chains Number of chains.
#' @param verbose Show a progress bar.
#' @param pb_update Progress bar updates every `pb_update` iterations.
#' @param initial_values [initials()], or a list of them (one per chain).
#' @param seed `NULL` or a whole number.
#' @param n_cores `NULL` (sample in this process) or the number of worker processes to split
#'   the chains over (greta's argument); the draws are the same either way.
#' @param cluster `NULL` (sample on this machine) or a Dask cluster from [tb_cluster()]: the
#'   chains run as tasks on its workers (blocks of chains, each from its own random stream),
#'   so the draws are the same as in this process whatever the number of workers.
#' @param backend `"auto"` (the default: the compiled sampler when a C compiler is available
#'   and the model can be compiled, else NumPy with a warning saying why), `"compiled"` (an
#'   error when it cannot be) or `"numpy"`. The draws are the same either way, up to rounding.
#' @return A `coda::mcmc.list` (class `c("tb_mcmc_list", "mcmc.list")`).
#' @examples
#' \dontrun{
#' mu <- normal(0, 5)
#' y <- as_data(c(0.3, -0.2, 1.1))
#' distribution(y) <- normal(mu, 1)
#' draws <- mcmc(model(mu), n_samples = 500, warmup = 500, seed = 1)
#' summary(draws)
#' }
#' @export
mcmc <- function(model, sampler = nuts(), n_samples = 1000, thin = 1, warmup = 1000,
                 chains = 4, verbose = TRUE, pb_update = 50, initial_values = initials(),
                 seed = NULL, n_cores = NULL, backend = "auto", cluster = NULL) {
  fn <- "mcmc"
  ppl_model_arg(model, fn)
  ppl_check_sampler(sampler, fn)
  n_samples <- ppl_count(n_samples, "n_samples", fn)
  thin <- ppl_count(thin, "thin", fn)
  warmup <- ppl_count(warmup, "warmup", fn, lower = 0L)
  chains <- ppl_count(chains, "chains", fn)
  pb_update <- ppl_count(pb_update, "pb_update", fn)
  run <- ppl_run_args(verbose, seed, n_cores, cluster, fn)
  seed <- run$seed
  n_cores <- run$n_cores
  iv <- ppl_initials(initial_values, chains, fn)
  total <- warmup + n_samples * thin
  callback <- if (verbose) ppl_progress_bar(total) else NULL
  py_sampler <- do.call(ppl("sampler"), sampler)
  draws <- ppl("sample")(model$py, py_sampler, n_samples, warmup, chains, thin, seed, iv,
                         callback, pb_update, n_cores, backend,
                         cluster = if (is.null(cluster)) NULL else cluster$py)
  ppl_mcmc_result(draws, model, warmup, thin, verbose, fn)
}

# The checks mcmc() and sbc() share: the sampler object, and how and where the run goes
# (verbose, seed: drawn from R's stream when NULL, n_cores, cluster). Returns the seed and
# n_cores as integers.
ppl_check_sampler <- function(sampler, fn) {
  if (!inherits(sampler, "tb_sampler")) {
    stop(sprintf("%s: sampler must be nuts(), hmc(), rwmh() or slice(), not %s", fn,
                 ppl_describe(sampler)), call. = FALSE)
  }
  invisible(sampler)
}

ppl_run_args <- function(verbose, seed, n_cores, cluster, fn) {
  if (!is.logical(verbose) || length(verbose) != 1L || is.na(verbose)) {
    stop(sprintf("%s: verbose must be TRUE or FALSE", fn), call. = FALSE)
  }
  seed <- if (is.null(seed)) sample.int(.Machine$integer.max, 1L) else
    ppl_count(seed, "seed", fn, lower = 0L)
  if (!is.null(n_cores)) n_cores <- ppl_count(n_cores, "n_cores", fn)
  if (!is.null(cluster) && !inherits(cluster, "tb_cluster")) {
    stop(sprintf("%s: cluster must be NULL or tb_cluster(\"tcp://host:port\"), not %s", fn,
                 ppl_describe(cluster)), call. = FALSE)
  }
  list(seed = seed, n_cores = n_cores)
}

ppl_mcmc_result <- function(draws, model, warmup, thin, verbose, fn) {
  info <- ppl("draws_info")(draws)
  if (isTRUE(info$interrupted)) {
    warning(sprintf(
      "%s: interrupted; returning the %d draws per chain taken so far", fn, info$n_draws
    ), call. = FALSE)
    if (verbose) cat("\n", file = stderr())
  }
  if (info$n_draws == 0L) {
    warning(sprintf("%s: interrupted during warmup: no draws were taken", fn), call. = FALSE)
    return(invisible(NULL))
  }
  values <- ppl("draws_values")(draws, model$targets)
  out <- ppl_mcmc_list(values, ppl_names(model$names, model$dims), warmup + 1L, thin)
  stats <- lapply(info$stats, function(s) {
    dim(s) <- c(info$n_draws, info$chains)
    s
  })
  attr(out, "sampler_diagnostics") <- c(stats, list(
    divergences = info$divergences, warmup_divergences = info$warmup_divergences,
    step_size = info$step_size, interrupted = info$interrupted
  ))
  attr(out, "model_info") <- list(model = model, draws = draws, warmup = warmup, thin = thin)
  class(out) <- c("tb_mcmc_list", class(out))
  out
}

#' @export
print.tb_mcmc_list <- function(x, ..., n = 5L) {
  diag <- attr(x, "sampler_diagnostics")
  n_draws <- if (length(x)) nrow(x[[1L]]) else 0L
  cat(sprintf("tensorbridge draws: %d chains x %d draws of %s\n", length(x), n_draws,
              paste(coda::varnames(x), collapse = ", ")))
  if (!is.null(diag)) {
    cat(sprintf("%d divergent transitions%s\n", diag$divergences,
                if (isTRUE(diag$interrupted)) " (interrupted run)" else ""))
  }
  if (length(x)) {
    cat(sprintf("first %d draws of chain 1:\n", min(n, n_draws)))
    print(utils::head(unclass(x[[1L]]), n), ...)
  }
  cat("(a coda mcmc.list: summary(), plot(), posterior::as_draws_array() work on it)\n")
  invisible(x)
}

#' Summary statistics of draws, as the runtime computes them
#'
#' Mean, standard deviation, 5%, 50% and 95% quantiles, rank-normalised split R-hat, and bulk
#' and tail effective sample sizes of every column of an `mcmc.list`, computed by the
#' runtime: the same numbers as the Python API's `Draws.summary()` for the same draws.
#'
#' @param draws A `coda::mcmc.list` (from [mcmc()] or [calculate()]).
#' @return A data frame with one row per column of the draws.
#' @export
tb_summary <- function(draws) {
  if (!inherits(draws, "mcmc.list")) {
    stop(sprintf("tb_summary: draws must be an mcmc.list, not %s", ppl_describe(draws)),
         call. = FALSE)
  }
  cols <- coda::varnames(draws)
  n <- nrow(draws[[1L]])
  values <- array(unlist(lapply(draws, function(ch) as.double(unclass(ch)))),
                  c(n, length(cols), length(draws)))
  s <- ppl("summarise")(values, as.list(cols))
  parameter <- as.character(unlist(s$parameter))
  out <- data.frame(s[setdiff(names(s), "parameter")], row.names = parameter)
  out
}

#' Calculate values of lazy arrays
#'
#' `calculate(x, values = draws)` evaluates lazy arrays at every draw of an [mcmc()] result
#' (derived quantities, posterior predictive means): the result is a `coda::mcmc.list` like
#' the draws, with columns named after the arrays. `calculate(x, values = list(mu = 1, ...))`
#' evaluates them with the given values for the arrays they depend on, named after the R
#' objects that hold those arrays in the calling environment, or else after the variable
#' names that [model()] gave; the result is a list of R arrays. All draws are evaluated in one vectorised pass by the runtime.
#'
#' @param ... Lazy arrays (named, or named after the expressions).
#' @param values An `mcmc.list` from [mcmc()], or a named list of values.
#' @param nsim `NULL`, or a number of simulations: then the arrays are simulated from the
#'   model's priors (variables from their distributions, data with a distribution from its
#'   likelihood: prior predictive), holding any `values` (a named list) fixed; with
#'   `values = draws`, each simulation takes the variables of one random posterior draw
#'   (the posterior predictive, e.g. `calculate(y, values = draws, nsim = 100)`), and new
#'   stochastic arrays (not in the model) are simulated given that draw; more simulations
#'   than draws pick draws with replacement, with a warning.
#' @param seed With `nsim`: `NULL` (drawn from R's random number generator) or a whole number.
#' @param cluster `NULL`, or with `values = draws` a Dask cluster from [tb_cluster()]: the
#'   draws are evaluated (or simulated from) in blocks, as tasks on its workers, with the
#'   values of this process (posterior predictive: the same draws picked; the new random
#'   draws of each block from its own stream of `seed`, the same on any number of workers).
#' @return An `mcmc.list` (for draws) or a named list of arrays; with `nsim`, arrays with a
#'   leading dimension of `nsim`.
#' @examples
#' \dontrun{
#' theta <- mu + tau * eta
#' calculate(theta, values = draws)
#' calculate(theta, values = list(mu = 1, tau = 2, eta = rep(0, 8)))
#' calculate(theta, nsim = 100)
#' calculate(y, values = draws, nsim = 100)   # posterior predictive checks
#' }
#' @export
calculate <- function(..., values = list(), nsim = NULL, seed = NULL, cluster = NULL) {
  targets <- list(...)
  if (!length(targets)) stop("calculate: give at least one lazy array", call. = FALSE)
  if (!is.null(cluster) && (!inherits(cluster, "tb_cluster") ||
                            !inherits(values, "mcmc.list"))) {
    stop(paste0("calculate: cluster must be NULL, or tb_cluster(\"tcp://host:port\") with ",
                "values = draws from mcmc()"), call. = FALSE)
  }
  py_cluster <- if (is.null(cluster)) NULL else cluster$py
  nms <- ppl_target_names(targets, as.list(substitute(list(...)))[-1L], "calculate")
  if (!is.null(nsim)) {
    nsim <- ppl_count(nsim, "nsim", "calculate")
    seed <- if (is.null(seed)) sample.int(.Machine$integer.max, 1L) else
      ppl_count(seed, "seed", "calculate", lower = 0L)
  }
  targets <- unname(targets)
  if (inherits(values, "mcmc.list")) {
    info <- attr(values, "model_info")
    if (is.null(info) || is.null(info$draws)) {
      stop(paste0(
        "calculate: values is an mcmc.list without the draws of the model's variables; ",
        "give the result of mcmc() as it is"
      ), call. = FALSE)
    }
    if (!is.null(nsim)) {  # posterior predictive: simulate from nsim random posterior draws
      out <- ppl_r_idiom(ppl("simulate_draws")(targets, nsim, seed, info$draws, py_cluster))
      res <- Map(function(v, t) {
        dim(v) <- c(nsim, dim(t))
        v
      }, out, targets)
      names(res) <- nms
      return(res)
    }
    out <- ppl("calculate_draws")(targets, info$draws, py_cluster)
    res <- ppl_mcmc_list(out, ppl_names(nms, lapply(targets, dim)), info$warmup + 1L,
                        info$thin)
    attr(res, "model_info") <- info
    class(res) <- c("tb_mcmc_list", class(res))
    return(res)
  }
  if (!is.list(values) || length(values) &&
      (is.null(names(values)) || !all(nzchar(names(values))))) {
    stop(paste0(
      "calculate: values must be the result of mcmc() or a named list of values, e.g. ",
      "list(mu = 1)"
    ), call. = FALSE)
  }
  env <- parent.frame()
  feed <- list()
  by_name <- list()
  for (n in names(values)) {
    ppl_array_arg(values[[n]], sprintf("values$%s", n), "calculate")
    x <- get0(n, envir = env)
    if (is_lazy(x)) {
      feed[[length(feed) + 1L]] <- list(x, values[[n]])
    } else {
      by_name[[n]] <- values[[n]]
    }
  }
  if (!length(by_name)) by_name <- NULL
  if (!is.null(nsim)) {
    out <- ppl_r_idiom(ppl("simulate_values")(targets, nsim, seed, feed, by_name))
    res <- Map(function(v, t) {
      dim(v) <- c(nsim, dim(t))
      v
    }, out, targets)
    names(res) <- nms
    return(res)
  }
  out <- ppl("calculate_values")(targets, feed, by_name)
  res <- Map(function(v, t) {
    dim(v) <- dim(t)
    v
  }, out, targets)
  names(res) <- nms
  res
}

#' Find the posterior mode (or maximum likelihood) of a model
#'
#' Maximises the model's joint log density over the unconstrained parameters (so bounds hold)
#' with L-BFGS (`"lbfgs"`) or Adam (`"adam"`). With `adjust = FALSE` (the default, as the
#' Python API) the objective is the log density of the parameters as written, i.e. the mode
#' of the posterior of the constrained parameters; `adjust = TRUE` adds the Jacobians of the
#' transformations (greta's default).
#'
#' @param model A model from [model()].
#' @param optimiser `"lbfgs"`, `"adam"` or one of greta's [optimisers], such as
#'   `adam(learning_rate = 0.1)`.
#' @param max_iterations Iteration limit.
#' @param tolerance Convergence tolerance.
#' @param initial_values [initials()]; variables not given start at random points drawn
#'   with `seed`.
#' @param adjust Include the Jacobian adjustments.
#' @param learning_rate Adam's learning rate.
#' @param seed Seed of the random starting point.
#' @return A list like greta's: `par` (values of the model's target arrays, named),
#'   `value` (the negative log density at `par`), `iterations` and `convergence` (0 when
#'   converged, 1 otherwise).
#' @examples
#' \dontrun{
#' opt(m)$par
#' }
#' @export
opt <- function(model, optimiser = c("lbfgs", "adam"), max_iterations = 1000,
                tolerance = 1e-8, initial_values = initials(), adjust = FALSE,
                learning_rate = 0.05, seed = 0) {
  fn <- "opt"
  ppl_model_arg(model, fn)
  if (identical(optimiser, c("lbfgs", "adam"))) optimiser <- "lbfgs"
  if (inherits(optimiser, "tb_optimiser")) {
    optimiser <- do.call(ppl("optimiser"), c(list(optimiser$name), optimiser$parameters))
  } else if (!is.character(optimiser) || length(optimiser) != 1L ||
      !optimiser %in% c("lbfgs", "adam")) {
    shown <- if (is.character(optimiser) && length(optimiser) == 1L) {
      sprintf("\"%s\"", optimiser)
    } else {
      ppl_describe(optimiser)
    }
    stop(sprintf("opt: optimiser must be \"lbfgs\", \"adam\" or an optimiser such as adam(), not %s",
                 shown), call. = FALSE)
  }
  max_iterations <- ppl_count(max_iterations, "max_iterations", fn)
  tolerance <- ppl_real(tolerance, "tolerance", fn, 0, Inf)
  learning_rate <- ppl_real(learning_rate, "learning_rate", fn, 0, Inf)
  if (!is.logical(adjust) || length(adjust) != 1L || is.na(adjust)) {
    stop("opt: adjust must be TRUE or FALSE", call. = FALSE)
  }
  seed <- ppl_count(seed, "seed", fn, lower = 0L)
  iv <- ppl_initials(initial_values, NULL, fn)
  if (is.list(iv) && is.null(names(iv))) {
    stop("opt: initial_values must be one initials(...)", call. = FALSE)
  }
  res <- ppl("optimise")(model$py, model$targets, optimiser, iv, max_iterations, tolerance,
                         learning_rate, adjust, seed)
  par <- Map(function(v, d) {
    dim(v) <- d
    v
  }, res$par, model$dims)
  names(par) <- model$names
  list(par = par, value = -res$value, iterations = res$iterations,
       convergence = if (isTRUE(res$converged)) 0L else 1L)
}

#' Simulate from a model's priors
#'
#' Draws `nsim` times from the prior of the model: its target arrays and the other named
#' arrays of the model that have a distribution (variables with a prior, and data with a
#' likelihood, simulated given the simulated parameters: the prior predictive), as greta's
#' `simulate()`. Variables with a flat prior ([variable()]) cannot be simulated.
#'
#' @param object A model from [model()].
#' @param nsim Number of simulations.
#' @param seed `NULL` (drawn from R's random number generator) or a whole number.
#' @param ... Unused.
#' @return A named list of arrays, each with a leading dimension of `nsim`.
#' @importFrom stats simulate
#' @export
simulate.tb_ppl_model <- function(object, nsim = 1, seed = NULL, ...) {
  nsim <- ppl_count(nsim, "nsim", "simulate")
  seed <- if (is.null(seed)) sample.int(.Machine$integer.max, 1L) else
    ppl_count(seed, "seed", "simulate", lower = 0L)
  extra <- ppl("model_arrays")(object$py, object$arrays)
  extra <- setdiff(as.character(unlist(extra)), object$names)
  targets <- c(object$targets, unname(object$arrays[extra]))
  nms <- c(object$names, extra)
  out <- ppl_r_idiom(ppl("simulate_values")(targets, nsim, seed, list()))
  res <- Map(function(v, t) {
    dim(v) <- c(nsim, dim(t))
    v
  }, out, targets)
  names(res) <- nms
  res
}

# Names of the lazy arrays passed to model() or calculate(): the argument name, else the
# expression as written (as greta); every target must be a lazy array.
ppl_target_names <- function(targets, exprs, fn) {
  nms <- names(targets)
  if (is.null(nms)) nms <- rep("", length(targets))
  auto <- !nzchar(nms)
  nms[auto] <- vapply(exprs[auto], function(e) paste(deparse(e), collapse = " "), "")
  for (k in seq_along(targets)) {
    if (!is_lazy(targets[[k]])) {
      stop(sprintf("%s: argument %d (%s) must be a lazy array, not %s", fn, k, nms[[k]],
                   ppl_describe(targets[[k]])), call. = FALSE)
    }
  }
  nms
}

#' Extra samples
#'
#' More draws from the chains of an [mcmc()] run, as greta's `extra_samples()`: each chain goes
#' on from its last state with the step size and metric adapted in warmup (no new warmup) and
#' the next numbers of its random stream. The result holds the earlier draws followed by the
#' new ones. On the NumPy sampler a run of `n` draws followed by `extra_samples(n_samples = m)`
#' gives the same draws as one run of `n + m`; the compiled sampler's chains go on (on the
#' NumPy sampler) from their last kept draw.
#'
#' @param draws Draws returned by [mcmc()] (or by `extra_samples()`).
#' @param n_samples Number of further draws per chain.
#' @param thin Keep every `thin`-th iteration.
#' @param verbose Show a progress bar.
#' @param pb_update Iterations between progress-bar updates.
#' @return The combined draws, an `mcmc.list` like [mcmc()]'s.
#' @examples
#' \dontrun{
#' draws <- mcmc(m, n_samples = 500)
#' draws <- extra_samples(draws, n_samples = 500)
#' }
#' @export
extra_samples <- function(draws, n_samples = 1000, thin = 1, verbose = TRUE, pb_update = 50) {
  fn <- "extra_samples"
  info <- attr(draws, "model_info")
  if (!inherits(draws, "tb_mcmc_list") || is.null(info)) {
    stop(sprintf("extra_samples: draws must be the result of mcmc(), not %s",
                 ppl_describe(draws)), call. = FALSE)
  }
  n_samples <- ppl_count(n_samples, "n_samples", fn)
  thin <- ppl_count(thin, "thin", fn)
  pb_update <- ppl_count(pb_update, "pb_update", fn)
  if (!is.logical(verbose) || length(verbose) != 1L || is.na(verbose)) {
    stop("extra_samples: verbose must be TRUE or FALSE", call. = FALSE)
  }
  callback <- if (verbose) ppl_progress_bar(n_samples * thin) else NULL
  more <- ppl("extra")(info$draws, n_samples, thin, callback, pb_update)
  ppl_mcmc_result(more, info$model, info$warmup, info$thin, verbose, fn)
}

#' Optimisers
#'
#' greta's optimisation methods for [opt()] (`opt(m, optimiser = adam(learning_rate = 0.1))`),
#' with greta's argument names, run by the runtime on the unconstrained free state:
#' first-order methods (`gradient_descent()`, `momentum()`, `adagrad()`, `adadelta()`,
#' `rms_prop()`, `adam()`, `adamax()`, `nadam()`), quasi-Newton (`bfgs()`, `l_bfgs_b()`) and
#' the derivative-free Nelder-Mead simplex (`nelder_mead()`).
#'
#' @param learning_rate Step-size multiplier.
#' @param momentum Decay of the velocity (`momentum()`, `rms_prop()`).
#' @param use_nesterov Nesterov's look-ahead form of momentum.
#' @param initial_accumulator_value Starting value of AdaGrad's squared-gradient sum.
#' @param rho Decay of AdaDelta's running averages, in \[0, 1\].
#' @param epsilon Small constant keeping divisions finite.
#' @param decay Decay of RMSProp's mean squared gradient.
#' @param beta1,beta2 Decay of the first and second moment estimates.
#' @param maxcor Correction pairs kept by L-BFGS.
#' @param maxls Most line-search halvings per L-BFGS iteration.
#' @return An optimiser (class `tb_optimiser`) for [opt()].
#' @name optimisers
NULL

ppl_optimiser <- function(name, ...) {
  parameters <- list(...)
  ppl("optimiser")(name, ...)  # the runtime checks the arguments, naming them
  structure(list(name = name, parameters = parameters), class = "tb_optimiser")
}

#' @rdname optimisers
#' @export
gradient_descent <- function(learning_rate = 0.01) {
  ppl_optimiser("gradient_descent", learning_rate = learning_rate)
}

#' @rdname optimisers
#' @export
momentum <- function(learning_rate = 0.001, momentum = 0.9, use_nesterov = TRUE) {
  ppl_optimiser("momentum", learning_rate = learning_rate, momentum = momentum,
                use_nesterov = use_nesterov)
}

#' @rdname optimisers
#' @export
adagrad <- function(learning_rate = 0.8, initial_accumulator_value = 0.1) {
  ppl_optimiser("adagrad", learning_rate = learning_rate,
                initial_accumulator_value = initial_accumulator_value)
}

#' @rdname optimisers
#' @export
adadelta <- function(learning_rate = 0.001, rho = 1, epsilon = 1e-08) {
  ppl_optimiser("adadelta", learning_rate = learning_rate, rho = rho, epsilon = epsilon)
}

#' @rdname optimisers
#' @export
rms_prop <- function(learning_rate = 0.1, decay = 0.9, momentum = 0, epsilon = 1e-10) {
  ppl_optimiser("rms_prop", learning_rate = learning_rate, decay = decay, momentum = momentum,
                epsilon = epsilon)
}

#' @rdname optimisers
#' @export
adam <- function(learning_rate = 0.1, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08) {
  ppl_optimiser("adam", learning_rate = learning_rate, beta1 = beta1, beta2 = beta2,
                epsilon = epsilon)
}

#' @rdname optimisers
#' @export
adamax <- function(learning_rate = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08) {
  ppl_optimiser("adamax", learning_rate = learning_rate, beta1 = beta1, beta2 = beta2,
                epsilon = epsilon)
}

#' @rdname optimisers
#' @export
nadam <- function(learning_rate = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-08) {
  ppl_optimiser("nadam", learning_rate = learning_rate, beta1 = beta1, beta2 = beta2,
                epsilon = epsilon)
}

#' @rdname optimisers
#' @export
bfgs <- function() ppl_optimiser("bfgs")

#' @rdname optimisers
#' @export
l_bfgs_b <- function(maxcor = 10, maxls = 20) {
  ppl_optimiser("l_bfgs_b", maxcor = maxcor, maxls = maxls)
}

#' @rdname optimisers
#' @export
nelder_mead <- function() ppl_optimiser("nelder_mead")

#' @export
print.tb_optimiser <- function(x, ...) {
  args <- vapply(x$parameters, function(a) format(a), "")
  cat(sprintf("%s optimiser (%s)\n", x$name,
              paste(names(args), args, sep = " = ", collapse = ", ")))
  invisible(x)
}
