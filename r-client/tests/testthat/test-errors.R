test_that("Python exceptions become classed R conditions with message and traceback", {
  skip_if_no_python()
  tt <- testing()
  e <- tryCatch(tt$raise_error("ValueError", "bad value"), error = function(e) e)
  expect_identical(class(e), c("tensorbridge_error", "ValueError", "error", "condition"))
  expect_identical(conditionMessage(e), "ValueError: bad value")
  expect_identical(e$python_message, "bad value")
  expect_true(any(grepl("raise_error", e$traceback)))
  expect_output(print(e), "traceback")
  expect_error(tt$raise_error("KeyError", "k"), class = "KeyError")
  expect_error(tb_eval("1/0"), class = "ZeroDivisionError")
  expect_error(tb_import("no_such_module_xyz"), class = "ModuleNotFoundError")
  expect_error(tb_import("math")$no_such_attr, class = "AttributeError")
})

test_that("R errors in callbacks reach Python as ForeignError and come back unchanged", {
  skip_if_no_python()
  catcher <- tb_eval(paste0(
    "lambda f: (lambda e: [type(e).__name__, e.language, e.foreign_class, e.message])",
    "(__import__('tensorbridge.bridge.r.testing', fromlist=['x']).catch(f))"
  ))
  expect_identical(catcher(function() stop("original R message")),
                   c("ForeignError", "r", "simpleError", "original R message"))
  cond <- structure(class = c("my_error", "error", "condition"),
                    list(message = "custom", call = NULL, extra = 42))
  e <- tryCatch(testing()$call_in_thread(function() stop(cond)), error = function(e) e)
  expect_identical(e, cond) # the very same condition object
  e2 <- tryCatch(testing()$identity(function() stop("plain"))(), error = function(e) e)
  expect_identical(conditionMessage(e2), "plain")
  expect_false(inherits(e2, "tensorbridge_error"))
})

test_that("errors keep their class through nested boundaries", {
  skip_if_no_python()
  tt <- testing()
  f <- function() tt$raise_error("TypeError", "inner python")
  e <- tryCatch(tt$call_in_thread(f), error = function(e) e)
  expect_s3_class(e, "TypeError")
  expect_identical(conditionMessage(e), "TypeError: inner python")
})
