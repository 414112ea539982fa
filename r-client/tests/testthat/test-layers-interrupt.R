# Ctrl-C during fit(): training stops at the end of the current batch, R gets an interrupt,
# and the model keeps the weights learnt so far (and keeps working).

test_that("Ctrl-C (SIGINT) stops fit() cleanly and keeps the trained weights", {
  skip_if_no_python()
  skip_on_os("windows")
  dir <- tempfile("fit_sigint")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  script <- file.path(dir, "child.R")
  writeLines(c(
    "library(tensorbridge)",
    "th <- tb_import('threading')",
    "n0 <- th$active_count()",
    "set.seed(1)",
    "x <- matrix(rnorm(4000 * 8), 4000, 8)",
    "y <- x %*% rnorm(8)",
    "model <- model_sequential(input_shape = 8) |> layer_dense(16, activation = 'relu') |> layer_dense(1)",
    "model |> compile(optimizer = optimizer_sgd(0.01), loss = 'mse')",
    "w0 <- get_weights(model)",
    "epochs <- 0L",
    "cb <- callback_lambda(on_epoch_end = function(epoch, logs) {",
    "  epochs <<- epoch",
    sprintf("  if (epoch == 3L) file.create('%s')", file.path(dir, "ready")),
    "})",
    "r <- tryCatch({ fit(model, x, y, epochs = 100000, batch_size = 8, verbose = 0, callbacks = list(cb)); 'FINISHED' },",
    "              interrupt = function(e) 'INTERRUPTED',",
    "              error = function(e) paste('ERROR', conditionMessage(e)))",
    "cat('RESULT:', r, '\\n')",
    "Sys.sleep(0.3)",
    "cat('THREADS:', th$active_count() - n0, '\\n')",
    "cat('EPOCHS>=3:', epochs >= 3L, '\\n')",
    "cat('TRAINED:', !isTRUE(all.equal(w0, get_weights(model))), '\\n')",
    "p <- predict(model, x[1:3, ])",
    "cat('PREDICTS:', all(is.finite(p)) && identical(dim(p), c(3L, 1L)), '\\n')",
    "h <- fit(model, x[1:16, ], y[1:16], epochs = 1, verbose = 0)",
    "cat('STILL TRAINS:', identical(h$epoch, 1L), '\\n')"
  ), script)
  pidfile <- file.path(dir, "pid")
  out <- file.path(dir, "out")
  libs <- paste0("R_LIBS=", shQuote(paste(.libPaths(), collapse = ":")))
  cmd <- sprintf("%s %s %s --vanilla %s > %s 2>&1 & echo $! > %s; wait",
                 paste(python_env(), collapse = " "), libs,
                 shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script), shQuote(out),
                 shQuote(pidfile))
  system2("bash", c("-c", shQuote(cmd)), wait = FALSE)
  deadline <- Sys.time() + 120
  while (!file.exists(file.path(dir, "ready")) && Sys.time() < deadline) Sys.sleep(0.02)
  expect_true(file.exists(file.path(dir, "ready")))
  pid <- as.integer(readLines(pidfile))
  started <- Sys.time()
  tools::pskill(pid, tools::SIGINT)
  while (!any(grepl("STILL TRAINS", readLines(out, warn = FALSE))) && Sys.time() < deadline) {
    Sys.sleep(0.05)
  }
  text <- paste(readLines(out, warn = FALSE), collapse = "\n")
  expect_match(text, "RESULT: INTERRUPTED")
  expect_match(text, "THREADS: 0")
  expect_match(text, "EPOCHS>=3: TRUE")
  expect_match(text, "TRAINED: TRUE")
  expect_match(text, "PREDICTS: TRUE")
  expect_match(text, "STILL TRAINS: TRUE")
  expect_lt(as.numeric(difftime(Sys.time(), started, units = "secs")), 20)
})
