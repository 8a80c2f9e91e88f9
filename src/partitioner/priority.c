/* priority.c — the `priority` assignment (first capable provider wins) and
 * grouping of assigned nodes into execution steps.
 * Pass 1 asks every provider for its claims; pass 2 assigns each node;
 * pass 3 cuts g->order into maximal runs of one provider (copy nodes are
 * steps of their own).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "partitioner/partition.h"

static bool het_step_continues(const het_partition *p, int prev, int node) {
  return !p->node_steps && p->kind[node] == HET_STEP_COMPUTE &&
         p->kind[prev] == HET_STEP_COMPUTE &&
         p->provider[node] == p->provider[prev];
}

het_status het_partition_group(const het_graph *g, het_arena *arena,
                               het_partition *p) {
  int count = 0;
  for (int k = 0; k < g->n_nodes; k++)
    if (k == 0 || !het_step_continues(p, g->order[k - 1], g->order[k]))
      count++;
  p->subgraphs =
      het_arena_calloc(arena, (size_t)count + 1, sizeof *p->subgraphs);
  if (!p->subgraphs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
  int s = -1;
  for (int k = 0; k < g->n_nodes; k++) {
    int node = g->order[k];
    if (k == 0 || !het_step_continues(p, g->order[k - 1], node)) {
      int len = 1;
      while (k + len < g->n_nodes &&
             het_step_continues(p, g->order[k + len - 1], g->order[k + len]))
        len++;
      het_subgraph *sg = &p->subgraphs[++s];
      sg->provider = p->provider[node];
      sg->kind = (het_step_kind)p->kind[node];
      sg->nodes = het_arena_calloc(arena, (size_t)len, sizeof(int));
      if (!sg->nodes)
        return het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
    }
    het_subgraph *sg = &p->subgraphs[s];
    sg->nodes[sg->n_nodes++] = node;
  }
  p->n_subgraphs = count;
  return HET_OK;
}

static het_status het_refusal(const het_graph *g, int node,
                              const het_ep *providers, int n_providers,
                              het_claim *const *claims) {
  char why[768];
  size_t used = 0;
  why[0] = '\0';
  for (int p = 0; p < n_providers && used < sizeof why; p++)
    used += (size_t)snprintf(why + used, sizeof why - used, "%s%s: %s",
                             p ? "; " : "", providers[p].vt->name,
                             claims[p][node].reason);
  const het_node *n = &g->nodes[node];
  return het_error(HET_ERR_UNSUPPORTED,
                   "node '%s' (%s): no provider can run it (%s)", n->name,
                   n->op_type, why);
}

het_status het_partition_first_claim(const het_graph *g,
                                     const het_ep *providers,
                                     int n_providers,
                                     het_claim *const *claims,
                                     het_arena *arena, het_partition *out) {
  het_partition p = {.n_nodes = g->n_nodes};
  p.provider = het_arena_calloc(arena, (size_t)g->n_nodes + 1, sizeof(int));
  p.reason = het_arena_calloc(arena, (size_t)g->n_nodes + 1, sizeof(char *));
  p.kind = het_arena_calloc(arena, (size_t)g->n_nodes + 1, 1);
  if (!p.provider || !p.reason || !p.kind)
    return het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
  for (int n = 0; n < g->n_nodes; n++) {
    int chosen = -1;
    for (int i = 0; i < n_providers && chosen < 0; i++)
      if (claims[i][n].claimed)
        chosen = i;
    if (chosen < 0)
      return het_refusal(g, n, providers, n_providers, claims);
    /* Say why each higher-priority provider passed: no silent fallback. */
    char why[512];
    size_t used = (size_t)snprintf(why, sizeof why, "priority %d: %s",
                                   chosen + 1, claims[chosen][n].reason);
    for (int i = 0; i < chosen && used < sizeof why; i++)
      used += (size_t)snprintf(why + used, sizeof why - used, "%s%s: %s%s",
                               i ? "; " : " (", providers[i].vt->name,
                               claims[i][n].reason,
                               i == chosen - 1 ? ")" : "");
    p.provider[n] = chosen;
    p.reason[n] = het_arena_strdup(arena, why);
    if (!p.reason[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
  }
  *out = p;
  return HET_OK;
}

het_status het_partition_priority(const het_graph *g,
                                  const het_ep *providers,
                                  int n_providers, het_arena *arena,
                                  het_partition *out) {
  het_status st = HET_OK;
  het_claim **claims = calloc((size_t)n_providers + 1, sizeof *claims);
  het_partition p;
  if (!claims)
    return het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
  for (int i = 0; i < n_providers && st == HET_OK; i++) {
    claims[i] = calloc((size_t)g->n_nodes + 1, sizeof **claims);
    if (!claims[i])
      st = het_error(HET_ERR_OUT_OF_MEMORY, "partition: out of memory");
    else
      st = providers[i].vt->get_capability(providers[i].state, g, claims[i]);
  }
  if (st == HET_OK)
    st = het_partition_first_claim(g, providers, n_providers, claims, arena,
                                   &p);
  if (st == HET_OK)
    st = het_partition_group(g, arena, &p);
  if (st == HET_OK)
    *out = p;
  for (int i = 0; i < n_providers; i++)
    free(claims[i]);
  free(claims);
  return st;
}
