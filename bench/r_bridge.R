# R bridge benchmarks (make bench): tensorbridge vs raw reticulate, side by side in one run.
#   1. call latency of a Python no-op: tensorbridge function vs reticulate::py_call  (target <= 1.3x)
#   2. R -> Python, 1e7 doubles: time to hand a vector to Python                 (target: O(1), zero-copy)
#   3. Python -> R, 1e7 doubles: tensorbridge vs R's own copy vs reticulate::py_to_r (target: >= R copy speed)
#   5. per-op cost: x + x, x %*% x and as_tensor() on a 2x2 matrix vs the same NumPy function
#      called through raw reticulate on NumPy arrays held as Python objects       (target <= 1.2x)
# Timings: median of repeated blocks, interleaved so that machine noise hits both sides alike
# (each row's `timing` says so, or that it was not). BENCH_JSON=path writes the rows as JSON for
# bench/run.py (bench/r_bridge.py runs this script).
suppressPackageStartupMessages(library(tensorbridge))
tb_config()

json_rows <- list()
add_row <- function(name, value_us, timing, peer = NULL, peer_us = NULL, target = NULL,
                    passed = NULL, value_range = NULL, peer_range = NULL, notes = NULL) {
  r <- list(name = name, value_us = value_us, peer = peer, peer_us = peer_us,
            ratio = if (is.null(peer_us)) NULL else value_us / peer_us, timing = timing,
            target = target, passed = passed, value_range = value_range,
            peer_range = peer_range, notes = notes)
  json_rows[[length(json_rows) + 1L]] <<- r[!vapply(r, is.null, logical(1))]
}

side_by_side <- function(fns, n, reps = 15L, collect = FALSE) {
  # interleave: rep r of every fn, then rep r+1 ..., each round starting one fn later (so no fn
  # always follows the same one); `collect`: run gc() before each timed block so that the cost
  # of collecting earlier results is not charged to whoever comes next
  res <- matrix(NA_real_, reps, length(fns), dimnames = list(NULL, names(fns)))
  for (f in fns) for (i in seq_len(min(n, 1000L))) f()
  for (r in seq_len(reps)) {
    for (k in (seq_along(fns) + r - 2L) %% length(fns) + 1L) {
      f <- fns[[k]]
      if (collect) invisible(gc())
      t0 <- proc.time()[[3L]]
      for (i in seq_len(n)) f()
      res[r, k] <- (proc.time()[[3L]] - t0) / n * 1e6
    }
  }
  out <- apply(res, 2L, stats::median)
  attr(out, "range") <- apply(res, 2L, range) # 2 x length(fns): min, max per fn
  attr(out, "timing") <- sprintf("interleaved rounds, median of %d", reps)
  out
}
rng <- function(x, k) unname(attr(x, "range")[, k])

row <- function(label, value, unit, note = "") {
  cat(sprintf("  %-52s %12.2f %-3s %s\n", label, value, unit, note))
}

cat("\n== 1. call latency: Python no-op ==\n")
testing <- tb_import("tensorbridge.bridge.r.testing")
noop <- testing$noop # a tensorbridge function (cached module attribute)
py_noop <- reticulate::import("tensorbridge.bridge.r.testing", convert = FALSE)$noop
lat <- side_by_side(list(
  tensorbridge = function() noop(),
  reticulate = function() reticulate::py_call(py_noop),
  tensorbridge_2args = function() noop(1, "a"),
  reticulate_2args = function() reticulate::py_call(py_noop, 1, "a"),
  tensorbridge_lookup = function() testing$noop()
), n = 5000L)
row("tensorbridge  noop()", lat[["tensorbridge"]], "us")
row("reticulate    py_call(noop)", lat[["reticulate"]], "us")
row("ratio tensorbridge / reticulate", lat[["tensorbridge"]] / lat[["reticulate"]], "x", "(target <= 1.3)")
row("tensorbridge  noop(1, \"a\")", lat[["tensorbridge_2args"]], "us")
row("reticulate    py_call(noop, 1, \"a\")", lat[["reticulate_2args"]], "us")
row("ratio (2 args)", lat[["tensorbridge_2args"]] / lat[["reticulate_2args"]], "x")
row("tensorbridge  mod$noop() (cached $ lookup)", lat[["tensorbridge_lookup"]], "us")
add_row("R: call latency of a Python no-op", lat[["tensorbridge"]], attr(lat, "timing"),
        "reticulate::py_call", lat[["reticulate"]], "ratio <= 1.3",
        lat[["tensorbridge"]] / lat[["reticulate"]] <= 1.3, rng(lat, "tensorbridge"),
        rng(lat, "reticulate"))
add_row("R: call latency, noop(1, \"a\")", lat[["tensorbridge_2args"]], attr(lat, "timing"),
        "reticulate::py_call", lat[["reticulate_2args"]],
        value_range = rng(lat, "tensorbridge_2args"), peer_range = rng(lat, "reticulate_2args"))
add_row("R: mod$noop() (cached $ lookup)", lat[["tensorbridge_lookup"]], attr(lat, "timing"),
        value_range = rng(lat, "tensorbridge_lookup"))

cat("\n== 2. R -> Python, 1e7 doubles ==\n")
big <- stats::runif(1e7)
nbytes <- tb_import("builtins")$len # len() of the NumPy view: touches no data
to_py <- side_by_side(list(
  tb_1e7 = function() nbytes(big),
  tb_1e1 = function() nbytes(big[1:10])
), n = 200L, reps = 9L)
row("tensorbridge: pass 1e7 doubles to Python (len)", to_py[["tb_1e7"]], "us")
row("tensorbridge: pass 10 doubles to Python (len)", to_py[["tb_1e1"]], "us")
row("ratio 1e7 / 10 elements", to_py[["tb_1e7"]] / to_py[["tb_1e1"]], "x", "(O(1): ~1 expected)")
zero_copy <- tb_eval("__import__('tensorbridge.bridge.r.testing', fromlist=['x']).shares_r_memory")
row("NumPy view shares R's memory (1 = yes)", as.numeric(zero_copy(big)), "")
t_ret <- system.time(for (i in 1:5) reticulate::r_to_py(big))[["elapsed"]] / 5 * 1e6
row("reticulate r_to_py(dim-less vector) for reference", t_ret, "us", "(a Python list)")
add_row("R: pass 1e7 doubles to Python (len of the view)", to_py[["tb_1e7"]],
        attr(to_py, "timing"), "the same with 10 doubles", to_py[["tb_1e1"]],
        "ratio ~1 (O(1))", value_range = rng(to_py, "tb_1e7"), peer_range = rng(to_py, "tb_1e1"),
        notes = sprintf("NumPy view shares R's memory: %s", as.character(zero_copy(big))))
add_row("R: reticulate r_to_py(1e7 doubles) (reference)", t_ret,
        "not interleaved: mean of 5 runs", notes = "a Python list")

cat("\n== 3. Python -> R, 1e7 doubles ==\n")
np <- reticulate::import("numpy", convert = FALSE)
arr <- np$random$rand(10000000L)
give <- tb_eval("__import__('tensorbridge.bridge.r.testing', fromlist=['x']).fixed_array")
invisible(give(1e7)) # builds the array once; later calls return the same array
out <- side_by_side(list(
  tensorbridge = function() give(1e7),
  r_copy = function() {
    y <- big
    y[1L] <- 0 # forces R's own duplicate of 1e7 doubles
    y
  },
  reticulate = function() reticulate::py_to_r(arr)
), n = 1L, reps = 15L, collect = TRUE)
row("tensorbridge: NumPy 1e7 doubles -> R vector", out[["tensorbridge"]] / 1e3, "ms")
row("R's own copy of 1e7 doubles (duplicate)", out[["r_copy"]] / 1e3, "ms")
row("reticulate::py_to_r of the same array", out[["reticulate"]] / 1e3, "ms")
row("ratio R copy / tensorbridge", out[["r_copy"]] / out[["tensorbridge"]], "x", "(target >= 1)")
row("ratio reticulate / tensorbridge", out[["reticulate"]] / out[["tensorbridge"]], "x")
cat("\n")
add_row("R: NumPy 1e7 doubles -> R vector", out[["tensorbridge"]], attr(out, "timing"),
        "R's own copy (duplicate)", out[["r_copy"]], "ratio <= 1",
        out[["tensorbridge"]] <= out[["r_copy"]], rng(out, "tensorbridge"), rng(out, "r_copy"))
add_row("R: NumPy 1e7 doubles -> R vector", out[["tensorbridge"]], attr(out, "timing"),
        "reticulate::py_to_r", out[["reticulate"]], value_range = rng(out, "tensorbridge"),
        peer_range = rng(out, "reticulate"))

cat("== 4. callbacks into R (for orientation) ==\n")
cb <- function(t, i) t * 100000 + i
t_direct <- system.time(r1 <- testing$call_from_threads(cb, 8L, 1000L))[["elapsed"]]
t_bg <- system.time(r2 <- tb_call(testing$call_from_threads, cb, 8L, 1000L, .background = TRUE))[["elapsed"]]
row("8 threads x 1000 R callbacks, Python blocked in join()", t_direct * 1e3, "ms",
    sprintf("(%d ok, %.0f us per call)", r1$ok, t_direct / 8000 * 1e6))
row("8 threads x 1000 R callbacks, tb_call(.background=TRUE)", t_bg * 1e3, "ms",
    sprintf("(%d ok, %.0f us per call)", r2$ok, t_bg / 8000 * 1e6))
cat("\n")
add_row("R: 8 threads x 1000 R callbacks, Python blocked in join()", t_direct * 1e6,
        "one run", notes = sprintf("%d ok", r1$ok))
add_row("R: 8 threads x 1000 R callbacks, tb_call(.background=TRUE)", t_bg * 1e6, "one run",
        notes = sprintf("%d ok", r2$ok))

cat("== 5. per-op cost: tensor ops and as_tensor() vs raw reticulate on NumPy ==\n")
m <- matrix(stats::runif(4), 2)
x <- as_tensor(m)
a <- reticulate::r_to_py(m) # a NumPy array held as a Python object
np_add <- np$add # NumPy's functions fetched once, as the tensor ops' Python side is
np_matmul <- np$matmul
np_asarray <- np$asarray
ops <- side_by_side(list(
  add = function() x + x,
  np_add = function() np_add(a, a),
  matmul = function() x %*% x,
  np_matmul = function() np_matmul(a, a),
  as_tensor = function() as_tensor(m),
  np_asarray = function() np_asarray(m),
  r_to_py = function() reticulate::r_to_py(m),
  np_add_lookup = function() np$add(a, a)
), n = 1000L, reps = 25L, collect = TRUE)
op_rows <- list(
  c("R: tensor op x + x (2x2)", "add", "np_add", "reticulate: np.add(a, a), NumPy arrays"),
  c("R: tensor op x %*% x (2x2)", "matmul", "np_matmul", "reticulate: np.matmul(a, a)"),
  c("R: as_tensor() of a 2x2 matrix", "as_tensor", "np_asarray", "reticulate: np.asarray(m)")
)
for (o in op_rows) {
  ratio <- ops[[o[[2L]]]] / ops[[o[[3L]]]]
  row(o[[1L]], ops[[o[[2L]]]], "us")
  row(paste("  ", o[[4L]]), ops[[o[[3L]]]], "us")
  row("  ratio", ratio, "x", "(target <= 1.2)")
  add_row(o[[1L]], ops[[o[[2L]]]], attr(ops, "timing"), o[[4L]], ops[[o[[3L]]]],
          "ratio <= 1.2", ratio <= 1.2, rng(ops, o[[2L]]), rng(ops, o[[3L]]))
}
row("reticulate::r_to_py(m) (conversion alone)", ops[["r_to_py"]], "us")
row("reticulate: np$add(a, a) ($ lookup each call)", ops[["np_add_lookup"]], "us")
cat("\n")
add_row("R: as_tensor() of a 2x2 matrix", ops[["as_tensor"]], attr(ops, "timing"),
        "reticulate::r_to_py(m)", ops[["r_to_py"]], value_range = rng(ops, "as_tensor"),
        peer_range = rng(ops, "r_to_py"))
add_row("R: tensor op x + x (2x2)", ops[["add"]], attr(ops, "timing"),
        "reticulate: np$add(a, a), $ lookup each call", ops[["np_add_lookup"]],
        value_range = rng(ops, "add"), peer_range = rng(ops, "np_add_lookup"))
if (nzchar(Sys.getenv("BENCH_JSON"))) {
  jsonlite::write_json(json_rows, Sys.getenv("BENCH_JSON"), auto_unbox = TRUE, digits = NA)
}
