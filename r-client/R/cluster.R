#' A Dask cluster to run mcmc's chains on
#'
#' Names a running Dask distributed scheduler (started with `dask scheduler`, or by a cluster
#' manager on SSH, Kubernetes or an HPC job queue) for `mcmc(..., cluster = )`. The chains are
#' split into tasks of `chains_per_task` chains; each task runs on a worker that has the
#' tensorbridge Python package installed, from the model sent as data (its graph and its data).
#' Every chain draws from its own random stream of `seed`, so the draws are those of the same
#' call without a cluster, whatever the number of workers, and a task that a lost worker was
#' running is run again from its seed on another. Progress reaches the progress bar, and an
#' interrupt (Ctrl-C) stops the running tasks, cancels the queued ones and returns the draws
#' taken so far.
#'
#' Nothing is contacted until [mcmc()] runs: it connects to the scheduler for the run and
#' disconnects after it. The Python that tensorbridge uses needs Dask distributed
#' (`pip install "tensorbridge[dask]"`).
#'
#' @param address The scheduler's address, such as `"tcp://127.0.0.1:8786"`.
#' @param chains_per_task Chains per task (a whole number, at least 1); blocks never hold a
#'   lone chain unless the run has one. The draws depend on it, not on the cluster's size.
#' @return An object of class `tb_cluster` for the `cluster` argument of [mcmc()], [sbc()]
#'   (one replication per task) and [calculate()] (blocks of draws per task).
#' @examples
#' \dontrun{
#' draws <- mcmc(m, chains = 8, seed = 1, cluster = tb_cluster("tcp://127.0.0.1:8786"))
#' }
#' @export
tb_cluster <- function(address, chains_per_task = 2) {
  if (!is.character(address) || length(address) != 1L || is.na(address) ||
      !grepl("^[A-Za-z]+://.+", address)) {
    stop(sprintf("tb_cluster: address must be one string such as \"tcp://host:8786\", not %s",
                 ppl_describe(address)), call. = FALSE)
  }
  chains_per_task <- ppl_count(chains_per_task, "chains_per_task", "tb_cluster")
  structure(list(address = address, chains_per_task = chains_per_task,
                 py = ppl("cluster")(address, chains_per_task)),
            class = "tb_cluster")
}
