/* opt_batchnorm.c — inference BatchNormalization folded into the Conv (or
 * ungrouped ConvTranspose, whose weight is [C_in, M, k...]) that feeds it:
 * W'[.., m, ..] = W[.., m, ..] * s[m], B'[m] = (B[m] - mean[m]) * s[m] +
 * beta[m] with s = gamma / sqrt(var + epsilon), computed in double
 * (float32 only).
 * Invariant: the Conv then writes the BatchNormalization's output value;
 * the original weights are left untouched (new initializers are added).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "optimizer/opt_internal.h"

/* A float32 constant of shape [m]; NULL otherwise. */
static const het_tensor *het_opt_vec(const het_graph *g, int v, int64_t m) {
  if (!het_opt_is_constant(g, v))
    return NULL;
  const het_tensor *t = g->values[v].initializer;
  if (t->dtype != HET_DTYPE_FLOAT32 || t->rank != 1 || t->dims[0] != m)
    return NULL;
  return t;
}

/* The Conv or ungrouped ConvTranspose node feeding BatchNormalization bn,
 * when folding is possible; -1 otherwise. */
static int het_opt_bn_conv(const het_opt *o, const het_node *bn) {
  const het_graph *g = o->g;
  if (*bn->domain || strcmp(bn->op_type, "BatchNormalization") != 0 ||
      bn->n_inputs != 5 || bn->n_outputs < 1 || bn->outputs[0] < 0)
    return -1;
  if (het_node_attr_int(bn, "training_mode", 0) != 0 ||
      het_node_attr_int(bn, "spatial", 1) != 1)
    return -1;
  for (int i = 1; i < bn->n_outputs; i++)
    if (bn->outputs[i] >= 0 && het_opt_uses(o, bn->outputs[i]) > 0)
      return -1;
  int x = bn->inputs[0];
  if (x < 0 || het_opt_uses(o, x) != 1 || g->values[x].producer < 0)
    return -1;
  int c = g->values[x].producer;
  const het_node *conv = &g->nodes[c];
  bool t = !*conv->domain && strcmp(conv->op_type, "ConvTranspose") == 0;
  if (o->dead[c] || *conv->domain ||
      (strcmp(conv->op_type, "Conv") != 0 && !t) || conv->n_outputs != 1 ||
      conv->n_inputs < 2 || (t && het_node_attr_int(conv, "group", 1) != 1))
    return -1;
  int w = conv->inputs[1];
  if (!het_opt_is_constant(g, w))
    return -1;
  const het_tensor *wt = g->values[w].initializer;
  if (wt->dtype != HET_DTYPE_FLOAT32 || wt->rank < 3)
    return -1;
  int64_t m = wt->dims[t ? 1 : 0];
  int b = het_node_input(conv, 2);
  if (b >= 0 && !het_opt_vec(g, b, m))
    return -1;
  for (int i = 1; i < 5; i++)
    if (!het_opt_vec(g, bn->inputs[i], m))
      return -1;
  return c;
}

/* New weight and bias tensors for conv c followed by bn.  Caller owns. */
static het_status het_opt_bn_weights(const het_graph *g, const het_node *conv,
                                     const het_node *bn, het_tensor **w_out,
                                     het_tensor **b_out) {
  const het_tensor *w = g->values[conv->inputs[1]].initializer;
  int b = het_node_input(conv, 2);
  const float *bias = b >= 0 ? g->values[b].initializer->data : NULL;
  const float *gamma = g->values[bn->inputs[1]].initializer->data;
  const float *beta = g->values[bn->inputs[2]].initializer->data;
  const float *mean = g->values[bn->inputs[3]].initializer->data;
  const float *var = g->values[bn->inputs[4]].initializer->data;
  double eps = het_node_attr_float(bn, "epsilon", 1e-5f);
  /* Conv: W[m][per]; ConvTranspose: W[outer][m][per] */
  bool t = strcmp(conv->op_type, "ConvTranspose") == 0;
  int64_t m = w->dims[t ? 1 : 0], outer = t ? w->dims[0] : 1;
  int64_t per = m && outer ? het_tensor_count(w) / (m * outer) : 0;
  HET_TRY(het_tensor_create_empty(HET_DTYPE_FLOAT32, w->dims, w->rank, w_out));
  het_status st = het_tensor_create_empty(HET_DTYPE_FLOAT32, &m, 1, b_out);
  if (st != HET_OK) {
    het_tensor_destroy(*w_out);
    return st;
  }
  const float *src = w->data;
  float *dw = (*w_out)->data, *db = (*b_out)->data;
  for (int64_t c = 0; c < m; c++) {
    double s = (double)gamma[c] / sqrt((double)var[c] + eps);
    for (int64_t i = 0; i < outer; i++)
      for (int64_t k = 0; k < per; k++) {
        int64_t at = (i * m + c) * per + k;
        dw[at] = (float)((double)src[at] * s);
      }
    double b0 = bias ? (double)bias[c] : 0.0;
    db[c] = (float)((b0 - (double)mean[c]) * s + (double)beta[c]);
  }
  return HET_OK;
}

/* Rewires conv c to use the new weights and write bn's output. */
static het_status het_opt_bn_apply(het_opt *o, int c, int n) {
  het_graph *g = o->g;
  het_tensor *wt, *bt;
  HET_TRY(het_opt_bn_weights(g, &g->nodes[c], &g->nodes[n], &wt, &bt));
  char base[200];
  snprintf(base, sizeof base, "%.180s_bnfold", g->nodes[c].name);
  int w, b;
  het_status st = het_graph_add_constant(g, base, wt, &w);
  if (st != HET_OK) {
    het_tensor_destroy(bt);
    return st;
  }
  snprintf(base, sizeof base, "%.180s_bnfold_bias", g->nodes[c].name);
  HET_TRY(het_graph_add_constant(g, base, bt, &b));
  het_node *conv = &g->nodes[c];
  if (conv->n_inputs < 3) {
    int *in = het_arena_alloc(&g->arena, 3 * sizeof *in);
    if (!in)
      return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
    in[0] = conv->inputs[0];
    conv->inputs = in;
    conv->n_inputs = 3;
  } else if (conv->inputs[2] >= 0 && conv->inputs[2] < o->n_values) {
    o->uses[conv->inputs[2]]--; /* values added this round are untracked */
  }
  if (conv->inputs[1] < o->n_values)
    o->uses[conv->inputs[1]]--;
  conv->inputs[1] = w;
  conv->inputs[2] = b;
  het_opt_absorb_next(o, c, n);
  return HET_OK;
}

het_status het_opt_fuse_batchnorm(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (o->dead[n])
      continue;
    int c = het_opt_bn_conv(o, &g->nodes[n]);
    if (c < 0)
      continue;
    HET_TRY(het_opt_bn_apply(o, c, n));
    if (o->stats)
      o->stats->batchnorms_fused++;
  }
  return HET_OK;
}
