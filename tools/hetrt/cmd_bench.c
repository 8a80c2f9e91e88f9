/* cmd_bench.c — `hetrt bench MODEL ...`: times session creation, then
 * warm-up and timed runs on given (--input, positional .pb) or generated
 * inputs, through the public API.  Prints per-run statistics and ends with
 * the line "median_ms=X".  `hetrt profile MODEL [-o TRACE.json]` is the
 * same with the session's trace on: it writes a Chrome trace of the timed
 * runs and prints the per-op summary table first.  Exit status: 0 ok,
 * 1 model/run error, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct bench_args {
  cli_common common;
  const char *prog;      /* "hetrt bench" or "hetrt profile" */
  const char *model;
  long warmup, runs;
  bool profile;          /* `hetrt profile` */
  const char *trace_out; /* -o FILE (profile) */
  const char *save_times; /* --save-node-times FILE */
  const char *positional[CLI_MAX_ARGS];
  size_t n_positional;
} bench_args;

enum { BENCH_OUTPUT = 1, BENCH_WARMUP, BENCH_RUNS, BENCH_SAVE_TIMES };

/* profile's table; bench's starts one entry later, without -o. */
static const cli_option bench_options[] = {
    {.id = BENCH_OUTPUT, .name = "--output", .alias = "-o", .kind = CLI_ARG_TEXT,
     .metavar = "TRACE.json", .help = "where the Chrome trace goes (default trace.json)"},
    {.id = BENCH_WARMUP, .name = "--warmup", .kind = CLI_ARG_INT, .metavar = "N", .min = 0,
     .help = "untimed runs first (default: bench 3, profile 1)"},
    {.id = BENCH_RUNS, .name = "--runs", .kind = CLI_ARG_INT, .metavar = "N", .min = 1,
     .help = "timed runs (default: bench 20, profile 5)"},
    {.id = BENCH_SAVE_TIMES, .name = "--save-node-times", .kind = CLI_ARG_TEXT,
     .metavar = "FILE",
     .help = "time every node and write the means to FILE, for\n--node-times"},
    {0},
};

static int bench_handle(void *ctx, const cli_command *cmd, const cli_option *opt,
                        const cli_value *v) {
  bench_args *a = ctx;
  if (!opt) {
    if (!a->model)
      a->model = v->text;
    else if (a->n_positional < CLI_MAX_ARGS)
      a->positional[a->n_positional++] = v->text;
    else
      return cli_usage_error(cmd->prog, "more than %d input files", CLI_MAX_ARGS);
    return 0;
  }
  switch (opt->id) {
  case BENCH_OUTPUT: a->trace_out = v->text; break;
  case BENCH_WARMUP: a->warmup = v->number; break;
  case BENCH_RUNS: a->runs = v->number; break;
  case BENCH_SAVE_TIMES: a->save_times = v->text; break;
  }
  return 0;
}

/* Returns CLI_CONTINUE or the exit status. */
static int bench_parse(int argc, char **argv, bench_args *a) {
  const cli_group groups[] = {
      {a->profile ? "profile options" : "bench options",
       a->profile ? bench_options : bench_options + 1, bench_handle, a},
      {"inputs", cli_input_options, cli_common_handle, &a->common},
      {"report", cli_report_options, cli_common_handle, &a->common},
      {"session options", cli_session_options, cli_common_handle, &a->common},
  };
  cli_command cmd = {
      .prog = a->prog,
      .synopsis = a->profile ? "MODEL [FILE.pb ...] [-o TRACE.json] [options]"
                             : "MODEL [FILE.pb ...] [options]",
      .about = "Times session creation, then --warmup untimed and --runs timed runs on\n"
               "the given inputs, generating the others (random normal floats, zero\n"
               "integers; symbolic dimensions 1 unless --dim).  Prints every run's time,\n"
               "min/mean/median/p90/max and, as the last line, median_ms=X.",
      .examples = "  hetrt bench model.onnx --threads 4 --runs 50\n"
                  "  hetrt bench model.onnx --dim N=8 --save-node-times times.tsv\n",
      .groups = groups,
      .n_groups = sizeof groups / sizeof groups[0],
  };
  if (a->profile) {
    cmd.about = "Runs as 'hetrt bench' does with the session's trace on and writes a\n"
                "Chrome trace (chrome://tracing, Perfetto) of the timed runs: one lane\n"
                "per device stream, every step with its node, op, provider and bytes.\n"
                "Prints a per-op time table first.";
    cmd.examples = "  hetrt profile model.onnx -o trace.json --runs 10\n";
  }
  int rc = cli_parse(&cmd, argc, argv);
  if (rc == CLI_CONTINUE && !a->model)
    rc = cli_usage_error(a->prog, "no MODEL given");
  return rc;
}

static int bench_cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Runs n times, storing each time in ms (times may be NULL for warm-up). */
static bool bench_loop(const bench_args *a, het_session *s, const cli_inputs *in, size_t n_out,
                       long n, double *times) {
  het_tensor **outs = calloc(n_out ? n_out : 1, sizeof *outs);
  if (!outs)
    return false;
  bool ok = true;
  for (long r = 0; ok && r < n; r++) {
    double t0 = cli_now_ms();
    ok = het_session_run(s, in->names, in->tensors, in->n, NULL, n_out, outs) == HET_OK;
    double dt = cli_now_ms() - t0;
    if (!ok)
      fprintf(stderr, "%s: run %ld: %s\n", a->prog, r, het_last_error());
    if (ok && times)
      times[r] = dt;
    for (size_t k = 0; ok && k < n_out; k++) {
      het_tensor_destroy(outs[k]);
      outs[k] = NULL;
    }
  }
  free(outs);
  return ok;
}

/* Prints every run's time (in run order), then the statistics. */
static void bench_report(double *times, long n) {
  double sum = 0;
  printf("run_ms:");
  for (long r = 0; r < n; r++) {
    sum += times[r];
    printf(" %.3f", times[r]);
  }
  printf("\n");
  qsort(times, (size_t)n, sizeof *times, bench_cmp_double);
  double median = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  long p90 = (long)((double)(n - 1) * 0.9 + 0.5);
  printf("runs=%ld  min=%.3f ms  mean=%.3f ms  median=%.3f ms  p90=%.3f ms  max=%.3f ms\n", n,
         times[0], sum / (double)n, median, times[p90], times[n - 1]);
  printf("median_ms=%.3f\n", median);
}

/* profile: writes the trace of the timed runs and prints its summary. */
static bool bench_profile_report(het_session *s, const bench_args *a) {
  const char *path = a->trace_out ? a->trace_out : "trace.json";
  char *summary = NULL;
  if (het_session_save_trace(s, path) != HET_OK ||
      het_session_get_profile_summary(s, &summary) != HET_OK) {
    fprintf(stderr, "%s: %s\n", a->prog, het_last_error());
    return false;
  }
  fputs(summary, stdout);
  het_string_destroy(summary);
  printf("trace (chrome://tracing, Perfetto) written to %s\n", path);
  return true;
}

static int bench_main(int argc, char **argv, bool profile) {
  bench_args a = {.warmup = profile ? 1 : 3, .runs = profile ? 5 : 20, .profile = profile,
                  .prog = profile ? "hetrt profile" : "hetrt bench"};
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  cli_inputs in = {0};
  double *times = NULL;
  int rc = bench_parse(argc, argv, &a);
  if (rc != CLI_CONTINUE || (rc = cli_make_options(&a.common, a.prog, &opts)) != 0)
    goto done;
  rc = CLI_EXIT_FAILURE;
  if ((profile && het_session_options_set(opts, "trace", "true") != HET_OK) ||
      (a.save_times && het_session_options_set(opts, "measure", "true") != HET_OK) ||
      het_env_create(&env) != HET_OK) {
    fprintf(stderr, "%s: %s\n", a.prog, het_last_error());
    goto done;
  }
  double t0 = cli_now_ms();
  if (het_session_create(env, a.model, opts, &s) != HET_OK) {
    cli_print_load_error(a.prog, a.model);
    goto done;
  }
  cli_print_warnings(a.prog, s);
  printf("session_create_ms=%.3f\n", cli_now_ms() - t0);
  if (a.common.verbose)
    cli_print_placement(stdout, s, true);
  if (a.common.explain)
    cli_print_explain(stdout, s);
  if (!cli_bind_inputs(s, &a.common, a.positional, a.n_positional, true, &in))
    goto done;
  for (size_t k = 0; k < in.n; k++)
    cli_print_tensor_summary(stdout, "input", in.names[k], in.tensors[k]);
  size_t n_out = het_session_get_output_count(s);
  times = malloc((size_t)a.runs * sizeof *times);
  if (!times || !bench_loop(&a, s, &in, n_out, a.warmup, NULL))
    goto done;
  if (profile || a.save_times) /* trace and time the timed runs only */
    het_session_clear_trace(s);
  if (!bench_loop(&a, s, &in, n_out, a.runs, times) || (profile && !bench_profile_report(s, &a)))
    goto done;
  if (a.save_times) {
    if (het_session_save_node_times(s, a.save_times) != HET_OK) {
      fprintf(stderr, "%s: %s\n", a.prog, het_last_error());
      goto done;
    }
    printf("node times written to %s\n", a.save_times);
  }
  printf("threads=%d providers=%s warmup=%ld\n", a.common.threads ? a.common.threads : 1,
         a.common.providers ? a.common.providers : "(default)", a.warmup);
  bench_report(times, a.runs);
  rc = CLI_EXIT_OK;
done:
  free(times);
  cli_inputs_clear(&in);
  het_session_destroy(s);
  het_session_options_destroy(opts);
  het_env_destroy(env);
  cli_common_clear(&a.common);
  return rc;
}

int cli_cmd_bench(int argc, char **argv) { return bench_main(argc, argv, false); }

int cli_cmd_profile(int argc, char **argv) { return bench_main(argc, argv, true); }
