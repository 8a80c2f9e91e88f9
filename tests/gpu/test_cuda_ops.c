/* test_cuda_ops.c — the CUDA provider on a GPU (CTest label `gpu`): every
 * op it claims (tests/data/cuda/gen_models.py) runs on cuda next to the
 * CPU under both executors and matches the CPU-only outputs (relative
 * 1e-5), also from 4 threads at once, bit for bit against a single run.
 * Without a usable GPU it prints why and exits 77 (skipped), never a pass.
 */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hetrt/hetrt.h"

/* The test models: HETRT_TEST_DATA from the environment (a relocated
 * bundle, scripts/gpu-check.sh) or the source tree's. */
static const char *data_dir(void) {
  const char *d = getenv("HETRT_TEST_DATA");
  return d && *d ? d : HETRT_TEST_DATA;
}

static int failures;
#define EXPECT(cond, ...)                                  \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fputc('\n', stderr);                                 \
      failures++;                                          \
    }                                                      \
  } while (0)

static het_status open_session(het_env *env, const char *model,
                               const char *providers, const char *executor,
                               het_session **out) {
  het_session_options *o;
  if (het_session_options_create(&o) != HET_OK)
    return HET_ERR_OUT_OF_MEMORY;
  het_status st = het_session_options_set(o, "providers", providers);
  if (st == HET_OK)
    st = het_session_options_set(o, "executor", executor);
  char path[512];
  snprintf(path, sizeof path, "%s/cuda/%s", data_dir(), model);
  if (st == HET_OK)
    st = het_session_create(env, path, o, out);
  het_session_options_destroy(o);
  return st;
}

/* Inputs with a fixed pattern; inputs named col stay in [0.5, 1.5] (they
 * divide). */
static int make_inputs(het_session *s, het_tensor **in, const char **names) {
  int n = (int)het_session_get_input_count(s);
  for (int i = 0; i < n; i++) {
    het_value_desc d;
    het_session_get_input(s, (size_t)i, &d);
    names[i] = d.name;
    het_tensor_create(HET_DTYPE_FLOAT32, d.dims, d.rank, &in[i]);
    float *p = het_tensor_get_data(in[i]);
    bool divisor = strcmp(d.name, "col") == 0;
    for (int64_t k = 0; k < het_tensor_get_count(in[i]); k++) {
      float v = (float)sin(0.7 * (double)(k + 13 * i));
      p[k] = divisor ? 1.0f + 0.5f * v : 2.0f * v;
    }
  }
  return n;
}

static het_tensor *run_model(het_session *s) {
  het_tensor *in[4], *y = NULL;
  const char *names[4];
  int n = make_inputs(s, in, names);
  het_status st = het_session_run(s, names, in, (size_t)n, NULL, 1, &y);
  EXPECT(st == HET_OK, "run: %s", het_last_error());
  for (int i = 0; i < n; i++)
    het_tensor_destroy(in[i]);
  return st == HET_OK ? y : NULL;
}

typedef struct worker {
  het_session *s;
  const het_tensor *want;
  int bad;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  for (int r = 0; r < 25; r++) {
    het_tensor *y = run_model(w->s);
    if (!y || memcmp(het_tensor_get_data(y),
                     het_tensor_get_data((het_tensor *)w->want),
                     het_tensor_get_nbytes(y)) != 0)
      w->bad++;
    het_tensor_destroy(y);
  }
  return NULL;
}

static void check_model(het_env *env, const char *model, const char *exec) {
  het_session *ref, *s;
  if (open_session(env, model, "cpu", exec, &ref) != HET_OK ||
      open_session(env, model, "cuda,cpu", exec, &s) != HET_OK) {
    EXPECT(0, "%s: %s", model, het_last_error());
    return;
  }
  int on_cuda = 0, total = 0;
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    het_session_get_placement(s, i, &p);
    if (strcmp(p.op_type, "Copy") == 0)
      continue;
    total++;
    on_cuda += strcmp(p.provider, "cuda") == 0;
    EXPECT(strcmp(p.provider, "cuda") == 0, "%s: node %s (%s) on %s: %s",
           model, p.name, p.op_type, p.provider, p.reason);
  }
  het_tensor *want = run_model(ref), *got = run_model(s);
  if (want && got) {
    const float *a = het_tensor_get_data(want), *b = het_tensor_get_data(got);
    double worst = 0;
    for (int64_t i = 0; i < het_tensor_get_count(want); i++) {
      double e = fabs((double)a[i] - b[i]) / (fabs((double)a[i]) + 1e-6);
      worst = e > worst ? e : worst;
    }
    EXPECT(worst <= 1e-5, "%s (%s): relative error %.3g", model, exec, worst);
    printf("%s executor=%s: %d/%d nodes on cuda, max relative error %.3g\n",
           model, exec, on_cuda, total, worst);
    worker w[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
      w[t] = (worker){s, got, 0};
      pthread_create(&th[t], NULL, worker_main, &w[t]);
    }
    for (int t = 0; t < 4; t++) {
      pthread_join(th[t], NULL);
      EXPECT(w[t].bad == 0, "%s: %d of 25 concurrent runs differ", model,
             w[t].bad);
    }
  }
  het_tensor_destroy(want);
  het_tensor_destroy(got);
  het_session_destroy(s);
  het_session_destroy(ref);
}

int main(void) {
  het_env *env;
  if (het_env_create(&env) != HET_OK)
    return 1;
  het_session *probe = NULL;
  het_status st = open_session(env, "ops_matmul.onnx", "cuda", "sequential",
                               &probe);
  if (st == HET_ERR_NO_DEVICE || st == HET_ERR_NOT_BUILT) {
    printf("test_cuda_ops: skipped: %s\n", het_last_error());
    het_env_destroy(env);
    return 77;
  }
  het_session_destroy(probe);
  static const char *const models[] = {"ops_matmul.onnx",
                                       "ops_elementwise.onnx"};
  static const char *const execs[] = {"sequential", "streams"};
  for (int m = 0; m < 2; m++)
    for (int e = 0; e < 2; e++)
      check_model(env, models[m], execs[e]);
  het_env_destroy(env);
  printf("test_cuda_ops: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
