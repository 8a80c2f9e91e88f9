/* signal_fft.h — the complex transform behind DFT and STFT: radix-2 for
 * power-of-two lengths, a direct sum for short other lengths and
 * Bluestein's chirp-z (through a radix-2 convolution) for long ones.
 * A plan is built per kernel call and used by one thread.
 */
#ifndef HET_CPU_SIGNAL_FFT_H
#define HET_CPU_SIGNAL_FFT_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/kernel.h"

typedef enum { HET_FFT_POW2, HET_FFT_DIRECT, HET_FFT_BLUESTEIN } het_fft_kind;

/* Invariants: cs/sn hold cos/sin(2*pi*k/L) for L = n (POW2, DIRECT) or m
 * (BLUESTEIN, m = power of two >= 2n - 1); one malloc block owns every
 * array (buf). */
typedef struct het_sig_fft {
  int64_t n, m;
  bool inverse;
  het_fft_kind kind;
  double *buf;
  double *cs, *sn;   /* twiddles, L each */
  double *tre, *tim; /* DIRECT scratch, n each */
  double *ac, *as;   /* BLUESTEIN chirp a_k, n each */
  double *bre, *bim; /* BLUESTEIN transformed b, m each */
  double *wre, *wim; /* BLUESTEIN work, m each */
} het_sig_fft;

/* Plans a length-n (>= 1) transform, forward (e^{-2 pi i jk/n}) or inverse
 * (conjugate, scaled by 1/n).  OUT_OF_MEMORY naming the node. */
het_status het_sig_fft_init(const het_kernel_ctx *ctx, het_sig_fft *f,
                            int64_t n, bool inverse);
/* Accepts a zeroed or deinited plan. */
void het_sig_fft_deinit(het_sig_fft *f);
/* Transforms re/im (n values each) in place; bins [0, n_out) are valid
 * afterwards (n_out <= n). */
void het_sig_fft_run(het_sig_fft *f, double *re, double *im, int64_t n_out);

#endif
