# Saving and loading models in the runtime's portable format (model.json + weights.bin).

#' Save and load models
#'
#' `save_model_tb()` writes a model in the portable format of the runtime (the Python
#' module `tensorbridge.runtime.layers.serialization`): a directory holding `model.json`
#' (architecture, training configuration, weights manifest; TensorFlow.js "layers-model"
#' style) and `weights.bin` (the values, little-endian, row-major), or one zip file when
#' `path` ends in `.zip`. Python, R and the JavaScript client (also in the browser) load
#' the same files and predict the same numbers. `load_model_tb()` reads a model saved by
#' any of them (a directory, a `.zip` or a `model.json` path).
#'
#' `save_weights_tb()` / `load_weights_tb()` write and read only the weights (into a model
#' of the same architecture: in order, or by layer and weight name with `by_name = TRUE`).
#'
#' @param model A model.
#' @param path A directory (created if needed), a `.zip` file, or for loading a
#'   `model.json` file.
#' @param include_optimizer Also save the optimizer state, so that training continues where
#'   it stopped after loading.
#' @param overwrite Replace existing files.
#' @param compile Compile the loaded model with the saved training configuration (if any).
#' @param by_name Match weights by name instead of by order.
#' @return `save_*()`: `path`, invisibly. `load_model_tb()`: the model. `load_weights_tb()`:
#'   `model`, invisibly.
#' @examples
#' \dontrun{
#' save_model_tb(model, "my_model")
#' model2 <- load_model_tb("my_model")
#' }
#' @export
save_model_tb <- function(model, path, include_optimizer = TRUE, overwrite = TRUE) {
  check_model(model, "save_model_tb")
  path <- check_path(path)
  if (!check_flag(overwrite, "overwrite") && file.exists(path)) {
    nn_fail(sprintf("save_model_tb(): %s exists (overwrite = FALSE)", path))
  }
  nn()$save_model(model, path, include_optimizer = check_flag(include_optimizer, "include_optimizer"),
                  overwrite = overwrite)
  invisible(path)
}

#' @rdname save_model_tb
#' @export
load_model_tb <- function(path, compile = TRUE) {
  path <- check_path(path)
  if (!file.exists(path)) nn_fail(sprintf("load_model_tb(): %s does not exist", path))
  as_nn_model(nn()$load_model(path, compile = check_flag(compile, "compile")))
}

#' @rdname save_model_tb
#' @export
save_weights_tb <- function(model, path, overwrite = TRUE) {
  check_model(model, "save_weights_tb")
  path <- check_path(path)
  if (!check_flag(overwrite, "overwrite") && file.exists(path)) {
    nn_fail(sprintf("save_weights_tb(): %s exists (overwrite = FALSE)", path))
  }
  nn()$save_weights(model, path, overwrite = overwrite)
  invisible(path)
}

#' @rdname save_model_tb
#' @export
load_weights_tb <- function(model, path, by_name = FALSE) {
  check_model(model, "load_weights_tb")
  path <- check_path(path)
  if (!file.exists(path)) nn_fail(sprintf("load_weights_tb(): %s does not exist", path))
  nn()$load_weights(model, path, by_name = check_flag(by_name, "by_name"))
  invisible(model)
}

check_path <- function(path) {
  path.expand(check_string(path, "path"))
}
