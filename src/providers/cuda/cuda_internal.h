/* cuda_internal.h — the CUDA provider plugin's shared declarations (only
 * files under src/providers/cuda include it).
 * Levels: a device (het_cuda_device, from device_open: one CUDA device,
 * shared by the sessions of an env) and an instance per session
 * (het_cuda_state: its cuBLASLt handle).  Streams are CUDA streams
 * (non-blocking), events CUDA events without timing; nothing in a run
 * synchronizes the device.
 */
#ifndef HET_CUDA_INTERNAL_H
#define HET_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdbool.h>

#include "core/ir.h"
#include "core/status.h"
#include "hetrt/provider.h"

/* A device: a GPU here, or (absent) one a device profile describes and
 * that is not present, which places and plans but never runs. */
typedef struct het_cuda_device {
  int index;
  char name[64];
  int sm_count, cc_major, cc_minor;
  size_t total_memory;
  het_device_info info;
  bool absent;
  char profile[256]; /* the profile's path, when there is one */
} het_cuda_device;

typedef struct het_cuda_state {
  het_cuda_device *dev;
  const het_device *self; /* the core's object for dev */
  cublasLtHandle_t lt;
} het_cuda_state;

/* NO_DEVICE for what on an absent device, naming its profile. */
het_status het_cuda_absent(const het_cuda_device *d, const char *what);

/* A CUDA error as a status naming the device and what failed. */
het_status het_cuda_fail(cudaError_t e, int device, const char *what);
#define HET_CUDA_TRY(call, device, what)                    \
  do {                                                      \
    cudaError_t het_cuda_e_ = (call);                       \
    if (het_cuda_e_ != cudaSuccess)                         \
      return het_cuda_fail(het_cuda_e_, (device), (what));  \
  } while (0)

/* ---- ops (ops.c) ---------------------------------------------------------- */

het_status het_cuda_get_capability(void *state, const het_graph *graph,
                                   het_claim *claims);
het_status het_cuda_estimate_cost(void *state, const het_graph *graph,
                                  int node, double *seconds);
het_status het_cuda_compile(void *state, const het_graph *graph,
                            const int *nodes, int n_nodes, void **out);
void het_cuda_destroy_compiled(void *state, void *compiled);
het_status het_cuda_run_async(void *state, void *compiled, void *stream,
                              const het_kernel_io *io);
het_status het_cuda_compiled_scratch(void *state, void *compiled,
                                     const het_kernel_io *io, size_t *bytes);

#include "providers/cuda/cuda_kernels.h"

#endif
