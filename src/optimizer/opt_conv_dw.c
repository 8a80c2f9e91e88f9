/* opt_conv_dw.c — level all: a float32 1x1 Conv (unit strides, no pads,
 * not grouped, constant weights) whose only reader is a 2-D depthwise
 * Conv (constant [M, 1, KH, KW] weights, no dilation, explicit pads)
 * becomes hetrt.FusedConvDw(X, W, B, Wd, Bd) writing the depthwise
 * Conv's output: MobileNet's expand + depthwise pair.  Runs after
 * opt_activation.c, so each half keeps the activation it took over (the
 * 1x1 half's as it was: hetrt_act_min / hetrt_act_max, or hetrt_act with
 * hetrt_act_alpha / hetrt_act_beta; the depthwise half's as the same
 * attributes with hetrt_dw_ in place of hetrt_).  The CPU kernel runs the pair
 * band by band where the wide 1x1 output would not stay in the cache
 * (linalg_dnnl.c); every other path runs the two halves one after the
 * other, with the same numbers.
 */
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"

bool het_opt_explicit_pads(const het_node *n) {
  const char *a = het_node_attr_string(n, "auto_pad");
  return !a || strcmp(a, "NOTSET") == 0;
}

const het_tensor *het_opt_plain_conv(const het_opt *o, int c) {
  const het_graph *g = o->g;
  const het_node *n = &g->nodes[c];
  if (o->dead[c] || *n->domain || strcmp(n->op_type, "Conv") != 0 ||
      n->n_inputs > 3 || n->n_outputs != 1 || n->outputs[0] < 0 ||
      g->values[n->outputs[0]].dtype != HET_DTYPE_FLOAT32 ||
      !het_opt_explicit_pads(n) ||
      !het_node_attr_ints_all(n, "dilations", 1))
    return NULL;
  int w = het_node_input(n, 1), b = het_node_input(n, 2);
  if (w < 0 || !het_opt_is_constant(g, w) ||
      (b >= 0 && !het_opt_is_constant(g, b)))
    return NULL;
  const het_tensor *wt = g->values[w].initializer;
  return wt->dtype == HET_DTYPE_FLOAT32 && wt->rank == 4 ? wt : NULL;
}

/* Rewrites 1x1 Conv p and depthwise Conv d (p's only reader) into one
 * hetrt.FusedConvDw node in p's place. */
static het_status fuse(het_opt *o, int p, int d) {
  het_graph *g = o->g;
  const het_node *dn = &g->nodes[d];
  int wd = het_node_input(dn, 1), bd = het_node_input(dn, 2);
  size_t np = 0, ns = 0;
  const int64_t *dp = het_node_attr_ints(dn, "pads", &np);
  const int64_t *ds = het_node_attr_ints(dn, "strides", &ns);
  het_node *pn = &g->nodes[p];
  int *inputs = het_arena_calloc(&g->arena, 5, sizeof *inputs);
  int64_t *ints = het_arena_calloc(&g->arena, 6, sizeof *ints);
  het_attr *attrs =
      het_arena_calloc(&g->arena, (size_t)pn->n_attrs + 5, sizeof *attrs);
  if (!inputs || !ints || !attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < 3; i++)
    inputs[i] = het_node_input(pn, i);
  inputs[3] = wd;
  inputs[4] = bd;
  for (int i = 0; i < 2; i++)
    ints[i] = ds && ns == 2 ? ds[i] : 1;
  for (int i = 0; i < 4; i++)
    ints[2 + i] = dp && np == 4 ? dp[i] : 0;
  memcpy(attrs, pn->attrs, (size_t)pn->n_attrs * sizeof *attrs);
  int na = pn->n_attrs;
  attrs[na++] = (het_attr){.name = "hetrt_dw_strides", .type = HET_ATTR_INTS,
                           .n = 2, .ints = ints};
  attrs[na++] = (het_attr){.name = "hetrt_dw_pads", .type = HET_ATTR_INTS,
                           .n = 4, .ints = ints + 2};
  /* the depthwise half's activation (opt_activation.c) under dw names */
  na += het_node_copy_act_attrs(dn, true, attrs + na);
  het_opt_absorb_next(o, p, d); /* releases d's reads, Wd's and Bd's too */
  pn = &g->nodes[p];
  pn->inputs = inputs;
  pn->n_inputs = bd >= 0 ? 5 : 4;
  pn->attrs = attrs;
  pn->n_attrs = na;
  pn->op_type = "FusedConvDw";
  pn->domain = "hetrt";
  pn->opset = 1;
  /* Wd, Bd: new values when a BatchNormalization was folded into them
   * this round, beyond the counts (which the next round recounts) */
  if (wd < o->n_values)
    o->uses[wd]++;
  if (bd >= 0 && bd < o->n_values)
    o->uses[bd]++;
  return HET_OK;
}

het_status het_opt_fuse_conv_dw(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int d = g->order[k];
    const het_tensor *wd = het_opt_plain_conv(o, d);
    if (!wd || wd->dims[1] != 1)
      continue;
    const het_node *dn = &g->nodes[d];
    int v = het_node_input(dn, 0), m = (int)wd->dims[0];
    size_t np = 0, ns = 0;
    het_node_attr_ints(dn, "pads", &np);
    het_node_attr_ints(dn, "strides", &ns);
    if (v < 0 || het_opt_uses(o, v) != 1 || g->values[v].producer < 0 ||
        het_node_attr_int(dn, "group", 1) != m || (np != 0 && np != 4) ||
        (ns != 0 && ns != 2))
      continue;
    int p = g->values[v].producer;
    const het_tensor *w = het_opt_plain_conv(o, p);
    const het_node *pn = &g->nodes[p];
    if (!w || w->dims[0] != m || w->dims[2] != 1 || w->dims[3] != 1 ||
        het_node_attr_int(pn, "group", 1) != 1 ||
        !het_node_attr_ints_all(pn, "strides", 1) ||
        !het_node_attr_ints_all(pn, "pads", 0))
      continue;
    HET_TRY(fuse(o, p, d));
    if (o->stats)
      o->stats->conv_dws_fused++;
  }
  return HET_OK;
}
