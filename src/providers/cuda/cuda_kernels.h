/* cuda_kernels.h — the CUDA plugin's own kernels (kernels.cu), callable
 * from C: each enqueues on stream s and returns the launch's error.  Kept
 * free of hetrt headers so nvcc compiles kernels.cu on its own. */
#ifndef HET_CUDA_KERNELS_H
#define HET_CUDA_KERNELS_H

#include <cuda_runtime.h>

/* ---- own kernels (kernels.cu); each returns the launch's error ---------- */

enum { HET_CUDA_MAX_RANK = 8 };
/* Broadcast operand: its dims' strides in elements over the output's
 * rank (0 where it broadcasts). */
typedef struct het_cuda_bcast {
  int rank;
  long long out_dims[HET_CUDA_MAX_RANK];
  long long a_strides[HET_CUDA_MAX_RANK];
  long long b_strides[HET_CUDA_MAX_RANK];
} het_cuda_bcast;

enum { HET_CUDA_ADD, HET_CUDA_SUB, HET_CUDA_MUL, HET_CUDA_DIV };
enum { HET_CUDA_RELU, HET_CUDA_SIGMOID, HET_CUDA_TANH, HET_CUDA_EXP,
       HET_CUDA_NEG, HET_CUDA_ABS, HET_CUDA_SQRT, HET_CUDA_ERF };

#ifdef __cplusplus
extern "C" {
#endif
cudaError_t het_cuda_binary_f32(int op, const float *a, const float *b,
                                float *y, long long n,
                                const het_cuda_bcast *bc, cudaStream_t s);
cudaError_t het_cuda_unary_f32(int op, const float *x, float *y, long long n,
                               cudaStream_t s);
/* Softmax over the last axis: rows of `cols` elements. */
cudaError_t het_cuda_softmax_f32(const float *x, float *y, long long rows,
                                 long long cols, cudaStream_t s);
#ifdef __cplusplus
}
#endif

#endif
