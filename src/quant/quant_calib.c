/* quant_calib.c — calibration statistics of one tensor and the range each
 * method keeps: minmax (the values seen), percentile (the share of values
 * kept, cut evenly from both tails of a histogram over [min, max]) and
 * entropy (the clipping threshold on |x| whose quantized histogram is
 * closest, by KL divergence, to the clipped one).  Non-finite values are
 * ignored.  Scale and zero point follow ONNX's asymmetric convention.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "quant/quant_internal.h"

void het_quant_stats_minmax(het_quant_stats *st, const float *x, int64_t n) {
  double lo = st->seen ? st->min : INFINITY;
  double hi = st->seen ? st->max : -INFINITY;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    if (!isfinite(v))
      continue;
    if (v < lo)
      lo = v;
    if (v > hi)
      hi = v;
  }
  if (lo <= hi) {
    st->min = lo;
    st->max = hi;
    st->seen = true;
  }
}

het_status het_quant_stats_hist_init(het_quant_stats *st,
                                     het_quant_method method) {
  free(st->hist);
  st->hist = NULL;
  if (method == HET_QUANT_MINMAX)
    return HET_OK;
  st->bins = method == HET_QUANT_PERCENTILE ? HET_QUANT_PERCENTILE_BINS
                                            : HET_QUANT_ENTROPY_BINS;
  st->hist = calloc((size_t)st->bins, sizeof *st->hist);
  if (!st->hist)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  double lo = st->seen ? st->min : 0, hi = st->seen ? st->max : 0;
  if (method == HET_QUANT_ENTROPY) {
    hi = fmax(fabs(lo), fabs(hi));
    lo = 0;
  }
  st->hist_lo = lo;
  st->hist_hi = hi > lo ? hi : lo + 1;
  return HET_OK;
}

void het_quant_stats_hist_add(het_quant_stats *st, het_quant_method method,
                              const float *x, int64_t n) {
  if (!st->hist)
    return;
  double lo = st->hist_lo, per = st->bins / (st->hist_hi - st->hist_lo);
  bool mag = method == HET_QUANT_ENTROPY;
  for (int64_t i = 0; i < n; i++) {
    float v = x[i];
    /* Exact zeros (half of a Relu's output) are exact in every range:
     * left out, they would make the entropy method clip to fit them. */
    if (!isfinite(v) || (mag && v == 0))
      continue;
    double b = ((mag ? fabs(v) : v) - lo) * per;
    int k = b <= 0 ? 0 : b >= st->bins ? st->bins - 1 : (int)b;
    st->hist[k] += 1;
  }
}

/* Percentile: cut (100 - p) / 2 percent of the values from each tail. */
static void het_quant_percentile(const het_quant_stats *st, double p,
                                 float *lo, float *hi) {
  double total = 0;
  for (int i = 0; i < st->bins; i++)
    total += st->hist[i];
  double cut = total * (100.0 - p) / 200.0, width =
      (st->hist_hi - st->hist_lo) / st->bins;
  int left = 0, right = st->bins - 1;
  double cum = 0;
  for (int i = 0; i < st->bins; i++) {
    cum += st->hist[i];
    if (cum > cut) {
      left = i;
      break;
    }
  }
  cum = 0;
  for (int i = st->bins - 1; i >= 0; i--) {
    cum += st->hist[i];
    if (cum > cut) {
      right = i;
      break;
    }
  }
  *lo = (float)fmax(st->min, st->hist_lo + left * width);
  *hi = (float)fmin(st->max, st->hist_lo + (right + 1) * width);
}

/* KL(P || Q) of the first i bins clipped at bin i against their
 * quantization to `levels` levels (TensorRT's calibration). */
static double het_quant_kl(const double *h, int bins, int i, int levels,
                           double *p, double *qd) {
  double outliers = 0, psum = 0, qsum = 0;
  for (int k = i; k < bins; k++)
    outliers += h[k];
  for (int k = 0; k < i; k++)
    p[k] = h[k];
  p[i - 1] += outliers;
  for (int j = 0; j < levels; j++) {
    int s = (int)((int64_t)j * i / levels), e = (int)((int64_t)(j + 1) * i / levels);
    double sum = 0;
    int nonzero = 0;
    for (int k = s; k < e; k++) {
      sum += h[k];
      nonzero += h[k] > 0;
    }
    for (int k = s; k < e; k++)
      qd[k] = h[k] > 0 ? sum / nonzero : 0;
  }
  for (int k = 0; k < i; k++) {
    psum += p[k];
    qsum += qd[k];
  }
  if (psum <= 0 || qsum <= 0)
    return INFINITY;
  double kl = 0;
  for (int k = 0; k < i; k++) {
    if (p[k] <= 0)
      continue;
    double pk = p[k] / psum, qk = qd[k] / qsum;
    kl += pk * log(pk / (qk > 0 ? qk : 1e-12));
  }
  return kl;
}

static void het_quant_entropy(const het_quant_stats *st, float *lo,
                              float *hi) {
  bool negative = st->min < 0;
  int levels = negative ? 128 : 256;
  double width = (st->hist_hi - st->hist_lo) / st->bins;
  double *p = malloc(2 * (size_t)st->bins * sizeof *p);
  int best = st->bins;
  if (p) {
    /* about 1024 candidate thresholds, each O(bins) */
    int step = (st->bins - levels) / 1024 > 1 ? (st->bins - levels) / 1024 : 1;
    double best_kl = INFINITY;
    for (int i = levels; i <= st->bins; i += step) {
      double kl = het_quant_kl(st->hist, st->bins, i, levels, p, p + st->bins);
      if (kl < best_kl) {
        best_kl = kl;
        best = i;
      }
    }
    free(p);
  }
  double t = best * width;
  *lo = (float)(negative ? fmax(st->min, -t) : st->min);
  *hi = (float)fmin(st->max, t);
}

void het_quant_stats_range(const het_quant_stats *st, het_quant_method method,
                           double percentile, float *lo, float *hi) {
  if (!st->seen) {
    *lo = *hi = 0;
    return;
  }
  *lo = (float)st->min;
  *hi = (float)st->max;
  if (!st->hist || st->max <= st->min)
    return;
  if (method == HET_QUANT_PERCENTILE && percentile < 100)
    het_quant_percentile(st, percentile, lo, hi);
  else if (method == HET_QUANT_ENTROPY)
    het_quant_entropy(st, lo, hi);
}

void het_quant_params(float lo, float hi, het_dtype type, float *scale,
                      int32_t *zero_point) {
  double qmin = type == HET_DTYPE_INT8 ? -128 : 0;
  double qmax = type == HET_DTYPE_INT8 ? 127 : 255;
  double l = fmin(lo, 0), h = fmax(hi, 0);
  float s = (float)((h - l) / (qmax - qmin));
  if (!(s >= FLT_MIN)) {
    *scale = 1.0f;
    *zero_point = 0;
    return;
  }
  double zp = nearbyint(qmin - l / s);
  *scale = s;
  *zero_point = (int32_t)fmin(qmax, fmax(qmin, zp));
}

void het_quant_stats_deinit(het_quant_stats *st) {
  free(st->hist);
  memset(st, 0, sizeof *st);
}
