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

#define RUN_PROG "hetrt run"

enum { RUN_OUTPUT_DIR = 1 };

static const cli_option run_options[] = {
    {.id = RUN_OUTPUT_DIR, .name = "--output-dir", .kind = CLI_ARG_TEXT, .metavar = "DIR",
     .help = "write each output as DIR/output_K.pb (TensorProto)"},
    {0},
};

static int run_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                      const cli_value *v) {
  run_args *a = ctx;
  if (opt) {
    a->output_dir = v->text;
  } else if (!a->model) {
    a->model = v->text;
  } else if (a->n_positional < CLI_MAX_ARGS) {
    a->positional[a->n_positional++] = v->text;
  } else {
    return cli_usage_error(cmd->prog, "more than %d input files", CLI_MAX_ARGS);
  }
  return 0;
}

/* Returns CLI_CONTINUE or the exit status. */
static int run_parse(int argc, char **argv, run_args *a) {
  const cli_group groups[] = {
      {"run options", run_options, run_handle, a},
      {"inputs", cli_input_file_options, cli_common_handle, &a->common},
      {"report", cli_report_options, cli_common_handle, &a->common},
      {"session options", cli_session_options, cli_common_handle, &a->common},
  };
  const cli_command cmd = {
      .prog = RUN_PROG,
      .synopsis = "MODEL [FILE.pb ...] [options]",
      .about = "Runs MODEL once.  Inputs are TensorProto .pb files: --input NAME=FILE.pb\n"
               "binds by name, bare FILE.pb arguments fill the remaining inputs in\n"
               "graph order; an input not given is an error naming it.  Prints every\n"
               "output (dtype, shape, min/max/mean, first values) and how many nodes\n"
               "each provider runs.",
      .examples = "  hetrt run model.onnx input_0.pb --output-dir out\n"
                  "  hetrt run model.onnx --input x=x.pb --providers emu,cpu \\\n"
                  "      --devices configs/devices/npu.yaml --explain\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  int rc = cli_parse(&cmd, argc, argv);
  if (rc == CLI_CONTINUE && !a->model)
    rc = cli_usage_error(RUN_PROG, "no MODEL given");
  return rc;
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
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  het_tensor **outs = NULL;
  cli_inputs in = {0};
  size_t n_out = 0;
  int rc = run_parse(argc, argv, &a);
  if (rc != CLI_CONTINUE || (rc = cli_make_options(&a.common, RUN_PROG, &opts)) != 0)
    goto done;
  rc = CLI_EXIT_FAILURE;
  if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "hetrt run: %s\n", het_last_error());
    goto done;
  }
  if (het_session_create(env, a.model, opts, &s) != HET_OK) {
    cli_print_load_error(RUN_PROG, a.model);
    goto done;
  }
  cli_print_warnings(RUN_PROG, s);
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
  rc = run_report(s, outs, n_out, &a) ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
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
