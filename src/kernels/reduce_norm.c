/* reduce_norm.c — CPU kernels for LayerNormalization (axis, epsilon,
 * optional Mean/InvStdDev outputs), InstanceNormalization,
 * MeanVarianceNormalization and LRN.  Statistics are computed in double
 * with the two-pass (mean, then centred variance) method.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/reduce_common.h"
#include "kernels/parallel.h"

/* map[j] = index into s for element j of a tensor of shape dims (rank),
 * with s broadcast numpy-style (right-aligned).  False when s does not
 * broadcast to dims. */
static bool het_norm_bcast_map(const het_tensor *s, const int64_t *dims,
                               int rank, int64_t *map) {
  if (s->rank > rank)
    return false;
  int off = rank - s->rank;
  for (int d = 0; d < s->rank; d++)
    if (s->dims[d] != 1 && s->dims[d] != dims[off + d])
      return false;
  int64_t total = het_dims_count(dims, rank), idx[HET_MAX_RANK] = {0};
  for (int64_t j = 0; j < total; j++) {
    int64_t k = 0;
    for (int d = 0; d < s->rank; d++)
      k = k * s->dims[d] + (s->dims[d] == 1 ? 0 : idx[off + d]);
    map[j] = k;
    for (int d = rank - 1; d >= 0; d--) {
      if (++idx[d] < dims[d])
        break;
      idx[d] = 0;
    }
  }
  return true;
}

/* Normalises rows of length N in place semantics: y = (x - mean) * inv. */
static void het_norm_row(const double *x, double *y, int64_t N, double eps,
                         double *mean_out, double *inv_out) {
  double sum = 0;
  for (int64_t j = 0; j < N; j++)
    sum += x[j];
  double mean = N ? sum / (double)N : 0, var = 0;
  for (int64_t j = 0; j < N; j++)
    var += (x[j] - mean) * (x[j] - mean);
  var = N ? var / (double)N : 0;
  double inv = 1.0 / sqrt(var + eps);
  for (int64_t j = 0; j < N; j++)
    y[j] = (x[j] - mean) * inv;
  *mean_out = mean;
  *inv_out = inv;
}

typedef struct het_ln_bufs {
  het_red_buf x, y, s, b, m, v;
  int64_t *smap, *bmap;
} het_ln_bufs;

static void het_ln_release(het_ln_bufs *B) {
  het_red_release(&B->x), het_red_release(&B->y), het_red_release(&B->s);
  het_red_release(&B->b), het_red_release(&B->m), het_red_release(&B->v);
  free(B->smap), free(B->bmap);
}

/* Builds the Scale/B index maps; loads X, Scale, B and Y as doubles unless
 * f32 (the float32 path reads them directly). */
static het_status het_ln_load(het_kernel_ctx *ctx, int axis, int64_t N,
                              bool f32, het_ln_bufs *B) {
  const het_tensor *x = ctx->inputs[0];
  const het_tensor *sc = ctx->inputs[1];
  const het_tensor *bi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  B->smap = malloc((size_t)(N + 1) * sizeof *B->smap);
  B->bmap = malloc((size_t)(N + 1) * sizeof *B->bmap);
  if (!B->smap || !B->bmap)
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (%s): out of memory",
                     ctx->node->name, ctx->node->op_type);
  int nr = x->rank - axis;
  if (!het_norm_bcast_map(sc, x->dims + axis, nr, B->smap) ||
      (bi && !het_norm_bcast_map(bi, x->dims + axis, nr, B->bmap)))
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): Scale/B do not broadcast to the "
                     "normalized shape", ctx->node->name, ctx->node->op_type);
  if (!f32) {
    HET_TRY(het_red_load(ctx, x, &B->x));
    HET_TRY(het_red_load(ctx, sc, &B->s));
    if (bi)
      HET_TRY(het_red_load(ctx, bi, &B->b));
    HET_TRY(het_red_out(ctx, ctx->outputs[0], &B->y));
  }
  for (int o = 1; o < 3; o++) {
    het_tensor *t = o < ctx->n_outputs ? ctx->outputs[o] : NULL;
    if (t)
      HET_TRY(het_red_out(ctx, t, o == 1 ? &B->m : &B->v));
  }
  return HET_OK;
}

/* Rows of one LayerNormalization, split across the pool. */
typedef struct het_ln_job {
  const het_kernel_ctx *ctx;
  const het_ln_bufs *B;
  int64_t N;
  double eps;
  bool f32;
} het_ln_job;

static void het_ln_rows(void *arg, int64_t o0, int64_t o1) {
  const het_ln_job *j = arg;
  const het_ln_bufs *B = j->B;
  const het_tensor *x = j->ctx->inputs[0], *sc = j->ctx->inputs[1];
  const het_tensor *bi = j->ctx->n_inputs > 2 ? j->ctx->inputs[2] : NULL;
  int64_t N = j->N;
  for (int64_t o = o0; o < o1; o++) {
    double mean, inv;
    if (j->f32) {
      het_layernorm_f32_row(
          (const float *)x->data + o * N,
          (float *)j->ctx->outputs[0]->data + o * N, N, j->eps, sc->data,
          het_tensor_count(sc) == N ? NULL : B->smap, bi ? bi->data : NULL,
          bi && het_tensor_count(bi) == N ? NULL : B->bmap, &mean, &inv);
    } else {
      double *y = B->y.data + o * N;
      het_norm_row(B->x.data + o * N, y, N, j->eps, &mean, &inv);
      for (int64_t k = 0; k < N; k++)
        y[k] = y[k] * B->s.data[B->smap[k]] +
               (B->b.data ? B->b.data[B->bmap[k]] : 0);
    }
    if (B->m.data)
      B->m.data[o] = mean;
    if (B->v.data)
      B->v.data[o] = inv;
  }
}

het_status het_kernel_layernorm_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  int axis;
  HET_TRY(het_red_axis(ctx, het_node_attr_int(ctx->node, "axis", -1),
                       x->rank, &axis));
  double eps = het_node_attr_float(ctx->node, "epsilon", 1e-5f);
  int64_t O = 1, N = 1;
  for (int d = 0; d < x->rank; d++)
    *(d < axis ? &O : &N) *= x->dims[d];
  const het_tensor *sc = ctx->inputs[1];
  const het_tensor *bi = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  bool f32 = x->dtype == HET_DTYPE_FLOAT32 &&
             sc->dtype == HET_DTYPE_FLOAT32 &&
             (!bi || bi->dtype == HET_DTYPE_FLOAT32) &&
             ctx->outputs[0]->dtype == HET_DTYPE_FLOAT32;
  het_ln_bufs B = {0};
  het_status st = het_ln_load(ctx, axis, N, f32, &B);
  if (st) {
    het_ln_release(&B);
    return st;
  }
  het_ln_job job = {.ctx = ctx, .B = &B, .N = N, .eps = eps, .f32 = f32};
  het_parallel_for(ctx->par, O, N > 0 ? 8192 / N + 1 : O,
                              het_ln_rows, &job);
  if (!f32)
    het_red_finish(ctx->outputs[0], &B.y);
  for (int o = 1; o < 3 && o < ctx->n_outputs; o++)
    if (ctx->outputs[o])
      het_red_finish(ctx->outputs[o], o == 1 ? &B.m : &B.v);
  het_ln_release(&B);
  return HET_OK;
}

het_status het_kernel_instancenorm_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  int64_t Nb = x->dims[0], C = x->dims[1];
  int64_t S = Nb > 0 && C > 0 ? het_tensor_count(x) / (Nb * C) : 0;
  if (het_tensor_count(ctx->inputs[1]) != C ||
      het_tensor_count(ctx->inputs[2]) != C)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): scale and B must have C = %lld values",
                     ctx->node->name, ctx->node->op_type, (long long)C);
  double eps = het_node_attr_float(ctx->node, "epsilon", 1e-5f);
  het_red_buf in = {0}, s = {0}, b = {0}, out = {0};
  het_status st;
  if ((st = het_red_load(ctx, x, &in)) ||
      (st = het_red_load(ctx, ctx->inputs[1], &s)) ||
      (st = het_red_load(ctx, ctx->inputs[2], &b)) ||
      (st = het_red_out(ctx, ctx->outputs[0], &out)))
    goto done;
  for (int64_t n = 0; n < Nb; n++)
    for (int64_t c = 0; c < C; c++) {
      double mean, inv, *y = out.data + (n * C + c) * S;
      het_norm_row(in.data + (n * C + c) * S, y, S, eps, &mean, &inv);
      for (int64_t j = 0; j < S; j++)
        y[j] = y[j] * s.data[c] + b.data[c];
    }
  het_red_finish(ctx->outputs[0], &out);
done:
  het_red_release(&in), het_red_release(&s), het_red_release(&b);
  het_red_release(&out);
  return st;
}

/* MVN: mean and variance over axes (default [0, 2, 3]) as E[x^2]-E[x]^2,
 * y = (x - mean) / (sqrt(var) + 1e-9), like the ONNX function body. */
het_status het_kernel_mvn_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  static const int64_t dflt[] = {0, 2, 3};
  size_t na;
  const int64_t *axes = het_node_attr_ints(ctx->node, "axes", &na);
  if (!axes) {
    axes = dflt;
    na = 3;
  }
  bool mask[HET_MAX_RANK] = {0};
  for (size_t i = 0; i < na; i++) {
    int a;
    HET_TRY(het_red_axis(ctx, axes[i], x->rank, &a));
    mask[a] = true;
  }
  int64_t total = het_tensor_count(x), R = 1, stride[HET_MAX_RANK], s = 1;
  for (int d = x->rank - 1; d >= 0; d--) {
    stride[d] = s;
    s *= x->dims[d];
    if (mask[d])
      R *= x->dims[d];
  }
  het_red_buf in = {0}, out = {0};
  double *sum = NULL, *sq = NULL;
  int64_t *key = NULL;
  het_status st;
  if ((st = het_red_load(ctx, x, &in)) ||
      (st = het_red_out(ctx, ctx->outputs[0], &out)) ||
      (st = het_red_scratch(ctx, total, &sum)) ||
      (st = het_red_scratch(ctx, total, &sq)))
    goto done;
  key = malloc((size_t)(total + 1) * sizeof *key);
  if (!key) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "node '%s' (%s): out of memory",
                   ctx->node->name, ctx->node->op_type);
    goto done;
  }
  /* key[i] = offset of i with reduced coordinates zeroed */
  for (int64_t i = 0; i < total; i++) {
    int64_t k = 0;
    for (int d = 0; d < x->rank; d++)
      if (!mask[d])
        k += (i / stride[d] % x->dims[d]) * stride[d];
    key[i] = k;
    sum[k] += in.data[i];
    sq[k] += in.data[i] * in.data[i];
  }
  for (int64_t i = 0; i < total; i++) {
    double m = sum[key[i]] / (double)R, v = sq[key[i]] / (double)R - m * m;
    out.data[i] = (in.data[i] - m) / (sqrt(v > 0 ? v : 0) + 1e-9);
  }
  het_red_finish(ctx->outputs[0], &out);
done:
  het_red_release(&in), het_red_release(&out);
  free(sum), free(sq), free(key);
  return st;
}

het_status het_kernel_lrn_run(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  int64_t size = het_node_attr_int(ctx->node, "size", 1);
  double alpha = het_node_attr_float(ctx->node, "alpha", 1e-4f);
  double beta = het_node_attr_float(ctx->node, "beta", 0.75f);
  double bias = het_node_attr_float(ctx->node, "bias", 1.0f);
  int64_t Nb = x->dims[0], C = x->dims[1];
  int64_t S = Nb > 0 && C > 0 ? het_tensor_count(x) / (Nb * C) : 0;
  int64_t lo = (size - 1) / 2, hi = size / 2; /* floor, ceil of (size-1)/2 */
  het_red_buf in, out;
  HET_TRY(het_red_load(ctx, x, &in));
  het_status st = het_red_out(ctx, ctx->outputs[0], &out);
  if (st) {
    het_red_release(&in);
    return st;
  }
  for (int64_t n = 0; n < Nb; n++)
    for (int64_t c = 0; c < C; c++) {
      int64_t c0 = c - lo < 0 ? 0 : c - lo, c1 = c + hi >= C ? C - 1 : c + hi;
      const double *xc = in.data + (n * C + c) * S;
      double *yc = out.data + (n * C + c) * S;
      for (int64_t j = 0; j < S; j++)
        yc[j] = 0;
      for (int64_t cc = c0; cc <= c1; cc++) {
        const double *xs = in.data + (n * C + cc) * S;
        for (int64_t j = 0; j < S; j++)
          yc[j] += xs[j] * xs[j];
      }
      for (int64_t j = 0; j < S; j++)
        yc[j] = xc[j] / pow(bias + alpha / (double)size * yc[j], beta);
    }
  het_red_release(&in);
  het_red_finish(ctx->outputs[0], &out);
  return HET_OK;
}
