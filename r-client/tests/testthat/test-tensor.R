# The R tensor API against the Python API on the same inputs: results must be identical.

ref <- function() testing()

test_that("as_tensor() keeps dims, order and dtype; as.array() brings values back", {
  skip_if_no_python()
  m <- matrix(c(1.5, 2, 3, 4, 5, 6), 2)
  x <- as_tensor(m)
  expect_s3_class(x, "tb_tensor")
  expect_true(is_tensor(x))
  expect_identical(dim(x), c(2L, 3L))
  expect_identical(length(x), 6L)
  expect_identical(as.array(x), m)
  expect_identical(as.array(as_tensor(1:4)), array(1:4))
  expect_identical(as.vector(as_tensor(c(TRUE, FALSE))), c(TRUE, FALSE))
  expect_identical(tb_eval("lambda t: t.dtype.name")(as_tensor(1:3)), "int32")
  expect_identical(x$dtype$name, "float64")
  f32 <- as_tensor(m, "float32")
  expect_identical(f32$dtype$name, "float32")
  expect_identical(as.array(f32 * 2), m * 2)
  expect_output(print(x), "<tb_tensor float64 \\[2, 3\\]>")
  expect_error(as_tensor(c(1, NA)), "NA")
  expect_identical(as.array(as_tensor(c(1, NaN)))[[2]], NaN)
  expect_identical(dim(sum(x)), NULL)
  expect_identical(as.vector(sum(x)), sum(m))
})

test_that("Ops, Math and Summary match the Python API bit for bit", {
  skip_if_no_python()
  set.seed(3)
  a <- matrix(stats::rnorm(12), 3)
  b <- matrix(stats::rnorm(12), 3)
  x <- as_tensor(a)
  y <- as_tensor(b)
  binary <- list("+" = "add", "-" = "subtract", "*" = "multiply", "/" = "divide",
                 "==" = "equal", "<" = "less", ">=" = "greater_equal", "^" = "power")
  for (op in names(binary)) {
    r_result <- as.array(get(op)(if (op == "^") abs(x) else x, y))
    py_result <- ref()$ref_op(binary[[op]], if (op == "^") abs(a) else a, b)
    expect_identical(r_result, py_result, info = op)
  }
  expect_identical(as.array(x * 2), ref()$ref_op("multiply", a, 2))
  expect_identical(as.array(2 - x), ref()$ref_op("subtract", 2, a))
  expect_identical(as.array(-x), ref()$ref_op("negative", a))
  unary <- c(exp = "exp", tanh = "tanh", abs = "abs", sin = "sin", cos = "cos",
             sign = "sign", floor = "floor", ceiling = "ceil")
  for (fn in names(unary)) {
    expect_identical(as.array(get(fn)(x)), ref()$ref_op(unary[[fn]], a), info = fn)
  }
  expect_identical(as.array(sqrt(abs(x))), ref()$ref_op("sqrt", abs(a)))
  expect_identical(as.array(log(abs(x))), ref()$ref_op("log", abs(a)))
  expect_identical(as.vector(sum(x)), as.vector(ref()$ref_op("sum", a)))
  expect_identical(as.vector(max(x)), max(a))
  expect_identical(as.vector(min(x)), min(a))
  expect_identical(as.vector(prod(x)), as.vector(ref()$ref_op("prod", a)))
  expect_identical(as.vector(mean(x)), as.vector(ref()$ref_op("mean", a)))
  expect_identical(as.array(ref()$ref_expression("tanh_gram", a)),
                   as.array(tanh(x %*% t(x)) + 1))
  expect_identical(as.array(ref()$ref_expression("mixed", a)),
                   as.array(exp(-(x * 2)) / (1 + abs(x)) - sqrt(abs(x))^2))
})

test_that("%*%, t() and base R matrices", {
  skip_if_no_python()
  a <- matrix(1:6 / 7, 2)
  b <- matrix(1:12 / 5, 3)
  x <- as_tensor(a)
  expect_identical(as.array(x %*% as_tensor(b)), ref()$ref_expression("matmul", a, b))
  expect_equal(as.array(x %*% as_tensor(b)), a %*% b, tolerance = 1e-12)
  expect_identical(a %*% b, base::`%*%`(a, b)) # plain R matrices still use base R
  expect_identical(as.array(t(x)), t(a))
  expect_identical(dim(x %*% b), c(2L, 4L)) # an R matrix on one side works too
})

test_that("[ indexes like R: 1-based, drop, negative and logical subscripts", {
  skip_if_no_python()
  a <- array(as.numeric(1:24), c(2, 3, 4))
  x <- as_tensor(a)
  cases <- list(
    quote(x[1, , ]), quote(x[, 2, ]), quote(x[2, 3, 4]), quote(x[, , 2:3]),
    quote(x[, c(3, 1), ]), quote(x[-1, , ]), quote(x[, c(TRUE, FALSE, TRUE), 1]),
    quote(x[1, 2, , drop = FALSE]), quote(x[5]), quote(x[c(1, 24, 7)]), quote(x[])
  )
  for (k in seq_along(cases)) {
    cl <- cases[[k]]
    r_cl <- cl
    r_cl[[2]] <- quote(a)
    expect_identical(as.vector(eval(cl)), as.vector(eval(r_cl)), info = deparse(cl))
    if (k <= 8) expect_identical(dim(eval(cl)), dim(eval(r_cl)), info = deparse(cl))
  }
  expect_error(x[3, 1, 1], "out of bounds")
})

test_that("grad, value_and_grad, jacobian, hessian of R functions match Python", {
  skip_if_no_python()
  set.seed(4)
  w <- matrix(stats::rnorm(6), 2)
  xm <- matrix(stats::rnorm(12), 3)
  g <- grad(function(w) sum(tanh(w %*% xm)))(w)
  expect_s3_class(g, "tb_tensor")
  expect_identical(as.array(g), ref()$ref_grad("tanh_sum_matmul", w, xm))
  X <- matrix(stats::rnorm(20), 5)
  beta <- stats::rnorm(4)
  vg <- value_and_grad(function(b) sum(log1p(exp(-(X %*% b)))))(beta)
  py <- ref()$ref_grad("value_and_grad_logistic", beta, X)
  expect_identical(as.vector(vg$value), as.vector(py$value))
  expect_identical(as.array(vg$grad), as.array(py$grad))
  j <- jacobian(function(v) tanh(v) * 2)(c(0.1, -0.2, 0.3))
  expect_identical(as.array(j), ref()$ref_grad("jacobian_tanh", c(0.1, -0.2, 0.3)))
  gi <- grad(function(v) sum(v[1:2, 2]^2))(w)
  expect_identical(as.array(gi), ref()$ref_grad("grad_index", w))
  h <- hessian(function(v) sum(v^3))(c(1, 2))
  expect_identical(as.array(h), diag(c(6, 12)))
  g2 <- grad(function(a, b) sum(a * b), argnums = 2)(c(1, 2), c(3, 4))
  expect_identical(as.array(g2), array(c(1, 2)))
})

test_that("the tensor API works from callbacks on other threads", {
  skip_if_no_python()
  x <- as_tensor(c(1, 2, 3))
  r <- testing()$call_in_thread(function() as.array(sum(x * x)))
  expect_identical(as.vector(r), 14)
})
