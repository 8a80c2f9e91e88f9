/* exec.h — running programs: the one executor every plan goes through.
 * A run takes the plan of its signature (built on a miss), a frame of that
 * plan and, at the top, a set of streams from the session's pool, so
 * concurrent runs of one session share nothing mutable but the caches;
 * enqueues every step in order (waits, the work, records); and ends by
 * synchronizing the streams it used.  Control-flow steps run their body
 * programs the same way on the run's streams.
 */
#ifndef HET_EXECUTOR_EXEC_H
#define HET_EXECUTOR_EXEC_H

#include <stddef.h>

#include "executor/program.h"

/* One stream per slot of the session's layout, for one run at a time. */
typedef struct het_stream_set {
  struct het_stream_pool *pool;
  struct het_stream_set *next; /* idle list */
  int n_slots;
  het_stream slots[3 * HET_MAX_EPS + 1];
} het_stream_set;

/* An idle set of pool, or a new one (its streams created).  Thread-safe. */
het_status het_stream_set_acquire(struct het_stream_pool *pool,
                                  het_stream_set **out);
void het_stream_set_release(het_stream_set *set);

/* How a run hands out graph outputs. */
typedef enum het_exec_outputs {
  HET_EXEC_ALLOCATE, /* outputs[i] receive new tensors the caller owns */
  HET_EXEC_INTO,     /* outputs[i] are the caller's tensors, of the right
                        dtype and shape, filled in place */
} het_exec_outputs;

/* Runs program p (the model's) once: params are p->n_params host tensors
 * in program order (already checked against the model); out_index[i]
 * names the graph output (index into p->graph->outputs) that outputs[i]
 * receives.  rec (may be NULL) records every node and boundary step.
 * On failure nothing is written to outputs (ALLOCATE) and the session
 * stays usable.  Thread-safe. */
het_status het_exec_run(het_program *p, het_tensor *const *params,
                        const int *out_index, size_t n_out,
                        het_exec_outputs mode, het_tensor **outputs,
                        const het_exec_recorder *rec);

/* The same for a control-flow body inside a run: set is the run's
 * streams; outputs[i] (body->graph->n_outputs of them) are the enclosing
 * frame's tensors for the body's graph outputs: placed ones are written in
 * place (their shape must match), shells (data NULL) receive a new host
 * allocation they own.  Returns once the body's work is done (every
 * stream of set drained). */
het_status het_exec_body(het_program *body, het_stream_set *set,
                         het_tensor *const *params, het_tensor **outputs,
                         const het_exec_recorder *rec);

#endif
