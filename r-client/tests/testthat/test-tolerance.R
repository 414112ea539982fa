# The tolerance policy (helper-tolerance.R) decides the shared hand-computed cases of
# tests/fixtures/shared/tolerance_cases.json exactly as Python and JavaScript do.

test_that("the R tolerance helper decides every shared case like Python and JS", {
  skip_if_not_installed("jsonlite")
  dir <- fixture_dir()
  if (is.null(dir)) skip("tests/fixtures/shared is not reachable from here")
  cases <- jsonlite::fromJSON(file.path(dir, "tolerance_cases.json"),
                              simplifyVector = FALSE)$cases
  expect_gt(length(cases), 20)
  num <- function(v) {
    vapply(v, function(x) {
      if (is.character(x)) switch(x, nan = NaN, inf = Inf, "-inf" = -Inf) else as.double(x)
    }, 0)
  }
  for (case in cases) {
    mag <- if (is.null(case$magnitude)) NULL else num(case$magnitude)
    err <- close_error(num(case$actual), num(case$expected), dtype = case$dtype,
                       n = if (is.null(case$n)) 1 else case$n, magnitude = mag,
                       ulps = if (is.null(case$ulps)) 4 else case$ulps)
    expect_identical(is.null(err), case$pass, label = case$what)
  }
})

test_that("NA is a value of its own: it matches NA only", {
  expect_null(close_error(c(1, NA), c(1, NA)))
  expect_match(close_error(c(1, NA), c(1, NaN)), "element 2")
  expect_match(close_error(c(1L, NA), c(1L, 2L), dtype = "int32"), "element 2")
  expect_match(close_error(matrix(1:4, 2), matrix(1:4, 1), dtype = "int32"), "dim 2x2")
})
