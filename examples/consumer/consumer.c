/* consumer.c — a program built outside hetrt's tree against an installed
 * hetrt (examples/consumer/CMakeLists.txt, or pkg-config).  It runs a model
 * with one float input and one float output of the same shape that computes
 * Relu — the ONNX backend suite's test_relu/model.onnx — on an input ramp,
 * checks every output element and prints where each node ran.
 * Usage: consumer MODEL.onnx; exits 0 when the outputs are right. */
#include <hetrt/hetrt.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(const char *what, het_status st) {
  fprintf(stderr, "consumer: %s: %s: %s\n", what, het_status_str(st),
          het_last_error());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer MODEL.onnx\n");
    return 2;
  }
  printf("hetrt %d.%d.%d\n", HET_VERSION_MAJOR, HET_VERSION_MINOR,
         HET_VERSION_PATCH);
  het_env *env = NULL;
  het_session *session = NULL;
  het_tensor *x = NULL, *y = NULL;
  int rc = 1;
  het_status st = het_env_create(&env);
  if (st != HET_OK)
    return fail("het_env_create", st);
  printf("providers built in: %s\n", het_env_get_built_providers(env));
  st = het_session_create(env, argv[1], NULL, &session);
  if (st != HET_OK) {
    rc = fail(argv[1], st);
    goto out;
  }
  het_value_desc in;
  st = het_session_get_input(session, 0, &in);
  if (st != HET_OK || in.dtype != HET_DTYPE_FLOAT32 || in.rank < 1) {
    fprintf(stderr, "consumer: %s: wants one float input of known rank\n",
            argv[1]);
    goto out;
  }
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < in.rank; i++)
    dims[i] = in.dims[i] > 0 ? in.dims[i] : 2; /* symbolic dims: 2 */
  st = het_tensor_create(HET_DTYPE_FLOAT32, dims, in.rank, &x);
  if (st != HET_OK) {
    rc = fail("het_tensor_create", st);
    goto out;
  }
  float *xs = het_tensor_get_data(x);
  int64_t n = het_tensor_get_count(x);
  for (int64_t i = 0; i < n; i++)
    xs[i] = (float)(i - n / 2) / 8.0f;
  const char *names[] = {in.name};
  st = het_session_run(session, names, &x, 1, NULL, 1, &y);
  if (st != HET_OK) {
    rc = fail("het_session_run", st);
    goto out;
  }
  if (het_tensor_get_count(y) != n || het_tensor_get_dtype(y) != HET_DTYPE_FLOAT32) {
    fprintf(stderr, "consumer: output is not x's shape and float\n");
    goto out;
  }
  const float *ys = het_tensor_get_data(y);
  for (int64_t i = 0; i < n; i++) {
    float want = xs[i] > 0.0f ? xs[i] : 0.0f;
    if (ys[i] != want) {
      fprintf(stderr, "consumer: y[%lld] = %g, want %g\n", (long long)i,
              ys[i], want);
      goto out;
    }
  }
  for (size_t i = 0; i < het_session_get_node_count(session); i++) {
    het_node_placement p;
    if (het_session_get_placement(session, i, &p) == HET_OK)
      printf("node %s (%s) on %s: %s\n", p.name, p.op_type, p.provider,
             p.reason);
  }
  printf("ok: %lld outputs checked\n", (long long)n);
  rc = 0;
out:
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_session_destroy(session);
  het_env_destroy(env);
  return rc;
}
