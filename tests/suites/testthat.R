# Runs the R package's testthat suite (or the files matching TB_TESTTHAT_FILTER) and writes
# its counts as JSON to the file named by the first argument, for tests/suites/run.py.
args <- commandArgs(trailingOnly = TRUE)
out <- args[[1]]
filter <- Sys.getenv("TB_TESTTHAT_FILTER", "")
res <- testthat::test_dir("r-client/tests/testthat", package = "tensorbridge",
                          load_package = "installed", stop_on_failure = FALSE,
                          filter = if (nzchar(filter)) filter else NULL)
df <- as.data.frame(res)
counts <- list(passed = sum(df$passed), failed = sum(df$failed) + sum(df$error),
               skipped = sum(df$skipped), tests = nrow(df))
writeLines(jsonlite::toJSON(counts, auto_unbox = TRUE), out)
cat(sprintf("testthat: %d expectations passed, %d failed, %d skipped\n", counts$passed,
            counts$failed, counts$skipped))
quit(status = if (counts$failed > 0) 1 else 0)
