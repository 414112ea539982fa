# Finding and starting the Python side.

.tb <- new.env(parent = emptyenv())

MIN_PYTHON_PACKAGE <- "0.1.0"

#' Choose the Python that tensorbridge uses
#'
#' By default tensorbridge uses the project's virtual environment: the first
#' `.venv/bin/python` found in the working directory or one of its parents. The
#' environment variable `TENSORBRIDGE_PYTHON` overrides that, and `tb_use_python()`
#' overrides both. Call it before anything starts Python (Python can be started only
#' once per R session).
#'
#' @param python Path to a Python executable that has the `tensorbridge` Python
#'   package installed (with NumPy < 2, which reticulate 1.28 needs).
#' @return The path, invisibly.
#' @examples
#' \dontrun{
#' tb_use_python("/path/to/checkout/.venv/bin/python")
#' }
#' @export
tb_use_python <- function(python) {
  stopifnot(is.character(python), length(python) == 1L, !is.na(python))
  if (isTRUE(.tb$initialized)) {
    if (!identical(abs_path(python), .tb$python)) {
      stop(sprintf(paste0(
        "tensorbridge: Python is already running from %s in this R session; it cannot ",
        "be switched to %s. Restart R and call tb_use_python() first."
      ), .tb$python, python), call. = FALSE)
    }
    return(invisible(python))
  }
  .tb$requested <- python
  invisible(python)
}

find_python <- function() {
  if (!is.null(.tb$requested)) {
    return(list(path = .tb$requested, source = "tb_use_python()"))
  }
  env <- Sys.getenv("TENSORBRIDGE_PYTHON", "")
  if (nzchar(env)) {
    return(list(path = env, source = "the TENSORBRIDGE_PYTHON environment variable"))
  }
  dir <- normalizePath(getwd(), mustWork = FALSE)
  repeat {
    candidate <- file.path(dir, ".venv", "bin", "python")
    if (file.exists(candidate)) {
      return(list(path = candidate, source = sprintf(".venv found from %s", getwd())))
    }
    parent <- dirname(dir)
    if (identical(parent, dir)) break
    dir <- parent
  }
  NULL
}

setup_failure <- function(problem) {
  stop(structure(
    class = c("tensorbridge_setup_error", "error", "condition"),
    list(message = paste0(
      "tensorbridge: the Python side is not ready: ", problem, "\n",
      "Fix: run `make demo` in the tensorbridge checkout (it creates .venv with the ",
      "tensorbridge Python package and NumPy < 2), then restart R. To use another Python: ",
      "tb_use_python(\"/path/to/python\") or Sys.setenv(TENSORBRIDGE_PYTHON = ",
      "\"/path/to/python\") before the first tensorbridge call."
    ), call = NULL)
  ))
}

# An absolute path that keeps symlinks (a venv's python is a symlink to the base one).
abs_path <- function(p) {
  p <- path.expand(p)
  if (!startsWith(p, "/")) p <- file.path(normalizePath(dirname(p), mustWork = FALSE), basename(p))
  p
}

version_less <- function(a, b) utils::compareVersion(a, b) < 0

# Start Python (once) and the R host of the bridge.
tb_init <- function() {
  if (isTRUE(.tb$initialized)) return(invisible(TRUE))
  found <- find_python()
  if (is.null(found)) {
    setup_failure(sprintf(paste0(
      "no Python found (looked for .venv/bin/python in %s and its parent folders; ",
      "TENSORBRIDGE_PYTHON is not set)."
    ), getwd()))
  }
  path <- abs_path(found$path)
  if (!file.exists(path)) {
    setup_failure(sprintf("%s (from %s) does not exist.", found$path, found$source))
  }
  if (reticulate::py_available(initialize = FALSE)) {
    current <- abs_path(reticulate::py_config()$python)
    if (!identical(normalizePath(current), normalizePath(path))) {
      setup_failure(sprintf(paste0(
        "reticulate already started %s in this R session, but tensorbridge needs %s ",
        "(from %s)."
      ), current, path, found$source))
    }
  } else {
    # RETICULATE_PYTHON (rather than use_python()) skips reticulate's discovery, which
    # would look for Poetry/pipenv projects in the working directory.
    Sys.setenv(RETICULATE_PYTHON = path)
  }
  mod <- tryCatch(
    reticulate::import("tensorbridge.bridge.r.rhost", convert = TRUE),
    error = function(e) {
      setup_failure(sprintf(
        "%s (from %s) cannot import tensorbridge: %s", path, found$source,
        conditionMessage(e)
      ))
    }
  )
  versions <- reticulate::py_eval(
    "(__import__('tensorbridge').__version__, __import__('numpy').__version__, __import__('sys').version.split()[0])",
    convert = TRUE
  )
  if (version_less(versions[[1L]], MIN_PYTHON_PACKAGE)) {
    setup_failure(sprintf(
      "%s has tensorbridge %s; this R package needs %s or newer.",
      path, versions[[1L]], MIN_PYTHON_PACKAGE
    ))
  }
  if (!version_less(versions[[2L]], "2")) {
    setup_failure(sprintf(
      "%s has NumPy %s; reticulate %s needs NumPy < 2.", path, versions[[2L]],
      as.character(utils::packageVersion("reticulate"))
    ))
  }
  dll <- getLoadedDLLs()[["tensorbridge"]][["path"]]
  host <- mod$start(dll, r_dispatch, .tb$session)
  get <- function(name) reticulate::py_get_attr(host, name)
  .tb$host <- host
  .tb$m_call <- get("call")
  .tb$m_call_bg <- get("call_background")
  .tb$m_getattr <- get("getattr")
  .tb$m_setattr <- get("setattr")
  .tb$m_getitem <- get("getitem")
  .tb$m_dir <- get("dir")
  .tb$m_repr <- get("repr")
  .tb$m_import <- get("import_module")
  .tb$m_eval <- get("evaluate")
  .tb$m_to_python <- get("to_python")
  .tb$m_release <- get("release")
  .tb$m_release_now <- get("release_now")
  .tb$m_stats <- get("stats")
  .tb$m_pump <- get("pump")
  .tb$m_release_outbox <- get("release_outbox")
  .tb$m_register_py_converter <- get("register_py_converter")
  sigint <- tryCatch(
    .Call(tb_c_install_sigint, tb_call_py(get("install_sigint"), list())),
    error = function(e) FALSE
  )
  .tb$sigint <- isTRUE(sigint)
  .tb$event_loop <- tryCatch(event_loop_start(get), error = function(e) FALSE)
  .tb$python <- path
  .tb$python_source <- found$source
  .tb$versions <- versions
  .tb$initialized <- TRUE
  .tb$api_fns <- new.env(parent = emptyenv())
  .tb$api_ids <- new.env(parent = emptyenv())
  # tensors' finalizers release through a C function pointer (see finalize_tensor())
  tryCatch(
    .Call(tb_c_set_release, api("release_callback")(), .tb$session),
    error = function(e) NULL
  )
  invisible(TRUE)
}

#' Report the Python configuration tensorbridge uses
#'
#' Like `reticulate::py_config()`: which Python was found and how, the versions of
#' Python, NumPy and the tensorbridge Python package, and whether it is running. Calling
#' it starts Python unless `start = FALSE`.
#'
#' @param start Start Python if it is not running yet.
#' @return An object of class `tb_config` (a list), printed readably.
#' @export
tb_config <- function(start = TRUE) {
  if (start && !isTRUE(.tb$initialized)) tb_init()
  found <- if (isTRUE(.tb$initialized)) {
    list(path = .tb$python, source = .tb$python_source)
  } else {
    find_python()
  }
  out <- list(
    python = if (is.null(found)) NA_character_ else found$path,
    source = if (is.null(found)) "not found" else found$source,
    running = isTRUE(.tb$initialized),
    python_version = NA_character_,
    numpy_version = NA_character_,
    tensorbridge_version = NA_character_,
    r_package_version = as.character(utils::packageVersion("tensorbridge")),
    reticulate_version = as.character(utils::packageVersion("reticulate")),
    threads_wakeup = NA,
    event_loop = NA
  )
  if (isTRUE(.tb$initialized)) {
    out$tensorbridge_version <- .tb$versions[[1L]]
    out$numpy_version <- .tb$versions[[2L]]
    out$python_version <- .tb$versions[[3L]]
    out$threads_wakeup <- isTRUE(reticulate::py_to_r(reticulate::py_get_attr(reticulate::py_get_attr(.tb$host, "executor"), "signal_ok")))
    out$event_loop <- isTRUE(.tb$event_loop)
  }
  structure(out, class = "tb_config")
}

#' @export
print.tb_config <- function(x, ...) {
  cat("tensorbridge configuration\n")
  rows <- c(
    "python" = x$python,
    "found by" = x$source,
    "running" = if (x$running) "yes" else "no",
    "Python" = x$python_version,
    "NumPy" = x$numpy_version,
    "tensorbridge (Python)" = x$tensorbridge_version,
    "tensorbridge (R)" = x$r_package_version,
    "reticulate" = x$reticulate_version,
    "thread wakeup signal" = if (is.na(x$threads_wakeup)) NA else if (x$threads_wakeup) "yes" else "no",
    "R event loop serves threads" = if (is.null(x$event_loop) || is.na(x$event_loop)) NA else
      if (x$event_loop) "yes" else "no"
  )
  rows[is.na(rows)] <- "-"
  width <- max(nchar(names(rows)))
  cat(sprintf("  %-*s  %s\n", width, names(rows), rows), sep = "")
  invisible(x)
}

# Python threads calling R while R is idle (at the prompt, in Sys.sleep()): R's event loop
# serves their calls (see r-client/src/tensorbridge.c). TRUE when installed.
event_loop_start <- function(get) {
  fd <- .Call(tb_c_event_loop, tb_pump_events)
  if (fd < 0L) return(FALSE)
  addrs <- tb_call_py(get("set_wakeup_fd"), list(fd))
  isTRUE(.Call(tb_c_release_gil_when_idle, addrs[[1L]], addrs[[2L]], addrs[[3L]]))
}

# Run the calls Python threads queued for R's main thread (R's event loop calls this).
tb_pump_events <- function() {
  if (isTRUE(.tb$initialized) && !isTRUE(.tb$closing)) .tb$pci(.tb$m_pump, list(0), NULL)
  invisible(NULL)
}
