/* hetrt.h — the public C API of hetrt, the only header a user needs.
 *
 * Conventions: every call that can fail returns het_status; results go to
 * trailing out-parameters that are written only on success.  On failure a
 * message naming what is wrong (model node, file, option) is kept per thread
 * and returned by het_last_error().  Every create has a destroy that accepts
 * NULL.  Unless a comment says otherwise, objects may be used from one thread
 * at a time; het_session_run() may be called from several threads at once.
 */
#ifndef HETRT_HETRT_H
#define HETRT_HETRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HETRT_BUILDING)
#define HET_API __attribute__((visibility("default")))
#else
#define HET_API
#endif

#define HET_VERSION_MAJOR 0
#define HET_VERSION_MINOR 1
#define HET_VERSION_PATCH 0

/* Largest tensor rank hetrt handles; larger ranks are refused with
 * HET_ERR_UNSUPPORTED naming the tensor. */
#define HET_MAX_RANK 8

/* ---- status ----------------------------------------------------------- */

/* X(NAME, description).  HET_OK is 0; every other value is an error. */
#define HET_STATUS_TABLE(X)                                               \
  X(OK, "ok")                                                             \
  X(ERR_INVALID_ARGUMENT, "invalid argument")                             \
  X(ERR_OUT_OF_MEMORY, "out of memory")                                   \
  X(ERR_IO, "input/output error")                                         \
  X(ERR_INVALID_MODEL, "invalid model")                                   \
  X(ERR_UNSUPPORTED, "unsupported")                                       \
  X(ERR_NOT_FOUND, "not found")                                           \
  X(ERR_NOT_BUILT, "provider not built")                                  \
  X(ERR_NO_DEVICE, "no device")                                           \
  X(ERR_SHAPE, "shape mismatch")                                          \
  X(ERR_TYPE, "type mismatch")                                            \
  X(ERR_KERNEL, "kernel failed")                                          \
  X(ERR_CAPACITY, "device capacity exceeded")                             \
  X(ERR_INTERNAL, "internal error")

typedef enum het_status {
#define HET_STATUS_ENUM_(name, desc) HET_##name,
  HET_STATUS_TABLE(HET_STATUS_ENUM_)
#undef HET_STATUS_ENUM_
  HET_STATUS_COUNT_
} het_status;

/* Short fixed description of a status ("invalid model").  Never NULL. */
HET_API const char *het_status_str(het_status status);

/* The message of the last failed call on this thread ("" if none).
 * Borrowed: valid until the next hetrt call on this thread. */
HET_API const char *het_last_error(void);

/* ---- element types ----------------------------------------------------- */

/* Values equal ONNX TensorProto.DataType. X(NAME, value, bytes, text). */
#define HET_DTYPE_TABLE(X)            \
  X(UNDEFINED, 0, 0, "undefined")     \
  X(FLOAT32, 1, 4, "float32")         \
  X(UINT8, 2, 1, "uint8")             \
  X(INT8, 3, 1, "int8")               \
  X(UINT16, 4, 2, "uint16")           \
  X(INT16, 5, 2, "int16")             \
  X(INT32, 6, 4, "int32")             \
  X(INT64, 7, 8, "int64")             \
  X(STRING, 8, 0, "string")           \
  X(BOOL, 9, 1, "bool")               \
  X(FLOAT16, 10, 2, "float16")        \
  X(FLOAT64, 11, 8, "float64")        \
  X(UINT32, 12, 4, "uint32")          \
  X(UINT64, 13, 8, "uint64")          \
  X(COMPLEX64, 14, 8, "complex64")    \
  X(COMPLEX128, 15, 16, "complex128") \
  X(BFLOAT16, 16, 2, "bfloat16")

typedef enum het_dtype {
#define HET_DTYPE_ENUM_(name, value, bytes, text) HET_DTYPE_##name = value,
  HET_DTYPE_TABLE(HET_DTYPE_ENUM_)
#undef HET_DTYPE_ENUM_
} het_dtype;

/* "float32", ...; "invalid" for values outside the table. */
HET_API const char *het_dtype_str(het_dtype dtype);
/* Bytes per element; 0 for UNDEFINED, STRING and unknown values. */
HET_API size_t het_dtype_size(het_dtype dtype);

/* ---- tensors ----------------------------------------------------------- */

typedef struct het_tensor het_tensor;

/* A tensor that owns zero-filled host memory.  Caller owns *out.
 * Errors: INVALID_ARGUMENT (dtype, negative dim, rank > HET_MAX_RANK),
 * OUT_OF_MEMORY (also when the byte size overflows). */
HET_API het_status het_tensor_create(het_dtype dtype, const int64_t *dims,
                                     int rank, het_tensor **out);

/* A tensor over caller memory (borrowed: must stay valid and unchanged
 * while any run reads it).  nbytes must equal the element count times the
 * element size.  Caller owns *out; destroying it leaves data alone. */
HET_API het_status het_tensor_create_over(het_dtype dtype,
                                          const int64_t *dims, int rank,
                                          void *data, size_t nbytes,
                                          het_tensor **out);

/* Accepts NULL. */
HET_API void het_tensor_destroy(het_tensor *tensor);

/* Cheap accessors; never allocate: the element type and the rank. */
HET_API het_dtype het_tensor_get_dtype(const het_tensor *tensor);
HET_API int het_tensor_get_rank(const het_tensor *tensor);
/* Copies min(rank, max_dims) dims into dims; returns the rank. */
HET_API int het_tensor_get_dims(const het_tensor *tensor, int64_t *dims,
                                int max_dims);
/* Number of elements (the product of the dims; 1 for rank 0); -1 for
 * NULL. */
HET_API int64_t het_tensor_get_count(const het_tensor *tensor);
/* Bytes of data: the element count times het_dtype_size; 0 for NULL. */
HET_API size_t het_tensor_get_nbytes(const het_tensor *tensor);
/* The tensor's data: host memory for tensors of this API, borrowed, valid
 * until the tensor is destroyed. */
HET_API void *het_tensor_get_data(het_tensor *tensor);

/* ---- environment ------------------------------------------------------- */

typedef struct het_env het_env;

/* What the sessions of an env share: the providers they can use (built in,
 * or registered: het_env_register_provider in hetrt/provider.h) and the
 * devices, each opened on first use by a session and kept open (with its
 * memory accounting) until the env is destroyed.  Caller owns *out.
 * Thread-safe after creation. */
HET_API het_status het_env_create(het_env **out);
/* Accepts NULL.  All sessions created from env must be destroyed first. */
HET_API void het_env_destroy(het_env *env);

/* Comma-separated names of the providers compiled into this library,
 * e.g. "cpu".  Borrowed, static. */
HET_API const char *het_env_get_built_providers(const het_env *env);

/* ---- session options --------------------------------------------------- */

typedef struct het_session_options het_session_options;

/* Defaults: providers "cpu", threads 1.  Caller owns *out. */
HET_API het_status het_session_options_create(het_session_options **out);
/* Accepts NULL. */
HET_API void het_session_options_destroy(het_session_options *options);

/* Provider names in priority order (first wins), e.g. {"cuda", "cpu"}.
 * Names are checked when the session is created.  Strings are copied. */
HET_API het_status het_session_options_set_providers(
    het_session_options *options, const char *const *names, size_t count);

/* Threads for CPU kernels (>= 1). */
HET_API het_status het_session_options_set_threads(
    het_session_options *options, int threads);

/* String key/value option.  Known keys (see also "policy", "shape" and
 * "min_subgraph_nodes" below):
 *   "providers"  comma-separated priority list (same as set_providers)
 *   "threads"    positive integer
 *   "devices"    comma-separated device profile paths (YAML); each names
 *                the provider it configures with its `provider:` key
 *   "algorithm"  "cost" (default: minimise estimated latency) or
 *                "priority" (first capable provider wins)
 *   "optimization"  graph rewrites before partitioning: "none", "basic"
 *                (Identity/Dropout removal, dead nodes, constant folding)
 *                "extended" (basic + BatchNormalization folded into Conv,
 *                Relu/Clip fused into the Conv before them) or "all"
 *                (default: extended + fusions into hetrt-domain ops:
 *                Conv+Add(+Relu/Clip), Gelu, LayerNorm, attention,
 *                MatMul+Add)
 *   "executor"   how plans put steps on streams (both plan memory into
 *                one arena per device and wait only for what a step
 *                reads): "sequential" (default): one stream per provider,
 *                the CPU's being the calling thread; "streams": each
 *                device provider's compute, copies in and copies out and
 *                the host's conversions on streams of their own, one node
 *                per step, so transfers overlap compute
 *   "measure"    "true": time every node of every run, for
 *                het_session_save_node_times (default "false")
 *   "trace"      "true": keep the start and end of every node and
 *                boundary step of every run, for het_session_save_trace
 *                and het_session_get_profile_summary (default "false")
 *   "node_times" path of a file written by het_session_save_node_times:
 *                the cost algorithm uses those measured times instead of
 *                estimates for the nodes and providers it lists
 *                (profile-guided mode)
 *   "max_memory" host bytes one plan may use (its arena of intermediates
 *                plus resident tensors), decimal or with K, M or G (powers
 *                of 1024); input shapes whose plan needs more fail the run
 *                with ERR_CAPACITY naming both sizes, and the session stays
 *                usable for smaller ones; an output shaped only at run time
 *                may not exceed it alone either.  "0": no cap; "auto"
 *                (default): the machine's physical memory
 *   "policy"     path of a YAML placement policy (het_session_options_
 *                load_policy)
 *   "shape"      "NAME=1x3x640x640": plan for input NAME with these dims
 *                (the cost model estimates with them instead of unknown
 *                dims; runs still take any shape); once per input
 *   "replan"     "on" (default): a session with two or more providers,
 *                the cost algorithm and an input dim the model leaves
 *                open makes a placement per shape regime: the first run
 *                whose open dims fall in a power-of-two range not seen
 *                before estimates, for its shapes, every placement the
 *                session has and one made for them, and makes that new
 *                one (planned and compiled now, used by every later run
 *                of the range) when it is estimated faster by
 *                "replan_gain" or more; het_session_explain and the trace
 *                report each regime and choice.  "off": one placement
 *                for every shape
 *   "replan_gain"  the estimated relative gain that makes a new regime,
 *                in (0, 1] (default 0.2)
 *   "max_regimes"  regimes a session may hold, the creation one included
 *                (1..16, default 4); past it, runs take the best existing
 *   "deterministic"  "true": no choice is made by timing or by anything
 *                else that may differ between runs, sessions, processes or
 *                thread counts: a 3x3 Conv uses a plan's recorded choice
 *                (het_session_save_plan), else direct convolution.  The
 *                same plan file (or model and options) on the same
 *                machine then gives bitwise the same outputs in every run,
 *                session and process and for any thread count (default
 *                "false": cpu.conv_algo=auto times Winograd per session)
 *   "plan_mismatch"  for a plan file (het_session_save_plan) graded
 *                unusable on this machine: "fail" (default) or "rebuild"
 *                (partition and compile its graph afresh, warning)
 *   "plan_load"  for a plan file: "background" (default): creation
 *                returns once the graph is placed, and compilation (the
 *                providers' blobs restored, weights prepared, the weights'
 *                hash checked) continues on a thread of its own that the
 *                first run, report or plan save waits for; "eager":
 *                creation does it all before it returns
 *   "min_subgraph_nodes"  N: a run of fewer than N nodes on a device
 *                without host memory goes to a host provider (0: none)
 *   "max_loop_iterations" iterations one Loop node may run before the run
 *                fails with ERR_CAPACITY naming the node (default 16777216;
 *                "0": no cap): a trip count of 2^62 or a condition that
 *                never turns false cannot hold a run forever
 *   "strict"     "true" (default): an unknown, unbuilt or absent provider
 *                fails session creation; "false": it is skipped with a
 *                warning that het_session_explain reports
 *   "<provider>.<key>"  passed to that provider (e.g. "emu.mode=timed")
 * Unknown keys return INVALID_ARGUMENT naming the key. */
HET_API het_status het_session_options_set(het_session_options *options,
                                           const char *key,
                                           const char *value);

/* Per-node placement constraints, by node name (checked at session
 * creation: a name that matches no node is an error naming it).
 * pin: the node may run only on provider (repeat to allow several);
 * forbid: never on provider; prefer: multiply the node's estimated cost on
 * provider by factor (< 1 prefers, > 1 avoids; factor > 0). */
HET_API het_status het_session_options_pin(het_session_options *options,
                                           const char *node,
                                           const char *provider);
HET_API het_status het_session_options_forbid(het_session_options *options,
                                              const char *node,
                                              const char *provider);
HET_API het_status het_session_options_prefer(het_session_options *options,
                                              const char *node,
                                              const char *provider,
                                              double factor);
/* Bytes of memory a provider's device may use for this session (0 = the
 * device's capacity). */
HET_API het_status het_session_options_set_memory_budget(
    het_session_options *options, const char *provider, size_t bytes);

/* A YAML placement policy (docs/policy.md), from a file or a string: its
 * rules pin, forbid or prefer providers and set precisions for the nodes
 * they match (in If/Loop/Scan bodies too); its global settings (providers,
 * algorithm, memory, min_subgraph_nodes, shapes) are applied to options
 * now, as their own setters would, so a setter called later overrides
 * them.  A policy that names providers makes absent ones a warning unless
 * it says strict: true.  A malformed policy is ERR_INVALID_ARGUMENT with
 * "FILE:LINE:COLUMN: what is wrong (what was expected)" and leaves
 * options unchanged; a later policy replaces an earlier one's rules.
 * The option key "policy" does the same as load_policy. */
HET_API het_status het_session_options_load_policy(
    het_session_options *options, const char *path);
HET_API het_status het_session_options_set_policy(
    het_session_options *options, const char *yaml);

/* ---- sessions ---------------------------------------------------------- */

typedef struct het_session het_session;

/* Loads, validates, infers shapes, partitions and compiles a model.
 * options may be NULL (defaults).  Caller owns *out.  The model file and
 * options are not referenced after return. */
HET_API het_status het_session_create(het_env *env, const char *model_path,
                                      const het_session_options *options,
                                      het_session **out);

/* As het_session_create, from a serialized ModelProto in memory (copied).
 * External data is refused since there is no model folder. */
HET_API het_status het_session_create_from_memory(
    het_env *env, const void *data, size_t size,
    const het_session_options *options, het_session **out);

/* Accepts NULL. */
HET_API void het_session_destroy(het_session *session);

/* Description of a graph input or output.  dims[i] is -1 where the model
 * leaves the dim symbolic (dim_names[i] then names it, or is NULL);
 * rank is -1 when unknown.  Strings borrowed, valid for the session. */
typedef struct het_value_desc {
  const char *name;
  het_dtype dtype;
  int rank;
  int64_t dims[HET_MAX_RANK];
  const char *dim_names[HET_MAX_RANK];
} het_value_desc;

/* Number of graph inputs a run may be given (those without an
 * initializer), and of graph outputs. */
HET_API size_t het_session_get_input_count(const het_session *session);
HET_API size_t het_session_get_output_count(const het_session *session);
/* Describes input (output) index, in graph order, in *out.
 * ERR_INVALID_ARGUMENT for an index past the count. */
HET_API het_status het_session_get_input(const het_session *session,
                                         size_t index, het_value_desc *out);
HET_API het_status het_session_get_output(const het_session *session,
                                          size_t index, het_value_desc *out);

/* Where each node of the partitioned graph runs.  Strings borrowed, valid
 * for the session.  reason says why the provider was chosen. */
typedef struct het_node_placement {
  const char *name;
  const char *op_type;
  const char *provider;
  const char *reason;
} het_node_placement;

/* Number of placed nodes, for het_session_get_placement: every node of
 * the partitioned graph in execution order (inserted copy, cast and
 * layout nodes too), then those of its If/Loop/Scan bodies, named by
 * their path ("If_0/then_branch/conv"). */
HET_API size_t het_session_get_node_count(const het_session *session);

/* What session creation warned about: in non-strict mode, each provider
 * that was skipped and why ("provider 'cuda' skipped: no CUDA device:
 * ...").  Strings borrowed, valid for the session; NULL past the end. */
HET_API size_t het_session_get_warning_count(const het_session *session);
HET_API const char *het_session_get_warning(const het_session *session,
                                            size_t index);
/* Placement of node index (< het_session_get_node_count) in *out.
 * ERR_INVALID_ARGUMENT for an index past the count. */
HET_API het_status het_session_get_placement(const het_session *session,
                                             size_t index,
                                             het_node_placement *out);

/* The placement report: every node's provider, what placed it (the
 * algorithm, a policy rule, a C API constraint) and reason, subgraphs,
 * boundary (copy) nodes with the bytes they move, estimated latency per
 * subgraph and in total (with how many nodes were estimated with unknown
 * dims), the priority-vs-cost comparison, planned peak memory per device
 * and the policy's rules with the nodes each matched; for a session that
 * re-plans per shape regime (option "replan"), its regimes (the shapes
 * each was made for, the run that made it, the estimates before and after
 * and the nodes placed differently) and what the first run of each new
 * range of shapes chose (text, JSON, HTML).  Everything else describes
 * regime 0, the placement made at creation (as het_session_get_placement
 * does).  format: "text",
 * "json", "dot", "html" or "rules" (warnings and the policy's rules only).
 * *out is a NUL-terminated string the caller owns (het_string_destroy). */
HET_API het_status het_session_explain(const het_session *session,
                                       const char *format, char **out);
/* Writes the mean measured seconds of every node (name, provider, seconds,
 * runs; tab-separated, one per line) of a session created with
 * measure=true, for a later session's node_times option: the runs of
 * regime 0 (the placement made at creation; see option "replan").
 * Thread-safe. */
HET_API het_status het_session_save_node_times(het_session *session,
                                               const char *path);
/* Planned peak memory of provider's memory space ("host", or a provider
 * name; providers computing in host memory share "host") in *bytes: the
 * memory planner's arena for intermediate tensors plus what lives outside
 * it (weights, inputs, outputs, placed constants).  Planned for the
 * model's input shapes when they are static, else for the signature of the
 * session's most recent run (ERR_SHAPE before the first run).  Fails like
 * a run with ERR_CAPACITY, naming the device and the bytes, when the plan
 * exceeds a device's capacity; ERR_NOT_FOUND for an unknown provider.
 * Thread-safe. */
HET_API het_status het_session_get_planned_peak(const het_session *session,
                                                const char *provider,
                                                size_t *bytes);

/* Writes the traced runs of a session created with trace=true as a Chrome
 * trace (JSON for chrome://tracing or Perfetto): one lane per device
 * stream (each provider's compute, the copies, the host-side casts and
 * layout changes), each step with its node name, op type, provider, run
 * index and, for boundary steps, the bytes moved.  A session with shape
 * regimes (option "replan") adds each regime's runs as a process of its
 * own ("hetrt session, shape regime 1 (x=1x3x1280x1280)") and, on a lane
 * "shape regimes", the first run of each new range of shapes: what it
 * chose, the estimates, how long choosing took.  Thread-safe. */
HET_API het_status het_session_save_trace(het_session *session,
                                          const char *path);

/* Writes the session as an ahead-of-time plan file (docs/plan-format.md):
 * its optimized graph with the weights laid out for mapping, the
 * placement of every node with what placed it and why, each provider's
 * compiled blobs (the CPU's: its timed kernel choices), the options that
 * shaped it and a fingerprint of this machine and of the providers'
 * libraries.  het_session_create and het_session_create_from_memory load
 * such a file like a model: no optimization, partitioning or kernel
 * timing; the weights are read in place from the mapped file; outputs
 * are bitwise those of the session that wrote it on the same machine.
 * A session with shape regimes (option "replan") writes every regime it
 * has made (het_session_plan_shapes makes them without running); the
 * loading session restores each and gives a run's shapes the regime
 * planned for their range, or that of the nearest range, never a new
 * placement.  The loading session takes its providers, device profiles
 * (unless given), shapes to plan for and provider options from the plan,
 * and everything else (threads, executor, limits, measurement, trace)
 * from its own options.
 * A plan is graded against the machine that loads it: "optimal",
 * "suboptimal" (it runs; the session warns naming what differs: another
 * CPU model or CPU count, another library version) or "unusable" (an
 * instruction set extension it was made with is missing, a provider's
 * required entry differs, a provider is absent): session creation then
 * fails with ERR_UNSUPPORTED naming the mismatch, unless the session
 * option "plan_mismatch" is "rebuild" (partition and compile the plan's
 * graph afresh, with a warning).  A damaged, truncated or foreign file is
 * ERR_INVALID_MODEL naming what is wrong.  Written through a temporary
 * file renamed into place.  Thread-safe with runs. */
HET_API het_status het_session_save_plan(het_session *session,
                                         const char *path);

/* Plans session for the input shapes in shapes ("NAME=DIMS" entries
 * separated by ',', e.g. "images=1x3x1280x1280"; an input whose dims the
 * model fixes may be left out) as a run of them would, without running:
 * on a session with shape regimes (option "replan") the range of those
 * shapes gets its regime now, a new placement when it is estimated
 * faster by "replan_gain" or more (het_session_explain reports the
 * choice as "planned"), so that het_session_save_plan can store it.
 * *regime (when non-NULL) is the regime the shapes use: 0 for a session
 * that keeps one placement for every shape.  Errors: a malformed entry,
 * an input the model lacks, a rank or fixed dim unlike the model's, an
 * input with open dims left out.  Thread-safe with runs. */
HET_API het_status het_session_plan_shapes(het_session *session,
                                           const char *shapes, int *regime);

/* A description of the plan file at path (caller frees:
 * het_string_destroy): what made it (hetrt version, date, model,
 * options), its fingerprint, its sections and sizes, and its grade on
 * this machine with the reasons (a session is made in env to grade the
 * providers; when that fails, its error is the verdict).  Errors: the
 * file is not a readable, intact plan. */
HET_API het_status het_plan_get_info(het_env *env, const char *path,
                                     char **out);

/* Forgets what has been traced and the node times measured so far (e.g.
 * warm-up runs, whose first run builds primitives and reorders weights).
 * Accepts a session with neither trace=true nor measure=true (then does
 * nothing).  Thread-safe. */
HET_API void het_session_clear_trace(het_session *session);

/* A text table of the traced runs' time per op type and provider (calls
 * per run, total, per run, share), longest first, over the runs of every
 * shape regime.  *out is caller-owned
 * (het_string_destroy).  Requires trace=true.  Thread-safe. */
HET_API het_status het_session_get_profile_summary(het_session *session,
                                                   char **out);

/* Frees a string returned by hetrt.  Accepts NULL. */
HET_API void het_string_destroy(char *s);

/* Runs the model.  Every graph input without an initializer must be given
 * by name.  output_names may be NULL (then n_outputs must equal the
 * output count and outputs come in graph order).  outputs[i] receives a new
 * tensor the caller owns; nothing is written unless the run succeeds.
 * Thread-safe: several threads may run one session at once. */
HET_API het_status het_session_run(het_session *session,
                                   const char *const *input_names,
                                   het_tensor *const *inputs,
                                   size_t n_inputs,
                                   const char *const *output_names,
                                   size_t n_outputs, het_tensor **outputs);
/* As het_session_run, but outputs[i] are the caller's tensors (host
 * memory, e.g. from het_tensor_create or het_tensor_create_over) of the
 * dtype and shape the run makes, written in place: a run of a model with
 * static shapes then allocates nothing once its plan is made.  A tensor of
 * another dtype or shape is ERR_SHAPE naming the output; when the run
 * fails after it started, the tensors may hold partial results.
 * Thread-safe (distinct output tensors per concurrent run). */
HET_API het_status het_session_run_into(het_session *session,
                                        const char *const *input_names,
                                        het_tensor *const *inputs,
                                        size_t n_inputs,
                                        const char *const *output_names,
                                        size_t n_outputs,
                                        het_tensor *const *outputs);

#ifdef __cplusplus
}
#endif

#endif /* HETRT_HETRT_H */
