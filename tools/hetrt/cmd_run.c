/* cmd_run.c — `hetrt run MODEL ...`: one run on inputs read from
 * TensorProto .pb files, through the public API only; prints a summary of
 * every output and where the nodes ran, and optionally writes the outputs
 * as output_K.pb.  Exit status: 0 ok, 1 model/run error, 2 usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

typedef struct run_args {
  cli_common common;
  const char *model;
  const char *output_dir;
  const char *positional[CLI_MAX_ARGS];
  size_t n_positional;
} run_args;

static int run_parse(int argc, char **argv, run_args *a) {
  for (int i = 1; i < argc; i++) {
    bool missing = false;
    const char *v;
    int r = cli_parse_common(argc, argv, &i, &a->common);
    if (r < 0)
      return 2;
    if (r > 0)
      continue;
    if ((v = cli_opt_value(argc, argv, &i, "--output-dir", &missing))) {
      a->output_dir = v;
    } else if (missing) {
      return 2;
    } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "hetrt run: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!a->model) {
      a->model = argv[i];
    } else if (a->n_positional < CLI_MAX_ARGS) {
      a->positional[a->n_positional++] = argv[i];
    } else {
      fprintf(stderr, "hetrt run: too many input files (max %d)\n", CLI_MAX_ARGS);
      return 2;
    }
  }
  if (!a->model) {
    fprintf(stderr, "usage: hetrt run MODEL [FILE.pb ...] [--input NAME=FILE.pb ...] "
                    "[--output-dir DIR] [--providers LIST] [--threads N] [-v]\n");
    return 2;
  }
  return 0;
}

static bool run_make_dir(const char *dir) {
  if (mkdir(dir, 0777) == 0 || errno == EEXIST)
    return true;
  fprintf(stderr, "hetrt run: cannot create %s: %s\n", dir, strerror(errno));
  return false;
}

static bool run_report(het_session *s, het_tensor **outs, size_t n_out, const run_args *a) {
  bool ok = true;
  if (a->output_dir && !run_make_dir(a->output_dir))
    return false;
  for (size_t k = 0; k < n_out; k++) {
    het_value_desc d;
    const char *name = het_session_get_output(s, k, &d) == HET_OK ? d.name : "?";
    char label[32];
    snprintf(label, sizeof label, "output %zu", k);
    cli_print_tensor_summary(stdout, label, name, outs[k]);
    if (a->output_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/output_%zu.pb", a->output_dir, k);
      ok = cli_write_pb(path, outs[k], name) && ok;
      if (ok)
        printf("    written to %s\n", path);
    }
  }
  cli_print_placement(stdout, s, a->common.verbose);
  if (a->common.explain)
    cli_print_explain(stdout, s);
  return ok;
}

int cli_cmd_run(int argc, char **argv) {
  run_args a = {0};
  int rc = run_parse(argc, argv, &a);
  if (rc) {
    cli_common_clear(&a.common);
    return rc;
  }
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  het_tensor **outs = NULL;
  cli_inputs in = {0};
  size_t n_out = 0;
  rc = 1;
  if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "hetrt run: %s\n", het_last_error());
    goto done;
  }
  if (!(opts = cli_make_options(&a.common)))
    goto done;
  if (het_session_create(env, a.model, opts, &s) != HET_OK) {
    fprintf(stderr, "hetrt run: %s: %s\n", a.model, het_last_error());
    goto done;
  }
  cli_print_warnings("run", s);
  if (!cli_bind_inputs(s, &a.common, a.positional, a.n_positional, false, &in))
    goto done;
  n_out = het_session_get_output_count(s);
  outs = calloc(n_out ? n_out : 1, sizeof *outs);
  if (!outs) {
    fprintf(stderr, "hetrt run: out of memory\n");
    goto done;
  }
  double t0 = cli_now_ms();
  if (het_session_run(s, in.names, in.tensors, in.n, NULL, n_out, outs) != HET_OK) {
    fprintf(stderr, "hetrt run: %s\n", het_last_error());
    goto done;
  }
  printf("ran %s in %.3f ms\n", a.model, cli_now_ms() - t0);
  rc = run_report(s, outs, n_out, &a) ? 0 : 1;
done:
  for (size_t k = 0; outs && k < n_out; k++)
    het_tensor_destroy(outs[k]);
  free(outs);
  cli_inputs_clear(&in);
  het_session_destroy(s);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}
