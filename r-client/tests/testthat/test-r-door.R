# The R door's edges of issue 12 that are not values crossing (those are rows of the
# conformance table, test-conformance.R): threads while R is idle, compile(), tb_release() of a
# module's function, base/stats functions that the package masks, errors and warnings.

test_that("a Python thread calling R while R is idle is served by R's event loop", {
  skip_if_no_python()
  skip_if_not(isTRUE(tensorbridge:::.tb$event_loop), "R's event loop hook is not installed")
  t <- testing()
  ran_at <- NULL
  f <- function() {
    ran_at <<- Sys.time()
    42
  }
  job <- t$call_later(f, 0.2)
  start <- Sys.time()
  Sys.sleep(1.5) # R idles: no call into Python; the thread calls f after 0.2 s
  # f ran during the sleep (before this line, which is the first call into Python since)
  expect_false(is.null(ran_at))
  expect_lt(as.numeric(difftime(ran_at, start, units = "secs")), 1.0)
  expect_null(job$error)
  expect_identical(job$value, 42)
  expect_lt(job$waited, 0.5)
})

test_that("a failed compile() leaves the network usable with its previous configuration", {
  skip_if_no_python()
  m <- model_sequential(input_shape = 2) |> layer_dense(1)
  x <- matrix(c(0.1, 0.5, -0.3, 0.8, 0.2, -0.1), 3)
  y <- matrix(c(1, 0, 1), 3)
  compile(m, optimizer = "sgd", loss = "mse")
  before <- evaluate(m, x, y, verbose = 0)
  expect_error(compile(m, optimizer = "sgd", loss = "nonsense"), "nonsense")
  expect_error(compile(m, optimizer = "nonsense_opt", loss = "mse"), "nonsense_opt")
  expect_identical(evaluate(m, x, y, verbose = 0), before)
  expect_no_error(fit(m, x, y, epochs = 1, verbose = 0))
})

test_that("tb_release() of a function fetched from a module leaves the module working", {
  skip_if_no_python()
  np <- tb_import("numpy")
  s <- np$sum
  tb_release(s)
  expect_error(s(1:3), "released")
  expect_identical(np$sum(1:3), 6L)
  s2 <- np$sum
  expect_identical(s2(c(1, 2)), 3)
})

test_that("calls that are clearly base or stats functions are not taken for distributions", {
  skip_if_no_python()
  set.seed(1)
  x <- 1:30
  yb <- rbinom(30, 1, stats::plogis((x - 15) / 5))
  yc <- rpois(30, exp(x / 15))
  ref <- function(formula, family) coef(stats::glm(formula, family = family))
  expect_equal(coef(glm(yb ~ x, family = binomial)), ref(yb ~ x, stats::binomial()))
  expect_equal(coef(glm(yb ~ x, family = "binomial")), ref(yb ~ x, stats::binomial()))
  expect_equal(coef(glm(yb ~ x, family = binomial("probit"))),
               ref(yb ~ x, stats::binomial("probit")))
  expect_equal(coef(glm(yb ~ x, family = binomial(link = "cloglog"))),
               ref(yb ~ x, stats::binomial("cloglog")))
  expect_equal(coef(glm(yb ~ x, family = binomial(probit))),
               ref(yb ~ x, stats::binomial("probit")))
  expect_equal(coef(glm(yc ~ x, family = poisson)), ref(yc ~ x, stats::poisson()))
  expect_equal(coef(glm(yc ~ x, family = poisson(link = "sqrt"))),
               ref(yc ~ x, stats::poisson("sqrt")))
  expect_identical(binomial()$family, "binomial")
  expect_error(binomial(link = "nonsense"), "link")
  expect_identical(gamma(5), 24)
  expect_identical(gamma(x = 0.5), base::gamma(0.5))
  expect_identical(beta(a = 2, b = 3), base::beta(2, 3))
  # ... while the distributions stay greta's
  expect_true(tensorbridge:::is_lazy(binomial(10, 0.5)))
  expect_true(tensorbridge:::is_lazy(poisson(3)))
  expect_true(tensorbridge:::is_lazy(gamma(2, 1)))
  expect_true(tensorbridge:::is_lazy(beta(2, 3)))
  expect_error(beta(2), "shape2 is missing")
})

test_that("distribution(y) <- leaves R data as it was, and the likelihood still counts", {
  skip_if_no_python()
  mu <- normal(0, 1)
  w <- c(0.5, 1.5)
  distribution(w) <- normal(mu, 1)
  expect_identical(w, c(0.5, 1.5))
  # posterior mode of mu with a N(0, 1) prior and two N(mu, 1) observations: sum(w) / 3
  res <- opt(model(mu))
  expect_equal(as.numeric(res$par$mu), 2 / 3, tolerance = 1e-6)
  # impossible data: refused, in R's terms
  y <- c(0, 2)
  expect_error(distribution(y) <- bernoulli(0.5), "distribution<-: greta_array: bernoulli")
  expect_identical(y, c(0, 2))
})

test_that("tb_last_error() gives the Python traceback of the last error", {
  skip_if_no_python()
  t <- testing()
  e <- tryCatch(t$raise_error("KeyError", "nothing here"), error = function(e) e)
  last <- tb_last_error()
  expect_identical(last, e)
  expect_s3_class(last, "tensorbridge_error")
  expect_true(any(grepl("raise_error", last$traceback)))
  out <- capture.output(print(last))
  expect_match(out[[1L]], "KeyError", fixed = TRUE)
  expect_true(any(grepl("Python traceback (most recent call last):", out, fixed = TRUE)))
  expect_true(any(grepl("testing.py", out, fixed = TRUE)))
})

test_that("Python warnings become R warnings, with the Python category as a class", {
  skip_if_no_python()
  t <- testing()
  w <- expect_warning(v <- t$warn("mind the gap"), "UserWarning: mind the gap")
  expect_identical(v, 1L)
  expect_s3_class(w, "tensorbridge_warning")
  expect_s3_class(w, "UserWarning")
  expect_warning(t$warn("later", "FutureWarning"), class = "FutureWarning")
  expect_silent(suppressWarnings(t$warn("quiet")))
  # no warning, no wrapper: the value is the same
  expect_identical(t$identity(3L), 3L)
})

test_that("at R's interactive prompt, a Python thread's call to R is served while R waits", {
  skip_if_no_python()
  skip_on_os("windows")
  skip_if(!nzchar(Sys.which("bash")), "needs bash")
  setup <- tempfile(fileext = ".R")
  ready <- tempfile()
  writeLines(c(
    "suppressMessages(library(tensorbridge))",
    "t <- tb_import('tensorbridge.bridge.r.testing')",
    "ran_at <- NULL",
    "job <- t$call_later(function() { ran_at <<- Sys.time(); 42 }, 0.2)",
    "start <- Sys.time()",
    sprintf("writeLines('ready', '%s')", ready)
  ), setup)
  # R reads the first line, then sits at the prompt for 4 s before the second arrives; the 4 s
  # count from the end of the setup (R's start and loading the package take seconds on a
  # loaded machine, and a line that is already waiting would leave R no idle moment)
  script <- sprintf(paste0(
    "(echo \"source('%s')\"; for i in $(seq 900); do [ -f '%s' ] && break; sleep 0.1; done; sleep 4; ",
    "echo 'cat(\"RAN\", !is.null(ran_at) && difftime(ran_at, start, units = \"secs\") < 2, \"\\n\")') | ",
    "%s %s --interactive --no-save --no-restore -q --no-readline"
  ), setup, ready, paste(python_env(), collapse = " "), shQuote(file.path(R.home("bin"), "R")))
  out <- suppressWarnings(system2("bash", c("-c", shQuote(script)), stdout = TRUE, stderr = TRUE,
                                  timeout = 120))
  expect_true(any(grepl("^RAN TRUE", out)), info = paste(out, collapse = "\n"))
})
