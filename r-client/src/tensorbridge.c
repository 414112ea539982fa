/* tensorbridge: the small C layer of the R client.
 *
 * 1. A keep table: R objects that Python holds (memory of R vectors viewed by NumPy, opaque R
 *    objects, R functions used as callbacks) are kept alive in one preserved list. Each entry is
 *    named by a token (slot index + generation * 2^24, as a double) so a stale token never frees
 *    a reused slot. tb_release_async() is the only function Python calls (through ctypes): it is
 *    safe from any thread. On R's main thread it frees at once; from another thread it queues the
 *    token and the main thread applies it at the next entry into this library.
 * 2. Zero-copy views: tb_view() keeps an R vector and returns the address of its data.
 * 3. Copies into R: tb_from_addr() allocates an R vector and copies raw memory into it (memcpy,
 *    i.e. R's own duplicate speed).
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/eventloop.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/select.h>
#ifdef __linux__
#include <sys/timerfd.h>
#endif
#include <signal.h>

#define GEN_UNIT 16777216.0 /* 2^24 */
#define MAX_SLOTS 16777216

static SEXP keep_tab = NULL;   /* VECSXP of kept objects (R_NilValue = free) */
static int *generation = NULL; /* per slot */
static int *free_list = NULL;  /* stack of free slots */
static int n_free = 0;
static int capacity = 0;
static int n_live = 0;
static pthread_t main_thread;
static int main_known = 0;

static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static double *pending = NULL;
static int n_pending = 0, pending_cap = 0;

static void grow(void) {
  int new_cap = capacity ? capacity * 2 : 1024;
  if (new_cap > MAX_SLOTS) Rf_error("tensorbridge: too many R objects held by Python");
  SEXP tab = PROTECT(Rf_allocVector(VECSXP, new_cap));
  for (int i = 0; i < capacity; i++) SET_VECTOR_ELT(tab, i, VECTOR_ELT(keep_tab, i));
  R_PreserveObject(tab);
  if (keep_tab != NULL) R_ReleaseObject(keep_tab);
  keep_tab = tab;
  UNPROTECT(1);
  int *gen = (int *) realloc(generation, sizeof(int) * new_cap);
  int *fl = (int *) realloc(free_list, sizeof(int) * new_cap);
  if (gen == NULL || fl == NULL) Rf_error("tensorbridge: out of memory");
  generation = gen;
  free_list = fl;
  for (int i = new_cap - 1; i >= capacity; i--) {
    generation[i] = 0;
    free_list[n_free++] = i;
  }
  capacity = new_cap;
}

/* Free one token on the main thread; stale or unknown tokens are ignored. */
static int release_now(double token) {
  if (!(token >= 0) || keep_tab == NULL) return 0;
  double g = (double) (int64_t) (token / GEN_UNIT);
  int slot = (int) (token - g * GEN_UNIT);
  if (slot < 0 || slot >= capacity || generation[slot] != (int) g) return 0;
  if (VECTOR_ELT(keep_tab, slot) == R_NilValue) return 0;
  SET_VECTOR_ELT(keep_tab, slot, R_NilValue);
  generation[slot]++;
  free_list[n_free++] = slot;
  n_live--;
  return 1;
}

static int drain(void) {
  if (n_pending == 0) return 0; /* racy read is fine: a miss is drained next time */
  double local[256];
  int total = 0;
  for (;;) {
    int n = 0;
    pthread_mutex_lock(&pending_lock);
    while (n_pending > 0 && n < 256) local[n++] = pending[--n_pending];
    pthread_mutex_unlock(&pending_lock);
    if (n == 0) break;
    for (int i = 0; i < n; i++) total += release_now(local[i]);
  }
  return total;
}

static int on_main_thread(void) {
  return main_known && pthread_equal(pthread_self(), main_thread);
}

static double keep(SEXP x) {
  drain();
  if (n_free == 0) grow();
  int slot = free_list[--n_free];
  SET_VECTOR_ELT(keep_tab, slot, x);
  n_live++;
  return slot + generation[slot] * GEN_UNIT;
}

/* ---- called from Python (ctypes), any thread ------------------------------------------------ */
void tb_release_async(double token) {
  if (on_main_thread()) {
    release_now(token);
    drain();
    return;
  }
  pthread_mutex_lock(&pending_lock);
  if (n_pending == pending_cap) {
    int cap = pending_cap ? pending_cap * 2 : 256;
    double *p = (double *) realloc(pending, sizeof(double) * cap);
    if (p == NULL) { /* leak the object rather than crash */
      pthread_mutex_unlock(&pending_lock);
      return;
    }
    pending = p;
    pending_cap = cap;
  }
  pending[n_pending++] = token;
  pthread_mutex_unlock(&pending_lock);
}

int tb_is_main_thread(void) { return on_main_thread(); }

/* ---- .Call entry points ---------------------------------------------------------------------- */
SEXP tb_c_init(void) {
  main_thread = pthread_self();
  main_known = 1;
  if (keep_tab == NULL) grow();
  return R_NilValue;
}

SEXP tb_c_keep(SEXP x) { return Rf_ScalarReal(keep(x)); }

SEXP tb_c_get(SEXP token) {
  double t = Rf_asReal(token);
  double g = (double) (int64_t) (t / GEN_UNIT);
  int slot = (int) (t - g * GEN_UNIT);
  if (!(t >= 0) || slot < 0 || slot >= capacity || generation[slot] != (int) g ||
      VECTOR_ELT(keep_tab, slot) == R_NilValue)
    Rf_error("tensorbridge: the R object %.0f held by Python was already released", t);
  return VECTOR_ELT(keep_tab, slot);
}

SEXP tb_c_release(SEXP token) {
  drain();
  return Rf_ScalarLogical(release_now(Rf_asReal(token)));
}

SEXP tb_c_drain(void) { return Rf_ScalarInteger(drain()); }

SEXP tb_c_kept(void) {
  drain();
  return Rf_ScalarInteger(n_live);
}

static size_t elt_size(SEXP x) {
  switch (TYPEOF(x)) {
  case REALSXP: return sizeof(double);
  case INTSXP: return sizeof(int);
  case LGLSXP: return sizeof(int);
  case RAWSXP: return 1;
  case CPLXSXP: return sizeof(Rcomplex);
  default: Rf_error("tensorbridge: cannot view an R %s vector", Rf_type2char(TYPEOF(x)));
  }
  return 0;
}

/* c(address, token, nbytes): keeps x alive until Python releases the token. */
SEXP tb_c_view(SEXP x) {
  R_xlen_t n = XLENGTH(x);
  size_t size = elt_size(x);
  const void *p = n > 0 ? DATAPTR_RO(x) : NULL;
  SEXP out = PROTECT(Rf_allocVector(REALSXP, 3));
  REAL(out)[0] = (double) (uintptr_t) p;
  REAL(out)[1] = keep(x);
  REAL(out)[2] = (double) n * (double) size;
  UNPROTECT(1);
  return out;
}

/* as_tensor()'s view of a plain (classless) double, integer or logical vector or array of two or
 * more values, or of one with attributes, that holds no NA (nor NaN: anyNA() semantics, NaN
 * then takes the general path): the text "<typeof> <address> <token> <dims...>" that
 * as_tensor_r() in bridge/r/api.py views R's memory by (one string is what reticulate hands
 * over fastest), keeping x until Python releases the token. NULL for anything else. */
SEXP tb_c_view_text(SEXP x) {
  int type = TYPEOF(x);
  if ((type != REALSXP && type != INTSXP && type != LGLSXP) || OBJECT(x)) return R_NilValue;
  R_xlen_t n = XLENGTH(x);
  if (n < 1 || (n == 1 && ATTRIB(x) == R_NilValue)) return R_NilValue;
  if (type == REALSXP) {
    const double *v = REAL_RO(x);
    for (R_xlen_t i = 0; i < n; i++)
      if (ISNAN(v[i])) return R_NilValue;
  } else {
    const int *v = type == INTSXP ? INTEGER_RO(x) : LOGICAL_RO(x);
    for (R_xlen_t i = 0; i < n; i++)
      if (v[i] == NA_INTEGER) return R_NilValue; /* NA_LOGICAL is the same value */
  }
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  int rank = dim == R_NilValue ? 1 : LENGTH(dim);
  size_t cap = 80 + 21 * (size_t) rank;
  char *buf = R_alloc(cap, 1);
  const char *tname = type == REALSXP ? "double" : type == INTSXP ? "integer" : "logical";
  int len = snprintf(buf, cap, "%s %" PRIuPTR " %.0f", tname, (uintptr_t) DATAPTR_RO(x), keep(x));
  if (dim == R_NilValue) {
    len += snprintf(buf + len, cap - len, " %.0f", (double) n);
  } else {
    for (int k = 0; k < rank; k++)
      len += snprintf(buf + len, cap - len, " %d", INTEGER(dim)[k]);
  }
  return Rf_mkString(buf);
}

/* Big copies ask for transparent huge pages on the (fresh) destination first: for a new 80 MB
 * vector most of the time of a plain memcpy goes to 4 KB page faults (R's own duplicate pays
 * them all); with 2 MB pages the copy runs several times faster. */
#define BIG_COPY (4u << 20)
#define HUGE_PAGE (2u << 20)

static void fast_copy(void *dst, const void *src, size_t n) {
#ifdef MADV_HUGEPAGE
  if (n >= BIG_COPY) {
    uintptr_t start = ((uintptr_t) dst + HUGE_PAGE - 1) & ~(uintptr_t) (HUGE_PAGE - 1);
    uintptr_t end = ((uintptr_t) dst + n) & ~(uintptr_t) (HUGE_PAGE - 1);
    if (end > start) madvise((void *) start, end - start, MADV_HUGEPAGE);
  }
#endif
  memcpy(dst, src, n);
}

/* A new R vector of `type` ("float64", "int32", "logical", "uint8") holding `nbytes` bytes
 * copied from `addr`; `dims` (integer, may be NULL) becomes its dim attribute when it has two
 * or more entries. */
SEXP tb_c_from_addr(SEXP addr, SEXP type, SEXP dims, SEXP nbytes) {
  const char *t = CHAR(STRING_ELT(type, 0));
  SEXPTYPE st;
  size_t size;
  if (strcmp(t, "float64") == 0) { st = REALSXP; size = sizeof(double); }
  else if (strcmp(t, "int32") == 0) { st = INTSXP; size = sizeof(int); }
  else if (strcmp(t, "logical") == 0) { st = LGLSXP; size = sizeof(int); }
  else if (strcmp(t, "uint8") == 0 || strcmp(t, "raw") == 0) { st = RAWSXP; size = 1; }
  else Rf_error("tensorbridge: no R vector type for array dtype '%s'", t);
  double nb = Rf_asReal(nbytes);
  R_xlen_t n = (R_xlen_t) (nb / (double) size);
  SEXP out = PROTECT(Rf_allocVector(st, n));
  if (n > 0) {
    const void *src = (const void *) (uintptr_t) Rf_asReal(addr);
    if (src == NULL) Rf_error("tensorbridge: NULL array address");
    fast_copy(DATAPTR(out), src, (size_t) n * size);
  }
  if (!Rf_isNull(dims) && XLENGTH(dims) >= 2) {
    SEXP d = PROTECT(Rf_coerceVector(dims, INTSXP));
    Rf_setAttrib(out, R_DimSymbol, d);
    UNPROTECT(1);
  }
  UNPROTECT(1);
  return out;
}

/* TRUE when every element of `args` crosses to Python as is: NULL or a plain length-one
 * double, integer, logical or character vector without attributes whose value reticulate maps
 * faithfully (integer/logical/character NA do not). */
SEXP tb_c_simple_args(SEXP args) {
  R_xlen_t n = XLENGTH(args);
  for (R_xlen_t i = 0; i < n; i++) {
    SEXP x = VECTOR_ELT(args, i);
    switch (TYPEOF(x)) {
    case NILSXP: continue;
    case REALSXP:
      if (XLENGTH(x) != 1 || ATTRIB(x) != R_NilValue) return Rf_ScalarLogical(0);
      continue;
    case INTSXP:
      if (XLENGTH(x) != 1 || ATTRIB(x) != R_NilValue || INTEGER_ELT(x, 0) == NA_INTEGER)
        return Rf_ScalarLogical(0);
      continue;
    case LGLSXP:
      if (XLENGTH(x) != 1 || ATTRIB(x) != R_NilValue || LOGICAL_ELT(x, 0) == NA_LOGICAL)
        return Rf_ScalarLogical(0);
      continue;
    case STRSXP:
      if (XLENGTH(x) != 1 || ATTRIB(x) != R_NilValue || STRING_ELT(x, 0) == NA_STRING)
        return Rf_ScalarLogical(0);
      continue;
    default:
      return Rf_ScalarLogical(0);
    }
  }
  return Rf_ScalarLogical(1);
}

/* The operands of an R operator on tensors when they can skip R's recycling rules and the
 * wire: two live tensors of this session (`session`) with equal dims, or one of them 0-d, or
 * any dims when `any_dims` (a matrix product has no recycling); or a live tensor and a plain
 * length-one double. The result is list(a, b) with a tensor as its handle id (an integer) and
 * the double as it is; NULL when the operands need the general path (which also gives the
 * errors for released or stale tensors). */
static SEXP live_tensor_shape(SEXP x, SEXP session, SEXP *id) {
  if (TYPEOF(x) != ENVSXP || !Rf_inherits(x, "tb_tensor")) return NULL;
  SEXP s = Rf_findVarInFrame(x, Rf_install("session"));
  if (TYPEOF(s) != STRSXP || XLENGTH(s) != 1 ||
      strcmp(CHAR(STRING_ELT(s, 0)), CHAR(STRING_ELT(session, 0))) != 0)
    return NULL;
  SEXP i = Rf_findVarInFrame(x, Rf_install("id"));
  SEXP shape = Rf_findVarInFrame(x, Rf_install("shape"));
  if (TYPEOF(i) != INTSXP || XLENGTH(i) != 1 || TYPEOF(shape) != INTSXP) return NULL;
  *id = i;
  return shape;
}

static int plain_double(SEXP x) {
  return TYPEOF(x) == REALSXP && XLENGTH(x) == 1 && ATTRIB(x) == R_NilValue;
}

SEXP tb_c_tensor_operands(SEXP e1, SEXP e2, SEXP session, SEXP any_dims) {
  SEXP id1 = R_NilValue, id2 = R_NilValue;
  SEXP s1 = live_tensor_shape(e1, session, &id1);
  SEXP s2 = live_tensor_shape(e2, session, &id2);
  if (s1 != NULL && s2 != NULL) {
    R_xlen_t n1 = XLENGTH(s1), n2 = XLENGTH(s2);
    int ok = Rf_asLogical(any_dims) == 1 || n1 == 0 || n2 == 0;
    if (!ok && n1 == n2) {
      ok = memcmp(INTEGER(s1), INTEGER(s2), sizeof(int) * (size_t) n1) == 0;
    }
    if (!ok) return R_NilValue;
  } else if (!((s1 != NULL && plain_double(e2)) || (s2 != NULL && plain_double(e1)))) {
    return R_NilValue;
  }
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, s1 != NULL ? id1 : e1);
  SET_VECTOR_ELT(out, 1, s2 != NULL ? id2 : e2);
  UNPROTECT(1);
  return out;
}

/* Releasing tensors. An R finalizer that called Python through reticulate cost a full round
 * trip per tensor, as much as the op that made it. The tensor finalizer (an R function, so that
 * no pointer into this library outlives it) calls tb_c_release_tensor(), which calls the Python
 * function whose address tb_c_set_release() got: a ctypes callback that queues the release as
 * the R host's `release` does (it takes the GIL itself). */
static void (*release_handle)(int) = NULL;
static SEXP release_session = NULL; /* the session's id (a string), preserved */

SEXP tb_c_set_release(SEXP addr, SEXP session) {
  if (release_session != NULL) R_ReleaseObject(release_session);
  release_session = session;
  R_PreserveObject(release_session);
  release_handle = (void (*)(int)) (uintptr_t) Rf_asReal(addr);
  return R_NilValue;
}

/* FALSE when no callback is set (the caller releases the R way); otherwise TRUE, having
 * released the tensor unless it belongs to another session or was released already. */
SEXP tb_c_release_tensor(SEXP env) {
  if (release_handle == NULL || release_session == NULL) return Rf_ScalarLogical(0);
  if (TYPEOF(env) != ENVSXP) return Rf_ScalarLogical(1);
  SEXP s = Rf_findVarInFrame(env, Rf_install("session"));
  SEXP id = Rf_findVarInFrame(env, Rf_install("id"));
  if (TYPEOF(s) != STRSXP || XLENGTH(s) != 1 || TYPEOF(id) != INTSXP || XLENGTH(id) != 1 ||
      strcmp(CHAR(STRING_ELT(s, 0)), CHAR(STRING_ELT(release_session, 0))) != 0)
    return Rf_ScalarLogical(1);
  int hid = INTEGER(id)[0];
  Rf_defineVar(Rf_install("id"), R_NilValue, env);
  release_handle(hid);
  return Rf_ScalarLogical(1);
}

/* A tb_tensor: the handle environment (id, type, session, shape, dtype; parent the empty
 * environment) with its class and its finalizer (the R function `finalizer`), built in one call
 * because every tensor op from R makes one. */
static SEXP make_tensor(SEXP id, SEXP dims, SEXP dtype, SEXP session, SEXP finalizer) {
  PROTECT(id);
  PROTECT(dims);
  PROTECT(dtype);
  SEXP env = PROTECT(R_NewEnv(R_EmptyEnv, FALSE, 0));
  Rf_defineVar(Rf_install("id"), id, env);
  Rf_defineVar(Rf_install("type"), PROTECT(Rf_mkString("Tensor")), env);
  Rf_defineVar(Rf_install("session"), session, env);
  Rf_defineVar(Rf_install("shape"), dims, env);
  Rf_defineVar(Rf_install("dtype"), dtype, env);
  SEXP cls = PROTECT(Rf_allocVector(STRSXP, 2));
  SET_STRING_ELT(cls, 0, Rf_mkChar("tb_tensor"));
  SET_STRING_ELT(cls, 1, Rf_mkChar("tb_object"));
  Rf_setAttrib(env, R_ClassSymbol, cls);
  R_RegisterFinalizerEx(env, finalizer, TRUE);
  UNPROTECT(6);
  return env;
}

SEXP tb_c_new_tensor(SEXP id, SEXP shape, SEXP dtype, SEXP session, SEXP finalizer) {
  /* a shape arrives from Python as an integer vector, a list of integers (a tuple) or NULL
   * (a 0-d tensor) */
  SEXP dims = PROTECT(Rf_isNull(shape) ? Rf_allocVector(INTSXP, 0)
                                       : Rf_coerceVector(shape, INTSXP));
  SEXP out = make_tensor(Rf_coerceVector(id, INTSXP), dims, dtype, session, finalizer);
  UNPROTECT(1);
  return out;
}

/* The same from the text "id dtype d1 d2 ..." (bridge/r/api.py's tensor results on the R door's
 * hot path: one string is the cheapest value for reticulate to convert). */
SEXP tb_c_tensor_from_text(SEXP text, SEXP session, SEXP finalizer) {
  if (TYPEOF(text) != STRSXP || XLENGTH(text) != 1) Rf_error("tensorbridge: bad tensor text");
  const char *p = CHAR(STRING_ELT(text, 0));
  char *end;
  long id = strtol(p, &end, 10);
  if (end == p || *end != ' ') Rf_error("tensorbridge: bad tensor text '%s'", p);
  const char *dt = end + 1;
  const char *dt_end = strchr(dt, ' ');
  size_t dt_len = dt_end != NULL ? (size_t) (dt_end - dt) : strlen(dt);
  int rank = 0;
  for (const char *q = dt + dt_len; *q; q++) rank += *q == ' ';
  SEXP dims = PROTECT(Rf_allocVector(INTSXP, rank));
  p = dt + dt_len;
  for (int k = 0; k < rank; k++) {
    INTEGER(dims)[k] = (int) strtol(p, &end, 10);
    if (end == p) Rf_error("tensorbridge: bad tensor text");
    p = end;
  }
  SEXP dtype = PROTECT(Rf_ScalarString(Rf_mkCharLen(dt, (int) dt_len)));
  SEXP out = make_tensor(Rf_ScalarInteger((int) id), dims, dtype, session, finalizer);
  UNPROTECT(2);
  return out;
}

/* as_tensor()'s fast path: Python's as_tensor_r() called through a C function pointer (a
 * ctypes callback that takes the GIL itself, set per session by tb_c_set_as_tensor()) instead
 * of a reticulate call. It writes the tensor's text ("id dtype dims...") into `out` and
 * returns 1, or returns 0 on any error: R then takes the general path, which reports it. */
static int (*as_tensor_fn)(const char *, void *, int) = NULL;
static SEXP as_tensor_session = NULL;

SEXP tb_c_set_as_tensor(SEXP addr, SEXP session) {
  if (as_tensor_session != NULL) R_ReleaseObject(as_tensor_session);
  as_tensor_session = session;
  R_PreserveObject(as_tensor_session);
  as_tensor_fn = (int (*)(const char *, void *, int)) (uintptr_t) Rf_asReal(addr);
  return R_NilValue;
}

/* The tb_tensor of x when tb_c_view_text() views it and Python made the tensor; NULL when it
 * does not or that failed; FALSE when no callback is set for `session`. */
SEXP tb_c_as_tensor(SEXP x, SEXP session, SEXP finalizer) {
  if (as_tensor_fn == NULL || as_tensor_session == NULL || TYPEOF(session) != STRSXP ||
      XLENGTH(session) != 1 ||
      strcmp(CHAR(STRING_ELT(session, 0)), CHAR(STRING_ELT(as_tensor_session, 0))) != 0)
    return Rf_ScalarLogical(0);
  SEXP view = PROTECT(tb_c_view_text(x));
  if (view == R_NilValue) {
    UNPROTECT(1);
    return R_NilValue;
  }
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  int cap = 64 + 12 * (dim == R_NilValue ? 1 : LENGTH(dim));
  char *out = R_alloc((size_t) cap, 1);
  if (!as_tensor_fn(CHAR(STRING_ELT(view, 0)), out, cap)) {
    UNPROTECT(1);
    return R_NilValue;
  }
  SEXP text = PROTECT(Rf_mkString(out));
  SEXP t = tb_c_tensor_from_text(text, session, finalizer);
  UNPROTECT(2);
  return t;
}

/* R's "interrupt pending" flag (declared in R_ext/GraphicsDevice.h). An R callback run from
 * Python must not act on Ctrl-C itself: unwinding R through reticulate's frames turns it into
 * an unknown Python error. The callback runs with interrupts suspended and hands a pending one
 * to Python (which cancels the work cleanly), clearing the flag. */
LibExtern int R_interrupts_pending;

SEXP tb_c_take_interrupt(void) {
  if (R_interrupts_pending) {
    R_interrupts_pending = 0;
    return Rf_ScalarLogical(1);
  }
  return Rf_ScalarLogical(0);
}

/* Ctrl-C while R embeds Python. reticulate 1.28 installs a SIGINT handler that flags R and
 * Python, and a Python-level handler that asks R (by evaluating R code) whether to raise
 * KeyboardInterrupt; evaluating R there can itself act on the interrupt and unwind through
 * Python, which surfaces as "(Unknown exception occurred)". tensorbridge keeps the C part
 * (flag R, trip Python) and gives Python a handler that reads R's flag without running R. */
static void (*py_set_interrupt)(void) = NULL;

static void tb_sigint(int sig) {
  R_interrupts_pending = 1;
  if (py_set_interrupt != NULL) py_set_interrupt();
}

SEXP tb_c_install_sigint(SEXP addr) {
  py_set_interrupt = (void (*)(void)) (uintptr_t) Rf_asReal(addr);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = tb_sigint;
  sa.sa_flags = 0;
  return Rf_ScalarLogical(sigaction(SIGINT, &sa, NULL) == 0);
}

/* R's event loop: Python threads calling R while R sits idle at the prompt (or in Sys.sleep(),
 * or any other wait that runs R's input handlers). The Python side writes a byte to a pipe when
 * it queues a call for R's main thread; R's event loop sees the pipe readable and runs
 * on_wake() on the main thread, which evaluates the package's pump function (it runs the
 * queued calls). While R runs Python code, the queue is served by Python itself (a signal). */
static int wake_fds[2] = {-1, -1};
static InputHandler *wake_handler = NULL;
static SEXP pump_call = NULL;
static int in_wake = 0;

static void on_wake(void *data) {
  char buf[256];
  while (read(wake_fds[0], buf, sizeof buf) > 0) {
  }
  if (pump_call == NULL || in_wake) return;
  in_wake = 1;
  int failed = 0;
  R_tryEvalSilent(pump_call, R_GlobalEnv, &failed);
  in_wake = 0;
}

/* Under reticulate R's main thread holds Python's GIL all the time, so while R is idle no
 * Python thread runs at all (not even to queue its call). A periodic timer (a timerfd, another
 * input handler) fires while R waits in its event loop (at the prompt, in Sys.sleep()); its
 * handler releases the GIL for one slice, waiting on the wake pipe (a queued call ends the
 * slice at once), then takes it back. Input handlers run only while R waits, never while it
 * computes, so busy R code pays nothing. The Python functions come as addresses from Python
 * (ctypes), so this library does not link to libpython. */
static void *(*py_save_thread)(void) = NULL;
static void (*py_restore_thread)(void *) = NULL;
static int (*py_gil_check)(void) = NULL;
static int timer_fd = -1;
static InputHandler *timer_handler = NULL;
#define IDLE_SLICE_USEC 20000

static void on_timer(void *data) {
  uint64_t expirations;
  while (read(timer_fd, &expirations, sizeof expirations) > 0) {
  }
  if (py_save_thread == NULL || in_wake || !on_main_thread()) return;
  if (py_gil_check != NULL && !py_gil_check()) return;
  void *state = py_save_thread();
  fd_set fds;
  FD_ZERO(&fds);
  FD_SET(wake_fds[0], &fds);
  struct timeval tv = {0, IDLE_SLICE_USEC};
  select(wake_fds[0] + 1, &fds, NULL, NULL, &tv);
  py_restore_thread(state);
}

SEXP tb_c_release_gil_when_idle(SEXP save, SEXP restore, SEXP check) {
#ifdef __linux__
  if (wake_handler == NULL) return Rf_ScalarLogical(0);
  if (timer_handler == NULL) {
    timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (timer_fd < 0) return Rf_ScalarLogical(0);
    struct itimerspec period;
    memset(&period, 0, sizeof period);
    period.it_interval.tv_nsec = IDLE_SLICE_USEC * 1000L;
    period.it_value.tv_nsec = IDLE_SLICE_USEC * 1000L;
    if (timerfd_settime(timer_fd, 0, &period, NULL) != 0) {
      close(timer_fd);
      timer_fd = -1;
      return Rf_ScalarLogical(0);
    }
    timer_handler = addInputHandler(R_InputHandlers, timer_fd, on_timer, 78);
  }
  py_save_thread = (void *(*)(void)) (uintptr_t) Rf_asReal(save);
  py_restore_thread = (void (*)(void *)) (uintptr_t) Rf_asReal(restore);
  py_gil_check = (int (*)(void)) (uintptr_t) Rf_asReal(check);
  return Rf_ScalarLogical(1);
#else
  return Rf_ScalarLogical(0);
#endif
}

SEXP tb_c_event_loop_stop(void) {
  py_save_thread = NULL;
  release_handle = NULL; /* the package is unloading */
  if (timer_handler != NULL) {
    removeInputHandler(&R_InputHandlers, timer_handler);
    timer_handler = NULL;
    close(timer_fd);
    timer_fd = -1;
  }
  if (wake_handler != NULL) {
    removeInputHandler(&R_InputHandlers, wake_handler);
    wake_handler = NULL;
  }
  return R_NilValue;
}

/* Install the handler once (fn: the R function that pumps); returns the pipe's write end. */
SEXP tb_c_event_loop(SEXP fn) {
  if (wake_handler == NULL) {
    if (pipe(wake_fds) != 0) return Rf_ScalarInteger(-1);
    for (int i = 0; i < 2; i++) {
      fcntl(wake_fds[i], F_SETFL, fcntl(wake_fds[i], F_GETFL) | O_NONBLOCK);
      fcntl(wake_fds[i], F_SETFD, FD_CLOEXEC);
    }
    pump_call = Rf_lang1(fn);
    R_PreserveObject(pump_call);
    wake_handler = addInputHandler(R_InputHandlers, wake_fds[0], on_wake, 77);
  }
  return Rf_ScalarInteger(wake_fds[1]);
}

static const R_CallMethodDef call_methods[] = {
  {"tb_c_event_loop", (DL_FUNC) &tb_c_event_loop, 1},
  {"tb_c_event_loop_stop", (DL_FUNC) &tb_c_event_loop_stop, 0},
  {"tb_c_release_gil_when_idle", (DL_FUNC) &tb_c_release_gil_when_idle, 3},
  {"tb_c_install_sigint", (DL_FUNC) &tb_c_install_sigint, 1},
  {"tb_c_take_interrupt", (DL_FUNC) &tb_c_take_interrupt, 0},
  {"tb_c_init", (DL_FUNC) &tb_c_init, 0},
  {"tb_c_keep", (DL_FUNC) &tb_c_keep, 1},
  {"tb_c_get", (DL_FUNC) &tb_c_get, 1},
  {"tb_c_release", (DL_FUNC) &tb_c_release, 1},
  {"tb_c_drain", (DL_FUNC) &tb_c_drain, 0},
  {"tb_c_kept", (DL_FUNC) &tb_c_kept, 0},
  {"tb_c_view", (DL_FUNC) &tb_c_view, 1},
  {"tb_c_view_text", (DL_FUNC) &tb_c_view_text, 1},
  {"tb_c_from_addr", (DL_FUNC) &tb_c_from_addr, 4},
  {"tb_c_simple_args", (DL_FUNC) &tb_c_simple_args, 1},
  {"tb_c_tensor_operands", (DL_FUNC) &tb_c_tensor_operands, 4},
  {"tb_c_new_tensor", (DL_FUNC) &tb_c_new_tensor, 5},
  {"tb_c_tensor_from_text", (DL_FUNC) &tb_c_tensor_from_text, 3},
  {"tb_c_set_release", (DL_FUNC) &tb_c_set_release, 2},
  {"tb_c_release_tensor", (DL_FUNC) &tb_c_release_tensor, 1},
  {"tb_c_set_as_tensor", (DL_FUNC) &tb_c_set_as_tensor, 2},
  {"tb_c_as_tensor", (DL_FUNC) &tb_c_as_tensor, 3},
  {NULL, NULL, 0}
};

void R_init_tensorbridge(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
}
