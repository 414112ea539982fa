# Round trips R -> Python -> R (through the identity function of Python) over every type,
# property style: random values of each kind with NA, NaN, empty and unicode cases.

gen_double <- function(n) {
  x <- stats::rnorm(n) * 10^sample(-3:3, n, replace = TRUE)
  if (n) x[sample.int(n, max(1L, n %/% 5L))] <- sample(c(NA, NaN, Inf, -Inf, 0), 1L)
  x
}
gen_integer <- function(n) {
  x <- sample.int(2e9, n, replace = TRUE) - 1e9L
  if (n > 1) x[sample.int(n, 1L)] <- NA_integer_
  as.integer(x)
}
gen_logical <- function(n) {
  x <- sample(c(TRUE, FALSE), n, replace = TRUE)
  if (n > 1) x[sample.int(n, 1L)] <- NA
  x
}
words <- c("a", "", "\u00e9t\u00e9", "\u4e2d\u6587", "emoji \U0001F642", "tab\there", "NA", "quote\"s")
gen_character <- function(n) {
  x <- sample(words, n, replace = TRUE)
  if (n > 1) x[sample.int(n, 1L)] <- NA_character_
  x
}
generators <- list(double = gen_double, integer = gen_integer, logical = gen_logical,
                   character = gen_character)

test_that("atomic vectors of every type and length survive the round trip", {
  skip_if_no_python()
  set.seed(1)
  for (type in names(generators)) {
    for (n in c(0L, 1L, 2L, 3L, 17L, 1000L)) {
      for (rep in 1:3) {
        x <- generators[[type]](n)
        expect_identical(roundtrip(x), x, info = sprintf("%s[%d] rep %d", type, n, rep))
      }
    }
  }
})

test_that("NA of every type stays NA, of its type, and NA stays apart from NaN", {
  skip_if_no_python()
  for (x in list(NA, NA_integer_, NA_real_, NA_character_, NaN, c(NA, NaN), c(NaN, NA_real_))) {
    expect_identical(roundtrip(x), x)
  }
  id <- testing()$describe
  expect_identical(id(NA), "tensorbridge.bridge.na.NAType")
  expect_identical(id(NA_integer_), "tensorbridge.bridge.na.NAType")
  expect_identical(id(NA_character_), "tensorbridge.bridge.na.NAType")
  expect_identical(id(NA_real_), "builtins.float")
  isna <- tb_eval("lambda x: [bool(v) for v in __import__('tensorbridge.bridge', fromlist=['x']).is_na(x)]")
  expect_identical(isna(c(NA, NaN, 1)), c(TRUE, FALSE, FALSE))
  masked <- tb_eval("lambda x: __import__('numpy').ma.getmaskarray(x).tolist()")
  expect_identical(masked(c(1L, NA, 3L)), c(FALSE, TRUE, FALSE))
  expect_identical(masked(c(TRUE, NA)), c(FALSE, TRUE))
})

test_that("matrices and arrays keep dims, element order and type", {
  skip_if_no_python()
  set.seed(2)
  for (type in c("double", "integer", "logical")) {
    for (d in list(c(2L, 3L), c(3L, 1L), c(0L, 4L), c(2L, 3L, 4L), c(1L, 1L, 1L, 2L))) {
      x <- array(generators[[type]](prod(d)), dim = d)
      expect_identical(roundtrip(x), x, info = paste(type, paste(d, collapse = "x")))
    }
  }
  m <- matrix(c(1, 2, 3, 4, 5, 6), 2)
  item <- tb_eval("lambda a, i, j: float(a[int(i), int(j)])")
  expect_identical(item(m, 0L, 2L), m[1, 3]) # column-major order seen by NumPy
  shape <- tb_eval("lambda a: list(a.shape)")
  expect_identical(shape(array(0, c(2, 3, 4))), c(2L, 3L, 4L))
  flags <- tb_eval("lambda a: [a.flags.f_contiguous, a.flags.writeable, str(a.dtype)]")
  expect_identical(flags(m), list(TRUE, FALSE, "float64"))
  expect_identical(flags(matrix(1:4, 2)), list(TRUE, FALSE, "int32"))
})

test_that("lists, named lists, NULL, factors and data frames round-trip", {
  skip_if_no_python()
  values <- list(
    NULL,
    list(),
    list(1, "a", NULL, list(TRUE, NA)),
    list(a = 1, b = list(c = "x", d = 1:3)),
    stats::setNames(list(1, 2), c("x", "x")), # duplicate names
    stats::setNames(list(1, 2), c("x", "")), # partial names
    list(list(list())),
    factor(c("b", "a", NA, "b")),
    factor(character()),
    factor(c("lo", "hi"), levels = c("lo", "hi"), ordered = TRUE),
    data.frame(x = c(1.5, NA), y = c("u", NA), z = c(TRUE, FALSE), f = factor(c("p", "q")),
               i = c(1L, NA), stringsAsFactors = FALSE),
    data.frame(a = 1:3, row.names = c("r1", "r2", "r3")),
    data.frame(),
    as.raw(c(0, 1, 255)),
    raw(0)
  )
  for (x in values) expect_identical(roundtrip(x), x, info = paste(deparse(x), collapse = ""))
})

test_that("what Python receives: NumPy arrays, lists of str, dicts, factors, data frames", {
  skip_if_no_python()
  d <- testing()$describe
  expect_identical(d(1.5), "builtins.float")
  expect_identical(d(2L), "builtins.int")
  expect_identical(d(TRUE), "builtins.bool")
  expect_identical(d("x"), "builtins.str")
  expect_identical(d(NULL), "builtins.NoneType")
  expect_identical(d(c(1, 2)), "numpy.ndarray")
  expect_identical(d(c(1L, NA)), "tensorbridge.bridge.na_arrays.NAArray") # a numpy.ma array
  expect_identical(d(c("a", "b")), "tensorbridge.bridge.r.types.StrVector")
  expect_identical(d(list(a = 1)), "builtins.dict")
  expect_identical(d(list(1, 2)), "tensorbridge.bridge.r.types.RList")
  expect_identical(d(factor("a")), "tensorbridge.bridge.r.types.Factor")
  expect_identical(d(data.frame(a = 1)), "tensorbridge.bridge.r.types.DataFrame")
  expect_identical(d(new.env()), "tensorbridge.bridge.callables.ForeignObject")
  expect_identical(d(function() 1), "tensorbridge.bridge.callables.ForeignCallable")
  expect_identical(d(k = 1), "k=builtins.float")
  isinst <- tb_eval("lambda x: isinstance(x, list) and all(isinstance(s, str) for s in x)")
  expect_true(isinst(c("a", "b")))
})

test_that("other R objects cross as handles and come back as themselves", {
  skip_if_no_python()
  e <- new.env()
  f <- function(x) x + 1
  for (x in list(e, f, Sys.Date(), 1i, matrix(c("a", "b")), quote(a + b), y ~ x, sum)) {
    expect_identical(roundtrip(x), x)
  }
})

test_that("Python values arrive as native R values", {
  skip_if_no_python()
  expect_identical(tb_eval("[1, 2, 3]"), 1:3)
  expect_identical(tb_eval("[1.5, float('nan')]"), c(1.5, NaN))
  expect_identical(tb_eval("['a', 'b']"), c("a", "b"))
  expect_identical(tb_eval("[True, False]"), c(TRUE, FALSE))
  expect_identical(tb_eval("[1, 'a']"), list(1L, "a"))
  expect_identical(tb_eval("(1, 2)"), 1:2)
  expect_identical(tb_eval("[]"), list())
  expect_identical(tb_eval("{'a': 1, 'b': [None]}"), list(a = 1L, b = list(NULL)))
  expect_identical(tb_eval("{}"), stats::setNames(list(), character()))
  expect_identical(tb_eval("None"), NULL)
  expect_identical(tb_eval("2**40"), 2^40)
  expect_identical(tb_eval("-2**31"), -2^31) # INT_MIN is NA_integer_ in R: crosses as double
  expect_error(tb_eval("2**60"), class = "ConversionError")
  expect_identical(tb_eval("'\\u00e9\\u4e2d'"), "\u00e9\u4e2d")
  expect_identical(Encoding(tb_eval("'\\u00e9'")), "UTF-8")
  expect_identical(tb_eval("b'\\x00\\x01'"), as.raw(0:1))
  expect_identical(tb_eval("__import__('tensorbridge.bridge', fromlist=['x']).NA_integer"), NA_integer_)
  expect_identical(tb_eval("__import__('tensorbridge.bridge', fromlist=['x']).NA_REAL"), NA_real_)
  np <- "__import__('numpy')"
  expect_identical(tb_eval(sprintf("%s.arange(6.).reshape(2, 3)", np)),
                   matrix(c(0, 3, 1, 4, 2, 5), 2))
  expect_identical(tb_eval(sprintf("%s.arange(6, dtype='float32').reshape(3, 2)", np)),
                   matrix(c(0, 2, 4, 1, 3, 5), 3))
  expect_identical(tb_eval(sprintf("%s.array([1, 2], dtype='int64')", np)), c(1, 2))
  expect_identical(tb_eval(sprintf("%s.array([1, 2], dtype='int8')", np)), 1:2)
  expect_identical(tb_eval(sprintf("%s.array([[True], [False]])", np)), matrix(c(TRUE, FALSE)))
  expect_identical(tb_eval(sprintf("%s.float64(2.5)", np)), 2.5)
  expect_identical(tb_eval(sprintf("%s.array(3.0)", np)), 3)
  expect_identical(tb_eval(sprintf("%s.zeros((0, 2))", np)), matrix(numeric(), 0, 2))
  expect_identical(tb_eval(sprintf("%s.ma.masked_array([1, 2], mask=[0, 1])", np)), c(1, NA))
  expect_identical(
    tb_eval(sprintf("%s.ma.masked_array(%s.array([1, 2], dtype='int32'), mask=[0, 1])", np, np)),
    c(1L, NA)
  )
  expect_identical(tb_eval(sprintf("%s.arange(24.).reshape(2, 3, 4)[:, ::2, 1]", np)),
                   matrix(c(1, 13, 9, 21), 2))
  expect_identical(tb_eval("__import__('tensorbridge').tensor([[1., 2.], [3., 4.]])"),
                   matrix(c(1, 3, 2, 4), 2))
  expect_s3_class(tb_eval("object()"), "tb_object")
  expect_s3_class(tb_eval("object()"), "tb.object")
})

test_that("1e7-element arrays cross both ways; R -> Python shares memory", {
  skip_if_no_python()
  x <- stats::runif(1e7)
  x[c(5, 9e6)] <- c(NA, NaN)
  expect_true(testing()$shares_r_memory(x))
  y <- roundtrip(x)
  expect_identical(y, x)
  m <- matrix(1:1e7, 1e4)
  expect_identical(roundtrip(m), m)
})

test_that("user converters for R classes and Python types", {
  skip_if_no_python()
  money <- structure(12.5, class = "money")
  tb_register_converter(r_class = "money", to_python = function(x) list(amount = unclass(x), currency = "EUR"))
  on.exit(tb_unregister_converter(r_class = "money"), add = TRUE)
  expect_identical(roundtrip(money), list(amount = 12.5, currency = "EUR"))
  tb_register_converter(py_type = "fractions.Fraction", to_r = function(f) f$numerator / f$denominator)
  on.exit(tb_unregister_converter(py_type = "fractions.Fraction"), add = TRUE)
  expect_identical(tb_eval("__import__('fractions').Fraction(3, 4)"), 0.75)
  tb_unregister_converter(py_type = "fractions.Fraction")
  expect_s3_class(tb_eval("__import__('fractions').Fraction(3, 4)"), "tb_object")
})
