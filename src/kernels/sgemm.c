/* sgemm.c — the kernel library's float32 GEMM outside the MatMul/Gemm
 * primitives (sgemm.h) and the one-thread rates of it and of OpenBLAS.
 * The probe multiplies fixed matrices on a thread it starts, so the
 * OpenMP thread count it sets there is no other thread's.
 */
#include "kernels/sgemm.h"

#include <cblas.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#ifdef HETRT_HAVE_DNNL
#include <dnnl.h>
#endif

#include "kernels/parallel.h"

#define HET_SGEMM_PROBE_N 256
#define HET_SGEMM_PROBE_WINDOWS 5
#define HET_SGEMM_PROBE_SECONDS 0.004

void het_kernel_sgemm(char tb, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb,
                      float *c, int64_t ldc) {
#ifdef HETRT_HAVE_DNNL
  if (dnnl_sgemm('N', tb, m, n, k, alpha, a, lda, b, ldb, 0.0f, c, ldc) ==
      dnnl_success)
    return;
#endif
  cblas_sgemm(CblasRowMajor, CblasNoTrans,
              tb == 'T' ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, 0.0f, c,
              (blasint)ldc);
}

static double het_sgemm_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct het_sgemm_probe_job {
  het_kernel_gemm gemm;
  double best; /* FLOP/s of the best window */
} het_sgemm_probe_job;

static void het_sgemm_probe_run(het_kernel_gemm gemm, const float *a,
                                const float *b, float *c) {
  const int n = HET_SGEMM_PROBE_N;
  if (gemm == HET_KERNEL_GEMM_OWN)
    het_kernel_sgemm('N', n, n, n, 1.0f, a, n, b, n, c, n);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
                b, n, 0.0f, c, n);
}

/* The probe's thread. */
static void *het_sgemm_probe(void *arg) {
  const int64_t n = HET_SGEMM_PROBE_N;
  het_sgemm_probe_job *job = arg;
  float *m = malloc(3 * (size_t)(n * n) * sizeof *m);
  if (!m)
    return NULL;
  for (int64_t i = 0; i < 2 * n * n; i++)
    m[i] = (float)(i % 7) * 0.25f - 0.75f;
  het_kernel_set_omp_threads(1);
  het_sgemm_probe_run(job->gemm, m, m + n * n, m + 2 * n * n); /* warm-up */
  for (int w = 0; w < HET_SGEMM_PROBE_WINDOWS; w++) {
    double t0 = het_sgemm_now(), elapsed;
    long reps = 0;
    do {
      het_sgemm_probe_run(job->gemm, m, m + n * n, m + 2 * n * n);
      reps++;
      elapsed = het_sgemm_now() - t0;
    } while (elapsed < HET_SGEMM_PROBE_SECONDS);
    double rate = 2.0 * (double)(n * n * n) * (double)reps / elapsed;
    if (rate > job->best)
      job->best = rate;
  }
  free(m);
  return NULL;
}

double het_kernel_sgemm_rate(het_kernel_gemm gemm) {
  het_sgemm_probe_job job = {.gemm = gemm, .best = 0};
  bool blas = gemm == HET_KERNEL_GEMM_BLAS;
#ifndef HETRT_HAVE_DNNL
  blas = true; /* het_kernel_sgemm is OpenBLAS's */
#endif
  int threads = blas ? openblas_get_num_threads() : 0;
  if (blas)
    het_kernel_set_blas_threads(1);
  pthread_t t;
  if (pthread_create(&t, NULL, het_sgemm_probe, &job) == 0)
    pthread_join(t, NULL);
  if (blas)
    het_kernel_set_blas_threads(threads);
  return job.best;
}
