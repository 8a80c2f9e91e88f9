/* test_threadpool.c — the CPU provider's thread pool: every index covered
 * exactly once for many n/grain/thread combinations, concurrent and nested
 * loops (on pthread workers and on the OpenMP team), the cpu.threadpool
 * option, idle workers that use no CPU (also OpenBLAS's and OpenMP's after
 * runs), broadcast walks on the pool equal to
 * inline walks, and whole models whose outputs are bit-identical for 1, 2
 * and 3 threads (tests/data/threadpool/gen_parallel_ops.py, resnet_small).
 */
#include <cblas.h>
#include <check.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hetrt/hetrt.h"
#include "kernels/broadcast.h"
#include "providers/cpu/threadpool.h"

#define PAR_MODEL HETRT_TEST_DATA "/threadpool/parallel_ops.onnx"
#define RESNET_MODEL HETRT_TEST_DATA "/emu/resnet_small.onnx"

/* ---- coverage -------------------------------------------------------- */

typedef struct cover {
  atomic_int *hits;
  int64_t n, grain;
  atomic_int bad_chunks; /* chunks shorter than grain that are not last */
  atomic_int calls;
} cover;

static void cover_fn(void *arg, int64_t b, int64_t e) {
  cover *c = arg;
  atomic_fetch_add(&c->calls, 1);
  if (b >= e || b < 0 || e > c->n || (e - b < c->grain && e != c->n))
    atomic_fetch_add(&c->bad_chunks, 1);
  for (int64_t i = b; i < e && i >= 0 && i < c->n; i++)
    atomic_fetch_add(&c->hits[i], 1);
}

static void check_cover(het_threadpool *pool, int64_t n, int64_t grain) {
  cover c = {.n = n, .grain = grain < 1 ? 1 : grain};
  c.hits = calloc((size_t)(n > 0 ? n : 1), sizeof *c.hits);
  ck_assert_ptr_nonnull(c.hits);
  het_threadpool_parallel_for(pool, n, grain, cover_fn, &c);
  for (int64_t i = 0; i < n; i++)
    ck_assert_msg(atomic_load(&c.hits[i]) == 1,
                  "n=%lld grain=%lld threads=%d: index %lld hit %d times",
                  (long long)n, (long long)grain,
                  het_threadpool_threads(pool), (long long)i,
                  atomic_load(&c.hits[i]));
  ck_assert_int_eq(atomic_load(&c.bad_chunks), 0);
  if (n <= 0)
    ck_assert_int_eq(atomic_load(&c.calls), 0);
  free(c.hits);
}

/* check_cover over a grid of loop sizes and grains. */
static void check_cover_grid(het_threadpool *pool) {
  static const int64_t ns[] = {0, 1, 2, 7, 64, 1000, 100003};
  static const int64_t grains[] = {0, 1, 3, 64, 1000, 200000};
  for (size_t i = 0; i < sizeof ns / sizeof *ns; i++)
    for (size_t g = 0; g < sizeof grains / sizeof *grains; g++)
      check_cover(pool, ns[i], grains[g]);
}

START_TEST(test_covers_each_index_once) {
  static const int threads[] = {1, 2, 3, 4, 8};
  for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
    het_threadpool *pool = NULL;
    ck_assert_int_eq(het_threadpool_create(threads[t], &pool), HET_OK);
    ck_assert_int_eq(het_threadpool_threads(pool), threads[t]);
    check_cover_grid(pool);
    het_threadpool_destroy(pool);
  }
}
END_TEST

/* ---- the workers take part ------------------------------------------- */

typedef struct who {
  pthread_mutex_t mu;
  pthread_t seen[16];
  int n_seen;
} who;

static void who_fn(void *arg, int64_t b, int64_t e) {
  who *w = arg;
  (void)b, (void)e;
  usleep(3000);
  pthread_t me = pthread_self();
  pthread_mutex_lock(&w->mu);
  bool known = false;
  for (int i = 0; i < w->n_seen; i++)
    known = known || pthread_equal(w->seen[i], me);
  if (!known && w->n_seen < 16)
    w->seen[w->n_seen++] = me;
  pthread_mutex_unlock(&w->mu);
}

START_TEST(test_workers_take_part) {
  het_threadpool *pool = NULL;
  ck_assert_int_eq(het_threadpool_create(3, &pool), HET_OK);
  who w = {.mu = PTHREAD_MUTEX_INITIALIZER};
  het_threadpool_parallel_for(pool, 24, 1, who_fn, &w);
  /* 24 chunks of 3 ms: the caller alone would need 72 ms; workers that
   * wake at all take some of them. */
  ck_assert_int_ge(w.n_seen, 2);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- concurrency and nesting ------------------------------------------ */

typedef struct caller_arg {
  het_threadpool *pool;
  int failures;
} caller_arg;

static void *caller_main(void *arg) {
  caller_arg *a = arg;
  enum { N = 5000 };
  atomic_int *hits = calloc(N, sizeof *hits);
  for (int round = 0; round < 200 && hits; round++) {
    cover c = {.hits = hits, .n = N, .grain = 16 + round % 50};
    for (int i = 0; i < N; i++)
      atomic_store(&hits[i], 0);
    het_threadpool_parallel_for(a->pool, N, c.grain, cover_fn, &c);
    for (int i = 0; i < N; i++)
      a->failures += atomic_load(&hits[i]) != 1;
    a->failures += atomic_load(&c.bad_chunks);
  }
  a->failures += hits == NULL;
  free(hits);
  return NULL;
}

/* Four threads run loops on pool at once; every index of each once. */
static void check_callers(het_threadpool *pool) {
  pthread_t th[4];
  caller_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (caller_arg){.pool = pool};
    ck_assert_int_eq(pthread_create(&th[i], NULL, caller_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
  }
}

START_TEST(test_concurrent_callers) {
  for (int threads = 2; threads <= 3; threads++) {
    het_threadpool *pool = NULL;
    ck_assert_int_eq(het_threadpool_create(threads, &pool), HET_OK);
    check_callers(pool);
    het_threadpool_destroy(pool);
  }
}
END_TEST

typedef struct nest {
  het_threadpool *pool;
  atomic_int hits[8 * 1000];
  atomic_int foreign; /* inner chunks run on another thread than outer */
} nest;

typedef struct nest_row {
  nest *n;
  int64_t row;
  pthread_t outer;
} nest_row;

static void nest_inner(void *arg, int64_t b, int64_t e) {
  nest_row *r = arg;
  if (!pthread_equal(pthread_self(), r->outer))
    atomic_fetch_add(&r->n->foreign, 1);
  for (int64_t i = b; i < e; i++)
    atomic_fetch_add(&r->n->hits[r->row * 1000 + i], 1);
}

static void nest_outer(void *arg, int64_t b, int64_t e) {
  nest *n = arg;
  for (int64_t row = b; row < e; row++) {
    nest_row r = {.n = n, .row = row, .outer = pthread_self()};
    het_threadpool_parallel_for(n->pool, 1000, 1, nest_inner, &r);
  }
}

/* A loop inside a chunk of pool runs inline on the chunk's thread. */
static void check_nested(het_threadpool *pool) {
  static nest n;
  memset(&n, 0, sizeof n);
  n.pool = pool;
  het_threadpool_parallel_for(n.pool, 8, 1, nest_outer, &n);
  for (int i = 0; i < 8 * 1000; i++)
    ck_assert_int_eq(atomic_load(&n.hits[i]), 1);
  ck_assert_int_eq(atomic_load(&n.foreign), 0);
}

START_TEST(test_nested_runs_inline) {
  het_threadpool *pool = NULL;
  ck_assert_int_eq(het_threadpool_create(2, &pool), HET_OK);
  check_nested(pool);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- the OpenMP team (cpu.threadpool=openmp) --------------------------- */

/* Where the OpenMP runtime is there (always with oneDNN, but under
 * ThreadSanitizer) a pool on its team covers every index once for the
 * same grid, its team takes part, loops from several threads and nested
 * loops behave as on the pthread pool; where it is not, creation says
 * so. */
START_TEST(test_openmp_pool) {
  het_threadpool *pool = NULL;
  if (!het_threadpool_openmp_available()) {
    ck_assert_int_eq(het_threadpool_create_openmp(2, &pool),
                     HET_ERR_UNSUPPORTED);
    ck_assert(strstr(het_last_error(), "OpenMP"));
    return;
  }
  static const int threads[] = {1, 2, 3, 4};
  for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
    ck_assert_int_eq(het_threadpool_create_openmp(threads[t], &pool), HET_OK);
    ck_assert_int_eq(het_threadpool_threads(pool), threads[t]);
    ck_assert(het_threadpool_is_openmp(pool) == (threads[t] > 1));
    check_cover_grid(pool);
    het_threadpool_destroy(pool);
  }
  ck_assert_int_eq(het_threadpool_create_openmp(3, &pool), HET_OK);
  who w = {.mu = PTHREAD_MUTEX_INITIALIZER};
  het_threadpool_parallel_for(pool, 24, 1, who_fn, &w);
  ck_assert_int_ge(w.n_seen, 2);
  check_callers(pool);
  het_threadpool_destroy(pool);
  ck_assert_int_eq(het_threadpool_create_openmp(2, &pool), HET_OK);
  check_nested(pool);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- idle workers sleep ------------------------------------------------ */

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Sums its chunk and adds it to the shared sink (atomically: every
 * worker adds). */
static void touch_fn(void *arg, int64_t b, int64_t e) {
  _Atomic int64_t *sink = arg;
  int64_t sum = 0;
  for (int64_t i = b; i < e; i++)
    sum += i;
  atomic_fetch_add_explicit(sink, sum, memory_order_relaxed);
}

START_TEST(test_idle_workers_use_no_cpu) {
  het_threadpool *pool = NULL;
  ck_assert_int_eq(het_threadpool_create(2, &pool), HET_OK);
  _Atomic int64_t sink = 0;
  het_threadpool_parallel_for(pool, 1 << 16, 1, touch_fn, (void *)&sink);
  ck_assert_int_eq(atomic_load(&sink), (int64_t)(1 << 16) * ((1 << 16) - 1) / 2);
  double t0 = cpu_seconds();
  usleep(200 * 1000);
  double used = cpu_seconds() - t0;
  ck_assert_msg(used < 0.020, "idle 2-thread pool used %.1f ms of CPU in "
                "200 ms", used * 1e3);
  het_threadpool_destroy(pool);
}
END_TEST

/* ---- broadcast walks on the pool ---------------------------------------- */

static void fma_row(void *const *pp, const int64_t *st, int64_t n,
                    const void *user) {
  (void)user;
  float *o = pp[0];
  const float *a = pp[1], *b = pp[2];
  for (int64_t i = 0; i < n; i++)
    o[i] = a[i * st[1]] * 1.5f + b[i * st[2]];
}

/* Runs o = a * 1.5 + b over out_dims with a of a_dims and b of b_dims,
 * inline and on pools of 2 and 3 threads; all must be equal. */
static void check_bcast(const int64_t *out_dims, int rank,
                        const int64_t *a_dims, const int64_t *b_dims) {
  int64_t na = het_dims_count(a_dims, rank), nb = het_dims_count(b_dims, rank);
  int64_t no = het_dims_count(out_dims, rank);
  float *a = malloc(sizeof(float) * (size_t)na);
  float *b = malloc(sizeof(float) * (size_t)nb);
  float *want = malloc(sizeof(float) * (size_t)no);
  float *got = malloc(sizeof(float) * (size_t)no);
  ck_assert(a && b && want && got);
  for (int64_t i = 0; i < na; i++)
    a[i] = (float)(i % 977) * 0.37f;
  for (int64_t i = 0; i < nb; i++)
    b[i] = (float)(i % 131) - 50.0f;
  het_bcast_operand ops[2] = {{a, 4, rank, a_dims}, {b, 4, rank, b_dims}};
  ck_assert_int_eq(het_bcast_run(want, 4, out_dims, rank, 2, ops, fma_row,
                                 NULL), HET_OK);
  for (int threads = 2; threads <= 3; threads++) {
    het_threadpool *pool = NULL;
    ck_assert_int_eq(het_threadpool_create(threads, &pool), HET_OK);
    het_parallel par;
    het_threadpool_parallel(pool, &par);
    memset(got, 0xff, sizeof(float) * (size_t)no);
    ck_assert_int_eq(het_bcast_run_pool(&par, got, 4, out_dims, rank, 2, ops,
                                        fma_row, NULL), HET_OK);
    ck_assert_int_eq(memcmp(want, got, sizeof(float) * (size_t)no), 0);
    het_threadpool_destroy(pool);
  }
  /* The inline result itself is right, spot-checked at the last element. */
  int64_t ia = 0, ib = 0, sa = 1, sb = 1;
  for (int d = rank - 1; d >= 0; d--) {
    ia += (a_dims[d] - 1) * sa;
    ib += (b_dims[d] - 1) * sb;
    sa *= a_dims[d];
    sb *= b_dims[d];
  }
  ck_assert_float_eq(want[no - 1], a[ia] * 1.5f + b[ib]);
  free(a), free(b), free(want), free(got);
}

START_TEST(test_bcast_pool_equals_inline) {
  int64_t many[3] = {64, 48, 100}, chan[3] = {64, 1, 1};
  check_bcast(many, 3, many, many);          /* same shape, many rows */
  check_bcast(many, 3, many, chan);          /* per-channel bias */
  int64_t one[2] = {1, 200003}, lone[2] = {1, 1};
  check_bcast(one, 2, one, lone);            /* one long row, in pieces */
  check_bcast(one, 2, lone, one);
  int64_t few[3] = {3, 1, 70001};
  int64_t fewb[3] = {1, 1, 70001};
  check_bcast(few, 3, few, fewb);            /* few rows, pieces */
}
END_TEST

/* ---- whole models ------------------------------------------------------- */

typedef struct model_out {
  size_t n;
  het_tensor *t[32];
} model_out;

typedef struct model_session {
  het_env *env;
  het_session *s;
  het_tensor *x;
} model_session;

/* cpu.conv_algo of the sessions below: a fixed algorithm, since under
 * auto each session times its own choice and two may differ. */
static const char *g_conv_algo = "direct";
/* cpu.threadpool of the sessions below (NULL: the default, auto). */
static const char *g_threadpool;

static void open_model(const char *path, int threads, const int64_t *dims,
                       int rank, model_session *m) {
  het_session_options *o = NULL;
  ck_assert_int_eq(het_env_create(&m->env), HET_OK);
  ck_assert_int_eq(het_session_options_create(&o), HET_OK);
  ck_assert_int_eq(het_session_options_set_threads(o, threads), HET_OK);
  ck_assert_int_eq(het_session_options_set(o, "cpu.conv_algo", g_conv_algo),
                   HET_OK);
  if (g_threadpool)
    ck_assert_int_eq(het_session_options_set(o, "cpu.threadpool", g_threadpool),
                     HET_OK);
  ck_assert_msg(het_session_create(m->env, path, o, &m->s) == HET_OK,
                "%s: %s", path, het_last_error());
  het_session_options_destroy(o);
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, rank, &m->x),
                   HET_OK);
  float *xd = het_tensor_get_data(m->x);
  uint32_t seed = 12345;
  for (int64_t i = 0; i < het_tensor_get_count(m->x); i++) {
    seed = seed * 1664525u + 1013904223u;
    xd[i] = (float)(seed >> 8) / (float)(1u << 24) * 8.0f - 4.0f;
  }
}

static void close_model(model_session *m) {
  het_tensor_destroy(m->x);
  het_session_destroy(m->s);
  het_env_destroy(m->env);
}

/* One run of an open model (any thread); status returned, not asserted. */
static het_status run_open(model_session *m, const char *input,
                           model_out *out) {
  out->n = het_session_get_output_count(m->s);
  if (out->n > 32)
    return HET_ERR_INTERNAL;
  const char *names[1] = {input};
  return het_session_run(m->s, names, &m->x, 1, NULL, out->n, out->t);
}

static void run_model(const char *path, int threads, const char *input,
                      const int64_t *dims, int rank, model_out *out) {
  model_session m = {0};
  open_model(path, threads, dims, rank, &m);
  ck_assert_msg(run_open(&m, input, out) == HET_OK, "%s threads=%d: %s",
                path, threads, het_last_error());
  close_model(&m);
}

static void free_out(model_out *m) {
  for (size_t i = 0; i < m->n; i++)
    het_tensor_destroy(m->t[i]);
}

/* Number of outputs of a and b that differ in any bit (or size). */
static int count_differing(const model_out *a, const model_out *b) {
  int bad = a->n != b->n;
  for (size_t i = 0; i < a->n && i < b->n; i++) {
    size_t nb = het_tensor_get_nbytes(a->t[i]);
    bad += nb != het_tensor_get_nbytes(b->t[i]) ||
           memcmp(het_tensor_get_data(a->t[i]), het_tensor_get_data(b->t[i]),
                  nb) != 0;
  }
  return bad;
}

static void check_identical(const char *path, const char *input,
                            const int64_t *dims, int rank, int threads) {
  model_out one = {0}, many = {0};
  run_model(path, 1, input, dims, rank, &one);
  run_model(path, threads, input, dims, rank, &many);
  ck_assert_uint_eq(one.n, many.n);
  for (size_t i = 0; i < one.n; i++) {
    size_t nb = het_tensor_get_nbytes(one.t[i]);
    ck_assert_uint_eq(nb, het_tensor_get_nbytes(many.t[i]));
    ck_assert_msg(memcmp(het_tensor_get_data(one.t[i]),
                         het_tensor_get_data(many.t[i]), nb) == 0,
                  "%s: output %zu differs between 1 and %d threads "
                  "(cpu.conv_algo=%s)",
                  path, i, threads, g_conv_algo);
  }
  free_out(&one), free_out(&many);
}

typedef struct runner_arg {
  model_session *m;
  const model_out *want;
  int failures;
} runner_arg;

static void *runner_main(void *arg) {
  runner_arg *a = arg;
  for (int round = 0; round < 3; round++) {
    model_out got = {0};
    if (run_open(a->m, "x", &got) != HET_OK) {
      a->failures++;
      continue;
    }
    a->failures += count_differing(a->want, &got);
    free_out(&got);
  }
  return NULL;
}

START_TEST(test_parallel_ops_bit_identical) {
  /* the default pool (the OpenMP team where there is one), then each */
  static const char *const pools[] = {NULL, "pthread", "openmp"};
  int64_t dims[4] = {2, 16, 64, 64};
  for (int p = 0; p < 3; p++) {
    if (p == 2 && !het_threadpool_openmp_available())
      break;
    g_threadpool = pools[p];
    check_identical(PAR_MODEL, "x", dims, 4, 2);
    check_identical(PAR_MODEL, "x", dims, 4, 3);
  }
  g_threadpool = NULL;
}
END_TEST

START_TEST(test_concurrent_session_runs) {
  /* Four threads run one 2-thread session at once: their kernels share
   * the provider's pool; every result equals the 1-thread one. */
  int64_t dims[4] = {2, 16, 64, 64};
  model_out want = {0};
  run_model(PAR_MODEL, 1, "x", dims, 4, &want);
  model_session m = {0};
  open_model(PAR_MODEL, 2, dims, 4, &m);
  pthread_t th[4];
  runner_arg args[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (runner_arg){.m = &m, .want = &want};
    ck_assert_int_eq(pthread_create(&th[i], NULL, runner_main, &args[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    ck_assert_int_eq(args[i].failures, 0);
  }
  close_model(&m);
  free_out(&want);
}
END_TEST

START_TEST(test_resnet_small_bit_identical) {
  int64_t dims[4] = {1, 3, 16, 16};
  const char *algos[] = {"direct", "winograd"};
  for (int i = 0; i < 2; i++) {
    g_conv_algo = algos[i];
    check_identical(RESNET_MODEL, "x", dims, 4, 2);
  }
  g_conv_algo = "direct";
}
END_TEST

START_TEST(test_library_threads_follow_setting) {
  /* OpenBLAS (process-wide) and oneDNN's OpenMP (this thread's ICV) use
   * the session's thread count after creating and running a session. */
  int (*omp_max)(void) = NULL;
  void *sym = dlsym(RTLD_DEFAULT, "omp_get_max_threads");
  if (sym)
    memcpy(&omp_max, &sym, sizeof omp_max);
  int64_t dims[4] = {1, 3, 16, 16};
  for (int threads = 3; threads >= 1; threads--) {
    model_out out = {0};
    run_model(RESNET_MODEL, threads, "x", dims, 4, &out);
    free_out(&out);
    ck_assert_int_eq(openblas_get_num_threads(), threads);
    if (omp_max) /* absent in a build without oneDNN */
      ck_assert_int_eq(omp_max(), threads);
  }
}
END_TEST

/* After multithreaded BLAS calls and 2-thread runs (oneDNN on OpenMP) the
 * process is idle: OpenBLAS's workers sleep within ~2^22 cycles
 * (het_kernel_set_blas_threads shortens OpenBLAS's default ~0.1 s
 * spin, which used ~130 ms of CPU here) and libgomp's within its spin
 * count.  Skipped when the user chose OPENBLAS_THREAD_TIMEOUT. */
START_TEST(test_library_threads_idle_after_runs) {
  if (getenv("OPENBLAS_THREAD_TIMEOUT") || getenv("GOTO_THREAD_TIMEOUT"))
    return;
  het_kernel_set_blas_threads(2);
  enum { N = 384 };
  float *a = calloc(N * N, sizeof *a), *b = calloc(N * N, sizeof *b),
        *c = calloc(N * N, sizeof *c);
  ck_assert(a && b && c);
  for (int i = 0; i < N * N; i++)
    a[i] = b[i] = (float)(i % 7);
  for (int round = 0; round < 2; round++) {
    if (round == 1) { /* then whole 2-thread runs, then BLAS again */
      int64_t dims[4] = {1, 3, 16, 16};
      model_out out = {0};
      run_model(RESNET_MODEL, 2, "x", dims, 4, &out);
      free_out(&out);
    }
    for (int i = 0; i < 10; i++)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f,
                  a, N, b, N, 0.0f, c, N);
    double want = 0;
    for (int k = 0; k < N; k++)
      want += (double)a[k] * (double)b[k * N];
    ck_assert_float_eq(c[0], (float)want); /* the BLAS call did run */
    double t0 = cpu_seconds();
    usleep(300 * 1000);
    double used = cpu_seconds() - t0;
    ck_assert_msg(used < 0.020, "round %d: %.1f ms of CPU in the idle 300 "
                  "ms after BLAS calls with 2 threads", round, used * 1e3);
  }
  free(a), free(b), free(c);
}
END_TEST

/* ---- limits ------------------------------------------------------------- */

static void where_fn(void *arg, int64_t b, int64_t e) {
  pthread_t *t = arg;
  (void)b, (void)e;
  *t = pthread_self();
}

START_TEST(test_inline_cases) {
  het_threadpool *one = NULL, *two = NULL;
  ck_assert_int_eq(het_threadpool_create(1, &one), HET_OK);
  ck_assert_int_eq(het_threadpool_create(2, &two), HET_OK);
  het_threadpool *pools[3] = {NULL, one, two};
  for (int p = 0; p < 3; p++) {
    /* One thread, no pool, or a single chunk: fn(ctx, 0, n) right here. */
    pthread_t t = 0;
    if (p < 2)
      het_threadpool_parallel_for(pools[p], 1000000, 1, where_fn, &t);
    else
      het_threadpool_parallel_for(pools[p], 100, 100, where_fn, &t);
    ck_assert(pthread_equal(t, pthread_self()));
    check_cover(pools[p], 5, 10);
    check_cover(pools[p], -3, 1);
  }
  ck_assert_int_eq(het_threadpool_threads(NULL), 1);
  het_threadpool_destroy(one);
  het_threadpool_destroy(two);
}
END_TEST

START_TEST(test_create_destroy_many) {
  /* More threads than CPUs (left unbound), created and joined repeatedly. */
  for (int i = 0; i < 50; i++) {
    het_threadpool *pool = NULL;
    ck_assert_int_eq(het_threadpool_create(1 + i % 9, &pool), HET_OK);
    if (i % 2)
      check_cover(pool, 257, 1);
    het_threadpool_destroy(pool);
  }
  het_threadpool_destroy(NULL);
}
END_TEST

/* ---- errors ------------------------------------------------------------- */

/* Session option cpu.threadpool: auto, pthread and (where the runtime
 * is) openmp open a session; openmp without the runtime and a value that
 * is none of these fail naming the option. */
START_TEST(test_threadpool_option) {
  static const char *const ok[] = {"auto", "pthread", "openmp"};
  for (int i = 0; i < 4; i++) {
    het_env *env = NULL;
    het_session_options *o = NULL;
    het_session *s = NULL;
    ck_assert_int_eq(het_env_create(&env), HET_OK);
    ck_assert_int_eq(het_session_options_create(&o), HET_OK);
    ck_assert_int_eq(het_session_options_set_threads(o, 2), HET_OK);
    ck_assert_int_eq(het_session_options_set(o, "cpu.threadpool",
                                             i < 3 ? ok[i] : "fibers"),
                     HET_OK);
    het_status st = het_session_create(env, PAR_MODEL, o, &s);
    if (i < 2 || (i == 2 && het_threadpool_openmp_available())) {
      ck_assert_msg(st == HET_OK, "%s: %s", ok[i], het_last_error());
    } else {
      ck_assert_int_eq(st, i == 2 ? HET_ERR_UNSUPPORTED
                                  : HET_ERR_INVALID_ARGUMENT);
      ck_assert_msg(strstr(het_last_error(), i == 2 ? "OpenMP"
                                                     : "'cpu.threadpool'"),
                    "%s", het_last_error());
    }
    het_session_destroy(s);
    het_session_options_destroy(o);
    het_env_destroy(env);
  }
}
END_TEST

START_TEST(test_bad_thread_counts) {
  static const int bad[] = {0, -1, HET_THREADPOOL_MAX_THREADS + 1};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    het_threadpool *pool = (het_threadpool *)&bad; /* must stay untouched */
    ck_assert_int_eq(het_threadpool_create(bad[i], &pool),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_eq(pool, (het_threadpool *)&bad);
    ck_assert_int_eq(het_threadpool_create_openmp(bad[i], &pool),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_eq(pool, (het_threadpool *)&bad);
    ck_assert_msg(strstr(het_last_error(), "threads") != NULL, "message: %s",
                  het_last_error());
  }
}
END_TEST

static Suite *threadpool_suite(void) {
  Suite *s = suite_create("threadpool");
  TCase *core = tcase_create("core");
  tcase_set_timeout(core, 120);
  tcase_add_test(core, test_covers_each_index_once);
  tcase_add_test(core, test_workers_take_part);
  tcase_add_test(core, test_concurrent_callers);
  tcase_add_test(core, test_nested_runs_inline);
  tcase_add_test(core, test_openmp_pool);
  tcase_add_test(core, test_idle_workers_use_no_cpu);
  tcase_add_test(core, test_bcast_pool_equals_inline);
  tcase_add_test(core, test_parallel_ops_bit_identical);
  tcase_add_test(core, test_concurrent_session_runs);
  tcase_add_test(core, test_resnet_small_bit_identical);
  tcase_add_test(core, test_library_threads_follow_setting);
  tcase_add_test(core, test_library_threads_idle_after_runs);
  suite_add_tcase(s, core);
  TCase *limits = tcase_create("limits");
  tcase_set_timeout(limits, 60);
  tcase_add_test(limits, test_inline_cases);
  tcase_add_test(limits, test_create_destroy_many);
  suite_add_tcase(s, limits);
  TCase *errors = tcase_create("errors");
  tcase_add_test(errors, test_bad_thread_counts);
  tcase_add_test(errors, test_threadpool_option);
  suite_add_tcase(s, errors);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(threadpool_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
