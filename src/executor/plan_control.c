/* plan_control.c — plan-time shapes of If, Loop and Scan outputs, by
 * planning their bodies for the signature the node gives them (the plans
 * land in the bodies' caches, ready for the run):
 *   If: the outputs are static when both branches make the same dtype and
 *       dims (else they are dynamic: the branch decides at run time);
 *   Loop: a carried value is static when the body gives it back with the
 *       dims it came in with; scan outputs depend on the trip count and
 *       stay dynamic;
 *   Scan (opset 9+): a state is static when it keeps its dims; a scan
 *       output is the body's slice stacked along its axis, trip count
 *       being the scan inputs' common length.
 * A body that cannot be planned leaves the outputs dynamic; the run
 * reports its error.
 */
#include <string.h>

#include "core/status.h"
#include "executor/plan_internal.h"

static void het_key_from_info(int64_t *k, const het_value_info *x) {
  memset(k, 0, HET_PLAN_KEY_PER_PARAM * sizeof *k);
  k[0] = x->dtype;
  k[1] = x->shape.rank;
  for (int d = 0; d < x->shape.rank; d++)
    k[2 + d] = x->shape.dims[d].value;
}

static void het_key_scalar(int64_t *k, het_dtype dtype) {
  memset(k, 0, HET_PLAN_KEY_PER_PARAM * sizeof *k);
  k[0] = dtype;
}

/* The plan of body for its graph inputs in[0..n) (NULL entries: given by
 * keys[] already) and its captured values from b's info; NULL when it
 * cannot be planned. */
static het_plan *het_body_plan(het_plan_builder *b, het_program *body,
                               int64_t *key) {
  int n_in = body->graph->n_inputs;
  for (int k = 0; k < body->n_outer; k++) {
    const het_value_info *x = &b->info[body->outer_src[k]];
    if (!x->present || !het_shape_is_concrete(&x->shape) ||
        x->dtype == HET_DTYPE_UNDEFINED)
      return NULL;
    het_key_from_info(key + (size_t)(n_in + k) * HET_PLAN_KEY_PER_PARAM, x);
  }
  het_plan *plan = NULL;
  if (het_plan_get(body, key, &plan) != HET_OK) {
    het_error_clear();
    return NULL;
  }
  return plan;
}

/* Output o of body's plan as an info; false when dynamic. */
static bool het_body_output(const het_plan *plan, int o, het_value_info *x) {
  const het_graph *g = plan->prog->graph;
  const het_pvalue *pv = &plan->values[g->outputs[o]];
  if (pv->dynamic || pv->where == HET_PV_NONE)
    return false;
  x->present = true;
  x->dtype = pv->dtype;
  het_shape_set(&x->shape, pv->rank, pv->dims);
  x->data = NULL;
  return true;
}

static bool het_same_info(const het_value_info *a, const het_value_info *b) {
  if (a->dtype != b->dtype || a->shape.rank != b->shape.rank)
    return false;
  for (int d = 0; d < a->shape.rank; d++)
    if (a->shape.dims[d].value != b->shape.dims[d].value)
      return false;
  return true;
}

#define HET_CF_KEY_PARAMS 64

static bool het_control_if(het_plan_builder *b, het_program *const *bodies,
                           int n_out, het_value_info *out) {
  het_value_info got[2][HET_CF_KEY_PARAMS];
  bool ok[2][HET_CF_KEY_PARAMS] = {{false}};
  for (int br = 0; br < 2; br++) {
    int64_t key[HET_CF_KEY_PARAMS * HET_PLAN_KEY_PER_PARAM];
    if (bodies[br]->n_params > HET_CF_KEY_PARAMS ||
        bodies[br]->graph->n_outputs != n_out || n_out > HET_CF_KEY_PARAMS)
      return false;
    het_plan *plan = het_body_plan(b, bodies[br], key);
    if (!plan)
      return false;
    for (int o = 0; o < n_out; o++) {
      memset(&got[br][o], 0, sizeof got[br][o]);
      ok[br][o] = het_body_output(plan, o, &got[br][o]);
    }
    het_plan_put(plan);
  }
  bool all = true;
  for (int o = 0; o < n_out; o++) {
    if (!out[o].present)
      continue;
    if (ok[0][o] && ok[1][o] && het_same_info(&got[0][o], &got[1][o]))
      out[o] = got[0][o];
    else
      all = false;
  }
  return all;
}

static bool het_control_loop(het_plan_builder *b, het_program *body,
                             const het_node *node, const het_value_info *in,
                             het_value_info *out) {
  int carried = node->n_inputs - 2;
  int64_t key[HET_CF_KEY_PARAMS * HET_PLAN_KEY_PER_PARAM];
  if (carried < 0 || body->n_params > HET_CF_KEY_PARAMS ||
      body->graph->n_inputs != carried + 2 ||
      body->graph->n_outputs < carried + 1)
    return false;
  het_key_scalar(key, HET_DTYPE_INT64);
  het_key_scalar(key + HET_PLAN_KEY_PER_PARAM, HET_DTYPE_BOOL);
  for (int i = 0; i < carried; i++)
    het_key_from_info(key + (size_t)(2 + i) * HET_PLAN_KEY_PER_PARAM,
                      &in[2 + i]);
  het_plan *plan = het_body_plan(b, body, key);
  if (!plan)
    return false;
  bool all = node->n_outputs == carried; /* scan outputs stay dynamic */
  for (int i = 0; i < carried && i < node->n_outputs; i++) {
    het_value_info x = {0};
    if (out[i].present && het_body_output(plan, 1 + i, &x) &&
        het_same_info(&x, &in[2 + i]))
      out[i] = x;
    else
      all = false;
  }
  het_plan_put(plan);
  return all;
}

static bool het_control_scan(het_plan_builder *b, het_program *body,
                             const het_node *node, const het_value_info *in,
                             het_value_info *out) {
  int scans = (int)het_node_attr_int(node, "num_scan_inputs", 0);
  int states = node->n_inputs - scans;
  int k_out = node->n_outputs - states;
  int64_t key[HET_CF_KEY_PARAMS * HET_PLAN_KEY_PER_PARAM];
  if (node->opset < 9 || scans < 1 || states < 0 || k_out < 0 ||
      body->n_params > HET_CF_KEY_PARAMS ||
      body->graph->n_inputs != states + scans)
    return false;
  size_t na = 0, noa = 0;
  const int64_t *ia = het_node_attr_ints(node, "scan_input_axes", &na);
  const int64_t *oa = het_node_attr_ints(node, "scan_output_axes", &noa);
  int64_t trips = -1;
  for (int i = 0; i < states; i++)
    het_key_from_info(key + (size_t)i * HET_PLAN_KEY_PER_PARAM, &in[i]);
  for (int j = 0; j < scans; j++) {
    const het_value_info *x = &in[states + j];
    int r = x->shape.rank;
    int ax = (size_t)j < na ? (int)ia[j] : 0;
    ax = ax < 0 ? ax + r : ax;
    if (ax < 0 || ax >= r || (trips >= 0 && x->shape.dims[ax].value != trips))
      return false;
    trips = x->shape.dims[ax].value;
    het_value_info slice = *x;
    slice.shape.rank = r - 1;
    for (int d = ax; d < r - 1; d++)
      slice.shape.dims[d] = x->shape.dims[d + 1];
    het_key_from_info(key + (size_t)(states + j) * HET_PLAN_KEY_PER_PARAM,
                      &slice);
  }
  het_plan *plan = het_body_plan(b, body, key);
  if (!plan)
    return false;
  bool all = true;
  for (int o = 0; o < node->n_outputs; o++) {
    het_value_info x = {0};
    bool known = out[o].present && het_body_output(plan, o, &x);
    if (known && o < states) {
      known = het_same_info(&x, &in[o]);
    } else if (known) {
      int k = o - states, r = x.shape.rank + 1;
      int ax = (size_t)k < noa ? (int)oa[k] : 0;
      ax = ax < 0 ? ax + r : ax;
      known = ax >= 0 && ax < r && r <= HET_MAX_RANK;
      for (int d = r - 1; known && d > ax; d--)
        x.shape.dims[d] = x.shape.dims[d - 1];
      if (known) {
        x.shape.dims[ax] = het_dim_known(trips);
        x.shape.rank = r;
      }
    }
    if (known)
      out[o] = x;
    else
      all = false;
  }
  het_plan_put(plan);
  return all;
}

bool het_plan_control_infer(het_plan_builder *b, int n,
                            const het_value_info *in, het_value_info *out) {
  const het_node *node = &b->g->nodes[n];
  het_program *const *bodies = b->prog->bodies[n];
  if (!bodies)
    return false;
  if (strcmp(node->op_type, "If") == 0)
    return b->prog->n_bodies[n] == 2 &&
           het_control_if(b, bodies, node->n_outputs, out);
  if (strcmp(node->op_type, "Loop") == 0)
    return het_control_loop(b, bodies[0], node, in, out);
  return het_control_scan(b, bodies[0], node, in, out);
}
