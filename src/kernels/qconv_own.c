/* qconv_own.c — the QLinearConvs of qconv_own.h on hetrt's VNNI kernel.
 *
 * A narrow Conv reads each kernel row of its window as one run: in the
 * padded channels-last image the window row at (oh, ow), kernel row kh, is
 * kernel width x C contiguous bytes starting at
 * ((oh * sh + kh) * Wp + ow * sw) * C, so the kernel's taps are the kernel
 * rows (tap_step Wp * C), its pixels sw * C bytes apart and its rows
 * sh * Wp * C apart.  Each run is rounded up to a multiple of 4 bytes;
 * the bytes past the window (the next pixels', or the staging's slack)
 * meet zero weights.  ResNet-50's stem (3 channels, 7x7, stride 2) reads
 * 7 runs of 24 bytes for 147 products: 88% of the multiply-adds useful,
 * where oneDNN 2.6's brgconv pads 3 channels to 4 per tap (75%).
 */
#include "kernels/qconv_own.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "kernels/linalg_kern.h"
#include "kernels/presets.h"

/* Staging ends with this many spare bytes: the last window's run may
 * read up to 3 past the image. */
#define QOWN_SLACK 64

/* The most padding channels a Conv's last weight panel may hold: one in
 * this many of its outputs.  ResNet-50's classifier (2048 -> 1000, one
 * pixel: 24 of 1024 channels computed for nothing) took 82 us on oneDNN's
 * brgconv_1x1 in the model and 59 us here, MobileNetV3's 184- and
 * 672-channel 1x1s 13 -> 9 and 50 -> 43 us; MobileNets' 24-160 channel
 * layers would waste a quarter to a half of the kernel and stay on
 * oneDNN. */
#define QOWN_PAD_SHARE 16

static int64_t round4(int64_t v) { return (v + 3) & ~(int64_t)3; }

static bool qown_1x1(const het_qown_desc *d) {
  for (int i = 0; i < d->nsp; i++)
    if (d->kernel[i] != 1 || d->pad_b[i] || d->pad_e[i])
      return false;
  return true;
}

static bool qown_strided(const het_qown_desc *d) {
  for (int i = 0; i < d->nsp; i++)
    if (d->stride[i] > 1)
      return true;
  return false;
}

het_qown_kind het_qown_kind_of(const het_qown_desc *d) {
  if (!d->x_u8 || !d->nhwc_y || d->group != 1 || d->nsp < 1 || d->nsp > 2 ||
      het_qv_padding(d->m) * QOWN_PAD_SHARE > d->m || !het_qv_usable())
    return HET_QOWN_NONE;
  if (qown_1x1(d))
    return d->nhwc_x && het_qv_fits(d->m, 1, d->c) ? HET_QOWN_1X1
                                                    : HET_QOWN_NONE;
  if (d->nsp != 2 || d->c > HET_QOWN_NARROW_C || d->dil[0] != 1 ||
      d->dil[1] != 1 || d->kernel[0] > HET_QV_MAX_TAPS ||
      !het_qv_fits(d->m, (int)d->kernel[0], round4(d->kernel[1] * d->c)))
    return HET_QOWN_NONE;
  return HET_QOWN_NARROW;
}

/* The padded image's dims of a narrow d. */
static void qown_full(const het_qown_desc *d, int64_t *full) {
  for (int i = 0; i < 2; i++)
    full[i] = d->in[i] + d->pad_b[i] + d->pad_e[i];
}

static int64_t qown_out_pixels(const het_qown_desc *d) {
  return d->out[0] * (d->nsp > 1 ? d->out[1] : 1);
}

size_t het_qown_stage_bytes(const het_qown_desc *d) {
  switch (het_qown_kind_of(d)) {
  case HET_QOWN_1X1:
    return qown_strided(d) ? (size_t)(d->n * qown_out_pixels(d) * d->c) : 0;
  case HET_QOWN_NARROW: {
    int64_t full[2];
    qown_full(d, full);
    return (size_t)(d->n * full[0] * full[1] * d->c) + QOWN_SLACK;
  }
  default:
    return 0;
  }
}

/* The layout descriptor a plan stores with the kernel's weights
 * (presets.h): a tag and the dims, compared byte for byte. */
typedef struct qown_layout {
  char tag[8];
  int64_t n, taps, kt;
} qown_layout;

static qown_layout qown_layout_of(const het_qv_conv *q) {
  qown_layout l;
  memset(&l, 0, sizeof l);
  memcpy(l.tag, "hetqv1", 6);
  l.n = q->n;
  l.taps = q->taps;
  l.kt = q->kt;
  return l;
}

/* The plan's weights for q's dims, already in panels; NULL outside a
 * plan's load or when it has none. */
static const int8_t *qown_preset(const het_qv_conv *q) {
  qown_layout want = qown_layout_of(q);
  const int8_t *p = het_kernel_presets_match(&want, sizeof want,
                                             (size_t)(q->np * q->k), NULL);
  if (p)
    het_kernel_presets_take();
  return p;
}

/* W (m x c x kh x kw) as the runs of a narrow Conv read it: row m holds
 * kernel row after kernel row, each kw * c bytes (kernel column major,
 * channel minor) and zeros up to kt. */
static int8_t *qown_narrow_weights(const het_qown_desc *d, int64_t kt) {
  int64_t kh = d->kernel[0], kw = d->kernel[1], c = d->c;
  int8_t *w = calloc((size_t)(d->m * kh * kt), 1);
  if (!w)
    return NULL;
  for (int64_t m = 0; m < d->m; m++)
    for (int64_t t = 0; t < kh; t++)
      for (int64_t b = 0; b < kw * c; b++)
        w[(m * kh + t) * kt + b] =
            d->w[((m * c + b % c) * kh + t) * kw + b / c];
  return w;
}

bool het_qown_init(het_qown *o, const het_qown_desc *d) {
  memset(o, 0, sizeof *o);
  het_qown_kind kind = het_qown_kind_of(d);
  int taps = kind == HET_QOWN_NARROW ? (int)d->kernel[0] : 1;
  int64_t kt = kind == HET_QOWN_NARROW ? round4(d->kernel[1] * d->c) : d->c;
  het_qv_conv dims = {.n = d->m, .np = d->m + het_qv_padding(d->m),
                      .k = taps * kt, .taps = taps, .kt = kt};
  const int8_t *preset = qown_preset(&dims);
  int8_t *plain = NULL;
  if (!preset && kind == HET_QOWN_NARROW && !(plain = qown_narrow_weights(d, kt)))
    return false;
  bool ok = het_qv_init(&o->qv, plain ? plain : d->w, preset, d->m, taps, kt,
                        d->bias, d->xzp, d->scales, d->n_scales, d->yzp,
                        d->y_signed);
  free(plain);
  if (!ok)
    return false;
  o->kind = kind;
  o->d = *d;
  o->d.w = NULL;
  o->d.bias = NULL;
  o->d.scales = NULL;
  o->stage_bytes = het_qown_stage_bytes(d);
  int64_t opx = qown_out_pixels(d);
  if (kind == HET_QOWN_1X1) {
    o->g = (het_qv_geom){.rows = 1, .px = d->n * opx, .img_rows = 1,
                         .px_step = d->c};
  } else {
    int64_t full[2];
    qown_full(d, full);
    int64_t row = full[1] * d->c;
    o->g = (het_qv_geom){.rows = d->n * d->out[0],
                         .px = d->out[1],
                         .img_rows = d->out[0],
                         .img_step = full[0] * row,
                         .row_step = d->stride[0] * row,
                         .px_step = d->stride[1] * d->c,
                         .tap_step = row};
  }
  return true;
}

void het_qown_free(het_qown *o) {
  if (o->kind != HET_QOWN_NONE)
    het_qv_free(&o->qv);
  memset(o, 0, sizeof *o);
}

void het_qown_weights(const het_qown *o, het_kernel_weight_fn fn, void *ctx) {
  if (o->kind == HET_QOWN_NONE)
    return;
  qown_layout l = qown_layout_of(&o->qv);
  fn(ctx, &l, sizeof l, o->qv.w, (size_t)(o->qv.np * o->qv.k));
}

/* The byte permutations that interleave 3 planes 64 pixels at a time:
 * output vector k, byte j is pixel (64k + j) / 3, channel (64k + j) % 3;
 * lo[k] picks it from the first two planes, hi[k] keeps it or takes the
 * third plane's. */
typedef struct qown_rgb {
  uint8_t lo[3][64], hi[3][64];
} qown_rgb;

#if defined(__x86_64__) && defined(__GNUC__)
static void qown_rgb_init(qown_rgb *t) {
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 64; j++) {
      int f = 64 * k + j, px = f / 3, ch = f % 3;
      t->lo[k][j] = (uint8_t)(ch == 1 ? 64 + px : px);
      t->hi[k][j] = (uint8_t)(ch == 2 ? 64 + px : j);
    }
}

/* One row of w pixels of 3 planes interleaved, 64 at a time; returns w. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static int64_t
qown_rgb_vbmi(const qown_rgb *t, const uint8_t *p0, const uint8_t *p1,
              const uint8_t *p2, uint8_t *y, int64_t w) {
  __m512i l[3], h[3];
  for (int k = 0; k < 3; k++) {
    l[k] = _mm512_loadu_si512(t->lo[k]);
    h[k] = _mm512_loadu_si512(t->hi[k]);
  }
  int64_t p = 0;
  for (; p < w; p += 64, y += 192) {
    /* the last pixels (fewer than 64) through masks */
    int64_t n = w - p < 64 ? w - p : 64;
    __mmask64 in = n == 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
    __m512i a = _mm512_maskz_loadu_epi8(in, p0 + p);
    __m512i b = _mm512_maskz_loadu_epi8(in, p1 + p);
    __m512i c = _mm512_maskz_loadu_epi8(in, p2 + p);
    for (int k = 0; k < 3; k++) {
      int64_t left = 3 * n - 64 * k;
      __mmask64 out = left >= 64  ? ~(__mmask64)0
                      : left <= 0 ? 0
                                  : ((__mmask64)1 << left) - 1;
      _mm512_mask_storeu_epi8(
          y + 64 * k, out,
          _mm512_permutex2var_epi8(_mm512_permutex2var_epi8(a, l[k], b), h[k],
                                   c));
    }
  }
  return w;
}
#endif

/* Row h of planar image x (c planes of hw bytes) into channels-last y;
 * rgb: the permutations, when 3 planes go through AVX-512 VBMI, else
 * NULL. */
static void qown_interleave(const qown_rgb *rgb, const uint8_t *x, int64_t c,
                            int64_t hw, int64_t h, int64_t w, uint8_t *y) {
  const uint8_t *row = x + h * w;
  int64_t p = 0;
  (void)rgb;
#if defined(__x86_64__) && defined(__GNUC__)
  if (rgb)
    p = qown_rgb_vbmi(rgb, row, row + hw, row + 2 * hw, y, w);
#endif
  for (; p < w; p++)
    for (int64_t ch = 0; ch < c; ch++)
      y[p * c + ch] = row[ch * hw + p];
}

/* x into the padded channels-last images of a narrow Conv, borders at
 * x's zero point. */
static void qown_pad(const het_qown *o, const uint8_t *x, uint8_t *xs) {
  const het_qown_desc *d = &o->d;
  int64_t c = d->c, h = d->in[0], w = d->in[1];
  /* an image of the padded staging, and a row of it */
  size_t img = (size_t)o->g.img_step, row = (size_t)o->g.tap_step;
  const qown_rgb *rgbp = NULL;
#if defined(__x86_64__) && defined(__GNUC__)
  qown_rgb rgb;
  if (!d->nhwc_x && c == 3 && __builtin_cpu_supports("avx512vbmi")) {
    qown_rgb_init(&rgb);
    rgbp = &rgb;
  }
#endif
  memset(xs, (uint8_t)d->xzp, img * (size_t)d->n + QOWN_SLACK);
  for (int64_t b = 0; b < d->n; b++, xs += img, x += h * w * c)
    for (int64_t i = 0; i < h; i++) {
      uint8_t *y = xs + (size_t)(i + d->pad_b[0]) * row + d->pad_b[1] * c;
      if (d->nhwc_x)
        memcpy(y, x + i * w * c, (size_t)(w * c));
      else
        qown_interleave(rgbp, x, c, h * w, i, w, y);
    }
}

void het_qown_run(const het_qown *o, const uint8_t *x, uint8_t *stage,
                  void *y, const het_parallel *par, const void *ahead,
                  size_t ahead_bytes) {
  if (o->kind == HET_QOWN_NARROW) {
    qown_pad(o, x, stage);
    x = stage;
  } else if (o->stage_bytes > 0) { /* a strided 1x1 */
    const het_qown_desc *d = &o->d;
    bool flat = d->nsp == 1;
    het_lk_gather_strided(x, stage, d->n, d->in[0], flat ? 1 : d->in[1],
                          d->stride[0], flat ? 1 : d->stride[1], (size_t)d->c);
    x = stage;
  }
  het_qv_run(&o->qv, x, &o->g, y, par, ahead, ahead_bytes);
}
