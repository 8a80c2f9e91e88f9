/* ref_run.c — the reference interpreter of ref_run.h. */
#include "common/ref_run.h"

#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "kernels/kernel.h"

/* Infers node's outputs from its inputs and allocates the concrete ones
 * (data-dependent ones stay empty for the kernel to size). */
static het_status ref_outputs(const het_node *node, het_tensor **in,
                              het_tensor **out) {
  het_value_info vi[64], vo[64];
  if (node->n_inputs > 64 || node->n_outputs > 64)
    return het_error(HET_ERR_UNSUPPORTED, "ref: node '%s' too wide",
                     node->name);
  for (int i = 0; i < node->n_inputs; i++) {
    memset(&vi[i], 0, sizeof vi[i]);
    vi[i].shape.rank = -1;
    if (in[i])
      het_value_info_from_tensor(&vi[i], in[i]);
  }
  for (int o = 0; o < node->n_outputs; o++) {
    memset(&vo[o], 0, sizeof vo[o]);
    vo[o].present = node->outputs[o] >= 0;
  }
  HET_TRY(het_infer_node(node, node->n_inputs, vi, node->n_outputs, vo, NULL));
  for (int o = 0; o < node->n_outputs; o++) {
    out[o] = NULL;
    if (node->outputs[o] < 0)
      continue;
    out[o] = calloc(1, sizeof *out[o]);
    if (!out[o])
      return het_error(HET_ERR_OUT_OF_MEMORY, "ref: out of memory");
    out[o]->dtype = vo[o].dtype;
    out[o]->rank = vo[o].shape.rank < 0 ? 0 : vo[o].shape.rank;
    if (!het_shape_is_concrete(&vo[o].shape))
      continue;
    int64_t dims[HET_MAX_RANK];
    for (int d = 0; d < out[o]->rank; d++)
      dims[d] = vo[o].shape.dims[d].value;
    HET_TRY(het_tensor_alloc(out[o], vo[o].dtype, dims, out[o]->rank));
  }
  return HET_OK;
}

/* A graph's values while it runs, and the scope around it. */
typedef struct ref_scope {
  const het_graph *g;
  het_tensor **values;
  const struct ref_scope *up;
} ref_scope;

static het_status ref_graph(het_graph *g, const ref_scope *up,
                            het_tensor *const *in, char *const *names,
                            int n_in, het_tensor **out);

/* If: the branch runs with the enclosing values in scope. */
static het_status ref_if(const ref_scope *sc, const het_node *node) {
  const het_tensor *cond = sc->values[node->inputs[0]];
  const het_attr *a = het_node_find_attr(
      node, ((uint8_t *)cond->data)[0] ? "then_branch" : "else_branch");
  het_tensor *out[64];
  if (!a || !a->g || a->g->n_outputs != node->n_outputs || node->n_outputs > 64)
    return het_error(HET_ERR_INVALID_MODEL, "ref: bad If '%s'", node->name);
  HET_TRY(het_graph_infer_shapes(a->g));
  HET_TRY(ref_graph(a->g, sc, NULL, NULL, 0, out));
  for (int o = 0; o < node->n_outputs; o++)
    sc->values[node->outputs[o]] = out[o];
  return HET_OK;
}

static het_status ref_node(const ref_scope *sc, const het_node *node) {
  const het_graph *g = sc->g;
  het_tensor **values = sc->values;
  if (strcmp(node->op_type, "If") == 0)
    return ref_if(sc, node);
  const het_kernel *k = het_kernel_find(node->domain, node->op_type);
  if (!k)
    return het_error(HET_ERR_UNSUPPORTED, "ref: no kernel for %s",
                     node->op_type);
  het_tensor *in[64], *out[64];
  for (int i = 0; i < node->n_inputs && i < 64; i++)
    in[i] = node->inputs[i] >= 0 ? values[node->inputs[i]] : NULL;
  HET_TRY(ref_outputs(node, in, out));
  void *state = NULL;
  het_status st = k->prepare ? k->prepare(g, node, &state) : HET_OK;
  het_kernel_ctx kc = {.node = node, .opset = node->opset,
                       .n_inputs = node->n_inputs, .inputs = in,
                       .n_outputs = node->n_outputs, .outputs = out,
                       .state = state, .threads = 1};
  if (st == HET_OK)
    st = k->run(&kc);
  if (state && k->destroy_state)
    k->destroy_state(state);
  for (int o = 0; o < node->n_outputs; o++) {
    if (node->outputs[o] < 0)
      continue;
    if (st == HET_OK)
      values[node->outputs[o]] = out[o];
    else
      het_tensor_destroy(out[o]);
  }
  return st;
}

/* The tensor named name in scope sc or around it, or NULL. */
static het_tensor *ref_lookup(const ref_scope *sc, const char *name) {
  for (; sc; sc = sc->up) {
    int v = het_graph_find_value((het_graph *)sc->g, name);
    if (v >= 0 && sc->values[v])
      return sc->values[v];
  }
  return NULL;
}

static het_status ref_graph(het_graph *g, const ref_scope *up,
                            het_tensor *const *in, char *const *names,
                            int n_in, het_tensor **out) {
  het_tensor **values = calloc((size_t)g->n_values + 1, sizeof *values);
  bool *owned = calloc((size_t)g->n_values + 1, sizeof *owned);
  het_status st = values && owned ? HET_OK
                                  : het_error(HET_ERR_OUT_OF_MEMORY, "ref");
  ref_scope sc = {g, values, up};
  for (int v = 0; st == HET_OK && v < g->n_values; v++) {
    values[v] = g->values[v].initializer;
    if (!values[v] && up && g->values[v].producer < 0)
      values[v] = ref_lookup(up, g->values[v].name);
  }
  for (int i = 0; st == HET_OK && i < n_in; i++) {
    int v = het_graph_find_value(g, names[i]);
    if (v < 0)
      st = het_error(HET_ERR_INVALID_ARGUMENT, "ref: no input '%s'", names[i]);
    else
      values[v] = in[i];
  }
  for (int k = 0; st == HET_OK && k < g->n_nodes; k++) {
    const het_node *node = &g->nodes[g->order[k]];
    st = ref_node(&sc, node);
    for (int o = 0; st == HET_OK && o < node->n_outputs; o++)
      if (node->outputs[o] >= 0)
        owned[node->outputs[o]] = true;
  }
  for (int o = 0; st == HET_OK && o < g->n_outputs; o++)
    st = het_tensor_clone(values[g->outputs[o]], &out[o]);
  for (int v = 0; values && v < g->n_values; v++)
    if (owned && owned[v])
      het_tensor_destroy(values[v]);
  free(values);
  free(owned);
  return st;
}

het_status ref_run_graph(het_graph *g, het_tensor *const *in,
                         char *const *names, int n_in, het_tensor **out) {
  return ref_graph(g, NULL, in, names, n_in, out);
}
