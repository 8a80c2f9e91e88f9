/* provider.h — the execution-provider ABI for backend writers.
 *
 * A provider is a `static const het_provider_vtable` with designated
 * initializers.  abi_version comes first; slots are only ever appended.  A
 * NULL slot means "not supported" and the core supplies the default.  Graph
 * and tensor types are opaque here; a provider reaches tensors through the
 * kernel-I/O table of a run (het_kernel_io) and hetrt.h's accessors.
 *
 * Levels (ABI 3):
 *   - device: discovered once per het_env (device_count, device_open):
 *     name, kind, index, the facts the cost model needs (het_device_info),
 *     memory (device_alloc, pinned host_alloc), library handles;
 *   - instance: created per session on its device (create, receiving the
 *     device in het_provider_config); claims, costs, compiles and runs.
 * Device work is asynchronous: run_async and copy_async enqueue on a
 * stream and return; events order streams (event_record, stream_wait) and
 * let the host wait (event_synchronize).  Blocking is the core's decision,
 * made at documented points of the plan.
 *
 * Versions:
 *   1 ends at copy_to_host: synchronous run through a het_run_ctx, memory
 *     through alloc/free, synchronous copies;
 *   2 appends staging memory and asynchronous copies (alloc_host ..
 *     copy_wait);
 *   3 appends devices, streams, events, copy_async/can_copy, run_async with
 *     a het_kernel_io, scratch sizes, and the ahead-of-time slots;
 *   4 appends compute_type (the precision a claimed node computes in);
 *   5 appends device_plans_only (a device that stands for hardware that
 *     is not present: sessions place and plan on it but do not run).
 * The core reads a slot only from a vtable whose abi_version includes it
 * (HET_PROVIDER_HAS).  A provider built against version 1 or 2 keeps
 * working through core defaults: one device per session, its run and
 * copies executed synchronously on a core host stream, each device tensor
 * its own allocation.
 */
#ifndef HETRT_PROVIDER_H
#define HETRT_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>

#include "hetrt/hetrt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HET_PROVIDER_ABI_VERSION 5

/* Whether vtable vt (a pointer) has slot `slot` set: the slot exists in
 * the version vt was built against (first version named) and is not NULL. */
#define HET_PROVIDER_HAS(vt, version, slot)                                    \
  ((vt)->abi_version >= (version) && (vt)->slot != NULL)

/* Direction of an asynchronous staged copy (ABI 2). */
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

struct het_provider_vtable;

/* A device: one per (provider, index, profile) in a het_env, opened once
 * and shared by the sessions of that env (ABI 3; for an ABI 1-2 provider
 * the core makes one per session whose state is the instance's).  Tensors
 * in its memory point to it.  Owned by the core; providers read it. */
#define HET_DEVICE_NAME_CAP 64
typedef struct het_device {
  const struct het_provider_vtable *vt;
  void *state;               /* from device_open (ABI 3) */
  int index;                 /* among the provider's devices */
  het_device_kind kind;
  char name[HET_DEVICE_NAME_CAP]; /* "emu:0", from device_open */
  het_device_info info;
  /* set by the core from device_plans_only (ABI 5) after device_open */
  bool plans_only;
} het_device;

/* A provider instance of a session on its device. */
typedef struct het_ep {
  const struct het_provider_vtable *vt;
  void *state;               /* from create */
  const het_device *device;
  int index;                 /* position in the session's provider list */
} het_ep;

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
  /* ABI 3: the device this instance runs on (opened by device_open);
   * borrowed, valid for the instance's lifetime. */
  const het_device *device;
  /* ABI 3: the session option "deterministic": make no choice by timing
   * or by anything else that may differ between runs, sessions,
   * processes or thread counts (a recorded choice, such as a plan's, or
   * a fixed one instead).  Appended: an older provider never reads it. */
  bool deterministic;
} het_provider_config;

/* An event as another stream sees it: the owning instance's slots and its
 * handle.  A provider whose stream must wait on an event of another
 * provider (vt differs) or device waits on the host (event_synchronize) in
 * stream order, e.g. from a host_func. */
typedef struct het_event_ref {
  const struct het_provider_vtable *vt;
  void *instance;
  void *event;
  const het_device *device;
} het_event_ref;

/* Stream flags (stream_create). */
enum {
  /* The host thread that enqueues is the stream: work runs inside the
   * enqueueing call, in order (host-memory providers; the core asks for
   * it where no overlap is planned). */
  HET_STREAM_INLINE = 1u << 0,
};

/* Reports one node's start and end (seconds on a monotonic clock). */
typedef void (*het_record_fn)(void *recorder, int node, double t0, double t1);

/* The kernel-I/O table of one run of a compiled subgraph (ABI 3).  Every
 * value a node of the subgraph reads or writes is placed before run_async
 * is called: values[v] has its dtype, shape and memory (device memory of
 * this provider, or host memory for host-memory providers).  Exceptions,
 * the documented sync points inside a step: a node with dynamic[node] set
 * has outputs whose shape is known only from its inputs' values; before
 * running it the provider calls prepare_node, which infers and places its
 * outputs (an output it still leaves with data == NULL is sized by the
 * kernel: data-dependent shapes such as NonZero).  The table stays valid
 * until the stream has finished the run. */
typedef struct het_kernel_io {
  het_tensor *const *values;  /* per value id of the compiled graph */
  int n_values;
  const bool *dynamic;        /* per node id, or NULL: no dynamic node */
  /* host_inputs: host-readable views of the node's inputs (NULL entries
   * for omitted ones), or NULL when they are host memory already. */
  het_status (*prepare_node)(const struct het_kernel_io *io, int node,
                             het_tensor *const *host_inputs);
  void *scratch;              /* compiled_scratch bytes of this provider's
                                 memory, live for this run only */
  size_t scratch_bytes;
  het_record_fn record;       /* NULL: not timed */
  void *recorder;
  void *core;                 /* the core's, do not touch */
} het_kernel_io;

/* ABI 1-2 run context (legacy run slot).  A legacy provider reads inputs
 * and takes its output tensors through these; the core places them. */
typedef struct het_run_ctx het_run_ctx;

typedef struct het_provider_vtable {
  unsigned abi_version; /* HET_PROVIDER_ABI_VERSION */
  const char *name;     /* "cpu", "cuda", ... */
  het_device_kind device_kind;

  /* ABI 1.  Creates the instance's state.  Returns ERR_NO_DEVICE when the
   * hardware is absent. */
  het_status (*create)(const het_provider_config *config, void **state);
  void (*destroy)(void *state);

  /* ABI 1.  Fills claims[node_id] for every node of graph (n = node
   * count). */
  het_status (*get_capability)(void *state, const het_graph *graph,
                               het_claim *claims);

  /* ABI 1.  Estimated seconds to run node on this provider; NULL: the
   * core's roofline on the device's facts. */
  het_status (*estimate_cost)(void *state, const het_graph *graph,
                              int node, double *seconds);

  /* ABI 1.  Prepares the nodes (ids, in topological order) as one
   * subgraph: kernel selection, weight packing, fusion inside the
   * subgraph.  *out is provider-owned until destroy_compiled. */
  het_status (*compile)(void *state, const het_graph *graph,
                        const int *nodes, int n_nodes, void **out);

  /* ABI 1-2 only: runs a compiled subgraph synchronously.  Ignored when
   * run_async (ABI 3) is set. */
  het_status (*run)(void *state, void *compiled, het_run_ctx *ctx);

  void (*destroy_compiled)(void *state, void *compiled);

  /* ABI 1.  Device facts of the instance (NULL: the device's, or for ABI
   * 1-2 a host device with unknown speed). */
  het_status (*get_device_info)(void *state, het_device_info *out);

  /* ABI 1-2 memory (the instance's state): alloc returns an opaque handle
   * that only this provider can read; ERR_CAPACITY when the device is
   * full.  Synchronous whole-block copies. */
  het_status (*alloc)(void *state, size_t nbytes, void **handle);
  void (*free)(void *state, void *handle);
  het_status (*copy_from_host)(void *state, void *dst_handle,
                               const void *src, size_t nbytes);
  het_status (*copy_to_host)(void *state, void *dst, const void *src_handle,
                             size_t nbytes);

  /* ---- ABI 2: staging memory and asynchronous copies ----
   * Optional, all four or none; the core splits large host<->device copies
   * of an ABI 2 provider into chunks through two staging buffers.
   * alloc_host: page-locked host memory (a plain pointer aligned to 64
   * bytes).  copy_submit queues a copy of nbytes between `host` (inside a
   * block from alloc_host) and bytes [offset, offset + nbytes) of device
   * block `handle` and returns a ticket; copy_wait blocks until it is done
   * and returns its status.  Every ticket is waited for exactly once. */
  het_status (*alloc_host)(void *state, size_t nbytes, void **ptr);
  void (*free_host)(void *state, void *ptr);
  het_status (*copy_submit)(void *state, het_copy_direction direction,
                            void *handle, size_t offset, void *host,
                            size_t nbytes, void **ticket);
  het_status (*copy_wait)(void *state, void *ticket);

  /* ---- ABI 3: devices (device state) ----
   * device_count: how many devices profile_path (NULL: defaults) gives.
   * device_open: opens device index; writes its state, facts and name
   * (cap bytes, NUL-terminated).  Called once per env and device.
   * device_alloc: device memory; the address is the device's own (not a
   * host pointer unless info.host_memory) and offsets inside a block are
   * valid addresses (ptr + k), as copy_async and kernels take them.
   * ERR_CAPACITY naming the device and the bytes when it is full.
   * host_alloc: host memory the device copies from and to at full speed
   * (pinned), 64-byte aligned; NULL: the core uses plain host memory.
   * All thread-safe. */
  het_status (*device_count)(const char *profile_path, int *count);
  het_status (*device_open)(int index, const char *profile_path,
                            void **device_state, het_device_info *info,
                            char *name, size_t name_cap);
  void (*device_close)(void *device_state);
  het_status (*device_alloc)(void *device_state, size_t nbytes, void **ptr);
  void (*device_free)(void *device_state, void *ptr);
  het_status (*host_alloc)(void *device_state, size_t nbytes, void **ptr);
  void (*host_free)(void *device_state, void *ptr);

  /* ---- ABI 3: streams and events (instance state) ----
   * A stream is an in-order queue of work on the device.  A failure of
   * queued work makes the stream skip what follows until
   * stream_synchronize, which waits for everything enqueued, returns the
   * first failure (its message re-raised on the calling thread) and clears
   * it.  event_record marks the stream's current end; stream_wait makes
   * later work on stream wait for a recorded event (of this instance or,
   * through the ref, of another); event_synchronize blocks the host until
   * the event's work is done and returns a failure that happened before
   * it; event_query says whether it is done without blocking.  host_func
   * runs fn(arg) on the host when the stream reaches it.  None of these
   * blocks the host except the synchronize slots (and an inline stream,
   * which runs work in the enqueueing call).  Thread-safe across streams;
   * one stream is fed by one thread at a time. */
  het_status (*stream_create)(void *state, unsigned flags, void **stream);
  void (*stream_destroy)(void *state, void *stream);
  het_status (*stream_synchronize)(void *state, void *stream);
  het_status (*event_create)(void *state, void **event);
  void (*event_destroy)(void *state, void *event);
  het_status (*event_record)(void *state, void *event, void *stream);
  het_status (*stream_wait)(void *state, void *stream,
                            const het_event_ref *event);
  het_status (*event_synchronize)(void *state, void *event);
  het_status (*event_query)(void *state, void *event, bool *done);
  het_status (*host_func)(void *state, void *stream, void (*fn)(void *arg),
                          void *arg);

  /* ---- ABI 3: copies and runs ----
   * can_copy: whether copy_async of this instance moves bytes from src's
   * memory to dst's (NULL device = host memory).  The core routes a copy
   * through host memory only where neither end can.  copy_async enqueues a
   * copy of nbytes from src to dst (addresses in their devices' memory) on
   * stream.  run_async enqueues a run of compiled over io on stream; it
   * never allocates the values io names (dynamic nodes aside) and never
   * blocks the host (unless the stream is inline).  Errors found at once
   * (a bad address) are returned and enqueue nothing. */
  bool (*can_copy)(void *state, const het_device *src, const het_device *dst);
  het_status (*copy_async)(void *state, void *dst, const het_device *dst_dev,
                           const void *src, const het_device *src_dev,
                           size_t nbytes, void *stream);
  het_status (*run_async)(void *state, void *compiled, void *stream,
                          const het_kernel_io *io);
  /* Scratch bytes of device memory one run of compiled needs for the
   * shapes in io (values placed without data); NULL: none. */
  het_status (*compiled_scratch)(void *state, void *compiled,
                                 const het_kernel_io *io, size_t *bytes);

  /* ---- ABI 3, ahead-of-time plans (docs/plan-format.md) ----
   * compiled_serialize: a byte image of compiled that a plan file keeps
   * (caller frees with het_string_destroy); compiled_deserialize: compiled
   * back from such an image for the same nodes of the same graph, doing
   * none of the work the image saves (timing, tuning); a NULL slot makes
   * the loading session compile as usual.  compat_string: what the plan's
   * blobs depend on, static, as "key=value" entries separated by ';' (no
   * tab or newline).  On load each saved entry is compared with this
   * provider's: an entry whose key starts with '!' must be equal or the
   * plan is unusable here; any other difference makes the plan usable but
   * suboptimal (it runs, and the load warns naming the entry).  NULL is
   * the empty string. */
  het_status (*compiled_serialize)(void *state, const void *compiled,
                                   void **data, size_t *size);
  het_status (*compiled_deserialize)(void *state, const het_graph *graph,
                                     const int *nodes, int n_nodes,
                                     const void *data, size_t size,
                                     void **compiled);
  const char *(*compat_string)(void *state);

  /* ---- ABI 4 ----
   * compute_type: the element type this instance's arithmetic for node
   * uses when that is not what the node's tensors and the device's
   * float32_as say (HET_DTYPE_BFLOAT16 for a float32 Conv computed in
   * bfloat16 on request); HET_DTYPE_UNDEFINED otherwise, and a NULL slot
   * means UNDEFINED for every node.  Reports show it as the node's
   * precision; policy `precision:` rules place by it. */
  het_dtype (*compute_type)(void *state, const het_graph *graph, int node);

  /* ---- ABI 5 ----
   * device_plans_only: whether the device (device_open's state) stands for
   * hardware that is not present, as a device profile describes it (the
   * CUDA provider's GPU profiles): a session places and plans on it
   * (partview, het_session_explain, the placement API), puts no weight on
   * it and refuses to run (NO_DEVICE).  NULL: false. */
  bool (*device_plans_only)(void *device_state);
} het_provider_vtable;

/* ---- ABI 1-2 run context accessors (the legacy run slot) ----
 * In a legacy run, a provider reads input i of node through het_run_input
 * (NULL when omitted), gets the node's output tensors, already placed in
 * its memory, through het_run_prepare_outputs (device: its own; inputs are
 * host-readable views of the inputs when the provider has them, for shape
 * inference), and tells the core it is done with the node through
 * het_run_release_inputs.  node is a node id of the compiled graph. */
HET_API het_tensor *het_run_input(het_run_ctx *ctx, int node, int i);
HET_API het_status het_run_prepare_outputs(het_run_ctx *ctx, int node,
                                           het_tensor *const *inputs,
                                           het_tensor **outputs);
HET_API void het_run_release_inputs(het_run_ctx *ctx, int node);

/* ---- provider plugins ----
 * A provider may live in its own shared library that the registry loads
 * at run time (the CUDA provider: libhetrt_cuda.so), so the core never
 * links its runtime.  The library exports HET_PLUGIN_INIT_SYMBOL, a
 * het_plugin_init_fn: it checks the host (its plugin-host and provider ABI
 * versions) and the libraries it needs, and hands back its vtable, which
 * stays valid until the process ends (plugins are never unloaded); on
 * failure it writes why into why (cap bytes, NUL-terminated).  Messages of
 * the plugin's errors reach het_last_error through host->set_error. */
#define HET_PLUGIN_HOST_VERSION 1
typedef struct het_plugin_host {
  unsigned version;      /* HET_PLUGIN_HOST_VERSION of the loading core */
  unsigned provider_abi; /* HET_PROVIDER_ABI_VERSION of the loading core */
  /* Sets the calling thread's error message (what het_last_error gives). */
  void (*set_error)(const char *message);
} het_plugin_host;
typedef het_status (*het_plugin_init_fn)(const het_plugin_host *host,
                                         const het_provider_vtable **vt,
                                         char *why, size_t cap);
#define HET_PLUGIN_INIT_SYMBOL "hetrt_plugin_init"

/* ---- the graph and tensors as a provider sees them (ABI 3) ----
 * get_capability, estimate_cost and compile receive a const het_graph; a
 * provider built out of tree reads it only through these.  Node ids run
 * from 0 to het_graph_get_node_count() - 1 and value ids from 0 to
 * het_graph_get_value_count() - 1: the indices of get_capability's claims,
 * of compile's node list and of het_kernel_io.values.  Strings and arrays
 * are borrowed, valid as long as the graph (which outlives the compiled
 * subgraphs made from it).  Cheap, never allocate; thread-safe (the graph
 * does not change while providers see it). */

/* One node of a graph. */
typedef struct het_node_desc {
  const char *name;    /* never NULL */
  const char *op_type; /* "Relu" */
  const char *domain;  /* "" for the default ONNX domain */
  int opset;           /* opset version the model imports for domain */
  int n_inputs;
  const int *inputs;   /* value ids; -1 for an omitted optional input */
  int n_outputs;
  const int *outputs;  /* value ids; -1 for an omitted optional output */
} het_node_desc;

/* Number of nodes of graph (0 for NULL). */
HET_API int het_graph_get_node_count(const het_graph *graph);
/* Number of values of graph (0 for NULL). */
HET_API int het_graph_get_value_count(const het_graph *graph);
/* Node node of graph in *out.  ERR_INVALID_ARGUMENT for an id out of
 * range. */
HET_API het_status het_graph_get_node(const het_graph *graph, int node,
                                      het_node_desc *out);
/* Value value of graph in *out, as known when the graph is partitioned:
 * dtype UNDEFINED while unknown, rank -1 when unknown, dims -1 where they
 * depend on the inputs (dim_names naming the symbol, or NULL).  The
 * tensors of a run (het_kernel_io) have the concrete shapes.
 * ERR_INVALID_ARGUMENT for an id out of range. */
HET_API het_status het_graph_get_value(const het_graph *graph, int value,
                                       het_value_desc *out);
/* The constant data (host memory) of value when it is an initializer,
 * else NULL.  Borrowed, read-only: never write or destroy it. */
HET_API het_tensor *het_graph_get_constant(const het_graph *graph,
                                           int value);

/* Attributes of node, by name: *value (or *values and *count, a borrowed
 * array) on success; ERR_NOT_FOUND when the node has no attribute of that
 * name (the provider applies the op's default), ERR_TYPE when it has one
 * of another type, ERR_INVALID_ARGUMENT for a node id out of range. */
HET_API het_status het_graph_get_attr_int(const het_graph *graph, int node,
                                          const char *name, int64_t *value);
/* As het_graph_get_attr_int, for a float attribute. */
HET_API het_status het_graph_get_attr_float(const het_graph *graph,
                                            int node, const char *name,
                                            float *value);
/* As het_graph_get_attr_int, for a string attribute (NUL-terminated). */
HET_API het_status het_graph_get_attr_string(const het_graph *graph,
                                             int node, const char *name,
                                             const char **value);
/* As het_graph_get_attr_int, for a list of integers. */
HET_API het_status het_graph_get_attr_ints(const het_graph *graph, int node,
                                           const char *name,
                                           const int64_t **values,
                                           size_t *count);
/* As het_graph_get_attr_int, for a list of floats. */
HET_API het_status het_graph_get_attr_floats(const het_graph *graph,
                                             int node, const char *name,
                                             const float **values,
                                             size_t *count);

/* The device whose memory holds tensor's data, NULL for host memory (and
 * for NULL).  het_tensor_get_data gives the address in that memory. */
HET_API const het_device *het_tensor_get_device(const het_tensor *tensor);

/* Sets the calling thread's error message (printf-style; what
 * het_last_error returns, truncated to 1023 bytes) and returns status, so
 * a provider reports a failure with
 * `return het_error_set(HET_ERR_KERNEL, "mine: node '%s': ...", name);`.
 * A slot that returns an error sets its message this way first; a stream
 * re-raises the message of a failure on the thread that synchronizes. */
HET_API het_status het_error_set(het_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Registers an out-of-tree provider (a static vtable that outlives env)
 * under vt->name for the sessions of env, before built-in ones of the
 * same name.  ERR_INVALID_ARGUMENT for an ABI version this build cannot
 * load (0, or newer than HET_PROVIDER_ABI_VERSION), a missing create,
 * get_capability or compile, or neither run nor run_async. */
HET_API het_status het_env_register_provider(het_env *env,
                                             const het_provider_vtable *vt);

#ifdef __cplusplus
}
#endif

#endif /* HETRT_PROVIDER_H */
