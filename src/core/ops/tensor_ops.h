/* tensor_ops.h — private to the tensor operator group: the infer functions
 * defined in src/core/ops/tensor_*.c (gathered in het_ops_tensor) and the
 * parameter helpers the group's CPU kernels share, so that a kernel
 * recomputes slice/pad/resize parameters exactly as inference did.
 */
#ifndef HET_CORE_OPS_TENSOR_OPS_H
#define HET_CORE_OPS_TENSOR_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/infer.h"
#include "core/status.h"

/* ---- shared helpers (tensor.c) ---- */

/* Reads input i (a known 1-D or scalar integer tensor) into out.  *n gets
 * the element count, or -1 when the input's data is not known.  Fails
 * naming the node when it holds more than cap values. */
het_status het_tensor_op_ints(const het_infer_ctx *ctx, int i, int64_t *out,
                              int cap, int *n);
/* Integer attribute list into out (same conventions, -1 when absent). */
het_status het_tensor_op_attr_ints(const het_infer_ctx *ctx, const char *name,
                                   int64_t *out, int cap, int *n);
/* Product of dims [from, to) of s, -1 when any is unknown. */
int64_t het_tensor_op_prod(const het_shape *s, int from, int to);
bool het_tensor_op_input_known(const het_infer_ctx *ctx, int i);

/* The dims [*start, *end) of a rank-`rank` input that Shape node n returns
 * (its start/end attributes, negatives from the end, clamped). */
void het_shape_op_range(const het_node *n, int rank, int64_t *start,
                        int64_t *end);

/* Slice: per-dim start, step and count of the output (count -1 when the
 * dim is unknown).  *known is false when starts/ends are not known yet. */
typedef struct het_slice_plan {
  int64_t start[HET_MAX_RANK];
  int64_t step[HET_MAX_RANK];
  int64_t count[HET_MAX_RANK];
  bool whole[HET_MAX_RANK]; /* output dim equals the input dim (symbol kept) */
} het_slice_plan;
het_status het_slice_plan_make(const het_infer_ctx *ctx, het_slice_plan *p,
                               bool *known);

/* Pad: pads[0..r) before, pads[r..2r) after; constant mode value is read by
 * the kernel.  *known false when the pads are not known. */
typedef enum { HET_PAD_CONSTANT, HET_PAD_REFLECT, HET_PAD_EDGE } het_pad_mode;
het_status het_pad_params(const het_infer_ctx *ctx, int64_t *pads,
                          het_pad_mode *mode, bool *known);

/* Resize/Upsample parameters. */
typedef enum {
  HET_RESIZE_NEAREST, HET_RESIZE_LINEAR, HET_RESIZE_CUBIC
} het_resize_mode;
typedef enum {
  HET_CT_HALF_PIXEL, HET_CT_PYTORCH_HALF_PIXEL, HET_CT_ALIGN_CORNERS,
  HET_CT_ASYMMETRIC, HET_CT_TF_HALF_PIXEL_FOR_NN, HET_CT_TF_CROP_AND_RESIZE
} het_resize_coord;
typedef enum {
  HET_NEAREST_ROUND_PREFER_FLOOR, HET_NEAREST_ROUND_PREFER_CEIL,
  HET_NEAREST_FLOOR, HET_NEAREST_CEIL,
  HET_NEAREST_SIMPLE /* opset-10 Resize, Upsample: floor, ceil when shrinking */
} het_resize_nearest;
typedef struct het_resize_params {
  het_resize_mode mode;
  het_resize_coord coord;
  het_resize_nearest nearest;
  double cubic_a;
  bool exclude_outside;
  double extrapolation;
  double scale[HET_MAX_RANK];  /* effective scale per dim (out/in for sizes) */
  double roi[2 * HET_MAX_RANK];
  int64_t out[HET_MAX_RANK];   /* -1 when not known */
} het_resize_params;
/* *known false when scales/sizes are not known yet. */
het_status het_resize_params_make(const het_infer_ctx *ctx,
                                  het_resize_params *p, bool *known);

/* ---- infer functions ---- */
#define HET_TENSOR_INFER_LIST(X)                                          \
  X(constant) X(constant_of_shape) X(identity) X(shape) X(size)          \
  X(reshape) X(flatten) X(squeeze) X(unsqueeze) X(transpose) X(concat)   \
  X(split) X(slice) X(gather) X(gather_elements) X(gather_nd)            \
  X(scatter_nd) X(scatter_elements) X(expand) X(tile) X(pad) X(range)    \
  X(one_hot) X(non_zero) X(compress) X(eye_like) X(trilu)                \
  X(depth_to_space) X(space_to_depth) X(reverse_sequence) X(unique)      \
  X(resize)
#define HET_TENSOR_INFER_DECL_(name) het_status het_infer_##name(het_infer_ctx *ctx);
HET_TENSOR_INFER_LIST(HET_TENSOR_INFER_DECL_)
#undef HET_TENSOR_INFER_DECL_

#endif
