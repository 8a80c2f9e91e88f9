/* roofline.h — the core's cost of an op: work (FLOPs, bytes) of a node
 * from its load-time shapes and the roofline time of that work on a
 * device described by het_device_info.  The cost model's default
 * estimate and the emu's modelled kernel time both come from here.
 */
#ifndef HET_CORE_ROOFLINE_H
#define HET_CORE_ROOFLINE_H

#include "core/ir.h"
#include "hetrt/provider.h"

/* Bytes of value v from its load-time shape (unknown dims 1, unknown
 * dtype 4 bytes per element). */
double het_roofline_value_bytes(const het_graph *g, int v);

/* Work of one node from its (load-time) shapes; unknown dims count as 1.
 * flops: multiply-adds count 2 (Conv and hetrt.FusedConv
 * 2*N*Cout*OH*OW*Cin/group*KH*KW, hetrt.FusedConvDw 2*N*Cin*H*W*M for
 * its 1x1 half plus 2*N*M*OH*OW*KH*KW, ConvTranspose
 * 2*N*Cin*H*W*Cout/group*KH*KW,
 * MatMul/Gemm/hetrt.FusedMatMul 2*M*N*K batched, hetrt.Attention
 * scores*(2*D + 2*E + 5), pooling out*kernel, elementwise out, reductions
 * in, Softmax/norms (hetrt.LayerNorm too) ~5 per element, exp-, log- and
 * trigonometry-based elementwise ops (Sigmoid, Tanh, Erf, Gelu, ...) 8 per
 * element, data movement and views 0, Resize one per output element like
 * the other elementwise ops); bytes: inputs + outputs. */
void het_roofline_work(const het_graph *g, int node, double *flops,
                       double *bytes);

/* The class of a node's op, for providers that calibrate the roofline per
 * class (the CPU's estimate, docs/estimates.md):
 *   GEMM: the products of het_roofline_work (Conv, ConvTranspose, MatMul,
 *     Gemm, their fused, integer and QLinear forms, hetrt.Attention) other
 *     than the two below;
 *   DEPTHWISE: Conv/FusedConv with group > 1 and one input channel per
 *     group (weight dim 1 == 1);
 *   RECURRENT: LSTM, GRU, RNN (a product per time step, in sequence);
 *   VIEW: ops that only change the shape (Reshape, Flatten, Squeeze,
 *     Unsqueeze, Identity, Shape, Size);
 *   MOVEMENT: the other ops that only move data (0 FLOPs above:
 *     Transpose, Concat, Slice, Gather, Pad, Cast, ...);
 *   ELEMENTWISE: everything else (activations, arithmetic, pooling,
 *     normalisations, reductions, Resize's interpolation). */
typedef enum het_roofline_class {
  HET_ROOFLINE_GEMM,
  HET_ROOFLINE_DEPTHWISE,
  HET_ROOFLINE_RECURRENT,
  HET_ROOFLINE_ELEMENTWISE,
  HET_ROOFLINE_MOVEMENT,
  HET_ROOFLINE_VIEW,
  HET_ROOFLINE_CLASSES /* count */
} het_roofline_class;
het_roofline_class het_roofline_op_class(const het_graph *g, int node);

/* The element type that decides a node's peak: its first typed output,
 * else its first typed input, else float32. */
het_dtype het_roofline_dtype(const het_graph *g, const het_node *n);

/* Roofline time of work on a device: max(flops/peak, bytes/bandwidth),
 * peak chosen by dtype (float16/bfloat16 → f16, int8/uint8 → i8, falling
 * back to f32); a rate of 0 (unknown) uses HET_ROOFLINE_DEFAULT_* below. */
#define HET_ROOFLINE_DEFAULT_PEAK 1e11      /* FLOP/s */
#define HET_ROOFLINE_DEFAULT_BANDWIDTH 1e10 /* bytes/s */
double het_roofline_time(const het_device_info *info, het_dtype dtype,
                         double flops, double bytes);

/* het_roofline_time of het_roofline_work for node on info. */
double het_roofline_node(const het_graph *g, int node,
                         const het_device_info *info);

#endif
