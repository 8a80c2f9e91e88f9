/* onnx_graph.c — GraphProto → het_graph: graph inputs and outputs with
 * their declared types, initializers, value_info, nodes and attributes
 * (subgraphs converted recursively and adopted by the parent graph).
 * Invariant: every string and list is copied into the graph's arena; every
 * tensor created here is owned by the graph (or freed) when a call returns.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "onnx/onnx_internal.h"

static het_status het_onnx_oom(void) {
  return het_error(HET_ERR_OUT_OF_MEMORY, "out of memory while loading");
}

/* Arena copy of s ("" for NULL).  NULL only when out of memory. */
static const char *het_onnx_str(het_graph *g, const char *s) {
  return het_arena_strdup(&g->arena, s ? s : "");
}

/* Declared tensor type of vi; fills dtype/shape where v does not know them
 * yet.  Non-tensor types (sequence, map, ...) leave the value unknown. */
static het_status het_onnx_value_type(het_graph *g,
                                      const Onnx__ValueInfoProto *vi, int id) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type)
    return HET_OK;
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  const char *name = g->values[id].name;
  het_dtype dt = HET_DTYPE_UNDEFINED;
  if (tt->has_elem_type && tt->elem_type != 0) {
    if (!het_dtype_valid(tt->elem_type))
      return het_error(HET_ERR_UNSUPPORTED,
                       "value '%s' has unknown element type %d", name,
                       (int)tt->elem_type);
    dt = (het_dtype)tt->elem_type;
  }
  het_shape shape = {.rank = -1};
  if (tt->shape) {
    if (tt->shape->n_dim > HET_MAX_RANK)
      return het_error(HET_ERR_UNSUPPORTED,
                       "value '%s' has rank %zu, more than the %d supported",
                       name, tt->shape->n_dim, HET_MAX_RANK);
    shape.rank = (int)tt->shape->n_dim;
    for (int i = 0; i < shape.rank; i++) {
      const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
      shape.dims[i].value = -1;
      shape.dims[i].symbol = NULL;
      if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
        if (d->dim_value < 0)
          return het_error(HET_ERR_INVALID_MODEL,
                           "value '%s': dim %d is %lld", name, i,
                           (long long)d->dim_value);
        shape.dims[i].value = d->dim_value;
      } else if (d->value_case ==
                     ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                 d->dim_param && *d->dim_param) {
        shape.dims[i].symbol = het_onnx_str(g, d->dim_param);
        if (!shape.dims[i].symbol)
          return het_onnx_oom();
      }
    }
  }
  het_value *v = &g->values[id];
  if (v->dtype == HET_DTYPE_UNDEFINED)
    v->dtype = dt;
  if (v->shape.rank < 0)
    v->shape = shape;
  return HET_OK;
}

static het_status het_onnx_graph_inputs(het_graph *g,
                                        const Onnx__GraphProto *gp) {
  if (gp->n_input > INT_MAX / 2)
    return het_error(HET_ERR_INVALID_MODEL, "too many graph inputs");
  g->inputs = het_arena_calloc(&g->arena, gp->n_input + 1, sizeof(int));
  if (!g->inputs)
    return het_onnx_oom();
  for (size_t i = 0; i < gp->n_input; i++) {
    const Onnx__ValueInfoProto *vi = gp->input[i];
    int id;
    if (!vi->name || !*vi->name)
      return het_error(HET_ERR_INVALID_MODEL, "graph input %zu has no name",
                       i);
    HET_TRY(het_graph_intern_value(g, vi->name, &id));
    if (g->values[id].flags & HET_VALUE_GRAPH_INPUT)
      return het_error(HET_ERR_INVALID_MODEL,
                       "graph input '%s' is declared twice", vi->name);
    g->values[id].flags |= HET_VALUE_GRAPH_INPUT;
    HET_TRY(het_onnx_value_type(g, vi, id));
    g->inputs[g->n_inputs++] = id;
  }
  return HET_OK;
}

static het_status het_onnx_initializer(const het_onnx_ctx *ctx, het_graph *g,
                                       const Onnx__TensorProto *tp,
                                       size_t index) {
  int id;
  if (!tp->name || !*tp->name)
    return het_error(HET_ERR_INVALID_MODEL, "initializer %zu has no name",
                     index);
  HET_TRY(het_graph_intern_value(g, tp->name, &id));
  if (g->values[id].flags & HET_VALUE_INITIALIZER)
    return het_error(HET_ERR_INVALID_MODEL,
                     "initializer '%s' is declared twice", tp->name);
  het_tensor *t;
  HET_TRY(het_onnx_tensor_from_proto(ctx, tp, tp->name, &t));
  het_value *v = &g->values[id];
  v->initializer = t;
  v->flags |= HET_VALUE_INITIALIZER;
  if (v->dtype != HET_DTYPE_UNDEFINED && v->dtype != t->dtype)
    return het_error(HET_ERR_INVALID_MODEL,
                     "initializer '%s' is %s but the graph input declares %s",
                     tp->name, het_dtype_str(t->dtype),
                     het_dtype_str(v->dtype));
  v->dtype = t->dtype;
  if (v->shape.rank < 0) {
    v->shape.rank = t->rank;
    for (int i = 0; i < t->rank; i++) {
      v->shape.dims[i].value = t->dims[i];
      v->shape.dims[i].symbol = NULL;
    }
  }
  return HET_OK;
}

static het_status het_onnx_subgraph(const het_onnx_ctx *ctx,
                                    het_graph *parent,
                                    const Onnx__GraphProto *gp, int depth,
                                    het_graph **out) {
  if (depth > HET_ONNX_MAX_GRAPH_DEPTH)
    return het_error(HET_ERR_INVALID_MODEL,
                     "subgraphs nested more than %d deep",
                     HET_ONNX_MAX_GRAPH_DEPTH);
  het_graph *sub;
  HET_TRY(het_graph_create(&sub));
  het_status st = het_graph_adopt_subgraph(parent, sub);
  if (st != HET_OK) {
    het_graph_destroy(sub);
    return st;
  }
  const het_graph *root = ctx->root;
  sub->ir_version = root->ir_version;
  sub->producer_name = root->producer_name;
  if (root->n_opsets) {
    sub->opsets = het_arena_calloc(&sub->arena, (size_t)root->n_opsets,
                                   sizeof *sub->opsets);
    if (!sub->opsets)
      return het_onnx_oom();
    for (int i = 0; i < root->n_opsets; i++) {
      sub->opsets[i].version = root->opsets[i].version;
      sub->opsets[i].domain = het_onnx_str(sub, root->opsets[i].domain);
      if (!sub->opsets[i].domain)
        return het_onnx_oom();
    }
    sub->n_opsets = root->n_opsets;
  }
  st = het_onnx_graph_convert(ctx, gp, sub, depth);
  if (st != HET_OK)
    return het_error_wrap(st, "subgraph '%s'", gp->name ? gp->name : "");
  *out = sub;
  return HET_OK;
}

/* The attribute type, guessed from the fields present for IR v1 files. */
static int het_onnx_attr_kind(const Onnx__AttributeProto *ap) {
  if (ap->has_type && ap->type != 0)
    return (int)ap->type;
  if (ap->has_f)
    return HET_ATTR_FLOAT;
  if (ap->has_i)
    return HET_ATTR_INT;
  if (ap->has_s)
    return HET_ATTR_STRING;
  if (ap->t)
    return HET_ATTR_TENSOR;
  if (ap->g)
    return HET_ATTR_GRAPH;
  if (ap->sparse_tensor || ap->n_sparse_tensors)
    return 11;
  if (ap->n_floats)
    return HET_ATTR_FLOATS;
  if (ap->n_ints)
    return HET_ATTR_INTS;
  if (ap->n_strings)
    return HET_ATTR_STRINGS;
  if (ap->n_tensors)
    return HET_ATTR_TENSORS;
  if (ap->n_graphs)
    return HET_ATTR_GRAPHS;
  if (ap->tp || ap->n_type_protos)
    return 13;
  return 0;
}

/* List-valued attributes: floats, ints, strings, tensors, graphs.
 * GRAPHS: a->n graphs, adopted consecutively by g starting at
 * g->subgraphs[a->i]; a->g is the first one. */
static het_status het_onnx_attr_list(const het_onnx_ctx *ctx, het_graph *g,
                                     const Onnx__AttributeProto *ap,
                                     het_attr *a, int depth) {
  het_arena *ar = &g->arena;
  switch (a->type) {
  case HET_ATTR_FLOATS:
    a->floats = het_arena_calloc(ar, ap->n_floats + 1, sizeof(float));
    if (!a->floats)
      return het_onnx_oom();
    if (ap->n_floats)
      memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
    a->n = ap->n_floats;
    return HET_OK;
  case HET_ATTR_INTS:
    a->ints = het_arena_calloc(ar, ap->n_ints + 1, sizeof(int64_t));
    if (!a->ints)
      return het_onnx_oom();
    if (ap->n_ints)
      memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
    a->n = ap->n_ints;
    return HET_OK;
  case HET_ATTR_STRINGS:
    a->strings = het_arena_calloc(ar, ap->n_strings + 1, sizeof(char *));
    if (!a->strings)
      return het_onnx_oom();
    for (size_t i = 0; i < ap->n_strings; i++) {
      const ProtobufCBinaryData *b = &ap->strings[i];
      a->strings[i] = het_arena_strndup(
          ar, b->data ? (const char *)b->data : "", b->data ? b->len : 0);
      if (!a->strings[i])
        return het_onnx_oom();
    }
    a->n = ap->n_strings;
    return HET_OK;
  case HET_ATTR_TENSORS:
    a->tensors = het_arena_calloc(ar, ap->n_tensors + 1, sizeof(het_tensor *));
    if (!a->tensors)
      return het_onnx_oom();
    for (size_t i = 0; i < ap->n_tensors; i++) {
      HET_TRY(het_onnx_tensor_from_proto(ctx, ap->tensors[i], a->name,
                                         &a->tensors[i]));
      a->n = i + 1;
    }
    return HET_OK;
  default: /* GRAPHS */
    a->i = g->n_subgraphs;
    for (size_t i = 0; i < ap->n_graphs; i++) {
      het_graph *sub = NULL;
      HET_TRY(het_onnx_subgraph(ctx, g, ap->graphs[i], depth + 1, &sub));
      if (i == 0)
        a->g = sub;
    }
    a->n = ap->n_graphs;
    return HET_OK;
  }
}

static het_status het_onnx_attr(const het_onnx_ctx *ctx, het_graph *g,
                                const Onnx__AttributeProto *ap, het_attr *a,
                                int depth) {
  if (!ap->name || !*ap->name)
    return het_error(HET_ERR_INVALID_MODEL, "attribute has no name");
  a->name = het_onnx_str(g, ap->name);
  if (!a->name)
    return het_onnx_oom();
  if (ap->ref_attr_name && *ap->ref_attr_name)
    return het_error(HET_ERR_INVALID_MODEL,
                     "refers to function attribute '%s' outside a "
                     "function",
                     ap->ref_attr_name);
  int kind = het_onnx_attr_kind(ap);
  switch (kind) {
  case HET_ATTR_FLOAT:
  case HET_ATTR_INT:
  case HET_ATTR_STRING:
    a->type = (het_attr_type)kind;
    a->f = ap->f;
    a->i = ap->i;
    if (kind != HET_ATTR_STRING)
      return HET_OK;
    a->s = het_arena_strndup(&g->arena,
                             ap->s.data ? (const char *)ap->s.data : "",
                             ap->s.data ? ap->s.len : 0);
    a->s_len = ap->s.data ? ap->s.len : 0;
    return a->s ? HET_OK : het_onnx_oom();
  case HET_ATTR_TENSOR:
    a->type = HET_ATTR_TENSOR;
    if (!ap->t)
      return het_error(HET_ERR_INVALID_MODEL, "no tensor given");
    return het_onnx_tensor_from_proto(ctx, ap->t, ap->name, &a->t);
  case HET_ATTR_GRAPH:
    a->type = HET_ATTR_GRAPH;
    if (!ap->g)
      return het_error(HET_ERR_INVALID_MODEL, "no graph given");
    return het_onnx_subgraph(ctx, g, ap->g, depth + 1, &a->g);
  case HET_ATTR_FLOATS:
  case HET_ATTR_INTS:
  case HET_ATTR_STRINGS:
  case HET_ATTR_TENSORS:
  case HET_ATTR_GRAPHS:
    a->type = (het_attr_type)kind;
    return het_onnx_attr_list(ctx, g, ap, a, depth);
  case 11: /* SPARSE_TENSOR */
  case 12: /* SPARSE_TENSORS */
    return het_error(HET_ERR_UNSUPPORTED,
                     "sparse tensor attributes are not supported");
  case 13: /* TYPE_PROTO(S): kept by name, with no value */
  case 14:
    a->type = HET_ATTR_UNDEFINED;
    return HET_OK;
  default:
    return het_error(HET_ERR_INVALID_MODEL, "unknown attribute type %d",
                     kind);
  }
}

/* Frees tensors held by attrs that never reached the graph. */
static void het_onnx_attrs_discard(het_attr *attrs, int n) {
  for (int i = 0; i < n; i++) {
    het_tensor_destroy(attrs[i].t);
    attrs[i].t = NULL;
    for (size_t k = 0; attrs[i].tensors && k < attrs[i].n; k++)
      het_tensor_destroy(attrs[i].tensors[k]);
    attrs[i].tensors = NULL;
  }
}

/* Value ids for a node's input or output names ("" → -1). */
static het_status het_onnx_node_values(het_graph *g, char **names, size_t n,
                                       int **ids) {
  if (n > INT_MAX / 2)
    return het_error(HET_ERR_INVALID_MODEL, "too many node inputs/outputs");
  *ids = het_arena_calloc(&g->arena, n + 1, sizeof(int));
  if (!*ids)
    return het_onnx_oom();
  for (size_t i = 0; i < n; i++) {
    (*ids)[i] = -1;
    if (names[i] && *names[i])
      HET_TRY(het_graph_intern_value(g, names[i], &(*ids)[i]));
  }
  return HET_OK;
}

static het_status het_onnx_node_attrs(const het_onnx_ctx *ctx, het_graph *g,
                                      const Onnx__NodeProto *np,
                                      het_node *node, int depth) {
  if (np->n_attribute > INT_MAX / 2)
    return het_error(HET_ERR_INVALID_MODEL, "too many attributes");
  node->attrs = het_arena_calloc(&g->arena, np->n_attribute + 1,
                                 sizeof(het_attr));
  if (!node->attrs)
    return het_onnx_oom();
  for (size_t i = 0; i < np->n_attribute; i++) {
    het_attr *a = &node->attrs[i];
    het_status st = het_onnx_attr(ctx, g, np->attribute[i], a, depth);
    for (size_t k = 0; st == HET_OK && k < i; k++)
      if (strcmp(node->attrs[k].name, a->name) == 0)
        st = het_error(HET_ERR_INVALID_MODEL, "repeated attribute");
    if (st != HET_OK) {
      het_onnx_attrs_discard(node->attrs, (int)i + 1);
      const char *an = np->attribute[i]->name;
      return het_error_wrap(st, "attribute '%s'", an ? an : "");
    }
    node->n_attrs = (int)i + 1;
  }
  return HET_OK;
}

static het_status het_onnx_node(const het_onnx_ctx *ctx, het_graph *g,
                                const Onnx__NodeProto *np, size_t index,
                                int depth) {
  het_node node;
  memset(&node, 0, sizeof node);
  if (!np->op_type || !*np->op_type)
    return het_error(HET_ERR_INVALID_MODEL, "node %zu ('%s') has no op_type",
                     index, np->name ? np->name : "");
  node.op_type = het_onnx_str(g, np->op_type);
  node.domain = het_onnx_str(g, np->domain);
  if (np->name && *np->name) {
    node.name = het_onnx_str(g, np->name);
  } else {
    char buf[64];
    snprintf(buf, sizeof buf, "_%zu", index);
    size_t ol = strlen(np->op_type), bl = strlen(buf);
    char *s = het_arena_alloc(&g->arena, ol + bl + 1);
    if (s) {
      memcpy(s, np->op_type, ol);
      memcpy(s + ol, buf, bl + 1);
    }
    node.name = s;
  }
  if (!node.op_type || !node.domain || !node.name)
    return het_onnx_oom();
  int64_t opset = het_graph_opset(ctx->root, node.domain);
  node.opset = opset > INT_MAX ? INT_MAX : (int)opset;
  het_status st = het_onnx_node_values(g, np->input, np->n_input, &node.inputs);
  if (st == HET_OK)
    st = het_onnx_node_values(g, np->output, np->n_output, &node.outputs);
  if (st == HET_OK) {
    node.n_inputs = (int)np->n_input;
    node.n_outputs = (int)np->n_output;
    st = het_onnx_node_attrs(ctx, g, np, &node, depth);
  }
  if (st == HET_OK) {
    st = het_graph_add_node(g, &node, NULL);
    if (st != HET_OK)
      het_onnx_attrs_discard(node.attrs, node.n_attrs);
  }
  if (st != HET_OK)
    return het_error_wrap(st, "node '%s' (%s)", node.name, node.op_type);
  return HET_OK;
}

static het_status het_onnx_graph_outputs(het_graph *g,
                                         const Onnx__GraphProto *gp) {
  if (gp->n_output > INT_MAX / 2)
    return het_error(HET_ERR_INVALID_MODEL, "too many graph outputs");
  g->outputs = het_arena_calloc(&g->arena, gp->n_output + 1, sizeof(int));
  if (!g->outputs)
    return het_onnx_oom();
  for (size_t i = 0; i < gp->n_output; i++) {
    const Onnx__ValueInfoProto *vi = gp->output[i];
    int id;
    if (!vi->name || !*vi->name)
      return het_error(HET_ERR_INVALID_MODEL, "graph output %zu has no name",
                       i);
    HET_TRY(het_graph_intern_value(g, vi->name, &id));
    g->values[id].flags |= HET_VALUE_GRAPH_OUTPUT;
    HET_TRY(het_onnx_value_type(g, vi, id));
    g->outputs[g->n_outputs++] = id;
  }
  return HET_OK;
}

/* value_info: declared types of intermediates; names the graph does not
 * use are ignored. */
static het_status het_onnx_value_infos(het_graph *g,
                                       const Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_value_info; i++) {
    const Onnx__ValueInfoProto *vi = gp->value_info[i];
    int id = vi->name ? het_graph_find_value(g, vi->name) : -1;
    if (id >= 0)
      HET_TRY(het_onnx_value_type(g, vi, id));
  }
  return HET_OK;
}

het_status het_onnx_graph_convert(const het_onnx_ctx *ctx,
                                  const Onnx__GraphProto *gp, het_graph *g,
                                  int depth) {
  g->name = het_onnx_str(g, gp->name);
  if (!g->name)
    return het_onnx_oom();
  HET_TRY(het_onnx_graph_inputs(g, gp));
  if (gp->n_sparse_initializer)
    return het_error(HET_ERR_UNSUPPORTED,
                     "graph '%s': sparse initializers are not supported",
                     g->name);
  for (size_t i = 0; i < gp->n_initializer; i++)
    HET_TRY(het_onnx_initializer(ctx, g, gp->initializer[i], i));
  for (size_t i = 0; i < gp->n_node; i++)
    HET_TRY(het_onnx_node(ctx, g, gp->node[i], i, depth));
  HET_TRY(het_onnx_graph_outputs(g, gp));
  return het_onnx_value_infos(g, gp);
}
