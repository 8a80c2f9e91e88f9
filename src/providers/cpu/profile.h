/* profile.h — the CPU's device facts for the cost model: measured once
 * per process by a short microbenchmark, or read from a device profile.
 */
#ifndef HET_CPU_PROFILE_H
#define HET_CPU_PROFILE_H

#include "hetrt/provider.h"

/* The host CPU's facts: host memory, unlimited capacity, no link, a tiny
 * launch overhead, and peak FLOP/s and memory bandwidth measured on first
 * use (a ~20 ms SGEMM through cblas and a ~10 ms memcpy probe), cached on
 * disk ($HETRT_CACHE_DIR, $XDG_CACHE_HOME/hetrt or ~/.cache/hetrt:
 * cpu-profile.txt; delete it to measure again) and process-wide
 * (thread-safe, pthread_once).  float16 and int8 peaks are the
 * float32 peak (the CPU kernels compute in float32).  Never fails. */
het_status het_cpu_device_info(het_device_info *out);

/* One thread's float32 FLOP/s with the kernels' two GEMMs
 * (het_kernel_sgemm_rate): gemm, oneDNN's when built, which Conv, MatMul,
 * Gemm and hetrt.Attention run on, and blas, OpenBLAS's (ConvTranspose,
 * LSTM/GRU/RNN).  Measured and cached with het_cpu_device_info's facts
 * (cpu-profile.txt, lines gemm_flops_f32_thread and
 * blas_flops_f32_thread); zero when they could not be measured.  The CPU's
 * estimate (estimate.c) is relative to them.  Thread-safe; never fails. */
typedef struct het_cpu_thread_rates {
  double gemm, blas;
} het_cpu_thread_rates;
het_cpu_thread_rates het_cpu_thread_flops(void);

/* The facts from a YAML device profile in the format of
 * configs/devices/README.md (provider must be "cpu"): name,
 * memory_capacity (512MiB, 16GB, 0 = unlimited), peak_flops (a scalar
 * such as 200G or 1.5TFLOPS, or a mapping {float32, float16, int8}),
 * memory_bandwidth and link_bandwidth (20GB/s, 8e9), link_latency and
 * launch_overhead (1us, 2ms, 1e-6), preferred_layout (NCHW or NHWC).
 * Every key is optional; the microbenchmark runs only when peak float32
 * FLOP/s or memory bandwidth is left out, and float16/int8 peaks default to
 * float32's.  The result always has host_memory set.
 * Errors: IO (cannot open), INVALID_ARGUMENT (syntax, unknown or repeated
 * key, bad quantity, another provider), naming the file, line and key. */
het_status het_cpu_device_info_load(const char *path, het_device_info *out);

#endif
