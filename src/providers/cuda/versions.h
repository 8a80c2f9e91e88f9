/* versions.h — which CUDA driver and library versions the CUDA plugin can
 * run with, as a pure function of the numbers (testable without a GPU). */
#ifndef HET_CUDA_VERSIONS_H
#define HET_CUDA_VERSIONS_H

#include <stdbool.h>
#include <stddef.h>

/* Versions as CUDA writes them: runtime and driver 1000*major + 10*minor
 * (13000 = 13.0; driver 0 = no driver loaded), cuBLASLt
 * 10000*major + 100*minor + patch. */
typedef struct het_cuda_versions {
  int runtime_built, runtime_found;
  int driver;
  long cublaslt_built, cublaslt_found;
} het_cuda_versions;

/* Whether the plugin's libraries can be used at all: the runtime and
 * cuBLASLt found must have the major version the plugin was built for
 * (their ABIs change with it).  why (cap bytes) says what is wrong. */
bool het_cuda_libraries_ok(const het_cuda_versions *v, char *why, size_t cap);

/* Whether the driver can run this runtime: present, and supporting at
 * least the runtime's major version (CUDA's minor-version compatibility
 * covers the minor). */
bool het_cuda_driver_ok(const het_cuda_versions *v, char *why, size_t cap);

#endif
