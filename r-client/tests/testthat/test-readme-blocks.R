# The READMEs are tests: every ```r block of r-client/README.md and of the checkout's README.md
# runs here as written, one test per block (named file:line of its opening fence), each in a
# fresh environment (its parent the global environment, with the package attached), in a
# temporary working directory, with plots drawn on a pdf device; values are printed as Rscript
# prints them. An error names the README line of the expression that failed.
#
# The convention the three README tests share (tests/readme/test_readme_blocks.py states it in
# full and checks the markup of all three READMEs): a fence's language says how the block is
# tested (python, r, js/javascript run; text is output and must be marked <!-- output -->; sh is
# not run and must be marked <!-- not-run: why -->; any other language fails), and an HTML
# comment directly above a fence may say <!-- given: NAME, ... --> for names the block uses but
# an earlier block or the page defines (R_GIVEN below says what each is; an unknown name fails).
#
# Under R CMD check the tests run from the built package, where the READMEs are not: the
# checkout is found next to r-client/ (tests run from the checkout) or through the checkout's
# Python, <checkout>/.venv/bin/python (TENSORBRIDGE_PYTHON or the one found). Not found: skipped,
# or a failure under TENSORBRIDGE_REQUIRE_PYTHON=1 (as make test runs it).

readme_files <- c("README.md", "r-client/README.md")

# <!-- given: ... --> names for ```r blocks and the code that defines them (none needed today)
R_GIVEN <- list()

readme_checkout <- function() {
  python <- Sys.getenv("TENSORBRIDGE_PYTHON")
  if (isTRUE(python_ready())) python <- c(python, tensorbridge:::.tb$python)
  python <- python[nzchar(python)]
  candidates <- c(testthat::test_path("..", "..", ".."), dirname(dirname(dirname(python))))
  is_checkout <- function(d) {
    all(file.exists(file.path(d, c(readme_files, "r-client/DESCRIPTION")))) &&
      any(grepl("^Package: tensorbridge$", readLines(file.path(d, "r-client/DESCRIPTION"))))
  }
  found <- Filter(is_checkout, candidates)
  if (length(found)) normalizePath(found[[1L]]) else NULL
}

# Fenced blocks of a markdown file: list(file, line, lang, code, markers = named list)
readme_parse <- function(root, rel) {
  lines <- readLines(file.path(root, rel), warn = FALSE, encoding = "UTF-8")
  fence_re <- "^ {0,3}(`{3,}|~{3,})[[:space:]]*([^[:space:]`]*)[[:space:]]*$"
  marker_re <- "^<!--\\s*(output|not-run|given)\\s*(?::\\s*(.*?))?\\s*-->\\s*$"
  blocks <- list()
  i <- 1L
  while (i <= length(lines)) {
    m <- regmatches(lines[i], regexec(fence_re, lines[i]))[[1L]]
    if (!length(m)) {
      i <- i + 1L
      next
    }
    fence <- m[[2L]]
    start <- i
    markers <- list()
    k <- i - 1L
    while (k >= 1L) {
      mk <- regmatches(trimws(lines[k]), regexec(marker_re, trimws(lines[k]), perl = TRUE))[[1L]]
      if (!length(mk)) break
      markers[[mk[[2L]]]] <- mk[[3L]]
      k <- k - 1L
    }
    close_re <- sprintf("^[[:space:]]*[%s]{%d,}[[:space:]]*$", substr(fence, 1L, 1L),
                        nchar(fence))
    i <- i + 1L
    body_start <- i
    while (i <= length(lines) && !grepl(close_re, lines[i])) i <- i + 1L
    if (i > length(lines)) stop(sprintf("%s:%d: code fence never closed", rel, start))
    blocks[[length(blocks) + 1L]] <- list(
      file = rel, line = start, lang = tolower(m[[3L]]), markers = markers,
      code = lines[seq_len(i - body_start) + body_start - 1L])
    i <- i + 1L
  }
  blocks
}

readme_given <- function(block) {
  g <- block$markers[["given"]]
  if (is.null(g)) character() else Filter(nzchar, strsplit(g, "[[:space:],]+")[[1L]])
}

# What is wrong with a block's markup (character(0): it is classified)
readme_problems <- function(block) {
  where <- sprintf("%s:%d", block$file, block$line)
  m <- names(block$markers)
  switch(block$lang,
    python = , js = , javascript = , r = c(
      if (any(c("output", "not-run") %in% m))
        sprintf("%s: a ```%s block must run (no output / not-run marker)", where, block$lang),
      if (block$lang == "r" && length(setdiff(readme_given(block), names(R_GIVEN))))
        sprintf("%s: <!-- given: --> names %s, not in R_GIVEN", where,
                paste(setdiff(readme_given(block), names(R_GIVEN)), collapse = ", "))),
    text = if (!identical(m, "output"))
      sprintf("%s: a ```text block must be marked <!-- output --> (and nothing else)", where),
    sh = if (!identical(m, "not-run") || !nzchar(block$markers[["not-run"]]))
      sprintf("%s: a ```sh block must be marked <!-- not-run: why --> (and nothing else)", where),
    sprintf("%s: unknown fence language '%s': use python, r, js, text (output) or sh (not run)",
            where, block$lang))
}

# Evaluate a block as Rscript would (visible values printed); returns the printed text.
readme_run <- function(block, root) {
  env <- new.env(parent = globalenv())
  for (name in readme_given(block)) eval(parse(text = R_GIVEN[[name]]), env)
  dir <- tempfile("readme-")
  dir.create(dir)
  old <- setwd(dir)
  grDevices::pdf(file.path(dir, "plots.pdf"))
  device <- grDevices::dev.cur()
  on.exit({
    if (device %in% grDevices::dev.list()) grDevices::dev.off(device)
    setwd(old)
    unlink(dir, recursive = TRUE)
  }, add = TRUE)
  exprs <- parse(text = block$code, keep.source = TRUE)
  refs <- attr(exprs, "srcref")
  messages <- NULL
  printed <- utils::capture.output(messages <- utils::capture.output(type = "message", {
    for (i in seq_along(exprs)) {
      line <- block$line + refs[[i]][[1L]]
      withCallingHandlers({
        res <- withVisible(eval(exprs[[i]], env))
        if (res$visible) print(res$value)
      }, error = function(e) {
        stop(sprintf("%s:%d: %s\n  in: %s", block$file, line, conditionMessage(e),
                     paste(as.character(refs[[i]]), collapse = "\n      ")), call. = FALSE)
      })
    }
  }))
  list(printed = printed, messages = messages, env = env)
}

root <- readme_checkout()

if (is.null(root)) {
  test_that("the checkout's READMEs are found", {
    if (identical(Sys.getenv("TENSORBRIDGE_REQUIRE_PYTHON"), "1")) {
      fail("the checkout's README.md and r-client/README.md were not found (next to r-client/ or through the checkout's .venv/bin/python)")
    }
    skip("the checkout's README.md and r-client/README.md were not found")
  })
} else {
  blocks <- do.call(c, lapply(readme_files, function(rel) readme_parse(root, rel)))

  test_that("every block of README.md and r-client/README.md is classified", {
    expect_identical(unlist(lapply(blocks, readme_problems)), NULL)
    langs <- vapply(blocks, `[[`, "", "lang")
    files <- vapply(blocks, `[[`, "", "file")
    expect_true(all(readme_files %in% files[langs == "r"]))
  })

  test_that("the parser finds fences and markers and rejects unknown languages", {
    dir <- tempfile("md-")
    dir.create(dir)
    on.exit(unlink(dir, recursive = TRUE))
    writeLines(c("# t", "<!-- output -->", "```text", "out", "```", "<!-- given: tb, y -->",
                 "```r", "f(y)", "", "```", "```rust", "fn main() {}", "```", "```sh", "make",
                 "```"), file.path(dir, "x.md"))
    b <- readme_parse(dir, "x.md")
    expect_identical(vapply(b, `[[`, 1L, "line"), c(3L, 7L, 11L, 14L))
    expect_identical(vapply(b, `[[`, "", "lang"), c("text", "r", "rust", "sh"))
    expect_identical(b[[2L]]$code, c("f(y)", ""))
    expect_identical(readme_given(b[[2L]]), c("tb", "y"))
    expect_identical(lengths(lapply(b, readme_problems)), c(0L, 1L, 1L, 1L))
    expect_error(readme_run(list(file = "x.md", line = 7L, lang = "r", markers = list(),
                                 code = c("a <- 1", "stop('boom')")), dir),
                 "x.md:9: boom")
  })

  for (block in Filter(function(b) b$lang == "r", blocks)) local({
    block <- block
    test_that(sprintf("%s:%d runs as written", block$file, block$line), {
      skip_if_no_python()
      expect_no_error(readme_run(block, root))
    })
  })
}
