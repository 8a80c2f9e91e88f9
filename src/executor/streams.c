/* streams.c — one thread per stream, one event per step (streams.h).
 * Events are "done" flags under one mutex per run with a condition
 * variable; waiting threads sleep, never spin.
 */
#include "executor/streams.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

typedef struct het_streams_run_state {
  const het_stream_plan *plan;
  het_status (*run)(void *user, int step);
  void *user;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool *done;          /* event per step */
  het_status failed;   /* first failure, HET_OK while none */
  char message[1024];  /* its het_last_error() (thread-local there) */
} het_streams_run_state;

typedef struct het_stream_thread {
  het_streams_run_state *rs;
  int stream;
} het_stream_thread;

/* Waits for step i's events; false when the run failed meanwhile. */
static bool het_stream_wait(het_streams_run_state *rs, int i) {
  const het_stream_plan *p = rs->plan;
  pthread_mutex_lock(&rs->mu);
  for (int k = p->dep_start[i]; k < p->dep_start[i + 1]; k++)
    while (!rs->done[p->deps[k]] && rs->failed == HET_OK)
      pthread_cond_wait(&rs->cv, &rs->mu);
  bool ok = rs->failed == HET_OK;
  pthread_mutex_unlock(&rs->mu);
  return ok;
}

static void het_stream_signal(het_streams_run_state *rs, int i,
                              het_status st) {
  pthread_mutex_lock(&rs->mu);
  if (st == HET_OK)
    rs->done[i] = true;
  else if (rs->failed == HET_OK) {
    rs->failed = st;
    snprintf(rs->message, sizeof rs->message, "%s", het_last_error());
  }
  pthread_cond_broadcast(&rs->cv);
  pthread_mutex_unlock(&rs->mu);
}

static void *het_stream_main(void *arg) {
  het_stream_thread *t = arg;
  het_streams_run_state *rs = t->rs;
  const het_stream_plan *p = rs->plan;
  for (int i = 0; i < p->n_steps; i++) {
    if (p->stream[i] != t->stream)
      continue;
    if (!het_stream_wait(rs, i))
      break;
    het_stream_signal(rs, i, rs->run(rs->user, i));
  }
  return NULL;
}

het_status het_streams_run(const het_stream_plan *plan,
                           het_status (*run)(void *user, int step),
                           void *user) {
  het_streams_run_state rs = {.plan = plan, .run = run, .user = user};
  rs.done = calloc((size_t)plan->n_steps + 1, sizeof *rs.done);
  het_stream_thread *th = calloc((size_t)plan->n_streams + 1, sizeof *th);
  pthread_t *tid = calloc((size_t)plan->n_streams + 1, sizeof *tid);
  if (!rs.done || !th || !tid) {
    free(rs.done);
    free(th);
    free(tid);
    return het_error(HET_ERR_OUT_OF_MEMORY, "streams: out of memory");
  }
  for (int i = 0; i < plan->n_steps; i++)
    if (plan->stream[i] < 0)
      rs.done[i] = true;
  pthread_mutex_init(&rs.mu, NULL);
  pthread_cond_init(&rs.cv, NULL);
  int started = 0;
  for (int s = 0; s < plan->n_streams; s++) {
    th[s] = (het_stream_thread){&rs, s};
    if (pthread_create(&tid[s], NULL, het_stream_main, &th[s]) != 0) {
      het_stream_signal(&rs, 0, het_error(HET_ERR_INTERNAL,
                                          "streams: cannot start a thread"));
      break;
    }
    started++;
  }
  for (int s = 0; s < started; s++)
    pthread_join(tid[s], NULL);
  pthread_cond_destroy(&rs.cv);
  pthread_mutex_destroy(&rs.mu);
  het_status st = rs.failed;
  free(rs.done);
  free(th);
  free(tid);
  return st == HET_OK ? HET_OK : het_error(st, "%s", rs.message);
}
