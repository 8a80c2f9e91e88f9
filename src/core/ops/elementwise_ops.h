/* elementwise_ops.h — infer functions of the elementwise group that live
 * outside elementwise.c (which holds the group's table), and the helpers
 * they share.
 */
#ifndef HET_CORE_OPS_ELEMENTWISE_OPS_H
#define HET_CORE_OPS_ELEMENTWISE_OPS_H

#include "core/infer.h"

/* elementwise_misc.c */
het_status het_infer_ew_where(het_infer_ctx *ctx);
het_status het_infer_ew_cast(het_infer_ctx *ctx);
het_status het_infer_ew_cast_like(het_infer_ctx *ctx);
het_status het_infer_ew_clip(het_infer_ctx *ctx);
het_status het_infer_ew_dropout(het_infer_ctx *ctx);
het_status het_infer_ew_quantize(het_infer_ctx *ctx);
het_status het_infer_ew_dequantize(het_infer_ctx *ctx);
het_status het_infer_ew_dynamic_quantize(het_infer_ctx *ctx);
/* hetrt.QLinearAdd(a, a_scale, a_zp, b, b_scale, b_zp, c_scale, c_zp):
 * Q(DQ(a) + DQ(b)), per-tensor, the optimizer's fusion (opt_qdq.c). */
het_status het_infer_ew_qlinear_add(het_infer_ctx *ctx);
/* hetrt.QLinearLut(x, table): table[x] per element (x uint8, or int8
 * shifted by 128), a uint8/int8 table of 256 entries; the optimizer's
 * fusion of DQ -> elementwise float ops -> Q (opt_qlut.c). */
het_status het_infer_ew_qlinear_lut(het_infer_ctx *ctx);
het_status het_infer_ew_adagrad(het_infer_ctx *ctx);
het_status het_infer_ew_adam(het_infer_ctx *ctx);
het_status het_infer_ew_momentum(het_infer_ctx *ctx);

/* ERR_TYPE naming the node when inputs i and j have different known
 * dtypes. */
het_status het_infer_ew_same_type(const het_infer_ctx *ctx, int i, int j);

#endif
