/* tensor_resize.c — CPU kernel for Resize and Upsample.  Each output dim
 * gets a table of taps (input index, weight) from the coordinate transform
 * and the mode (nearest 1, linear 2, cubic 4 taps, edge-clamped); an output
 * element is the weighted sum over the product of its dims' taps.  Follows
 * the ONNX reference (onnx/backend/test/case/node/resize.py).  float32
 * with taps in the last two dims only (image up/down-sampling, nearest or
 * linear) takes a row-wise path (resize_f32_2d).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/tensor_kernels.h"

typedef struct resize_axis {
  int k;          /* taps per output index */
  int64_t *off;   /* out * k element offsets (index * stride) */
  double *w;      /* out * k weights */
  uint8_t *outside; /* per output index: tf_crop_and_resize extrapolates */
} resize_axis;

static double source_coord(const het_resize_params *p, int d, int rank,
                           double x, int64_t in, bool *outside) {
  double s = p->scale[d], ow = s * (double)in, r0 = p->roi[d],
         r1 = p->roi[d + rank];
  *outside = false;
  switch (p->coord) {
  case HET_CT_ALIGN_CORNERS:
    return ow == 1 ? 0.0 : x * (double)(in - 1) / (ow - 1);
  case HET_CT_ASYMMETRIC:
    return x / s;
  case HET_CT_TF_HALF_PIXEL_FOR_NN:
    return (x + 0.5) / s;
  case HET_CT_TF_CROP_AND_RESIZE: {
    double xo = ow == 1 ? (r1 - r0) * (double)(in - 1) / 2
                        : x * (r1 - r0) * (double)(in - 1) / (ow - 1);
    xo += r0 * (double)(in - 1);
    *outside = xo < 0 || xo > (double)(in - 1);
    return xo;
  }
  case HET_CT_PYTORCH_HALF_PIXEL:
    return ow == 1 ? -0.5 : (x + 0.5) / s - 0.5;
  case HET_CT_HALF_PIXEL:
  default:
    return (x + 0.5) / s - 0.5;
  }
}

/* Weights of the taps x_int-1+.., for ratio r in (0, 1]. */
static int tap_weights(const het_resize_params *p, double r, double s,
                       double *w) {
  if (p->mode == HET_RESIZE_LINEAR) {
    w[0] = 1 - r;
    w[1] = r;
    return 2;
  }
  if (p->mode == HET_RESIZE_CUBIC) {
    double A = p->cubic_a, a = r + 1, b = 1 - r, c = 2 - r;
    w[0] = ((A * a - 5 * A) * a + 8 * A) * a - 4 * A;
    w[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    w[2] = ((A + 2) * b - (A + 3)) * b * b + 1;
    w[3] = ((A * c - 5 * A) * c + 8 * A) * c - 4 * A;
    return 4;
  }
  bool ceil_tap;
  switch (p->nearest) {
  case HET_NEAREST_ROUND_PREFER_CEIL: ceil_tap = r >= 0.5; break;
  case HET_NEAREST_FLOOR: ceil_tap = false; break;
  case HET_NEAREST_CEIL: ceil_tap = true; break;
  case HET_NEAREST_SIMPLE: ceil_tap = s < 1; break;
  default: ceil_tap = r > 0.5; break;
  }
  if (r == 1)
    ceil_tap = true;
  w[0] = ceil_tap ? 0 : 1;
  w[1] = ceil_tap ? 1 : 0;
  return 2;
}

static void axis_taps(const het_resize_params *p, int d, int rank, int64_t in,
                      int64_t out, int64_t stride, resize_axis *ax) {
  for (int64_t x = 0; x < out; x++) {
    bool outside;
    double xo = source_coord(p, d, rank, (double)x, in, &outside);
    double fl = floor(xo), w[4];
    int64_t xi = (int64_t)fl;
    if (xo == fl)
      xi--; /* prefer the left neighbour: ratio 1 */
    int n = tap_weights(p, xo - (double)xi, p->scale[d], w);
    int64_t first = p->mode == HET_RESIZE_CUBIC ? xi - 1 : xi;
    double sum = 0;
    if (p->exclude_outside && p->mode != HET_RESIZE_NEAREST) {
      for (int k = 0; k < n; k++) {
        if (first + k < 0 || first + k >= in) w[k] = 0;
        sum += w[k];
      }
      for (int k = 0; k < n && sum != 0; k++)
        w[k] /= sum;
    }
    ax->outside[x] = outside;
    int kk = 0;
    for (int k = 0; k < n; k++) {
      if (ax->k == 1 && (w[k] == 0 || kk == 1))
        continue;
      int64_t i = first + k;
      i = i < 0 ? 0 : i >= in ? in - 1 : i;
      ax->off[x * ax->k + kk] = i * stride;
      ax->w[x * ax->k + kk++] = ax->k == 1 ? 1.0 : w[k];
    }
  }
}

/* Taps for every dim; a dim whose taps all collapse to one index with
 * weight 1 (identity or nearest) gets k = 1. */
static het_status build_axes(const het_resize_params *p, const het_tensor *in,
                             const het_tensor *o, resize_axis *axes,
                             void **mem) {
  int64_t st[HET_MAX_RANK], total = 0;
  het_kernel_strides(in->dims, in->rank, st);
  for (int d = 0; d < o->rank; d++) {
    bool ident = o->dims[d] == in->dims[d] && p->scale[d] == 1.0 &&
                 p->coord != HET_CT_TF_CROP_AND_RESIZE;
    axes[d].k = (p->mode == HET_RESIZE_NEAREST || ident) ? 1
                : p->mode == HET_RESIZE_LINEAR ? 2 : 4;
    total += o->dims[d] * axes[d].k;
  }
  char *m = malloc((size_t)(total ? total : 1) * 16 + (size_t)total + 64);
  if (!m)
    return HET_ERR_OUT_OF_MEMORY;
  *mem = m;
  int64_t pos = 0;
  for (int d = 0; d < o->rank; d++) {
    axes[d].off = (int64_t *)m + pos;
    axes[d].w = (double *)((int64_t *)m + total) + pos;
    axes[d].outside = (uint8_t *)m + total * 16 + pos;
    pos += o->dims[d] * axes[d].k;
  }
  for (int d = 0; d < o->rank; d++) {
    if (in->dims[d] == 0)
      return HET_ERR_SHAPE;
    axis_taps(p, d, o->rank, in->dims[d], o->dims[d], st[d], &axes[d]);
  }
  return HET_OK;
}

static double load_at(het_dtype t, const void *data, int64_t i) {
  return t == HET_DTYPE_FLOAT32 ? ((const float *)data)[i]
                                : het_dtype_load_f64(t, data, i);
}

/* Nearest (every dim one tap): copies elements by size, any dtype. */
static bool resize_copy(const het_resize_params *p, const het_tensor *in,
                        het_tensor *o, const resize_axis *axes) {
  int r = o->rank;
  int64_t idx[HET_MAX_RANK] = {0}, n = het_tensor_count(o);
  size_t es = het_dtype_size(o->dtype);
  char fill[16] = {0};
  for (int d = 0; d < r; d++)
    if (axes[d].k != 1)
      return false;
  het_dtype_store_f64(o->dtype, fill, 0, p->extrapolation);
  for (int64_t e = 0; e < n; e++) {
    bool outside = false;
    int64_t off = 0;
    for (int d = 0; d < r; d++) {
      outside |= axes[d].outside[idx[d]];
      off += axes[d].off[idx[d]];
    }
    memcpy((char *)o->data + e * (int64_t)es,
           outside ? fill : (const char *)in->data + off * (int64_t)es, es);
    for (int d = r - 1; d >= 0 && ++idx[d] == o->dims[d]; d--)
      idx[d] = 0;
  }
  return true;
}

/* Horizontal pass of one input row: h[x] = w0[x] src[c0[x]] + w1[x] src[c1[x]]. */
static void resize_row_f32(const float *src, const int64_t *c0,
                           const int64_t *c1, const float *w0,
                           const float *w1, int64_t ow, float *h) {
  for (int64_t x = 0; x < ow; x++)
    h[x] = w0[x] * src[c0[x]] + w1[x] * src[c1[x]];
}

/* float32 whose taps are all in the last two dims (nearest or linear; the
 * dims before are copied through): per plane, each needed input row is
 * interpolated horizontally once (two rows kept) and output rows blend two
 * of them.  False (nothing written) for any other case. */
static bool resize_f32_2d(const het_resize_params *p, const het_tensor *in,
                          het_tensor *o, const resize_axis *axes) {
  int r = o->rank;
  if (r < 2 || in->dtype != HET_DTYPE_FLOAT32 ||
      o->dtype != HET_DTYPE_FLOAT32 || p->coord == HET_CT_TF_CROP_AND_RESIZE)
    return false;
  int64_t st[HET_MAX_RANK];
  het_kernel_strides(in->dims, in->rank, st);
  for (int d = 0; d < r - 2; d++) {
    if (axes[d].k != 1 || o->dims[d] != in->dims[d])
      return false;
    for (int64_t i = 0; i < o->dims[d]; i++)
      if (axes[d].off[i] != i * st[d])
        return false;
  }
  const resize_axis *ah = &axes[r - 2], *aw = &axes[r - 1];
  if (ah->k > 2 || aw->k > 2)
    return false;
  int64_t ih = in->dims[r - 2], iw = in->dims[r - 1];
  int64_t oh = o->dims[r - 2], ow = o->dims[r - 1];
  int64_t planes = het_tensor_count(o) / (oh * ow);
  size_t cols = (size_t)ow, rows = (size_t)oh;
  char *m = malloc(cols * (2 * sizeof(int64_t) + 4 * sizeof(float)) +
                   rows * (2 * sizeof(int64_t) + 2 * sizeof(float)) + 64);
  if (!m)
    return false; /* the general path reports it */
  int64_t *c0 = (int64_t *)m, *c1 = c0 + ow, *r0 = c1 + ow, *r1 = r0 + oh;
  float *w0 = (float *)(r1 + oh), *w1 = w0 + ow, *v0 = w1 + ow, *v1 = v0 + oh;
  float *buf[2] = {v1 + oh, v1 + oh + ow};
  for (int64_t x = 0; x < ow; x++) {
    c0[x] = aw->off[x * aw->k];
    w0[x] = (float)aw->w[x * aw->k];
    c1[x] = aw->k == 2 ? aw->off[x * 2 + 1] : c0[x];
    w1[x] = aw->k == 2 ? (float)aw->w[x * 2 + 1] : 0.0f;
  }
  for (int64_t y = 0; y < oh; y++) {
    r0[y] = ah->off[y * ah->k] / iw;
    v0[y] = (float)ah->w[y * ah->k];
    r1[y] = ah->k == 2 ? ah->off[y * 2 + 1] / iw : r0[y];
    v1[y] = ah->k == 2 ? (float)ah->w[y * 2 + 1] : 0.0f;
  }
  for (int64_t pl = 0; pl < planes; pl++) {
    const float *src = (const float *)in->data + pl * ih * iw;
    float *dst = (float *)o->data + pl * oh * ow;
    int64_t held[2] = {-1, -1}; /* input rows in buf[0], buf[1] */
    for (int64_t y = 0; y < oh; y++) {
      const float *h[2];
      int64_t want[2] = {r0[y], r1[y]};
      for (int t = 0; t < 2; t++) {
        int b = held[0] == want[t] ? 0 : held[1] == want[t] ? 1 : -1;
        if (b < 0) { /* into the buffer the other row does not need */
          b = held[0] == want[1 - t] ? 1 : 0;
          resize_row_f32(src + want[t] * iw, c0, c1, w0, w1, ow, buf[b]);
          held[b] = want[t];
        }
        h[t] = buf[b];
      }
      float *out = dst + y * ow;
      float a = v0[y], b = v1[y];
      for (int64_t x = 0; x < ow; x++)
        out[x] = a * h[0][x] + b * h[1][x];
    }
  }
  free(m);
  return true;
}

static void resize_interp(const het_resize_params *p, const het_tensor *in,
                          het_tensor *o, const resize_axis *axes) {
  int r = o->rank;
  if (resize_f32_2d(p, in, o, axes) || resize_copy(p, in, o, axes))
    return;
  int64_t idx[HET_MAX_RANK] = {0}, n = het_tensor_count(o);
  for (int64_t e = 0; e < n; e++) {
    bool outside = false;
    for (int d = 0; d < r; d++)
      outside |= axes[d].outside[idx[d]];
    double v = p->extrapolation;
    if (!outside) {
      int kk[HET_MAX_RANK] = {0};
      v = 0;
      for (;;) {
        double w = 1;
        int64_t off = 0;
        for (int d = 0; d < r; d++) {
          int64_t t = idx[d] * axes[d].k + kk[d];
          w *= axes[d].w[t];
          off += axes[d].off[t];
        }
        if (w != 0)
          v += w * load_at(in->dtype, in->data, off);
        int d = r - 1;
        while (d >= 0 && ++kk[d] == axes[d].k)
          kk[d--] = 0;
        if (d < 0)
          break;
      }
    }
    if (o->dtype == HET_DTYPE_FLOAT32)
      ((float *)o->data)[e] = (float)v;
    else
      het_dtype_store_f64(o->dtype, o->data, e, het_dtype_is_float(o->dtype) ? v : nearbyint(v));
    for (int d = r - 1; d >= 0 && ++idx[d] == o->dims[d]; d--)
      idx[d] = 0;
  }
}

het_status het_kernel_run_resize(het_kernel_ctx *ctx) {
  HET_TRY(het_kernel_tensor_ensure_outputs(ctx));
  const het_tensor *in = ctx->inputs[0];
  het_tensor *o = ctx->outputs[0];
  het_kernel_tensor_view v;
  het_resize_params p;
  resize_axis axes[HET_MAX_RANK];
  void *mem = NULL;
  bool known;
  HET_TRY(het_kernel_tensor_view_init(ctx, &v));
  HET_TRY(het_resize_params_make(&v.ic, &p, &known));
  if (het_tensor_count(o) == 0)
    return HET_OK;
  het_status st = build_axes(&p, in, o, axes, &mem);
  if (st != HET_OK) {
    free(mem);
    return het_error(st, "node '%s' (%s): %s", ctx->node->name,
                     ctx->node->op_type,
                     st == HET_ERR_SHAPE ? "cannot resize an empty input"
                                         : "out of memory");
  }
  resize_interp(&p, in, o, axes);
  free(mem);
  return HET_OK;
}
