# The tolerance policy of runtime/testing.py (tensorbridge.testing), for testthat: a float result
# is held to what its operation guarantees for its dtype and size, never to one machine's
# rounding. Per element:
#   |actual - expected| <= ulps * u * |expected| + 2 * gamma(n) * magnitude + tiny
# u: unit roundoff (float32 2^-24, float64 2^-53); gamma(n) = n u / (1 - n u) bounds an n-term
# sum in any order (Higham); magnitude: the sum of |terms| (|A| %*% |B| for a matrix product),
# |expected| by default; tiny: the smallest normal (subnormals may flush to zero). NaN matches
# NaN, NA matches NA, infinities match exactly, integers and logicals compare exactly.
# tests/fixtures/shared/tolerance_cases.json pins Python, R and JS to the same decisions.

tb_unit_roundoff <- function(dtype) {
  switch(dtype, float16 = 2^-11, float32 = 2^-24, float64 = 2^-53, 0)
}

tb_tiny <- function(dtype) {
  switch(dtype, float16 = 2^-14, float32 = 2^-126, float64 = 2^-1022, 0)
}

tb_gamma <- function(n, dtype) {
  nu <- n * tb_unit_roundoff(dtype)
  if (nu >= 1) stop(sprintf("n: %s terms exceed what %s can bound (n*u >= 1)", n, dtype))
  nu / (1 - nu)
}

# n for a result chained through `steps` steps of `per_step`-term accumulations (training).
chained_length <- function(steps, per_step) steps * per_step

# NULL when `actual` meets the policy around `expected`, else a message saying where.
close_error <- function(actual, expected, dtype = "float64", n = 1, magnitude = NULL,
                        ulps = 4) {
  if (!is.null(dim(actual)) && !is.null(dim(expected)) &&
      !identical(as.integer(dim(actual)), as.integer(dim(expected)))) {
    return(sprintf("dim %s != expected %s", paste(dim(actual), collapse = "x"),
                   paste(dim(expected), collapse = "x")))
  }
  a <- as.vector(unlist(actual))
  e <- as.vector(unlist(expected))
  if (length(a) != length(e)) {
    return(sprintf("%d elements != expected %d", length(a), length(e)))
  }
  if (length(a) == 0) return(NULL)
  u <- tb_unit_roundoff(dtype)
  if (u == 0) {
    bad <- which(!(a == e) | xor(is.na(a), is.na(e)))
    if (length(bad) == 0) return(NULL)
    return(sprintf("element %d: %s != %s (exact dtype %s)", bad[1], a[bad[1]], e[bad[1]], dtype))
  }
  a <- as.double(a)
  e <- as.double(e)
  m <- if (is.null(magnitude)) abs(e) else rep_len(abs(as.double(unlist(magnitude))), length(e))
  g2 <- if (n > 1) 2 * tb_gamma(n, dtype) else 0
  bound <- ulps * u * abs(e) + g2 * m + tb_tiny(dtype)
  ok <- ifelse(is.na(a) | is.na(e),
               is.na(a) & is.na(e) & (is.nan(a) == is.nan(e)),
               ifelse(is.infinite(a) | is.infinite(e), a == e, abs(a - e) <= bound))
  if (all(ok)) return(NULL)
  ratio <- ifelse(ok, 0, ifelse(is.finite(a) & is.finite(e), abs(a - e) / bound, Inf))
  i <- which.max(ratio)
  sprintf(paste("%d of %d elements outside the %s tolerance (n=%s, ulps=%s); worst: element %d:",
                "%.17g vs expected %.17g, |diff| %.3g > bound %.3g"),
          sum(!ok), length(a), dtype, n, ulps, i, a[i], e[i], abs(a[i] - e[i]), bound[i])
}

# testthat expectation: the tolerance policy (see above).
expect_close <- function(actual, expected, dtype = "float64", n = 1, magnitude = NULL,
                         ulps = 4, info = NULL) {
  label <- paste(deparse(substitute(actual)), collapse = " ")
  err <- close_error(actual, expected, dtype = dtype, n = n, magnitude = magnitude, ulps = ulps)
  testthat::expect(is.null(err), sprintf("%s: %s%s", label, err,
                                         if (is.null(info)) "" else paste0("\n", info)))
  invisible(actual)
}
