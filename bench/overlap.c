/* overlap.c — how much copy time hides behind compute when a session is
 * run by several threads at once (bench/overlap.sh).  The model's work is
 * on the emulated accelerator in timed mode, so copies take the profile's
 * link time and kernels its compute time; the emu has a compute stream and
 * a copy engine, so one run's copies can proceed during another's kernels.
 * Reported: per-run serial sum S (compute C + copies X, from the trace of
 * single-threaded runs), the wall time per run W with K concurrent runs,
 * 1 - W/S, the copy share X/S, and the fraction of copy time hidden
 * min(1, (S - W) / X).  Public API only.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hetrt/hetrt.h"

typedef struct worker {
  het_session *s;
  const char *name;
  het_tensor *x;
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
  w->st = HET_OK;
  for (int r = 0; r < w->runs && w->st == HET_OK; r++) {
    het_tensor *y = NULL;
    w->st = het_session_run(w->s, &w->name, &w->x, 1, NULL, 1, &y);
    het_tensor_destroy(y);
  }
  return NULL;
}

/* Runs `runs` runs spread over k threads; returns the wall time in ms. */
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
  return now_ms() - t0;
}

/* Per-run copy and total step time from the profile summary table. */
static int trace_split(het_session *s, double *copy_ms, double *total_ms) {
  char *text = NULL;
  if (het_session_get_profile_summary(s, &text) != HET_OK)
    return -1;
  *copy_ms = 0;
  *total_ms = 0;
  const char *p = strstr(text, "runs (");
  if (p)
    sscanf(p, "runs (%lf", total_ms);
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    char op[64], prov[32];
    double calls, total, per;
    if (sscanf(line, " %63s %31s %lf %lf %lf", op, prov, &calls, &total, &per) == 5 &&
        strcmp(op, "Copy") == 0)
      *copy_ms += per;
  }
  het_string_destroy(text);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: overlap MODEL PROFILE [RUNS] [THREADS]\n");
    return 2;
  }
  int runs = argc > 3 ? atoi(argv[3]) : 12, k = argc > 4 ? atoi(argv[4]) : 2;
  if (runs < 1 || k < 1 || k > 16)
    return 2;
  het_env *env;
  het_session_options *o;
  het_session *s;
  het_env_create(&env);
  het_session_options_create(&o);
  const char *kv[][2] = {{"providers", "emu,cpu"}, {"devices", argv[2]},
                         {"algorithm", "priority"}, {"emu.mode", "timed"},
                         {"trace", "true"}};
  for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
    if (het_session_options_set(o, kv[i][0], kv[i][1]) != HET_OK) {
      fprintf(stderr, "overlap: %s\n", het_last_error());
      return 1;
    }
  if (het_session_create(env, argv[1], o, &s) != HET_OK) {
    fprintf(stderr, "overlap: %s\n", het_last_error());
    return 1;
  }
  het_value_desc d;
  het_session_get_input(s, 0, &d);
  het_tensor *x;
  het_tensor_create(d.dtype, d.dims, d.rank, &x);
  worker proto = {.s = s, .name = d.name, .x = x};
  het_status st;
  run_threads(&proto, 1, 1, &st); /* warm-up: plans, primitives */
  het_session_clear_trace(s);
  double serial_wall = run_threads(&proto, 1, runs, &st) / runs;
  double copy = 0, sum = 0;
  if (st != HET_OK || trace_split(s, &copy, &sum) != 0) {
    fprintf(stderr, "overlap: %s\n", het_last_error());
    return 1;
  }
  double wall = run_threads(&proto, k, runs, &st) / runs;
  if (st != HET_OK) {
    fprintf(stderr, "overlap: %s\n", het_last_error());
    return 1;
  }
  double hidden = copy > 0 ? (sum - wall) / copy : 0;
  hidden = hidden < 0 ? 0 : hidden > 1 ? 1 : hidden;
  printf("per run: serial sum S=%.2f ms (compute %.2f ms + copies X=%.2f ms), "
         "serial wall %.2f ms\n", sum, sum - copy, copy, serial_wall);
  printf("%d concurrent runs: wall per run W=%.2f ms\n", k, wall);
  printf("1 - W/S = %.1f%%   copy share X/S = %.1f%%   copy time hidden "
         "min(1,(S-W)/X) = %.1f%%\n", 100 * (1 - wall / sum), 100 * copy / sum,
         100 * hidden);
  printf("hidden_copy_fraction=%.3f\n", hidden);
  het_tensor_destroy(x);
  het_session_destroy(s);
  het_session_options_destroy(o);
  het_env_destroy(env);
  return 0;
}
