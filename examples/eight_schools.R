# Eight schools (non-centred) from R, written as in greta: the model every front door runs in
# `make demo`.
#
#   Rscript examples/eight_schools.R [seed] [summary.json] [--plot trace.png] [--progress]
#       [--chains 4] [--warmup 1000] [--samples 1000]
#
# Run from the checkout (the tensorbridge R package installed: R CMD INSTALL r-client; Python
# found as .venv/bin/python or through TENSORBRIDGE_PYTHON). Prints the posterior summary of mu,
# tau and theta[1..8] (mean, sd, q5, q95, R-hat, bulk ESS, computed by the runtime exactly as the
# Python API's Draws.summary()); with a JSON path also writes it there in the format
# examples/showcase.py reads from every language: {"language", "index_base", "seconds",
# "chains", "draws", "divergences", "posterior": {name: {mean, sd, q5, q95, rhat, ess_bulk}}}.
# With --plot, saves coda's trace and density plots of mu and tau as a PNG.

suppressPackageStartupMessages(library(tensorbridge))

args <- commandArgs(trailingOnly = TRUE)
take_option <- function(name, default = NULL) {
  at <- match(name, args)
  if (is.na(at)) return(default)
  if (at == length(args)) stop(sprintf("%s needs a value", name), call. = FALSE)
  value <- args[[at + 1L]]
  args <<- args[-c(at, at + 1L)]
  value
}
plot_path <- take_option("--plot")
chains <- as.integer(take_option("--chains", "4"))
warmup <- as.integer(take_option("--warmup", "1000"))
n_samples <- as.integer(take_option("--samples", "1000"))
progress <- "--progress" %in% args
args <- setdiff(args, "--progress")
seed <- if (length(args) >= 1L) as.integer(args[[1L]]) else 42L
json_path <- if (length(args) >= 2L) args[[2L]] else NULL
if (is.na(seed)) stop("the seed (first argument) must be a whole number", call. = FALSE)

# the model, exactly as a greta user writes it
y <- as_data(c(28, 8, -3, 7, -1, 1, 18, 12))
sigma <- c(15, 10, 16, 11, 9, 11, 10, 18)
mu <- normal(0, 5)
tau <- cauchy(0, 5, truncation = c(0, Inf))   # half-Cauchy
eta <- normal(0, 1, dim = 8)
theta <- mu + tau * eta
distribution(y) <- normal(theta, sigma)
m <- model(mu, tau, theta)

started <- Sys.time()
draws <- mcmc(m, n_samples = n_samples, warmup = warmup, chains = chains, seed = seed,
              verbose = progress)
seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))

smry <- tb_summary(draws)
divergences <- attr(draws, "sampler_diagnostics")$divergences
columns <- c("mean", "sd", "q5", "q95", "rhat", "ess_bulk")
cat(sprintf("eight schools from R: %d chains x %d draws (warmup %d), seed %d\n", chains,
            n_samples, warmup, seed))
print(format(smry[, columns], digits = 3), quote = FALSE)
cat(sprintf("%d divergent transitions; %.1f s\n", divergences, seconds))

if (!is.null(json_path)) {
  posterior <- lapply(rownames(smry), function(p) as.list(smry[p, columns]))
  names(posterior) <- rownames(smry)
  result <- list(language = "R", index_base = 1L, seconds = seconds, chains = chains,
                 draws = n_samples, divergences = divergences, posterior = posterior)
  jsonlite::write_json(result, json_path, auto_unbox = TRUE, digits = NA, pretty = TRUE)
  cat("summary written to", json_path, "\n")
}

if (!is.null(plot_path)) {
  grDevices::png(plot_path, width = 1000, height = 700)
  plot(draws[, c("mu", "tau")])   # coda: trace and density per parameter
  invisible(grDevices::dev.off())
  cat("trace plot written to", plot_path, "\n")
}
