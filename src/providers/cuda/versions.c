/* versions.c — the CUDA plugin's version rules (versions.h). */
#include "providers/cuda/versions.h"

#include <stdio.h>

static void het_cuda_ver(int v, char *out, size_t cap) {
  snprintf(out, cap, "%d.%d", v / 1000, (v % 1000) / 10);
}

bool het_cuda_libraries_ok(const het_cuda_versions *v, char *why,
                           size_t cap) {
  char built[16], found[16];
  if (v->runtime_found / 1000 != v->runtime_built / 1000) {
    het_cuda_ver(v->runtime_built, built, sizeof built);
    het_cuda_ver(v->runtime_found, found, sizeof found);
    snprintf(why, cap,
             "CUDA runtime %s found, the plugin was built for %s (the "
             "major versions must match)",
             found, built);
    return false;
  }
  if (v->cublaslt_found / 10000 != v->cublaslt_built / 10000) {
    snprintf(why, cap,
             "cuBLASLt %ld.%ld found, the plugin was built for %ld.%ld "
             "(the major versions must match)",
             v->cublaslt_found / 10000, v->cublaslt_found / 100 % 100,
             v->cublaslt_built / 10000, v->cublaslt_built / 100 % 100);
    return false;
  }
  return true;
}

bool het_cuda_driver_ok(const het_cuda_versions *v, char *why, size_t cap) {
  char built[16], driver[16];
  if (v->driver <= 0) {
    snprintf(why, cap, "no NVIDIA driver is loaded");
    return false;
  }
  if (v->driver / 1000 < v->runtime_found / 1000) {
    het_cuda_ver(v->driver, driver, sizeof driver);
    het_cuda_ver(v->runtime_found, built, sizeof built);
    snprintf(why, cap,
             "the NVIDIA driver supports CUDA %s, the CUDA runtime in use "
             "is %s: update the driver",
             driver, built);
    return false;
  }
  return true;
}
