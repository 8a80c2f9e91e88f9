/* provider.h — the execution-provider ABI for backend writers.
 *
 * A provider is a `static const het_provider_vtable` with designated
 * initializers.  abi_version comes first; slots are only ever appended.  A
 * NULL slot means "not supported" and the core supplies the default (for
 * example host memory for allocation and a synchronous memcpy for copies).
 * Graph and node types are opaque here; in-tree providers read them through
 * the core's internal headers.
 */
#ifndef HETRT_PROVIDER_H
#define HETRT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/hetrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HET_PROVIDER_ABI_VERSION 1

typedef struct het_graph het_graph;

typedef enum het_device_kind {
  HET_DEVICE_CPU = 0,
  HET_DEVICE_CUDA = 1,
  HET_DEVICE_EMU = 2,
} het_device_kind;

/* One node's answer from get_capability.  reason is filled whether the
 * node is claimed ("float32 Conv via oneDNN") or refused ("int16 not
 * supported"); it is NUL-terminated and truncated to fit. */
#define HET_CLAIM_REASON_CAP 160
typedef struct het_claim {
  bool claimed;
  char reason[HET_CLAIM_REASON_CAP];
} het_claim;

/* Settings handed to a provider when a session creates it.  options are
 * the session's "<provider>.<key>" options with the prefix removed
 * ("emu.mode=timed" reaches the emu provider as mode=timed); a provider
 * refuses keys it does not know with ERR_INVALID_ARGUMENT naming them. */
typedef struct het_provider_config {
  int threads;
  const char *profile_path; /* device profile (YAML) or NULL for defaults */
  int n_options;
  const char *const *option_keys;
  const char *const *option_values;
} het_provider_config;

/* Preferred activation layout of a provider. */
typedef enum het_layout {
  HET_LAYOUT_NCHW = 0,
  HET_LAYOUT_NHWC = 1,
} het_layout;

/* What the cost model and memory planner need to know about a device.
 * Times in seconds, rates in per-second units. */
typedef struct het_device_info {
  bool host_memory;          /* tensors live in plain host memory */
  size_t memory_capacity;    /* bytes; 0 = unlimited */
  double peak_flops_f32;     /* FLOP/s for float32 work */
  double peak_flops_f16;     /* FLOP/s for float16/bfloat16 work */
  double peak_flops_i8;      /* OP/s for int8 work */
  double memory_bandwidth;   /* bytes/s inside the device */
  double link_bandwidth;     /* bytes/s between device and host */
  double link_latency;       /* per transfer */
  double launch_overhead;    /* per subgraph launch */
  het_layout preferred_layout; /* layout of rank-4 tensors at rest */
  het_dtype float32_as;      /* float32 tensors are kept (and computed) in
                                this type on the device; UNDEFINED = as is */
} het_device_info;

/* Per-run state the executor hands to run: the value table of this run.
 * In-tree providers use src/executor/run.h. */
typedef struct het_run_ctx het_run_ctx;

typedef struct het_provider_vtable {
  unsigned abi_version; /* HET_PROVIDER_ABI_VERSION */
  const char *name;     /* "cpu", "cuda", ... */
  het_device_kind device_kind;

  /* Probes the device and creates the provider's state.  Returns
   * ERR_NO_DEVICE when the hardware is absent. */
  het_status (*create)(const het_provider_config *config, void **state);
  void (*destroy)(void *state);

  /* Fills claims[node_id] for every node of graph (n = node count). */
  het_status (*get_capability)(void *state, const het_graph *graph,
                               het_claim *claims);

  /* Estimated seconds to run node on this provider; NULL = unknown. */
  het_status (*estimate_cost)(void *state, const het_graph *graph,
                              int node, double *seconds);

  /* Prepares the nodes (ids, in topological order) as one subgraph:
   * kernel selection, weight packing, fusion inside the subgraph.  *out is
   * provider-owned until destroy_compiled. */
  het_status (*compile)(void *state, const het_graph *graph,
                        const int *nodes, int n_nodes, void **out);

  /* Runs a compiled subgraph.  Thread-safe: several runs may use one
   * compiled subgraph at once, each with its own ctx. */
  het_status (*run)(void *state, void *compiled, het_run_ctx *ctx);

  void (*destroy_compiled)(void *state, void *compiled);

  /* ---- device facts (NULL: a host device with unknown speed) ---- */
  het_status (*get_device_info)(void *state, het_device_info *out);

  /* ---- memory (NULL: plain host memory from malloc) ----
   * alloc returns an opaque handle that only this provider can read;
   * ERR_CAPACITY when the device is full. */
  het_status (*alloc)(void *state, size_t nbytes, void **handle);
  void (*free)(void *state, void *handle);
  /* Synchronous copies between host memory and device memory. */
  het_status (*copy_from_host)(void *state, void *dst_handle,
                               const void *src, size_t nbytes);
  het_status (*copy_to_host)(void *state, void *dst, const void *src_handle,
                             size_t nbytes);
} het_provider_vtable;

/* A created provider: its vtable and state, owned by a session. */
typedef struct het_device {
  const het_provider_vtable *vt;
  void *state;
  int index; /* position in the session's provider list */
} het_device;

#ifdef __cplusplus
}
#endif

#endif /* HETRT_PROVIDER_H */
