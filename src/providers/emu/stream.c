/* stream.c — emu streams: a FIFO of jobs served in order by one thread
 * (the compute stream runs kernels, the copy engine runs copies).  Waiting
 * blocks on a condition variable; nothing spins.  A paced job (timed mode)
 * sleeps until pace_s (+ jitter) after it started, modelling device time.
 * Invariant: a job is on the queue from submit until the worker takes it,
 * and done is set (under the lock) only after its status and message are.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/status.h"
#include "providers/emu/emu_internal.h"

struct het_emu_stream {
  pthread_mutex_t lock;
  pthread_cond_t work; /* signalled on submit and stop */
  pthread_cond_t done; /* broadcast when a job finishes */
  het_emu_job *head, *tail;
  bool stop;
  pthread_t thread;
  char name[32];
  unsigned jitter_us;
  unsigned seed;
};

static void het_emu_deadline_add(struct timespec *t, double seconds) {
  long long ns = (long long)(seconds * 1e9);
  t->tv_sec += (time_t)(ns / 1000000000LL);
  t->tv_nsec += (long)(ns % 1000000000LL);
  if (t->tv_nsec >= 1000000000L) {
    t->tv_sec++;
    t->tv_nsec -= 1000000000L;
  }
}

/* Sleeps until start + pace (+ jitter): the modelled duration of a job. */
static void het_emu_pace(het_emu_stream *s, const struct timespec *start,
                         double pace) {
  if (s->jitter_us > 0)
    pace += (double)(rand_r(&s->seed) % (s->jitter_us + 1)) * 1e-6;
  struct timespec until = *start;
  het_emu_deadline_add(&until, pace);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) ==
         EINTR)
    ;
}

static void het_emu_job_execute(het_emu_stream *s, het_emu_job *job) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  het_error_clear();
  het_status st = job->fn(job->arg);
  if (st != HET_OK)
    snprintf(job->message, sizeof job->message, "%s", het_last_error());
  if (job->pace_s > 0)
    het_emu_pace(s, &start, job->pace_s);
  pthread_mutex_lock(&s->lock);
  job->status = st;
  job->done = true;
  pthread_cond_broadcast(&s->done);
  pthread_mutex_unlock(&s->lock);
}

static void *het_emu_stream_main(void *arg) {
  het_emu_stream *s = arg;
  pthread_mutex_lock(&s->lock);
  for (;;) {
    while (!s->head && !s->stop)
      pthread_cond_wait(&s->work, &s->lock);
    if (!s->head)
      break; /* stopping and drained */
    het_emu_job *job = s->head;
    s->head = job->next;
    if (!s->head)
      s->tail = NULL;
    pthread_mutex_unlock(&s->lock);
    het_emu_job_execute(s, job);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

het_status het_emu_stream_create(const char *name, unsigned jitter_us,
                                 het_emu_stream **out) {
  het_emu_stream *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  snprintf(s->name, sizeof s->name, "%s", name);
  s->jitter_us = jitter_us;
  s->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)s;
  int init = 0;
  if (pthread_mutex_init(&s->lock, NULL) == 0)
    init = 1;
  if (init == 1 && pthread_cond_init(&s->work, NULL) == 0)
    init = 2;
  if (init == 2 && pthread_cond_init(&s->done, NULL) == 0)
    init = 3;
  if (init == 3 && pthread_create(&s->thread, NULL, het_emu_stream_main, s) == 0)
    init = 4;
  if (init == 4) {
    *out = s;
    return HET_OK;
  }
  if (init >= 3)
    pthread_cond_destroy(&s->done);
  if (init >= 2)
    pthread_cond_destroy(&s->work);
  if (init >= 1)
    pthread_mutex_destroy(&s->lock);
  free(s);
  return het_error(HET_ERR_INTERNAL, "emu: cannot start stream '%s'", name);
}

void het_emu_stream_destroy(het_emu_stream *s) {
  if (!s)
    return;
  pthread_mutex_lock(&s->lock);
  s->stop = true;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->lock);
  pthread_join(s->thread, NULL);
  pthread_cond_destroy(&s->done);
  pthread_cond_destroy(&s->work);
  pthread_mutex_destroy(&s->lock);
  free(s);
}

void het_emu_stream_submit(het_emu_stream *s, het_emu_job *job) {
  job->done = false;
  job->status = HET_OK;
  job->message[0] = '\0';
  job->next = NULL;
  pthread_mutex_lock(&s->lock);
  if (s->tail)
    s->tail->next = job;
  else
    s->head = job;
  s->tail = job;
  pthread_cond_signal(&s->work);
  pthread_mutex_unlock(&s->lock);
}

het_status het_emu_stream_wait(het_emu_stream *s, het_emu_job *job) {
  pthread_mutex_lock(&s->lock);
  while (!job->done)
    pthread_cond_wait(&s->done, &s->lock);
  het_status st = job->status;
  pthread_mutex_unlock(&s->lock);
  if (st != HET_OK)
    return het_error(st, "%s", job->message);
  return HET_OK;
}
