/* infer.h — shape and type inference, one function per operator.
 * The same function serves at load time (symbolic dims, input data known
 * only for constants) and at run time (concrete dims, input data on the
 * host).  An infer function validates the node's attributes and input
 * types and fills every output's dtype and shape; it never reads data it
 * was not given (info.data == NULL means "value not known").
 */
#ifndef HET_CORE_INFER_H
#define HET_CORE_INFER_H

#include <stdbool.h>

#include "core/ir.h"
#include "core/status.h"

/* What is known about one input or output. */
typedef struct het_value_info {
  bool present;            /* false for an omitted optional input */
  het_dtype dtype;         /* UNDEFINED if unknown */
  het_shape shape;         /* rank -1 if unknown */
  const het_tensor *data;  /* value when known (constant or run time) */
} het_value_info;

typedef struct het_infer_ctx {
  const het_node *node;
  int opset;               /* node->opset, for version-dependent rules */
  int n_inputs;
  const het_value_info *inputs;
  int n_outputs;
  het_value_info *outputs; /* present is preset from the node; fill the rest */
  het_arena *arena;        /* for new symbol names, may be NULL at run time */
} het_infer_ctx;

typedef het_status (*het_infer_fn)(het_infer_ctx *ctx);

/* One operator.  min_inputs/max_inputs bound the node's input count
 * (max -1 = variadic); the driver checks them before calling infer. */
typedef struct het_op_def {
  const char *op_type;
  const char *domain; /* "" for ai.onnx */
  int min_inputs, max_inputs;
  int min_outputs, max_outputs;
  het_infer_fn infer;
} het_op_def;

/* For a hetrt-domain op an optimizer fusion creates: the ONNX ops it
 * stands for (NULL-terminated), so a device that supports all of them can
 * claim it too; NULL for any other op. */
const char *const *het_op_fused_parts(const char *domain, const char *op_type);

/* The activation the optimizer fused into node (opt_activation.c):
 * "Relu" or "Clip" for hetrt_act_min/max, the op name for hetrt_act; NULL
 * when none.  A device must support it as well as the node's own op. */
const char *het_node_fused_activation(const het_node *node);
/* Copies node's fused-activation attributes (hetrt_act_min/max, or
 * hetrt_act with hetrt_act_alpha/beta) into out under hetrt.FusedConvDw's
 * names for its depthwise half (to_dw: hetrt_act* → hetrt_dw_act*), or
 * back (hetrt_dw_act* → hetrt_act*); how many (at most HET_ACT_ATTRS).
 * The copies share the originals' data. */
#define HET_ACT_ATTRS 5
int het_node_copy_act_attrs(const het_node *node, bool to_dw, het_attr *out);
/* hetrt.FusedConvDw's second activation (its depthwise half's), as
 * het_node_fused_activation names it, or NULL. */
const char *het_node_fused_dw_activation(const het_node *node);

/* Finds an operator definition; NULL when hetrt does not know the op. */
const het_op_def *het_op_find(const char *domain, const char *op_type);

/* Runs inference for one node.  Checks input/output counts, then calls the
 * op's infer.  Errors name the node.  At load time, inputs whose rank is
 * unknown make the driver leave outputs unknown instead of calling infer. */
het_status het_infer_node(const het_node *node, int n_inputs,
                          const het_value_info *inputs, int n_outputs,
                          het_value_info *outputs, het_arena *arena);

/* Calls of het_infer_node since the process started (tests: a steady run
 * of a static plan infers nothing). */
long het_infer_node_calls(void);

/* Load-time pass over g->order: fills every value's dtype/shape, using
 * initializers as known data; keeps symbolic dims.  A declared output
 * type that contradicts an inferred one is an error naming the value. */
het_status het_graph_infer_shapes(het_graph *g);

/* Shape info describing a concrete tensor (data = t). */
void het_value_info_from_tensor(het_value_info *info, const het_tensor *t);

/* ---- helpers for infer functions ---- */

/* out = numpy broadcast of a and b; ERR_SHAPE naming the node on conflict.
 * Unknown dims broadcast to unknown unless the other side fixes them. */
het_status het_shape_broadcast(const het_infer_ctx *ctx, const het_shape *a,
                                const het_shape *b, het_shape *out);
/* Set a known dim / a shape from an int64 array. */
het_dim het_dim_known(int64_t v);
het_dim het_dim_unknown(void);
void het_shape_set(het_shape *s, int rank, const int64_t *dims);
bool het_shape_is_concrete(const het_shape *s);
/* The same shape for every input: same rank, each dim the same known
 * value or the same named symbol (a batch "N" on both sides). */
bool het_shape_same(const het_shape *a, const het_shape *b);
/* Element count when concrete, else -1. */
int64_t het_shape_count(const het_shape *s);
/* Elements per batch item (dims 1..rank-1) when those are known (the
 * batch may be symbolic), else -1; -1 for rank 0 or unknown rank. */
int64_t het_shape_item_count(const het_shape *s);
/* Normalises axis in [-rank, rank) to [0, rank); ERR_INVALID_MODEL naming
 * the node and attribute otherwise. */
het_status het_infer_axis(const het_infer_ctx *ctx, int64_t axis, int rank,
                          const char *what, int *out);
/* Output i gets input j's dtype and shape. */
void het_infer_copy(het_infer_ctx *ctx, int out, int in);
/* Fails with ERR_TYPE naming the node when input i's dtype is not one of
 * the mask bits (1u << dtype). */
het_status het_infer_require_type(const het_infer_ctx *ctx, int i,
                                  uint32_t mask);
/* Fails with ERR_INVALID_MODEL naming the node: "node 'X' (Op): msg". */
het_status het_infer_fail(const het_infer_ctx *ctx, het_status st,
                          const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define HET_TYPES_FLOAT                                              \
  ((1u << HET_DTYPE_FLOAT32) | (1u << HET_DTYPE_FLOAT64) |           \
   (1u << HET_DTYPE_FLOAT16) | (1u << HET_DTYPE_BFLOAT16))
#define HET_TYPES_SIGNED                                             \
  ((1u << HET_DTYPE_INT8) | (1u << HET_DTYPE_INT16) |                \
   (1u << HET_DTYPE_INT32) | (1u << HET_DTYPE_INT64))
#define HET_TYPES_UNSIGNED                                           \
  ((1u << HET_DTYPE_UINT8) | (1u << HET_DTYPE_UINT16) |              \
   (1u << HET_DTYPE_UINT32) | (1u << HET_DTYPE_UINT64))
#define HET_TYPES_INT (HET_TYPES_SIGNED | HET_TYPES_UNSIGNED)
#define HET_TYPES_NUMERIC (HET_TYPES_FLOAT | HET_TYPES_INT)
#define HET_TYPES_ALL (HET_TYPES_NUMERIC | (1u << HET_DTYPE_BOOL))

/* Operator groups: each src/core/ops/<group>.c defines one table ending
 * with a zeroed entry. */
extern const het_op_def het_ops_elementwise[];
extern const het_op_def het_ops_linalg[];  /* conv, gemm, matmul, pool, norm */
extern const het_op_def het_ops_tensor[];  /* reshape, gather, slice, ... */
extern const het_op_def het_ops_reduce[];  /* reductions, softmax, topk, ... */
extern const het_op_def het_ops_control[]; /* If, Loop, Scan */
extern const het_op_def het_ops_nlp[];     /* hetrt.Gelu, LayerNorm,
                                              Attention, ... (fusions) */
extern const het_op_def het_ops_signal[];  /* DFT, windows, GridSample, NMS */

#endif
