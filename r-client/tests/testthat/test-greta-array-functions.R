# Issue 16: greta's array functions on lazy arrays ([<-, dim<-, diag<-, rep, aperm, abind,
# cumsum, cumprod, outer/%o%, kronecker/%x%, sweep, apply, tapply, identity, dims = in the
# row/column reductions). Each is compared with base R on the same data: the function of a
# lazy array (as_data()) must return a lazy array whose calculate() equals base R's answer.

m <- matrix(c(1.5, -2, 3, 0.25, 4, -1), 2)
a3 <- array(seq(-1, 2.2, length.out = 24), c(2, 3, 4))
v <- c(0.5, -1.5, 2)

# the values of a lazy array (and that it is one: never a plain R number)
value_of <- function(g) {
  expect_s3_class(g, "tb_lazy_array")
  out <- calculate(g)
  if (is.list(out)) out[[1L]] else out
}
# base R's answer with greta's shape (a vector is a column)
as_greta <- function(x) if (is.null(dim(x))) matrix(x, ncol = 1L) else x
expect_same <- function(g, want) {
  got <- value_of(g)
  want <- as_greta(want)
  expect_identical(dim(got), dim(want))
  expect_equal(as.vector(got), as.vector(want), tolerance = 1e-12)
}

test_that("[<- replaces entries by R's subscripts, with lazy or numeric values", {
  skip_if_no_python()
  cases <- list(
    function(x, val) { x[2, 3] <- val; x },
    function(x, val) { x[c(1, 5)] <- val; x },
    function(x, val) { x[-1, ] <- val; x },
    function(x, val) { x[m > 0] <- val; x },
    function(x, val) { x[cbind(c(1, 2), c(3, 1))] <- val; x },
    function(x, val) { x[c(2, 2)] <- c(val, val); x }
  )
  vals <- list(7, c(7, 8), 7, 7, c(7, 8), 7)
  for (k in seq_along(cases)) {
    want <- cases[[k]](m, vals[[k]])
    expect_same(cases[[k]](as_data(m), vals[[k]]), want)
    expect_same(cases[[k]](as_data(m), as_data(vals[[k]])), want)
  }
  x <- as_data(m)
  expect_error({ x[1:3] <- c(1, 2) }, "length of value must divide")
  expect_error({ x[7] <- 1 }, "subscript out of bounds")
})

test_that("[<- keeps the lazy value's dependence (a model's variable assigned in)", {
  skip_if_no_python()
  z <- zeros(3, 1)
  mu <- variable()
  z[2] <- mu * 2
  expect_s3_class(z, "tb_lazy_array")
  got <- calculate(z, values = list(mu = 1.5))
  got <- if (is.list(got)) got[[1L]] else got
  expect_equal(as.vector(got), c(0, 3, 0))
})

test_that("dim<- and diag<- agree with base R", {
  skip_if_no_python()
  x <- as_data(m); dim(x) <- c(3, 2)
  want <- m; dim(want) <- c(3, 2)
  expect_same(x, want)
  x <- as_data(a3); dim(x) <- c(4, 6)
  want <- a3; dim(want) <- c(4, 6)
  expect_same(x, want)
  x <- as_data(m); expect_error({ dim(x) <- c(4, 2) }, "do not match the length")
  sq <- matrix(1:9 / 3, 3)
  x <- as_data(sq); diag(x) <- c(-1, -2, -3)
  want <- sq; diag(want) <- c(-1, -2, -3)
  expect_same(x, want)
  x <- as_data(m); diag(x) <- 0
  want <- m; diag(want) <- 0
  expect_same(x, want)
  # data stays data
  d <- sq; diag(d) <- 1
  expect_false(inherits(d, "tb_lazy_array"))
  expect_equal(d, `diag<-`(sq, 1))
})

test_that("greta_array() of a lazy array reshapes it, as dim<-", {
  skip_if_no_python()
  want <- m; dim(want) <- c(3, 2)
  expect_same(greta_array(as_data(m), dim = c(3, 2)), want)
  expect_same(greta_array(as_data(m)), as.vector(m))
})

test_that("rep agrees with base R", {
  skip_if_no_python()
  x <- as_data(m)
  expect_same(rep(x, times = 2), rep(m, times = 2))
  expect_same(rep(x, each = 3), rep(m, each = 3))
  expect_same(rep(x, times = 1:6), rep(m, times = 1:6))
  expect_same(rep(x, length.out = 10), rep(m, length.out = 10))
  expect_same(rep(x, each = 2, length.out = 5), rep(m, each = 2, length.out = 5))
  expect_same(rep(x, 3), rep(m, 3))
  expect_same(rep(x, 2, 9), rep(m, 2, 9))
  expect_same(rep(x, 1, 8, 2), rep(m, 1, 8, 2))
  expect_error(rep(x, times = -1), "non-negative whole numbers")
})

test_that("aperm and abind agree with base R", {
  skip_if_no_python()
  expect_same(aperm(as_data(m)), aperm(m))
  expect_same(aperm(as_data(a3), c(2, 3, 1)), aperm(a3, c(2, 3, 1)))
  expect_same(aperm(as_data(a3), c(3, 1, 2)), aperm(a3, c(3, 1, 2)))
  expect_error(aperm(as_data(a3), c(1, 1, 2)), "permutation")
  # abind against base R's own binding: rbind, cbind, and a new third dimension by hand
  x <- as_data(m)
  expect_same(abind(x, x * 2, along = 1), rbind(m, m * 2))
  expect_same(abind(x, as_data(m[, 1:2]), along = 2), cbind(m, m[, 1:2]))
  expect_same(abind(x, m * 2, along = 3), array(c(m, m * 2), c(2, 3, 2)))
  expect_same(abind(x, x), cbind(m, m))
  expect_same(abind(as_data(a3), as_data(a3[, , 1:2]), along = 3),
              array(c(a3, a3[, , 1:2]), c(2, 3, 6)))
  expect_error(abind(x, as_data(a3), along = 1), "same extents")
  expect_same(abind(x, x, along = 0), aperm(array(c(m, m), c(2, 3, 2)), c(3, 1, 2)))
  expect_same(abind(x, x, along = 1.5), aperm(array(c(m, m), c(2, 3, 2)), c(1, 3, 2)))
  expect_same(abind(x, x, rev.along = 0), array(c(m, m), c(2, 3, 2)))
  expect_equal(abind(m, m, along = 1.5), aperm(array(c(m, m), c(2, 3, 2)), c(1, 3, 2)))
  # abind of data alone is data, equal to the lazy answer
  d <- abind(m, m * 2, along = 3)
  expect_false(inherits(d, "tb_lazy_array"))
  expect_equal(d, array(c(m, m * 2), c(2, 3, 2)))
  expect_equal(abind(m, m, along = 1), rbind(m, m))
  expect_equal(abind(m, m, along = 0), aperm(array(c(m, m), c(2, 3, 2)), c(3, 1, 2)))
})

test_that("cumsum and cumprod agree with base R", {
  skip_if_no_python()
  expect_same(cumsum(as_data(m)), cumsum(m))
  expect_same(cumprod(as_data(m)), cumprod(m))
  expect_same(cumsum(as_data(v)), cumsum(v))
  expect_same(cumprod(as_data(c(2, 0, 3))), cumprod(c(2, 0, 3)))
})

test_that("outer, %o%, kronecker and %x% agree with base R", {
  skip_if_no_python()
  expect_same(outer(as_data(v), as_data(1:2)), outer(v, 1:2))
  expect_same(as_data(v) %o% v, v %o% v)
  expect_same(outer(as_data(m), 1:2), outer(m, 1:2))
  for (f in c("+", "-", "/", "^")) {
    expect_same(outer(as_data(v), c(2, 3), f), outer(v, c(2, 3), f))
  }
  expect_same(outer(as_data(v), c(2, 3), `-`), outer(v, c(2, 3), `-`))
  expect_same(kronecker(as_data(m), diag(2)), kronecker(m, diag(2)))
  expect_same(kronecker(diag(2), as_data(m)), kronecker(diag(2), m))
  expect_same(as_data(m) %x% m, m %x% m)
  expect_same(kronecker(as_data(m), m[, 1:2], "+"), kronecker(m, m[, 1:2], "+"))
  expect_same(kronecker(as_data(a3[, , 1:2]), m), kronecker(a3[, , 1:2], m))
  expect_error(outer(as_data(v), v, function(a, b) a), "FUN must be one of")
  # data stays data
  expect_equal(outer(v, v), base::outer(v, v))
  expect_equal(kronecker(m, diag(2)), base::kronecker(m, diag(2)))
})

test_that("sweep agrees with base R", {
  skip_if_no_python()
  x <- as_data(m)
  expect_same(sweep(x, 1, c(1, 2)), sweep(m, 1, c(1, 2)))
  expect_same(sweep(x, 2, colMeans(m), "/"), sweep(m, 2, colMeans(m), "/"))
  expect_same(sweep(x, 2, as_data(c(1, 2, 3)), `*`), sweep(m, 2, c(1, 2, 3), `*`))
  expect_same(sweep(x, 2, colMeans(x)), sweep(m, 2, colMeans(m)))
  stats <- matrix(1:8 / 4, 2)
  expect_same(sweep(as_data(a3), c(1, 3), stats, "+"), sweep(a3, c(1, 3), stats, "+"))
  expect_same(sweep(as_data(a3), c(3, 1), t(stats), "+"), sweep(a3, c(3, 1), t(stats), "+"))
  expect_error(sweep(x, 1, c(1, 2, 3)), "STATS has 3 entries")
  expect_equal(sweep(m, 1, c(1, 2)), base::sweep(m, 1, c(1, 2)))
})

test_that("apply agrees with base R for greta's FUNs", {
  skip_if_no_python()
  x <- as_data(m)
  for (f in c("sum", "mean", "max", "min", "prod", "cumsum", "cumprod")) {
    for (margin in 1:2) {
      expect_same(apply(x, margin, f), apply(m, margin, f))
    }
  }
  expect_same(apply(x, 2, sum), apply(m, 2, sum))
  expect_same(apply(as_data(a3), 3, "sum"), apply(a3, 3, "sum"))
  expect_same(apply(as_data(a3), c(1, 3), "max"), apply(a3, c(1, 3), "max"))
  expect_same(apply(as_data(a3), c(3, 1), "mean"), apply(a3, c(3, 1), "mean"))
  expect_same(apply(as_data(a3), 2, "cumsum"), apply(a3, 2, "cumsum"))
  expect_error(apply(x, 1, "sd"), "FUN must be one of")
  expect_equal(apply(m, 1, sd), base::apply(m, 1, sd))
})

test_that("tapply agrees with base R for greta's FUNs", {
  skip_if_no_python()
  xs <- c(0.5, 2, -1, 3, 4, -2)
  g <- c("b", "a", "b", "c", "a", "b")
  for (f in c("sum", "mean", "max", "min", "prod")) {
    expect_same(tapply(as_data(xs), g, f), as.vector(tapply(xs, g, f)))
  }
  expect_same(tapply(as_data(xs), factor(g, levels = c("c", "b", "a")), sum),
              as.vector(tapply(xs, factor(g, levels = c("c", "b", "a")), sum)))
  expect_error(tapply(as_data(xs), g[1:5], "sum"), "INDEX has 5 labels")
  expect_error(tapply(as_data(xs), factor(g, levels = c("a", "b", "c", "d")), "sum"),
               "no entries have the level d")
  expect_equal(tapply(xs, g, sum), base::tapply(xs, g, sum))
})

test_that("identity and the dims = row/column reductions agree with base R", {
  skip_if_no_python()
  x <- as_data(m)
  expect_same(identity(x), m)
  y <- as_data(a3)
  for (k in 1:2) {
    expect_same(rowSums(y, dims = k), base::rowSums(a3, dims = k))
    expect_same(colSums(y, dims = k), base::colSums(a3, dims = k))
    expect_same(rowMeans(y, dims = k), base::rowMeans(a3, dims = k))
    expect_same(colMeans(y, dims = k), base::colMeans(a3, dims = k))
  }
  expect_same(rowSums(x), base::rowSums(m))
  expect_same(colMeans(x), base::colMeans(m))
  expect_error(rowSums(y, dims = 3), "dims must be a whole number from 1 to 2")
})
