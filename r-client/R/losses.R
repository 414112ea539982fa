# Losses: the runtime's (tensorbridge.runtime.layers.losses).

new_loss <- function(class_name, args, reduction, name) {
  args$reduction <- check_string(reduction, "reduction",
                                 choices = c("sum_over_batch_size", "sum", "none"))
  args$name <- check_string(name, "name", null_ok = TRUE)
  with_class(do.call(py_getattr(nn()$losses, class_name), compact(args)), "tb_loss")
}

#' Losses
#'
#' Loss objects for [compile()], for settings other than the defaults. The names work
#' too: `"mse"` / `"mean_squared_error"`, `"mae"` / `"mean_absolute_error"`, `"huber"`,
#' `"binary_crossentropy"` (`"bce"`), `"categorical_crossentropy"` (`"cce"`),
#' `"sparse_categorical_crossentropy"` (`"scce"`); any spelling of those (`"MeanSquaredError"`,
#' `"meanSquaredError"`) is accepted.
#'
#' Cross-entropies take probabilities by default and logits with `from_logits = TRUE` (exact
#' and stable for any magnitude). Categorical cross-entropy takes one-hot targets (a matrix,
#' one column per class); the sparse form takes class indices `0, 1, ..., k - 1` (an integer
#' vector), as in Python and JavaScript.
#'
#' @param from_logits The model outputs logits (no final sigmoid/softmax).
#' @param label_smoothing Mix the targets with the uniform distribution (0: none).
#' @param delta Huber: where the quadratic part turns linear.
#' @param reduction How per-sample losses become one number: `"sum_over_batch_size"` (the
#'   mean), `"sum"` or `"none"`.
#' @param name `NULL` (the default name) or the name shown in logs.
#' @return A loss (class `tb_loss`).
#' @examples
#' \dontrun{
#' model |> compile(optimizer = "adam", loss = loss_binary_crossentropy(from_logits = TRUE),
#'                  metrics = "accuracy")
#' }
#' @name losses
NULL

#' @rdname losses
#' @export
loss_mean_squared_error <- function(reduction = "sum_over_batch_size", name = NULL) {
  new_loss("MeanSquaredError", list(), reduction, name)
}

#' @rdname losses
#' @export
loss_mean_absolute_error <- function(reduction = "sum_over_batch_size", name = NULL) {
  new_loss("MeanAbsoluteError", list(), reduction, name)
}

#' @rdname losses
#' @export
loss_huber <- function(delta = 1, reduction = "sum_over_batch_size", name = NULL) {
  new_loss("Huber", list(delta = check_number(delta, "delta", lower = 0, lower_open = TRUE)),
           reduction, name)
}

#' @rdname losses
#' @export
loss_binary_crossentropy <- function(from_logits = FALSE, label_smoothing = 0,
                                     reduction = "sum_over_batch_size", name = NULL) {
  new_loss("BinaryCrossentropy", list(
    from_logits = check_flag(from_logits, "from_logits"),
    label_smoothing = check_number(label_smoothing, "label_smoothing", 0, 1)
  ), reduction, name)
}

#' @rdname losses
#' @export
loss_categorical_crossentropy <- function(from_logits = FALSE, label_smoothing = 0,
                                          reduction = "sum_over_batch_size", name = NULL) {
  new_loss("CategoricalCrossentropy", list(
    from_logits = check_flag(from_logits, "from_logits"),
    label_smoothing = check_number(label_smoothing, "label_smoothing", 0, 1)
  ), reduction, name)
}

#' @rdname losses
#' @export
loss_sparse_categorical_crossentropy <- function(from_logits = FALSE,
                                                 reduction = "sum_over_batch_size",
                                                 name = NULL) {
  new_loss("SparseCategoricalCrossentropy", list(
    from_logits = check_flag(from_logits, "from_logits")
  ), reduction, name)
}

# A loss argument of compile(): a name, a loss object, or a list / named list of them (one
# per output).
as_loss_spec <- function(x, name = "loss") {
  if (inherits(x, "tb_loss")) return(x)
  if (is.character(x) && length(x) == 1L) return(check_string(x, name))
  if (is.list(x) && !is.object(x) && length(x)) {
    out <- lapply(seq_along(x), function(i) {
      if (is.null(x[[i]])) NULL else as_loss_spec(x[[i]], sprintf("%s[[%d]]", name, i))
    })
    names(out) <- names(x)
    return(out)
  }
  nn_fail(sprintf("%s must be a loss name (e.g. \"mse\"), a loss_*() object, or a list of them (one per output), not %s",
                  name, describe_value(x)))
}
