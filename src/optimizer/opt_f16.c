/* opt_f16.c — float16 compute in float32.  No provider of this build has
 * native float16 arithmetic (this CPU has no AVX-512 FP16), so a float16
 * node costs a float32 node plus conversions of its inputs and outputs.
 * This pass gives the float16 values that float-generic nodes compute
 * (Conv, MatMul, Relu, Add, Resize, pools, reductions, data movement: the
 * list below) float32 storage instead, so a region of them runs in
 * float32 end to end; float16 stays at the region's edges:
 *   - a graph input, a Cast to float16, or the output of a node outside
 *     the list read by a node inside it gets one Cast to float32;
 *   - a value computed inside read by a node outside (or a graph output,
 *     or a value a subgraph reads by name) is rounded back by a Cast to
 *     float16 under its own name;
 *   - a float16 initializer read inside gets a float32 copy, converted
 *     once here;
 *   - a Cast to float32 of a value now float32 becomes an Identity (and
 *     goes).
 * The model's explicit Casts to float16 still round; in between, values
 * are not rounded to float16 after each node: results are those of
 * float32 arithmetic on the model's float16 inputs and weights (as ONNX
 * Runtime's CPU provider computes float16 nodes), within float16's
 * rounding of a true float16 evaluation (docs/architecture.md).
 * Also here, at every level from basic: Casts that change nothing (to the
 * input's own type, or back from an exact widening) are removed.
 * Invariant: graph outputs keep their names and float16 type.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "kernels/half.h"
#include "optimizer/opt_internal.h"

/* Default-domain ops whose float semantics do not depend on the float
 * type they compute in (no dtype attribute, no type-specific output). */
static const char *const het_f16_ops[] = {
    "Abs", "Acos", "Acosh", "Add", "ArgMax", "ArgMin", "Asin", "Asinh",
    "Atan", "Atanh", "AveragePool", "BatchNormalization", "Ceil", "Celu",
    "Clip", "Concat", "Conv", "ConvTranspose", "Cos", "Cosh", "DepthToSpace",
    "Div", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten",
    "Floor", "Gather", "GatherElements", "GatherND", "Gelu", "Gemm",
    "GlobalAveragePool", "GlobalMaxPool", "Greater", "GreaterOrEqual",
    "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization",
    "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log",
    "LogSoftmax", "LpNormalization", "LRN", "MatMul", "Max", "MaxPool",
    "Mean", "Min", "Mish", "Mul", "Neg", "Pad", "Pow", "PRelu", "Reciprocal",
    "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
    "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare",
    "Relu", "Reshape", "Resize", "Round", "Selu", "Shape", "Sigmoid", "Sign",
    "Sin", "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign",
    "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh",
    "ThresholdedRelu", "Tile", "TopK", "Transpose", "Trilu", "Unsqueeze",
    "Upsample", "Where", NULL};

static bool het_f16_value(const het_graph *g, int v) {
  return v >= 0 && g->values[v].dtype == HET_DTYPE_FLOAT16;
}

/* Whether node n computes inside a float32 region: an op of the list
 * that reads or writes a float16 value. */
static bool het_f16_inside(const het_graph *g, const het_node *node) {
  if (node->domain[0] || het_opt_has_subgraph(node))
    return false;
  bool ok = false;
  for (int k = 0; het_f16_ops[k] && !ok; k++)
    ok = strcmp(node->op_type, het_f16_ops[k]) == 0;
  if (!ok)
    return false;
  for (int i = 0; i < node->n_inputs; i++)
    if (het_f16_value(g, node->inputs[i]))
      return true;
  for (int i = 0; i < node->n_outputs; i++)
    if (het_f16_value(g, node->outputs[i]))
      return true;
  return false;
}

/* Cast node becomes an Identity (for the identity pass to remove). */
static void het_cast_to_identity(het_node *node) {
  node->op_type = "Identity";
  node->n_attrs = 0;
}

static bool het_f16_is_cast_to(const het_node *node, het_dtype to) {
  return !node->domain[0] && strcmp(node->op_type, "Cast") == 0 &&
         node->n_inputs == 1 &&
         het_node_attr_int(node, "to", -1) == (int64_t)to;
}

/* A new node op(in) -> out of the default domain, Cast's "to" when to >= 0. */
static het_status het_f16_add(het_opt *o, const char *base, const char *op,
                              int in, int out, int to) {
  het_graph *g = o->g;
  int *io = het_arena_calloc(&g->arena, 2, sizeof *io);
  het_attr *a = to >= 0 ? het_arena_calloc(&g->arena, 1, sizeof *a) : NULL;
  size_t len = strlen(base) + 16;
  char *name = het_arena_alloc(&g->arena, len);
  if (!io || (to >= 0 && !a) || !name)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  snprintf(name, len, "%s_%s", base, to == HET_DTYPE_FLOAT16 ? "to_f16"
                                                            : "to_f32");
  io[0] = in;
  io[1] = out;
  if (a)
    *a = (het_attr){.name = "to", .type = HET_ATTR_INT, .i = to};
  het_node n = {.name = name, .op_type = op, .domain = "",
                .opset = (int)het_graph_opset(g, ""), .n_inputs = 1,
                .inputs = io, .n_outputs = 1, .outputs = io + 1,
                .n_attrs = a ? 1 : 0, .attrs = a};
  return het_opt_add_node(o, &n);
}

/* A fresh float32 value shaped like v. */
static het_status het_f16_twin(het_graph *g, int v, int *out) {
  HET_TRY(het_graph_fresh_value(g, g->values[v].name, out));
  g->values[*out].dtype = HET_DTYPE_FLOAT32;
  g->values[*out].shape = g->values[v].shape;
  return HET_OK;
}

/* Float16 initializer v as a new float32 constant. */
static het_status het_f16_constant(het_opt *o, int v, int *out) {
  const het_tensor *t = o->g->values[v].initializer;
  het_tensor *c;
  HET_TRY(het_tensor_create_empty(HET_DTYPE_FLOAT32, t->dims, t->rank, &c));
  het_half_to_float(t->data, c->data, het_tensor_count(t));
  return het_graph_add_constant(o->g, o->g->values[v].name, c, out);
}

/* Every input of an inside node that reads float16 v reads v32 instead. */
static void het_f16_rewire(het_opt *o, const bool *inside, int v, int v32) {
  het_graph *g = o->g;
  for (int k = 0; k < o->n_nodes; k++) {
    int n = g->order[k];
    if (o->dead[n] || !inside[n])
      continue;
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v) { /* v32 is new: uses not kept */
        g->nodes[n].inputs[i] = v32;
        o->uses[v]--;
      }
  }
}

/* Float16 value v read by inside nodes but not computed inside: one
 * float32 copy (a converted constant or a Cast) for all of them. */
static het_status het_f16_enter(het_opt *o, const bool *inside, int v) {
  het_graph *g = o->g;
  int v32;
  if (het_opt_is_constant(g, v) && g->values[v].initializer) {
    HET_TRY(het_f16_constant(o, v, &v32));
  } else {
    HET_TRY(het_f16_twin(g, v, &v32));
    HET_TRY(het_f16_add(o, g->values[v].name, "Cast", v, v32,
                        HET_DTYPE_FLOAT32));
  }
  het_f16_rewire(o, inside, v, v32);
  return HET_OK;
}

/* Float16 value v computed by an inside node: float32 from now on.  A
 * reader outside (a Cast to float32 aside, which becomes an Identity) and
 * a pinned name read the float16 rounding of it, under v's name. */
static het_status het_f16_leave(het_opt *o, const bool *inside, int v) {
  het_graph *g = o->g;
  bool outside = o->pinned[v];
  for (int k = 0; k < o->n_nodes; k++) {
    het_node *node = &g->nodes[g->order[k]];
    if (o->dead[g->order[k]] || inside[g->order[k]])
      continue;
    for (int i = 0; i < node->n_inputs; i++)
      if (node->inputs[i] == v) {
        if (het_f16_is_cast_to(node, HET_DTYPE_FLOAT32))
          het_cast_to_identity(node);
        else
          outside = true;
      }
  }
  if (!outside) {
    g->values[v].dtype = HET_DTYPE_FLOAT32;
    return HET_OK;
  }
  /* The producer writes v32; v = Cast(v32) keeps name, type and the
   * readers outside; the readers inside (and the Identities) take v32. */
  int v32, p = g->values[v].producer;
  HET_TRY(het_f16_twin(g, v, &v32));
  het_node *prod = &g->nodes[p];
  for (int i = 0; i < prod->n_outputs; i++)
    if (prod->outputs[i] == v)
      prod->outputs[i] = v32;
  g->values[v32].producer = p;
  g->values[v].producer = -1;
  for (int k = 0; k < o->n_nodes; k++) {
    het_node *node = &g->nodes[g->order[k]];
    if (!o->dead[g->order[k]] && strcmp(node->op_type, "Identity") == 0 &&
        node->n_inputs == 1 && node->inputs[0] == v && !inside[g->order[k]]) {
      node->inputs[0] = v32;
      o->uses[v]--;
    }
  }
  het_f16_rewire(o, inside, v, v32);
  return het_f16_add(o, g->values[v].name, "Cast", v32, v, HET_DTYPE_FLOAT16);
}

het_status het_opt_f16_to_f32(het_opt *o) {
  het_graph *g = o->g;
  bool *inside = calloc((size_t)g->n_nodes + 1, sizeof *inside);
  int n_values = o->n_values;
  bool *computed = calloc((size_t)n_values + 1, sizeof *computed);
  bool *read = calloc((size_t)n_values + 1, sizeof *read);
  het_status st = inside && computed && read
                      ? HET_OK
                      : het_error(HET_ERR_OUT_OF_MEMORY,
                                  "optimizer: out of memory");
  int n_nodes = o->n_nodes;
  for (int k = 0; k < n_nodes && st == HET_OK; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || !(inside[n] = het_f16_inside(g, node)))
      continue;
    for (int i = 0; i < node->n_outputs; i++)
      if (het_f16_value(g, node->outputs[i]) && node->outputs[i] < n_values)
        computed[node->outputs[i]] = true;
    for (int i = 0; i < node->n_inputs; i++)
      if (het_f16_value(g, node->inputs[i]) && node->inputs[i] < n_values)
        read[node->inputs[i]] = true;
  }
  for (int v = 0; v < n_values && st == HET_OK; v++) {
    if (computed[v])
      st = het_f16_leave(o, inside, v);
    else if (read[v])
      st = het_f16_enter(o, inside, v);
    if (st == HET_OK && (computed[v] || read[v])) {
      o->changes++;
      if (o->stats)
        o->stats->f16_values_widened++;
    }
  }
  free(inside);
  free(computed);
  free(read);
  return st;
}

/* Whether every value of type from is exactly a value of type to. */
static bool het_cast_widens(het_dtype from, het_dtype to) {
  bool half = from == HET_DTYPE_FLOAT16 || from == HET_DTYPE_BFLOAT16;
  return (half && (to == HET_DTYPE_FLOAT32 || to == HET_DTYPE_FLOAT64)) ||
         (from == HET_DTYPE_FLOAT32 && to == HET_DTYPE_FLOAT64);
}

het_status het_opt_cancel_casts(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < o->n_nodes; k++) {
    int n = g->order[k];
    het_node *node = &g->nodes[n];
    if (o->dead[n] || node->domain[0] || strcmp(node->op_type, "Cast") ||
        node->n_inputs != 1 || node->n_outputs != 1 || node->inputs[0] < 0 ||
        node->outputs[0] < 0)
      continue;
    int v = node->inputs[0], w = node->outputs[0];
    het_dtype to = g->values[w].dtype;
    if (g->values[v].dtype == to && to != HET_DTYPE_UNDEFINED) {
      het_cast_to_identity(node); /* a Cast to its input's type */
      o->changes++;
      continue;
    }
    /* Cast(Cast(u, wider), u's type) is u */
    int p = g->values[v].producer;
    if (p < 0 || o->dead[p] || o->pinned[w] || g->nodes[p].domain[0] ||
        strcmp(g->nodes[p].op_type, "Cast") || g->nodes[p].n_inputs != 1 ||
        g->nodes[p].inputs[0] < 0)
      continue;
    int u = g->nodes[p].inputs[0];
    if (g->values[u].dtype != to || !het_cast_widens(to, g->values[v].dtype))
      continue;
    het_opt_kill_node(o, n);
    het_opt_replace_uses(o, w, u);
    o->changes++;
    if (o->stats)
      o->stats->casts_cancelled++;
  }
  return HET_OK;
}
