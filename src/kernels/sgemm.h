/* sgemm.h — the kernel library's float32 GEMM for kernels that multiply
 * matrices outside a MatMul/Gemm node's primitive (hetrt.Attention), and
 * the rates one thread reaches with it and with OpenBLAS: the compute
 * rates the CPU provider's estimates are relative to (docs/estimates.md).
 */
#ifndef HET_KERNELS_SGEMM_H
#define HET_KERNELS_SGEMM_H

#include <stdint.h>

/* Row-major C[m,n] = alpha * A[m,k] @ op(B), op = tb 'N' (B is [k,n]) or
 * 'T' (B is [n,k]): oneDNN's sgemm when built (on the calling thread's
 * OpenMP thread count), else OpenBLAS's. */
void het_kernel_sgemm(char tb, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc);

/* The two float32 GEMMs of the kernel library: the one Conv, MatMul,
 * Gemm and hetrt.Attention run on (het_kernel_sgemm: oneDNN when built),
 * and OpenBLAS's, which ConvTranspose, LSTM/GRU/RNN and a MatMul without
 * constant B run on (the same one without oneDNN). */
typedef enum het_kernel_gemm {
  HET_KERNEL_GEMM_OWN,
  HET_KERNEL_GEMM_BLAS,
} het_kernel_gemm;

/* FLOP/s of gemm on one thread: 256x256x256 products on a thread of its
 * own (held to one OpenMP thread; for OpenBLAS, whose count is
 * process-wide, the count is set to 1 for the probe and restored), the
 * best of five ~4 ms windows, so a briefly busy core does not lower it.
 * About 25 ms; 0 when it could not run (out of memory, no thread).
 * Thread-safe, except that the OpenBLAS probe briefly changes OpenBLAS's
 * thread count for the whole process. */
double het_kernel_sgemm_rate(het_kernel_gemm gemm);

#endif
