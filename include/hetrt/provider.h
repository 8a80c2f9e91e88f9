/* provider.h — the execution-provider ABI for backend writers.
 *
 * A provider is a `static const het_provider_vtable` with designated
 * initializers.  abi_version comes first; slots are only ever appended.  A
 * NULL slot means "not supported" and the core supplies the default (for
 * example host memory for allocation and a synchronous memcpy for copies).
 * Graph and node types are opaque here; in-tree providers read them through
 * the core's internal headers.
 *
 * Versions: 1 ends at copy_to_host.  2 appends staging memory and
 * asynchronous copies (alloc_host .. copy_wait).  The core reads a slot
 * only from a vtable whose abi_version includes it (HET_PROVIDER_HAS), so a
 * provider built against version 1 keeps working: its copies stay
 * synchronous.
 */
#ifndef HETRT_PROVIDER_H
#define HETRT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/hetrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HET_PROVIDER_ABI_VERSION 2

/* Whether vtable vt (a pointer) has slot `slot` set: the slot exists in
 * the version vt was built against (first version named) and is not NULL. */
#define HET_PROVIDER_HAS(vt, version, slot)                                    \
  ((vt)->abi_version >= (version) && (vt)->slot != NULL)

/* Direction of an asynchronous copy (ABI 2). */
typedef enum het_copy_direction {
  HET_COPY_TO_DEVICE = 0, /* staging memory -> device block */
  HET_COPY_TO_HOST = 1,   /* device block -> staging memory */
} het_copy_direction;

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

  /* ---- ABI 2: staging memory and asynchronous copies ----
   * Optional, all four or none; used for large host<->device copies, which
   * the core splits into chunks through two staging buffers: while the
   * device copies chunk k from (or to) one buffer, the host fills (or
   * drains) the other.
   *
   * alloc_host: host memory the device copies from and to at full speed
   * (page-locked / pinned on real hardware): a plain host pointer aligned
   * to 64 bytes that the core reads and writes.  May be slow: free_host
   * may keep blocks for the next alloc_host (the provider frees them in
   * destroy). */
  het_status (*alloc_host)(void *state, size_t nbytes, void **ptr);
  void (*free_host)(void *state, void *ptr);
  /* Queues one copy of nbytes between host memory `host` (inside a block
   * from alloc_host) and bytes [offset, offset + nbytes) of the device
   * block `handle` on the device's copy stream, behind the copies queued
   * before it, and returns at once with *ticket.  Errors found at once (a
   * bad handle, a range past the block) are returned here and queue
   * nothing.  Until copy_wait returns for the ticket the caller does not
   * write `host` (TO_DEVICE) or read it (TO_HOST).  Thread-safe. */
  het_status (*copy_submit)(void *state, het_copy_direction direction,
                            void *handle, size_t offset, void *host,
                            size_t nbytes, void **ticket);
  /* Blocks (without spinning) until the ticket's copy is done, releases
   * the ticket and returns the copy's status (its message re-raised on the
   * calling thread).  Every ticket is waited for exactly once. */
  het_status (*copy_wait)(void *state, void *ticket);
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
