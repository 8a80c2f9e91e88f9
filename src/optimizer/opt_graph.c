/* opt_graph.c — graph surgery for the optimizer: use counts, pinned values
 * (graph outputs, outer-scope reads of subgraphs), rewiring, constants,
 * dead-node removal and node-table compaction.
 * Invariant: after het_opt_compact every value's producer is a live node
 * index or -1, and g->order is NULL until het_graph_validate runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"

bool het_opt_is_constant(const het_graph *g, int v) {
  return het_graph_value_constant(g, v);
}

const het_tensor *het_opt_const_tensor(const het_graph *g, int v) {
  if (het_opt_is_constant(g, v))
    return g->values[v].initializer;
  int p = v >= 0 ? g->values[v].producer : -1;
  if (p < 0 || g->nodes[p].domain[0] ||
      strcmp(g->nodes[p].op_type, "Constant") != 0)
    return NULL;
  const het_attr *a = het_node_find_attr(&g->nodes[p], "value");
  return a && a->type == HET_ATTR_TENSOR ? a->t : NULL;
}

bool het_opt_has_subgraph(const het_node *node) {
  for (int a = 0; a < node->n_attrs; a++)
    if (node->attrs[a].type == HET_ATTR_GRAPH ||
        node->attrs[a].type == HET_ATTR_GRAPHS)
      return true;
  return false;
}

int het_opt_uses(const het_opt *o, int v) {
  if (v < 0 || v >= o->n_values || o->pinned[v])
    return 1 << 20;
  return o->uses[v];
}

/* Pins v (a value a subgraph reads by name from this graph). */
static het_status het_opt_pin(void *ctx, int v) {
  het_opt *o = ctx;
  if (v < o->n_values)
    o->pinned[v] = true;
  return HET_OK;
}

het_status het_opt_refresh(het_opt *o) {
  het_graph *g = o->g;
  free(o->dead);
  free(o->uses);
  free(o->pinned);
  o->n_nodes = g->n_nodes;
  o->n_values = g->n_values;
  o->dead = calloc((size_t)g->n_nodes + 1, sizeof *o->dead);
  o->uses = calloc((size_t)g->n_values + 1, sizeof *o->uses);
  o->pinned = calloc((size_t)g->n_values + 1, sizeof *o->pinned);
  if (!o->dead || !o->uses || !o->pinned)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    for (int i = 0; i < node->n_inputs; i++)
      if (node->inputs[i] >= 0)
        o->uses[node->inputs[i]]++;
    for (int a = 0; a < node->n_attrs; a++)
      if (node->attrs[a].type == HET_ATTR_GRAPH && node->attrs[a].g)
        (void)het_graph_outer_reads(g, node->attrs[a].g, het_opt_pin, o);
  }
  for (int i = 0; i < g->n_outputs; i++)
    o->pinned[g->outputs[i]] = true;
  return HET_OK;
}

void het_opt_deinit(het_opt *o) {
  free(o->dead);
  free(o->uses);
  free(o->pinned);
  o->dead = NULL;
  o->uses = NULL;
  o->pinned = NULL;
}

void het_opt_replace_uses(het_opt *o, int from, int to) {
  het_graph *g = o->g;
  for (int n = 0; n < o->n_nodes; n++) {
    if (o->dead[n])
      continue;
    het_node *node = &g->nodes[n];
    for (int i = 0; i < node->n_inputs; i++)
      if (node->inputs[i] == from) {
        node->inputs[i] = to;
        if (from < o->n_values)
          o->uses[from]--;
        if (to < o->n_values)
          o->uses[to]++;
      }
  }
}

void het_opt_absorb_next(het_opt *o, int c, int n) {
  het_graph *g = o->g;
  int x = g->nodes[c].outputs[0], y = g->nodes[n].outputs[0];
  het_opt_kill_node(o, n);
  g->nodes[c].outputs[0] = y;
  g->values[y].producer = c;
  g->values[x].producer = -1;
}

void het_opt_kill_node(het_opt *o, int n) {
  const het_node *node = &o->g->nodes[n];
  if (o->dead[n])
    return;
  o->dead[n] = true;
  for (int i = 0; i < node->n_inputs; i++) {
    int v = node->inputs[i];
    if (v >= 0 && v < o->n_values)
      o->uses[v]--;
  }
  o->changes++;
}

het_status het_opt_add_node(het_opt *o, const het_node *node) {
  het_graph *g = o->g;
  bool *dead = realloc(o->dead, ((size_t)g->n_nodes + 2) * sizeof *dead);
  if (!dead)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  o->dead = dead;
  int id;
  HET_TRY(het_graph_add_node(g, node, &id));
  o->dead[id] = o->dead[id + 1] = false;
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] >= 0 && node->inputs[i] < o->n_values)
      o->uses[node->inputs[i]]++;
  o->changes++;
  return HET_OK;
}

/* Pass: reverse topological sweep killing nodes none of whose outputs is
 * read (by a live node, a graph output or a subgraph). */
void het_opt_remove_dead(het_opt *o) {
  het_graph *g = o->g;
  for (int k = o->n_nodes - 1; k >= 0; k--) {
    int n = g->order ? g->order[k] : k;
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || het_opt_has_subgraph(node))
      continue;
    bool read = false;
    for (int i = 0; i < node->n_outputs && !read; i++)
      read = node->outputs[i] >= 0 && het_opt_uses(o, node->outputs[i]) > 0;
    if (read)
      continue;
    het_opt_kill_node(o, n);
    if (o->stats)
      o->stats->dead_removed++;
  }
}

static void het_opt_free_attrs(het_node *node) {
  for (int a = 0; a < node->n_attrs; a++) {
    het_attr *at = &node->attrs[a];
    het_tensor_destroy(at->t);
    at->t = NULL;
    for (size_t i = 0; at->tensors && i < at->n; i++) {
      het_tensor_destroy(at->tensors[i]);
      at->tensors[i] = NULL;
    }
  }
}

het_status het_opt_compact(het_opt *o) {
  het_graph *g = o->g;
  int kept = 0;
  for (int n = 0; n < g->n_nodes; n++) {
    if (o->dead[n]) {
      het_opt_free_attrs(&g->nodes[n]);
      continue;
    }
    g->nodes[kept++] = g->nodes[n];
  }
  g->n_nodes = kept;
  for (int v = 0; v < g->n_values; v++)
    g->values[v].producer = -1;
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; i < g->nodes[n].n_outputs; i++)
      if (g->nodes[n].outputs[i] >= 0)
        g->values[g->nodes[n].outputs[i]].producer = n;
  free(g->order);
  g->order = NULL;
  free(o->dead);
  o->dead = calloc((size_t)g->n_nodes + 1, sizeof *o->dead);
  o->n_nodes = g->n_nodes;
  if (!o->dead)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  return HET_OK;
}

void het_opt_drop_unused_initializers(het_opt *o) {
  het_graph *g = o->g;
  for (int v = 0; v < o->n_values; v++) {
    het_value *val = &g->values[v];
    if (!val->initializer || o->uses[v] > 0 || o->pinned[v] ||
        (val->flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_GRAPH_OUTPUT)))
      continue;
    het_tensor_destroy(val->initializer);
    val->initializer = NULL;
    val->flags &= ~(unsigned)HET_VALUE_INITIALIZER;
    if (o->stats)
      o->stats->initializers_dropped++;
  }
}
