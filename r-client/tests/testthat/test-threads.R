test_that("8 Python threads x 1000 calls of one R callback, while Python blocks in join()", {
  skip_if_no_python()
  tt <- testing()
  main_calls <- 0L
  cb <- function(t, i) {
    main_calls <<- main_calls + 1L
    t * 100000 + i
  }
  r <- tt$call_from_threads(cb, 8L, 1000L)
  expect_identical(r$ok, 8000L)
  expect_identical(r$errors, 0L)
  expect_identical(r$threads, 8L) # the calls really came from 8 other threads
  expect_identical(main_calls, 8000L)
})

test_that("the same on a worker thread (tb_call(.background = TRUE))", {
  skip_if_no_python()
  tt <- testing()
  cb <- function(t, i) t * 100000 + i
  r <- tb_call(tt$call_from_threads, cb, 8L, 1000L, .background = TRUE)
  expect_identical(r$ok, 8000L)
  bg <- tb_background(tt$call_from_threads)
  expect_identical(bg(cb, 2L, 50L)$ok, 100L)
})

test_that("errors of R callbacks called from threads reach the calling thread", {
  skip_if_no_python()
  tt <- testing()
  cb <- function(t, i) if (i %% 10 == 0) stop("bad call ", i) else t * 100000 + i
  r <- tt$call_from_threads(cb, 4L, 100L)
  expect_identical(r$ok, 360L)
  expect_identical(r$errors, 40L)
  expect_match(r$messages[[1]], "ForeignError: \\[r simpleError\\] bad call")
  expect_error(tt$call_in_thread(function() stop("from a thread")), "^from a thread$")
})

test_that("nested callbacks: R -> Python -> R -> Python -> R, on threads and not", {
  skip_if_no_python()
  tt <- testing()
  inner <- function(x) x * 2
  outer <- function(x) tt$call_in_thread(inner, x) + 1
  expect_identical(tt$call_in_thread(outer, 5), 11)
  expect_identical(tt$identity(function(x) tt$identity(x))(3), 3)
})

# Run `call` (R code) in a child R process, send it SIGINT once the R callback `cb` (which
# does some R work, so that the signal often lands inside R code) has run a few times, and
# return the child's output.
interrupt_child <- function(call) {
  dir <- tempfile("sigint")
  dir.create(dir)
  script <- file.path(dir, "child.R")
  writeLines(c(
    "library(tensorbridge)",
    "tt <- tb_import('tensorbridge.bridge.r.testing')",
    "th <- tb_import('threading')",
    "n0 <- th$active_count()",
    "calls <- 0L",
    "cb <- function(i) {",
    "  calls <<- calls + 1L",
    "  x <- 0; for (k in 1:20000) x <- x + k",
    sprintf("  if (calls == 3L) file.create('%s')", file.path(dir, "ready")),
    "  NULL",
    "}",
    sprintf("r <- tryCatch(%s,", call),
    "              interrupt = function(e) 'INTERRUPTED',",
    "              error = function(e) paste('ERROR', conditionMessage(e)))",
    "cat('RESULT:', r, '\\n')",
    "Sys.sleep(0.3)",
    "cat('THREADS:', th$active_count() - n0, '\\n')",
    "cat('CALLS>0:', calls > 0, '\\n')",
    "cat('STILL WORKS:', tt$identity(42), '\\n')"
  ), script)
  pidfile <- file.path(dir, "pid")
  out <- file.path(dir, "out")
  cmd <- sprintf("%s %s --vanilla %s > %s 2>&1 & echo $! > %s; wait",
                 paste(python_env(), collapse = " "), shQuote(file.path(R.home("bin"), "Rscript")),
                 shQuote(script), shQuote(out), shQuote(pidfile))
  system2("bash", c("-c", shQuote(cmd)), wait = FALSE)
  deadline <- Sys.time() + 60
  while (!file.exists(file.path(dir, "ready")) && Sys.time() < deadline) Sys.sleep(0.02)
  expect_true(file.exists(file.path(dir, "ready")))
  pid <- as.integer(readLines(pidfile))
  started <- Sys.time()
  tools::pskill(pid, tools::SIGINT)
  while (!any(grepl("STILL WORKS", readLines(out, warn = FALSE))) && Sys.time() < deadline) {
    Sys.sleep(0.05)
  }
  list(text = paste(readLines(out, warn = FALSE), collapse = "\n"),
       seconds = as.numeric(difftime(Sys.time(), started, units = "secs")))
}

test_that("Ctrl-C (SIGINT) cancels long work on a worker cleanly", {
  skip_if_no_python()
  skip_on_os("windows")
  for (attempt in 1:3) {
    r <- interrupt_child("tb_call(tt$spin, 60, cb, 0.002, .background = TRUE)")
    expect_match(r$text, "RESULT: INTERRUPTED")
    expect_match(r$text, "THREADS: 0")
    expect_match(r$text, "CALLS>0: TRUE")
    expect_match(r$text, "STILL WORKS: 42")
    expect_lt(r$seconds, 20)
  }
})

test_that("Ctrl-C (SIGINT) interrupts a direct call that runs R callbacks", {
  skip_if_no_python()
  skip_on_os("windows")
  r <- interrupt_child("tt$spin(60, cb, 0.002)")
  expect_match(r$text, "RESULT: INTERRUPTED")
  expect_match(r$text, "STILL WORKS: 42")
})
