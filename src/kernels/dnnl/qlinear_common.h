/* qlinear_common.h — what the oneDNN int8 paths of QLinearConv
 * (qlinear_dnnl.c, which implements these) and QLinearMatMul
 * (qlinear_matmul_dnnl.c) share: when this CPU runs them exactly, reading
 * constant zero points, and the attribute that requantizes.
 */
#ifndef HET_CPU_DNNL_QLINEAR_COMMON_H
#define HET_CPU_DNNL_QLINEAR_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <dnnl.h>

#include "core/ir.h"

/* True when oneDNN starts and the CPU has VNNI: oneDNN's int8 kernels are
 * exact only with it (AVX-512 and AVX2 without it sum u8 x s8 pairs into
 * saturating int16). */
bool het_dnnl_q8_usable(void);

/* Input i of node as a constant tensor, or NULL. */
const het_tensor *het_dnnl_q8_init(const het_graph *g, const het_node *node,
                                   int i);

/* A constant scalar zero point of type t into *zp (0 when the input is
 * absent); false when not constant, not scalar or of another type. */
bool het_dnnl_q8_zp(const het_graph *g, const het_node *node, int i,
                    het_dtype t, int32_t *zp);

/* The weights' zero point (input i): absent, or int8 with 1 or n values,
 * all zero. */
bool het_dnnl_q8_zp_zero(const het_graph *g, const het_node *node, int i,
                         int64_t n);

/* A user-scratchpad attribute that requantizes: output scales (n of them,
 * per dst dim 1 when n > 1; borrowed, copied), the source zero point
 * xzp, and y's zero point yzp added after an eltwise_round post-op (see
 * qlinear_dnnl.c on exactness).  NULL on failure. */
dnnl_primitive_attr_t het_dnnl_q8_attr(int n, const float *scales, int32_t xzp,
                                       int32_t yzp);

/* The oneDNN data type of UINT8 / INT8. */
static inline dnnl_data_type_t het_dnnl_q8_dt(het_dtype t) {
  return t == HET_DTYPE_UINT8 ? dnnl_u8 : dnnl_s8;
}

static inline bool het_dnnl_q8_type(het_dtype t) {
  return t == HET_DTYPE_UINT8 || t == HET_DTYPE_INT8;
}

/* pd's implementation name, or NULL when pd is NULL, has none, or is one
 * of oneDNN's reference implementations (left to hetrt's own). */
const char *het_dnnl_q8_impl(const_dnnl_primitive_desc_t pd);

#endif
