/* opt_conv_pool.c — level all: a float32 Conv (constant weights, explicit
 * pads, no dilation; its activation already taken over by
 * opt_activation.c) whose only reader is a 2-D MaxPool (explicit or VALID
 * pads, no dilation, no Indices output) becomes hetrt.FusedConvPool(X, W,
 * B) writing the MaxPool's output, the pool's kernel, strides, pads and
 * ceil_mode as hetrt_pool_* attributes: the stem of ResNet, SqueezeNet
 * and many detectors (Conv -> Relu -> MaxPool).  The CPU kernel runs the
 * pair band by band where the Conv's output would not stay in the cache
 * (linalg_dnnl.c); every other path runs the Conv, then the MaxPool, with
 * the same numbers.  So only pairs whose Conv output (one image) may
 * outgrow an L2 cache are fused: CONV_POOL_MIN_BYTES or more, or C, H or
 * W unknown; smaller ones gain nothing and stay two nodes.
 */
#include <string.h>

#include "core/status.h"
#include "optimizer/opt_internal.h"

#define CONV_POOL_MIN_BYTES (512 * 1024)

/* Whether one image of float32 value v (rank 4) may take
 * CONV_POOL_MIN_BYTES: it does, or a dim of it is unknown. */
static bool large_image(const het_graph *g, int v) {
  const het_shape *s = &g->values[v].shape;
  if (s->rank != 4)
    return false;
  int64_t bytes = (int64_t)sizeof(float);
  for (int i = 1; i < 4; i++) {
    if (s->dims[i].value < 0)
      return true;
    bytes *= s->dims[i].value;
  }
  return bytes >= CONV_POOL_MIN_BYTES;
}

/* MaxPool node p's pads (begin, begin, end, end) when it can join a Conv:
 * 2-D, explicit or VALID pads, unit dilations, no Indices output read. */
static bool joinable_pool(const het_opt *o, const het_node *p,
                          int64_t pads[4]) {
  const char *ap = het_node_attr_string(p, "auto_pad");
  size_t nk = 0, ns = 0, np = 0;
  const int64_t *k = het_node_attr_ints(p, "kernel_shape", &nk);
  het_node_attr_ints(p, "strides", &ns);
  const int64_t *pd = het_node_attr_ints(p, "pads", &np);
  bool valid = ap && strcmp(ap, "VALID") == 0;
  if (*p->domain || strcmp(p->op_type, "MaxPool") != 0 || p->n_inputs != 1 ||
      p->n_outputs < 1 || p->outputs[0] < 0 || !k || nk != 2 ||
      (ns != 0 && ns != 2) || (np != 0 && np != 4) ||
      !(het_opt_explicit_pads(p) || valid) ||
      !het_node_attr_ints_all(p, "dilations", 1) ||
      (p->n_outputs > 1 && p->outputs[1] >= 0 &&
       het_opt_uses(o, p->outputs[1]) > 0))
    return false;
  for (int i = 0; i < 4; i++)
    pads[i] = pd && np == 4 && !valid ? pd[i] : 0;
  return true;
}

/* Rewrites Conv c and MaxPool p (c's only reader) into one
 * hetrt.FusedConvPool node in c's place. */
static het_status fuse(het_opt *o, int c, int p, const int64_t pads[4]) {
  het_graph *g = o->g;
  const het_node *pn = &g->nodes[p];
  size_t nk = 0, ns = 0;
  const int64_t *k = het_node_attr_ints(pn, "kernel_shape", &nk);
  const int64_t *st = het_node_attr_ints(pn, "strides", &ns);
  het_node *cn = &g->nodes[c];
  int64_t *ints = het_arena_calloc(&g->arena, 8, sizeof *ints);
  het_attr *attrs =
      het_arena_calloc(&g->arena, (size_t)cn->n_attrs + 4, sizeof *attrs);
  if (!ints || !attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < 2; i++) {
    ints[i] = k[i];
    ints[2 + i] = st && ns == 2 ? st[i] : 1;
  }
  memcpy(ints + 4, pads, 4 * sizeof *ints);
  memcpy(attrs, cn->attrs, (size_t)cn->n_attrs * sizeof *attrs);
  int na = cn->n_attrs;
  attrs[na++] = (het_attr){.name = "hetrt_pool_kernel_shape",
                           .type = HET_ATTR_INTS, .n = 2, .ints = ints};
  attrs[na++] = (het_attr){.name = "hetrt_pool_strides",
                           .type = HET_ATTR_INTS, .n = 2, .ints = ints + 2};
  attrs[na++] = (het_attr){.name = "hetrt_pool_pads", .type = HET_ATTR_INTS,
                           .n = 4, .ints = ints + 4};
  attrs[na++] = (het_attr){.name = "hetrt_pool_ceil_mode",
                           .type = HET_ATTR_INT,
                           .i = het_node_attr_int(pn, "ceil_mode", 0)};
  het_opt_absorb_next(o, c, p); /* releases p's read */
  cn = &g->nodes[c];
  cn->attrs = attrs;
  cn->n_attrs = na;
  cn->op_type = "FusedConvPool";
  cn->domain = "hetrt";
  cn->opset = 1;
  return HET_OK;
}

het_status het_opt_fuse_conv_pool(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int p = g->order[k];
    int64_t pads[4];
    if (o->dead[p] || !joinable_pool(o, &g->nodes[p], pads))
      continue;
    int v = het_node_input(&g->nodes[p], 0);
    if (v < 0 || het_opt_uses(o, v) != 1 || g->values[v].producer < 0 ||
        !large_image(g, v) || !het_opt_plain_conv(o, g->values[v].producer))
      continue;
    HET_TRY(fuse(o, g->values[v].producer, p, pads));
    if (o->stats)
      o->stats->conv_pools_fused++;
  }
  return HET_OK;
}
