/* hostq.c — host queues and their events (hostq.h).  A threaded queue is a
 * ring of job slots under one mutex: the worker takes the oldest, runs it
 * unlocked, then counts it completed and broadcasts.  Waiting (events,
 * synchronize, a full ring) sleeps on condition variables; nothing spins.
 * The first failure is kept with the index of its job (err_at): an event
 * whose ticket is past err_at reports it.
 */
#include "core/hostq.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HET_HOSTQ_RING 256

struct het_hostq {
  pthread_mutex_t mu;
  pthread_cond_t work; /* a job was submitted, or stop */
  pthread_cond_t done; /* a job completed (or was skipped) */
  het_hostq_job ring[HET_HOSTQ_RING];
  uint64_t submitted, completed; /* jobs; completed <= submitted */
  het_status err;                /* first failure, HET_OK while none */
  uint64_t err_at;               /* its job index */
  char msg[1024];
  bool inline_run, stop;
  pthread_t thread;
  char name[48];
};

/* Runs job number idx (lock not held); records a failure. */
static het_status het_hostq_execute(het_hostq *q, const het_hostq_job *job,
                                    uint64_t idx) {
  pthread_mutex_lock(&q->mu);
  bool skip = q->err != HET_OK;
  pthread_mutex_unlock(&q->mu);
  if (skip)
    return HET_OK;
  het_error_clear();
  het_status st = job->fn(job);
  if (st == HET_OK)
    return HET_OK;
  pthread_mutex_lock(&q->mu);
  if (q->err == HET_OK) {
    q->err = st;
    q->err_at = idx;
    snprintf(q->msg, sizeof q->msg, "%s", het_last_error());
  }
  pthread_mutex_unlock(&q->mu);
  return st;
}

static void *het_hostq_main(void *arg) {
  het_hostq *q = arg;
  pthread_mutex_lock(&q->mu);
  for (;;) {
    while (q->completed == q->submitted && !q->stop)
      pthread_cond_wait(&q->work, &q->mu);
    if (q->completed == q->submitted)
      break; /* stopping and drained */
    uint64_t idx = q->completed;
    het_hostq_job job = q->ring[idx % HET_HOSTQ_RING];
    pthread_mutex_unlock(&q->mu);
    het_hostq_execute(q, &job, idx);
    pthread_mutex_lock(&q->mu);
    q->completed++;
    pthread_cond_broadcast(&q->done);
  }
  pthread_mutex_unlock(&q->mu);
  return NULL;
}

het_status het_hostq_create(const char *name, bool inline_run,
                            het_hostq **out) {
  het_hostq *q = calloc(1, sizeof *q);
  if (!q)
    return het_error(HET_ERR_OUT_OF_MEMORY, "host queue: out of memory");
  snprintf(q->name, sizeof q->name, "%s", name ? name : "queue");
  q->inline_run = inline_run;
  int init = 0;
  if (pthread_mutex_init(&q->mu, NULL) == 0)
    init = 1;
  if (init == 1 && pthread_cond_init(&q->work, NULL) == 0)
    init = 2;
  if (init == 2 && pthread_cond_init(&q->done, NULL) == 0)
    init = 3;
  if (init == 3 &&
      (inline_run || pthread_create(&q->thread, NULL, het_hostq_main, q) == 0))
    init = 4;
  if (init == 4) {
    *out = q;
    return HET_OK;
  }
  if (init >= 3)
    pthread_cond_destroy(&q->done);
  if (init >= 2)
    pthread_cond_destroy(&q->work);
  if (init >= 1)
    pthread_mutex_destroy(&q->mu);
  free(q);
  return het_error(HET_ERR_INTERNAL, "host queue '%s': cannot start a thread",
                   name ? name : "queue");
}

void het_hostq_destroy(het_hostq *q) {
  if (!q)
    return;
  if (!q->inline_run) {
    pthread_mutex_lock(&q->mu);
    q->stop = true;
    pthread_cond_signal(&q->work);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
  }
  pthread_cond_destroy(&q->done);
  pthread_cond_destroy(&q->work);
  pthread_mutex_destroy(&q->mu);
  free(q);
}

bool het_hostq_is_inline(const het_hostq *q) { return q->inline_run; }

het_status het_hostq_submit(het_hostq *q, const het_hostq_job *job) {
  if (q->inline_run) {
    pthread_mutex_lock(&q->mu);
    uint64_t idx = q->submitted++;
    pthread_mutex_unlock(&q->mu);
    het_status st = het_hostq_execute(q, job, idx);
    pthread_mutex_lock(&q->mu);
    q->completed++;
    pthread_cond_broadcast(&q->done);
    pthread_mutex_unlock(&q->mu);
    return st;
  }
  pthread_mutex_lock(&q->mu);
  while (q->submitted - q->completed >= HET_HOSTQ_RING)
    pthread_cond_wait(&q->done, &q->mu);
  q->ring[q->submitted % HET_HOSTQ_RING] = *job;
  q->submitted++;
  pthread_cond_signal(&q->work);
  pthread_mutex_unlock(&q->mu);
  return HET_OK;
}

het_status het_hostq_synchronize(het_hostq *q) {
  pthread_mutex_lock(&q->mu);
  while (q->completed < q->submitted)
    pthread_cond_wait(&q->done, &q->mu);
  het_status st = q->err;
  char msg[sizeof q->msg];
  if (st != HET_OK) {
    memcpy(msg, q->msg, sizeof msg);
    q->err = HET_OK;
  }
  pthread_mutex_unlock(&q->mu);
  return st == HET_OK ? HET_OK : het_error(st, "%s", msg);
}

void het_hostq_record(het_hostq *q, het_hostq_event *e) {
  pthread_mutex_lock(&q->mu);
  e->q = q;
  e->ticket = q->submitted;
  pthread_mutex_unlock(&q->mu);
}

bool het_hostq_event_done(const het_hostq_event *e) {
  het_hostq *q = e->q;
  if (!q)
    return true;
  pthread_mutex_lock(&q->mu);
  bool done = q->completed >= e->ticket;
  pthread_mutex_unlock(&q->mu);
  return done;
}

/* Waits until q has completed ticket jobs; the failure among them. */
static het_status het_hostq_wait_ticket(het_hostq *q, uint64_t ticket) {
  pthread_mutex_lock(&q->mu);
  while (q->completed < ticket)
    pthread_cond_wait(&q->done, &q->mu);
  het_status st = q->err != HET_OK && q->err_at < ticket ? q->err : HET_OK;
  char msg[sizeof q->msg];
  if (st != HET_OK)
    memcpy(msg, q->msg, sizeof msg);
  pthread_mutex_unlock(&q->mu);
  return st == HET_OK ? HET_OK : het_error(st, "%s", msg);
}

het_status het_hostq_event_wait(const het_hostq_event *e) {
  return e->q ? het_hostq_wait_ticket(e->q, e->ticket) : HET_OK;
}

static het_status het_hostq_wait_job(const het_hostq_job *job) {
  return het_hostq_wait_ticket(job->p[0], job->n[0]);
}

het_status het_hostq_wait_event(het_hostq *q, const het_hostq_event *e) {
  if (!e->q || e->q == q)
    return HET_OK; /* in order already */
  het_hostq_job job = {.fn = het_hostq_wait_job, .p = {e->q}};
  pthread_mutex_lock(&e->q->mu);
  job.n[0] = e->ticket;
  pthread_mutex_unlock(&e->q->mu);
  return het_hostq_submit(q, &job);
}

static het_status het_hostq_wait_ref_job(const het_hostq_job *job) {
  const het_provider_vtable *vt = job->p[0];
  return vt->event_synchronize(job->p[1], job->p[2]);
}

het_status het_hostq_wait_ref(het_hostq *q, const het_event_ref *ref) {
  if (!ref->vt->event_synchronize)
    return het_error(HET_ERR_INTERNAL,
                     "host queue '%s': provider '%s' has no event_synchronize",
                     q->name, ref->vt->name);
  het_hostq_job job = {.fn = het_hostq_wait_ref_job,
                       .p = {(void *)ref->vt, ref->instance, ref->event,
                             (void *)ref->device}};
  return het_hostq_submit(q, &job);
}

static het_status het_hostq_call_job(const het_hostq_job *job) {
  void (*fn)(void *);
  memcpy(&fn, &job->p[0], sizeof fn);
  fn(job->p[1]);
  return HET_OK;
}

het_status het_hostq_call(het_hostq *q, void (*fn)(void *arg), void *arg) {
  het_hostq_job job = {.fn = het_hostq_call_job, .p = {NULL, arg}};
  memcpy(&job.p[0], &fn, sizeof fn);
  return het_hostq_submit(q, &job);
}
