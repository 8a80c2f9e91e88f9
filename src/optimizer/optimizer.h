/* optimizer.h — graph rewrites run between shape inference and
 * partitioning: Identity/Dropout removal, constant folding (including
 * Shape/Size of statically shaped values), dead-node removal and
 * BatchNormalization folded into a preceding Conv or ConvTranspose.
 * Invariant: a rewritten graph computes the same graph outputs (same names)
 * as the original, is validated (g->order fresh) and shape-inferred.
 */
#ifndef HET_OPTIMIZER_H
#define HET_OPTIMIZER_H

#include "core/ir.h"
#include "core/status.h"

/* Optimization levels (the session option "optimization"). */
enum {
  HET_OPT_NONE = 0,     /* no rewrite */
  HET_OPT_BASIC = 1,    /* Identity/Dropout removal, Casts that cancel,
                           constant folding, dead nodes */
  HET_OPT_EXTENDED = 2, /* basic + BatchNormalization folded into Conv
                           or ConvTranspose, Relu/Clip fused into the
                           Conv or ConvTranspose before, QDQ
                           islands, float16 regions computed in float32 */
  HET_OPT_ALL = 3,      /* extended + fusions into hetrt-domain ops:
                           Conv+Add(+act), 1x1 Conv+depthwise Conv,
                           Gelu, LayerNorm, attention,
                           MatMul+Add; channel Concats taken apart before
                           a pool or Conv (the default) */
};

/* What het_optimize did (counts over all rounds). */
typedef struct het_optimize_stats {
  int nodes_before, nodes_after;
  int identities_removed;   /* Identity and inference Dropout nodes */
  int nodes_folded;         /* nodes replaced by constants */
  int shapes_folded;        /* of which Shape/Size of static shapes */
  int batchnorms_fused;     /* BatchNormalization folded into Conv or
                               ConvTranspose */
  int activations_fused;    /* Relu/Clip taken over by the Conv before */
  int hard_activations_fused; /* written-out hard-swish/-sigmoid → ops */
  int conv_adds_fused;      /* Add (+Relu/Clip) taken over by a Conv */
  int conv_dws_fused;       /* 1x1 Conv + depthwise Conv pairs */
  int conv_pools_fused;     /* Conv + MaxPool pairs */
  int pools_below_concat;   /* pool(Concat) → Concat(pools) */
  int concat_convs_split;   /* Conv(Concat) → chain of partial Convs */
  int gelus_fused;          /* Erf-form Gelu patterns → hetrt.Gelu */
  int layernorms_fused;     /* ReduceMean/Sub/Pow/Sqrt/Div patterns */
  int attentions_fused;     /* MatMul→scale→Softmax→MatMul patterns */
  int matmul_adds_fused;    /* MatMul + bias Add */
  int qdq_fused;            /* DQ -> Conv/MatMul/Add [-> act] -> Q islands
                               into QLinearConv/QLinearMatMul/QLinearAdd */
  int qdq_kept_float;       /* islands left float because the estimates
                               found the float form cheaper (each time
                               weighed) */
  int qdq_luts;             /* DQ -> elementwise float ops -> Q chains into
                               hetrt.QLinearLut (opt_qlut.c) */
  int f16_values_widened;   /* float16 values given float32 storage or a
                               float32 copy (opt_f16.c) */
  int casts_cancelled;      /* Cast(Cast(u, wider), u's type) read as u */
  int dead_removed;         /* nodes whose outputs nobody read */
  int initializers_dropped; /* initializers no longer read, freed */
  int rounds;
} het_optimize_stats;

/* Rewrites g in place at the given level (HET_OPT_*; levels above
 * ALL act as ALL, 0 or less does nothing).  g must be validated
 * (g->order set) and shape-inferred (het_graph_infer_shapes); on success
 * it is again both.  Nodes carrying subgraphs (If/Loop/Scan) and values
 * their subgraphs read from the outer scope are kept; graph outputs keep
 * their names.  Subgraph bodies themselves are not rewritten (see
 * het_optimize_with).  stats may be NULL.  Not thread safe for one
 * graph.  Errors: OUT_OF_MEMORY, or the
 * validation/inference status if the rewritten graph fails them (an
 * internal error: the graph is then unusable). */
het_status het_optimize(het_graph *g, int level, het_optimize_stats *stats);

/* Which QDQ islands become int8 operators (QLinearConv, QLinearMatMul,
 * hetrt.QLinearAdd, hetrt.QLinearLut): by default all that the fast
 * kernels take.  off: none (the session option int8=off; Q/DQ stay where
 * the model wrote them).  A chain into a table (opt_qlut.c) is never
 * weighed (one pass over bytes instead of several over floats), and stays
 * as written when a rule below gives one of its nodes a float precision.
 * names[i] (n_names of them) is a node given a precision by a policy
 * rule, int8[i] whether that precision is int8: an island follows its
 * operator's (the Conv, MatMul, Gemm or Add), else its QuantizeLinear's;
 * a rule decides without weighing.
 * estimate (NULL: no weighing) gives the seconds node of g would take:
 * fused, the fused operator where the int8 islands run; else the float
 * node where it runs best (moving its values to and from that device
 * included).  g is mid-rewrite (dead nodes still present, the node maybe
 * a probe of the fused operator in place of the QuantizeLinear), so it
 * may read only that node and its values.  prepare (may be NULL) is
 * called with the graph once per pass, before its first weighing (node
 * ids it sees stay valid for the pass; nodes added later have larger
 * ones).
 * Each other island is weighed: its float form (the input
 * DequantizeLinears read only by it, the operator, the QuantizeLinear;
 * the weight's DequantizeLinear is folded, an activation fused) against
 * the fused operator; it stays float when that is cheaper (a tie fuses).
 * weighed (may be NULL) hears each weighing (an island is weighed again
 * in each round it stays float).
 * A fused operator takes the name of the operator it replaces. */
typedef struct het_optimize_island {
  const char *name;     /* the operator's (Conv, MatMul, Gemm, Add) */
  const het_graph *graph;
  int node;             /* the operator, in graph as weighed */
  bool fused;
  double int8_seconds, float_seconds;
  bool unknown_dims;    /* a dim of the island was unknown (estimated as
                           the estimate takes it) */
} het_optimize_island;

typedef struct het_optimize_int8 {
  bool off;
  const char *const *names;
  const bool *int8;
  int n_names;
  het_status (*prepare)(void *ctx, const het_graph *g);
  het_status (*estimate)(void *ctx, const het_graph *g, int node, bool fused,
                         double *seconds);
  het_status (*weighed)(void *ctx, const het_optimize_island *island);
  void *ctx;
} het_optimize_int8;

/* het_optimize with the int8 choices of int8 (NULL: the default).  For a
 * control-flow body g, outer is the enclosing graph, which must hold
 * every name g and the bodies below it capture (read by name, not
 * produced in g); NULL for a model's main graph. */
het_status het_optimize_with(het_graph *g, const het_graph *outer, int level,
                             const het_optimize_int8 *int8,
                             het_optimize_stats *stats);

#endif
