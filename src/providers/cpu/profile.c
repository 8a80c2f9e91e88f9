/* profile.c — the CPU's device facts (het_cpu_device_info): peak FLOP/s
 * from a ~20 ms SGEMM through cblas (on OpenBLAS's threads), one thread's
 * rates of the kernels' float32 GEMMs (het_cpu_thread_flops) and memory
 * bandwidth from a memcpy probe, measured once and cached on disk (so
 * placements computed from it are the same in every process on this
 * machine) and per process (pthread_once); a YAML device profile may
 * override any field (het_cpu_device_info_load, read by core/devprofile.c).
 */
#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/cache.h"
#include "core/devprofile.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "kernels/sgemm.h"
#include "providers/cpu/profile.h"

#define HET_CPU_GEMM_N 256
#define HET_CPU_GEMM_SECONDS 0.02
#define HET_CPU_COPY_BYTES ((size_t)8 << 20)
#define HET_CPU_COPY_SECONDS 0.01
#define HET_CPU_LAUNCH 1e-6

static pthread_once_t het_cpu_once = PTHREAD_ONCE_INIT;
static het_device_info het_cpu_measured;
static het_cpu_thread_rates het_cpu_measured_thread;

static double het_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FLOP/s of a square SGEMM repeated for about HET_CPU_GEMM_SECONDS. */
static double het_cpu_bench_gemm(void) {
  const int n = HET_CPU_GEMM_N;
  size_t count = (size_t)n * n;
  float *a = malloc(3 * count * sizeof(float));
  if (!a)
    return 0;
  float *b = a + count, *c = b + count;
  for (size_t i = 0; i < count; i++) {
    a[i] = (float)(i % 7) * 0.25f;
    b[i] = (float)(i % 5) * 0.5f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
              b, n, 0.0f, c, n); /* warm-up: thread pool, caches */
  double start = het_cpu_now(), elapsed = 0;
  long reps = 0;
  do {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a,
                n, b, n, 0.0f, c, n);
    reps++;
    elapsed = het_cpu_now() - start;
  } while (elapsed < HET_CPU_GEMM_SECONDS);
  free(a);
  return elapsed > 0 ? 2.0 * n * n * (double)n * (double)reps / elapsed : 0;
}

/* Bytes/s moved by memcpy (read + write) for about HET_CPU_COPY_SECONDS. */
static double het_cpu_bench_copy(void) {
  char *src = malloc(2 * HET_CPU_COPY_BYTES);
  if (!src)
    return 0;
  char *dst = src + HET_CPU_COPY_BYTES;
  memset(src, 1, 2 * HET_CPU_COPY_BYTES);
  double start = het_cpu_now(), elapsed = 0;
  long reps = 0;
  do {
    memcpy(dst, src, HET_CPU_COPY_BYTES);
    src[reps % HET_CPU_COPY_BYTES] = (char)reps; /* keep the copy alive */
    reps++;
    elapsed = het_cpu_now() - start;
  } while (elapsed < HET_CPU_COPY_SECONDS);
  volatile char sink = dst[reps % HET_CPU_COPY_BYTES];
  (void)sink;
  free(src);
  return elapsed > 0 ? 2.0 * (double)HET_CPU_COPY_BYTES * (double)reps / elapsed
                     : 0;
}

/* The cache file: cpu-profile.txt in the cache folder (core/cache.h). */
static bool het_cpu_cache_path(char *path, size_t cap, bool make_dirs) {
  return het_cache_path("cpu-profile.txt", path, cap, make_dirs);
}

/* The cached device rates into m and the one-thread rates into *thread
 * (zero when the file predates their lines: such a cache stays valid, and
 * only the one-thread probes run). */
static bool het_cpu_cache_load(het_device_info *m,
                               het_cpu_thread_rates *thread) {
  char path[4096];
  if (!het_cpu_cache_path(path, sizeof path, false))
    return false;
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  double flops = 0, bw = 0, own = 0, blas = 0;
  int n = fscanf(f, "peak_flops_f32 %lf memory_bandwidth %lf", &flops, &bw);
  if (n == 2 &&
      fscanf(f, " gemm_flops_f32_thread %lf blas_flops_f32_thread %lf", &own,
             &blas) != 2)
    own = blas = 0;
  fclose(f);
  if (n != 2 || !(flops > 0) || !(bw > 0) || !isfinite(flops) || !isfinite(bw))
    return false;
  m->peak_flops_f32 = flops;
  m->memory_bandwidth = bw;
  bool ok = own > 0 && isfinite(own) && blas > 0 && isfinite(blas);
  thread->gemm = ok ? own : 0;
  thread->blas = ok ? blas : 0;
  return true;
}

/* Best effort: a machine without a writable cache measures every time. */
static void het_cpu_cache_store(const het_device_info *m,
                                const het_cpu_thread_rates *thread) {
  char path[4096], tmp[4200];
  if (!het_cpu_cache_path(path, sizeof path, true))
    return;
  snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return;
  fprintf(f, "peak_flops_f32 %.6g\nmemory_bandwidth %.6g\n",
          m->peak_flops_f32, m->memory_bandwidth);
  fprintf(f, "gemm_flops_f32_thread %.6g\nblas_flops_f32_thread %.6g\n",
          thread->gemm, thread->blas);
  if (fclose(f) == 0)
    rename(tmp, path);
  else
    remove(tmp);
}

/* int8 peak per float32 peak: 4 where the int8 products run on VNNI
 * (vpdpbusd adds four u8 x s8 products per 32-bit lane where an FMA adds
 * one float product; het_kernels_int8_fast), else 1 (the reference int8
 * loops are no faster than float; estimate.c's int8_reference row says
 * how much slower they are). */
static double het_cpu_i8_per_f32(void) {
  return het_kernels_int8_fast() ? 4.0 : 1.0;
}

static void het_cpu_measure(void) {
  het_device_info *m = &het_cpu_measured;
  het_cpu_thread_rates *thread = &het_cpu_measured_thread;
  memset(m, 0, sizeof *m);
  m->host_memory = true;
  bool cached = het_cpu_cache_load(m, thread);
  if (!cached) {
    m->peak_flops_f32 = het_cpu_bench_gemm();
    m->memory_bandwidth = het_cpu_bench_copy();
  }
  if (!cached || !(thread->gemm > 0)) {
    thread->gemm = het_kernel_sgemm_rate(HET_KERNEL_GEMM_OWN);
    thread->blas = het_kernel_sgemm_rate(HET_KERNEL_GEMM_BLAS);
    if (m->peak_flops_f32 > 0 && m->memory_bandwidth > 0 && thread->gemm > 0 &&
        thread->blas > 0)
      het_cpu_cache_store(m, thread);
  }
  if (!(m->peak_flops_f32 > 0))
    m->peak_flops_f32 = 1e10; /* out of memory: a modest default */
  if (!(m->memory_bandwidth > 0))
    m->memory_bandwidth = 1e10;
  m->peak_flops_f16 = m->peak_flops_f32;
  m->peak_flops_i8 = m->peak_flops_f32 * het_cpu_i8_per_f32();
  m->launch_overhead = HET_CPU_LAUNCH;
  m->preferred_layout = HET_LAYOUT_NCHW;
}

het_status het_cpu_device_info(het_device_info *out) {
  pthread_once(&het_cpu_once, het_cpu_measure);
  *out = het_cpu_measured;
  return HET_OK;
}

het_cpu_thread_rates het_cpu_thread_flops(void) {
  pthread_once(&het_cpu_once, het_cpu_measure);
  return het_cpu_measured_thread;
}

/* ---- profile file (the format of configs/devices/README.md) ---- */

het_status het_cpu_device_info_load(const char *path, het_device_info *out) {
  het_device_profile p;
  HET_TRY(het_device_profile_load(path, "cpu", &p));
  het_device_info info = {.host_memory = true,
                          .launch_overhead = HET_CPU_LAUNCH};
  if (!(p.set & (1u << HET_PROFILE_F32)) ||
      !(p.set & (1u << HET_PROFILE_MEMBW)))
    het_cpu_device_info(&info); /* a rate is missing: measure */
  het_device_profile_apply(&p, &info);
  if (!(p.set & (1u << HET_PROFILE_F16)))
    info.peak_flops_f16 = info.peak_flops_f32;
  if (!(p.set & (1u << HET_PROFILE_I8)))
    info.peak_flops_i8 = info.peak_flops_f32 * het_cpu_i8_per_f32();
  info.host_memory = true;
  *out = info;
  return HET_OK;
}
