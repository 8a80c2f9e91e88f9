/* stream.c — emu streams and engines.  A stream is a core host queue (its
 * own thread, or inline), so work of different streams runs at once; each
 * piece of work takes the device engine it needs (compute, copy in, copy
 * out) while it runs, which is what limits overlap.  In timed mode an
 * engine is held until the work's modelled time has passed (plus jitter),
 * sleeping, never spinning.  Events are host-queue events; a stream waits
 * for another emu stream's event by ticket and for a foreign event on the
 * host, in stream order.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "core/status.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"

static void het_emu_deadline_add(struct timespec *t, double seconds) {
  long long ns = (long long)(seconds * 1e9);
  t->tv_sec += (time_t)(ns / 1000000000LL);
  t->tv_nsec += (long)(ns % 1000000000LL);
  if (t->tv_nsec >= 1000000000L) {
    t->tv_sec++;
    t->tv_nsec -= 1000000000L;
  }
}

static double het_emu_seconds(const struct timespec *t) {
  return (double)t->tv_sec + 1e-9 * (double)t->tv_nsec;
}

het_status het_emu_engine_run(het_emu_stream *st, int engine, double pace_s,
                              het_status (*work)(void *arg), void *arg,
                              double *t0, double *t1) {
  het_emu_state *s = st->s;
  pthread_mutex_t *e = &s->dev->engine[engine];
  pthread_mutex_lock(e);
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (t0)
    *t0 = het_emu_seconds(&start);
  het_status r = work(arg);
  if (s->mode == HET_EMU_TIMED && pace_s > 0) {
    if (s->jitter_us > 0)
      pace_s += (double)(rand_r(&st->seed) % (s->jitter_us + 1)) * 1e-6;
    het_emu_deadline_add(&start, pace_s);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &start, NULL) ==
           EINTR)
      ;
  }
  if (t1) {
    clock_gettime(CLOCK_MONOTONIC, &end);
    *t1 = het_emu_seconds(&end);
  }
  pthread_mutex_unlock(e);
  return r;
}

het_status het_emu_stream_create(void *state, unsigned flags, void **stream) {
  het_emu_stream *st = calloc(1, sizeof *st);
  if (!st)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  st->s = state;
  st->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)st;
  het_status r = het_hostq_create("emu-stream", (flags & HET_STREAM_INLINE) != 0,
                                  &st->q);
  if (r != HET_OK) {
    free(st);
    return r;
  }
  *stream = st;
  return HET_OK;
}

void het_emu_stream_destroy(void *state, void *stream) {
  (void)state;
  het_emu_stream *st = stream;
  if (!st)
    return;
  het_hostq_destroy(st->q);
  free(st);
}

het_status het_emu_stream_synchronize(void *state, void *stream) {
  (void)state;
  return het_hostq_synchronize(((het_emu_stream *)stream)->q);
}

het_status het_emu_event_create(void *state, void **event) {
  (void)state;
  het_hostq_event *e = calloc(1, sizeof *e);
  if (!e)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  *event = e;
  return HET_OK;
}

void het_emu_event_destroy(void *state, void *event) {
  (void)state;
  free(event);
}

het_status het_emu_event_record(void *state, void *event, void *stream) {
  het_emu_state *s = state;
  long nth;
  if (het_emu_fault_hit(s, HET_EMU_FAULT_EVENT, &nth))
    return het_error(HET_ERR_KERNEL,
                     "emu: injected fault: event record #%ld on device '%s'",
                     nth, s->dev->profile.name);
  het_hostq_record(((het_emu_stream *)stream)->q, event);
  return HET_OK;
}

het_status het_emu_stream_wait(void *state, void *stream,
                               const het_event_ref *event) {
  (void)state;
  het_hostq *q = ((het_emu_stream *)stream)->q;
  if (event->vt == &het_emu_provider)
    return het_hostq_wait_event(q, event->event);
  return het_hostq_wait_ref(q, event);
}

het_status het_emu_event_synchronize(void *state, void *event) {
  (void)state;
  return het_hostq_event_wait(event);
}

het_status het_emu_event_query(void *state, void *event, bool *done) {
  (void)state;
  *done = het_hostq_event_done(event);
  return HET_OK;
}

het_status het_emu_host_func(void *state, void *stream, void (*fn)(void *),
                             void *arg) {
  (void)state;
  return het_hostq_call(((het_emu_stream *)stream)->q, fn, arg);
}
