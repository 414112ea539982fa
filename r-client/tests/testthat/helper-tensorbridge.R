# Shared helpers. Tests need the Python side (.venv of the checkout, or TENSORBRIDGE_PYTHON);
# without it they are skipped, unless TENSORBRIDGE_REQUIRE_PYTHON=1 (make test sets it).

python_ready <- local({
  state <- NULL
  function() {
    if (is.null(state)) {
      state <<- tryCatch({
        tensorbridge:::tb_init()
        TRUE
      }, tensorbridge_setup_error = function(e) conditionMessage(e))
    }
    state
  }
})

skip_if_no_python <- function() {
  ok <- python_ready()
  if (isTRUE(ok)) return(invisible(TRUE))
  if (identical(Sys.getenv("TENSORBRIDGE_REQUIRE_PYTHON"), "1")) {
    stop("the Python side is required (TENSORBRIDGE_REQUIRE_PYTHON=1): ", ok)
  }
  skip(paste("Python side not available:", ok))
}

testing <- function() {
  skip_if_no_python()
  tb_import("tensorbridge.bridge.r.testing")
}

# The identity function of Python: x goes R -> Python -> R.
roundtrip <- function(x) testing()$identity(x)

# Live handle counts once garbage collection has settled (an object whose finalizer ran frees
# what it references only at a later collection, so collect until the counts stop changing).
live_handles <- function() {
  last <- NULL
  for (i in 1:20) {
    invisible(gc())
    h <- tb_handles()
    now <- c(live = h$live, r_objects = h$r_objects)
    if (identical(now, last)) break
    last <- now
  }
  now
}

# Run an R script in a fresh R process; returns its output lines (stdout + stderr).
run_r_script <- function(code, timeout = 120) {
  script <- tempfile(fileext = ".R")
  writeLines(code, script)
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- suppressWarnings(system2(rscript, c("--vanilla", script), stdout = TRUE, stderr = TRUE,
                                  timeout = timeout, env = python_env()))
  out
}

# Environment assignments that make a child R process find the same Python.
python_env <- function() {
  py <- tensorbridge:::.tb$python
  if (is.null(py)) character() else paste0("TENSORBRIDGE_PYTHON=", shQuote(py))
}
