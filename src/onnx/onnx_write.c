/* onnx_write.c — het_graph → serialized ModelProto, the loader's inverse:
 * model header, graph inputs, outputs and value_info with their declared
 * types, initializers (raw_data), nodes in topological order and
 * attributes of every type (subgraphs recursively).
 * Invariant: every protobuf-c struct built for one save lives in that
 * call's scratch arena and borrows names and tensor data from the graph;
 * only the packed buffer outlives the call, and only on success.
 */
#include "onnx/loader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/status.h"
#include "onnx/onnx_internal.h"

/* Largest model written: protobuf's limit, which het_onnx_load_file also
 * enforces, so whatever is saved loads back. */
#define HET_ONNX_MAX_SAVE_BYTES ((size_t)2 << 30)
/* IR version written for a graph that carries none (ONNX 1.10). */
#define HET_ONNX_DEFAULT_IR_VERSION 8

static het_status het_w_oom(void) {
  return het_error(HET_ERR_OUT_OF_MEMORY,
                   "out of memory while saving the model");
}

/* n zeroed elements of size bytes from ar (room for one when n is 0). */
static void *het_w_array(het_arena *ar, size_t n, size_t size) {
  return het_arena_calloc(ar, n ? n : 1, size);
}

/* A borrowed string in the form protobuf-c's structs hold (never written
 * through). */
static char *het_w_str(const char *s) { return (char *)(s ? s : ""); }

/* Name of value id of g; NULL when id is not a value of g. */
static const char *het_w_value_name(const het_graph *g, int id) {
  return id >= 0 && id < g->n_values ? g->values[id].name : NULL;
}

/* A ValueInfoProto for v: a tensor type with elem_type when the dtype is
 * known and a shape when the rank is (dim_value, dim_param, or an empty
 * Dimension); no type at all when neither is known. */
static het_status het_w_value_info(het_arena *ar, const het_value *v,
                                   Onnx__ValueInfoProto **out) {
  Onnx__ValueInfoProto *vi = het_arena_alloc(ar, sizeof *vi);
  if (!vi)
    return het_w_oom();
  onnx__value_info_proto__init(vi);
  vi->name = het_w_str(v->name);
  *out = vi;
  if (v->dtype == HET_DTYPE_UNDEFINED && v->shape.rank < 0)
    return HET_OK;
  if (v->shape.rank > HET_MAX_RANK)
    return het_error(HET_ERR_INVALID_ARGUMENT, "value '%s' has rank %d",
                     v->name, v->shape.rank);
  Onnx__TypeProto *tp = het_arena_alloc(ar, sizeof *tp);
  Onnx__TypeProto__Tensor *tt = het_arena_alloc(ar, sizeof *tt);
  if (!tp || !tt)
    return het_w_oom();
  onnx__type_proto__init(tp);
  onnx__type_proto__tensor__init(tt);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = tt;
  vi->type = tp;
  if (v->dtype != HET_DTYPE_UNDEFINED) {
    tt->has_elem_type = 1;
    tt->elem_type = (int32_t)v->dtype;
  }
  if (v->shape.rank < 0)
    return HET_OK;
  size_t rank = (size_t)v->shape.rank;
  Onnx__TensorShapeProto *sp = het_arena_alloc(ar, sizeof *sp);
  Onnx__TensorShapeProto__Dimension **dims =
      het_w_array(ar, rank, sizeof *dims);
  if (!sp || !dims)
    return het_w_oom();
  onnx__tensor_shape_proto__init(sp);
  for (size_t i = 0; i < rank; i++) {
    const het_dim *d = &v->shape.dims[i];
    dims[i] = het_arena_alloc(ar, sizeof *dims[i]);
    if (!dims[i])
      return het_w_oom();
    onnx__tensor_shape_proto__dimension__init(dims[i]);
    if (d->value >= 0) {
      dims[i]->value_case =
          ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dims[i]->dim_value = d->value;
    } else if (d->symbol && *d->symbol) {
      dims[i]->value_case =
          ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dims[i]->dim_param = het_w_str(d->symbol);
    }
  }
  sp->n_dim = rank;
  sp->dim = dims;
  tt->shape = sp;
  return HET_OK;
}

/* A TensorProto (raw_data) for t, named name. */
static het_status het_w_tensor(het_arena *ar, const het_tensor *t,
                               const char *name, Onnx__TensorProto **out) {
  if (!t)
    return het_error(HET_ERR_INVALID_ARGUMENT, "tensor '%s' has no data", name);
  Onnx__TensorProto *tp = het_arena_alloc(ar, sizeof *tp);
  if (!tp)
    return het_w_oom();
  onnx__tensor_proto__init(tp);
  HET_TRY(het_onnx_tensor_to_proto(ar, t, name, tp));
  *out = tp;
  return HET_OK;
}

static het_status het_w_graph(het_arena *ar, const het_graph *g, int depth,
                              Onnx__GraphProto **out);

/* A subgraph attribute's graph, with its name in any message. */
static het_status het_w_subgraph(het_arena *ar, const het_graph *sub, int depth,
                                 Onnx__GraphProto **out) {
  het_status st = het_w_graph(ar, sub, depth, out);
  if (st != HET_OK)
    return het_error_wrap(st, "subgraph '%s'", sub->name ? sub->name : "");
  return HET_OK;
}

/* TENSORS and GRAPHS: the list's elements.  A GRAPHS attribute's graphs
 * are g->subgraphs[a->i ...], a->n of them, the first being a->g. */
static het_status het_w_attr_objects(het_arena *ar, const het_graph *g,
                                     const het_attr *a, int depth,
                                     Onnx__AttributeProto *ap) {
  if (a->type == HET_ATTR_TENSORS) {
    ap->tensors = het_w_array(ar, a->n, sizeof *ap->tensors);
    if (!ap->tensors)
      return het_w_oom();
    for (size_t k = 0; k < a->n; k++)
      HET_TRY(het_w_tensor(ar, a->tensors[k], "", &ap->tensors[k]));
    ap->n_tensors = a->n;
    return HET_OK;
  }
  if (a->n &&
      (a->i < 0 || a->i > g->n_subgraphs ||
       a->n > (size_t)(g->n_subgraphs - a->i) || g->subgraphs[a->i] != a->g))
    return het_error(HET_ERR_INTERNAL,
                     "graph list does not match the graph's subgraphs");
  ap->graphs = het_w_array(ar, a->n, sizeof *ap->graphs);
  if (!ap->graphs)
    return het_w_oom();
  for (size_t k = 0; k < a->n; k++)
    HET_TRY(het_w_subgraph(ar, g->subgraphs[a->i + (int64_t)k], depth + 1,
                           &ap->graphs[k]));
  ap->n_graphs = a->n;
  return HET_OK;
}

/* FLOATS, INTS, STRINGS (borrowed), then the object lists. */
static het_status het_w_attr_list(het_arena *ar, const het_graph *g,
                                  const het_attr *a, int depth,
                                  Onnx__AttributeProto *ap) {
  bool missing = a->n && ((a->type == HET_ATTR_FLOATS && !a->floats) ||
                          (a->type == HET_ATTR_INTS && !a->ints) ||
                          (a->type == HET_ATTR_STRINGS && !a->strings) ||
                          (a->type == HET_ATTR_TENSORS && !a->tensors));
  if (missing)
    return het_error(HET_ERR_INTERNAL, "list of %zu has no elements", a->n);
  switch (a->type) {
  case HET_ATTR_FLOATS:
    ap->n_floats = a->n;
    ap->floats = a->floats;
    return HET_OK;
  case HET_ATTR_INTS:
    ap->n_ints = a->n;
    ap->ints = a->ints;
    return HET_OK;
  case HET_ATTR_STRINGS:
    ap->strings = het_w_array(ar, a->n, sizeof *ap->strings);
    if (!ap->strings)
      return het_w_oom();
    for (size_t k = 0; k < a->n; k++) {
      const char *s = a->strings[k] ? a->strings[k] : "";
      ap->strings[k].data = (uint8_t *)s;
      ap->strings[k].len = strlen(s);
    }
    ap->n_strings = a->n;
    return HET_OK;
  default:
    return het_w_attr_objects(ar, g, a, depth, ap);
  }
}

/* Fills ap from a (any type but UNDEFINED) of a node of g. */
static het_status het_w_attr(het_arena *ar, const het_graph *g,
                             const het_attr *a, int depth,
                             Onnx__AttributeProto *ap) {
  onnx__attribute_proto__init(ap);
  ap->name = het_w_str(a->name);
  ap->has_type = 1;
  ap->type = (Onnx__AttributeProto__AttributeType)a->type;
  switch (a->type) {
  case HET_ATTR_FLOAT:
    ap->has_f = 1;
    ap->f = a->f;
    return HET_OK;
  case HET_ATTR_INT:
    ap->has_i = 1;
    ap->i = a->i;
    return HET_OK;
  case HET_ATTR_STRING:
    ap->has_s = 1;
    ap->s.data = (uint8_t *)het_w_str(a->s);
    ap->s.len = a->s ? a->s_len : 0;
    return HET_OK;
  case HET_ATTR_TENSOR:
    return het_w_tensor(ar, a->t, "", &ap->t);
  case HET_ATTR_GRAPH:
    if (!a->g)
      return het_error(HET_ERR_INTERNAL, "no graph given");
    return het_w_subgraph(ar, a->g, depth + 1, &ap->g);
  case HET_ATTR_FLOATS:
  case HET_ATTR_INTS:
  case HET_ATTR_STRINGS:
  case HET_ATTR_TENSORS:
  case HET_ATTR_GRAPHS:
    return het_w_attr_list(ar, g, a, depth, ap);
  default:
    return het_error(HET_ERR_INTERNAL, "unknown attribute type %d",
                     (int)a->type);
  }
}

/* Value names of ids[0..n): "" for an omitted one (-1); trailing omitted
 * ones are dropped. */
static het_status het_w_names(het_arena *ar, const het_graph *g, const int *ids,
                              int n, const char *what, size_t *count,
                              char ***out) {
  int keep = n > 0 ? n : 0;
  while (keep > 0 && ids[keep - 1] < 0)
    keep--;
  char **names = het_w_array(ar, (size_t)keep, sizeof *names);
  if (!names)
    return het_w_oom();
  for (int i = 0; i < keep; i++) {
    const char *name = ids[i] < 0 ? "" : het_w_value_name(g, ids[i]);
    if (!name)
      return het_error(HET_ERR_INTERNAL,
                       "%s %d is value %d, which does not exist", what, i,
                       ids[i]);
    names[i] = het_w_str(name);
  }
  *count = (size_t)keep;
  *out = names;
  return HET_OK;
}

/* A NodeProto for n.  Attributes the IR keeps without a value (ONNX
 * TYPE_PROTO ones) are left out. */
static het_status het_w_node(het_arena *ar, const het_graph *g,
                             const het_node *n, int depth,
                             Onnx__NodeProto **out) {
  Onnx__NodeProto *np = het_arena_alloc(ar, sizeof *np);
  if (!np)
    return het_w_oom();
  onnx__node_proto__init(np);
  np->name = het_w_str(n->name);
  np->op_type = het_w_str(n->op_type);
  np->domain = n->domain && *n->domain ? het_w_str(n->domain) : NULL;
  HET_TRY(het_w_names(ar, g, n->inputs, n->n_inputs, "input", &np->n_input,
                      &np->input));
  HET_TRY(het_w_names(ar, g, n->outputs, n->n_outputs, "output", &np->n_output,
                      &np->output));
  size_t na = 0;
  for (int i = 0; i < n->n_attrs; i++)
    na += n->attrs[i].type != HET_ATTR_UNDEFINED;
  Onnx__AttributeProto *aps = het_w_array(ar, na, sizeof *aps);
  np->attribute = het_w_array(ar, na, sizeof *np->attribute);
  if (!aps || !np->attribute)
    return het_w_oom();
  for (int i = 0; i < n->n_attrs; i++) {
    const het_attr *a = &n->attrs[i];
    if (a->type == HET_ATTR_UNDEFINED)
      continue;
    Onnx__AttributeProto *ap = &aps[np->n_attribute];
    het_status st = het_w_attr(ar, g, a, depth, ap);
    if (st != HET_OK)
      return het_error_wrap(st, "attribute '%s'", a->name ? a->name : "");
    np->attribute[np->n_attribute++] = ap;
  }
  *out = np;
  return HET_OK;
}

/* Set while a plan's graph is written (het_onnx_save_plan_graph, on this
 * thread): nodes go in node array order, so the loaded graph numbers its
 * nodes as the saved one did (the plan's placement is by node index). */
static _Thread_local bool het_w_array_order;

/* Nodes in g->order when the graph has one (validated), else in node
 * array order. */
static het_status het_w_nodes(het_arena *ar, const het_graph *g, int depth,
                              Onnx__GraphProto *gp) {
  size_t nn = g->n_nodes > 0 ? (size_t)g->n_nodes : 0;
  gp->node = het_w_array(ar, nn, sizeof *gp->node);
  if (!gp->node)
    return het_w_oom();
  for (size_t i = 0; i < nn; i++) {
    int id = g->order && !het_w_array_order ? g->order[i] : (int)i;
    if (id < 0 || id >= g->n_nodes)
      return het_error(HET_ERR_INTERNAL, "graph order names node %d of %d", id,
                       g->n_nodes);
    const het_node *n = &g->nodes[id];
    het_status st = het_w_node(ar, g, n, depth, &gp->node[i]);
    if (st != HET_OK)
      return het_error_wrap(st, "node '%s' (%s)", n->name ? n->name : "",
                            n->op_type ? n->op_type : "");
  }
  gp->n_node = nn;
  return HET_OK;
}

/* Graph inputs and outputs in declared order. */
static het_status het_w_graph_io(het_arena *ar, const het_graph *g,
                                 Onnx__GraphProto *gp) {
  size_t ni = g->n_inputs > 0 ? (size_t)g->n_inputs : 0;
  size_t no = g->n_outputs > 0 ? (size_t)g->n_outputs : 0;
  gp->input = het_w_array(ar, ni, sizeof *gp->input);
  gp->output = het_w_array(ar, no, sizeof *gp->output);
  if (!gp->input || !gp->output)
    return het_w_oom();
  for (size_t i = 0; i < ni + no; i++) {
    int id = i < ni ? g->inputs[i] : g->outputs[i - ni];
    if (!het_w_value_name(g, id))
      return het_error(HET_ERR_INTERNAL,
                       "graph %s %zu is value %d, which does not exist",
                       i < ni ? "input" : "output", i < ni ? i : i - ni, id);
    HET_TRY(het_w_value_info(ar, &g->values[id],
                             i < ni ? &gp->input[i] : &gp->output[i - ni]));
  }
  gp->n_input = ni;
  gp->n_output = no;
  return HET_OK;
}

/* Values flagged HET_VALUE_INITIALIZER, in value order, named after them. */
static het_status het_w_initializers(het_arena *ar, const het_graph *g,
                                     Onnx__GraphProto *gp) {
  size_t n = 0;
  for (int v = 0; v < g->n_values; v++)
    n += (g->values[v].flags & HET_VALUE_INITIALIZER) &&
         g->values[v].initializer;
  gp->initializer = het_w_array(ar, n, sizeof *gp->initializer);
  if (!gp->initializer)
    return het_w_oom();
  for (int v = 0; v < g->n_values; v++) {
    const het_value *val = &g->values[v];
    if (!(val->flags & HET_VALUE_INITIALIZER) || !val->initializer)
      continue;
    HET_TRY(het_w_tensor(ar, val->initializer, val->name,
                         &gp->initializer[gp->n_initializer++]));
  }
  return HET_OK;
}

/* value_info: every value a node of g reads or writes that is neither a
 * graph input or output nor an initializer, whose dtype is known. */
static het_status het_w_value_infos(het_arena *ar, const het_graph *g,
                                    Onnx__GraphProto *gp) {
  size_t nv = g->n_values > 0 ? (size_t)g->n_values : 0;
  unsigned char *used = het_w_array(ar, nv, 1);
  if (!used)
    return het_w_oom();
  for (int i = 0; i < g->n_nodes; i++) {
    const het_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
      int id = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
      if (id >= 0 && id < g->n_values)
        used[id] = 1;
    }
  }
  const unsigned skip =
      HET_VALUE_GRAPH_INPUT | HET_VALUE_GRAPH_OUTPUT | HET_VALUE_INITIALIZER;
  size_t count = 0;
  for (size_t v = 0; v < nv; v++) {
    used[v] = used[v] && !(g->values[v].flags & skip) &&
              g->values[v].dtype != HET_DTYPE_UNDEFINED;
    count += used[v];
  }
  gp->value_info = het_w_array(ar, count, sizeof *gp->value_info);
  if (!gp->value_info)
    return het_w_oom();
  for (size_t v = 0; v < nv; v++)
    if (used[v])
      HET_TRY(het_w_value_info(ar, &g->values[v],
                               &gp->value_info[gp->n_value_info++]));
  return HET_OK;
}

/* Pass 1: refuses subgraphs nested deeper than the loader accepts (such
 * as a hand-built graph that contains itself) before anything is built,
 * naming the node whose attribute goes too deep.  depth is g's. */
static het_status het_w_check_depth(const het_graph *g, int depth) {
  for (int i = 0; i < g->n_nodes; i++) {
    const het_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_attrs; k++) {
      const het_attr *a = &n->attrs[k];
      size_t count = a->type == HET_ATTR_GRAPH    ? 1
                     : a->type == HET_ATTR_GRAPHS ? a->n
                                                  : 0;
      for (size_t j = 0; j < count; j++) {
        int64_t at = a->i + (int64_t)j;
        const het_graph *sub = a->type == HET_ATTR_GRAPH ? a->g
                               : at >= 0 && at < g->n_subgraphs
                                   ? g->subgraphs[at]
                                   : NULL;
        if (!sub)
          continue; /* pass 2 reports it */
        if (depth + 1 > HET_ONNX_MAX_GRAPH_DEPTH)
          return het_error(HET_ERR_UNSUPPORTED,
                           "node '%s' (%s): subgraphs nested more than %d "
                           "deep",
                           n->name ? n->name : "", n->op_type ? n->op_type : "",
                           HET_ONNX_MAX_GRAPH_DEPTH);
        HET_TRY(het_w_check_depth(sub, depth + 1));
      }
    }
  }
  return HET_OK;
}

/* Pass 2: a GraphProto for g.  depth is 0 for the main graph. */
static het_status het_w_graph(het_arena *ar, const het_graph *g, int depth,
                              Onnx__GraphProto **out) {
  Onnx__GraphProto *gp = het_arena_alloc(ar, sizeof *gp);
  if (!gp)
    return het_w_oom();
  onnx__graph_proto__init(gp);
  gp->name = het_w_str(g->name);
  HET_TRY(het_w_graph_io(ar, g, gp));
  HET_TRY(het_w_initializers(ar, g, gp));
  HET_TRY(het_w_nodes(ar, g, depth, gp));
  HET_TRY(het_w_value_infos(ar, g, gp));
  *out = gp;
  return HET_OK;
}

/* Model-level fields: IR version, producer, opset imports, metadata. */
static het_status het_w_model(het_arena *ar, const het_graph *g,
                              Onnx__ModelProto *mp) {
  size_t nop = g->n_opsets > 0 ? (size_t)g->n_opsets : 0;
  size_t nm = g->n_metadata > 0 ? (size_t)g->n_metadata : 0;
  Onnx__OperatorSetIdProto *ops = het_w_array(ar, nop, sizeof *ops);
  Onnx__StringStringEntryProto *md = het_w_array(ar, nm, sizeof *md);
  mp->opset_import = het_w_array(ar, nop, sizeof *mp->opset_import);
  mp->metadata_props = het_w_array(ar, nm, sizeof *mp->metadata_props);
  if (!ops || !md || !mp->opset_import || !mp->metadata_props)
    return het_w_oom();
  mp->has_ir_version = 1;
  mp->ir_version = g->ir_version ? g->ir_version : HET_ONNX_DEFAULT_IR_VERSION;
  mp->producer_name = het_w_str(
      g->producer_name && *g->producer_name ? g->producer_name : "hetrt");
  for (size_t i = 0; i < nop; i++) {
    onnx__operator_set_id_proto__init(&ops[i]);
    ops[i].domain = het_w_str(g->opsets[i].domain);
    ops[i].has_version = 1;
    ops[i].version = g->opsets[i].version;
    mp->opset_import[i] = &ops[i];
  }
  mp->n_opset_import = nop;
  for (size_t i = 0; i < nm; i++) {
    onnx__string_string_entry_proto__init(&md[i]);
    md[i].key = het_w_str(g->metadata_keys[i]);
    md[i].value = het_w_str(g->metadata_values[i]);
    mp->metadata_props[i] = &md[i];
  }
  mp->n_metadata_props = nm;
  HET_TRY(het_w_check_depth(g, 0));
  return het_w_graph(ar, g, 0, &mp->graph);
}

/* ---- a plan's graph: large initializers moved out into its weights ---- */

typedef struct het_w_split {
  het_arena *ar;
  size_t min_bytes;
  size_t size;          /* weights bytes so far (64-byte aligned parts) */
  int n, cap;
  Onnx__TensorProto **moved; /* in order; their raw_data still set */
} het_w_split;

static het_status het_w_split_graph(het_w_split *x, Onnx__GraphProto *gp);

/* The weights' external-data entries of tp: at offset, len bytes. */
static het_status het_w_external(het_arena *ar, Onnx__TensorProto *tp,
                                 size_t offset, size_t len) {
  Onnx__StringStringEntryProto *e = het_w_array(ar, 3, sizeof *e);
  tp->external_data = het_w_array(ar, 3, sizeof *tp->external_data);
  char *nums = het_arena_alloc(ar, 48);
  if (!e || !tp->external_data || !nums)
    return het_w_oom();
  snprintf(nums, 24, "%zu", offset);
  snprintf(nums + 24, 24, "%zu", len);
  static const char *const keys[] = {"location", "offset", "length"};
  const char *vals[] = {HET_ONNX_PLAN_WEIGHTS, nums, nums + 24};
  for (int k = 0; k < 3; k++) {
    onnx__string_string_entry_proto__init(&e[k]);
    e[k].key = het_w_str(keys[k]);
    e[k].value = het_w_str(vals[k]);
    tp->external_data[k] = &e[k];
  }
  tp->n_external_data = 3;
  tp->has_data_location = 1;
  tp->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  return HET_OK;
}

static het_status het_w_split_tensor(het_w_split *x, Onnx__TensorProto *tp) {
  if (!tp->has_raw_data || tp->raw_data.len < x->min_bytes)
    return HET_OK;
  if (x->n == x->cap) {
    int cap = x->cap ? 2 * x->cap : 64;
    Onnx__TensorProto **m = het_w_array(x->ar, (size_t)cap, sizeof *m);
    if (!m)
      return het_w_oom();
    if (x->n)
      memcpy(m, x->moved, (size_t)x->n * sizeof *m);
    x->moved = m;
    x->cap = cap;
  }
  size_t at = (x->size + 63) / 64 * 64;
  HET_TRY(het_w_external(x->ar, tp, at, tp->raw_data.len));
  x->moved[x->n++] = tp;
  x->size = at + tp->raw_data.len;
  return HET_OK;
}

static het_status het_w_split_graph(het_w_split *x, Onnx__GraphProto *gp) {
  for (size_t i = 0; i < gp->n_initializer; i++)
    HET_TRY(het_w_split_tensor(x, gp->initializer[i]));
  for (size_t n = 0; n < gp->n_node; n++)
    for (size_t a = 0; a < gp->node[n]->n_attribute; a++) {
      Onnx__AttributeProto *ap = gp->node[n]->attribute[a];
      if (ap->g)
        HET_TRY(het_w_split_graph(x, ap->g));
      for (size_t k = 0; k < ap->n_graphs; k++)
        HET_TRY(het_w_split_graph(x, ap->graphs[k]));
    }
  return HET_OK;
}

/* Moves the large initializers' raw_data of mp into one malloc'd weights
 * buffer (*weights, *size; caller frees). */
static het_status het_w_split_model(het_arena *ar, Onnx__ModelProto *mp,
                                    size_t min_bytes, uint8_t **weights,
                                    size_t *size) {
  het_w_split x = {.ar = ar, .min_bytes = min_bytes};
  HET_TRY(het_w_split_graph(&x, mp->graph));
  uint8_t *w = NULL;
  if (x.size && posix_memalign((void **)&w, 64, x.size))
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "cannot allocate %zu bytes of weights", x.size);
  if (x.size)
    memset(w, 0, x.size);
  size_t at = 0;
  for (int i = 0; i < x.n; i++) {
    Onnx__TensorProto *tp = x.moved[i];
    at = (at + 63) / 64 * 64;
    memcpy(w + at, tp->raw_data.data, tp->raw_data.len);
    at += tp->raw_data.len;
    tp->has_raw_data = 0;
    tp->raw_data.len = 0;
    tp->raw_data.data = NULL;
  }
  *weights = w;
  *size = x.size;
  return HET_OK;
}

/* g as ModelProto bytes (*buf); with weights non-NULL, initializers of
 * split_min bytes or more go to *weights instead. */
static het_status het_onnx_pack(const het_graph *g, size_t split_min,
                                uint8_t **buf, size_t *len, uint8_t **weights,
                                size_t *weights_len) {
  het_arena ar;
  het_arena_init(&ar);
  Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
  uint8_t *b = NULL, *w = NULL;
  size_t wlen = 0;
  het_status st = het_w_model(&ar, g, &mp);
  if (st == HET_OK && weights)
    st = het_w_split_model(&ar, &mp, split_min, &w, &wlen);
  if (st != HET_OK)
    goto fail;
  size_t n = onnx__model_proto__get_packed_size(&mp);
  if (n > HET_ONNX_MAX_SAVE_BYTES) {
    st = het_error(HET_ERR_UNSUPPORTED,
                   "model serializes to %zu bytes, more than protobuf's "
                   "2 GiB limit (writing external data is not supported)",
                   n);
    goto fail;
  }
  b = malloc(n ? n : 1);
  if (!b) {
    st = het_error(HET_ERR_OUT_OF_MEMORY,
                   "cannot allocate %zu bytes for the model", n);
    goto fail;
  }
  size_t packed = onnx__model_proto__pack(&mp, b);
  if (packed != n) {
    st = het_error(HET_ERR_INTERNAL, "model packed to %zu bytes, not %zu",
                   packed, n);
    goto fail;
  }
  het_arena_deinit(&ar);
  *buf = b;
  *len = n;
  if (weights) {
    *weights = w;
    *weights_len = wlen;
  }
  return HET_OK;
fail:
  free(b);
  free(w);
  het_arena_deinit(&ar);
  return st;
}

het_status het_onnx_save_memory(const het_graph *g, uint8_t **buf,
                                size_t *len) {
  if (!g || !buf || !len)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_save_memory: NULL argument");
  return het_onnx_pack(g, 0, buf, len, NULL, NULL);
}

het_status het_onnx_save_plan_graph(const het_graph *g, size_t min_bytes,
                                    uint8_t **buf, size_t *len,
                                    uint8_t **weights, size_t *weights_len) {
  if (!g || !buf || !len || !weights || !weights_len)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_save_plan_graph: NULL argument");
  het_w_array_order = true;
  het_status st = het_onnx_pack(g, min_bytes, buf, len, weights, weights_len);
  het_w_array_order = false;
  return st;
}

het_status het_onnx_save_file(const het_graph *g, const char *path) {
  if (!g || !path)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_save_file: NULL argument");
  uint8_t *buf = NULL;
  size_t len = 0, done = 0;
  int fd = -1;
  bool created = false;
  het_status st = het_onnx_save_memory(g, &buf, &len);
  if (st != HET_OK) {
    het_error_wrap(st, "%s", path);
    goto fail;
  }
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    st = het_error(HET_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    goto fail;
  }
  created = true;
  while (done < len) {
    ssize_t w = write(fd, buf + done, len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      st = het_error(HET_ERR_IO, "%s: write failed: %s", path,
                     w < 0 ? strerror(errno) : "no progress");
      goto fail;
    }
    done += (size_t)w;
  }
  int rc = close(fd);
  fd = -1;
  if (rc != 0) {
    st = het_error(HET_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    goto fail;
  }
  free(buf);
  return HET_OK;
fail:
  if (fd >= 0)
    close(fd);
  if (created) /* no truncated model is left behind */
    unlink(path);
  free(buf);
  return st;
}
