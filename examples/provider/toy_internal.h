/* toy_internal.h — what toy_provider.c and toy_stream.c share: the
 * instance state, and work items queued on a stream.
 */
#ifndef TOY_INTERNAL_H
#define TOY_INTERNAL_H

#include <hetrt/provider.h>

/* Per session: read-only after create, so concurrent runs share it. */
typedef struct toy_state {
  double bandwidth; /* bytes/s, for estimate_cost */
} toy_state;

/* One piece of work on a stream.  run() returns HET_OK or a status with
 * the thread's het_last_error() set; it is skipped once the stream has
 * failed unless always_run is set (event records must still complete). */
typedef struct toy_work toy_work;
struct toy_work {
  toy_work *next;
  het_status (*run)(toy_work *w, het_status stream_failure,
                    const char *stream_message);
  bool always_run;
  void *a, *b;               /* the work's arguments */
  unsigned long n;
  het_event_ref ref;         /* another provider's event to wait for */
  void (*fn)(void *arg);     /* host_func */
};

/* Enqueues w (allocated by the caller with malloc; the stream frees it
 * once run).  On an inline stream it runs at once. */
het_status toy_stream_enqueue(void *stream, toy_work *w);

/* Stream and event slots (toy_stream.c). */
het_status toy_stream_create(void *state, unsigned flags, void **stream);
void toy_stream_destroy(void *state, void *stream);
het_status toy_stream_synchronize(void *state, void *stream);
het_status toy_event_create(void *state, void **event);
void toy_event_destroy(void *state, void *event);
het_status toy_event_record(void *state, void *event, void *stream);
het_status toy_stream_wait(void *state, void *stream,
                           const het_event_ref *event);
het_status toy_event_synchronize(void *state, void *event);
het_status toy_event_query(void *state, void *event, bool *done);
het_status toy_host_func(void *state, void *stream, void (*fn)(void *arg),
                         void *arg);

#endif
