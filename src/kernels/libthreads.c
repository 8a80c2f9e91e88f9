/* libthreads.c — the thread counts of the libraries the kernels call:
 * OpenBLAS (one process-wide count, and a shorter idle spin after each
 * call) and OpenMP (oneDNN; a per-thread setting), and their versions.
 * See parallel.h.
 */
#include "kernels/parallel.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#ifdef HETRT_HAVE_DNNL
#include <dnnl.h>
#endif

/* ---- the libraries' thread counts ---- */

/* OpenBLAS's idle workers spin (sched_yield) for 2^n TSC cycles before
 * they sleep; n comes from OPENBLAS_THREAD_TIMEOUT, default 28 (about
 * 0.1 s of a core after every BLAS call).  2^22 cycles (1-2 ms) still
 * covers the gap between the BLAS calls of one run. */
#define HET_BLAS_THREAD_TIMEOUT 22

typedef void (*het_void_fn)(void);
typedef int (*het_int_fn)(void);

static void *blas_sym(const char *name) {
  return dlsym(RTLD_DEFAULT, name);
}

/* Once per process, at the first provider's creation (before any of our
 * BLAS calls): unless the user chose a timeout, has OpenBLAS re-read its
 * environment with OPENBLAS_THREAD_TIMEOUT set (restored right after) and
 * restarts its workers, which take the timeout when they start.  Needs
 * OpenBLAS >= 0.3 (openblas_read_env, blas_thread_shutdown_,
 * blas_thread_init exported); skipped otherwise. */
static void blas_quiet_idle(void) {
  if (getenv("OPENBLAS_THREAD_TIMEOUT") || getenv("GOTO_THREAD_TIMEOUT"))
    return;
  void *read_env = blas_sym("openblas_read_env");
  void *timeout = blas_sym("openblas_thread_timeout");
  void *shutdown = blas_sym("blas_thread_shutdown_");
  void *init = blas_sym("blas_thread_init");
  if (!read_env || !timeout || !shutdown || !init)
    return;
  het_void_fn read_env_fn, shutdown_fn;
  het_int_fn timeout_fn, init_fn;
  memcpy(&read_env_fn, &read_env, sizeof read_env_fn);
  memcpy(&timeout_fn, &timeout, sizeof timeout_fn);
  memcpy(&shutdown_fn, &shutdown, sizeof shutdown_fn);
  memcpy(&init_fn, &init, sizeof init_fn);
  char value[16];
  snprintf(value, sizeof value, "%d", HET_BLAS_THREAD_TIMEOUT);
  if (setenv("OPENBLAS_THREAD_TIMEOUT", value, 0) != 0)
    return;
  read_env_fn();
  unsetenv("OPENBLAS_THREAD_TIMEOUT");
  if (timeout_fn() != HET_BLAS_THREAD_TIMEOUT)
    return;
  shutdown_fn();
  init_fn();
}

static pthread_once_t g_blas_once = PTHREAD_ONCE_INIT;

void het_kernel_set_blas_threads(int threads) {
  pthread_once(&g_blas_once, blas_quiet_idle);
  openblas_set_num_threads(threads < 1 ? 1 : threads);
}

typedef void (*het_omp_set_fn)(int);
static het_omp_set_fn g_omp_set;
static pthread_once_t g_omp_once = PTHREAD_ONCE_INIT;
static _Thread_local int tls_omp_threads; /* 0: not set by us yet */

/* Looked up at run time: libgomp is in the process only through oneDNN,
 * and a build without oneDNN has no OpenMP to configure. */
static void omp_lookup(void) {
  void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (sym)
    memcpy(&g_omp_set, &sym, sizeof g_omp_set);
}

void het_kernel_set_omp_threads(int threads) {
  if (threads < 1)
    threads = 1;
  if (tls_omp_threads == threads)
    return;
  pthread_once(&g_omp_once, omp_lookup);
  if (g_omp_set)
    g_omp_set(threads);
  tls_omp_threads = threads;
}

/* ---- the libraries' versions ---- */

static pthread_once_t het_lib_once = PTHREAD_ONCE_INIT;
static char het_lib_text[160];

static void het_lib_describe(void) {
  size_t n = 0;
#ifdef HETRT_HAVE_DNNL
  const dnnl_version_t *v = dnnl_version();
  n += (size_t)snprintf(het_lib_text, sizeof het_lib_text, "onednn=%d.%d.%d",
                        v->major, v->minor, v->patch);
#else
  n += (size_t)snprintf(het_lib_text, sizeof het_lib_text, "onednn=none");
#endif
  /* "OpenBLAS 0.3.21 DYNAMIC_ARCH ...": its name and version */
  char *(*config)(void) = (char *(*)(void))blas_sym("openblas_get_config");
  const char *c = config ? config() : "unknown";
  int words = 0;
  size_t len = 0;
  while (c[len] && !(c[len] == ' ' && ++words == 2))
    len++;
  if (n < sizeof het_lib_text)
    snprintf(het_lib_text + n, sizeof het_lib_text - n, ";blas=%.*s",
             (int)len, c);
}

const char *het_kernel_libraries(void) {
  pthread_once(&het_lib_once, het_lib_describe);
  return het_lib_text;
}
