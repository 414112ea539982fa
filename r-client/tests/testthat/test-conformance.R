# The conformance table (tests/conformance/*.json of the checkout) replayed through the R door.
#
# Every case with an "r" block runs here, as tests/conformance/README.md says: the block's
# `value` (or `expr`) is R code; each step (receive, tensor, back, result, warning) is taken from
# the block, or else from the case. What Python received is judged by Python itself
# (tensorbridge.bridge.conformance.check_json), so this file only writes values and catches
# errors the R way. A failure names the door, the table, the case and the step.

# tests/conformance of the checkout whose Python the tests use (or TENSORBRIDGE_CONFORMANCE).
conformance_dir <- function() {
  candidates <- c(
    Sys.getenv("TENSORBRIDGE_CONFORMANCE", ""),
    file.path(checkout_of(tensorbridge:::.tb$python), "tests", "conformance"),
    file.path(getwd(), "..", "..", "..", "tests", "conformance")
  )
  for (d in candidates) {
    if (nzchar(d) && file.exists(file.path(d, "README.md")) &&
        length(Sys.glob(file.path(d, "*.json")))) {
      return(normalizePath(d))
    }
  }
  NULL
}

conformance_tables <- function(dir) {
  files <- sort(Sys.glob(file.path(dir, "*.json")))
  tabs <- lapply(files, function(f) jsonlite::fromJSON(f, simplifyVector = FALSE)[["cases"]])
  names(tabs) <- sub("\\.json$", "", basename(files))
  tabs
}

# An expectation as the JSON string Python's check_json() takes. Numbers are written with 17
# significant digits (jsonlite stops at 15), so every double reads back as itself.
as_json <- function(x) {
  if (is.null(x)) return("null")
  if (is.list(x)) {
    items <- vapply(x, as_json, character(1))
    if (is.null(names(x))) return(paste0("[", paste(items, collapse = ","), "]"))
    keys <- vapply(names(x), function(k) as_json(k), character(1))
    return(paste0("{", paste(keys, items, sep = ":", collapse = ","), "}"))
  }
  if (is.character(x)) return(as.character(jsonlite::toJSON(x, auto_unbox = TRUE)))
  if (is.logical(x)) return(if (x) "true" else "false")
  if (is.integer(x)) return(as.character(x))
  sprintf("%.17g", x)
}

# The error a step raised, or NULL; `make` is evaluated once.
step_error <- function(make) {
  tryCatch({
    make()
    NULL
  }, error = function(e) e)
}

# NULL when the condition is the error the case names (class, in R's class vector or in the
# Python class chain the bridge keeps, and the argument's name in the message); else why not.
judge_error <- function(e, want) {
  if (is.null(e)) return(sprintf("did not raise %s", want[["class"]]))
  classes <- c(class(e), as.character(e[["classes"]]))
  msg <- conditionMessage(e)
  if (!want[["class"]] %in% classes) {
    return(sprintf("raised %s (%s), expected %s", class(e)[[1L]], msg, want[["class"]]))
  }
  if (!is.null(want[["arg"]]) && !grepl(want[["arg"]], msg, fixed = TRUE)) {
    return(sprintf("%s does not name the argument '%s': %s", want[["class"]], want[["arg"]], msg))
  }
  NULL
}

is_error_expectation <- function(want) is.list(want) && !is.null(want[["error"]])

# The failures of one case through the R door (character(0) when it passes).
run_conformance_case <- function(case, conf) {
  block <- case[["r"]]
  env <- new.env(parent = globalenv())
  run <- function(code) eval(parse(text = code, keep.source = FALSE), envir = env)
  failures <- character()
  warnings <- character()
  fail <- function(step, why) failures <<- c(failures, sprintf("%s: %s", step, why))
  steps <- c("receive", "tensor", "back", "result")
  withCallingHandlers({
    for (step in steps) {
      want <- if (!is.null(block[[step]])) block[[step]] else case[[step]]
      if (is.null(want)) next
      if (step == "result" && is.null(block[["expr"]])) {
        fail(step, "the case expects a result but the r block has no expr")
        next
      }
      if (step != "result" && is.null(block[["value"]])) {
        fail(step, "the case has this step but the r block has no value")
        next
      }
      make <- switch(step,
        receive = function() run(block[["value"]]),
        tensor = function() as_tensor(run(block[["value"]])),
        back = function() run(block[["value"]]),
        result = function() run(block[["expr"]])
      )
      if (is_error_expectation(want)) {
        why <- judge_error(step_error(make), want[["error"]])
        if (!is.null(why)) fail(step, why)
        next
      }
      why <- tryCatch({
        if (step == "back") {
          x <- make()
          got <- conf$echo(x)
          expected <- if (identical(want, "same")) x else run(want)
          if (identical(got, expected)) NULL else paste(
            "came back as", paste(deparse(got), collapse = " "), "expected",
            paste(deparse(expected), collapse = " ")
          )
        } else {
          conf$check_json(make(), as_json(want))
        }
      }, error = function(e) paste("raised", conditionMessage(e)))
      if (!is.null(why)) fail(step, why)
    }
  }, warning = function(w) {
    warnings <<- c(warnings, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  pattern <- if (!is.null(block[["warning"]])) block[["warning"]] else case[["warning"]]
  if (!is.null(pattern) && !any(grepl(pattern, warnings, perl = TRUE))) {
    fail("warning", sprintf("none matched '%s' (got: %s)", pattern,
                            if (length(warnings)) paste(warnings, collapse = " | ") else "none"))
  }
  failures
}

test_that("the conformance table passes through the R door", {
  skip_if_no_python()
  dir <- conformance_dir()
  if (is.null(dir)) {
    if (identical(Sys.getenv("TENSORBRIDGE_REQUIRE_PYTHON"), "1")) {
      stop("tests/conformance not found (set TENSORBRIDGE_CONFORMANCE)")
    }
    skip("tests/conformance not found (set TENSORBRIDGE_CONFORMANCE)")
  }
  conf <- tb_import("tensorbridge.bridge.conformance")
  tables <- conformance_tables(dir)
  ran <- 0L
  failed <- 0L
  skipped <- 0L
  for (table in names(tables)) {
    for (case in tables[[table]]) {
      if (is.null(case[["r"]])) next
      if (!is.null(case[["r"]][["skip"]])) {
        skipped <- skipped + 1L
        next
      }
      ran <- ran + 1L
      failures <- run_conformance_case(case, conf)
      if (length(failures)) failed <- failed + 1L
      expect(length(failures) == 0L, sprintf(
        "door r, table %s, case %s: %s", table, case[["id"]], paste(failures, collapse = "; ")
      ))
    }
  }
  cat(sprintf("\nconformance (r door): %d cases, %d failed%s\n", ran, failed,
              if (skipped) sprintf(" (%d skipped)", skipped) else ""))
  expect_gt(ran, 0L)
})
