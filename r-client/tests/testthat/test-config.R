test_that("tb_config() reports the Python that was found and its versions", {
  skip_if_no_python()
  cfg <- tb_config()
  expect_s3_class(cfg, "tb_config")
  expect_true(cfg$running)
  expect_true(file.exists(cfg$python))
  expect_match(cfg$numpy_version, "^1\\.")
  expect_true(nzchar(cfg$tensorbridge_version))
  expect_output(print(cfg), "tensorbridge configuration")
  expect_output(print(cfg), "found by")
})

test_that("a missing Python gives one message with the command that fixes it", {
  skip_if_no_python()
  out <- run_r_script(c(
    "Sys.setenv(TENSORBRIDGE_PYTHON = '/nonexistent/bin/python')",
    "library(tensorbridge)",
    "r <- tryCatch(tb_import('math'), error = function(e) e)",
    "cat(class(r)[1], '\\n')",
    "cat(conditionMessage(r), '\\n')",
    "cat(tb_config(start = FALSE)$source, '\\n')"
  ))
  out <- paste(out, collapse = "\n")
  expect_match(out, "tensorbridge_setup_error")
  expect_match(out, "/nonexistent/bin/python", fixed = TRUE)
  expect_match(out, "make demo", fixed = TRUE)
  expect_match(out, "TENSORBRIDGE_PYTHON environment variable", fixed = TRUE)
})

test_that("tb_use_python() overrides the environment variable", {
  skip_if_no_python()
  out <- run_r_script(c(
    "Sys.setenv(TENSORBRIDGE_PYTHON = '/nonexistent/bin/python')",
    "library(tensorbridge)",
    sprintf("tb_use_python('%s')", tensorbridge:::.tb$python),
    "cfg <- tb_config()",
    "cat('SOURCE:', cfg$source, '\\n')",
    "cat('RUNNING:', cfg$running, '\\n')"
  ))
  out <- paste(out, collapse = "\n")
  expect_match(out, "SOURCE: tb_use_python()", fixed = TRUE)
  expect_match(out, "RUNNING: TRUE", fixed = TRUE)
})

test_that("without a variable or argument the project's .venv is found from the working dir", {
  skip_if_no_python()
  py <- tensorbridge:::.tb$python
  if (!grepl("/\\.venv/bin/python$", py)) skip("the Python in use is not a project .venv")
  checkout <- dirname(dirname(dirname(py)))
  deep <- file.path(checkout, "r-client")
  if (!dir.exists(deep)) deep <- checkout
  out <- run_r_script(c(
    "Sys.unsetenv('TENSORBRIDGE_PYTHON')",
    sprintf("setwd('%s')", deep),
    "library(tensorbridge)",
    "cfg <- tb_config(start = FALSE)",
    "cat('PY:', cfg$python, '\\n')",
    "cat('SOURCE:', cfg$source, '\\n')"
  ))
  out <- paste(out, collapse = "\n")
  expect_match(out, paste0("PY: ", py), fixed = TRUE)
  expect_match(out, ".venv found from", fixed = TRUE)
})

test_that("switching Python after it started is refused with an explanation", {
  skip_if_no_python()
  expect_error(tb_use_python("/other/python"), "cannot be switched")
  expect_silent(tb_use_python(tensorbridge:::.tb$python))
})
