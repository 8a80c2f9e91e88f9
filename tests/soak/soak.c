/* soak.c — one session run from many threads for a bounded time
 * (docs/reliability.md).
 *
 *   soak MODEL [--threads T] [--seconds S] [--providers LIST]
 *        [--devices PROFILES] [--set KEY=VALUE]... [--no-rss-check]
 *
 * MODEL's first input must be float32 with symbolic dims (the soak model,
 * tests/data/soak/model.onnx, is [N, 3, H, W]): each symbolic dim takes
 * values from SOAK_BATCH (the first) and SOAK_SPATIAL (the others), which
 * makes SOAK_SHAPES input shapes.
 * The outputs of each shape are first computed by one thread alone; then T
 * threads (default 8) run the one session for S seconds (default 60), each
 * cycling through the shapes in its own order, and every output must equal
 * the single-threaded one bit for bit.  The resident set is sampled once a
 * second: after the warm-up (the first quarter of the time, at least 2 s)
 * it may not grow by more than SOAK_RSS_SLACK_MIB (skipped with
 * --no-rss-check, which the sanitizer builds pass: their allocators keep
 * freed memory in quarantine).  Exit 0 when every run matched.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hetrt/hetrt.h"

#define SOAK_MAX_THREADS 64
#define SOAK_MAX_OUT 8
static const int64_t SOAK_BATCH[] = {1, 2, 3, 4};
static const int64_t SOAK_SPATIAL[] = {8, 12, 16, 20};
#define SOAK_SHAPES 4
#define SOAK_RSS_SLACK_MIB 16.0

typedef struct soak_shape {
  het_tensor *in;
  het_tensor *ref[SOAK_MAX_OUT];
} soak_shape;

typedef struct soak {
  het_session *s;
  const char *in_name;
  size_t n_out;
  soak_shape shapes[SOAK_SHAPES];
  atomic_bool stop;
  atomic_long runs, mismatches, errors;
} soak;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double rss_mib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
    resident = 0;
  fclose(f);
  return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

/* Input of shape k: the model's dims with its symbolic ones set (a
 * batch-like first dim from SOAK_BATCH, later ones from SOAK_SPATIAL),
 * values from a fixed pattern. */
static het_tensor *soak_input(const het_value_desc *d, int k) {
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < d->rank; i++)
    dims[i] = d->dims[i] >= 0 ? d->dims[i]
              : i == 0        ? SOAK_BATCH[k]
                              : SOAK_SPATIAL[(k + i) % SOAK_SHAPES];
  het_tensor *t = NULL;
  if (het_tensor_create(HET_DTYPE_FLOAT32, dims, d->rank, &t) != HET_OK)
    return NULL;
  float *p = het_tensor_get_data(t);
  for (int64_t i = 0; i < het_tensor_get_count(t); i++)
    p[i] = (float)((i * 7919 + k * 104729) % 2001) / 1000.f - 1.f;
  return t;
}

static bool soak_same(het_tensor *a, het_tensor *b) {
  size_t n = het_tensor_get_nbytes(a);
  return n == het_tensor_get_nbytes(b) &&
         memcmp(het_tensor_get_data(a), het_tensor_get_data(b), n) == 0;
}

typedef struct soak_worker {
  soak *k;
  int id;
} soak_worker;

static void *soak_thread(void *arg) {
  soak_worker *w = arg;
  soak *k = w->k;
  for (long i = 0; !atomic_load(&k->stop); i++) {
    soak_shape *sh = &k->shapes[(i * 3 + w->id) % SOAK_SHAPES];
    het_tensor *out[SOAK_MAX_OUT] = {0};
    het_status st = het_session_run(k->s, &k->in_name, &sh->in, 1, NULL,
                                    k->n_out, out);
    if (st != HET_OK) {
      if (atomic_fetch_add(&k->errors, 1) < 5)
        fprintf(stderr, "soak: thread %d: run failed: %s\n", w->id,
                het_last_error());
      continue;
    }
    for (size_t o = 0; o < k->n_out; o++) {
      if (!soak_same(out[o], sh->ref[o]) &&
          atomic_fetch_add(&k->mismatches, 1) < 5)
        fprintf(stderr, "soak: thread %d: output %zu differs from the "
                        "single-threaded run\n", w->id, o);
      het_tensor_destroy(out[o]);
    }
    atomic_fetch_add(&k->runs, 1);
  }
  return NULL;
}

static het_status soak_open(het_env *env, const char *model, int argc,
                            char **argv, het_session **out) {
  het_session_options *o = NULL;
  het_status st = het_session_options_create(&o);
  if (st == HET_OK)
    st = het_session_options_set_threads(o, 1);
  for (int i = 2; st == HET_OK && i + 1 < argc; i++) {
    const char *key = strcmp(argv[i], "--providers") == 0 ? "providers"
                      : strcmp(argv[i], "--devices") == 0 ? "devices"
                                                          : NULL;
    if (key) {
      st = het_session_options_set(o, key, argv[++i]);
    } else if (strcmp(argv[i], "--set") == 0) {
      const char *kv = argv[++i], *eq = strchr(kv, '=');
      char name[64];
      if (!eq) {
        fprintf(stderr, "soak: --set %s: expected KEY=VALUE\n", kv);
        st = HET_ERR_INVALID_ARGUMENT;
        break;
      }
      snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
      st = het_session_options_set(o, name, eq + 1);
    }
  }
  if (st == HET_OK)
    st = het_session_create(env, model, o, out);
  het_session_options_destroy(o);
  return st;
}

int main(int argc, char **argv) {
  int threads = 8;
  double seconds = 60;
  bool rss_check = true;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
      seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--no-rss-check") == 0)
      rss_check = false;
    else if ((strcmp(argv[i], "--providers") == 0 ||
              strcmp(argv[i], "--devices") == 0 ||
              strcmp(argv[i], "--set") == 0) && i + 1 < argc)
      i++;
    else
      argc = 0; /* usage */
  }
  if (argc < 2 || threads < 1 || threads > SOAK_MAX_THREADS || !(seconds > 0)) {
    fprintf(stderr, "usage: soak MODEL [--threads 1..%d] [--seconds S] "
                    "[--providers LIST] [--devices PROFILES] "
                    "[--set KEY=VALUE]... [--no-rss-check]\n",
            SOAK_MAX_THREADS);
    return 2;
  }
  het_env *env = NULL;
  soak k = {0};
  het_value_desc d;
  if (het_env_create(&env) != HET_OK ||
      soak_open(env, argv[1], argc, argv, &k.s) != HET_OK ||
      het_session_get_input_count(k.s) != 1 ||
      het_session_get_input(k.s, 0, &d) != HET_OK ||
      d.dtype != HET_DTYPE_FLOAT32) {
    fprintf(stderr, "soak: %s: %s\n", argv[1],
            *het_last_error() ? het_last_error()
                              : "needs one float32 input");
    return 1;
  }
  k.in_name = d.name;
  k.n_out = het_session_get_output_count(k.s);
  if (k.n_out > SOAK_MAX_OUT) {
    fprintf(stderr, "soak: over %d outputs\n", SOAK_MAX_OUT);
    return 1;
  }
  for (int i = 0; i < SOAK_SHAPES; i++) {
    soak_shape *sh = &k.shapes[i];
    if (!(sh->in = soak_input(&d, i)) ||
        het_session_run(k.s, &k.in_name, &sh->in, 1, NULL, k.n_out,
                        sh->ref) != HET_OK) {
      fprintf(stderr, "soak: shape %d: %s\n", i, het_last_error());
      return 1;
    }
  }

  pthread_t tid[SOAK_MAX_THREADS];
  soak_worker w[SOAK_MAX_THREADS];
  double t0 = now_s(), warm = seconds / 4 > 2 ? seconds / 4 : 2;
  double rss_warm = 0, rss_max_after = 0;
  for (int i = 0; i < threads; i++) {
    w[i] = (soak_worker){&k, i};
    if (pthread_create(&tid[i], NULL, soak_thread, &w[i]) != 0) {
      fprintf(stderr, "soak: cannot start thread %d\n", i);
      atomic_store(&k.stop, true);
      threads = i;
      break;
    }
  }
  while (!atomic_load(&k.stop) && now_s() - t0 < seconds) {
    struct timespec second = {1, 0};
    nanosleep(&second, NULL);
    double t = now_s() - t0, rss = rss_mib();
    if (t <= warm || rss_warm == 0)
      rss_warm = rss;
    else if (rss > rss_max_after)
      rss_max_after = rss;
  }
  atomic_store(&k.stop, true);
  for (int i = 0; i < threads; i++)
    pthread_join(tid[i], NULL);
  double elapsed = now_s() - t0;

  long runs = atomic_load(&k.runs), bad = atomic_load(&k.mismatches),
       errors = atomic_load(&k.errors);
  printf("soak: %s: %d threads, %.0f s, %ld runs (%.0f/s), %ld mismatches, "
         "%ld errors; RSS %.1f MiB after warm-up, at most %.1f MiB later\n",
         argv[1], threads, elapsed, runs, (double)runs / elapsed, bad, errors,
         rss_warm, rss_max_after);
  int rc = 0;
  if (bad || errors || runs == 0)
    rc = 1;
  if (rss_check && rss_max_after > rss_warm + SOAK_RSS_SLACK_MIB) {
    fprintf(stderr, "soak: RSS grew by %.1f MiB after the warm-up (over "
                    "%.0f MiB)\n", rss_max_after - rss_warm,
            SOAK_RSS_SLACK_MIB);
    rc = 1;
  }
  for (int i = 0; i < SOAK_SHAPES; i++) {
    het_tensor_destroy(k.shapes[i].in);
    for (size_t o = 0; o < k.n_out; o++)
      het_tensor_destroy(k.shapes[i].ref[o]);
  }
  het_session_destroy(k.s);
  het_env_destroy(env);
  return rc;
}
