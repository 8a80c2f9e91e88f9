/* kernel.h — the CPU provider's kernel table entry and call context.
 * A kernel reads ctx->inputs and writes ctx->outputs, whose dtype and
 * shape were set by the op's shape inference; an output with data == NULL
 * (data-dependent shape, e.g. NonZero) must be sized by the kernel with
 * het_tensor_alloc.  Kernels never allocate other outputs, never abort, and
 * report failures with het_error naming ctx->node->name.
 */
#ifndef HET_KERNELS_KERNEL_H
#define HET_KERNELS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/infer.h"
#include "core/ir.h"
#include "core/status.h"
#include "core/tensor.h"

typedef struct het_kernel_ctx {
  const het_node *node;
  int opset;
  int n_inputs;
  het_tensor *const *inputs;  /* NULL entries for omitted optional inputs */
  int n_outputs;
  het_tensor *const *outputs; /* NULL entries for omitted outputs */
  void *state;                /* from prepare, or NULL */
  int threads;
  struct het_run_ctx *run;    /* the run's value table (control flow) */
  /* The provider's loop runner for het_parallel_for (parallel.h);
   * NULL (e.g. kernels run by other providers or constant folding) runs
   * loops inline.  Borrowed, valid during run(). */
  const struct het_parallel *par;
  /* Physical layout inside a compiled CPU subgraph (layout.c): bit k of
   * nhwc_in set means inputs[k] is rank 4 and stored NHWC although its
   * dims still read N,C,H,W; nhwc_out likewise for outputs.  Only kernels
   * whose op the layout pass lists ever see a bit set; a value with
   * H*W == 1 (identical in both layouts) is never marked. */
  uint32_t nhwc_in, nhwc_out;
  /* Scratch of this run of the node: host memory of at least the bytes
   * the kernel's scratch slot asked for (NULL when the provider gives
   * none).  Kernels take from it through het_kernel_take. */
  void *scratch;
  size_t scratch_size, scratch_used;
  /* Prepared weights the next node with weights in this subgraph will
   * read cold (its kernel's state_prefetch): a kernel that streams
   * through its own work may fetch them into cache meanwhile, as a hint
   * (prefetch instructions only).  NULL / 0 when there are none. */
  const void *prefetch;
  size_t prefetch_bytes;
} het_kernel_ctx;

/* Convolution algorithm choice (provider option cpu.conv_algo). */
typedef enum het_conv_algo {
  HET_CONV_ALGO_AUTO,     /* Winograd where it times faster than direct */
  HET_CONV_ALGO_DIRECT,   /* never Winograd */
  HET_CONV_ALGO_WINOGRAD, /* Winograd wherever oneDNN has it */
} het_conv_algo;

/* Under auto, a Winograd kernel is tried only on outputs at least two of
 * its tiles high and wide: F(2,3) (2x2 output tiles) from 4x4, F(4,3)
 * (4x4 tiles) from 8x8.  A 128 -> 256 channel 3x3 Conv on 4x80 took
 * 0.95-1.06 ms in F(4,3) and 0.81 ms direct inside the CRNN recogniser,
 * though F(4,3) had timed faster alone; F(2,3) keeps winning on
 * ResNet's 7x7 layers. */
#define HET_WINOGRAD_MIN_OUT 4
#define HET_WINOGRAD_F43_MIN_OUT 8

/* What a compiling CPU provider passes to prepare_with. */
typedef struct het_kernel_prep {
  uint32_t nhwc_in, nhwc_out; /* the layout pass's bits (as in the ctx) */
  het_conv_algo conv_algo;
  bool bf16; /* cpu.precision=bf16: float32 Convs and MatMuls on oneDNN
                take bfloat16 inputs and weights, accumulate and write
                float32 */
  int threads; /* the threads runs will have (0: unknown, as 1) */
  long cache_l2; /* bytes of L2 cache kernels plan for (0: the CPU's) */
} het_kernel_prep;

/* Receives one prepared weight (het_kernel.state_weights). */
typedef void (*het_kernel_weight_fn)(void *ctx, const void *layout,
                                     size_t layout_size, const void *data,
                                     size_t size);

typedef struct het_kernel {
  const char *op_type;
  const char *domain; /* "" for ai.onnx */
  /* Optional: can this node run here (dtypes, attributes)?  Returns false
   * with a reason ("int16 not supported").  graph gives value types. */
  bool (*supports)(const het_graph *graph, const het_node *node, char *why,
                   size_t why_cap);
  /* Optional: per-node state created once at compile time (packed weights,
   * primitives).  Constant inputs are available as initializers. */
  het_status (*prepare)(const het_graph *graph, const het_node *node,
                        void **state);
  het_status (*run)(het_kernel_ctx *ctx);
  void (*destroy_state)(void *state);
  /* Optional: prepare with the compiling provider's choices (below);
   * when set, the CPU provider calls it instead of prepare for every node
   * (prepare still serves constant folding and other providers).
   * HET_ERR_UNSUPPORTED for NHWC bits makes the layout pass keep the node
   * plain. */
  het_status (*prepare_with)(const het_graph *graph, const het_node *node,
                             const het_kernel_prep *prep, void **state);
  /* Optional: bytes of scratch one run needs for the shapes of ctx's
   * inputs and outputs (their data may be unset) and its state; a
   * provider that plans memory hands that much in ctx->scratch. */
  size_t (*scratch)(const het_kernel_ctx *ctx);
  /* Optional: the weights state holds prepared in a library's own layout
   * (ahead-of-time plans, presets.h): fn(ctx, layout, layout_size, data,
   * size) for each, layout being the library's descriptor of it. */
  void (*state_weights)(const void *state, het_kernel_weight_fn fn,
                        void *ctx);
  /* Optional: the prepared weights a run of state reads from memory
   * without fetching them ahead itself (a library's kernel), for the
   * node before it to prefetch (ctx->prefetch): *data and their bytes, 0
   * when none. */
  size_t (*state_prefetch)(const void *state, const void **data);
} het_kernel;

/* Kernel groups: each src/providers/cpu/kernels/<group>.c defines one
 * table ending with a zeroed entry. */
extern const het_kernel het_kernels_elementwise[];
extern const het_kernel het_kernels_linalg[];
extern const het_kernel het_kernels_tensor[];
extern const het_kernel het_kernels_reduce[];
extern const het_kernel het_kernels_signal[];
extern const het_kernel het_kernels_nlp[]; /* hetrt-domain fusions */

/* het_error with "node 'name' (Op): " in front of the message. */
het_status het_kernel_fail(const het_kernel_ctx *ctx, het_status st,
                               const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* bytes of scratch (64-byte aligned): from ctx->scratch while it has room,
 * else a new allocation (no provider planned it: constant folding,
 * reference runs).  Released with het_kernel_give, in any order. */
het_status het_kernel_take(het_kernel_ctx *ctx, size_t bytes, void **out);
void het_kernel_give(het_kernel_ctx *ctx, void *p);

/* Whether QLinearConv and QLinearMatMul with constant int8 weights run on
 * oneDNN's int8 primitives here (built with oneDNN, a VNNI CPU); else
 * they run on the exact but slow reference kernels, and the optimizer
 * leaves QDQ Conv/MatMul/Gemm islands in float (linalg_qlinear.c). */
bool het_kernels_int8_fast(void);

/* NULL when no kernel exists for the op. */
const het_kernel *het_kernel_find(const char *domain,
                                          const char *op_type);

#endif
