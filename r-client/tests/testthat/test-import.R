test_that("tb_import() gives modules with $ access, calls convert through the registries", {
  skip_if_no_python()
  m <- tb_import("math")
  expect_s3_class(m, "tb.module")
  expect_identical(m$sqrt(4), 2)
  expect_identical(m$pi, pi)
  expect_identical(m$floor(2.7), 2L)
  expect_true("sqrt" %in% names(m))
  expect_output(print(m), "module 'math'")
  os <- tb_import("os.path")
  expect_identical(os$join("a", "b"), "a/b")
  json <- tb_import("json")
  expect_identical(json$dumps(list(a = 1L, b = c("x", "y")), sort_keys = TRUE),
                   "{\"a\": 1, \"b\": [\"x\", \"y\"]}")
  expect_identical(json$loads("[1, 2, 3]"), 1:3)
})

test_that("module functions are cached: $ then call costs one Python call", {
  skip_if_no_python()
  m <- tb_import("math")
  f1 <- m$sqrt
  f2 <- m$sqrt
  expect_identical(f1, f2)
  expect_identical(m$pi, pi) # values are not cached (fetched each time) but still work
})

test_that("objects: attributes, methods, setattr, items, keyword arguments", {
  skip_if_no_python()
  ns <- tb_eval("__import__('types').SimpleNamespace(a=1, items=[10, 20, 30])")
  expect_identical(ns$a, 1L)
  ns$a <- "changed"
  expect_identical(ns$a, "changed")
  dq <- tb_eval("__import__('collections').deque([3, 1, 2, 1])")
  expect_s3_class(dq, "tb.deque")
  expect_identical(dq$count(1L), 2L)
  dq$append(7L)
  expect_identical(dq[[4L]], 7L) # Python indexing: 0-based
  expect_identical(tb_eval("list")(dq), c(3L, 1L, 2L, 1L, 7L))
  counts <- tb_eval("__import__('collections').Counter('abracadabra')") # a dict: by value
  expect_identical(counts[["b"]], 2L)
  fn <- tb_eval("lambda a, b=2, *, c=3: [a, b, c]")
  expect_identical(fn(1L, c = 10L), c(1L, 2L, 10L))
  expect_identical(tb_call(fn, 1L, 5L), c(1L, 5L, 3L))
  expect_output(print(fn), "Python function")
  cls <- tb_eval("__import__('fractions').Fraction")
  half <- cls(1L, 2L)
  expect_s3_class(half, "tb.Fraction")
  expect_identical(half$numerator, 1L)
  expect_identical(cls$`__name__`, "Fraction")
})

test_that("R functions passed to Python are callable there, with R data", {
  skip_if_no_python()
  apply_fn <- tb_eval("lambda f, x: f(x)")
  expect_identical(apply_fn(function(v) sum(v), c(1, 2, 3)), 6)
  expect_identical(apply_fn(function(v) toupper(v), c("a", "b")), c("A", "B"))
  mapper <- tb_eval("lambda f, xs: [f(x) for x in xs]")
  expect_identical(mapper(function(x) x * 2, list(1, 2, 3)), c(2, 4, 6))
  sorter <- tb_eval("lambda xs, key: sorted(xs, key=key)")
  expect_identical(sorter(c("bb", "a", "ccc"), function(s) nchar(s)), c("a", "bb", "ccc"))
})

test_that("tb_py() keeps a converted value in Python", {
  skip_if_no_python()
  h <- tb_py(list(a = 1, b = "x"))
  expect_s3_class(h, "tb.dict")
  expect_identical(h$get("b"), "x")
})
