/* linalg_geom.h — spatial geometry shared by Conv, ConvTranspose, the
 * pooling ops and their CPU kernels: kernel, strides, dilations, pads after
 * auto_pad, and output sizes.  Shape inference calls it with unknown dims
 * (-1), which give unknown outputs; kernels call it with concrete dims.
 * Also declares the linalg infer functions so the op table can live in
 * linalg.c while the functions are split by concept over linalg_*.c.
 */
#ifndef HET_CORE_OPS_LINALG_GEOM_H
#define HET_CORE_OPS_LINALG_GEOM_H

#include <stdint.h>

#include "core/infer.h"
#include "core/ir.h"

#define HET_GEOM_MAX_SP (HET_MAX_RANK - 2)

typedef enum het_geom_kind {
  HET_GEOM_CONV,  /* Conv, ConvInteger, QLinearConv */
  HET_GEOM_POOL,  /* MaxPool, AveragePool, LpPool (ceil_mode honoured) */
  HET_GEOM_CONVT, /* ConvTranspose (output_padding, output_shape) */
} het_geom_kind;

/* Invariant after het_conv_geom_init: kernel, stride, dil >= 1 and pads
 * >= 0 wherever in[] is known; out[i] == -1 exactly when in[i] or
 * kernel[i] is unknown (or, for CONVT with an output_shape, never). */
typedef struct het_conv_geom {
  int nsp; /* number of spatial dims */
  int64_t in[HET_GEOM_MAX_SP], out[HET_GEOM_MAX_SP];
  int64_t kernel[HET_GEOM_MAX_SP], stride[HET_GEOM_MAX_SP];
  int64_t dil[HET_GEOM_MAX_SP];
  int64_t pad_b[HET_GEOM_MAX_SP], pad_e[HET_GEOM_MAX_SP];
} het_conv_geom;

/* Fills g from node's attributes (kernel_shape overrides kernel when
 * present, strides, dilations, pads, auto_pad, ceil_mode, output_padding,
 * output_shape).  in/kernel: nsp spatial dims, -1 when unknown.  Errors:
 * INVALID_MODEL for bad attributes, SHAPE when the input is smaller than
 * the dilated kernel; messages name the node. */
het_status het_conv_geom_init(const het_node *node, het_geom_kind kind,
                              int nsp, const int64_t *in,
                              const int64_t *kernel, het_conv_geom *g);

/* Product of out[] / kernel[] / in[] (concrete geometry only). */
int64_t het_conv_geom_count(const int64_t *dims, int nsp);

/* hetrt.FusedConvDw's depthwise half: hetrt_dw_strides (2 values >= 1)
 * and hetrt_dw_pads (begin, begin, end, end; >= 0); false when either is
 * missing or out of range. */
bool het_conv_dw_attrs(const het_node *n, int64_t strides[2],
                       int64_t pads[4]);

/* hetrt.FusedConvPool's MaxPool as a node of its own: op MaxPool with
 * kernel_shape, strides, pads and ceil_mode taken from the fused node's
 * hetrt_pool_kernel_shape, hetrt_pool_strides, hetrt_pool_pads and
 * hetrt_pool_ceil_mode (the arrays are the fused node's, not copies). */
typedef struct het_pool_half {
  het_node node;
  het_attr attrs[4];
} het_pool_half;
/* False when a pool attribute is missing or has the wrong count (2
 * kernel sizes and strides, 4 pads). */
bool het_pool_half_init(const het_node *fused, het_pool_half *p);

/* Infer functions of the linalg group (linalg_*.c). */
het_status het_infer_conv(het_infer_ctx *ctx);
het_status het_infer_fused_conv(het_infer_ctx *ctx);
het_status het_infer_fused_conv_dw(het_infer_ctx *ctx);
het_status het_infer_fused_conv_pool(het_infer_ctx *ctx);
het_status het_infer_conv_integer(het_infer_ctx *ctx);
het_status het_infer_qlinear_conv(het_infer_ctx *ctx);
het_status het_infer_conv_transpose(het_infer_ctx *ctx);
het_status het_infer_pool(het_infer_ctx *ctx);
het_status het_infer_global_pool(het_infer_ctx *ctx);
het_status het_infer_max_unpool(het_infer_ctx *ctx);
het_status het_infer_matmul(het_infer_ctx *ctx);
het_status het_infer_matmul_integer(het_infer_ctx *ctx);
het_status het_infer_qlinear_matmul(het_infer_ctx *ctx);
het_status het_infer_gemm(het_infer_ctx *ctx);
het_status het_infer_batch_norm(het_infer_ctx *ctx);
het_status het_infer_rnn(het_infer_ctx *ctx);

#endif
