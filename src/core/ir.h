/* ir.h — the graph IR: values, nodes with attributes, graphs.
 * Invariants: every value has a unique name; a node's inputs/outputs are
 * value ids (-1 for an omitted optional input or output); each value has at
 * most one producer; graph->order (after het_graph_validate) is a
 * topological order of all nodes.  All strings and attribute payloads live
 * in graph->arena; initializer tensors are owned by the graph.
 */
#ifndef HET_CORE_IR_H
#define HET_CORE_IR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/tensor.h"
#include "hetrt/hetrt.h"

/* A dimension: value >= 0 when known; value == -1 when not known yet, with
 * symbol naming it when the model does ("N"), else NULL. */
typedef struct het_dim {
  int64_t value;
  const char *symbol;
} het_dim;

/* rank == -1 when the rank is unknown (dims then unused). */
typedef struct het_shape {
  int rank;
  het_dim dims[HET_MAX_RANK];
} het_shape;

enum {
  HET_VALUE_GRAPH_INPUT = 1u << 0,
  HET_VALUE_GRAPH_OUTPUT = 1u << 1,
  HET_VALUE_INITIALIZER = 1u << 2,
};

typedef struct het_value {
  const char *name;
  het_dtype dtype;       /* UNDEFINED while unknown */
  het_shape shape;
  het_tensor *initializer; /* constant data (owned by the graph) or NULL */
  int producer;          /* node id, -1 for graph inputs and initializers */
  unsigned flags;        /* HET_VALUE_* */
} het_value;

/* Values equal ONNX AttributeProto.AttributeType. */
typedef enum het_attr_type {
  HET_ATTR_UNDEFINED = 0,
  HET_ATTR_FLOAT = 1,
  HET_ATTR_INT = 2,
  HET_ATTR_STRING = 3,
  HET_ATTR_TENSOR = 4,
  HET_ATTR_GRAPH = 5,
  HET_ATTR_FLOATS = 6,
  HET_ATTR_INTS = 7,
  HET_ATTR_STRINGS = 8,
  HET_ATTR_TENSORS = 9,
  HET_ATTR_GRAPHS = 10,
} het_attr_type;

struct het_graph;

typedef struct het_attr {
  const char *name;
  het_attr_type type;
  float f;
  int64_t i;
  const char *s; /* NUL-terminated; s_len excludes the NUL */
  size_t s_len;
  het_tensor *t;            /* owned by the graph */
  struct het_graph *g;      /* subgraph, owned by the parent graph */
  size_t n;                 /* element count of the list below */
  float *floats;
  int64_t *ints;
  const char **strings;
  het_tensor **tensors;
} het_attr;

typedef struct het_node {
  const char *name;    /* never NULL; loader names unnamed nodes */
  const char *op_type;
  const char *domain;  /* "" for the default ONNX domain */
  int opset;           /* opset version imported for this node's domain */
  int n_inputs;
  int *inputs;
  int n_outputs;
  int *outputs;
  int n_attrs;
  het_attr *attrs;
} het_node;

typedef struct het_opset_import {
  const char *domain;
  int64_t version;
} het_opset_import;

typedef struct het_graph {
  het_arena arena;
  const char *name;
  het_value *values; /* malloc'd, grows */
  int n_values, cap_values;
  het_node *nodes;   /* malloc'd, grows */
  int n_nodes, cap_nodes;
  int *inputs;       /* graph inputs in declared order (value ids; arena) */
  int n_inputs;
  int *outputs;      /* graph outputs in declared order (arena) */
  int n_outputs;
  int *order;        /* topological order, filled by het_graph_validate */
  het_opset_import *opsets;
  int n_opsets;
  int64_t ir_version;
  const char *producer_name;
  const char **metadata_keys, **metadata_values;
  int n_metadata;
  struct het_graph **subgraphs; /* owned subgraphs (attribute graphs) */
  int n_subgraphs, cap_subgraphs;
  int *name_index;   /* open-addressing hash of value ids by name */
  int name_index_cap;
} het_graph;

/* ---- construction ---- */

/* Caller owns *out (het_graph_destroy). */
het_status het_graph_create(het_graph **out);
/* Destroys subgraphs and initializers too.  Accepts NULL. */
void het_graph_destroy(het_graph *g);

/* Finds a value by name; -1 when absent.  O(1) after the first call on a
 * graph that is not being modified (hash index built lazily). */
int het_graph_find_value(het_graph *g, const char *name);

/* Returns the id of the value named name, creating it (dtype UNDEFINED,
 * rank -1) when absent.  name is copied into the arena. */
het_status het_graph_intern_value(het_graph *g, const char *name, int *id);

/* Appends a node (fields copied shallowly; arrays must live in g->arena)
 * and records it as the producer of its outputs.  Fails with
 * INVALID_MODEL when an output already has a producer or is an initializer
 * or graph input. */
het_status het_graph_add_node(het_graph *g, const het_node *node, int *id);

/* Interns a new value named after base (base, base_1, ...): no producer,
 * dtype and shape unknown (UNDEFINED, rank -1). */
het_status het_graph_fresh_value(het_graph *g, const char *base, int *id);
/* Interns a fresh value named after base holding t as a constant
 * initializer.  The graph takes ownership of t: on failure t is
 * destroyed. */
het_status het_graph_add_constant(het_graph *g, const char *base,
                                  het_tensor *t, int *id);
/* Makes value v a constant holding t (graph owns t; a previous
 * initializer is freed): producer -1, dtype and shape from t. */
void het_graph_set_constant(het_graph *g, int v, het_tensor *t);

/* *out = a copy of src (caller owns: het_graph_destroy) with its own
 * values, nodes, attributes and subgraphs, and the same value and node ids;
 * initializer and attribute tensors borrow src's data, so src must
 * outlive the copy and neither may change that data. */
het_status het_graph_clone(const het_graph *src, het_graph **out);

/* Registers an owned subgraph so het_graph_destroy frees it. */
het_status het_graph_adopt_subgraph(het_graph *g, het_graph *sub);

/* Opset version imported for domain ("" and "ai.onnx" are the same); 0 when
 * the model imports none. */
int64_t het_graph_opset(const het_graph *g, const char *domain);

/* Value v is an initializer no input overrides (IR < 4 lists every
 * initializer among the graph inputs: not an override). */
bool het_graph_value_constant(const het_graph *g, int v);

/* ---- validation ---- */

/* Checks dangling inputs (a value with no producer that is neither graph
 * input nor initializer), outputs without producer, duplicate names, and
 * cycles (naming a node on the cycle), then fills g->order.  outer, when
 * non-NULL, is the enclosing graph whose values a subgraph may read. */
het_status het_graph_validate(het_graph *g, const het_graph *outer);

/* Calls fn(ctx, v) for every value v of g that sub, a subgraph nested in
 * g at any depth, reads from an enclosing scope (by name: not produced in
 * its own graph, not one of its inputs or initializers).  Stops at the
 * first status fn returns other than HET_OK and returns it. */
het_status het_graph_outer_reads(const het_graph *g, const het_graph *sub,
                                 het_status (*fn)(void *ctx, int v),
                                 void *ctx);

/* ---- attributes ---- */

const het_attr *het_node_find_attr(const het_node *n, const char *name);
int64_t het_node_attr_int(const het_node *n, const char *name, int64_t dflt);
float het_node_attr_float(const het_node *n, const char *name, float dflt);
/* NULL when absent. */
const char *het_node_attr_string(const het_node *n, const char *name);
/* Borrowed list and its length; NULL and *count = 0 when absent. */
const int64_t *het_node_attr_ints(const het_node *n, const char *name,
                                  size_t *count);
/* True when every entry of ints attribute name is v, or it is absent
 * (strides or dilations all 1, pads all 0). */
bool het_node_attr_ints_all(const het_node *n, const char *name, int64_t v);
const float *het_node_attr_floats(const het_node *n, const char *name,
                                  size_t *count);
/* An activation node's "alpha" and "beta" with ONNX's defaults for its op
 * (LeakyRelu alpha 0.01; Elu, Celu, ThresholdedRelu 1; Selu 1.67326...;
 * HardSigmoid 0.2 and 0.5; 0 otherwise); Shrink's "lambd" (0.5) and
 * "bias" (0) come back as alpha and beta. */
void het_node_act_params(const het_node *n, float *alpha, float *beta);

/* The name of the activation a Conv may carry as its hetrt_act attribute
 * (LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Tanh: elementwise ops the
 * Conv kernels apply to their output), the list's own copy; NULL for any
 * other name (a model or plan file naming another op there is refused). */
const char *het_conv_act_name(const char *op);

/* het_error with "node 'name' (Op): " in front of the formatted message:
 * the one place node-level errors are worded (inference, kernels). */
het_status het_node_errorv(const het_node *n, het_status st, const char *fmt,
                           va_list ap);
het_status het_node_error(const het_node *n, het_status st, const char *fmt,
                          ...) __attribute__((format(printf, 3, 4)));

/* Input i's value id, or -1 when i >= n_inputs or the input was omitted. */
int het_node_input(const het_node *n, int i);

#endif
