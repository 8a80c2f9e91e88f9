/* cost_table.c — builds the cost table of a graph on a list of devices:
 * claims, each provider's estimate (or a roofline from its device info),
 * measured times in profile-guided mode (the estimates they replace kept
 * beside them for reports), then constraints.
 * Passes: 1. device facts; 2. value sizes; 3. node times; 4. constraints;
 * 5. every node keeps at least one finite entry (else an error naming it).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/cost_internal.h"

/* Pass 1: device facts (each provider's device). */
static het_status het_table_devices(const het_ep *devices,
                                    const het_constraints *c,
                                    het_device_info *info,
                                    het_cost_table *t) {
  for (int d = 0; d < t->n_devices; d++) {
    info[d] = devices[d].device->info;
    t->host_memory[d] = info[d].host_memory;
    t->link_bandwidth[d] = info[d].link_bandwidth;
    t->link_latency[d] = info[d].link_latency;
    t->launch[d] = info[d].launch_overhead;
    t->capacity[d] = info[d].memory_capacity;
    size_t budget = c ? c->budget[d] : 0;
    if (budget && (!t->capacity[d] || budget < t->capacity[d]))
      t->capacity[d] = budget;
  }
  return HET_OK;
}

/* Pass 3: the estimate of node on device d (claimed). */
static double het_table_estimate(const het_graph *g, const het_ep *dev,
                                 const het_device_info *info, int node) {
  double s = -1;
  if (dev->vt->estimate_cost) {
    if (dev->vt->estimate_cost(dev->state, g, node, &s) != HET_OK ||
        !isfinite(s) || s < 0) {
      het_error_clear();
      s = -1;
    }
  }
  if (s >= 0)
    return s;
  return het_roofline_node(g, node, info);
}

/* Pass 4: pinned/forbidden/bias of node on device d. */
static double het_table_constrain(const het_constraints *c, int node, int d,
                                  double s) {
  if (!c || !c->nodes)
    return s;
  const het_node_constraint *nc = &c->nodes[node];
  if (nc->pinned && !(nc->pinned & (1u << d)))
    return INFINITY;
  if (nc->forbidden & (1u << d))
    return INFINITY;
  if (nc->bias[d] > 0)
    s *= nc->bias[d];
  return s;
}

/* Pass 5: the message for a node no device may run. */
static het_status het_table_refusal(const het_graph *g, int node,
                                    const het_ep *devices, int n_devices,
                                    het_claim *const *claims) {
  char why[640];
  size_t used = 0;
  why[0] = '\0';
  for (int d = 0; d < n_devices && used < sizeof why; d++)
    used += (size_t)snprintf(why + used, sizeof why - used, "%s%s: %s",
                             d ? "; " : "", devices[d].vt->name,
                             claims[d][node].claimed
                                 ? "excluded by constraints"
                                 : claims[d][node].reason);
  return het_error(HET_ERR_UNSUPPORTED,
                   "node '%s' (%s): no provider may run it (%s)",
                   g->nodes[node].name, g->nodes[node].op_type, why);
}

het_status het_cost_table_build(const het_graph *g, const het_ep *devices,
                                int n_devices, het_claim *const *claims,
                                const het_constraints *constraints,
                                const double *measured,
                                const int *measured_dev, het_arena *arena,
                                het_cost_table *out) {
  if (n_devices < 1 || n_devices > HET_COST_MAX_DEVICES)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "cost model: %d providers (1 to %d supported)",
                     n_devices, HET_COST_MAX_DEVICES);
  if (g->n_nodes > 0 && !g->order)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "cost model: graph has no topological order");
  het_cost_table t;
  memset(&t, 0, sizeof t);
  t.graph = g;
  t.n_nodes = g->n_nodes;
  t.n_devices = n_devices;
  t.order = g->order;
  het_device_info info[HET_COST_MAX_DEVICES];
  HET_TRY(het_table_devices(devices, constraints, info, &t));
  size_t nn = (size_t)g->n_nodes + 1, nv = (size_t)g->n_values + 1;
  t.node_time = het_arena_calloc(arena, nn * (size_t)n_devices, sizeof(double));
  if (measured && measured_dev &&
      !(t.estimate = het_arena_calloc(arena, nn * (size_t)n_devices,
                                      sizeof(double))))
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  t.value_bytes = het_arena_calloc(arena, nv, sizeof(double));
  t.value_const = het_arena_calloc(arena, nv, sizeof(bool));
  if (!t.node_time || !t.value_bytes || !t.value_const)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cost model: out of memory");
  for (int v = 0; v < g->n_values; v++) {
    t.value_bytes[v] = het_roofline_value_bytes(g, v);
    t.value_const[v] = g->values[v].initializer != NULL ||
                       (g->values[v].flags & HET_VALUE_INITIALIZER);
  }
  for (int n = 0; n < g->n_nodes; n++) {
    bool any = false;
    for (int d = 0; d < n_devices; d++) {
      double s = INFINITY, est = INFINITY;
      if (claims[d][n].claimed) {
        bool have = t.estimate && measured_dev[n] == d &&
                    isfinite(measured[n]) && measured[n] >= 0;
        est = het_table_estimate(g, &devices[d], &info[d], n);
        s = have ? measured[n] : est;
      }
      s = het_table_constrain(constraints, n, d, s);
      t.node_time[(size_t)n * n_devices + d] = s;
      if (t.estimate)
        t.estimate[(size_t)n * n_devices + d] =
            het_table_constrain(constraints, n, d, est);
      any |= isfinite(s) != 0;
    }
    if (!any)
      return het_table_refusal(g, n, devices, n_devices, claims);
  }
  *out = t;
  return HET_OK;
}
