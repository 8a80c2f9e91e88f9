/* linalg_norm.c — BatchNormalization on the CPU: inference (per-channel,
 * or per-activation for opset < 9 spatial=0) as y = x * a + b with folded
 * a/b, and opset 14+ training_mode=1 with batch statistics and the
 * running_mean/running_var outputs exactly as the spec defines them.
 */
#include <math.h>
#include <stdlib.h>

#include "core/dtype.h"
#include "kernels/linalg_kern.h"

/* y[n, c, e] = x * a[c or c*sz+e] + b[...]; per == 1 or sz. */
static void bn_apply(const het_tensor *x, het_tensor *y, const double *a,
                     const double *b, int64_t nb, int64_t c, int64_t sz,
                     int64_t per) {
  if (x->dtype == HET_DTYPE_FLOAT32) {
    const float *xs = x->data;
    float *ys = y->data;
    for (int64_t n = 0; n < nb; n++)
      for (int64_t ch = 0; ch < c; ch++) {
        int64_t base = (n * c + ch) * sz;
        for (int64_t e = 0; e < sz; e++) {
          int64_t p = per == 1 ? ch : ch * sz + e;
          ys[base + e] = (float)(xs[base + e] * a[p] + b[p]);
        }
      }
    return;
  }
  for (int64_t n = 0; n < nb; n++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t e = 0; e < sz; e++) {
        int64_t i = (n * c + ch) * sz + e, p = per == 1 ? ch : ch * sz + e;
        het_dtype_store_f64(y->dtype, y->data, i,
                            het_dtype_load_f64(x->dtype, x->data, i) * a[p] +
                                b[p]);
      }
}

/* Batch mean and population variance per channel. */
static void bn_batch_stats(const het_tensor *x, int64_t nb, int64_t c,
                           int64_t sz, double *mean, double *var) {
  double cnt = (double)(nb * sz);
  for (int64_t ch = 0; ch < c; ch++) {
    double s = 0, s2 = 0;
    for (int64_t n = 0; n < nb; n++)
      for (int64_t e = 0; e < sz; e++)
        s += het_dtype_load_f64(x->dtype, x->data, (n * c + ch) * sz + e);
    mean[ch] = cnt > 0 ? s / cnt : 0;
    for (int64_t n = 0; n < nb; n++)
      for (int64_t e = 0; e < sz; e++) {
        double d =
            het_dtype_load_f64(x->dtype, x->data, (n * c + ch) * sz + e) -
            mean[ch];
        s2 += d * d;
      }
    var[ch] = cnt > 0 ? s2 / cnt : 0;
  }
}

static het_status bn_training(het_kernel_ctx *ctx, int64_t nb, int64_t c,
                              int64_t sz, double *a, double *b) {
  const het_tensor *x = ctx->inputs[0];
  double eps = het_node_attr_float(ctx->node, "epsilon", 1e-5f);
  double mom = het_node_attr_float(ctx->node, "momentum", 0.9f);
  double *mean = a + c, *var = b + c;
  bn_batch_stats(x, nb, c, sz, mean, var);
  for (int64_t ch = 0; ch < c; ch++) {
    double s = het_dtype_load_f64(ctx->inputs[1]->dtype, ctx->inputs[1]->data,
                                  ch);
    double bias = het_dtype_load_f64(ctx->inputs[2]->dtype,
                                     ctx->inputs[2]->data, ch);
    a[ch] = s / sqrt(var[ch] + eps);
    b[ch] = bias - mean[ch] * a[ch];
    for (int o = 1; o <= 2 && o < ctx->n_outputs; o++) {
      het_tensor *t = ctx->outputs[o];
      const het_tensor *run = ctx->inputs[2 + o];
      if (!t)
        continue;
      double cur = o == 1 ? mean[ch] : var[ch];
      double prev = het_dtype_load_f64(run->dtype, run->data, ch);
      het_dtype_store_f64(t->dtype, t->data, ch,
                          prev * mom + cur * (1.0 - mom));
    }
  }
  bn_apply(x, ctx->outputs[0], a, b, nb, c, sz, 1);
  return HET_OK;
}

het_status het_lk_batch_norm_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  if (x->rank < 2)
    return het_lk_fail(ctx, HET_ERR_SHAPE, "input rank %d < 2", x->rank);
  int64_t nb = x->dims[0], c = x->dims[1];
  int64_t sz = het_dims_count(x->dims + 2, x->rank - 2);
  int64_t per = het_tensor_count(ctx->inputs[1]) == c ? 1 : sz;
  for (int i = 1; i < 5; i++)
    if (het_tensor_count(ctx->inputs[i]) != c * per)
      return het_lk_fail(ctx, HET_ERR_SHAPE,
                         "input %d has %lld values, expected %lld", i,
                         (long long)het_tensor_count(ctx->inputs[i]),
                         (long long)(c * per));
  bool training = ctx->opset >= 14 &&
                  het_node_attr_int(ctx->node, "training_mode", 0) != 0;
  double *a;
  HET_TRY(het_lk_alloc(ctx, sizeof(double) * 4 * (size_t)(c * per + 1),
                       (void **)&a));
  double *b = a + 2 * (c * per + 1);
  het_status st = HET_OK;
  if (training && per == 1) {
    st = bn_training(ctx, nb, c, sz, a, b);
    free(a);
    return st;
  }
  double eps = het_node_attr_float(ctx->node, "epsilon", 1e-5f);
  for (int64_t i = 0; i < c * per; i++) {
    double s = het_dtype_load_f64(ctx->inputs[1]->dtype, ctx->inputs[1]->data, i);
    double bi = het_dtype_load_f64(ctx->inputs[2]->dtype, ctx->inputs[2]->data, i);
    double m = het_dtype_load_f64(ctx->inputs[3]->dtype, ctx->inputs[3]->data, i);
    double v = het_dtype_load_f64(ctx->inputs[4]->dtype, ctx->inputs[4]->data, i);
    a[i] = s / sqrt(v + eps);
    b[i] = bi - m * a[i];
  }
  bn_apply(x, ctx->outputs[0], a, b, nb, c, sz, per);
  free(a);
  return st;
}
