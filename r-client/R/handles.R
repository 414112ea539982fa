# Python objects held by R: every one holds a bridge handle, released by an R finalizer.

new_handle_env <- function(id, type_name, session = .tb$session) {
  h <- new.env(parent = emptyenv())
  h$id <- as.integer(id)
  h$type <- type_name
  h$session <- session
  reg.finalizer(h, finalize_handle, onexit = TRUE)
  h
}

finalize_handle <- function(h, now = FALSE) {
  if (!identical(.subset2(h, "session"), .tb$session) || !isTRUE(.tb$initialized) ||
      isTRUE(.tb$closing)) {
    return(invisible(NULL))
  }
  id <- .subset2(h, "id")
  if (is.null(id)) return(invisible(NULL))
  assign("id", NULL, envir = h)
  method <- if (now) .tb$m_release_now else .tb$m_release
  tryCatch(.tb$pci(method, list(id), NULL), error = function(e) NULL)
  invisible(NULL)
}

# A Python object without a converter: an environment with an S3 class.
new_ref <- function(id, type_name) {
  h <- new_handle_env(id, type_name)
  class(h) <- c(paste0("tb.", type_name), "tb_object")
  h
}

stale_error <- function() {
  stop(structure(
    class = c("tensorbridge_stale_error", "tensorbridge_error", "error", "condition"),
    list(message = paste0(
      "tensorbridge: this object refers to a Python object of a previous R session ",
      "(it was saved and loaded again); Python objects do not outlive their session. ",
      "Create it again in this session."
    ), call = NULL)
  ))
}

released_error <- function() {
  stop(structure(
    class = c("tensorbridge_released_error", "tensorbridge_error", "error", "condition"),
    list(message = "tensorbridge: this Python object was released (tb_release()).", call = NULL)
  ))
}

check_live <- function(h) {
  if (!identical(.subset2(h, "session"), .tb$session)) stale_error()
  if (!isTRUE(.tb$initialized)) tb_init()
  if (is.null(.subset2(h, "id"))) released_error()
  invisible(TRUE)
}

#' Release a Python object now
#'
#' Python objects held by R are released by R's garbage collector; `tb_release()`
#' releases one at once (using it afterwards is an error).
#'
#' @param x A tensorbridge object (`tb_object`, `tb_tensor` or Python function).
#' @return `NULL`, invisibly.
#' @export
tb_release <- function(x) {
  h <- if (inherits(x, "tb_function")) attr(x, "tb_handle", exact = TRUE) else x
  if (!is.environment(h)) stop("tb_release(): not a tensorbridge object", call. = FALSE)
  finalize_handle(h, now = TRUE)
  invisible(NULL)
}

#' Live handles: Python objects held by R, R objects held by Python
#'
#' Reports the bridge's handle table (`live` Python objects held by R, by type, and
#' how many were `issued` and `released`) and the number of R objects Python holds
#' (`r_objects`: R memory viewed by NumPy, R functions used as callbacks, other R objects).
#' Run [gc()] first to release what R no longer uses.
#'
#' @return A list of class `tb_handles`.
#' @examples
#' \dontrun{
#' before <- tb_handles()$live
#' x <- as_tensor(1:3); rm(x); invisible(gc())
#' tb_handles()$live == before
#' }
#' @export
tb_handles <- function() {
  tb_init()
  s <- tb_decode_any(.tb$pci(.tb$m_stats, list(), NULL))
  s$r_objects <- .Call(tb_c_kept)
  structure(s, class = "tb_handles")
}

#' @export
print.tb_handles <- function(x, ...) {
  cat(sprintf(
    "tensorbridge handles: %d live Python objects held by R (%d issued, %d released); %d R objects held by Python\n",
    x$live, x$issued, x$released, x$r_objects
  ))
  if (length(x$by_type)) {
    bt <- unlist(x$by_type)
    cat(sprintf("  %-30s %d\n", names(bt), bt), sep = "")
  }
  invisible(x)
}
