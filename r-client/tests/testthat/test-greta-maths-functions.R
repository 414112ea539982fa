# Issue 16: greta's maths and linear-algebra functions on lazy arrays (acos ... trigamma,
# log(x, base), forwardsolve, backsolve, chol2inv, chol2symm, cov2cor, rdist, solve, eigen).
# Each is compared with base R on the same data: the function of a lazy array (as_data()) must
# return a lazy array (never a plain R number) whose calculate() equals base R's answer, to the
# accuracy the operation guarantees (helper-tolerance.R).

spd <- matrix(c(4, 1.2, -0.6, 1.2, 3, 0.4, -0.6, 0.4, 2), 3)
up <- chol(spd)
rhs <- matrix(c(1, -2, 0.5, 3, 0.25, -1), 3)

value_of <- function(g) {
  expect_s3_class(g, "tb_lazy_array")
  out <- calculate(g)
  if (is.list(out)) out[[1L]] else out
}
as_greta <- function(x) if (is.null(dim(x))) matrix(x, ncol = 1L) else x
# n: the terms behind each entry (a solve of n unknowns, an n-term sum)
expect_same <- function(g, want, n = 1, magnitude = NULL) {
  got <- value_of(g)
  want <- as_greta(want)
  expect_identical(dim(got), dim(want))
  if (is.null(magnitude)) magnitude <- max(abs(want))
  expect_close(as.vector(got), as.vector(want), n = n,
               magnitude = rep(magnitude, length(want)), ulps = 8)
}

test_that("the Math functions of lazy arrays are base R's, edges included", {
  skip_if_no_python()
  inside <- c(-1, -0.75, -0.2, 0, 0.3, 0.9, 1)
  big <- c(1, 1.5, 2, 10, 1e3)
  halves <- c(-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5, 1e6 + 0.5, 0.25, 0.3, -1.7)
  cases <- list(
    list(acos, inside), list(asin, inside), list(atan, c(-1e3, -2, 0, 0.5, 40)),
    list(acosh, big), list(asinh, c(-1e3, -2, 0, 0.5, 40)), list(atanh, inside),
    list(cospi, halves), list(sinpi, halves), list(trigamma, c(0.1, 0.5, 1, 3.5, 40)),
    list(function(x) tanpi(x), c(-2, -1, 0, 1, 2, 0.25, 0.3, -0.7, -1.1)),
    list(function(x) log(x, base = 3), big), list(function(x) log(x, 2), big),
    list(digamma, c(0.1, 0.5, 3.5)), list(lgamma, c(0.1, 0.5, 3.5))
  )
  for (case in cases) {
    f <- case[[1L]]
    x <- case[[2L]]
    g <- f(as_data(x))
    got <- suppressWarnings(value_of(g)) # NumPy's warnings at atanh(+-1), as R's at tanpi(0.5)
    want <- suppressWarnings(f(x))
    expect_identical(dim(got), c(length(x), 1L))
    expect_close(as.vector(got), want, n = 2)
  }
  # exact, as R's: 0 and +-1 at integers and half-integers; tanpi NaN at its poles
  expect_identical(as.vector(value_of(sinpi(as_data(halves[1:12])))), sinpi(halves[1:12]) + 0)
  expect_identical(as.vector(value_of(cospi(as_data(halves[1:12])))), cospi(halves[1:12]) + 0)
  expect_true(all(is.nan(suppressWarnings(value_of(tanpi(as_data(c(0.5, -1.5))))))))
  expect_identical(as.vector(value_of(acosh(as_data(1)))), 0)
  expect_identical(as.vector(suppressWarnings(value_of(atanh(as_data(c(-1, 1)))))), c(-Inf, Inf))
  # data stays data
  expect_identical(acos(0.5), base::acos(0.5))
})

test_that("forwardsolve and backsolve are base R's, with upper.tri, transpose and k", {
  skip_if_no_python()
  low <- t(up)
  expect_same(forwardsolve(as_data(low), rhs), forwardsolve(low, rhs), n = 3)
  expect_same(forwardsolve(as_data(low), as_data(rhs[, 1])), forwardsolve(low, rhs[, 1]), n = 3)
  expect_same(forwardsolve(low, as_data(rhs)), forwardsolve(low, rhs), n = 3)
  expect_same(forwardsolve(as_data(up), rhs, upper.tri = TRUE, transpose = TRUE),
              forwardsolve(up, rhs, upper.tri = TRUE, transpose = TRUE), n = 3)
  expect_same(backsolve(as_data(up), rhs), backsolve(up, rhs), n = 3)
  expect_same(backsolve(as_data(up), rhs, transpose = TRUE),
              backsolve(up, rhs, transpose = TRUE), n = 3)
  expect_same(backsolve(as_data(low), rhs, upper.tri = FALSE),
              backsolve(low, rhs, upper.tri = FALSE), n = 3)
  expect_same(backsolve(as_data(spd), rhs, k = 2), backsolve(spd, rhs, k = 2), n = 3)
  # the other triangle is not read
  expect_same(backsolve(as_data(spd), rhs), backsolve(spd, rhs), n = 3)
  expect_error(backsolve(as_data(up), rhs, k = 5), "backsolve: k must be")
  expect_identical(backsolve(up, rhs), base::backsolve(up, rhs))
})

test_that("chol2inv, chol2symm and cov2cor are base R's (greta's chol2symm)", {
  skip_if_no_python()
  expect_same(chol2inv(as_data(up)), chol2inv(up), n = 9)
  expect_same(chol2inv(as_data(up), size = 2), chol2inv(up, size = 2), n = 9)
  expect_same(chol2symm(as_data(up)), spd, n = 3)
  expect_equal(chol2symm(up), spd, tolerance = 1e-14)
  expect_same(cov2cor(as_data(spd)), cov2cor(spd), n = 2)
  expect_identical(diag(value_of(cov2cor(as_data(spd)))), c(1, 1, 1))
  expect_identical(cov2cor(spd), stats::cov2cor(spd))
})

test_that("rdist is greta's: Euclidean distances between rows", {
  skip_if_no_python()
  x1 <- matrix(c(0, 1, 3, 0.5, -2, 1, 4, 0), 4)
  x2 <- matrix(c(1, -1, 2, 0, 0.5, 7), 3)
  want12 <- as.matrix(dist(rbind(x1, x2)))[1:4, 5:7]
  want11 <- as.matrix(dist(x1))
  dimnames(want12) <- dimnames(want11) <- NULL
  expect_same(rdist(as_data(x1), x2), want12, n = 4)
  expect_same(rdist(as_data(x1)), want11, n = 4)
  expect_equal(rdist(x1, x2), want12, tolerance = 1e-12)
  expect_error(rdist(as_data(x1), matrix(1, 2, 3)), "same number of columns")
})

test_that("solve and eigen of lazy arrays are base R's", {
  skip_if_no_python()
  gen <- spd + matrix(c(0, 0.5, 0, -0.3, 0, 0.2, 0, 0, 0), 3)
  expect_same(solve(as_data(gen), rhs), solve(gen, rhs), n = 9)
  expect_same(solve(as_data(gen), rhs[, 2]), solve(gen, rhs[, 2]), n = 9)
  expect_same(solve(as_data(gen)), solve(gen), n = 9)
  e <- eigen(as_data(spd))
  want <- eigen(spd, symmetric = TRUE)
  expect_same(e$values, want$values, n = 9)
  # each eigenvector's sign is the decomposition's: compare up to sign
  v <- value_of(e$vectors)
  signs <- sign(colSums(v * want$vectors))
  expect_close(as.vector(v %*% diag(signs)), as.vector(want$vectors), n = 9,
               magnitude = rep(1, 9))
  only <- eigen(as_data(spd), only.values = TRUE)
  expect_null(only$vectors)
  expect_s3_class(only$values, "tb_lazy_array")
  expect_error(eigen(as_data(spd), symmetric = FALSE), "only symmetric")
  expect_identical(eigen(spd), base::eigen(spd))
})

test_that("the functions sit inside a model: a lazy array of variables stays lazy", {
  skip_if_no_python()
  s <- wishart(5, spd)
  for (g in list(solve(s), chol2inv(chol(s)), cov2cor(s), eigen(s)$values, rdist(s),
                 forwardsolve(t(chol(s)), rhs), backsolve(chol(s), rhs), chol2symm(chol(s)),
                 acos(cov2cor(s) * 0.5), sinpi(s), trigamma(exp(s)))) {
    expect_s3_class(g, "tb_lazy_array")
  }
})

test_that("the same Math functions apply to tensors", {
  skip_if_no_python()
  v <- c(-0.75, -0.5, 0, 0.5, 1)
  x <- as_tensor(v)
  for (f in list(acos, asin, atan, asinh, cospi, sinpi, function(x) trigamma(x + 1),
                 function(x) acosh(x + 2), function(x) atanh(x * 0.5),
                 function(x) tanpi(x * 0.4), function(x) log(x + 2, base = 3))) {
    got <- f(x)
    expect_s3_class(got, "tb_tensor")
    # float32 or float64 tensors: float32's accuracy bounds both
    expect_equal(as.vector(as.array(got)), f(v), tolerance = 1e-6)
  }
  halves <- c(-1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2)  # exact at multiples of 1/2
  expect_identical(as.vector(as.array(sinpi(as_tensor(halves)))) + 0, sinpi(halves) + 0)
})
