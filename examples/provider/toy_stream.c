/* toy_stream.c — the toy's streams and events.  A stream is a FIFO of
 * work items run in order: by the enqueueing thread itself (inline
 * streams, HET_STREAM_INLINE) or by one worker thread per stream, so the
 * enqueueing slots never block the host.  The first failure makes later
 * work skip until stream_synchronize reports it (its message re-raised on
 * the synchronizing thread) and clears it.  An event counts the records
 * enqueued and the records its streams have passed; it carries the
 * recording stream's failure to whoever waits on it.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "toy_internal.h"
#include "toy_provider.h"

#define TOY_MESSAGE_CAP 512

typedef struct toy_stream {
  pthread_mutex_t lock;
  pthread_cond_t changed;  /* work queued or finished, or stop */
  toy_work *head, *tail;   /* queued, not yet running */
  bool inline_run, busy, stop, has_thread;
  pthread_t thread;
  /* First failure since the last synchronize; written only by the thread
   * running work, read by stream_synchronize once the stream is idle. */
  het_status failure;
  char message[TOY_MESSAGE_CAP];
} toy_stream;

typedef struct toy_event {
  pthread_mutex_t lock;
  pthread_cond_t passed;   /* a record was passed */
  unsigned long recorded;  /* records enqueued */
  unsigned long reached;   /* the latest record a stream has passed */
  het_status failure;      /* of that stream when it passed it */
  char message[TOY_MESSAGE_CAP];
} toy_event;

/* ---- streams ------------------------------------------------------------ */

static void toy_stream_run_one(toy_stream *st, toy_work *w) {
  if (st->failure == HET_OK || w->always_run) {
    het_status r = w->run(w, st->failure, st->message);
    if (r != HET_OK && st->failure == HET_OK) {
      snprintf(st->message, sizeof st->message, "%s", het_last_error());
      st->failure = r;
    }
  }
  free(w);
}

static void *toy_stream_main(void *arg) {
  toy_stream *st = arg;
  pthread_mutex_lock(&st->lock);
  for (;;) {
    while (!st->head && !st->stop)
      pthread_cond_wait(&st->changed, &st->lock);
    if (!st->head)
      break; /* stopped, and nothing left */
    toy_work *w = st->head;
    st->head = w->next;
    if (!st->head)
      st->tail = NULL;
    st->busy = true;
    pthread_mutex_unlock(&st->lock);
    toy_stream_run_one(st, w);
    pthread_mutex_lock(&st->lock);
    st->busy = false;
    pthread_cond_broadcast(&st->changed);
  }
  pthread_mutex_unlock(&st->lock);
  return NULL;
}

het_status toy_stream_enqueue(void *stream, toy_work *w) {
  toy_stream *st = stream;
  w->next = NULL;
  if (st->inline_run) {
    toy_stream_run_one(st, w);
    return HET_OK;
  }
  pthread_mutex_lock(&st->lock);
  if (st->tail)
    st->tail->next = w;
  else
    st->head = w;
  st->tail = w;
  pthread_cond_broadcast(&st->changed);
  pthread_mutex_unlock(&st->lock);
  return HET_OK;
}

het_status toy_stream_create(void *state, unsigned flags, void **stream) {
  (void)state;
  toy_stream *st = calloc(1, sizeof *st);
  if (!st)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  pthread_mutex_init(&st->lock, NULL);
  pthread_cond_init(&st->changed, NULL);
  st->inline_run = (flags & HET_STREAM_INLINE) != 0;
  if (!st->inline_run) {
    if (pthread_create(&st->thread, NULL, toy_stream_main, st) != 0) {
      pthread_cond_destroy(&st->changed);
      pthread_mutex_destroy(&st->lock);
      free(st);
      return het_error_set(HET_ERR_INTERNAL, "toy: cannot start a stream thread");
    }
    st->has_thread = true;
  }
  *stream = st;
  return HET_OK;
}

void toy_stream_destroy(void *state, void *stream) {
  (void)state;
  toy_stream *st = stream;
  if (!st)
    return;
  if (st->has_thread) {
    pthread_mutex_lock(&st->lock);
    st->stop = true; /* the worker drains the queue first */
    pthread_cond_broadcast(&st->changed);
    pthread_mutex_unlock(&st->lock);
    pthread_join(st->thread, NULL);
  }
  pthread_cond_destroy(&st->changed);
  pthread_mutex_destroy(&st->lock);
  free(st);
}

het_status toy_stream_synchronize(void *state, void *stream) {
  (void)state;
  toy_stream *st = stream;
  char message[TOY_MESSAGE_CAP];
  pthread_mutex_lock(&st->lock);
  while (st->head || st->busy)
    pthread_cond_wait(&st->changed, &st->lock);
  het_status failure = st->failure;
  snprintf(message, sizeof message, "%s", st->message);
  st->failure = HET_OK;
  st->message[0] = '\0';
  pthread_mutex_unlock(&st->lock);
  if (failure != HET_OK)
    return het_error_set(failure, "%s", message);
  return HET_OK;
}

/* ---- events ------------------------------------------------------------- */

het_status toy_event_create(void *state, void **event) {
  (void)state;
  toy_event *e = calloc(1, sizeof *e);
  if (!e)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  pthread_mutex_init(&e->lock, NULL);
  pthread_cond_init(&e->passed, NULL);
  *event = e;
  return HET_OK;
}

void toy_event_destroy(void *state, void *event) {
  (void)state;
  toy_event *e = event;
  if (!e)
    return;
  pthread_cond_destroy(&e->passed);
  pthread_mutex_destroy(&e->lock);
  free(e);
}

/* The stream reached record number w->n of event w->a. */
static het_status toy_record_run(toy_work *w, het_status failure,
                                 const char *message) {
  toy_event *e = w->a;
  pthread_mutex_lock(&e->lock);
  if (w->n > e->reached) {
    e->reached = w->n;
    e->failure = failure;
    snprintf(e->message, sizeof e->message, "%s", message);
  }
  pthread_cond_broadcast(&e->passed);
  pthread_mutex_unlock(&e->lock);
  return HET_OK;
}

het_status toy_event_record(void *state, void *event, void *stream) {
  (void)state;
  toy_event *e = event;
  toy_work *w = calloc(1, sizeof *w);
  if (!w)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  pthread_mutex_lock(&e->lock);
  w->n = ++e->recorded;
  pthread_mutex_unlock(&e->lock);
  w->run = toy_record_run;
  w->always_run = true;
  w->a = e;
  return toy_stream_enqueue(stream, w);
}

/* Blocks until record number n of e has been passed; its failure. */
static het_status toy_event_wait_for(toy_event *e, unsigned long n) {
  pthread_mutex_lock(&e->lock);
  while (e->reached < n)
    pthread_cond_wait(&e->passed, &e->lock);
  het_status failure = e->failure;
  char message[TOY_MESSAGE_CAP];
  snprintf(message, sizeof message, "%s", e->message);
  pthread_mutex_unlock(&e->lock);
  if (failure != HET_OK)
    return het_error_set(failure, "%s", message);
  return HET_OK;
}

static het_status toy_wait_run(toy_work *w, het_status failure,
                               const char *message) {
  (void)failure;
  (void)message;
  return toy_event_wait_for(w->a, w->n);
}

/* Another provider's event: wait on the host, in stream order. */
static het_status toy_wait_ref_run(toy_work *w, het_status failure,
                                   const char *message) {
  (void)failure;
  (void)message;
  return w->ref.vt->event_synchronize(w->ref.instance, w->ref.event);
}

het_status toy_stream_wait(void *state, void *stream,
                           const het_event_ref *event) {
  (void)state;
  if (event->vt != &toy_provider && !event->vt->event_synchronize)
    return het_error_set(HET_ERR_INVALID_ARGUMENT,
                         "toy: cannot wait for an event of '%s'",
                         event->vt->name ? event->vt->name : "?");
  toy_work *w = calloc(1, sizeof *w);
  if (!w)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  if (event->vt == &toy_provider) {
    toy_event *e = event->event;
    pthread_mutex_lock(&e->lock);
    w->n = e->recorded; /* the latest record, as of now */
    pthread_mutex_unlock(&e->lock);
    w->run = toy_wait_run;
    w->a = e;
  } else {
    w->run = toy_wait_ref_run;
    w->ref = *event;
  }
  return toy_stream_enqueue(stream, w);
}

het_status toy_event_synchronize(void *state, void *event) {
  (void)state;
  toy_event *e = event;
  pthread_mutex_lock(&e->lock);
  unsigned long n = e->recorded;
  pthread_mutex_unlock(&e->lock);
  return toy_event_wait_for(e, n);
}

het_status toy_event_query(void *state, void *event, bool *done) {
  (void)state;
  toy_event *e = event;
  pthread_mutex_lock(&e->lock);
  *done = e->reached >= e->recorded;
  pthread_mutex_unlock(&e->lock);
  return HET_OK;
}

static het_status toy_host_func_run(toy_work *w, het_status failure,
                                    const char *message) {
  (void)failure;
  (void)message;
  w->fn(w->a);
  return HET_OK;
}

het_status toy_host_func(void *state, void *stream, void (*fn)(void *arg),
                         void *arg) {
  (void)state;
  toy_work *w = calloc(1, sizeof *w);
  if (!w)
    return het_error_set(HET_ERR_OUT_OF_MEMORY, "toy: out of memory");
  w->run = toy_host_func_run;
  w->fn = fn;
  w->a = arg;
  return toy_stream_enqueue(stream, w);
}
