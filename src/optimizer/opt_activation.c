/* opt_activation.c — a float32 Conv (or hetrt.FusedConv, opt_conv_add.c,
 * or ConvTranspose; float16 Convs for Relu and Clip)
 * whose only reader is an activation takes it over and writes the
 * activation's output value; the activation node goes.  Relu and Clip
 * with constant bounds become the attributes hetrt_act_min /
 * hetrt_act_max (the kernel clamps its output to them); LeakyRelu,
 * HardSigmoid, HardSwish, Sigmoid and Tanh become hetrt_act (the op name)
 * with hetrt_act_alpha / hetrt_act_beta.  Invariant: only the CPU kernels
 * read these attributes, and every Conv path of theirs applies them (see
 * linalg_conv.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"

#define HET_ACT_MIN "hetrt_act_min"
#define HET_ACT_MAX "hetrt_act_max"

/* The activation a Conv takes over: a clamp, or another op by name. */
typedef struct het_opt_act {
  const char *op; /* NULL: clamp to [lo, hi] */
  float lo, hi, alpha, beta;
} het_opt_act;

/* A constant float32 (or float16) scalar input i of node (present);
 * false otherwise. */
static bool het_opt_scalar(const het_graph *g, const het_node *n, int i,
                           float *out) {
  int v = het_node_input(n, i);
  if (v < 0)
    return true; /* omitted: keep the default */
  if (!het_opt_is_constant(g, v))
    return false;
  const het_tensor *t = g->values[v].initializer;
  if (het_tensor_count(t) != 1)
    return false;
  if (t->dtype == HET_DTYPE_FLOAT16) /* a float16 model's Clip bounds */
    *out = het_f16_to_f32(((const uint16_t *)t->data)[0]);
  else if (t->dtype == HET_DTYPE_FLOAT32)
    *out = ((const float *)t->data)[0];
  else
    return false;
  return true;
}

/* The activation node act computes; false for anything else. */
static bool het_opt_act_parse(const het_graph *g, const het_node *act,
                              het_opt_act *a) {
  if (*act->domain || act->n_outputs != 1 || act->outputs[0] < 0)
    return false;
  *a = (het_opt_act){NULL, -INFINITY, INFINITY, 0.0f, 0.0f};
  if ((a->op = het_conv_act_name(act->op_type))) {
    het_node_act_params(act, &a->alpha, &a->beta);
    return true;
  }
  if (strcmp(act->op_type, "Relu") == 0) {
    a->lo = 0.0f;
    return true;
  }
  if (strcmp(act->op_type, "Clip") != 0)
    return false;
  if (act->opset < 11) {
    a->lo = het_node_attr_float(act, "min", -FLT_MAX);
    a->hi = het_node_attr_float(act, "max", FLT_MAX);
    return true;
  }
  return het_opt_scalar(g, act, 1, &a->lo) && het_opt_scalar(g, act, 2, &a->hi);
}

/* The Conv/FusedConv/ConvTranspose node whose output only act (parsed as
 * a) reads, or -1.  float32; float16 for clamps only, which commute with
 * rounding to float16, so the fused node's output is the unfused one's
 * bit for bit. */
static int het_opt_act_conv(const het_opt *o, const het_node *act,
                            const het_opt_act *a) {
  const het_graph *g = o->g;
  int x = het_node_input(act, 0);
  het_dtype dt = x >= 0 ? g->values[x].dtype : HET_DTYPE_UNDEFINED;
  if (x < 0 || het_opt_uses(o, x) != 1 || g->values[x].producer < 0 ||
      !(dt == HET_DTYPE_FLOAT32 || (dt == HET_DTYPE_FLOAT16 && !a->op)))
    return -1;
  int c = g->values[x].producer;
  const het_node *conv = &g->nodes[c];
  bool is_conv = !*conv->domain && strcmp(conv->op_type, "Conv") == 0;
  bool is_fused = strcmp(conv->domain, "hetrt") == 0 &&
                  strcmp(conv->op_type, "FusedConv") == 0;
  bool is_convt = !*conv->domain &&
                  strcmp(conv->op_type, "ConvTranspose") == 0 &&
                  dt == HET_DTYPE_FLOAT32;
  if (o->dead[c] || !(is_conv || is_fused || is_convt) ||
      conv->n_outputs != 1 ||
      het_node_find_attr(conv, HET_ACT_MIN) ||
      het_node_find_attr(conv, "hetrt_act"))
    return -1;
  return c;
}

static het_status het_opt_act_apply(het_opt *o, int c, int n,
                                    const het_opt_act *a) {
  het_graph *g = o->g;
  het_node *conv = &g->nodes[c];
  het_attr *attrs =
      het_arena_calloc(&g->arena, (size_t)conv->n_attrs + 3, sizeof *attrs);
  if (!attrs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  if (conv->n_attrs)
    memcpy(attrs, conv->attrs, (size_t)conv->n_attrs * sizeof *attrs);
  het_attr *at = attrs + conv->n_attrs;
  if (a->op) {
    at[0] = (het_attr){.name = "hetrt_act",
                       .type = HET_ATTR_STRING,
                       .s = a->op,
                       .s_len = strlen(a->op)};
    at[1] = (het_attr){
        .name = "hetrt_act_alpha", .type = HET_ATTR_FLOAT, .f = a->alpha};
    at[2] = (het_attr){
        .name = "hetrt_act_beta", .type = HET_ATTR_FLOAT, .f = a->beta};
  } else {
    at[0] = (het_attr){.name = HET_ACT_MIN, .type = HET_ATTR_FLOAT, .f = a->lo};
    at[1] = (het_attr){.name = HET_ACT_MAX, .type = HET_ATTR_FLOAT, .f = a->hi};
  }
  conv->attrs = attrs;
  conv->n_attrs += a->op ? 3 : 2;
  het_opt_absorb_next(o, c, n);
  return HET_OK;
}

het_status het_opt_fuse_activations(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    het_opt_act a;
    if (o->dead[n] || !het_opt_act_parse(g, &g->nodes[n], &a))
      continue;
    int c = het_opt_act_conv(o, &g->nodes[n], &a);
    if (c < 0)
      continue;
    HET_TRY(het_opt_act_apply(o, c, n, &a));
    if (o->stats)
      o->stats->activations_fused++;
  }
  return HET_OK;
}
