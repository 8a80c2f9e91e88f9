/* tensor_kernels.h — private to the CPU tensor kernels (kernels/tensor*.c):
 * the run functions gathered in het_kernels_tensor and the copy
 * helpers they share.  Copies are by element size, so every kernel that
 * only moves data works for every dtype.
 */
#ifndef HET_CPU_KERNELS_TENSOR_KERNELS_H
#define HET_CPU_KERNELS_TENSOR_KERNELS_H

#include "core/ops/tensor_ops.h"
#include "kernels/kernel.h"

#define HET_CPU_TENSOR_MAX_IO 8

/* An infer context over the kernel's concrete inputs (data set), for the
 * shared parameter helpers (slice plan, pads, resize params). */
typedef struct het_kernel_tensor_view {
  het_infer_ctx ic;
  het_value_info in[HET_CPU_TENSOR_MAX_IO];
  het_value_info out[HET_CPU_TENSOR_MAX_IO];
} het_kernel_tensor_view;
het_status het_kernel_tensor_view_init(const het_kernel_ctx *ctx,
                                    het_kernel_tensor_view *v);

/* Allocates every present output whose data is still NULL, with the shape
 * the op's inference gives for the concrete inputs. */
het_status het_kernel_tensor_ensure_outputs(const het_kernel_ctx *ctx);

/* Row-major element strides of dims. */
void het_kernel_strides(const int64_t *dims, int rank, int64_t *strides);

/* Copies the dims-shaped view of src (element strides src_st, may be 0 or
 * negative) into the view of dst (strides dst_st); es = element size. */
void het_kernel_copy_strided(char *dst, const int64_t *dst_st, const char *src,
                          const int64_t *src_st, const int64_t *dims, int rank,
                          size_t es);

/* dst (contiguous, shape dims) [i0..] = src[sum maps[d][id] * src_st[d]];
 * an output element whose map entry is -1 on any dim is left untouched. */
void het_kernel_copy_mapped(char *dst, const char *src, const int64_t *src_st,
                         int64_t *const *maps, const int64_t *dims, int rank,
                         size_t es);

/* Index i normalised against dim (negative counts from the end); error
 * naming the node when outside [-dim, dim). */
het_status het_kernel_index(const het_kernel_ctx *ctx, int64_t i, int64_t dim,
                         int64_t *out);

#define HET_CPU_TENSOR_RUN_LIST(X)                                        \
  X(constant) X(constant_of_shape) X(copy) X(shape) X(size) X(transpose)  \
  X(concat) X(split) X(slice) X(gather) X(gather_elements) X(gather_nd)   \
  X(scatter_nd) X(scatter_elements) X(expand) X(tile) X(pad) X(range)     \
  X(one_hot) X(non_zero) X(compress) X(eye_like) X(trilu)                 \
  X(depth_to_space) X(space_to_depth) X(reverse_sequence) X(unique)       \
  X(resize)
#define HET_CPU_TENSOR_DECL_(name) \
  het_status het_kernel_run_##name(het_kernel_ctx *ctx);
HET_CPU_TENSOR_RUN_LIST(HET_CPU_TENSOR_DECL_)
#undef HET_CPU_TENSOR_DECL_

#endif
