/* opt_identity.c — removal of Identity and inference-mode Dropout nodes.
 * A removed node's readers read its input instead; when its output name
 * must survive (graph output, read by a subgraph), the input's producer
 * writes that output instead, or the node is kept when neither works.
 */
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "optimizer/opt_internal.h"

/* Dropout is an identity when training_mode is absent or a constant
 * false and its mask output is not read. */
static bool het_opt_dropout_is_identity(const het_opt *o,
                                        const het_node *node) {
  const het_graph *g = o->g;
  int tm = het_node_input(node, 2);
  if (tm >= 0) {
    if (!het_opt_is_constant(g, tm))
      return false;
    const het_tensor *t = g->values[tm].initializer;
    if (het_tensor_count(t) < 1 || het_tensor_get_i64(t, 0) != 0)
      return false;
  }
  for (int i = 1; i < node->n_outputs; i++)
    if (node->outputs[i] >= 0 && het_opt_uses(o, node->outputs[i]) > 0)
      return false;
  return true;
}

static bool het_opt_is_identity(const het_opt *o, const het_node *node) {
  if (*node->domain && strcmp(node->domain, "ai.onnx") != 0)
    return false;
  if (node->n_inputs < 1 || node->inputs[0] < 0 || node->n_outputs < 1 ||
      node->outputs[0] < 0)
    return false;
  if (strcmp(node->op_type, "Identity") == 0)
    return node->n_inputs == 1 && node->n_outputs == 1;
  if (strcmp(node->op_type, "Dropout") == 0)
    return het_opt_dropout_is_identity(o, node);
  return false;
}

/* The output y must keep its name: make x's producer write y.  False when
 * x is not the plain output of a live node. */
static bool het_opt_rename_into(het_opt *o, int n, int x, int y) {
  het_graph *g = o->g;
  int p = g->values[x].producer;
  if (p < 0 || p >= o->n_nodes || o->dead[p] || o->pinned[x] ||
      (g->values[x].flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER |
                             HET_VALUE_GRAPH_OUTPUT)))
    return false;
  het_node *prod = &g->nodes[p];
  het_opt_kill_node(o, n);
  for (int i = 0; i < prod->n_outputs; i++)
    if (prod->outputs[i] == x)
      prod->outputs[i] = y;
  g->values[y].producer = p;
  g->values[x].producer = -1;
  het_opt_replace_uses(o, x, y);
  return true;
}

het_status het_opt_remove_identities(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (o->dead[n] || !het_opt_is_identity(o, node))
      continue;
    int x = node->inputs[0], y = node->outputs[0];
    if (x == y)
      continue;
    if (!o->pinned[y]) {
      het_opt_kill_node(o, n);
      het_opt_replace_uses(o, y, x);
    } else if (!het_opt_rename_into(o, n, x, y)) {
      continue;
    }
    if (o->stats)
      o->stats->identities_removed++;
  }
  return HET_OK;
}
