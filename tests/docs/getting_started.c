/* getting_started.c — load a model, run it once on made-up inputs, print
 * its outputs, where every node ran and the placement report.
 * Usage: getting_started MODEL.onnx [PROVIDERS [DEVICE_PROFILES]]
 *   e.g. getting_started cnn.onnx emu,cpu configs/devices/npu.yaml
 */
#include <hetrt/hetrt.h>

#include <stdio.h>
#include <stdlib.h>

#define MAX_IO 16

static int check(het_status st, const char *what) {
  if (st != HET_OK)
    fprintf(stderr, "%s: %s: %s\n", what, het_status_str(st), het_last_error());
  return st == HET_OK;
}

/* A float input of the model's shape (symbolic dims set to 1), filled
 * with a ramp. */
static het_tensor *make_input(const het_value_desc *d) {
  int64_t dims[HET_MAX_RANK];
  for (int i = 0; i < d->rank; i++)
    dims[i] = d->dims[i] >= 0 ? d->dims[i] : 1;
  het_tensor *t = NULL;
  if (d->dtype != HET_DTYPE_FLOAT32 || d->rank < 0 ||
      !check(het_tensor_create(d->dtype, dims, d->rank, &t), d->name))
    return NULL;
  float *x = het_tensor_get_data(t);
  for (int64_t i = 0; i < het_tensor_get_count(t); i++)
    x[i] = (float)(i % 17) / 17.0f;
  return t;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 4) {
    fprintf(stderr, "usage: %s MODEL.onnx [PROVIDERS [DEVICE_PROFILES]]\n", argv[0]);
    return 2;
  }
  int rc = 1;
  het_env *env = NULL;
  het_session_options *options = NULL;
  het_session *session = NULL;
  const char *names[MAX_IO];
  het_tensor *inputs[MAX_IO] = {NULL}, *outputs[MAX_IO] = {NULL};
  size_t n_in = 0, n_out = 0;
  char *report = NULL;

  /* 1. An env holds the providers and devices its sessions share. */
  if (!check(het_env_create(&env), "env"))
    goto done;
  printf("hetrt %d.%d.%d, providers built: %s\n", HET_VERSION_MAJOR,
         HET_VERSION_MINOR, HET_VERSION_PATCH, het_env_get_built_providers(env));

  /* 2. Options: providers in priority order, device profiles, algorithm. */
  if (!check(het_session_options_create(&options), "options") ||
      (argc > 2 && !check(het_session_options_set(options, "providers", argv[2]),
                          "providers")) ||
      (argc > 3 && !check(het_session_options_set(options, "devices", argv[3]),
                          "devices")) ||
      !check(het_session_options_set(options, "algorithm", "cost"), "algorithm"))
    goto done;

  /* 3. The session loads, partitions and compiles the model. */
  if (!check(het_session_create(env, argv[1], options, &session), argv[1]))
    goto done;

  /* 4. One input tensor per graph input. */
  n_in = het_session_get_input_count(session);
  n_out = het_session_get_output_count(session);
  if (n_in > MAX_IO || n_out > MAX_IO) {
    fprintf(stderr, "%s: more than %d inputs or outputs\n", argv[1], MAX_IO);
    goto done;
  }
  for (size_t i = 0; i < n_in; i++) {
    het_value_desc d;
    if (!check(het_session_get_input(session, i, &d), "input") ||
        !(inputs[i] = make_input(&d))) {
      fprintf(stderr, "input %zu: float32 inputs of known rank only\n", i);
      goto done;
    }
    names[i] = d.name;
  }

  /* 5. Run: outputs in graph order, new tensors that we own. */
  if (!check(het_session_run(session, names, inputs, n_in, NULL, n_out, outputs),
             "run"))
    goto done;
  for (size_t k = 0; k < n_out; k++) {
    het_value_desc d;
    int64_t dims[HET_MAX_RANK];
    int rank = het_tensor_get_dims(outputs[k], dims, HET_MAX_RANK);
    het_session_get_output(session, k, &d);
    printf("output %s: %s [", d.name, het_dtype_str(het_tensor_get_dtype(outputs[k])));
    for (int i = 0; i < rank; i++)
      printf("%s%lld", i ? ", " : "", (long long)dims[i]);
    printf("]");
    if (het_tensor_get_dtype(outputs[k]) == HET_DTYPE_FLOAT32 &&
        het_tensor_get_count(outputs[k]) > 0)
      printf(" first %g", ((const float *)het_tensor_get_data(outputs[k]))[0]);
    printf("\n");
  }

  /* 6. Where every node ran, and why. */
  for (size_t i = 0; i < het_session_get_node_count(session); i++) {
    het_node_placement p;
    if (check(het_session_get_placement(session, i, &p), "placement"))
      printf("  %-24s %-18s %-6s %s\n", p.name, p.op_type, p.provider, p.reason);
  }

  /* 7. The whole placement report ("text", "json", "dot" or "html"). */
  if (!check(het_session_explain(session, "text", &report), "explain"))
    goto done;
  fputs(report, stdout);
  rc = 0;

done:
  het_string_destroy(report);
  for (size_t i = 0; i < MAX_IO; i++) {
    het_tensor_destroy(inputs[i]);
    het_tensor_destroy(outputs[i]);
  }
  het_session_destroy(session);
  het_session_options_destroy(options);
  het_env_destroy(env);
  return rc;
}
