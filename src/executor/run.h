/* run.h — the per-run value table that providers read inputs from and
 * write outputs to.
 * Invariant: values[id] is NULL until the value is produced (or bound by
 * the caller / an initializer) and is released after its last consumer.
 */
#ifndef HET_EXECUTOR_RUN_H
#define HET_EXECUTOR_RUN_H

#include <pthread.h>
#include <time.h>

#include "core/infer.h"
#include "core/ir.h"
#include "hetrt/provider.h"

struct het_run_ctx {
  const het_graph *graph;
  const struct het_run_ctx *outer; /* enclosing run (subgraph bodies) */
  het_tensor **values;   /* n_values entries */
  int *remaining_uses;   /* consumers left per value; -1 = keep */
  bool *owned;           /* values[id] is owned by the run */
  /* When non-NULL, providers report each node they run with its start and
   * end time (het_run_clock seconds), for measurements and traces. */
  void (*record)(void *recorder, int node, double t0, double t1);
  void *recorder;
  /* Memory plan of this run (executor/memplan.h) and its host arena block;
   * NULL: every value is its own allocation (subgraph bodies, no plan).
   * Tensors placed in the arena do not own their data. */
  const struct het_memplan *plan;
  unsigned char *arena;
  /* Held while releasing values when steps run on several streams at
   * once; NULL in a sequential run. */
  pthread_mutex_t *lock;
};

/* Sets up an empty value table for g: uses (per value, -1 = keep) is
 * copied; initializers are bound (borrowed).  outer may be NULL. */
het_status het_run_ctx_init(het_run_ctx *ctx, const het_graph *g,
                            const int *uses, const het_run_ctx *outer);
/* Frees every tensor the run still owns and the table itself. */
void het_run_ctx_deinit(het_run_ctx *ctx);

/* Moves run-owned tensors of values ids[0..n) to the caller (outputs[i],
 * caller owns), cloning borrowed ones and those in the arena.  All or
 * nothing. */
het_status het_run_take_outputs(het_run_ctx *ctx, const int *ids, size_t n,
                                het_tensor **outputs);

/* Monotonic seconds, for providers that report nodes to ctx->record. */
static inline double het_run_clock(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Input i of node, or NULL when omitted. */
het_tensor *het_run_input(het_run_ctx *ctx, const het_node *node, int i);

/* Runs inference on the node's concrete inputs and creates its output
 * tensors in ctx, allocated on device (NULL = host memory) when their
 * shape is concrete, otherwise left with data == NULL for the kernel to
 * size.  Host outputs the run's memory plan covers (and that fit their
 * planned size) are placed in the arena instead of allocated.  inputs[i] are host-readable views of the node's inputs (NULL when
 * omitted): a device provider passes views of its own memory, since
 * inference may read shape-carrying inputs.  outputs receives
 * node->n_outputs pointers (NULL for omitted outputs). */
het_status het_run_prepare_outputs(het_run_ctx *ctx, const het_node *node,
                                   het_tensor *const *inputs,
                                   const het_device *device,
                                   het_tensor **outputs);

/* The tensor bound to name in ctx or an enclosing run; NULL if none. */
het_tensor *het_run_lookup_outer(const het_run_ctx *ctx, const char *name);

/* Sets uses[v] = -1 for every value of g that a subgraph of g (at any
 * depth) reads from an enclosing scope, so a run keeps it alive. */
void het_run_mark_outer_uses(const het_graph *g, int *uses);

/* The arena address planned for host value v holding nbytes, or NULL
 * when the plan does not cover it (or it does not fit). */
void *het_run_planned(const het_run_ctx *ctx, int v, size_t nbytes);

/* Marks node's inputs as consumed; frees those with no uses left. */
void het_run_release_inputs(het_run_ctx *ctx, const het_node *node);

#endif
