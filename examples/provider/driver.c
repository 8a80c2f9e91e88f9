/* driver.c — registers the toy provider, opens model.onnx (y =
 * Sigmoid(Add(Relu(x), b))) with providers {"toy", "cpu"}, prints where
 * each node runs, runs it under both executors (inline streams, then
 * worker-thread streams) and checks y against a reference computed here.
 * Exits 0 when Relu and Add ran on the toy, Sigmoid on the CPU, and every
 * output element is right.
 * Usage: toy_driver MODEL.onnx
 */
#include <hetrt/hetrt.h>
#include <hetrt/provider.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "toy_provider.h"

#define ROWS 4
#define COLS 64
#define N (ROWS * COLS)

static int failures;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAILED: %s\n", what);
    failures++;
  }
}

static int ok(het_status st, const char *what) {
  if (st != HET_OK)
    fprintf(stderr, "%s: %s: %s\n", what, het_status_str(st), het_last_error());
  return st == HET_OK;
}

/* The provider the session placed node `name` on, or "". */
static const char *placed_on(const het_session *s, const char *name) {
  for (size_t i = 0; i < het_session_get_node_count(s); i++) {
    het_node_placement p;
    if (het_session_get_placement(s, i, &p) == HET_OK && strcmp(p.name, name) == 0)
      return p.provider;
  }
  return "";
}

/* A session of model on {"toy", "cpu"}; the status of het_session_create. */
static het_status open_session(het_env *env, const char *model,
                               const char *executor, const char *bandwidth,
                               het_session **s) {
  static const char *const providers[] = {"toy", "cpu"};
  het_session_options *o = NULL;
  het_status st = het_session_options_create(&o);
  if (st == HET_OK)
    st = het_session_options_set_providers(o, providers, 2);
  if (st == HET_OK) /* first capable provider wins: Relu and Add go to toy */
    st = het_session_options_set(o, "algorithm", "priority");
  if (st == HET_OK)
    st = het_session_options_set(o, "executor", executor);
  if (st == HET_OK) /* "toy.<key>" options reach the toy's create slot */
    st = het_session_options_set(o, "toy.bandwidth", bandwidth);
  if (st == HET_OK)
    st = het_session_create(env, model, o, s);
  het_session_options_destroy(o);
  return st;
}

/* Two runs of s on x and b, each output checked against the reference. */
static void run_and_check(het_session *s, const char *executor) {
  static float x[N], b[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13 - 6) * 0.25f;
    b[i] = (float)(i % 5 - 2) * 0.5f;
  }
  const int64_t dims[2] = {ROWS, COLS};
  het_tensor *in[2] = {NULL, NULL}, *y = NULL;
  const char *names[2] = {"x", "b"};
  if (!ok(het_tensor_create_over(HET_DTYPE_FLOAT32, dims, 2, x, sizeof x, &in[0]), "x") ||
      !ok(het_tensor_create_over(HET_DTYPE_FLOAT32, dims, 2, b, sizeof b, &in[1]), "b")) {
    failures++;
    goto done;
  }
  for (int run = 0; run < 2; run++) {
    long before = toy_provider_nodes_run();
    if (!ok(het_session_run(s, names, in, 2, NULL, 1, &y), "run")) {
      failures++;
      break;
    }
    const float *out = het_tensor_get_data(y);
    double worst = 0;
    for (int i = 0; i < N; i++) {
      double ref = 1.0 / (1.0 + exp(-((x[i] > 0 ? x[i] : 0) + b[i])));
      worst = fmax(worst, fabs(out[i] - ref));
    }
    printf("%s run %d: max |y - reference| = %.3g, toy ran %ld nodes\n", executor,
           run, worst, toy_provider_nodes_run() - before);
    expect(worst <= 1e-6, "y differs from the reference");
    expect(toy_provider_nodes_run() - before == 2, "the toy did not run Relu and Add");
    het_tensor_destroy(y);
    y = NULL;
  }
done:
  het_tensor_destroy(in[0]);
  het_tensor_destroy(in[1]);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: toy_driver MODEL.onnx\n");
    return 2;
  }
  het_env *env = NULL;
  if (!ok(het_env_create(&env), "env") ||
      !ok(het_env_register_provider(env, &toy_provider), "register toy"))
    return 1;

  const char *executors[] = {"sequential", "streams"};
  for (int e = 0; e < 2; e++) {
    het_session *s = NULL;
    if (!ok(open_session(env, argv[1], executors[e], "8e9", &s), argv[1])) {
      failures++;
      continue;
    }
    if (e == 0) {
      for (size_t i = 0; i < het_session_get_node_count(s); i++) {
        het_node_placement p;
        if (ok(het_session_get_placement(s, i, &p), "placement"))
          printf("  %-8s %-8s %-4s %s\n", p.name, p.op_type, p.provider, p.reason);
      }
      char *report = NULL;
      if (ok(het_session_explain(s, "text", &report), "explain"))
        fputs(report, stdout);
      het_string_destroy(report);
    }
    expect(strcmp(placed_on(s, "relu"), "toy") == 0, "relu is not on toy");
    expect(strcmp(placed_on(s, "add"), "toy") == 0, "add is not on toy");
    expect(strcmp(placed_on(s, "sigmoid"), "cpu") == 0, "sigmoid is not on cpu");
    run_and_check(s, executors[e]);
    het_session_destroy(s);
  }

  /* A bad provider option fails session creation with the toy's message. */
  het_session *bad = NULL;
  het_status st = open_session(env, argv[1], "sequential", "fast", &bad);
  printf("toy.bandwidth=fast: %s: %s\n", het_status_str(st), het_last_error());
  expect(st == HET_ERR_INVALID_ARGUMENT && strstr(het_last_error(), "bandwidth=fast"),
         "a bad toy option was not refused with its name");
  het_session_destroy(bad);

  het_env_destroy(env);
  printf("%s\n", failures ? "toy_driver: FAILED" : "toy_driver: ok");
  return failures ? 1 : 0;
}
