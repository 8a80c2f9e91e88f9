/* run.h — the per-run value table that providers read inputs from and
 * write outputs to.
 * Invariant: values[id] is NULL until the value is produced (or bound by
 * the caller / an initializer) and is released after its last consumer.
 */
#ifndef HET_EXECUTOR_RUN_H
#define HET_EXECUTOR_RUN_H

#include "core/infer.h"
#include "core/ir.h"
#include "hetrt/provider.h"

struct het_run_ctx {
  const het_graph *graph;
  het_tensor **values;   /* n_values entries */
  int *remaining_uses;   /* consumers left per value; -1 = keep */
  bool *owned;           /* values[id] is owned by the run */
};

/* Input i of node, or NULL when omitted. */
het_tensor *het_run_input(het_run_ctx *ctx, const het_node *node, int i);

/* Runs inference on node's concrete inputs and creates its output
 * tensors in ctx: allocated when their shape is concrete, otherwise left
 * with data == NULL for the kernel to size with het_tensor_alloc.  outputs
 * receives node->n_outputs pointers (NULL for omitted outputs). */
het_status het_run_prepare_outputs(het_run_ctx *ctx, const het_node *node,
                                   het_tensor **outputs);

/* Marks node's inputs as consumed; frees those with no uses left. */
void het_run_release_inputs(het_run_ctx *ctx, const het_node *node);

#endif
