/* parallel.h — how kernels split a loop over threads without knowing
 * whose threads they are: a het_parallel names a parallel_for and the
 * thread count behind it (the CPU provider passes its pool; a NULL
 * het_parallel runs loops inline).  Also the thread counts of the
 * libraries the kernels call (libthreads.c).
 */
#ifndef HET_KERNELS_PARALLEL_H
#define HET_KERNELS_PARALLEL_H

#include <stdint.h>

/* A loop body: handles indices [begin, end) of the loop; ctx is passed
 * through unchanged.  Chunks run concurrently, so fn must only write what
 * its own indices own. */
typedef void (*het_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/* A parallel loop runner.  run(impl, n, grain, fn, ctx) calls fn over
 * [0, n) in chunks of at least grain indices and returns when all are
 * done; threads is how many threads it may use (>= 1). */
typedef struct het_parallel {
  void (*run)(void *impl, int64_t n, int64_t grain, het_parallel_fn fn,
              void *ctx);
  void *impl;
  int threads;
} het_parallel;

/* Runs fn over [0, n) on p, or inline (fn(ctx, 0, n)) when p is NULL or
 * has one thread.  n <= 0 does nothing. */
void het_parallel_for(const het_parallel *p, int64_t n, int64_t grain,
                      het_parallel_fn fn, void *ctx);

/* Threads behind p (1 for NULL). */
int het_parallel_threads(const het_parallel *p);

/* The libraries' own threads, governed by the same count:
 * - OpenBLAS (Debian's pthread build) has one process-wide thread count:
 *   het_kernel_set_blas_threads sets it for every session in the
 *   process (the last provider created wins).
 * - Debian's oneDNN is built on OpenMP (libgomp): it runs each primitive
 *   with omp_get_max_threads() of the thread that executes it, an OpenMP
 *   ICV that is per thread.  het_kernel_set_omp_threads sets it for the
 *   calling thread (a no-op when it already has that value, or when no
 *   OpenMP runtime is loaded); a provider calls it on the thread that runs kernels.
 * Both libraries keep their workers spinning for a while after a call
 * (OpenBLAS: OPENBLAS_THREAD_TIMEOUT, libgomp: OMP_WAIT_POLICY /
 * GOMP_SPINCOUNT), read from the environment when the libraries load.
 * OpenBLAS's default (2^28 cycles, ~0.1 s of a core after every call) is
 * cut to 2^22 cycles: the first het_kernel_set_blas_threads call in
 * the process, unless the user set OPENBLAS_THREAD_TIMEOUT, has OpenBLAS
 * re-read its environment with that value and restarts its (idle)
 * workers.  libgomp cannot re-read its settings; its default spin
 * (GOMP_SPINCOUNT 300000 pauses) costs a few ms of CPU after a run, and
 * OMP_WAIT_POLICY=passive in the process environment removes it. */
void het_kernel_set_blas_threads(int threads);
void het_kernel_set_omp_threads(int threads);

/* The libraries' versions, "onednn=2.6.3;blas=OpenBLAS 0.3.21" ("onednn=
 * none" in a build without it): what a plan's kernel choices depend on. */
const char *het_kernel_libraries(void);

#endif
