/* reduce_softmax.c — CPU kernels for Softmax, LogSoftmax, Hardmax and the
 * two losses (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss).
 * Opset < 13 softmaxes coerce the input to 2-D at axis (default 1): the
 * "row" is everything from axis on; opset 13 normalises along one axis
 * (default -1).  Softmax subtracts the row maximum before exponentiating.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/reduce_common.h"
#include "kernels/parallel.h"

/* The [outer, n, inner] view a softmax-like node normalises over. */
static het_status het_softmax_view(const het_kernel_ctx *ctx,
                                   const het_tensor *x, int64_t *O,
                                   int64_t *N, int64_t *I) {
  int64_t dflt = ctx->opset < 13 ? 1 : -1;
  int axis;
  if (x->rank == 0) { /* a scalar is one row of one element */
    *O = *N = *I = 1;
    return HET_OK;
  }
  HET_TRY(het_red_axis(ctx, het_node_attr_int(ctx->node, "axis", dflt),
                       x->rank, &axis));
  het_red_split(x, axis, O, N, I);
  if (ctx->opset < 13) {
    *N *= *I;
    *I = 1;
  }
  return HET_OK;
}

/* y[n*I] = softmax / log-softmax of x[n*I] over n in [0, N). */
static void het_softmax_row(const double *x, double *y, int64_t N, int64_t I,
                            bool log_out) {
  double mx = -INFINITY;
  for (int64_t n = 0; n < N; n++)
    mx = x[n * I] > mx ? x[n * I] : mx;
  double sum = 0;
  for (int64_t n = 0; n < N; n++) {
    double e = exp(x[n * I] - mx);
    y[n * I] = e;
    sum += e;
  }
  if (log_out) {
    double ls = log(sum);
    for (int64_t n = 0; n < N; n++)
      y[n * I] = x[n * I] - mx - ls;
  } else {
    double inv = 1.0 / sum;
    for (int64_t n = 0; n < N; n++)
      y[n * I] *= inv;
  }
}

/* Rows [u0, u1) of the [O, N, I] view: row u is (u / I, u % I). */
typedef struct het_softmax_job {
  const double *x;
  double *y;
  int64_t N, I;
  bool log_out;
} het_softmax_job;

static void het_softmax_units(void *arg, int64_t u0, int64_t u1) {
  const het_softmax_job *j = arg;
  for (int64_t u = u0; u < u1; u++) {
    int64_t o = u / j->I, i = u % j->I;
    het_softmax_row(j->x + o * j->N * j->I + i, j->y + o * j->N * j->I + i,
                    j->N, j->I, j->log_out);
  }
}

static het_status het_softmax_apply(const het_kernel_ctx *ctx,
                                    const het_tensor *x, het_tensor *y,
                                    int64_t O, int64_t N, int64_t I,
                                    bool log_out) {
  het_red_buf in, out;
  HET_TRY(het_red_load(ctx, x, &in));
  het_status st = het_red_out(ctx, y, &out);
  if (st) {
    het_red_release(&in);
    return st;
  }
  het_softmax_job j = {.x = in.data, .y = out.data, .N = N, .I = I,
                       .log_out = log_out};
  het_parallel_for(ctx->par, O * I, N > 0 ? 8192 / N + 1 : O * I,
                              het_softmax_units, &j);
  het_red_release(&in);
  het_red_finish(y, &out);
  return HET_OK;
}

het_status het_kernel_softmax_run(het_kernel_ctx *ctx) {
  int64_t O, N, I;
  HET_TRY(het_softmax_view(ctx, ctx->inputs[0], &O, &N, &I));
  bool log_out = strcmp(ctx->node->op_type, "LogSoftmax") == 0;
  if (I == 1 && ctx->inputs[0]->dtype == HET_DTYPE_FLOAT32 &&
      ctx->outputs[0]->dtype == HET_DTYPE_FLOAT32) {
    het_softmax_f32_rows(ctx->par, ctx->inputs[0]->data, ctx->outputs[0]->data, O, N,
                         log_out);
    return HET_OK;
  }
  return het_softmax_apply(ctx, ctx->inputs[0], ctx->outputs[0], O, N, I,
                           log_out);
}

het_status het_kernel_hardmax_run(het_kernel_ctx *ctx) {
  int64_t O, N, I;
  HET_TRY(het_softmax_view(ctx, ctx->inputs[0], &O, &N, &I));
  het_red_buf in, out;
  HET_TRY(het_red_load(ctx, ctx->inputs[0], &in));
  het_status st = het_red_out(ctx, ctx->outputs[0], &out);
  if (st) {
    het_red_release(&in);
    return st;
  }
  for (int64_t o = 0; o < O; o++)
    for (int64_t i = 0; i < I; i++) {
      const double *x = in.data + o * N * I + i;
      double *y = out.data + o * N * I + i;
      int64_t best = 0;
      for (int64_t n = 0; n < N; n++) {
        if (x[n * I] > x[best * I])
          best = n;
        y[n * I] = 0;
      }
      if (N > 0)
        y[best * I] = 1;
    }
  het_red_release(&in);
  het_red_finish(ctx->outputs[0], &out);
  return HET_OK;
}

/* Loss from log-probabilities lp (N, C, D) and target (N, D): fills loss
 * (N*D values for reduction none, else one value). */
static het_status het_loss_reduce(het_kernel_ctx *ctx, const double *lp,
                                  const het_tensor *x, het_tensor *yt) {
  const het_tensor *tgt = ctx->inputs[1];
  const het_tensor *wt = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const het_attr *ia = het_node_find_attr(ctx->node, "ignore_index");
  const char *red = het_node_attr_string(ctx->node, "reduction");
  int mode = !red || strcmp(red, "mean") == 0 ? 2 : strcmp(red, "sum") == 0;
  int64_t Nb = x->dims[0], C = x->dims[1];
  int64_t D = Nb > 0 && C > 0 ? het_tensor_count(x) / (Nb * C) : 0;
  het_red_buf w = {0}, out;
  if (wt)
    HET_TRY(het_red_load(ctx, wt, &w));
  het_status st = het_red_out(ctx, yt, &out);
  if (st) {
    het_red_release(&w);
    return st;
  }
  double total = 0, wsum = 0;
  for (int64_t n = 0; n < Nb; n++)
    for (int64_t d = 0; d < D; d++) {
      int64_t t = het_tensor_get_i64(tgt, n * D + d), k = n * D + d;
      double l = 0, wv = 0;
      if (!ia || t != ia->i) {
        if (t < 0 || t >= C) {
          het_red_release(&w), het_red_release(&out);
          return het_error(HET_ERR_INVALID_ARGUMENT,
                           "node '%s' (%s): target %lld out of range [0, %lld)",
                           ctx->node->name, ctx->node->op_type, (long long)t,
                           (long long)C);
        }
        wv = wt ? w.data[t] : 1.0;
        l = -lp[(n * C + t) * D + d] * wv;
      }
      if (mode == 0)
        out.data[k] = l;
      total += l;
      wsum += wv;
    }
  if (mode != 0)
    out.data[0] = mode == 2 ? total / wsum : total;
  het_red_release(&w);
  het_red_finish(yt, &out);
  return HET_OK;
}

het_status het_kernel_nllloss_run(het_kernel_ctx *ctx) {
  het_red_buf in;
  HET_TRY(het_red_load(ctx, ctx->inputs[0], &in));
  het_status st = het_loss_reduce(ctx, in.data, ctx->inputs[0],
                                  ctx->outputs[0]);
  het_red_release(&in);
  return st;
}

het_status het_kernel_sceloss_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  int64_t Nb = x->dims[0], C = x->dims[1];
  int64_t D = Nb > 0 && C > 0 ? het_tensor_count(x) / (Nb * C) : 0;
  het_tensor *lp_out = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  het_red_buf in, lp = {0};
  HET_TRY(het_red_load(ctx, x, &in));
  het_status st = lp_out ? het_red_out(ctx, lp_out, &lp)
                         : het_red_scratch(ctx, het_tensor_count(x), &lp.data);
  lp.owned = lp.owned || !lp_out;
  if (st) {
    het_red_release(&in);
    return st;
  }
  for (int64_t o = 0; o < Nb; o++)
    for (int64_t i = 0; i < D; i++)
      het_softmax_row(in.data + o * C * D + i, lp.data + o * C * D + i, C, D,
                      true);
  het_red_release(&in);
  st = het_loss_reduce(ctx, lp.data, x, ctx->outputs[0]);
  if (lp_out && st == HET_OK)
    het_red_finish(lp_out, &lp);
  else
    het_red_release(&lp);
  return st;
}
