/* opt_conv_add.c — level all: a float32 Conv whose only reader is an Add
 * of a same-shaped value Z (a residual connection) becomes
 * hetrt.FusedConv(X, W, B, Z) writing the Add's output; a Relu/Clip after
 * it is then taken over by opt_activation.c like for a plain Conv, so the
 * kernel computes act(conv(X) + B + Z) in one pass (oneDNN: binary-add
 * and eltwise post-ops).  Only Convs with constant weights that are not
 * depthwise are fused: those are the ones oneDNN runs.
 */
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"

/* A plain float32 Conv with constant, non-depthwise weights and no fused
 * activation, whose output v only one Add reads. */
static bool fusable_conv(const het_opt *o, int v) {
  const het_graph *g = o->g;
  if (v < 0 || het_opt_uses(o, v) != 1 || g->values[v].producer < 0 ||
      g->values[v].dtype != HET_DTYPE_FLOAT32)
    return false;
  int c = g->values[v].producer;
  const het_node *conv = &g->nodes[c];
  if (o->dead[c] || *conv->domain || strcmp(conv->op_type, "Conv") != 0 ||
      conv->n_outputs != 1 || het_node_find_attr(conv, "hetrt_act_min") ||
      het_node_find_attr(conv, "hetrt_act"))
    return false;
  int w = het_node_input(conv, 1), b = het_node_input(conv, 2);
  if (w < 0 || !het_opt_is_constant(g, w) ||
      (b >= 0 && !het_opt_is_constant(g, b)))
    return false;
  const het_tensor *wt = g->values[w].initializer;
  int64_t group = het_node_attr_int(conv, "group", 1);
  return wt->rank >= 3 && !(group > 1 && wt->dims[1] == 1);
}

/* Rewrites Conv c (output read only by Add n) into FusedConv with
 * residual z, writing n's output. */
static het_status fuse(het_opt *o, int c, int n, int z) {
  het_graph *g = o->g;
  het_node *conv = &g->nodes[c];
  int *inputs = het_arena_calloc(&g->arena, 4, sizeof *inputs);
  if (!inputs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < 3; i++)
    inputs[i] = het_node_input(conv, i);
  inputs[3] = z;
  het_opt_absorb_next(o, c, n); /* releases the Add's reads, z's too */
  conv->inputs = inputs;
  conv->n_inputs = 4;
  conv->op_type = "FusedConv";
  conv->domain = "hetrt";
  conv->opset = 1;
  if (z >= 0 && z < o->n_values)
    o->uses[z]++;
  return HET_OK;
}

het_status het_opt_fuse_conv_add(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *add = &g->nodes[n];
    if (o->dead[n] || *add->domain || strcmp(add->op_type, "Add") != 0 ||
        add->n_inputs != 2 || add->n_outputs != 1 || add->outputs[0] < 0)
      continue;
    int y = add->outputs[0];
    for (int side = 0; side < 2; side++) {
      int v = add->inputs[side], z = add->inputs[1 - side];
      if (v == z || z < 0 || !fusable_conv(o, v) ||
          g->values[z].dtype != HET_DTYPE_FLOAT32 ||
          !het_shape_same(&g->values[v].shape, &g->values[y].shape) ||
          !het_shape_same(&g->values[z].shape, &g->values[y].shape))
        continue;
      HET_TRY(fuse(o, g->values[v].producer, n, z));
      if (o->stats)
        o->stats->conv_adds_fused++;
      break;
    }
  }
  return HET_OK;
}
