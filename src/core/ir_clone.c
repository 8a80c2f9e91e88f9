/* ir_clone.c — het_graph_clone: a graph of its own (values, nodes,
 * attributes, subgraphs, order) whose initializer and attribute tensors
 * borrow the source's data.  Invariant: value and node ids of the clone
 * equal the source's, so per-node facts computed on one apply to the
 * other.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ir.h"
#include "core/status.h"

/* A borrowed view of t (NULL for NULL): same dtype, shape and data. */
static het_status het_tensor_view(const het_tensor *t, het_tensor **out) {
  *out = NULL;
  if (!t)
    return HET_OK;
  het_tensor *v = malloc(sizeof *v);
  if (!v)
    return het_error(HET_ERR_OUT_OF_MEMORY, "graph clone: out of memory");
  *v = *t;
  v->owned = false;
  *out = v;
  return HET_OK;
}

static const char *het_clone_str(het_graph *g, const char *s) {
  return s ? het_arena_strdup(&g->arena, s) : NULL;
}

/* Copies n elements of size bytes from src into the clone's arena. */
static void *het_clone_array(het_graph *g, const void *src, size_t n,
                             size_t size) {
  if (!src)
    return NULL;
  void *p = het_arena_calloc(&g->arena, n ? n : 1, size);
  if (p && n)
    memcpy(p, src, n * size);
  return p;
}

#define HET_CLONE_OOM()                                                      \
  het_error(HET_ERR_OUT_OF_MEMORY, "graph clone: out of memory")

static het_status het_clone_attr(const het_graph *src, het_graph *g,
                                 const het_attr *a, het_attr *out) {
  *out = *a;
  out->t = NULL;
  out->g = NULL;
  out->tensors = NULL;
  out->name = het_clone_str(g, a->name);
  if (!out->name)
    return HET_CLONE_OOM();
  if (a->s && !(out->s = het_arena_strndup(&g->arena, a->s, a->s_len)))
    return HET_CLONE_OOM();
  if ((a->floats &&
       !(out->floats = het_clone_array(g, a->floats, a->n, sizeof *a->floats))) ||
      (a->ints &&
       !(out->ints = het_clone_array(g, a->ints, a->n, sizeof *a->ints))))
    return HET_CLONE_OOM();
  if (a->strings) {
    out->strings = het_arena_calloc(&g->arena, a->n + 1, sizeof *out->strings);
    if (!out->strings)
      return HET_CLONE_OOM();
    for (size_t i = 0; i < a->n; i++)
      if (a->strings[i] && !(out->strings[i] = het_clone_str(g, a->strings[i])))
        return HET_CLONE_OOM();
  }
  HET_TRY(het_tensor_view(a->t, &out->t));
  if (a->tensors) {
    out->tensors = het_arena_calloc(&g->arena, a->n + 1, sizeof *out->tensors);
    if (!out->tensors)
      return HET_CLONE_OOM();
    for (size_t i = 0; i < a->n; i++)
      HET_TRY(het_tensor_view(a->tensors[i], &out->tensors[i]));
  }
  if (a->g) { /* the subgraph of the same index (GRAPHS: a->i keeps) */
    for (int i = 0; i < src->n_subgraphs && !out->g; i++)
      if (src->subgraphs[i] == a->g)
        out->g = g->subgraphs[i];
    if (!out->g)
      return het_error(HET_ERR_INTERNAL,
                       "graph clone: attribute '%s' names a graph its graph "
                       "does not own",
                       a->name);
  }
  return HET_OK;
}

/* Pass 2: the owned subgraphs, in order (GRAPHS attributes index them). */
static het_status het_clone_subgraphs(const het_graph *src, het_graph *g) {
  for (int i = 0; i < src->n_subgraphs; i++) {
    het_graph *sub = NULL;
    HET_TRY(het_graph_clone(src->subgraphs[i], &sub));
    het_status st = het_graph_adopt_subgraph(g, sub);
    if (st != HET_OK) {
      het_graph_destroy(sub);
      return st;
    }
  }
  return HET_OK;
}

/* Pass 3: nodes; the node table grows one node at a time, so a failure
 * leaves only complete nodes for het_graph_destroy. */
static het_status het_clone_nodes(const het_graph *src, het_graph *g) {
  if (src->n_nodes) {
    g->nodes = calloc((size_t)src->n_nodes, sizeof *g->nodes);
    if (!g->nodes)
      return HET_CLONE_OOM();
    g->cap_nodes = src->n_nodes;
  }
  for (int n = 0; n < src->n_nodes; n++) {
    const het_node *a = &src->nodes[n];
    het_node *b = &g->nodes[n];
    *b = *a;
    b->n_attrs = 0;
    b->attrs = NULL;
    g->n_nodes = n + 1;
    b->name = het_clone_str(g, a->name);
    b->op_type = het_clone_str(g, a->op_type);
    b->domain = het_clone_str(g, a->domain);
    b->inputs = het_clone_array(g, a->inputs, (size_t)a->n_inputs,
                                sizeof *a->inputs);
    b->outputs = het_clone_array(g, a->outputs, (size_t)a->n_outputs,
                                 sizeof *a->outputs);
    b->attrs = het_arena_calloc(&g->arena, (size_t)a->n_attrs + 1,
                                sizeof *b->attrs);
    if (!b->name || !b->op_type || !b->domain || !b->attrs ||
        (a->inputs && !b->inputs) || (a->outputs && !b->outputs))
      return HET_CLONE_OOM();
    for (int k = 0; k < a->n_attrs; k++) {
      b->n_attrs = k + 1;
      HET_TRY(het_clone_attr(src, g, &a->attrs[k], &b->attrs[k]));
    }
  }
  return HET_OK;
}

/* Pass 1: values, in id order (interning keeps ids and the name index). */
static het_status het_clone_values(const het_graph *src, het_graph *g) {
  for (int v = 0; v < src->n_values; v++) {
    const het_value *a = &src->values[v];
    int id;
    HET_TRY(het_graph_intern_value(g, a->name, &id));
    if (id != v)
      return het_error(HET_ERR_INTERNAL, "graph clone: value '%s' is %d, "
                                         "not %d",
                       a->name, id, v);
    het_value *b = &g->values[v];
    const char *name = b->name;
    *b = *a;
    b->name = name;
    b->initializer = NULL;
    for (int d = 0; a->shape.rank > 0 && d < a->shape.rank; d++)
      if (a->shape.dims[d].symbol &&
          !(b->shape.dims[d].symbol = het_clone_str(g, a->shape.dims[d].symbol)))
        return HET_CLONE_OOM();
    HET_TRY(het_tensor_view(a->initializer, &b->initializer));
  }
  return HET_OK;
}

/* Pass 4: graph-level lists and strings. */
static het_status het_clone_lists(const het_graph *src, het_graph *g) {
  g->ir_version = src->ir_version;
  g->name = het_clone_str(g, src->name);
  g->producer_name = het_clone_str(g, src->producer_name);
  g->n_inputs = src->n_inputs;
  g->n_outputs = src->n_outputs;
  g->inputs = het_clone_array(g, src->inputs, (size_t)src->n_inputs,
                              sizeof *src->inputs);
  g->outputs = het_clone_array(g, src->outputs, (size_t)src->n_outputs,
                               sizeof *src->outputs);
  g->opsets = het_clone_array(g, src->opsets, (size_t)src->n_opsets,
                              sizeof *src->opsets);
  if ((src->name && !g->name) || (src->producer_name && !g->producer_name) ||
      (src->inputs && !g->inputs) || (src->outputs && !g->outputs) ||
      (src->opsets && !g->opsets))
    return HET_CLONE_OOM();
  g->n_opsets = src->n_opsets;
  for (int i = 0; i < src->n_opsets; i++)
    if (!(g->opsets[i].domain = het_clone_str(g, src->opsets[i].domain)))
      return HET_CLONE_OOM();
  if (src->n_metadata) {
    g->metadata_keys = het_arena_calloc(&g->arena, (size_t)src->n_metadata,
                                        sizeof *g->metadata_keys);
    g->metadata_values = het_arena_calloc(&g->arena, (size_t)src->n_metadata,
                                          sizeof *g->metadata_values);
    if (!g->metadata_keys || !g->metadata_values)
      return HET_CLONE_OOM();
    for (int i = 0; i < src->n_metadata; i++)
      if (!(g->metadata_keys[i] = het_clone_str(g, src->metadata_keys[i])) ||
          !(g->metadata_values[i] = het_clone_str(g, src->metadata_values[i])))
        return HET_CLONE_OOM();
    g->n_metadata = src->n_metadata;
  }
  if (src->order) {
    g->order = malloc((size_t)src->n_nodes * sizeof *g->order + 1);
    if (!g->order)
      return HET_CLONE_OOM();
    memcpy(g->order, src->order, (size_t)src->n_nodes * sizeof *g->order);
  }
  return HET_OK;
}

het_status het_graph_clone(const het_graph *src, het_graph **out) {
  het_graph *g = NULL;
  HET_TRY(het_graph_create(&g));
  het_status st = het_clone_values(src, g);
  if (st == HET_OK)
    st = het_clone_subgraphs(src, g);
  if (st == HET_OK)
    st = het_clone_nodes(src, g);
  if (st == HET_OK)
    st = het_clone_lists(src, g);
  if (st != HET_OK) {
    het_graph_destroy(g);
    return st;
  }
  *out = g;
  return HET_OK;
}
