/* session_shapes.c — input shapes to plan for (option shape=NAME=DIMS,
 * --shape, a policy's shapes:).  The cost model of the model's graph sees
 * the shapes they imply: the graph's value shapes are swapped for a
 * re-inference from the hinted inputs while the cost table is built, then
 * restored, so claims, compilation and every run keep the model's own
 * (symbolic) shapes.  Also counts the nodes estimated with unknown dims.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "session/session_build.h"

het_status het_options_add_shape(het_session_options *o, const char *input,
                                 int rank, const int64_t *dims) {
  if (!input || !*input)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "shape to plan for: empty input name");
  if (rank < 1 || rank > HET_POLICY_MAX_RANK)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "shape to plan for '%s': rank %d is not 1..%d", input,
                     rank, HET_POLICY_MAX_RANK);
  het_shape_hint *h = NULL;
  for (int i = 0; i < o->n_shapes && !h; i++)
    if (strcmp(o->shapes[i].input, input) == 0)
      h = &o->shapes[i];
  if (!h) {
    char *name = strdup(input);
    het_shape_hint *grown =
        name ? realloc(o->shapes, (size_t)(o->n_shapes + 1) * sizeof *grown)
             : NULL;
    if (!grown) {
      free(name);
      return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
    }
    o->shapes = grown;
    h = &o->shapes[o->n_shapes++];
    h->input = name;
  }
  h->rank = rank;
  memcpy(h->dims, dims, (size_t)rank * sizeof *dims);
  return HET_OK;
}

/* "NAME=1x3x640x640" (the option's form). */
het_status het_options_set_shape(het_session_options *o, const char *value) {
  const char *eq = strrchr(value, '=');
  if (!eq || eq == value)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "option 'shape': '%s' is not NAME=DIMS (e.g. "
                     "images=1x3x640x640)",
                     value);
  char *name = strndup(value, (size_t)(eq - value));
  if (!name)
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  int rank = 0;
  int64_t dims[HET_POLICY_MAX_RANK];
  het_status st = het_policy_parse_dims(eq + 1, name, &rank, dims);
  if (st == HET_OK)
    st = het_options_add_shape(o, name, rank, dims);
  free(name);
  return st;
}

/* The graph input named name (not an initializer), or -1. */
static int het_graph_input(const het_graph *g, const char *name) {
  for (int i = 0; i < g->n_inputs; i++) {
    const het_value *v = &g->values[g->inputs[i]];
    if (!v->initializer && strcmp(v->name, name) == 0)
      return g->inputs[i];
  }
  return -1;
}

static het_status het_hint_check(const het_graph *g, const het_shape_hint *h,
                                 int *value) {
  int v = het_graph_input(g, h->input);
  if (v < 0)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "shape to plan for: the model has no input '%s'",
                     h->input);
  const het_shape *decl = &g->values[v].shape;
  if (decl->rank >= 0 && decl->rank != h->rank)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "shape to plan for '%s': rank %d, the model declares %d",
                     h->input, h->rank, decl->rank);
  for (int d = 0; decl->rank >= 0 && d < decl->rank; d++)
    if (decl->dims[d].value >= 0 && decl->dims[d].value != h->dims[d])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "shape to plan for '%s': dim %d is %lld, the model "
                       "declares %lld",
                       h->input, d, (long long)h->dims[d],
                       (long long)decl->dims[d].value);
  *value = v;
  return HET_OK;
}

het_status het_shape_hints_begin(const het_session_options *o, het_graph *g,
                                 het_shape **saved) {
  *saved = NULL;
  if (!o || !o->n_shapes)
    return HET_OK;
  int *ids = calloc((size_t)o->n_shapes, sizeof *ids);
  het_shape *keep = malloc((size_t)g->n_values * sizeof *keep + 1);
  if (!ids || !keep) {
    free(ids);
    free(keep);
    return het_error(HET_ERR_OUT_OF_MEMORY, "shapes: out of memory");
  }
  het_status st = HET_OK;
  for (int i = 0; i < o->n_shapes && st == HET_OK; i++)
    st = het_hint_check(g, &o->shapes[i], &ids[i]);
  if (st != HET_OK) {
    free(ids);
    free(keep);
    return st;
  }
  for (int v = 0; v < g->n_values; v++) {
    keep[v] = g->values[v].shape;
    if (g->values[v].producer >= 0)
      g->values[v].shape.rank = -1; /* inferred afresh from the hints */
  }
  for (int i = 0; i < o->n_shapes; i++) {
    het_shape *s = &g->values[ids[i]].shape;
    het_shape_set(s, o->shapes[i].rank, o->shapes[i].dims);
  }
  free(ids);
  st = het_graph_infer_shapes(g);
  if (st != HET_OK) {
    het_shape_hints_end(g, keep);
    return het_error_wrap(st, "with the shapes to plan for");
  }
  *saved = keep;
  return HET_OK;
}

void het_shape_hints_end(het_graph *g, het_shape *saved) {
  if (!saved)
    return;
  for (int v = 0; v < g->n_values; v++)
    g->values[v].shape = saved[v];
  free(saved);
}

static bool het_value_known(const het_graph *g, int v) {
  if (v < 0)
    return true;
  const het_shape *s = &g->values[v].shape;
  return s->rank >= 0 && het_shape_is_concrete(s);
}

void het_count_unknown(het_session *s, het_graph_build *b) {
  const het_graph *g = b->prog.graph;
  b->n_estimated_unknown = 0;
  b->estimated_unknown_example = NULL;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    bool known = true;
    for (int i = 0; i < node->n_inputs && known; i++)
      known = het_value_known(g, node->inputs[i]);
    for (int i = 0; i < node->n_outputs && known; i++)
      known = het_value_known(g, node->outputs[i]);
    if (known || b->prog.n_bodies[n])
      continue;
    if (!b->n_estimated_unknown++)
      b->estimated_unknown_example = het_session_node_name(s, b, n);
  }
}
