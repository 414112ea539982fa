# Drift between the runtime's front-door spec and this package, asked of both: the spec from
# the runtime (tensorbridge.runtime.spec as_dict(), through the bridge) and the package from
# its installed namespace (getNamespaceExports, formals). Every distribution, variable type,
# sampler/optimiser/fit option and layer of the runtime has its R counterpart, named by the
# spec's rule (snake_case; greta's names where the spec says so).

front_door_spec <- local({
  spec <- NULL
  function() {
    skip_if_no_python()
    if (is.null(spec)) spec <<- tb_import("tensorbridge.runtime.spec")$as_dict()
    spec
  }
})

exports <- getNamespaceExports("tensorbridge")
r_formals <- function(fn) names(formals(getExportedValue("tensorbridge", fn)))
snake_case <- "^[a-z][a-z0-9]*(_[a-z0-9]+)*$|^Sigma$|^Lm(in|ax)$"

test_that("every distribution of the runtime is an R function with the spec's arguments", {
  spec <- front_door_spec()
  expect_gt(length(spec$distributions), 20L)
  for (d in spec$distributions) {
    fn <- d$names$r
    expect_true(fn %in% exports, info = sprintf("the package does not export %s()", fn))
    formals <- r_formals(fn)
    args <- c(d$params, d$options)
    want <- vapply(args, function(a) a$names$r, "")
    missing <- setdiff(want, formals)
    expect_true(length(missing) == 0L,
                info = sprintf("%s(): no argument %s", fn, paste(missing, collapse = ", ")))
    required <- vapply(Filter(function(a) isTRUE(a$required), d$params),
                       function(a) a$names$r, "")
    expect_identical(head(formals, length(required)), unname(required),
                     info = sprintf("%s(): the required parameters come first", fn))
    for (a in want) expect_match(a, snake_case, info = sprintf("%s(): %s", fn, a))
  }
})

test_that("every variable type and as_data() is an R function with the spec's arguments", {
  spec <- front_door_spec()
  names <- vapply(spec$variables, function(v) v$names$r, "")
  expect_true(all(c("variable", "ordered_variable", "simplex_variable", "cholesky_variable",
                    "as_data") %in% names))
  for (v in spec$variables) {
    fn <- v$names$r
    expect_true(fn %in% exports, info = sprintf("the package does not export %s()", fn))
    internal <- unlist(spec$internal$r[[v$name]])
    want <- vapply(Filter(function(a) !(a$name %in% internal), v$args),
                   function(a) a$names$r, "")
    expect_setequal(r_formals(fn), want)
    for (a in want) expect_match(a, snake_case)
  }
})

test_that("every sampler, optimiser and fit option is an argument of its R function", {
  spec <- front_door_spec()
  # greta's calculate() simulates too (given nsim)
  functions <- c(nuts = "nuts", hmc = "hmc", mcmc = "mcmc", opt = "opt", simulate = "calculate")
  for (fn in names(spec$options)) {
    if (fn %in% names(spec$not_in_door$r)) next  # not offered in R, for the reason given
    internal <- unlist(spec$internal$r[[fn]])
    formals <- if (fn == "fit") {
      names(formals(getS3method("fit", "tb_model", envir = asNamespace("tensorbridge"))))
    } else {
      r_fn <- if (fn %in% names(functions)) functions[[fn]] else fn
      expect_true(r_fn %in% exports, info = sprintf("R exports no %s()", r_fn))
      r_formals(r_fn)
    }
    for (o in spec$options[[fn]]) {
      if (o$name %in% internal) next
      expect_match(o$names$r, snake_case)
      expect_true(o$names$r %in% formals,
                  info = sprintf("R %s(): no argument %s (runtime: %s)", fn, o$names$r, o$name))
    }
  }
})

test_that("every layer of the runtime has its layer_<snake_case>() in R", {
  spec <- front_door_spec()
  expect_gt(length(spec$layers), 5L)
  for (l in spec$layers) {
    expect_true(l$names$r %in% exports, info = sprintf("no %s() for %s", l$names$r, l$name))
  }
})

test_that("the runtime refuses a bad argument naming it as R spells it", {
  skip_if_no_python()
  expect_error(variable(lower = 1, upper = 0), "variable: lower must be less than upper")
  expect_error(variable(dim = "a"), "variable: dim must be a non-negative whole number")
  expect_error(as_data("a"), "as_data: x must be a number")  # greta's x, Python's value
  expect_error(cholesky_variable(2, correlation = "yes"), "cholesky_variable: correlation must be")
})
