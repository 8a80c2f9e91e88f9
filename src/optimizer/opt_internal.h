/* opt_internal.h — state shared by the optimizer passes: per-node dead
 * marks, per-value consumer counts and "pinned" marks (graph outputs and
 * values read by name from subgraphs, whose names must survive), and the
 * graph surgery helpers (rewiring, node compaction).
 * Invariant: uses/pinned describe g as of the last het_opt_refresh; a pass
 * that rewires inputs keeps uses up to date itself.
 */
#ifndef HET_OPTIMIZER_INTERNAL_H
#define HET_OPTIMIZER_INTERNAL_H

#include <stdbool.h>

#include "core/ir.h"
#include "optimizer/optimizer.h"

typedef struct het_opt {
  het_graph *g;
  const het_graph *outer; /* enclosing graph of a body, or NULL */
  int level;
  const het_optimize_int8 *int8; /* NULL: every island int8 */
  bool *dead;      /* per node: marked for removal (n_nodes entries) */
  int *uses;       /* per value: number of live node inputs reading it */
  bool *pinned;    /* per value: graph output or read by a subgraph */
  int n_values;    /* entries in uses/pinned (values added later: none) */
  int n_nodes;     /* nodes as of the last refresh/compact (g->order's
                      length once validated); dead may hold more */
  het_optimize_stats *stats;
  int changes;     /* rewrites made in the current round */
  bool weighing;   /* int8->prepare was called in this QDQ pass */
} het_opt;

/* (Re)computes dead (all false), uses and pinned for the current graph. */
het_status het_opt_refresh(het_opt *o);
void het_opt_deinit(het_opt *o);

/* True for a value whose data is fixed: an initializer that is not also
 * a graph input (those are overridable defaults), except in IR < 4 models,
 * where every initializer is listed as an input (ONNX Runtime does the
 * same). */
bool het_opt_is_constant(const het_graph *g, int v);
/* The constant tensor behind value v: a constant initializer, or a
 * Constant node's value (for passes that run before folding turns those
 * into initializers); NULL otherwise. */
const het_tensor *het_opt_const_tensor(const het_graph *g, int v);
/* True when node carries a subgraph attribute (If, Loop, Scan). */
bool het_opt_has_subgraph(const het_node *node);
/* Number of uses of v, or a large number when v is pinned / out of range. */
int het_opt_uses(const het_opt *o, int v);

/* Every live node input reading from reads to instead (uses updated). */
void het_opt_replace_uses(het_opt *o, int from, int to);
/* Marks node n dead; its input uses are released. */
void het_opt_kill_node(het_opt *o, int n);
/* Node c absorbs node n, the only reader of c's output: c writes n's
 * (first) output value instead and n is killed. */
void het_opt_absorb_next(het_opt *o, int c, int n);

/* Appends node (arrays in g->arena) to g, live, its input uses counted.
 * g->nodes may move.  Nodes added in a round are not in g->order: later
 * passes of the round (het_opt_remove_dead included) do not visit them. */
het_status het_opt_add_node(het_opt *o, const het_node *node);

/* Removes dead nodes from g->nodes (attribute tensors of removed nodes
 * freed), fixes producers and frees g->order (validate recomputes it). */
het_status het_opt_compact(het_opt *o);
/* Frees initializers nobody reads (not graph inputs/outputs, not read by a
 * subgraph); counts them in stats. */
void het_opt_drop_unused_initializers(het_opt *o);

/* opt_fold.c: runs node's CPU kernel on in[] (its n_inputs tensors, NULL
 * where omitted) into new tensors outs[] (n_outputs; NULL where omitted),
 * caller owns; UNSUPPORTED when no kernel runs it or an output is larger
 * than folding allows. */
het_status het_opt_eval_node(const het_graph *g, const het_node *node,
                             het_tensor **in, het_tensor **outs);

/* ---- passes (each returns the number of rewrites through o->changes) ---- */
het_status het_opt_remove_identities(het_opt *o);
het_status het_opt_fold_constants(het_opt *o);
het_status het_opt_fuse_qdq(het_opt *o);       /* opt_qdq.c: QDQ islands into
                                                   QLinearConv/QLinearMatMul */
het_status het_opt_fuse_qlut(het_opt *o);      /* opt_qlut.c: DQ -> elementwise
                                                   chain -> Q into a table */
/* opt_qdq.c: Q/DQ through data-movement ops; *moved: nodes out of order */
het_status het_opt_move_qdq(het_opt *o, bool *moved);
het_status het_opt_f16_to_f32(het_opt *o);   /* opt_f16.c: float16 regions
                                                 computed in float32 */
/* opt_f16.c: a Cast to its input's type becomes an Identity; a Cast back
 * from an exact widening Cast (float16 -> float32 -> float16) reads the
 * widened value's source */
het_status het_opt_cancel_casts(het_opt *o);
het_status het_opt_fuse_batchnorm(het_opt *o);
het_status het_opt_fuse_activations(het_opt *o);
het_status het_opt_fuse_hard(het_opt *o);     /* opt_hard.c: written-out
                                                 hard-swish/-sigmoid */
het_status het_opt_fuse_conv_add(het_opt *o); /* opt_conv_add.c */
het_status het_opt_fuse_conv_dw(het_opt *o);  /* opt_conv_dw.c */
het_status het_opt_fuse_conv_pool(het_opt *o); /* opt_conv_pool.c */
/* opt_conv_dw.c: auto_pad absent or NOTSET (pads are the node's own). */
bool het_opt_explicit_pads(const het_node *n);
/* opt_conv_dw.c: a plain float32 Conv (default domain, not yet fused into
 * anything but an activation; explicit pads, no dilation) with constant
 * rank-4 weights and bias: its weights, or NULL. */
const het_tensor *het_opt_plain_conv(const het_opt *o, int c);
het_status het_opt_split_concats(het_opt *o);  /* opt_concat.c */
het_status het_opt_fuse_nlp(het_opt *o);      /* opt_nlp*.c: Gelu,
                                                 LayerNorm, attention,
                                                 MatMul+Add */
void het_opt_remove_dead(het_opt *o);

#endif
