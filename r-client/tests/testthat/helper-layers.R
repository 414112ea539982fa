# Helpers of the test-layers-*.R files.

# tests/fixtures/shared of the checkout whose Python the tests use (or TENSORBRIDGE_FIXTURES).
fixture_dir <- function() {
  candidates <- c(
    Sys.getenv("TENSORBRIDGE_FIXTURES", ""),
    file.path(checkout_of(tensorbridge:::.tb$python), "tests", "fixtures", "shared"),
    file.path(getwd(), "..", "..", "..", "tests", "fixtures", "shared")
  )
  for (d in candidates) {
    if (nzchar(d) && file.exists(file.path(d, "layers_linear.json"))) return(normalizePath(d))
  }
  NULL
}

# The checkout of a .venv/bin/python path ("" when unknown).
checkout_of <- function(python) {
  if (is.null(python)) return("")
  dirname(dirname(dirname(python)))
}
