`%||%` <- function(a, b) if (is.null(a)) b else a

test_that("Python objects held by R are released by R's garbage collector", {
  skip_if_no_python()
  tt <- testing()
  counters <- tt$make_counters(1L) # caches the function before the baseline
  rm(counters)
  base <- live_handles()
  counters <- tt$make_counters(500L)
  expect_length(counters, 500L)
  expect_s3_class(counters[[1]], "tb_object")
  live_counters <- function() {
    tb_eval("__import__('tensorbridge.bridge.r.testing', fromlist=['x']).Counter.live")
  }
  expect_identical(live_counters(), 500L)
  expect_identical(tb_handles()$by_type$Counter, 500L)
  rm(counters)
  now <- live_handles()
  expect_lte(now[["live"]], base[["live"]]) # other garbage may go too, nothing stays
  expect_null(tb_handles()$by_type$Counter)
  expect_identical(live_counters(), 0L)
})

test_that("tensors, functions and modules made in a loop return to baseline", {
  skip_if_no_python()
  x <- as_tensor(1) * 2 # caches the API functions before the baseline
  rm(x)
  base <- live_handles()
  tensors <- tb_handles()$by_type$Tensor %||% 0L
  for (i in 1:300) {
    x <- as_tensor(c(i, 2))
    y <- x * 2
    f <- tb_eval("lambda v: v")
  }
  rm(x, y, f)
  now <- live_handles()
  expect_lte(now[["live"]], base[["live"]])
  expect_identical(tb_handles()$by_type$Tensor %||% 0L, tensors)
})

test_that("R objects held by Python are released when Python drops them", {
  skip_if_no_python()
  tt <- testing()
  tt$hold(NULL)
  tt$drop()
  base <- live_handles()
  big <- stats::runif(1e5)
  tt$hold(big)
  tt$hold(new.env())
  tt$hold(function(x) x)
  expect_identical(tb_handles()$r_objects, base[["r_objects"]] + 3L)
  tt$drop()
  now <- live_handles()
  expect_lte(now[["r_objects"]], base[["r_objects"]])
})

test_that("in a fresh session the counts return exactly to baseline after rm() + gc()", {
  skip_if_no_python()
  out <- run_r_script(c(
    "library(tensorbridge)",
    "tt <- tb_import('tensorbridge.bridge.r.testing')",
    "settle <- function() { last <- NULL; for (i in 1:20) { invisible(gc()); h <- tb_handles();",
    "  now <- c(h$live, h$r_objects); if (identical(now, last)) break; last <- now }; now }",
    "warm <- list(as_tensor(1) + 1, tt$make_counters(1L), tt$hold(NULL), tt$drop()); rm(warm)",
    "base <- settle()",
    "objs <- list(tt$make_counters(200L), lapply(1:100, function(i) as_tensor(i) * 2),",
    "             lapply(1:50, function(i) tb_eval('lambda: 0')))",
    "for (i in 1:50) tt$hold(runif(10)); for (i in 1:50) tt$hold(function() i)",
    "mid <- settle()",
    "rm(objs); tt$drop()",
    "end <- settle()",
    "cat('BASE', base, '\n'); cat('MID', mid, '\n'); cat('END', end, '\n')"
  ))
  text <- paste(out, collapse = "\n")
  base <- scan(text = sub("^BASE ", "", grep("^BASE", out, value = TRUE)), quiet = TRUE)
  mid <- scan(text = sub("^MID ", "", grep("^MID", out, value = TRUE)), quiet = TRUE)
  end <- scan(text = sub("^END ", "", grep("^END", out, value = TRUE)), quiet = TRUE)
  expect_length(base, 2L)
  expect_gte(mid[[1]], base[[1]] + 350)
  expect_gte(mid[[2]], base[[2]] + 100)
  expect_identical(end, base, info = text)
})

test_that("tb_release() releases at once; later use is a clear error", {
  skip_if_no_python()
  obj <- tb_eval("object()")
  before <- tb_handles()$live
  tb_release(obj)
  expect_identical(tb_handles()$live, before - 1L)
  expect_error(print(obj$`__class__`), class = "tensorbridge_released_error")
  expect_output(print(obj), "released")
  f <- tb_eval("lambda: 1")
  tb_release(f)
  expect_error(f(), class = "tensorbridge_released_error")
})

test_that("objects from a previous R session give a clear error, not a crash", {
  skip_if_no_python()
  rds <- tempfile(fileext = ".rds")
  out1 <- run_r_script(c(
    "library(tensorbridge)",
    "m <- tb_import('math')",
    "objs <- list(t = as_tensor(c(1, 2)), f = m$sqrt, m = m, o = tb_eval('object()'))",
    sprintf("saveRDS(objs, '%s')", rds),
    "cat('SAVED\\n')"
  ))
  expect_true(any(grepl("SAVED", out1)), info = paste(out1, collapse = "\n"))
  out2 <- run_r_script(c(
    "library(tensorbridge)",
    sprintf("objs <- readRDS('%s')", rds),
    "for (k in names(objs)) {",
    "  r <- tryCatch({ x <- objs[[k]]; if (is.function(x)) x(4) else if (inherits(x, 'tb_tensor')) as.array(x + 1) else x$pi; 'NO ERROR' },",
    "                error = function(e) paste(class(e)[1], conditionMessage(e)))",
    "  cat(k, ':', r, '\\n')",
    "}",
    "print(objs$t); print(objs$o); print(objs$f)",
    "invisible(gc())",
    "cat('ALIVE\\n')"
  ))
  out2 <- paste(out2, collapse = "\n")
  expect_match(out2, "ALIVE")
  expect_false(grepl("NO ERROR", out2))
  for (k in c("t", "f", "m", "o")) {
    expect_match(out2, paste0(k, " : tensorbridge_stale_error .*previous R session"))
  }
})

test_that("Python lets go of arrays as soon as R has copied them", {
  skip_if_no_python()
  outbox <- tb_eval(paste0(
    "lambda: len(__import__('tensorbridge.bridge.r.rhost', fromlist=['x']).current_host().outbox)"
  ))
  arrays <- tb_eval("lambda: [__import__('numpy').ones(1000), {'a': __import__('numpy').zeros((2, 2))}]")
  x <- arrays()
  expect_identical(x[[2]]$a, matrix(0, 2, 2))
  expect_identical(outbox(), 0L)
  loop <- tb_eval("lambda f, n: [f(__import__('numpy').ones(10)) for _ in range(int(n))][-1]")
  expect_identical(loop(function(v) sum(v), 100), 10)
  expect_identical(outbox(), 0L)
  e <- new.env()
  expect_identical(roundtrip(e), e)
  expect_identical(outbox(), 0L)
})
