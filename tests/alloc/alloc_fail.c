/* alloc_fail.c — allocation-failure injection (docs/reliability.md).
 *
 *   alloc_fail MODEL [--providers LIST] [--devices PROFILES]
 *              [--set KEY=VALUE]... [--stride K]
 *
 * Linked with -Wl,--wrap for malloc, calloc, realloc, aligned_alloc,
 * posix_memalign, strdup and strndup (tests/alloc/CMakeLists part of
 * tests/CMakeLists.txt), so every allocation made by hetrt's own code (the
 * objects of libhetrt.a) goes through a counter here; the Nth one fails
 * with ENOMEM.  Allocations inside other libraries (libc, oneDNN,
 * protobuf-c, libyaml) are not counted: they are not hetrt's.
 *
 * For the model it runs, with one host thread:
 *   1. a clean session create + run: the reference outputs, and the counts;
 *   2. create + run with allocation N failing, for N = 1, 2, 3, ... until
 *      an attempt makes fewer than N allocations: every failed attempt
 *      must return OUT_OF_MEMORY with a message, and an attempt that
 *      succeeds despite its fault must give the reference outputs (see
 *      af_same);
 *   3. one session, run with allocation N of the run failing, N = 1, ...,
 *      each fault followed by a clean run of the same session that must
 *      match the reference bit for bit;
 *   4. when the providers include emu: the same as 2 and 3 with the emu's
 *      own faults (emu.fail_alloc, fail_kernel, fail_copy, fail_event =
 *      N), which hit device allocations, kernels, copies and events at
 *      every step of the split model.
 * --stride K tries N = 1..64 and then every Kth N (long by-hand runs use
 * 1).  ALLOC_FAIL_BACKTRACE=1 prints where each injected fault is.  Leaks are LeakSanitizer's to find (the ASan build runs this test);
 * the exit status is 0 only when every attempt behaved.
 */
#include <errno.h>
#include <execinfo.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"

/* ---- the counting allocator ---------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_long g_count;    /* allocations since af_arm */
static atomic_long g_fail_at;  /* 1-based; 0 = count only */
static atomic_bool g_counting; /* off outside the measured calls */
static atomic_bool g_failed;   /* the armed allocation was reached */
static bool g_backtrace;

/* true when this allocation is the one to fail. */
static bool af_fail_now(void) {
  if (!atomic_load(&g_counting))
    return false;
  long n = atomic_fetch_add(&g_count, 1) + 1;
  if (n != atomic_load(&g_fail_at))
    return false;
  atomic_store(&g_failed, true);
  if (g_backtrace) { /* where the fault is (ALLOC_FAIL_BACKTRACE=1) */
    void *frames[24];
    fprintf(stderr, "alloc_fail: fault #%ld at:\n", n);
    backtrace_symbols_fd(frames, backtrace(frames, 24), 2);
  }
  errno = ENOMEM;
  return true;
}

void *__wrap_malloc(size_t n) { return af_fail_now() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) {
  return af_fail_now() ? NULL : __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
  return af_fail_now() ? NULL : __real_realloc(p, n);
}
void *__wrap_aligned_alloc(size_t align, size_t n) {
  return af_fail_now() ? NULL : __real_aligned_alloc(align, n);
}
int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  return af_fail_now() ? ENOMEM : __real_posix_memalign(p, align, n);
}
char *__wrap_strdup(const char *s) { return af_fail_now() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) {
  return af_fail_now() ? NULL : __real_strndup(s, n);
}

static void af_arm(long fail_at) {
  atomic_store(&g_count, 0);
  atomic_store(&g_fail_at, fail_at);
  atomic_store(&g_failed, false);
  atomic_store(&g_counting, true);
}

static long af_disarm(void) {
  atomic_store(&g_counting, false);
  return atomic_load(&g_count);
}

/* ---- the model ------------------------------------------------------------ */

#define AF_MAX_IO 32

typedef struct af_model {
  const char *path, *providers, *devices;
  const char *set[8]; /* --set KEY=VALUE */
  int n_set;
  bool emu;
  size_t n_in, n_out;
  const char *in_names[AF_MAX_IO];
  het_tensor *in[AF_MAX_IO];
  het_tensor *ref[AF_MAX_IO]; /* reference outputs */
} af_model;

static int g_bad; /* attempts that misbehaved */

static void af_report(const char *what, long n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void af_report(const char *what, long n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "alloc_fail: FAIL: %s, fault #%ld: ", what, n);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  g_bad++;
}

/* Options for a session: one thread, the providers, the devices, the
 * --set options and extra "key=value" (an emu fault) when given. */
static het_status af_options(const af_model *m, const char *extra,
                             het_session_options **out) {
  het_session_options *o = NULL;
  het_status st = het_session_options_create(&o);
  if (st == HET_OK)
    st = het_session_options_set_threads(o, 1);
  if (st == HET_OK && m->providers)
    st = het_session_options_set(o, "providers", m->providers);
  if (st == HET_OK && m->devices)
    st = het_session_options_set(o, "devices", m->devices);
  for (int i = 0; st == HET_OK && i <= m->n_set; i++) {
    const char *kv = i < m->n_set ? m->set[i] : extra;
    const char *eq = kv ? strchr(kv, '=') : NULL;
    if (!kv)
      continue;
    if (!eq) {
      fprintf(stderr, "alloc_fail: --set %s: expected KEY=VALUE\n", kv);
      st = HET_ERR_INVALID_ARGUMENT;
      break;
    }
    char key[64];
    snprintf(key, sizeof key, "%.*s", (int)(eq - kv), kv);
    st = het_session_options_set(o, key, eq + 1);
  }
  if (st != HET_OK) {
    het_session_options_destroy(o);
    return st;
  }
  *out = o;
  return HET_OK;
}

/* Deterministic inputs: symbolic dims 1, floats in [-1, 1), integers
 * 0..3 (shapes and indices of a real model stay in range). */
static het_tensor *af_input(const het_value_desc *d) {
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < d->rank; i++)
    dims[i] = d->dims[i] < 0 ? 1 : d->dims[i];
  het_tensor *t = NULL;
  if (d->rank < 0 || het_tensor_create(d->dtype, dims, d->rank, &t) != HET_OK)
    return NULL;
  int64_t n = het_tensor_get_count(t);
  void *p = het_tensor_get_data(t);
  for (int64_t i = 0; i < n; i++) {
    unsigned v = (unsigned)(i * 2654435761u) >> 8;
    switch (d->dtype) {
    case HET_DTYPE_FLOAT32: ((float *)p)[i] = (float)(v % 2000) / 1000.f - 1.f; break;
    case HET_DTYPE_INT64: ((int64_t *)p)[i] = v % 4; break;
    case HET_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)(v % 4); break;
    case HET_DTYPE_BOOL: ((uint8_t *)p)[i] = v & 1; break;
    default: memset(p, 0, het_tensor_get_nbytes(t)); i = n; break;
    }
  }
  return t;
}

static void af_free_outputs(het_tensor **out, size_t n) {
  for (size_t i = 0; i < n; i++) {
    het_tensor_destroy(out[i]);
    out[i] = NULL;
  }
}

/* Outputs equal to the reference: bit for bit, except float32 within
 * 1e-4 of the reference's largest magnitude, since each session times its
 * own choice between oneDNN's direct and Winograd convolutions (ResNet-18's
 * 3x3 layers), whose roundings differ. */
static bool af_same(const af_model *m, het_tensor *const *out) {
  for (size_t i = 0; i < m->n_out; i++) {
    size_t nb = het_tensor_get_nbytes(m->ref[i]);
    if (!out[i] || het_tensor_get_nbytes(out[i]) != nb ||
        het_tensor_get_dtype(out[i]) != het_tensor_get_dtype(m->ref[i]))
      return false;
    const void *a = het_tensor_get_data(out[i]), *b = het_tensor_get_data(m->ref[i]);
    if (memcmp(a, b, nb) == 0)
      continue;
    if (het_tensor_get_dtype(out[i]) != HET_DTYPE_FLOAT32)
      return false;
    const float *fa = a, *fb = b;
    int64_t n = het_tensor_get_count(m->ref[i]);
    double peak = 0, diff = 0;
    for (int64_t j = 0; j < n; j++) {
      double d = fabs((double)fa[j] - fb[j]);
      peak = fmax(peak, fabs((double)fb[j]));
      diff = d > diff || d != d ? d : diff;
    }
    if (!(diff <= 1e-4 * peak))
      return false;
  }
  return true;
}

static het_status af_run(const af_model *m, het_session *s, het_tensor **out) {
  return het_session_run(s, m->in_names, m->in, m->n_in, NULL, m->n_out, out);
}

/* The clean session and run: inputs, reference outputs, and how many
 * allocations each takes. */
static int af_reference(af_model *m, long *n_create, long *n_run) {
  het_env *env = NULL;
  het_session_options *o = NULL;
  het_session *s = NULL;
  if (het_env_create(&env) != HET_OK || af_options(m, NULL, &o) != HET_OK) {
    fprintf(stderr, "alloc_fail: setup: %s\n", het_last_error());
    return -1;
  }
  af_arm(0);
  het_status st = het_session_create(env, m->path, o, &s);
  *n_create = af_disarm();
  if (st != HET_OK) {
    fprintf(stderr, "alloc_fail: %s: %s\n", m->path, het_last_error());
    return -1;
  }
  m->n_in = het_session_get_input_count(s);
  m->n_out = het_session_get_output_count(s);
  if (m->n_in > AF_MAX_IO || m->n_out > AF_MAX_IO) {
    fprintf(stderr, "alloc_fail: %s: over %d inputs or outputs\n", m->path,
            AF_MAX_IO);
    return -1;
  }
  for (size_t i = 0; i < m->n_in; i++) {
    het_value_desc d;
    het_session_get_input(s, i, &d);
    m->in_names[i] = strdup(d.name);
    if (!(m->in[i] = af_input(&d))) {
      fprintf(stderr, "alloc_fail: input '%s': cannot make a %s tensor\n",
              d.name, het_dtype_str(d.dtype));
      return -1;
    }
  }
  af_arm(0);
  st = af_run(m, s, m->ref);
  *n_run = af_disarm();
  if (st != HET_OK) {
    fprintf(stderr, "alloc_fail: %s: run: %s\n", m->path, het_last_error());
    return -1;
  }
  het_session_destroy(s);
  het_session_options_destroy(o);
  het_env_destroy(env);
  return 0;
}

/* A status after an injected fault: an error with a message. */
static void af_check_error(const char *what, long n, het_status st) {
  const char *msg = het_last_error();
  if (st == HET_OK)
    return;
  if (!msg || !*msg)
    af_report(what, n, "%s without a message", het_status_str(st));
  else if (st != HET_ERR_OUT_OF_MEMORY && strncmp(what, "emu.", 4) != 0)
    af_report(what, n, "a failed allocation reported as %s: %s",
              het_status_str(st), msg);
}

/* Clean attempts in a row that end an emu fault loop. */
#define AF_EMU_CLEAN 8

static long af_next(long n, long stride) { return n < 64 ? n + 1 : n + stride; }

/* Step 2, or 4 with an emu fault "emu.fail_<kind>" when fault is given:
 * create + run with fault N, N = 1.. until nothing failed. */
static long af_create_loop(const af_model *m, const char *fault, long stride,
                           long *errors) {
  const char *what = fault ? fault : "session create + run";
  long tried = 0, clean = 0;
  for (long n = 1;; n = af_next(n, stride)) {
    het_env *env = NULL;
    het_session_options *o = NULL;
    het_session *s = NULL;
    het_tensor *out[AF_MAX_IO] = {0};
    char extra[96];
    if (fault)
      snprintf(extra, sizeof extra, "%s=%ld", fault, n);
    if (!fault)
      af_arm(n);
    het_status st = het_env_create(&env);
    if (st == HET_OK)
      st = af_options(m, fault ? extra : NULL, &o);
    if (st == HET_OK)
      st = het_session_create(env, m->path, o, &s);
    if (st == HET_OK)
      st = af_run(m, s, out);
    bool hit = fault ? st != HET_OK && strstr(het_last_error(), "injected fault")
                     : atomic_load(&g_failed);
    if (!fault)
      af_disarm();
    af_check_error(what, n, st);
    if (st == HET_OK && !af_same(m, out))
      af_report(what, n, "the run succeeded with outputs unlike the reference");
    if (st == HET_OK && hit && g_backtrace)
      fprintf(stderr, "alloc_fail: %s, fault #%ld: absorbed (same outputs)\n",
              what, n);
    if (st != HET_OK && !hit)
      af_report(what, n, "failed without the injected fault: %s",
                het_last_error());
    if (st != HET_OK)
      ++*errors;
    tried++;
    af_free_outputs(out, m->n_out);
    het_session_destroy(s);
    het_session_options_destroy(o);
    het_env_destroy(env);
    /* The end: our counter saw fewer than N allocations; the emu's counts
     * are its own, so there the end is AF_EMU_CLEAN clean attempts in a
     * row (a fault the library absorbed looks like a clean attempt). */
    clean = st == HET_OK ? clean + 1 : 0;
    if (fault ? clean >= AF_EMU_CLEAN : !hit)
      return fault ? tried - clean : tried - 1;
  }
}

/* Step 3, or 4: one session, a run with fault N, then a clean run that must
 * match; N = 1.. until the faulty run had nothing to fail. */
static long af_run_loop(const af_model *m, const char *fault, long stride,
                        long *errors) {
  const char *what = fault ? fault : "run";
  het_env *env = NULL;
  het_session_options *o = NULL;
  het_session *s = NULL;
  long tried = 0, clean = 0;
  if (het_env_create(&env) != HET_OK || af_options(m, NULL, &o) != HET_OK ||
      het_session_create(env, m->path, o, &s) != HET_OK) {
    af_report(what, 0, "clean session: %s", het_last_error());
    return 0;
  }
  for (long n = 1;; n = af_next(n, stride)) {
    het_tensor *out[AF_MAX_IO] = {0};
    char value[32];
    if (fault) {
      /* The emu counts ops from the session's start: the clean session
       * above made its allocations, so count from a fresh session. */
      het_session_destroy(s);
      het_session_options_destroy(o);
      s = NULL;
      o = NULL;
      snprintf(value, sizeof value, "%s=%ld", fault, n);
      if (af_options(m, value, &o) != HET_OK ||
          het_session_create(env, m->path, o, &s) != HET_OK) {
        /* The fault hit the session's creation: step 4's create loop
         * covers that; this loop needs a session. */
        het_session_options_destroy(o);
        o = NULL;
        if (af_options(m, NULL, &o) != HET_OK ||
            het_session_create(env, m->path, o, &s) != HET_OK) {
          af_report(what, n, "clean session: %s", het_last_error());
          break;
        }
        continue;
      }
    } else {
      af_arm(n);
    }
    het_status st = af_run(m, s, out);
    bool hit = fault ? st != HET_OK && strstr(het_last_error(), "injected fault")
                     : atomic_load(&g_failed);
    if (!fault)
      af_disarm();
    af_check_error(what, n, st);
    if (st == HET_OK && !af_same(m, out))
      af_report(what, n, "the faulty run succeeded with outputs unlike the reference");
    if (st != HET_OK && !hit)
      af_report(what, n, "failed without the injected fault: %s",
                het_last_error());
    af_free_outputs(out, m->n_out);
    tried++;
    if (st != HET_OK)
      ++*errors;
    clean = st == HET_OK ? clean + 1 : 0;
    if (fault ? clean >= AF_EMU_CLEAN : !hit) {
      tried -= fault ? clean : 1;
      break;
    }
    if (!hit) /* an emu fault past this run's ops: the next N */
      continue;
    st = af_run(m, s, out);
    if (st != HET_OK)
      af_report(what, n, "the clean run after the fault failed: %s",
                het_last_error());
    else if (!af_same(m, out))
      af_report(what, n, "the clean run after the fault differs from the reference");
    af_free_outputs(out, m->n_out);
  }
  het_session_destroy(s);
  het_session_options_destroy(o);
  het_env_destroy(env);
  return tried;
}

int main(int argc, char **argv) {
  af_model m = {0};
  long stride = 1;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--providers") == 0 && i + 1 < argc)
      m.providers = argv[++i];
    else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc)
      m.devices = argv[++i];
    else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc && m.n_set < 8)
      m.set[m.n_set++] = argv[++i];
    else if (strcmp(argv[i], "--stride") == 0 && i + 1 < argc)
      stride = strtol(argv[++i], NULL, 10);
    else if (argv[i][0] != '-' && !m.path)
      m.path = argv[i];
    else {
      fprintf(stderr, "usage: alloc_fail MODEL [--providers LIST] "
                      "[--devices PROFILES] [--set KEY=VALUE]... [--stride K]\n");
      return 2;
    }
  }
  if (!m.path || stride < 1) {
    fprintf(stderr, "alloc_fail: a MODEL and --stride >= 1 are needed\n");
    return 2;
  }
  m.emu = m.providers && strstr(m.providers, "emu");
  g_backtrace = getenv("ALLOC_FAIL_BACKTRACE") != NULL;

  long n_create, n_run;
  if (af_reference(&m, &n_create, &n_run) != 0)
    return 1;
  printf("alloc_fail: %s: %ld allocations to create, %ld to run\n", m.path,
         n_create, n_run);

  long errors = 0, tried;
  tried = af_create_loop(&m, NULL, stride, &errors);
  printf("alloc_fail: create + run: %ld faults injected, %ld clean errors\n",
         tried, errors);
  errors = 0;
  tried = af_run_loop(&m, NULL, stride, &errors);
  printf("alloc_fail: run: %ld faults injected, %ld clean errors, each "
         "followed by a matching clean run\n", tried, errors);
  if (m.emu) {
    static const char *const faults[] = {"emu.fail_alloc", "emu.fail_kernel",
                                         "emu.fail_copy", "emu.fail_event"};
    for (size_t k = 0; k < sizeof faults / sizeof *faults; k++) {
      errors = 0;
      tried = af_create_loop(&m, faults[k], stride, &errors);
      long run_errors = 0;
      long run_tried = af_run_loop(&m, faults[k], stride, &run_errors);
      printf("alloc_fail: %s: %ld faults in create + run (%ld clean errors), "
             "%ld in runs of one session (%ld clean errors)\n",
             faults[k], tried, errors, run_tried, run_errors);
    }
  }
  af_free_outputs(m.ref, m.n_out);
  af_free_outputs(m.in, m.n_in);
  for (size_t i = 0; i < m.n_in; i++)
    free((void *)m.in_names[i]);
  if (g_bad) {
    fprintf(stderr, "alloc_fail: %d attempts misbehaved\n", g_bad);
    return 1;
  }
  printf("alloc_fail: every fault gave a clean status\n");
  return 0;
}
