/* infer.c — the shape-inference driver (per node and over a graph) and the
 * helpers op infer functions share.  Invariant: after het_graph_infer_shapes
 * every value produced by a known op has the best dtype/shape knowable at
 * load time; declared symbols survive where inference cannot do better.
 */
#include "core/infer.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer_sym.h"
#include "core/status.h"

het_dim het_dim_known(int64_t v) {
  het_dim d = {v, NULL};
  return d;
}

het_dim het_dim_unknown(void) {
  het_dim d = {-1, NULL};
  return d;
}

void het_shape_set(het_shape *s, int rank, const int64_t *dims) {
  s->rank = rank;
  for (int i = 0; i < rank; i++)
    s->dims[i] = het_dim_known(dims[i]);
}

bool het_shape_is_concrete(const het_shape *s) {
  if (s->rank < 0)
    return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i].value < 0)
      return false;
  return true;
}

bool het_shape_same(const het_shape *a, const het_shape *b) {
  if (a->rank < 0 || a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++) {
    const het_dim *x = &a->dims[i], *y = &b->dims[i];
    bool known = x->value >= 0 && x->value == y->value;
    bool symbol = x->value < 0 && y->value < 0 && x->symbol && y->symbol &&
                  strcmp(x->symbol, y->symbol) == 0;
    if (!known && !symbol)
      return false;
  }
  return true;
}

int64_t het_shape_item_count(const het_shape *s) {
  if (s->rank < 1)
    return -1;
  int64_t d[HET_MAX_RANK];
  for (int i = 1; i < s->rank; i++) {
    if (s->dims[i].value < 0)
      return -1;
    d[i - 1] = s->dims[i].value;
  }
  return het_dims_count(d, s->rank - 1);
}

int64_t het_shape_count(const het_shape *s) {
  if (!het_shape_is_concrete(s))
    return -1;
  int64_t d[HET_MAX_RANK];
  for (int i = 0; i < s->rank; i++)
    d[i] = s->dims[i].value;
  return het_dims_count(d, s->rank);
}

het_status het_infer_fail(const het_infer_ctx *ctx, het_status st,
                          const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  het_status r = het_node_errorv(ctx->node, st, fmt, ap);
  va_end(ap);
  return r;
}

static bool het_dim_same_symbol(het_dim a, het_dim b) {
  return a.symbol && b.symbol && strcmp(a.symbol, b.symbol) == 0;
}

het_status het_shape_broadcast(const het_infer_ctx *ctx, const het_shape *a,
                               const het_shape *b, het_shape *out) {
  if (a->rank < 0 || b->rank < 0) {
    out->rank = -1;
    return HET_OK;
  }
  int rank = a->rank > b->rank ? a->rank : b->rank;
  het_shape r;
  r.rank = rank;
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - a->rank), ib = i - (rank - b->rank);
    het_dim da = ia >= 0 ? a->dims[ia] : het_dim_known(1);
    het_dim db = ib >= 0 ? b->dims[ib] : het_dim_known(1);
    if (da.value == 1)
      r.dims[i] = db;
    else if (db.value == 1)
      r.dims[i] = da;
    else if (da.value >= 0 && db.value >= 0) {
      if (da.value != db.value)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "cannot broadcast dim %d: %lld vs %lld", i,
                              (long long)da.value, (long long)db.value);
      r.dims[i] = da;
    } else if (da.value >= 0)
      r.dims[i] = da; /* the unknown side must be 1 or equal */
    else if (db.value >= 0)
      r.dims[i] = db;
    else if (het_dim_same_symbol(da, db))
      r.dims[i] = da;
    else
      r.dims[i] = het_dim_unknown();
  }
  *out = r;
  return HET_OK;
}

het_status het_infer_axis(const het_infer_ctx *ctx, int64_t axis, int rank,
                          const char *what, int *out) {
  if (axis < -(int64_t)rank || axis >= rank)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "%s %lld is out of range for rank %d", what,
                          (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return HET_OK;
}

void het_infer_copy(het_infer_ctx *ctx, int out, int in) {
  ctx->outputs[out].dtype = ctx->inputs[in].dtype;
  ctx->outputs[out].shape = ctx->inputs[in].shape;
}

het_status het_infer_require_type(const het_infer_ctx *ctx, int i,
                                  uint32_t mask) {
  het_dtype t = ctx->inputs[i].dtype;
  if (t == HET_DTYPE_UNDEFINED || ((unsigned)t < 32 && (mask >> t) & 1u))
    return HET_OK;
  return het_infer_fail(ctx, HET_ERR_TYPE, "input %d has unsupported type %s",
                        i, het_dtype_str(t));
}

void het_value_info_from_tensor(het_value_info *info, const het_tensor *t) {
  info->present = true;
  info->dtype = t->dtype;
  het_shape_set(&info->shape, t->rank, t->dims);
  info->data = t;
}

static het_status het_infer_check_counts(const het_node *node,
                                         const het_op_def *def) {
  if (node->n_inputs < def->min_inputs ||
      (def->max_inputs >= 0 && node->n_inputs > def->max_inputs))
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): %d inputs, expected %d..%d",
                     node->name, node->op_type, node->n_inputs,
                     def->min_inputs, def->max_inputs);
  /* The first min_inputs inputs are required, and every input of a
   * variadic op (ONNX omits only optional inputs; kernels read required
   * ones without a check), except the optional leading inputs of Loop (M,
   * cond) and of opset-8 Scan (sequence_lens). */
  bool onnx = !node->domain || !*node->domain;
  int first = !onnx ? 0
              : strcmp(node->op_type, "Loop") == 0 ? 2
              : strcmp(node->op_type, "Scan") == 0 && node->opset < 9 ? 1
                                                                     : 0;
  int end = def->max_inputs < 0 ? node->n_inputs : def->min_inputs;
  for (int i = first; i < end; i++)
    if (node->inputs[i] < 0)
      return het_error(HET_ERR_INVALID_MODEL,
                       "node '%s' (%s): required input %d is omitted",
                       node->name, node->op_type, i);
  if (node->n_outputs < def->min_outputs ||
      (def->max_outputs >= 0 && node->n_outputs > def->max_outputs))
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): %d outputs, expected %d..%d",
                     node->name, node->op_type, node->n_outputs,
                     def->min_outputs, def->max_outputs);
  return HET_OK;
}

static atomic_long het_infer_calls;

long het_infer_node_calls(void) { return atomic_load(&het_infer_calls); }

het_status het_infer_node(const het_node *node, int n_inputs,
                          const het_value_info *inputs, int n_outputs,
                          het_value_info *outputs, het_arena *arena) {
  atomic_fetch_add_explicit(&het_infer_calls, 1, memory_order_relaxed);
  const het_op_def *def = het_op_find(node->domain, node->op_type);
  if (!def)
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s': operator %s%s%s is not supported", node->name,
                     node->domain && *node->domain ? node->domain : "",
                     node->domain && *node->domain ? "." : "", node->op_type);
  HET_TRY(het_infer_check_counts(node, def));
  for (int o = 0; o < n_outputs; o++) {
    outputs[o].dtype = HET_DTYPE_UNDEFINED;
    outputs[o].shape.rank = -1;
    outputs[o].data = NULL;
  }
  het_infer_ctx ctx = {
      .node = node,
      .opset = node->opset,
      .n_inputs = n_inputs,
      .inputs = inputs,
      .n_outputs = n_outputs,
      .outputs = outputs,
      .arena = arena,
  };
  return def->infer(&ctx);
}

/* Merges what the model declared for a value with what was inferred:
 * inferred facts win, declared symbols fill unknown dims. */
static het_status het_merge_declared(const het_node *node, het_value *v,
                                     const het_value_info *inf) {
  if (v->dtype != HET_DTYPE_UNDEFINED && inf->dtype != HET_DTYPE_UNDEFINED &&
      v->dtype != inf->dtype)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): output '%s' is declared %s but "
                     "computes %s",
                     node->name, node->op_type, v->name,
                     het_dtype_str(v->dtype), het_dtype_str(inf->dtype));
  if (inf->dtype != HET_DTYPE_UNDEFINED)
    v->dtype = inf->dtype;
  if (inf->shape.rank < 0)
    return HET_OK;
  het_shape s = inf->shape;
  if (v->shape.rank == s.rank)
    for (int i = 0; i < s.rank; i++)
      if (s.dims[i].value < 0 && !s.dims[i].symbol)
        s.dims[i] = v->shape.dims[i];
  v->shape = s;
  return HET_OK;
}

static void het_value_info_from_value(het_value_info *info,
                                      const het_value *v) {
  info->present = true;
  info->dtype = v->dtype;
  info->shape = v->shape;
  /* An initializer that is also a graph input is only a default. */
  bool overridable = (v->flags & HET_VALUE_GRAPH_INPUT) != 0;
  info->data = overridable ? NULL : v->initializer;
}

/* Infers one node at load time; returns HET_OK when outputs stay unknown. */
static het_status het_infer_graph_node(het_graph *g, const het_node *node,
                                       het_sym_value *sym) {
  het_value_info in[64], out[64];
  /* counts and required inputs even where shapes are unknown: the
   * optimizer's rewrites read a known op's required inputs unchecked */
  const het_op_def *def = het_op_find(node->domain, node->op_type);
  if (def)
    HET_TRY(het_infer_check_counts(node, def));
  if (node->n_inputs > 64 || node->n_outputs > 64)
    return HET_OK; /* left unknown; resolved at run time */
  bool known = true;
  for (int i = 0; i < node->n_inputs; i++) {
    int v = node->inputs[i];
    memset(&in[i], 0, sizeof in[i]);
    in[i].shape.rank = -1;
    if (v < 0)
      continue;
    het_value_info_from_value(&in[i], &g->values[v]);
    if (in[i].dtype == HET_DTYPE_UNDEFINED || in[i].shape.rank < 0)
      known = false;
  }
  for (int o = 0; o < node->n_outputs; o++) {
    memset(&out[o], 0, sizeof out[o]);
    out[o].present = node->outputs[o] >= 0;
    out[o].shape.rank = -1;
  }
  if (!known)
    return HET_OK;
  het_status st = het_infer_node(node, node->n_inputs, in, node->n_outputs,
                                 out, &g->arena);
  if (st == HET_ERR_UNSUPPORTED && !het_op_find(node->domain, node->op_type))
    return HET_OK; /* unknown op: the partitioner reports it */
  if (st != HET_OK)
    return st;
  if (sym && node->n_outputs == 1)
    het_sym_reshape(g, sym, node, &out[0]);
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o] >= 0)
      HET_TRY(het_merge_declared(node, &g->values[node->outputs[o]], &out[o]));
  if (sym)
    het_sym_node(g, sym, node);
  return HET_OK;
}

het_status het_graph_infer_shapes(het_graph *g) {
  for (int i = 0; i < g->n_values; i++) {
    het_value *v = &g->values[i];
    if (v->initializer && !(v->flags & HET_VALUE_GRAPH_INPUT)) {
      v->dtype = v->initializer->dtype;
      het_shape_set(&v->shape, v->initializer->rank, v->initializer->dims);
    }
  }
  /* symbolic shape-tensor contents (infer_sym.h); without memory for
   * them, the shapes are inferred as before, only less of them known */
  het_sym_value *sym = malloc(((size_t)g->n_values + 1) * sizeof *sym);
  for (int i = 0; sym && i < g->n_values; i++)
    sym[i].n = -1;
  het_status st = HET_OK;
  for (int k = 0; st == HET_OK && k < g->n_nodes; k++)
    st = het_infer_graph_node(g, &g->nodes[g->order[k]], sym);
  free(sym);
  return st;
}
