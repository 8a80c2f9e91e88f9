/* signal_sample.c — GridSample (4-D; bilinear/nearest/bicubic with zeros,
 * border or reflection padding, as torch.nn.functional.grid_sample) and
 * RoiAlign (avg/max, half_pixel or output_half_pixel, as onnxruntime) on
 * the CPU.  Math in double; coordinates that are not finite sample zeros.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/signal_kernels.h"

typedef enum { GS_LINEAR, GS_NEAREST, GS_CUBIC } gs_mode;
typedef enum { GS_ZEROS, GS_BORDER, GS_REFLECT } gs_pad;

/* One input plane and the sampling rules. */
typedef struct gs_plane {
  const double *x;
  int64_t h, w;
  gs_mode mode;
  gs_pad pad;
  bool ac; /* align_corners */
} gs_plane;

/* Beyond this magnitude a coordinate is far outside any plane. */
#define GS_FAR 1e15

static double gs_unnormalize(double c, int64_t size, bool ac) {
  return ac ? (c + 1) / 2 * (double)(size - 1) : ((c + 1) * size - 1) / 2;
}

static double gs_reflect(double x, double lo2, double hi2) {
  if (lo2 == hi2)
    return 0;
  double mn = lo2 / 2, span = (hi2 - lo2) / 2;
  x = fabs(x - mn);
  double extra = fmod(x, span), flips = floor(x / span);
  return fmod(flips, 2) == 0 ? extra + mn : span - extra + mn;
}

/* Applies border/reflection padding to a pixel coordinate. */
static double gs_pad_coord(const gs_plane *p, double x, int64_t size) {
  if (p->pad == GS_ZEROS || !isfinite(x))
    return x;
  if (p->pad == GS_REFLECT)
    x = p->ac ? gs_reflect(x, 0, 2.0 * (double)(size - 1))
              : gs_reflect(x, -1, 2.0 * (double)size - 1);
  return fmin(fmax(x, 0), (double)(size - 1));
}

static double gs_at(const gs_plane *p, int64_t y, int64_t x) {
  if (y < 0 || x < 0 || y >= p->h || x >= p->w)
    return 0;
  return p->x[y * p->w + x];
}

static bool gs_near(double v) { return isfinite(v) && fabs(v) < GS_FAR; }

static double gs_cubic1(double x, double a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}

static double gs_cubic2(double x, double a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

static void gs_cubic_coeffs(double t, double *c) {
  const double a = -0.75;
  c[0] = gs_cubic2(t + 1, a);
  c[1] = gs_cubic1(t, a);
  c[2] = gs_cubic1(1 - t, a);
  c[3] = gs_cubic2(2 - t, a);
}

/* Tap (y, x) of the bicubic stencil, padded as the mode says. */
static double gs_tap_bounded(const gs_plane *p, int64_t y, int64_t x) {
  if (p->pad == GS_ZEROS)
    return gs_at(p, y, x);
  int64_t yy = (int64_t)gs_pad_coord(p, (double)y, p->h);
  int64_t xx = (int64_t)gs_pad_coord(p, (double)x, p->w);
  return gs_at(p, yy, xx);
}

static double gs_bicubic(const gs_plane *p, double y, double x) {
  if (!gs_near(x) || !gs_near(y))
    return 0;
  double fx = floor(x), fy = floor(y), cx[4], cy[4], sum = 0;
  gs_cubic_coeffs(x - fx, cx);
  gs_cubic_coeffs(y - fy, cy);
  int64_t x0 = (int64_t)fx - 1, y0 = (int64_t)fy - 1;
  for (int j = 0; j < 4; j++) {
    double row = 0;
    for (int i = 0; i < 4; i++)
      row += cx[i] * gs_tap_bounded(p, y0 + j, x0 + i);
    sum += cy[j] * row;
  }
  return sum;
}

/* Sample at normalized grid point (gx, gy). */
static double gs_sample(const gs_plane *p, double gx, double gy) {
  double x = gs_unnormalize(gx, p->w, p->ac);
  double y = gs_unnormalize(gy, p->h, p->ac);
  if (p->mode == GS_CUBIC)
    return gs_bicubic(p, y, x);
  x = gs_pad_coord(p, x, p->w);
  y = gs_pad_coord(p, y, p->h);
  if (!gs_near(x) || !gs_near(y))
    return 0;
  if (p->mode == GS_NEAREST)
    return gs_at(p, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
  double fx = floor(x), fy = floor(y), wx = x - fx, wy = y - fy;
  int64_t x0 = (int64_t)fx, y0 = (int64_t)fy;
  return (1 - wy) * ((1 - wx) * gs_at(p, y0, x0) + wx * gs_at(p, y0, x0 + 1)) +
         wy * ((1 - wx) * gs_at(p, y0 + 1, x0) + wx * gs_at(p, y0 + 1, x0 + 1));
}

static het_status gs_read_attrs(const het_kernel_ctx *ctx, gs_plane *p) {
  const char *mode = het_node_attr_string(ctx->node, "mode");
  const char *pad = het_node_attr_string(ctx->node, "padding_mode");
  p->mode = GS_LINEAR;
  p->pad = GS_ZEROS;
  p->ac = het_node_attr_int(ctx->node, "align_corners", 0) != 0;
  if (mode && strcmp(mode, "nearest") == 0)
    p->mode = GS_NEAREST;
  else if (mode && (strcmp(mode, "bicubic") == 0 || strcmp(mode, "cubic") == 0))
    p->mode = GS_CUBIC;
  else if (mode && strcmp(mode, "bilinear") != 0 && strcmp(mode, "linear") != 0)
    return het_sig_fail(ctx, HET_ERR_INVALID_MODEL, "unknown mode '%s'", mode);
  if (pad && strcmp(pad, "border") == 0)
    p->pad = GS_BORDER;
  else if (pad && strcmp(pad, "reflection") == 0)
    p->pad = GS_REFLECT;
  else if (pad && strcmp(pad, "zeros") != 0)
    return het_sig_fail(ctx, HET_ERR_INVALID_MODEL,
                        "unknown padding_mode '%s'", pad);
  return HET_OK;
}

het_status het_sig_run_grid_sample(het_kernel_ctx *ctx) {
  const het_tensor *X = ctx->inputs[0], *G = ctx->inputs[1];
  het_tensor *Y = ctx->outputs[0];
  if (X->rank != 4 || G->rank != 4 || G->dims[3] != 2 ||
      G->dims[0] != X->dims[0])
    return het_sig_fail(ctx, HET_ERR_SHAPE,
                        "X must be [N, C, H, W] and grid [N, H_out, W_out, 2]");
  gs_plane p = {0};
  HET_TRY(gs_read_attrs(ctx, &p));
  int64_t N = X->dims[0], C = X->dims[1], ho = G->dims[1], wo = G->dims[2];
  p.h = X->dims[2];
  p.w = X->dims[3];
  double *x = NULL, *g = NULL, *y = NULL;
  het_status st = het_sig_widen(ctx, X, &x);
  if (st == HET_OK)
    st = het_sig_widen(ctx, G, &g);
  if (st == HET_OK && !(y = malloc((size_t)(het_tensor_count(Y) + 1) *
                                   sizeof *y)))
    st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t n = 0; st == HET_OK && n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      p.x = x + (n * C + c) * p.h * p.w;
      const double *gp = g + n * ho * wo * 2;
      double *yp = y + (n * C + c) * ho * wo;
      for (int64_t i = 0; i < ho * wo; i++)
        yp[i] = gs_sample(&p, gp[2 * i], gp[2 * i + 1]);
    }
  if (st == HET_OK)
    het_sig_store(Y, y, het_tensor_count(Y));
  free(x);
  free(g);
  free(y);
  return st;
}

/* ---- RoiAlign ---- */

typedef struct ra_params {
  int64_t oh, ow, sr;
  double scale;
  bool half_pixel, max_mode;
} ra_params;

/* Bilinear sample of plane (h x w) at (y, x), onnxruntime's rules; *mx gets
 * the largest weighted corner (for max mode). */
static double ra_bilinear(const double *pl, int64_t h, int64_t w, double y,
                          double x, double *mx) {
  *mx = 0;
  if (h <= 0 || w <= 0 || !isfinite(y) || !isfinite(x) || y < -1.0 || y > (double)h ||
      x < -1.0 || x > (double)w)
    return 0;
  y = y <= 0 ? 0 : y;
  x = x <= 0 ? 0 : x;
  int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
  if (y0 >= h - 1)
    y = (double)(y0 = y1 = h - 1);
  else
    y1 = y0 + 1;
  if (x0 >= w - 1)
    x = (double)(x0 = x1 = w - 1);
  else
    x1 = x0 + 1;
  double ly = y - (double)y0, lx = x - (double)x0, hy = 1 - ly, hx = 1 - lx;
  double a = hy * hx * pl[y0 * w + x0], b = hy * lx * pl[y0 * w + x1];
  double c = ly * hx * pl[y1 * w + x0], d = ly * lx * pl[y1 * w + x1];
  *mx = fmax(fmax(fmax(a, b), c), d);
  return a + b + c + d;
}

/* One output bin (ph, pw) of one roi over plane pl. */
static double ra_bin(const ra_params *p, const double *pl, int64_t h,
                     int64_t w, const double *roi, int64_t gh, int64_t gw,
                     int64_t ph, int64_t pw) {
  double bh = roi[2] / (double)p->oh, bw = roi[3] / (double)p->ow;
  double sum = 0, best = 0;
  for (int64_t iy = 0; iy < gh; iy++) {
    double yy = roi[0] + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
    for (int64_t ix = 0; ix < gw; ix++) {
      double xx =
          roi[1] + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw, m;
      sum += ra_bilinear(pl, h, w, yy, xx, &m);
      best = (iy == 0 && ix == 0) ? m : fmax(best, m);
    }
  }
  if (p->max_mode)
    return best;
  int64_t count = gh * gw > 0 ? gh * gw : 1;
  return sum / (double)count;
}

/* Sampling grid size along one axis (sampling_ratio or adaptive). */
static het_status ra_grid(const het_kernel_ctx *ctx, int64_t sr,
                          double extent, int64_t bins, int64_t *out) {
  if (sr > 0) {
    *out = sr;
    return HET_OK;
  }
  double g = ceil(extent / (double)bins);
  if (!isfinite(g) || g > 1e6)
    return het_sig_fail(ctx, HET_ERR_INVALID_ARGUMENT,
                        "roi extent %g gives too many samples per bin", extent);
  *out = g > 0 ? (int64_t)g : 0;
  return HET_OK;
}

static het_status ra_roi(const het_kernel_ctx *ctx, const ra_params *p,
                         const double *x, const double *r, double *y) {
  const het_tensor *X = ctx->inputs[0];
  int64_t C = X->dims[1], h = X->dims[2], w = X->dims[3];
  double off = p->half_pixel ? 0.5 : 0;
  /* roi = [y_start, x_start, height, width] */
  double roi[4] = {r[1] * p->scale - off, r[0] * p->scale - off, 0, 0};
  roi[2] = r[3] * p->scale - off - roi[0];
  roi[3] = r[2] * p->scale - off - roi[1];
  if (!p->half_pixel) {
    roi[2] = fmax(roi[2], 1.0);
    roi[3] = fmax(roi[3], 1.0);
  }
  int64_t gh = 0, gw = 0;
  HET_TRY(ra_grid(ctx, p->sr, roi[2], p->oh, &gh));
  HET_TRY(ra_grid(ctx, p->sr, roi[3], p->ow, &gw));
  for (int64_t c = 0; c < C; c++)
    for (int64_t ph = 0; ph < p->oh; ph++)
      for (int64_t pw = 0; pw < p->ow; pw++)
        y[(c * p->oh + ph) * p->ow + pw] =
            ra_bin(p, x + c * h * w, h, w, roi, gh, gw, ph, pw);
  return HET_OK;
}

static het_status ra_params_read(const het_kernel_ctx *ctx,
                                 ra_params *p) {
  const het_tensor *X = ctx->inputs[0], *R = ctx->inputs[1],
                   *B = ctx->inputs[2];
  if (X->rank != 4 || R->rank != 2 || R->dims[1] != 4 || B->rank != 1 ||
      B->dims[0] != R->dims[0])
    return het_sig_fail(ctx, HET_ERR_SHAPE,
                        "X must be [N, C, H, W], rois [R, 4] and "
                        "batch_indices [R]");
  const char *mode = het_node_attr_string(ctx->node, "mode");
  const char *ctm =
      het_node_attr_string(ctx->node, "coordinate_transformation_mode");
  p->oh = het_node_attr_int(ctx->node, "output_height", 1);
  p->ow = het_node_attr_int(ctx->node, "output_width", 1);
  p->sr = het_node_attr_int(ctx->node, "sampling_ratio", 0);
  p->scale = het_node_attr_float(ctx->node, "spatial_scale", 1.0f);
  p->max_mode = mode && strcmp(mode, "max") == 0;
  /* Opset 10 has no attribute and behaves as output_half_pixel. */
  p->half_pixel = ctm ? strcmp(ctm, "half_pixel") == 0 : ctx->opset >= 16;
  return HET_OK;
}

het_status het_sig_run_roi_align(het_kernel_ctx *ctx) {
  ra_params p = {0};
  HET_TRY(ra_params_read(ctx, &p));
  const het_tensor *X = ctx->inputs[0], *B = ctx->inputs[2];
  het_tensor *Y = ctx->outputs[0];
  int64_t nr = B->dims[0], plane = X->dims[1] * p.oh * p.ow;
  double *x = NULL, *r = NULL, *y = NULL;
  het_status st = het_sig_widen(ctx, X, &x);
  if (st == HET_OK)
    st = het_sig_widen(ctx, ctx->inputs[1], &r);
  if (st == HET_OK && !(y = malloc((size_t)(het_tensor_count(Y) + 1) *
                                   sizeof *y)))
    st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
  for (int64_t i = 0; st == HET_OK && i < nr; i++) {
    int64_t b = het_tensor_get_i64(B, i);
    if (b < 0 || b >= X->dims[0]) {
      st = het_sig_fail(ctx, HET_ERR_INVALID_ARGUMENT,
                        "batch_indices[%lld] = %lld is outside [0, %lld)",
                        (long long)i, (long long)b, (long long)X->dims[0]);
      break;
    }
    int64_t in_plane = X->dims[1] * X->dims[2] * X->dims[3];
    st = ra_roi(ctx, &p, x + b * in_plane, r + i * 4, y + i * plane);
  }
  if (st == HET_OK)
    het_sig_store(Y, y, het_tensor_count(Y));
  free(x);
  free(r);
  free(y);
  return st;
}
