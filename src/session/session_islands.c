/* session_islands.c — what the optimizer weighs QDQ islands with
 * (het_optimize_int8.prepare/estimate/weighed): the fused operator on the
 * provider that runs int8 islands (the session's first CPU-device
 * provider with estimates: the CPU or INT8 provider), a float node on the
 * provider that would run it fastest among those that claim it, moving
 * its values to and from a device without host memory included; and the
 * record of every weighing the placement report lists (s->islands).
 * The claims are taken once per pass of the optimizer (prepare), on the
 * graph as the pass starts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "session/session.h"

/* One graph's weighing: the session, the int8 provider, the prefix of the
 * graph's report names. */
typedef struct het_island_ctx {
  het_session *s;
  int int8_ep;
  const char *prefix;
} het_island_ctx;

/* s->island_claims[p * s->island_n + n]: provider p claims node n of the
 * graph last prepared. */
static het_status het_island_prepare(void *ctx, const het_graph *g) {
  het_session *s = ((het_island_ctx *)ctx)->s;
  size_t n = (size_t)g->n_nodes;
  bool *claims = realloc(s->island_claims,
                         (n * (size_t)s->n_providers + 1) * sizeof *claims);
  het_claim *c = malloc((n + 1) * sizeof *c);
  if (claims)
    s->island_claims = claims;
  if (!claims || !c) {
    free(c);
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  }
  s->island_n = g->n_nodes;
  het_status st = HET_OK;
  for (int p = 0; p < s->n_providers && st == HET_OK; p++) {
    const het_ep *ep = &s->providers[p];
    memset(c, 0, (n + 1) * sizeof *c);
    st = ep->vt->get_capability(ep->state, g, c);
    for (size_t k = 0; k < n; k++)
      claims[(size_t)p * n + k] = st == HET_OK && c[k].claimed;
  }
  free(c);
  return st;
}

/* Seconds to move node's float values (activations in, outputs out) to
 * and from provider p's device, when its memory is not the host's. */
static double het_island_moves(const het_session *s, int p,
                               const het_graph *g, const het_node *n) {
  if (s->host_memory[p])
    return 0;
  const het_device_info *i = &s->providers[p].device->info;
  double t = 0;
  for (int k = 0; k < n->n_inputs + n->n_outputs; k++) {
    int v = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];
    if (v < 0 || g->values[v].initializer)
      continue;
    double bytes = (double)het_value_bytes(&g->values[v]);
    t += i->link_latency +
         (i->link_bandwidth > 0 ? bytes / i->link_bandwidth : 0);
  }
  return t;
}

/* Provider p's estimate of node (0 when it gives none or a bad one). */
static het_status het_island_on(const het_session *s, int p,
                                const het_graph *g, int node, double *t) {
  const het_ep *ep = &s->providers[p];
  *t = 0;
  if (ep->vt->estimate_cost)
    HET_TRY(ep->vt->estimate_cost(ep->state, g, node, t));
  if (!isfinite(*t) || *t < 0)
    *t = 0;
  return HET_OK;
}

/* The provider that runs float node fastest (moves included) and its
 * seconds: the int8 provider for a node added after prepare or claimed
 * by none. */
static het_status het_island_best(const het_island_ctx *x, const het_graph *g,
                                  int node, int *best, double *seconds) {
  const het_session *s = x->s;
  *best = -1;
  for (int p = 0; node < s->island_n && p < s->n_providers; p++) {
    if (!s->island_claims[(size_t)p * (size_t)s->island_n + (size_t)node])
      continue;
    double t;
    HET_TRY(het_island_on(s, p, g, node, &t));
    t += het_island_moves(s, p, g, &g->nodes[node]);
    if (*best < 0 || t < *seconds) {
      *best = p;
      *seconds = t;
    }
  }
  if (*best >= 0)
    return HET_OK;
  *best = x->int8_ep;
  return het_island_on(s, x->int8_ep, g, node, seconds);
}

static het_status het_island_estimate(void *ctx, const het_graph *g, int node,
                                      bool fused, double *seconds) {
  const het_island_ctx *x = ctx;
  int best;
  if (fused)
    return het_island_on(x->s, x->int8_ep, g, node, seconds);
  return het_island_best(x, g, node, &best, seconds);
}

/* Records an island, replacing an earlier weighing of it. */
static het_status het_island_weighed(void *ctx, const het_optimize_island *w) {
  het_island_ctx *x = ctx;
  het_session *s = x->s;
  char full[768];
  snprintf(full, sizeof full, "%s%s", x->prefix, w->name);
  int i = 0;
  while (i < s->n_islands && strcmp(s->islands[i].name, full) != 0)
    i++;
  if (i == s->n_islands) {
    if (s->n_islands == s->cap_islands) {
      int cap = s->cap_islands ? 2 * s->cap_islands : 16;
      het_explain_island *grown =
          realloc(s->islands, (size_t)cap * sizeof *grown);
      if (!grown)
        return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
      s->islands = grown;
      s->cap_islands = cap;
    }
    const char *kept = het_arena_strdup(&s->arena, full);
    if (!kept)
      return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
    s->n_islands++;
    s->islands[i].name = kept;
  }
  int best;
  double t;
  HET_TRY(het_island_best(x, w->graph, w->node, &best, &t));
  het_explain_island *e = &s->islands[i];
  e->fused = w->fused;
  e->int8_seconds = w->int8_seconds;
  e->float_seconds = w->float_seconds;
  e->unknown_dims = w->unknown_dims;
  e->float_on = s->providers[best].vt->name;
  return HET_OK;
}

het_status het_island_weighing(het_session *s, const char *prefix,
                               het_optimize_int8 *out) {
  int int8_ep = -1;
  for (int i = 0; i < s->n_providers && int8_ep < 0; i++)
    if (s->providers[i].device->kind == HET_DEVICE_CPU &&
        s->providers[i].vt->estimate_cost)
      int8_ep = i;
  if (int8_ep < 0)
    return HET_OK;
  het_island_ctx *x = het_arena_calloc(&s->arena, 1, sizeof *x);
  if (!x)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  *x = (het_island_ctx){.s = s, .int8_ep = int8_ep, .prefix = prefix};
  s->islands_int8_on = s->providers[int8_ep].vt->name;
  out->prepare = het_island_prepare;
  out->estimate = het_island_estimate;
  out->weighed = het_island_weighed;
  out->ctx = x;
  return HET_OK;
}
