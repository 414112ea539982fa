# Values crossing the boundary. See bridge/r/rhost.py for the wire format; the tags are the
# bridge's one table (bridge/descriptors.py WIRE_TAGS), shared with the JS client.
#
# R -> Python: tb_wire() leaves the scalars reticulate maps faithfully as they are and turns
# everything else into a named list tagged `__tb__` (a dict in Python) that the "r" table of
# the bridge converts. Numeric, integer and logical vectors and arrays are never converted by
# reticulate: Python gets the address of R's memory (zero copy) and the R object stays in the
# keep table until Python lets go.
#
# Python -> R: results arrive as R scalars or as lists whose first element is a tag;
# tb_decode() builds the R value (arrays with one memcpy).

tag <- function(t, ...) list(`__tb__` = t, ...)

wire_array <- function(x, dtype) {
  v <- .Call(tb_c_view, x)
  d <- dim(x)
  if (is.null(d)) d <- length(x)
  tag("A", addr = v[[1L]], token = v[[2L]], nbytes = v[[3L]], dtype = dtype, dim = d)
}

wire_opaque <- function(x) {
  tag("O", token = .Call(tb_c_keep, x), class = class(x)[[1L]])
}

wire_list <- function(x) {
  items <- lapply(unclass(x), tb_wire)
  nms <- names(x)
  if (is.null(nms)) {
    tag("L", items = unname(items))
  } else {
    nms[is.na(nms)] <- ""
    tag("D", names = as.list(nms), items = unname(items))
  }
}

wire_character <- function(x) {
  if (length(x) == 1L && is.null(attributes(x))) {
    if (is.na(x)) return(tag("N", dtype = "str"))
    return(x)
  }
  if (!is.null(dim(x))) return(wire_opaque(x))
  x <- as.character(x) # drops names
  tag("S", x = as.list(x), na = as.list(which(is.na(x))))
}

# The wire form of one R value.
tb_wire <- function(x) {
  if (is.null(x)) return(NULL)
  if (is.object(x)) return(wire_object(x))
  switch(typeof(x),
    double = if (length(x) == 1L && is.null(attributes(x))) x else wire_array(x, "float64"),
    integer = if (length(x) == 1L && is.null(attributes(x))) {
      if (is.na(x)) tag("N", dtype = "int32") else x
    } else {
      wire_array(x, "int32")
    },
    logical = if (length(x) == 1L && is.null(attributes(x))) {
      if (is.na(x)) tag("N", dtype = "logical") else x
    } else {
      wire_array(x, "logical")
    },
    character = wire_character(x),
    list = wire_list(x),
    closure = ,
    builtin = ,
    special = tag("CB", token = .Call(tb_c_keep, x), name = ""),
    raw = if (is.null(attributes(x))) x else wire_opaque(x),
    wire_opaque(x)
  )
}

wire_object <- function(x) {
  conv <- .tb$r_converters
  if (length(conv)) {
    for (cls in class(x)) {
      fn <- conv[[cls]]
      if (!is.null(fn)) return(tb_wire(fn(x)))
    }
  }
  if (inherits(x, "tb_object")) {
    check_live(x)
    return(tag("H", id = .subset2(x, "id")))
  }
  if (inherits(x, "tb_function")) {
    h <- attr(x, "tb_handle", exact = TRUE)
    check_live(h)
    return(tag("H", id = .subset2(h, "id")))
  }
  if (is.factor(x)) {
    return(tag("FA",
      codes = wire_array(x, "int32"), levels = as.list(levels(x)),
      ordered = is.ordered(x)
    ))
  }
  if (is.data.frame(x)) {
    automatic <- .row_names_info(x) <= 0L
    return(tag("DF",
      names = as.list(names(x)),
      columns = unname(lapply(unclass(x), tb_wire)),
      row_names = if (automatic) NULL else as.list(as.character(attr(x, "row.names")))
    ))
  }
  if (is.function(x)) return(tag("CB", token = .Call(tb_c_keep, x), name = ""))
  if (inherits(x, "python.builtin.object")) return(x) # a reticulate object: as it is
  wire_opaque(x)
}

tb_decode_any <- function(x) if (is.list(x)) tb_decode(x) else x

# Decode a result and then tell Python which arrays (and objects going home) R has taken, so
# that it can let go of them. Tokens are recorded as each one is decoded, so releasing them
# even from a nested call (a converter calling Python) never frees something not yet copied.
tb_decode_result <- function(w) {
  v <- tb_decode(w)
  if (length(.tb$taken)) release_taken()
  v
}

release_taken <- function() {
  tokens <- .tb$taken
  .tb$taken <- NULL
  .tb$pci(.tb$m_release_outbox, list(tokens), NULL)
  invisible(NULL)
}

taken <- function(token) {
  if (token > 0) .tb$taken <- c(.tb$taken, token)
}

na_of <- function(dtype) {
  switch(dtype,
    logical = NA,
    int32 = NA_integer_,
    str = NA_character_,
    float64 = NA_real_,
    NA
  )
}

# Build the R value of a tagged wire list from Python.
tb_decode <- function(w) {
  switch(w[[1L]],
    A = {
      v <- .Call(tb_c_from_addr, w[[2L]], w[[3L]], unlist(w[[4L]]), w[[5L]])
      taken(w[[6L]])
      v
    },
    L = lapply(w[[2L]], tb_decode_any),
    D = {
      v <- lapply(w[[3L]], tb_decode_any)
      names(v) <- as.character(unlist(w[[2L]]))
      v
    },
    S = {
      x <- as.character(unlist(w[[2L]]))
      na <- unlist(w[[3L]])
      if (length(na)) x[na] <- NA_character_
      x
    },
    N = na_of(w[[2L]]),
    R = new_ref(w[[2L]], w[[3L]]),
    F = new_py_function(w[[2L]], w[[3L]], w[[4L]]),
    T = new_tensor(w[[2L]], unlist(w[[3L]]), w[[4L]]),
    H = {
      v <- .Call(tb_c_get, w[[2L]])
      taken(w[[3L]])
      v
    },
    FA = {
      codes <- tb_decode(w[[2L]])
      levels(codes) <- as.character(unlist(w[[3L]]))
      class(codes) <- if (isTRUE(w[[4L]])) c("ordered", "factor") else "factor"
      codes
    },
    DF = {
      cols <- lapply(w[[3L]], tb_decode_any)
      names(cols) <- as.character(unlist(w[[2L]]))
      n <- if (length(cols)) NROW(cols[[1L]]) else length(unlist(w[[4L]]))
      rn <- if (is.null(w[[4L]]) || n == 0L) .set_row_names(n) else as.character(unlist(w[[4L]]))
      structure(cols, row.names = rn, class = "data.frame")
    },
    CV = {
      obj <- tb_decode_any(w[[3L]])
      .tb$py_converters[[w[[2L]]]](obj)
    },
    B = as.raw(w[[2L]]),
    E = error_condition(w),
    X = {
      cond <- error_condition(w)
      .tb$last_error <- cond
      stop(cond)
    },
    W = {
      python_warnings(unlist(w[[2L]]), unlist(w[[3L]]))
      tb_decode_any(w[[4L]])
    },
    I = signal_interrupt(),
    C = tb_decode_any(w[[2L]]),
    stop(sprintf("tensorbridge: unknown value tag '%s' from Python", w[[1L]]), call. = FALSE)
  )
}
