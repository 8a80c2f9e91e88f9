/* cmd_bench.c — `hetrt bench MODEL ...`: times session creation, then
 * warm-up and timed runs on given (--input, positional .pb) or generated
 * inputs, through the public API.  Prints per-run statistics and ends with
 * the line "median_ms=X".  `hetrt profile MODEL [-o TRACE.json]` is the
 * same with the session's trace on: it writes a Chrome trace of the timed
 * runs and prints the per-op summary table first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct bench_args {
  cli_common common;
  const char *model;
  long warmup, runs;
  bool profile;          /* `hetrt profile` */
  const char *trace_out; /* -o FILE (profile) */
  const char *positional[CLI_MAX_ARGS];
  size_t n_positional;
} bench_args;

static int bench_parse(int argc, char **argv, bench_args *a) {
  for (int i = 1; i < argc; i++) {
    bool missing = false;
    const char *v;
    int r = cli_parse_common(argc, argv, &i, &a->common);
    if (r == 0 && (v = cli_opt_value(argc, argv, &i, "--warmup", &missing)))
      r = cli_parse_int("--warmup", v, 0, &a->warmup) ? 1 : -1;
    else if (r == 0 && !missing && (v = cli_opt_value(argc, argv, &i, "--runs", &missing)))
      r = cli_parse_int("--runs", v, 1, &a->runs) ? 1 : -1;
    else if (r == 0 && !missing && a->profile &&
             ((v = cli_opt_value(argc, argv, &i, "-o", &missing)) ||
              (!missing && (v = cli_opt_value(argc, argv, &i, "--output", &missing)))))
      r = (a->trace_out = v) ? 1 : -1;
    if (r < 0 || missing)
      return 2;
    if (r > 0)
      continue;
    if (argv[i][0] == '-' && argv[i][1] != '\0') {
      fprintf(stderr, "hetrt %s: unknown option '%s'\n", a->profile ? "profile" : "bench",
              argv[i]);
      return 2;
    }
    if (!a->model)
      a->model = argv[i];
    else if (a->n_positional < CLI_MAX_ARGS)
      a->positional[a->n_positional++] = argv[i];
  }
  if (!a->model) {
    fprintf(stderr, "usage: hetrt %s MODEL [FILE.pb ...] [--input NAME=FILE.pb ...] "
                    "[--dim NAME=V ...] [--warmup N] [--runs N] [--providers LIST] [--threads N]%s\n",
            a->profile ? "profile" : "bench", a->profile ? " [-o TRACE.json]" : "");
    return 2;
  }
  return 0;
}

static int bench_cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Runs n times, storing each time in ms (times may be NULL for warm-up). */
static bool bench_loop(het_session *s, const cli_inputs *in, size_t n_out, long n,
                       double *times) {
  het_tensor **outs = calloc(n_out ? n_out : 1, sizeof *outs);
  if (!outs)
    return false;
  bool ok = true;
  for (long r = 0; ok && r < n; r++) {
    double t0 = cli_now_ms();
    ok = het_session_run(s, in->names, in->tensors, in->n, NULL, n_out, outs) == HET_OK;
    double dt = cli_now_ms() - t0;
    if (!ok)
      fprintf(stderr, "hetrt bench: run %ld: %s\n", r, het_last_error());
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
    fprintf(stderr, "hetrt profile: %s\n", het_last_error());
    return false;
  }
  fputs(summary, stdout);
  het_string_destroy(summary);
  printf("trace (chrome://tracing, Perfetto) written to %s\n", path);
  return true;
}

static int bench_main(int argc, char **argv, bool profile) {
  bench_args a = {.warmup = profile ? 1 : 3, .runs = profile ? 5 : 20,
                  .profile = profile};
  int rc = bench_parse(argc, argv, &a);
  het_env *env = NULL;
  het_session_options *opts = NULL;
  het_session *s = NULL;
  cli_inputs in = {0};
  double *times = NULL;
  if (rc)
    goto done;
  rc = 1;
  if (het_env_create(&env) != HET_OK) {
    fprintf(stderr, "hetrt bench: %s\n", het_last_error());
    goto done;
  }
  if (!(opts = cli_make_options(&a.common)))
    goto done;
  if (profile && het_session_options_set(opts, "trace", "true") != HET_OK) {
    fprintf(stderr, "hetrt profile: %s\n", het_last_error());
    goto done;
  }
  double t0 = cli_now_ms();
  if (het_session_create(env, a.model, opts, &s) != HET_OK) {
    fprintf(stderr, "hetrt bench: %s: %s\n", a.model, het_last_error());
    goto done;
  }
  cli_print_warnings("bench", s);
  printf("session_create_ms=%.3f\n", cli_now_ms() - t0);
  if (a.common.explain)
    cli_print_explain(stdout, s);
  if (!cli_bind_inputs(s, &a.common, a.positional, a.n_positional, true, &in))
    goto done;
  for (size_t k = 0; k < in.n; k++)
    cli_print_tensor_summary(stdout, "input", in.names[k], in.tensors[k]);
  size_t n_out = het_session_get_output_count(s);
  times = malloc((size_t)a.runs * sizeof *times);
  if (!times || !bench_loop(s, &in, n_out, a.warmup, NULL))
    goto done;
  if (profile) /* trace the timed runs only */
    het_session_clear_trace(s);
  if (!bench_loop(s, &in, n_out, a.runs, times) || (profile && !bench_profile_report(s, &a)))
    goto done;
  if (a.common.save_times) {
    if (het_session_save_node_times(s, a.common.save_times) != HET_OK) {
      fprintf(stderr, "hetrt bench: %s\n", het_last_error());
      goto done;
    }
    printf("node times written to %s\n", a.common.save_times);
  }
  printf("threads=%d providers=%s warmup=%ld\n", a.common.threads ? a.common.threads : 1,
         a.common.providers ? a.common.providers : "(default)", a.warmup);
  bench_report(times, a.runs);
  rc = 0;
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
