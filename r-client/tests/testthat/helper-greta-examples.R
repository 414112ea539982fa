# Reads greta's example-model vignette (fixtures/greta/example_models.Rmd, see SOURCE.md) into
# its models, so tests can run each one verbatim. Each "### " heading is one model; its "``` r"
# chunks are the model code and its "``` text" chunks the data that the vignette shows but does
# not evaluate (greta renders them as text). Fences with no language (BUGS and Stan code) are
# skipped.

greta_examples <- local({
  cache <- NULL
  function() {
    if (!is.null(cache)) return(cache)
    path <- test_path("fixtures", "greta", "example_models.Rmd")
    lines <- readLines(path, warn = FALSE)
    models <- list()
    name <- NULL
    chunk <- NULL
    kind <- NULL
    for (line in lines) {
      if (!is.null(kind)) {
        if (identical(line, "```")) {
          if (kind %in% c("r", "text")) {
            models[[name]][[kind]] <- c(models[[name]][[kind]], paste(chunk, collapse = "\n"))
          }
          kind <- NULL
        } else {
          chunk <- c(chunk, line)
        }
        next
      }
      if (startsWith(line, "### ")) {
        name <- trimws(substring(line, 5))
        models[[name]] <- list(r = character(), text = character())
      } else if (startsWith(line, "```")) {
        kind <- trimws(substring(line, 4))
        if (!nzchar(kind)) kind <- "other"
        if (kind %in% c("r", "text") && is.null(name)) {
          stop("a code chunk before the first model heading in ", path)
        }
        chunk <- character()
      }
    }
    cache <<- models
    models
  }
})

# Runs model `name` of the vignette verbatim in a fresh environment whose parent is the global
# environment (where library(tensorbridge) attached greta's names): the data chunks first, in
# order, then the model chunks. The random number seed is set first, because the ecological
# examples simulate their data. Returns the environment, holding every object the code made.
run_greta_example <- function(name, seed = 1) {
  models <- greta_examples()
  if (!name %in% names(models)) {
    stop("no model called '", name, "' in greta's vignette; it has: ",
         paste(names(models), collapse = ", "))
  }
  env <- new.env(parent = globalenv())
  set.seed(seed)
  for (code in c(models[[name]]$text, models[[name]]$r)) {
    eval(parse(text = code, keep.source = FALSE), envir = env)
  }
  env
}
