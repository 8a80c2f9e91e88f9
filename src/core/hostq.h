/* hostq.h — host queues: in-order work queues served by a host thread (or
 * run inline by the thread that enqueues), with events, the stream model
 * of provider.h for host-side work.  The CPU provider's and the emu's
 * streams are host queues, as is the core's queue for host conversions and
 * for ABI 1-2 providers.
 * Invariants: jobs of one queue run one at a time in submission order;
 * after a job fails, the queue skips every later job until
 * het_hostq_synchronize reports and clears the failure; a job's index is
 * its position in submission order (0-based), and the counters only grow.
 * Submitting never allocates (a fixed ring; a full ring blocks the
 * submitter until a slot frees).
 */
#ifndef HET_CORE_HOSTQ_H
#define HET_CORE_HOSTQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "hetrt/provider.h"

typedef struct het_hostq het_hostq;

/* One unit of work: fn(job) on the queue's thread.  p and n carry the
 * submitter's arguments (copied at submission). */
typedef struct het_hostq_job {
  het_status (*fn)(const struct het_hostq_job *job);
  void *p[4];
  size_t n[2];
} het_hostq_job;

/* A point in a queue: done once the queue has finished every job
 * submitted before het_hostq_record. */
typedef struct het_hostq_event {
  het_hostq *q;     /* NULL until recorded */
  uint64_t ticket;  /* jobs submitted when recorded */
} het_hostq_event;

/* A queue named name (for messages); inline: the submitting thread runs
 * each job inside het_hostq_submit, otherwise one worker thread does.
 * Caller owns *out.  ERR_INTERNAL when the thread cannot start. */
het_status het_hostq_create(const char *name, bool inline_run,
                            het_hostq **out);
/* Finishes queued jobs, stops the thread.  Accepts NULL. */
void het_hostq_destroy(het_hostq *q);
bool het_hostq_is_inline(const het_hostq *q);

/* Enqueues a copy of job.  Inline queues run it now and return its status
 * (HET_OK when it was skipped after an earlier failure); threaded queues
 * return HET_OK.  Thread-safe. */
het_status het_hostq_submit(het_hostq *q, const het_hostq_job *job);

/* Waits for every job submitted so far; returns the first failure since
 * the last call (message re-raised here) and clears it. */
het_status het_hostq_synchronize(het_hostq *q);

/* e marks q's current end (re-recording moves it). */
void het_hostq_record(het_hostq *q, het_hostq_event *e);
/* Whether e's jobs are done (an unrecorded event is). */
bool het_hostq_event_done(const het_hostq_event *e);
/* Blocks until e's jobs are done; the failure of one of them, if any
 * (its message re-raised here), else HET_OK. */
het_status het_hostq_event_wait(const het_hostq_event *e);

/* Makes later jobs of q wait for e (a snapshot: e's current record); a
 * failure before e fails q the same way. */
het_status het_hostq_wait_event(het_hostq *q, const het_hostq_event *e);
/* Makes later jobs of q wait on the host for another provider's event
 * (ref copied): its failure fails q the same way. */
het_status het_hostq_wait_ref(het_hostq *q, const het_event_ref *ref);
/* Enqueues fn(arg) (a host function in stream order). */
het_status het_hostq_call(het_hostq *q, void (*fn)(void *arg), void *arg);

#endif
