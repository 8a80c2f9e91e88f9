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

/* Settings handed to a provider when a session creates it. */
typedef struct het_provider_config {
  int threads;
} het_provider_config;

/* Per-run state the executor hands to run: the value table of this run.
 * values[id] is the tensor of value id (NULL until produced).  A provider
 * stores each output it produces with het_run_ctx_set_output semantics
 * described in the executor; in-tree providers use src/executor/run.h. */
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
} het_provider_vtable;

#ifdef __cplusplus
}
#endif

#endif /* HETRT_PROVIDER_H */
