/* overlap.c — how much copy time hides behind compute (bench/overlap.sh).
 * The model's work is on the emulated accelerator in timed mode, so copies
 * take the profile's link time and kernels its compute time; the emu has a
 * compute stream and a copy engine.  Two workloads:
 *   concurrent K [EXECUTOR]
 *                 K threads run the session at once (one run's copies
 *                 during another's kernels; each run has its own streams),
 *                 on the sequential plan (default) or the streams plan;
 *   streams       one run at a time with executor=streams on a model of
 *                 several micro-batches (one micro-batch's copies during
 *                 another's kernels).
 * Reported: per-run serial sum S (compute C + copies X, from the trace of
 * sequential single-threaded runs), the wall time per run W, 1 - W/S, the
 * copy share X/S and the fraction of copy time hidden min(1, (S - W)/X).
 * Also the planned peak memory of the host and the emu (the plan's arenas
 * plus what lives outside them).
 * HETRT_OVERLAP_TRACE=FILE writes the overlapped runs' Chrome trace.
 * Public API only.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hetrt/hetrt.h"

#define MAX_IN 16

typedef struct worker {
  het_session *s;
  size_t n_in, n_out;
  const char *names[MAX_IN];
  het_tensor *x[MAX_IN];
  int runs;
  het_status st;
} worker;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void *work(void *arg) {
  worker *w = arg;
  het_tensor *y[MAX_IN];
  w->st = HET_OK;
  for (int r = 0; r < w->runs && w->st == HET_OK; r++) {
    w->st = het_session_run(w->s, w->names, w->x, w->n_in, NULL, w->n_out, y);
    for (size_t k = 0; w->st == HET_OK && k < w->n_out; k++)
      het_tensor_destroy(y[k]);
  }
  return NULL;
}

/* Runs `runs` runs spread over k threads; the wall time per run in ms. */
static double run_threads(worker *proto, int k, int runs, het_status *st) {
  pthread_t th[16];
  worker w[16];
  double t0 = now_ms();
  for (int i = 0; i < k; i++) {
    w[i] = *proto;
    w[i].runs = runs / k + (i < runs % k);
    pthread_create(&th[i], NULL, work, &w[i]);
  }
  *st = HET_OK;
  for (int i = 0; i < k; i++) {
    pthread_join(th[i], NULL);
    if (w[i].st != HET_OK)
      *st = w[i].st;
  }
  return (now_ms() - t0) / runs;
}

/* Per-run copy and total step time from the profile summary table. */
static void trace_split(het_session *s, double *copy_ms, double *total_ms) {
  char *text = NULL;
  *copy_ms = *total_ms = 0;
  if (het_session_get_profile_summary(s, &text) != HET_OK)
    return;
  const char *p = strstr(text, "runs (");
  if (p)
    sscanf(p, "runs (%lf", total_ms);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char op[64], prov[32];
    double calls, total, per;
    if (sscanf(line, " %63s %31s %lf %lf %lf", op, prov, &calls, &total,
               &per) == 5 && strcmp(op, "Copy") == 0)
      *copy_ms += per;
  }
  het_string_destroy(text);
}

static het_session *open_session(het_env *env, const char *model,
                                 const char *profile, const char *executor) {
  het_session_options *o;
  het_session *s = NULL;
  het_session_options_create(&o);
  const char *kv[][2] = {{"providers", "emu,cpu"}, {"devices", profile},
                         {"algorithm", "priority"}, {"emu.mode", "timed"},
                         {"trace", "true"}, {"executor", executor}};
  het_status st = HET_OK;
  for (size_t i = 0; st == HET_OK && i < sizeof kv / sizeof *kv; i++)
    st = het_session_options_set(o, kv[i][0], kv[i][1]);
  if (st == HET_OK)
    st = het_session_create(env, model, o, &s);
  het_session_options_destroy(o);
  if (st != HET_OK)
    fprintf(stderr, "overlap: %s\n", het_last_error());
  return s;
}

static void bind_inputs(het_session *s, worker *w) {
  w->s = s;
  w->n_in = het_session_get_input_count(s);
  w->n_out = het_session_get_output_count(s);
  for (size_t i = 0; i < w->n_in && i < MAX_IN; i++) {
    het_value_desc d;
    het_session_get_input(s, i, &d);
    w->names[i] = d.name;
    het_tensor_create(d.dtype, d.dims, d.rank, &w->x[i]);
  }
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: overlap MODEL PROFILE RUNS concurrent K "
                    "[sequential|streams] | streams\n");
    return 2;
  }
  int runs = atoi(argv[3]);
  bool streams = strcmp(argv[4], "streams") == 0;
  int k = streams ? 1 : (argc > 5 ? atoi(argv[5]) : 2);
  const char *executor = streams ? "streams" : argc > 6 ? argv[6] : "sequential";
  if (runs < 1 || k < 1 || k > 16 ||
      (strcmp(executor, "sequential") && strcmp(executor, "streams")))
    return 2;
  het_env *env;
  het_env_create(&env);
  het_session *seq = open_session(env, argv[1], argv[2], "sequential");
  het_session *par = strcmp(executor, "sequential")
                         ? open_session(env, argv[1], argv[2], executor)
                         : seq;
  if (!seq || !par)
    return 1;
  worker ws = {0}, wp = {0};
  bind_inputs(seq, &ws);
  bind_inputs(par, &wp);
  het_status st, st2;
  run_threads(&ws, 1, 1, &st); /* warm-up: plans, primitives */
  run_threads(&wp, 1, 1, &st2);
  het_session_clear_trace(seq);
  double serial_wall = run_threads(&ws, 1, runs, &st);
  double copy, sum;
  trace_split(seq, &copy, &sum);
  het_session_clear_trace(par);
  double wall = run_threads(&wp, k, runs, &st2);
  const char *trace = getenv("HETRT_OVERLAP_TRACE");
  if (trace && het_session_save_trace(par, trace) == HET_OK)
    printf("trace of the overlapped runs written to %s\n", trace);
  if (st != HET_OK || st2 != HET_OK || sum <= 0) {
    fprintf(stderr, "overlap: %s\n", het_last_error());
    return 1;
  }
  double hidden = copy > 0 ? (sum - wall) / copy : 0;
  hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
  printf("per run: serial sum S=%.2f ms (compute %.2f ms + copies X=%.2f ms), "
         "sequential wall %.2f ms\n", sum, sum - copy, copy, serial_wall);
  if (streams)
    printf("executor=streams, one run at a time: wall per run W=%.2f ms\n", wall);
  else
    printf("%d concurrent runs, executor=%s: wall per run W=%.2f ms\n", k,
           executor, wall);
  printf("1 - W/S = %.1f%%   copy share X/S = %.1f%%   copy time hidden "
         "min(1,(S-W)/X) = %.1f%%\n", 100 * (1 - wall / sum), 100 * copy / sum,
         100 * hidden);
  printf("hidden_copy_fraction=%.3f\n", hidden);
  size_t host = 0, emu = 0;
  if (het_session_get_planned_peak(par, "host", &host) == HET_OK &&
      het_session_get_planned_peak(par, "emu", &emu) == HET_OK)
    printf("planned peak (arena + resident): host %.2f MiB, emu %.2f MiB\n",
           (double)host / (1 << 20), (double)emu / (1 << 20));
  for (size_t i = 0; i < ws.n_in; i++)
    het_tensor_destroy(ws.x[i]);
  for (size_t i = 0; par != seq && i < wp.n_in; i++)
    het_tensor_destroy(wp.x[i]);
  if (par != seq)
    het_session_destroy(par);
  het_session_destroy(seq);
  het_env_destroy(env);
  return 0;
}
