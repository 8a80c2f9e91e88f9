// kernels.cu — the CUDA plugin's own float32 kernels: broadcast binary
// ops, unary ops and last-axis Softmax.  Grid-stride loops, so any n runs
// with a bounded grid; Softmax is one block per row, reducing in shared
// memory in float32.
#include "providers/cuda/cuda_kernels.h"

#include <math.h>

namespace {

const int kThreads = 256;

int blocks_for(long long n) {
  long long b = (n + kThreads - 1) / kThreads;
  if (b > 65535LL * 8)
    b = 65535LL * 8;
  return b < 1 ? 1 : (int)b;
}

__device__ float apply_binary(int op, float a, float b) {
  switch (op) {
  case HET_CUDA_ADD: return a + b;
  case HET_CUDA_SUB: return a - b;
  case HET_CUDA_MUL: return a * b;
  default: return a / b;
  }
}

__global__ void binary_same(int op, const float *a, const float *b, float *y,
                            long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = apply_binary(op, a[i], b[i]);
}

__global__ void binary_bcast(int op, const float *a, const float *b, float *y,
                             long long n, het_cuda_bcast bc) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    long long rest = i, ia = 0, ib = 0;
    for (int d = bc.rank - 1; d >= 0; d--) {
      long long k = rest % bc.out_dims[d];
      rest /= bc.out_dims[d];
      ia += k * bc.a_strides[d];
      ib += k * bc.b_strides[d];
    }
    y[i] = apply_binary(op, a[ia], b[ib]);
  }
}

__global__ void unary(int op, const float *x, float *y, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    float v = x[i];
    switch (op) {
    case HET_CUDA_RELU: v = v > 0.f ? v : 0.f; break;
    case HET_CUDA_SIGMOID: v = 1.f / (1.f + expf(-v)); break;
    case HET_CUDA_TANH: v = tanhf(v); break;
    case HET_CUDA_EXP: v = expf(v); break;
    case HET_CUDA_NEG: v = -v; break;
    case HET_CUDA_ABS: v = fabsf(v); break;
    case HET_CUDA_SQRT: v = sqrtf(v); break;
    default: v = erff(v); break;
    }
    y[i] = v;
  }
}

__global__ void softmax_rows(const float *x, float *y, long long cols) {
  __shared__ float red[kThreads];
  const float *row = x + blockIdx.x * cols;
  float *out = y + blockIdx.x * cols;
  float m = -INFINITY;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    m = fmaxf(m, row[c]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.f;
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    sum += expf(row[c] - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  float inv = 1.f / red[0];
  for (long long c = threadIdx.x; c < cols; c += blockDim.x)
    out[c] = expf(row[c] - m) * inv;
}

} // namespace

extern "C" cudaError_t het_cuda_binary_f32(int op, const float *a,
                                           const float *b, float *y,
                                           long long n,
                                           const het_cuda_bcast *bc,
                                           cudaStream_t s) {
  if (n <= 0)
    return cudaSuccess;
  if (!bc)
    binary_same<<<blocks_for(n), kThreads, 0, s>>>(op, a, b, y, n);
  else
    binary_bcast<<<blocks_for(n), kThreads, 0, s>>>(op, a, b, y, n, *bc);
  return cudaGetLastError();
}

extern "C" cudaError_t het_cuda_unary_f32(int op, const float *x, float *y,
                                          long long n, cudaStream_t s) {
  if (n <= 0)
    return cudaSuccess;
  unary<<<blocks_for(n), kThreads, 0, s>>>(op, x, y, n);
  return cudaGetLastError();
}

extern "C" cudaError_t het_cuda_softmax_f32(const float *x, float *y,
                                            long long rows, long long cols,
                                            cudaStream_t s) {
  if (rows <= 0 || cols <= 0)
    return cudaSuccess;
  if (rows > 2147483647LL)
    return cudaErrorInvalidValue;
  softmax_rows<<<(unsigned)rows, kThreads, 0, s>>>(x, y, cols);
  return cudaGetLastError();
}
