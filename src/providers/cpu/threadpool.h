/* threadpool.h — the CPU provider's thread pool: threads-1 pthread workers
 * plus the calling thread run the chunks of a parallel loop.  Workers sleep
 * on a condition variable when idle (no spinning), are bound to distinct
 * cores (or PUs) through hwloc when the topology allows, and serve several
 * concurrent parallel loops at once.
 */
#ifndef HET_CPU_THREADPOOL_H
#define HET_CPU_THREADPOOL_H

#include <stdint.h>

#include "core/status.h"

typedef struct het_threadpool het_threadpool;

/* Largest thread count het_threadpool_create accepts. */
#define HET_THREADPOOL_MAX_THREADS 1024

/* A loop body: handles indices [begin, end) of the loop; ctx is passed
 * through unchanged.  Chunks run concurrently, so fn must only write what
 * its own indices own. */
typedef void (*het_parallel_fn)(void *ctx, int64_t begin, int64_t end);

/* Creates a pool for `threads` threads: threads-1 workers and the caller
 * (threads == 1 starts no worker; every loop then runs inline).  Workers
 * are bound to distinct cores when threads <= cores allowed to the process,
 * else to distinct PUs when threads <= PUs, else left unbound; binding is
 * skipped when the environment sets HETRT_THREAD_BIND=0.  Caller owns *out
 * (het_threadpool_destroy).  Errors: ERR_INVALID_ARGUMENT for threads
 * outside 1..HET_THREADPOOL_MAX_THREADS, ERR_OUT_OF_MEMORY, ERR_INTERNAL
 * when a worker thread cannot be started. */
het_status het_threadpool_create(int threads, het_threadpool **out);

/* Stops and joins the workers.  Accepts NULL.  No parallel loop may be
 * running on the pool. */
void het_threadpool_destroy(het_threadpool *pool);

/* Thread count of the pool (1 for NULL). */
int het_threadpool_threads(const het_threadpool *pool);

/* Runs fn over [0, n) in chunks of at least `grain` indices (grain < 1
 * counts as 1) and returns when every chunk is done; the caller runs
 * chunks too.  A loop of a single chunk, a NULL or one-thread pool, and a
 * call made from inside a chunk of any pool (nesting) run fn(ctx, 0, n)
 * inline on the calling thread.  n <= 0 does nothing.  Thread-safe: loops
 * from several threads share the workers.  Each index is passed to fn
 * exactly once; which thread runs it is unspecified. */
void het_threadpool_parallel_for(het_threadpool *pool, int64_t n,
                                 int64_t grain, het_parallel_fn fn,
                                 void *ctx);

/* The libraries' own threads, governed by the same count:
 * - OpenBLAS (Debian's pthread build) has one process-wide thread count:
 *   het_threadpool_set_blas_threads sets it for every session in the
 *   process (the last provider created wins).
 * - Debian's oneDNN is built on OpenMP (libgomp): it runs each primitive
 *   with omp_get_max_threads() of the thread that executes it, an OpenMP
 *   ICV that is per thread.  het_threadpool_set_omp_threads sets it for the
 *   calling thread (a no-op when it already has that value, or when no
 *   OpenMP runtime is loaded); the provider calls it at the start of every
 *   run.
 * Both libraries keep their workers spinning for a while after a call
 * (OpenBLAS: OPENBLAS_THREAD_TIMEOUT, libgomp: OMP_WAIT_POLICY /
 * GOMP_SPINCOUNT), read from the environment when the libraries load.
 * OpenBLAS's default (2^28 cycles, ~0.1 s of a core after every call) is
 * cut to 2^22 cycles: the first het_threadpool_set_blas_threads call in
 * the process, unless the user set OPENBLAS_THREAD_TIMEOUT, has OpenBLAS
 * re-read its environment with that value and restarts its (idle)
 * workers.  libgomp cannot re-read its settings; its default spin
 * (GOMP_SPINCOUNT 300000 pauses) costs a few ms of CPU after a run, and
 * OMP_WAIT_POLICY=passive in the process environment removes it. */
void het_threadpool_set_blas_threads(int threads);
void het_threadpool_set_omp_threads(int threads);

#endif
