# The training history returned by fit().

new_history <- function(h) {
  metrics <- h$history
  if (is.null(metrics)) metrics <- list()
  metrics <- lapply(metrics, function(v) as.numeric(unlist(v)))
  params <- h$params
  structure(
    list(
      epoch = as.integer(unlist(h$epoch)) + 1L,
      metrics = metrics,
      params = list(
        epochs = params$epochs, batch_size = params$batch_size, samples = params$samples,
        steps = params$steps
      )
    ),
    class = "tb_history"
  )
}

#' Training history
#'
#' [fit()] returns a `tb_history`: `$metrics` (a named list: one numeric vector per log
#' entry — `loss`, the metrics, and `val_*` with validation data — with one value per epoch),
#' `$epoch` (the epochs run, from 1; fewer than asked when training stopped early) and
#' `$params` (`epochs`, `batch_size`, `samples`, `steps` per epoch).
#'
#' `as.data.frame()` gives one row per epoch: `epoch` and one column per log entry.
#' `plot()` draws each metric against the epoch (base graphics), training and validation
#' together, one panel per metric.
#'
#' @param x A `tb_history`.
#' @param row.names,optional Unused (for the generic).
#' @param metrics `NULL` (all) or the names of the metrics to plot (without `val_`).
#' @param ... Unused, or (for `plot()`) further graphical parameters for `plot.default()`.
#' @return `as.data.frame()`: a data frame. `plot()`: `x`, invisibly. `print()`: `x`,
#'   invisibly.
#' @examples
#' \dontrun{
#' history <- model |> fit(x, y, epochs = 20, validation_split = 0.2)
#' as.data.frame(history)
#' plot(history)
#' }
#' @name tb_history
NULL

#' @rdname tb_history
#' @export
as.data.frame.tb_history <- function(x, row.names = NULL, optional = FALSE, ...) {
  cols <- c(list(epoch = x$epoch), x$metrics)
  n <- length(x$epoch)
  cols <- lapply(cols, function(v) if (length(v) == n) v else rep_len(NA_real_, n))
  as.data.frame(cols, stringsAsFactors = FALSE, optional = TRUE)
}

#' @rdname tb_history
#' @export
print.tb_history <- function(x, ...) {
  p <- x$params
  n <- length(x$epoch)
  cat(sprintf("Trained on %s samples for %d epoch%s (batch size %s)%s\n",
              format(p$samples %||% NA), n, if (n == 1L) "" else "s", format(p$batch_size %||% NA),
              if (!is.null(p$epochs) && n < p$epochs) sprintf(", stopped early (of %d)", p$epochs) else ""))
  if (n && length(x$metrics)) {
    last <- vapply(x$metrics, function(v) v[[length(v)]], numeric(1))
    cat("Final epoch: ", paste(sprintf("%s: %.4g", names(last), last), collapse = ", "), "\n",
        sep = "")
  }
  invisible(x)
}

#' @rdname tb_history
#' @importFrom graphics legend lines par plot.default
#' @export
plot.tb_history <- function(x, metrics = NULL, ...) {
  all <- names(x$metrics)
  base <- unique(sub("^val_", "", all))
  if (!is.null(metrics)) {
    unknown <- setdiff(metrics, base)
    if (length(unknown)) {
      nn_fail(sprintf("plot(): no metric %s in the history; it has %s",
                      paste0("\"", unknown, "\"", collapse = ", "), paste(base, collapse = ", ")))
    }
    base <- metrics
  }
  if (!length(base) || !length(x$epoch)) nn_fail("plot(): the history is empty")
  old <- par(mfrow = c(length(base), 1L), mar = c(4, 4, 1, 1))
  on.exit(par(old))
  for (m in base) {
    train <- x$metrics[[m]]
    val <- x$metrics[[paste0("val_", m)]]
    ylim <- range(c(train, val), finite = TRUE)
    plot.default(x$epoch, train, type = "b", pch = 16, col = "#1f77b4", ylim = ylim,
                 xlab = "epoch", ylab = m, ...)
    if (!is.null(val)) {
      lines(x$epoch, val, type = "b", pch = 17, col = "#ff7f0e")
      legend("topright", legend = c("training", "validation"), col = c("#1f77b4", "#ff7f0e"),
             pch = c(16, 17), lty = 1, bty = "n")
    }
  }
  invisible(x)
}
