# Metrics: the runtime's (tensorbridge.runtime.layers.metrics).

new_metric <- function(class_name, args) {
  with_class(do.call(py_getattr(nn()$metrics, class_name), compact(args)), "tb_metric")
}

#' Metrics
#'
#' Metrics are running averages over an epoch, reported by [fit()] and [evaluate()] next to
#' the loss. Give [compile()] names or these objects: `"accuracy"` (`"acc"`; binary,
#' categorical or sparse categorical according to the loss), `"binary_accuracy"`,
#' `"categorical_accuracy"`, `"sparse_categorical_accuracy"`, `"mse"` /
#' `"mean_squared_error"`, `"mae"` / `"mean_absolute_error"`, and any loss name (the mean
#' of that loss).
#'
#' @param name The name used in logs and history (`NULL`: the default).
#' @param threshold Binary accuracy: predictions above it count as 1.
#' @return A metric (class `tb_metric`).
#' @examples
#' \dontrun{
#' model |> compile(optimizer = "adam", loss = "binary_crossentropy",
#'                  metrics = list(metric_binary_accuracy(threshold = 0.3)))
#' }
#' @name metrics
NULL

#' @rdname metrics
#' @export
metric_binary_accuracy <- function(threshold = 0.5, name = "binary_accuracy") {
  new_metric("BinaryAccuracy", list(name = check_string(name, "name"),
                                    threshold = check_number(threshold, "threshold")))
}

#' @rdname metrics
#' @export
metric_categorical_accuracy <- function(name = "categorical_accuracy") {
  new_metric("CategoricalAccuracy", list(name = check_string(name, "name")))
}

#' @rdname metrics
#' @export
metric_sparse_categorical_accuracy <- function(name = "sparse_categorical_accuracy") {
  new_metric("SparseCategoricalAccuracy", list(name = check_string(name, "name")))
}

#' @rdname metrics
#' @export
metric_accuracy <- function(name = "accuracy") {
  new_metric("Accuracy", list(name = check_string(name, "name")))
}

#' @rdname metrics
#' @export
metric_mean_squared_error <- function(name = "mean_squared_error") {
  new_metric("MeanSquaredError", list(name = check_string(name, "name")))
}

#' @rdname metrics
#' @export
metric_mean_absolute_error <- function(name = "mean_absolute_error") {
  new_metric("MeanAbsoluteError", list(name = check_string(name, "name")))
}

# The metrics argument of compile(): NULL, names, metric objects, a list of them, or a named
# list (per output).
as_metric_spec <- function(x, name = "metrics") {
  if (is.null(x)) return(NULL)
  if (inherits(x, "tb_metric")) return(list(x))
  if (is.character(x)) {
    if (!length(x) || anyNA(x) || !all(nzchar(x))) {
      nn_fail(sprintf("%s must be metric names or metric_*() objects, not %s", name,
                      describe_value(x)))
    }
    return(as.list(x))
  }
  if (is.list(x) && !is.object(x)) {
    out <- lapply(seq_along(x), function(i) {
      v <- x[[i]]
      if (is.null(v)) return(NULL)
      if (inherits(v, "tb_metric") || is.character(v) && length(v) == 1L) return(v)
      if (!is.null(names(x)) && nzchar(names(x)[[i]])) {
        return(as_metric_spec(v, sprintf("%s[[\"%s\"]]", name, names(x)[[i]])))
      }
      nn_fail(sprintf("%s[[%d]] must be a metric name or a metric_*() object, not %s", name, i,
                      describe_value(v)))
    })
    names(out) <- names(x)
    return(out)
  }
  nn_fail(sprintf("%s must be metric names or metric_*() objects, not %s", name,
                  describe_value(x)))
}
