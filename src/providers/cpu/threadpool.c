/* threadpool.c — pthread worker pool with hwloc binding and parallel loops,
 * or the same loops as OpenMP parallel regions (libgomp's GOMP_parallel).
 * Invariants: a job is on pool->jobs only while its caller is still
 * claiming chunks; a worker joins a job (helpers++) only under pool->mu
 * while the job is listed, so once the caller has unlisted its job and
 * seen helpers == 0, no thread touches the job (it lives on the caller's
 * stack).  Idle workers and waiting callers block on condition variables.
 */
#include "providers/cpu/threadpool.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <hwloc.h>

typedef struct het_pool_job {
  struct het_pool_job *next;
  het_parallel_fn fn;
  void *ctx;
  int64_t n, chunk, n_chunks;
  atomic_int_fast64_t next_chunk; /* next unclaimed chunk */
  int helpers;                    /* workers inside the job; under mu */
} het_pool_job;

typedef struct het_pool_worker {
  het_threadpool *pool;
  pthread_t thread;
  hwloc_cpuset_t cpuset; /* NULL: unbound */
} het_pool_worker;

struct het_threadpool {
  int threads;
  bool openmp;   /* loops run as OpenMP parallel regions (no workers) */
  int n_workers; /* started workers */
  het_pool_worker *workers;
  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* workers: a job was listed, or shutdown */
  pthread_cond_t done_cv; /* callers: some job's helpers reached 0 */
  het_pool_job *jobs;     /* listed jobs, newest first; under mu */
  bool shutdown;          /* under mu */
};

/* > 0 while this thread runs a chunk (workers: always): nested loops run
 * inline, which cannot deadlock. */
static _Thread_local int tls_in_pool;

/* ---- hwloc topology: loaded once per process, read-only afterwards ---- */

static hwloc_topology_t g_topo;
static bool g_topo_ok;
static pthread_once_t g_topo_once = PTHREAD_ONCE_INIT;

static void topo_load(void) {
  if (hwloc_topology_init(&g_topo) != 0)
    return;
  /* Only cores and PUs are needed: skip caches, groups and I/O devices,
   * which makes the load several times cheaper. */
  (void)hwloc_topology_set_cache_types_filter(g_topo,
                                              HWLOC_TYPE_FILTER_KEEP_NONE);
  (void)hwloc_topology_set_io_types_filter(g_topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  (void)hwloc_topology_set_type_filter(g_topo, HWLOC_OBJ_GROUP,
                                       HWLOC_TYPE_FILTER_KEEP_NONE);
  if (hwloc_topology_load(g_topo) != 0) {
    hwloc_topology_destroy(g_topo);
    return;
  }
  g_topo_ok = true;
}

static bool bind_wanted(void) {
  const char *e = getenv("HETRT_THREAD_BIND");
  return !(e && strcmp(e, "0") == 0);
}

/* Gives worker w (1-based thread index t) a cpuset: core t (or PU t) of
 * those allowed, leaving index 0 conventionally to the caller.  Leaves
 * every cpuset NULL when the pool has more threads than cores and PUs. */
static void plan_binding(het_threadpool *pool) {
  if (!bind_wanted())
    return;
  pthread_once(&g_topo_once, topo_load);
  if (!g_topo_ok)
    return;
  hwloc_obj_type_t type = HWLOC_OBJ_CORE;
  int avail = hwloc_get_nbobjs_by_type(g_topo, HWLOC_OBJ_CORE);
  if (avail < pool->threads) {
    type = HWLOC_OBJ_PU;
    avail = hwloc_get_nbobjs_by_type(g_topo, HWLOC_OBJ_PU);
  }
  if (avail < pool->threads || avail < 2)
    return;
  for (int w = 0; w < pool->threads - 1; w++) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(g_topo, type, (unsigned)(w + 1));
    if (obj && obj->cpuset)
      pool->workers[w].cpuset = hwloc_bitmap_dup(obj->cpuset);
  }
}

/* ---- chunks ---- */

static void run_chunks(het_pool_job *job) {
  for (;;) {
    int64_t c = atomic_fetch_add_explicit(&job->next_chunk, 1,
                                          memory_order_relaxed);
    if (c >= job->n_chunks)
      return;
    int64_t b = c * job->chunk;
    int64_t e = b + job->chunk < job->n ? b + job->chunk : job->n;
    job->fn(job->ctx, b, e);
  }
}

/* One OpenMP team member's share of a job (nested loops inline). */
static void omp_chunks(void *arg) {
  tls_in_pool++;
  run_chunks(arg);
  tls_in_pool--;
}

static het_pool_job *find_open_job(het_threadpool *pool) {
  for (het_pool_job *j = pool->jobs; j; j = j->next)
    if (atomic_load_explicit(&j->next_chunk, memory_order_relaxed) <
        j->n_chunks)
      return j;
  return NULL;
}

static void *worker_main(void *arg) {
  het_pool_worker *self = arg;
  het_threadpool *pool = self->pool;
  tls_in_pool = 1;
  if (self->cpuset)
    (void)hwloc_set_cpubind(g_topo, self->cpuset, HWLOC_CPUBIND_THREAD);
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    het_pool_job *job = NULL;
    while (!pool->shutdown && !(job = find_open_job(pool)))
      pthread_cond_wait(&pool->work_cv, &pool->mu);
    if (pool->shutdown)
      break;
    job->helpers++;
    pthread_mutex_unlock(&pool->mu);
    run_chunks(job);
    pthread_mutex_lock(&pool->mu);
    if (--job->helpers == 0)
      pthread_cond_broadcast(&pool->done_cv);
  }
  pthread_mutex_unlock(&pool->mu);
  return NULL;
}

/* ---- the OpenMP runtime's team ---- */

/* TSan cannot see libgomp's hand-offs: a TSan build keeps the pthread
 * pool. */
#if defined(__SANITIZE_THREAD__)
#define HET_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HET_TSAN 1
#endif
#endif
#ifdef HET_TSAN
#define HET_OMP_MISSING "the OpenMP runtime is not used under ThreadSanitizer"
#else
#define HET_OMP_MISSING "no OpenMP runtime (libgomp) in this process"
#endif

/* libgomp's entry to a parallel region (what `#pragma omp parallel`
 * compiles to): fn(data) on `threads` threads, the caller one of them;
 * returns when all are done.  Looked up in the process (oneDNN brings
 * libgomp), not linked. */
typedef void (*het_gomp_parallel_fn)(void (*fn)(void *), void *data,
                                     unsigned threads, unsigned flags);
static het_gomp_parallel_fn g_gomp_parallel;
static pthread_once_t g_gomp_once = PTHREAD_ONCE_INIT;

static void gomp_find(void) {
  void *sym = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  memcpy(&g_gomp_parallel, &sym, sizeof sym);
}

bool het_threadpool_openmp_available(void) {
#ifdef HET_TSAN
  return false;
#else
  pthread_once(&g_gomp_once, gomp_find);
  return g_gomp_parallel != NULL;
#endif
}

/* ---- lifecycle ---- */

static void stop_workers(het_threadpool *pool) {
  pthread_mutex_lock(&pool->mu);
  pool->shutdown = true;
  pthread_cond_broadcast(&pool->work_cv);
  pthread_mutex_unlock(&pool->mu);
  for (int w = 0; w < pool->n_workers; w++)
    pthread_join(pool->workers[w].thread, NULL);
  pool->n_workers = 0;
}

void het_threadpool_destroy(het_threadpool *pool) {
  if (!pool)
    return;
  stop_workers(pool);
  for (int w = 0; pool->workers && w < pool->threads - 1; w++)
    if (pool->workers[w].cpuset)
      hwloc_bitmap_free(pool->workers[w].cpuset);
  free(pool->workers);
  pthread_cond_destroy(&pool->work_cv);
  pthread_cond_destroy(&pool->done_cv);
  pthread_mutex_destroy(&pool->mu);
  free(pool);
}

/* A pool for `threads` threads whose loops run on the OpenMP team
 * (openmp: no workers) or on threads-1 started pthread workers. */
static het_status pool_create(int threads, bool openmp,
                              het_threadpool **out) {
  if (threads < 1 || threads > HET_THREADPOOL_MAX_THREADS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "thread pool: %d threads (1..%d supported)", threads,
                     HET_THREADPOOL_MAX_THREADS);
  if (openmp && !het_threadpool_openmp_available())
    return het_error(HET_ERR_UNSUPPORTED, "thread pool: %s", HET_OMP_MISSING);
  het_threadpool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return het_error(HET_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
  pool->threads = threads;
  pool->openmp = openmp && threads > 1;
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->work_cv, NULL);
  pthread_cond_init(&pool->done_cv, NULL);
  pool->workers = calloc((size_t)threads, sizeof *pool->workers);
  if (!pool->workers) {
    het_threadpool_destroy(pool);
    return het_error(HET_ERR_OUT_OF_MEMORY, "thread pool: out of memory");
  }
  if (threads > 1 && !openmp)
    plan_binding(pool);
  for (int w = 0; !openmp && w < threads - 1; w++) {
    pool->workers[w].pool = pool;
    int rc = pthread_create(&pool->workers[w].thread, NULL, worker_main,
                            &pool->workers[w]);
    if (rc != 0) {
      het_threadpool_destroy(pool);
      return het_error(HET_ERR_INTERNAL,
                       "thread pool: cannot start worker %d of %d: %s", w + 1,
                       threads - 1, strerror(rc));
    }
    pool->n_workers = w + 1;
  }
  *out = pool;
  return HET_OK;
}

het_status het_threadpool_create(int threads, het_threadpool **out) {
  return pool_create(threads, false, out);
}

het_status het_threadpool_create_openmp(int threads, het_threadpool **out) {
  return pool_create(threads, true, out);
}

bool het_threadpool_is_openmp(const het_threadpool *pool) {
  return pool && pool->openmp;
}

int het_threadpool_threads(const het_threadpool *pool) {
  return pool ? pool->threads : 1;
}

/* ---- parallel loops ---- */

/* Wakes up to `want` sleeping workers for a newly listed job; under mu. */
static void wake_workers(het_threadpool *pool, int64_t want) {
  if (want >= pool->n_workers) {
    pthread_cond_broadcast(&pool->work_cv);
    return;
  }
  for (int64_t i = 0; i < want; i++)
    pthread_cond_signal(&pool->work_cv);
}

void het_threadpool_parallel_for(het_threadpool *pool, int64_t n,
                                 int64_t grain, het_parallel_fn fn,
                                 void *ctx) {
  if (n <= 0)
    return;
  if (grain < 1)
    grain = 1;
  if (!pool || (pool->n_workers == 0 && !pool->openmp) || tls_in_pool > 0 ||
      n <= grain) {
    fn(ctx, 0, n);
    return;
  }
  /* About four chunks per thread, so a descheduled thread (a shared vCPU)
   * holds up little: the others claim what it has not started. */
  int64_t target = (int64_t)pool->threads * 4;
  int64_t chunk = (n + target - 1) / target;
  if (chunk < grain)
    chunk = grain;
  het_pool_job job = {.fn = fn, .ctx = ctx, .n = n, .chunk = chunk,
                      .n_chunks = (n + chunk - 1) / chunk};
  atomic_init(&job.next_chunk, 0);
  if (pool->openmp) {
    int64_t team = job.n_chunks < pool->threads ? job.n_chunks : pool->threads;
    g_gomp_parallel(omp_chunks, &job, (unsigned)team, 0);
    return;
  }
  pthread_mutex_lock(&pool->mu);
  job.next = pool->jobs;
  pool->jobs = &job;
  wake_workers(pool, job.n_chunks - 1);
  pthread_mutex_unlock(&pool->mu);

  tls_in_pool++;
  run_chunks(&job);
  tls_in_pool--;

  pthread_mutex_lock(&pool->mu);
  for (het_pool_job **p = &pool->jobs; *p; p = &(*p)->next)
    if (*p == &job) {
      *p = job.next;
      break;
    }
  while (job.helpers > 0)
    pthread_cond_wait(&pool->done_cv, &pool->mu);
  pthread_mutex_unlock(&pool->mu);
}

static void het_threadpool_run(void *impl, int64_t n, int64_t grain,
                               het_parallel_fn fn, void *ctx) {
  het_threadpool_parallel_for(impl, n, grain, fn, ctx);
}

void het_threadpool_parallel(het_threadpool *pool, het_parallel *out) {
  *out = (het_parallel){.run = het_threadpool_run,
                        .impl = pool,
                        .threads = het_threadpool_threads(pool)};
}
