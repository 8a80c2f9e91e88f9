/* opt_activation.c — a float32 Conv (or hetrt.FusedConv, opt_conv_add.c)
 * whose only reader is a Relu or a Clip with constant bounds takes the
 * activation over: the Conv gets the
 * attributes hetrt_act_min / hetrt_act_max (its kernel clamps its output
 * to them) and writes the activation's output value; the activation node
 * goes.  Invariant: only the CPU kernels read these attributes, and every
 * Conv path of theirs applies them (see linalg_conv.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/status.h"
#include "optimizer/opt_internal.h"

#define HET_ACT_MIN "hetrt_act_min"
#define HET_ACT_MAX "hetrt_act_max"

/* A constant float32 scalar input i of node (present); false otherwise. */
static bool het_opt_scalar(const het_graph *g, const het_node *n, int i,
                           float *out) {
  int v = het_node_input(n, i);
  if (v < 0)
    return true; /* omitted: keep the default */
  if (!het_opt_is_constant(g, v))
    return false;
  const het_tensor *t = g->values[v].initializer;
  if (t->dtype != HET_DTYPE_FLOAT32 || het_tensor_count(t) != 1)
    return false;
  *out = ((const float *)t->data)[0];
  return true;
}

/* The clamp bounds of a Relu or Clip node; false for anything else. */
static bool het_opt_act_bounds(const het_graph *g, const het_node *act,
                               float *lo, float *hi) {
  if (*act->domain || act->n_outputs != 1 || act->outputs[0] < 0)
    return false;
  *lo = -INFINITY;
  *hi = INFINITY;
  if (strcmp(act->op_type, "Relu") == 0) {
    *lo = 0.0f;
    return true;
  }
  if (strcmp(act->op_type, "Clip") != 0)
    return false;
  if (act->opset < 11) {
    *lo = het_node_attr_float(act, "min", -FLT_MAX);
    *hi = het_node_attr_float(act, "max", FLT_MAX);
    return true;
  }
  return het_opt_scalar(g, act, 1, lo) && het_opt_scalar(g, act, 2, hi);
}

/* The Conv/FusedConv node whose output only act reads, or -1. */
static int het_opt_act_conv(const het_opt *o, const het_node *act) {
  const het_graph *g = o->g;
  int x = het_node_input(act, 0);
  if (x < 0 || het_opt_uses(o, x) != 1 || g->values[x].producer < 0 ||
      g->values[x].dtype != HET_DTYPE_FLOAT32)
    return -1;
  int c = g->values[x].producer;
  const het_node *conv = &g->nodes[c];
  bool is_conv = !*conv->domain && strcmp(conv->op_type, "Conv") == 0;
  bool is_fused = strcmp(conv->domain, "hetrt") == 0 &&
                  strcmp(conv->op_type, "FusedConv") == 0;
  if (o->dead[c] || !(is_conv || is_fused) || conv->n_outputs != 1 ||
      het_node_find_attr(conv, HET_ACT_MIN))
    return -1;
  return c;
}

static het_status het_opt_act_apply(het_opt *o, int c, int n, float lo,
                                    float hi) {
  het_graph *g = o->g;
  het_node *conv = &g->nodes[c];
  het_attr *attrs = het_arena_calloc(&g->arena, (size_t)conv->n_attrs + 2,
                                     sizeof *attrs);
  if (!attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  if (conv->n_attrs)
    memcpy(attrs, conv->attrs, (size_t)conv->n_attrs * sizeof *attrs);
  attrs[conv->n_attrs] = (het_attr){.name = HET_ACT_MIN,
                                    .type = HET_ATTR_FLOAT, .f = lo};
  attrs[conv->n_attrs + 1] = (het_attr){.name = HET_ACT_MAX,
                                        .type = HET_ATTR_FLOAT, .f = hi};
  conv->attrs = attrs;
  conv->n_attrs += 2;
  het_opt_absorb_next(o, c, n);
  return HET_OK;
}

het_status het_opt_fuse_activations(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    float lo, hi;
    if (o->dead[n] || !het_opt_act_bounds(g, &g->nodes[n], &lo, &hi))
      continue;
    int c = het_opt_act_conv(o, &g->nodes[n]);
    if (c < 0)
      continue;
    HET_TRY(het_opt_act_apply(o, c, n, lo, hi));
    if (o->stats)
      o->stats->activations_fused++;
  }
  return HET_OK;
}
