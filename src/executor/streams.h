/* streams.h — running a plan's steps on streams: one host thread per
 * stream (each provider's compute, host-to-device copies, device-to-host
 * copies, host-side conversions) executing its steps in order, and one
 * event per step that the steps depending on it wait for.  There is no
 * global synchronisation inside a run: a step waits only for the steps
 * whose outputs it reads.  Invariant: deps point to earlier steps, so the
 * wait graph is acyclic and every stream makes progress.
 */
#ifndef HET_EXECUTOR_STREAMS_H
#define HET_EXECUTOR_STREAMS_H

#include "hetrt/hetrt.h"

/* The steps of a plan: stream[i] for step i (0..n_streams-1, or -1 for a
 * step that does nothing at run time); step i waits for steps
 * deps[dep_start[i] .. dep_start[i+1]), all < i. */
typedef struct het_stream_plan {
  int n_steps, n_streams;
  const int *stream;
  const int *dep_start;
  const int *deps;
} het_stream_plan;

/* Runs every step: run(user, i) on its stream's thread after its deps
 * finished.  The first failure stops the run (steps not started are
 * skipped) and is returned with its message, which names the failing
 * step's node as run() reported it. */
het_status het_streams_run(const het_stream_plan *plan,
                           het_status (*run)(void *user, int step),
                           void *user);

#endif
