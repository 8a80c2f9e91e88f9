/* cost_eval.c — the objective of an assignment (het_cost_evaluate), the
 * transfer and roofline formulas, and the edge index the algorithms share.
 * Invariant: het_cost_eval_ix and the sum of het_cost_step over t->order
 * compute the same objective (the rules are listed in cost.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/cost_internal.h"

/* ---- formulas ---- */

double het_cost_leg(const het_cost_table *t, int d, double bytes) {
  double bw = t->link_bandwidth[d];
  return (bw > 0 ? bytes / bw : 0) + t->link_latency[d];
}

unsigned het_cost_class(const het_cost_table *t, int d) {
  return d < 0 || t->host_memory[d] ? HET_COST_HOST_BIT : 1u << d;
}

double het_cost_transfer(const het_cost_table *t, int a, int b,
                         double bytes) {
  bool ha = a < 0 || t->host_memory[a], hb = b < 0 || t->host_memory[b];
  if (a == b || (ha && hb))
    return 0;
  return (ha ? 0 : het_cost_leg(t, a, bytes)) +
         (hb ? 0 : het_cost_leg(t, b, bytes));
}

/* ---- index ---- */

void het_cost_index_deinit(het_cost_index *ix) {
  free(ix->order);
  free(ix->pos);
  free(ix->producer);
  free(ix->output);
  free(ix->cons_off);
  free(ix->cons);
  free(ix->in_off);
  free(ix->ins);
  free(ix->out_off);
  free(ix->outs);
  free(ix->sweep);
  memset(ix, 0, sizeof *ix);
}

/* True when v appears among the first k inputs of node. */
static bool het_seen_before(const het_node *node, int k, int v) {
  for (int j = 0; j < k; j++)
    if (node->inputs[j] == v)
      return true;
  return false;
}

/* Pass 2 of het_cost_index_init: the CSR arrays (cursor: n_values
 * scratch ints). */
static void het_cost_index_fill(het_cost_index *ix, const het_graph *g,
                                int *cursor) {
  for (int n = 0; n < ix->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    ix->in_off[n + 1] = ix->in_off[n];
    ix->out_off[n + 1] = ix->out_off[n];
    for (int k = 0; k < node->n_inputs; k++) {
      int v = node->inputs[k];
      if (v >= 0 && v < ix->n_values && !het_seen_before(node, k, v)) {
        ix->ins[ix->in_off[n + 1]++] = v;
        ix->cons_off[v + 1]++;
      }
    }
    for (int k = 0; k < node->n_outputs; k++)
      if (node->outputs[k] >= 0 && node->outputs[k] < ix->n_values)
        ix->outs[ix->out_off[n + 1]++] = node->outputs[k];
  }
  for (int v = 0; v < ix->n_values; v++)
    ix->cons_off[v + 1] += ix->cons_off[v];
  for (int v = 0; v < ix->n_values; v++)
    cursor[v] = ix->cons_off[v];
  for (int n = 0; n < ix->n_nodes; n++)
    for (int k = ix->in_off[n]; k < ix->in_off[n + 1]; k++)
      ix->cons[cursor[ix->ins[k]]++] = n;
}

het_status het_cost_index_init(het_cost_index *ix, const het_cost_table *t) {
  const het_graph *g = t->graph;
  memset(ix, 0, sizeof *ix);
  ix->t = t;
  ix->n_nodes = t->n_nodes;
  ix->n_values = g->n_values;
  ix->n_devices = t->n_devices;
  size_t nn = (size_t)t->n_nodes + 1, nv = (size_t)g->n_values + 1;
  size_t n_in = 1, n_out = 1;
  for (int n = 0; n < t->n_nodes; n++) {
    n_in += (size_t)g->nodes[n].n_inputs;
    n_out += (size_t)g->nodes[n].n_outputs;
  }
  ix->order = malloc(nn * sizeof(int));
  ix->pos = malloc(nn * sizeof(int));
  ix->producer = malloc(nv * sizeof(int)); /* also the fill cursor */
  ix->output = calloc(nv, sizeof(bool));
  ix->cons_off = calloc(nv + 1, sizeof(int));
  ix->cons = calloc(n_in, sizeof(int));
  ix->in_off = calloc(nn + 1, sizeof(int));
  ix->ins = calloc(n_in, sizeof(int));
  ix->out_off = calloc(nn + 1, sizeof(int));
  ix->outs = calloc(n_out, sizeof(int));
  ix->sweep = calloc(nn, sizeof(double));
  for (int d = 0; d < t->n_devices; d++)
    ix->act |= !t->host_memory[d] && t->capacity[d] > 0;
  if (!ix->order || !ix->pos || !ix->producer || !ix->output ||
      !ix->cons_off || !ix->cons || !ix->in_off || !ix->ins ||
      !ix->out_off || !ix->outs || !ix->sweep) {
    het_cost_index_deinit(ix);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  }
  het_cost_index_fill(ix, g, ix->producer);
  for (int v = 0; v < g->n_values; v++) {
    ix->producer[v] = g->values[v].producer;
    ix->output[v] = (g->values[v].flags & HET_VALUE_GRAPH_OUTPUT) != 0;
  }
  for (int k = 0; k < g->n_outputs; k++)
    if (g->outputs[k] >= 0 && g->outputs[k] < g->n_values)
      ix->output[g->outputs[k]] = true;
  for (int p = 0; p < t->n_nodes; p++) {
    ix->order[p] = t->order ? t->order[p] : p;
    ix->pos[ix->order[p]] = p;
  }
  return HET_OK;
}

/* ---- objective ---- */

double het_cost_value(const het_cost_index *ix, const int *assign, int v) {
  const het_cost_table *t = ix->t;
  if (t->value_const[v])
    return 0;
  int pn = ix->producer[v];
  int src = pn >= 0 ? assign[pn] : HET_COST_HOST;
  bool src_dev = src >= 0 && !t->host_memory[src];
  bool need_host = src_dev && ix->output[v];
  double b = t->value_bytes[v], c = 0;
  unsigned seen = 0;
  for (int k = ix->cons_off[v]; k < ix->cons_off[v + 1]; k++) {
    int d = assign[ix->cons[k]];
    if (d == src)
      continue;
    if (src_dev)
      need_host = true;
    if (!t->host_memory[d] && !(seen & (1u << d))) {
      seen |= 1u << d;
      c += het_cost_leg(t, d, b);
    }
  }
  if (need_host)
    c += het_cost_leg(t, src, b);
  return c;
}

unsigned het_cost_value_devices(const het_cost_index *ix, const int *assign,
                                int v) {
  unsigned mask = 0;
  for (int k = ix->cons_off[v]; k < ix->cons_off[v + 1]; k++)
    mask |= 1u << assign[ix->cons[k]];
  return mask;
}

double het_cost_launch_at(const het_cost_index *ix, const int *assign,
                          int p) {
  int d = assign[ix->order[p]];
  if (p > 0 && assign[ix->order[p - 1]] == d)
    return 0;
  return ix->t->launch[d];
}

double het_cost_act_peak(const het_cost_index *ix, const int *assign,
                         int d) {
  const het_cost_table *t = ix->t;
  double *diff = ix->sweep;
  memset(diff, 0, ((size_t)ix->n_nodes + 1) * sizeof *diff);
  for (int v = 0; v < ix->n_values; v++) {
    if (t->value_const[v])
      continue;
    int pn = ix->producer[v], lo = -1, hi = -1;
    if (pn >= 0 && assign[pn] == d)
      lo = hi = ix->pos[pn];
    for (int k = ix->cons_off[v]; k < ix->cons_off[v + 1]; k++) {
      int u = ix->cons[k];
      if (assign[u] != d)
        continue;
      int p = ix->pos[u];
      lo = lo < 0 || p < lo ? p : lo;
      hi = p > hi ? p : hi;
    }
    if (lo < 0)
      continue;
    diff[lo] += t->value_bytes[v];
    diff[hi + 1] -= t->value_bytes[v];
  }
  double live = 0, peak = 0;
  for (int p = 0; p < ix->n_nodes; p++) {
    live += diff[p];
    peak = live > peak ? live : peak;
  }
  return peak;
}

/* Adds the activation peaks of the devices whose capacity counts them. */
static void het_cost_add_act(const het_cost_index *ix, const int *assign,
                             double *res, double *act) {
  const het_cost_table *t = ix->t;
  for (int d = 0; d < t->n_devices; d++) {
    double a = 0;
    if (ix->act && !t->host_memory[d] && t->capacity[d])
      a = het_cost_act_peak(ix, assign, d);
    if (act)
      act[d] = a;
    res[d] += a;
  }
}

double het_cost_eval_ix(const het_cost_index *ix, const int *assign,
                        double *used, bool check_capacity) {
  const het_cost_table *t = ix->t;
  double total = 0, res[HET_COST_MAX_DEVICES] = {0};
  for (int p = 0; p < ix->n_nodes; p++) {
    int n = ix->order[p];
    double nt = t->node_time[(size_t)n * t->n_devices + assign[n]];
    if (!isfinite(nt))
      return INFINITY;
    total += nt + het_cost_launch_at(ix, assign, p);
  }
  for (int v = 0; v < ix->n_values; v++) {
    if (!t->value_const[v]) {
      total += het_cost_value(ix, assign, v);
      continue;
    }
    unsigned mask = het_cost_value_devices(ix, assign, v);
    for (int d = 0; d < t->n_devices; d++)
      if (mask & (1u << d))
        res[d] += t->value_bytes[v];
  }
  het_cost_add_act(ix, assign, res, NULL);
  if (used)
    memcpy(used, res, sizeof res);
  for (int d = 0; check_capacity && d < t->n_devices; d++)
    if (t->capacity[d] && res[d] > (double)t->capacity[d])
      return INFINITY;
  return total;
}

het_status het_cost_evaluate(const het_cost_table *t, const int *assign,
                             double *out) {
  *out = INFINITY;
  for (int n = 0; n < t->n_nodes; n++)
    if (assign[n] < 0 || assign[n] >= t->n_devices)
      return HET_OK;
  het_cost_index ix;
  HET_TRY(het_cost_index_init(&ix, t));
  *out = het_cost_eval_ix(&ix, assign, NULL, true);
  het_cost_index_deinit(&ix);
  return HET_OK;
}

/* ---- incremental form ---- */

/* Transfer cost of input v of the node at position p placed on d, given
 * the devices of every earlier position. */
static double het_cost_step_input(const het_cost_index *ix,
                                  const int *assign, int p, int d, int v) {
  const het_cost_table *t = ix->t;
  int pn = ix->producer[v];
  int src = pn >= 0 ? assign[pn] : HET_COST_HOST;
  bool src_dev = src >= 0 && !t->host_memory[src];
  if (d == src || (t->host_memory[d] && !src_dev))
    return 0;
  bool d2h_paid = src_dev && ix->output[v], delivered = false;
  for (int k = ix->cons_off[v]; k < ix->cons_off[v + 1]; k++) {
    int u = ix->cons[k];
    if (ix->pos[u] >= p)
      continue;
    int e = assign[u];
    if (e == src || (!src_dev && t->host_memory[e]))
      continue;
    d2h_paid |= src_dev;
    if (e == d || (t->host_memory[e] && t->host_memory[d]))
      delivered = true;
  }
  double b = t->value_bytes[v];
  if (delivered)
    return 0;
  if (t->host_memory[d])
    return d2h_paid ? 0 : het_cost_leg(t, src, b);
  return (src_dev && !d2h_paid ? het_cost_leg(t, src, b) : 0) +
         het_cost_leg(t, d, b);
}

/* Resident bytes of initializer v when the node at p lands on d. */
static bool het_cost_step_const(const het_cost_index *ix, const int *assign,
                                int p, int d, int v, double *used) {
  const het_cost_table *t = ix->t;
  for (int k = ix->cons_off[v]; k < ix->cons_off[v + 1]; k++) {
    int u = ix->cons[k];
    if (ix->pos[u] < p && assign[u] == d)
      return true;
  }
  used[d] += t->value_bytes[v];
  return !t->capacity[d] || used[d] <= (double)t->capacity[d];
}

double het_cost_step(const het_cost_index *ix, const int *assign, int p,
                     int d, double *used) {
  const het_cost_table *t = ix->t;
  int n = ix->order[p];
  double c = t->node_time[(size_t)n * t->n_devices + d];
  if (!isfinite(c))
    return INFINITY;
  if (p == 0 || assign[ix->order[p - 1]] != d)
    c += t->launch[d];
  for (int k = ix->in_off[n]; k < ix->in_off[n + 1]; k++) {
    int v = ix->ins[k];
    if (!t->value_const[v])
      c += het_cost_step_input(ix, assign, p, d, v);
    else if (used && !het_cost_step_const(ix, assign, p, d, v, used))
      return INFINITY;
  }
  if (!t->host_memory[d])
    for (int k = ix->out_off[n]; k < ix->out_off[n + 1]; k++)
      if (ix->output[ix->outs[k]] && !t->value_const[ix->outs[k]])
        c += het_cost_leg(t, d, t->value_bytes[ix->outs[k]]);
  return c;
}
