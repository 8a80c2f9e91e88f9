/* estimate.h — the CPU provider's estimate_cost: the core's roofline work
 * of a node (FLOPs, bytes) on this machine's measured rates, with a
 * compute cost, a memory cost and a per-node overhead per row of a table
 * calibrated against the CPU kernels (docs/estimates.md).
 */
#ifndef HET_CPU_ESTIMATE_H
#define HET_CPU_ESTIMATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/ir.h"
#include "hetrt/provider.h"

/* The rows of the table: a core class (het_roofline_op_class), split
 * where the CPU kernels run its nodes differently. */
typedef enum het_cpu_row {
  HET_CPU_ROW_GEMM,           /* float products on oneDNN (MatMul, Gemm,
                                 their fused forms, Attention) and
                                 Conv/FusedConv stored channels-last */
  HET_CPU_ROW_CONV_NCHW,      /* Conv/FusedConv the layout pass leaves
                                 NCHW: oneDNN reorders around them */
  HET_CPU_ROW_CONV_TRANSPOSE, /* a GEMM on OpenBLAS into a column buffer,
                                 then col2im: its bytes are the buffer's */
  HET_CPU_ROW_CONV_TRANSPOSE_TILES, /* stride == kernel, no padding:
                                       each input pixel's own output tile
                                       (kernels/linalg_convt_tiles.c) */
  HET_CPU_ROW_RECURRENT,      /* LSTM, GRU, RNN: OpenBLAS, step by step;
                                 its overhead is per step and direction */
  HET_CPU_ROW_DEPTHWISE_NHWC, /* depthwise Conv, channels-last */
  HET_CPU_ROW_DEPTHWISE_NCHW, /* depthwise Conv, NCHW */
  HET_CPU_ROW_ELEMENTWISE,
  HET_CPU_ROW_RESIZE, /* Resize, Upsample: a tap table per axis,
                         an element at a time */
  HET_CPU_ROW_MOVEMENT,
  HET_CPU_ROW_VIEW,
  HET_CPU_ROW_INT8,           /* QLinearConv, QLinearMatMul, MatMulInteger
                                 on oneDNN's int8 (VNNI) primitives */
  HET_CPU_ROW_INT8_DEPTHWISE, /* depthwise QLinearConv, same kernels */
  HET_CPU_ROW_INT8_REFERENCE, /* quantized products on the reference
                                 kernels: ConvInteger, and the others on a
                                 CPU without the fast ones */
  HET_CPU_ROWS /* count */
} het_cpu_row;

/* One row: seconds = overhead + compute * flops / rate + memory * bytes /
 * bandwidth, where rate is one thread's FLOP/s of the row's GEMM (the
 * kernels' own, or OpenBLAS's when blas) times the threads used, and
 * bandwidth the memcpy probe's bytes/s.  All non-negative, so an estimate
 * never falls as work grows. */
typedef struct het_cpu_row_cost {
  const char *name;
  bool blas;       /* compute relative to OpenBLAS's rate */
  double compute;  /* seconds per FLOP, in units of 1 / rate */
  double memory;   /* seconds per byte, in units of 1 / bandwidth */
  double overhead; /* seconds per node (recurrent: per time step) */
} het_cpu_row_cost;

/* The row's calibrated costs (the table of estimate.c). */
const het_cpu_row_cost *het_cpu_row_cost_get(het_cpu_row row);

/* 3x3 stride-1 convolutions on oneDNN run Winograd (cpu.conv_algo auto or
 * winograd): their FLOPs count divided by this. */
extern const double het_cpu_winograd_gain;

/* Under cpu.precision=bf16 the nodes het_cpu_bf16_node names (float32
 * Conv, FusedConv, MatMul, FusedMatMul, Gemm: oneDNN's bfloat16 kernels)
 * run no Winograd and their FLOPs count divided by this. */
extern const double het_cpu_bf16_gain;
bool het_cpu_bf16_node(const het_graph *g, int node);

/* A float32 2-D ConvTranspose the tiled kernel runs: one group, kernel ==
 * strides, no pads, dilation 1, no output padding or output_shape. */
bool het_cpu_convt_tiles(const het_graph *g, int node);

/* Which Conv nodes of one graph the layout pass would store channels-last
 * (computed from the graph's own shapes when the provider claims its
 * nodes, before the cost model swaps in shapes to plan for). */
typedef struct het_cpu_layout_memo {
  const het_graph *graph;
  int n_nodes, n_values;
  uint8_t *nhwc; /* per node: 1 when channels-last */
} het_cpu_layout_memo;

/* What an instance's estimates depend on.  Invariant: the fields above mu
 * are set once at create and read-only after; the memos are guarded by mu
 * (estimates may run from any thread). */
typedef struct het_cpu_estimator {
  het_device_info info; /* the device's facts (profile or measurement) */
  double gemm_flops;    /* one thread's FLOP/s of the kernels' GEMM and of */
  double blas_flops;    /* OpenBLAS's (het_cpu_thread_flops), or 0: a YAML
                           profile's peak is the rate for any threads */
  int threads;          /* the instance's threads (>= 1) */
  int cores;            /* online CPUs (>= 1): threads past them add none */
  bool roofline;        /* cpu.estimate=roofline: the plain core roofline */
  bool nchw_only;       /* cpu.layout=nchw */
  bool winograd;        /* cpu.conv_algo is not direct */
  bool bf16;            /* cpu.precision=bf16 */
  pthread_mutex_t mu;
  int n_memos;
  het_cpu_layout_memo *memos;
} het_cpu_estimator;

/* Initializes e (its fields then set by the caller); deinit frees the
 * memos.  Never fail. */
void het_cpu_estimator_init(het_cpu_estimator *e);
void het_cpu_estimator_deinit(het_cpu_estimator *e);

/* Records which Conv nodes of g the layout pass would keep channels-last
 * when the nodes claimed (claims[n].claimed; claims NULL: all) form one
 * CPU subgraph.  Called from get_capability, on the graph's own shapes.
 * ERR_OUT_OF_MEMORY when the record cannot be made. */
het_status het_cpu_estimator_plan(het_cpu_estimator *e, const het_graph *g,
                                  const het_claim *claims);

/* *row = the row node's estimate uses.  Thread-safe; ERR_OUT_OF_MEMORY
 * only (when g must be planned first). */
het_status het_cpu_estimate_row(het_cpu_estimator *e, const het_graph *g,
                                int node, het_cpu_row *row);

/* *seconds = the estimated time of node on one instance of e (finite,
 * never negative).  Calibrated (default): the row's costs on
 * het_roofline_work's FLOPs (a Winograd convolution's divided by
 * het_cpu_winograd_gain) and bytes (a ConvTranspose's: its column buffer,
 * 4 bytes per FLOP / (2 * input channels per group), written and read
 * once each; a float16/bfloat16 elementwise op's: five times its own, as
 * it is computed through float32 copies); roofline: het_roofline_node on
 * e->info.  A graph not planned with het_cpu_estimator_plan is planned on
 * first use.  Thread-safe; ERR_OUT_OF_MEMORY only. */
het_status het_cpu_estimate(het_cpu_estimator *e, const het_graph *g, int node,
                            double *seconds);

#endif
