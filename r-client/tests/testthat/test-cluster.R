# mcmc(cluster = tb_cluster(...)) against a real Dask scheduler and worker, started as separate
# processes by the Python that tensorbridge uses (ports chosen by the OS)

cluster_model <- function() {
  y <- as_data(c(28, 8, -3, 7, -1, 1, 18, 12))
  sigma <- as_data(c(15, 10, 16, 11, 9, 11, 10, 18))
  mu <- normal(0, 5)
  tau <- cauchy(0, 5, truncation = c(0, Inf))
  eta <- normal(0, 1, dim = 8)
  distribution(y) <- normal(mu + tau * eta, sigma)
  m <- model(mu, tau)
  attr(m, "theta") <- mu + tau * eta  # for calculate() over the draws
  m
}

test_that("tb_cluster() checks its arguments", {
  expect_error(tb_cluster(8786), "tb_cluster: address must be one string")
  expect_error(tb_cluster(c("tcp://a:1", "tcp://b:1")), "tb_cluster: address must be one")
  skip_if_no_python()
  expect_error(tb_cluster("tcp://127.0.0.1:1", chains_per_task = 0),
               "tb_cluster: chains_per_task must be a whole number >= 1")
  expect_error(mcmc(cluster_model(), cluster = "tcp://127.0.0.1:1", verbose = FALSE),
               "mcmc: cluster must be NULL or tb_cluster")
})

test_that("mcmc on a Dask cluster gives the draws of this process, with progress", {
  skip_if_no_python()
  if (!reticulate::py_module_available("distributed")) {
    skip("Dask distributed is not installed in tensorbridge's Python")
  }
  python <- reticulate::py_config()$python  # (sys.executable is R's binary when embedded)
  dir <- tempfile("tb-dask-")
  dir.create(dir)
  file <- file.path(dir, "scheduler.json")
  pids <- file.path(dir, c("scheduler.pid", "worker.pid"))
  on.exit({
    for (f in pids) if (file.exists(f)) tools::pskill(as.integer(readLines(f, warn = FALSE)))
    unlink(dir, recursive = TRUE)
  }, add = TRUE)
  start <- function(args, log) {
    # R's LD_LIBRARY_PATH would give the child another libpython's symbols (its ssl fails)
    system2(python, c("-m", args), stdout = file.path(dir, log), stderr = file.path(dir, log),
            wait = FALSE, env = "LD_LIBRARY_PATH=")
  }
  start(c("distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
          "--no-dashboard", "--scheduler-file", file, "--pid-file", pids[1]), "scheduler.log")
  deadline <- Sys.time() + 60
  while (!file.exists(file) || !file.exists(pids[1])) {  # until the scheduler has its port
    if (Sys.time() > deadline) stop("the Dask scheduler did not start in 60 s")
    Sys.sleep(0.05)
  }
  address <- NULL
  while (is.null(address)) {  # the file may be there before its JSON is complete
    address <- tryCatch(jsonlite::fromJSON(file)$address, error = function(e) NULL)
    if (is.null(address)) {
      if (Sys.time() > deadline) stop("the Dask scheduler wrote no address in 60 s")
      Sys.sleep(0.05)
    }
  }
  # no need to wait for the worker: the tasks wait on the scheduler until it joins
  start(c("distributed.cli.dask_worker", address, "--host", "127.0.0.1", "--nthreads", "1",
          "--no-nanny", "--no-dashboard", "--pid-file", pids[2]), "worker.log")

  m <- cluster_model()
  here <- mcmc(m, n_samples = 40, warmup = 40, chains = 4, seed = 3, verbose = FALSE,
               backend = "numpy")
  out <- capture.output(
    there <- mcmc(m, n_samples = 40, warmup = 40, chains = 4, seed = 3, verbose = TRUE,
                  pb_update = 10, backend = "numpy", cluster = tb_cluster(address)),
    type = "message")
  expect_identical(coda::nchain(there), 4L)
  for (k in 1:4) expect_identical(unclass(there[[k]]), unclass(here[[k]]))
  # the bar was fed from the worker's progress, up to the last iteration
  expect_match(paste(out, collapse = ""), "80/80")

  # calculate() over the draws and sbc() run as tasks on the worker, with this process's values
  theta <- attr(m, "theta")
  expect_identical(unclass(calculate(theta, values = here, cluster = tb_cluster(address))[[2]]),
                   unclass(calculate(theta, values = here)[[2]]))
  expect_error(calculate(theta, values = list(mu = 1), cluster = tb_cluster(address)),
               "calculate: cluster must be NULL, or tb_cluster")
  kw <- list(nsim = 3, n_samples = 10, warmup = 20, thin_to = 9, bins = 5, seed = 2,
             backend = "numpy", verbose = FALSE)
  expect_identical(do.call(sbc, c(list(m, cluster = tb_cluster(address)), kw))$ranks,
                   do.call(sbc, c(list(m), kw))$ranks)
})
