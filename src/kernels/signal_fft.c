/* signal_fft.c — complex transforms for DFT/STFT: radix-2 Cooley-Tukey,
 * a direct sum for short non-power-of-two lengths, Bluestein's chirp-z for
 * long ones (X_k = a_k * sum_j x_j a_j b_{k-j}, a_k = e^{s pi i k^2/n},
 * b_t = conj(a_t), the convolution done with length-m radix-2 FFTs).
 */
#include "kernels/signal_fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/signal_kernels.h"

#define SIG_PI 3.14159265358979323846
/* Non-power-of-two lengths up to this use the direct O(n^2) sum. */
#define FFT_DIRECT_MAX 64

static void fft_twiddles(double *cs, double *sn, int64_t len) {
  for (int64_t k = 0; k < len; k++) {
    cs[k] = cos(2 * SIG_PI * (double)k / (double)len);
    sn[k] = sin(2 * SIG_PI * (double)k / (double)len);
  }
}

/* In-place radix-2 transform of length n with twiddles cs/sn of length n;
 * sg = -1 forward, +1 backward (unscaled). */
static void fft_radix2(int64_t n, const double *cs, const double *sn,
                       double *re, double *im, double sg) {
  for (int64_t i = 1, j = 0; i < n; i++) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j ^= bit;
    if (i < j) {
      double t = re[i];
      re[i] = re[j];
      re[j] = t;
      t = im[i];
      im[i] = im[j];
      im[j] = t;
    }
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    int64_t step = n / len, half = len / 2;
    for (int64_t s = 0; s < n; s += len)
      for (int64_t j = 0; j < half; j++) {
        double wr = cs[j * step], wi = sg * sn[j * step];
        double *ar = re + s + j, *ai = im + s + j;
        double br = ar[half] * wr - ai[half] * wi;
        double bi = ar[half] * wi + ai[half] * wr;
        ar[half] = *ar - br;
        ai[half] = *ai - bi;
        *ar += br;
        *ai += bi;
      }
  }
}

/* Chirp a_k and the transformed, wrapped conj(a) of a Bluestein plan. */
static void fft_bluestein_setup(het_sig_fft *f) {
  int64_t n = f->n, m = f->m;
  double sg = f->inverse ? 1.0 : -1.0;
  for (int64_t k = 0; k < n; k++) {
    int64_t q = (k * k) % (2 * n); /* e^{i pi k^2/n} has period 2n in k^2 */
    double t = SIG_PI * (double)q / (double)n;
    f->ac[k] = cos(t);
    f->as[k] = sg * sin(t);
  }
  memset(f->bre, 0, (size_t)m * 2 * sizeof(double));
  for (int64_t t = 0; t < n; t++) {
    f->bre[t] = f->ac[t];
    f->bim[t] = -f->as[t];
    if (t > 0) {
      f->bre[m - t] = f->ac[t];
      f->bim[m - t] = -f->as[t];
    }
  }
  fft_radix2(m, f->cs, f->sn, f->bre, f->bim, -1.0);
}

het_status het_sig_fft_init(const het_kernel_ctx *ctx, het_sig_fft *f,
                            int64_t n, bool inverse) {
  memset(f, 0, sizeof *f);
  f->n = n;
  f->inverse = inverse;
  f->kind = (n & (n - 1)) == 0      ? HET_FFT_POW2
            : n <= FFT_DIRECT_MAX ? HET_FFT_DIRECT
                                  : HET_FFT_BLUESTEIN;
  int64_t m = 1;
  while (f->kind == HET_FFT_BLUESTEIN && m < 2 * n - 1)
    m <<= 1;
  f->m = m;
  int64_t len = f->kind == HET_FFT_BLUESTEIN ? m : n;
  size_t total = (size_t)(f->kind == HET_FFT_BLUESTEIN ? 2 * n + 6 * m
                                                       : 4 * n);
  f->buf = malloc(total * sizeof(double));
  if (!f->buf)
    return het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                        "out of memory for a length-%lld transform",
                        (long long)n);
  f->cs = f->buf;
  f->sn = f->cs + len;
  fft_twiddles(f->cs, f->sn, len);
  if (f->kind != HET_FFT_BLUESTEIN) {
    f->tre = f->sn + len;
    f->tim = f->tre + n;
    return HET_OK;
  }
  f->ac = f->sn + m;
  f->as = f->ac + n;
  f->bre = f->as + n;
  f->bim = f->bre + m;
  f->wre = f->bim + m;
  f->wim = f->wre + m;
  fft_bluestein_setup(f);
  return HET_OK;
}

void het_sig_fft_deinit(het_sig_fft *f) {
  free(f->buf);
  memset(f, 0, sizeof *f);
}

static void fft_direct(het_sig_fft *f, double *re, double *im, double sg,
                       int64_t n_out) {
  int64_t n = f->n;
  for (int64_t k = 0; k < n_out; k++) {
    double sr = 0, si = 0;
    for (int64_t j = 0, idx = 0; j < n; j++) {
      double c = f->cs[idx], s = sg * f->sn[idx];
      sr += re[j] * c - im[j] * s;
      si += re[j] * s + im[j] * c;
      idx += k;
      if (idx >= n)
        idx -= n;
    }
    f->tre[k] = sr;
    f->tim[k] = si;
  }
  memcpy(re, f->tre, (size_t)n_out * sizeof *re);
  memcpy(im, f->tim, (size_t)n_out * sizeof *im);
}

static void fft_bluestein(het_sig_fft *f, double *re, double *im,
                          int64_t n_out) {
  int64_t n = f->n, m = f->m;
  double *wr = f->wre, *wi = f->wim;
  memset(wr, 0, (size_t)m * 2 * sizeof *wr);
  for (int64_t j = 0; j < n; j++) {
    wr[j] = re[j] * f->ac[j] - im[j] * f->as[j];
    wi[j] = re[j] * f->as[j] + im[j] * f->ac[j];
  }
  fft_radix2(m, f->cs, f->sn, wr, wi, -1.0);
  for (int64_t k = 0; k < m; k++) {
    double r = wr[k] * f->bre[k] - wi[k] * f->bim[k];
    wi[k] = wr[k] * f->bim[k] + wi[k] * f->bre[k];
    wr[k] = r;
  }
  fft_radix2(m, f->cs, f->sn, wr, wi, 1.0);
  for (int64_t k = 0; k < n_out; k++) {
    double cr = wr[k] / (double)m, ci = wi[k] / (double)m;
    re[k] = cr * f->ac[k] - ci * f->as[k];
    im[k] = cr * f->as[k] + ci * f->ac[k];
  }
}

void het_sig_fft_run(het_sig_fft *f, double *re, double *im, int64_t n_out) {
  double sg = f->inverse ? 1.0 : -1.0;
  if (f->kind == HET_FFT_POW2)
    fft_radix2(f->n, f->cs, f->sn, re, im, sg);
  else if (f->kind == HET_FFT_DIRECT)
    fft_direct(f, re, im, sg, n_out);
  else
    fft_bluestein(f, re, im, n_out);
  if (f->inverse)
    for (int64_t k = 0; k < n_out; k++) {
      re[k] /= (double)f->n;
      im[k] /= (double)f->n;
    }
}
