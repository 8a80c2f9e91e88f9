/* threadpool.h — the CPU provider's thread pool: threads-1 pthread workers
 * plus the calling thread run the chunks of a parallel loop.  Workers sleep
 * on a condition variable when idle (no spinning), are bound to distinct
 * cores (or PUs) through hwloc when the topology allows, and serve several
 * concurrent parallel loops at once.  Or (het_threadpool_create_openmp)
 * the loops run as parallel regions of the OpenMP runtime oneDNN uses.
 */
#ifndef HET_CPU_THREADPOOL_H
#define HET_CPU_THREADPOOL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "kernels/parallel.h"

typedef struct het_threadpool het_threadpool;

/* Largest thread count het_threadpool_create accepts. */
#define HET_THREADPOOL_MAX_THREADS 1024

/* Creates a pool for `threads` threads: threads-1 workers and the caller
 * (threads == 1 starts no worker; every loop then runs inline).  Workers
 * are bound to distinct cores when threads <= cores allowed to the process,
 * else to distinct PUs when threads <= PUs, else left unbound; binding is
 * skipped when the environment sets HETRT_THREAD_BIND=0.  Caller owns *out
 * (het_threadpool_destroy).  Errors: ERR_INVALID_ARGUMENT for threads
 * outside 1..HET_THREADPOOL_MAX_THREADS, ERR_OUT_OF_MEMORY, ERR_INTERNAL
 * when a worker thread cannot be started. */
het_status het_threadpool_create(int threads, het_threadpool **out);

/* A pool whose loops run as parallel regions of the OpenMP runtime
 * (libgomp, which oneDNN runs its primitives on): the team oneDNN's
 * primitives just used, whose threads spin for a while after a region,
 * takes the chunks of the kernels' own loops too, instead of pthread
 * workers that sleep between loops and would compete with those spinning
 * threads for the same cores.  The calling thread is one of the team;
 * `threads` is the team size (1: every loop inline).  Errors:
 * ERR_UNSUPPORTED when het_threadpool_openmp_available() is false, and
 * het_threadpool_create's. */
het_status het_threadpool_create_openmp(int threads, het_threadpool **out);

/* Whether this process has the OpenMP runtime's parallel-region entry
 * (false in a ThreadSanitizer build: TSan cannot see libgomp's handoffs,
 * so such builds keep the pthread pool). */
bool het_threadpool_openmp_available(void);

/* Whether pool runs its loops on OpenMP (false for NULL). */
bool het_threadpool_is_openmp(const het_threadpool *pool);

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

/* The kernel-library view of the pool (kernels/parallel.h): loops of
 * kernels given this run on the pool.  Borrowed from pool, valid until it
 * is destroyed. */
void het_threadpool_parallel(het_threadpool *pool, het_parallel *out);

#endif
