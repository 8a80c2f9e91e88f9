/* tensor.h — the tensor object behind the public het_tensor.
 * Invariants: rank <= HET_MAX_RANK; dims >= 0; when data != NULL it holds
 * nbytes = count * het_dtype_size(dtype) bytes (64-byte aligned if owned);
 * an owned tensor frees data on destroy, a borrowed one never does.
 */
#ifndef HET_CORE_TENSOR_H
#define HET_CORE_TENSOR_H

#include <stdbool.h>
#include <stdint.h>

#include "hetrt/hetrt.h"
#include "hetrt/provider.h"

struct het_tensor {
  het_dtype dtype;
  int rank;
  int64_t dims[HET_MAX_RANK];
  void *data;
  size_t nbytes;
  bool owned;
  /* Where data lives: NULL for host memory; otherwise data is an address
   * in that device's memory, never dereferenced by the core. */
  const het_device *device;
};

/* Element count of dims, or -1 when any dim < 0 or the product of the
 * non-zero dims overflows int64 (then the strides would too). */
int64_t het_dims_count(const int64_t *dims, int rank);

/* *out = a * b for dims a, b >= 0: the one checked product of shape
 * arithmetic (inferred dims, element counts).  false, leaving *out
 * unwritten, when the product overflows int64 or a factor is negative. */
bool het_dim_mul(int64_t a, int64_t b, int64_t *out);

/* Checks dtype, rank and dims and computes the byte size (overflow → error).
 * what names the tensor in the message. */
het_status het_tensor_check_shape(het_dtype dtype, const int64_t *dims,
                                  int rank, const char *what, size_t *nbytes);

/* Sets dtype/shape and allocates owned, uninitialised, 64-byte aligned
 * storage (at least 1 byte so data != NULL for empty tensors).  Frees what
 * the tensor owned before.  On failure the tensor is left empty. */
het_status het_tensor_alloc(het_tensor *t, het_dtype dtype,
                            const int64_t *dims, int rank);

/* A new owned, uninitialised tensor of the given shape.  Caller owns. */
het_status het_tensor_create_empty(het_dtype dtype, const int64_t *dims,
                                   int rank, het_tensor **out);

/* Sets dtype/shape and allocates owned storage on device (NULL or a
 * host-memory device: host) through its allocator.  Uninitialised. */
het_status het_tensor_alloc_on(het_tensor *t, const het_device *device,
                               het_dtype dtype, const int64_t *dims,
                               int rank);

/* Deep copy (owned, host tensors only).  Caller owns *out. */
het_status het_tensor_clone(const het_tensor *src, het_tensor **out);

/* Releases storage the tensor owns and leaves it empty (data NULL). */
void het_tensor_reset(het_tensor *t);

int64_t het_tensor_count(const het_tensor *t);

/* Moves src's shape and storage into dst (releasing what dst owned) and
 * destroys the src shell. */
void het_tensor_move_into(het_tensor *dst, het_tensor *src);

/* Element i as int64 (integers, bool, floats truncated). For reading
 * shape-like inputs (Reshape's shape, Slice's starts...). */
int64_t het_tensor_get_i64(const het_tensor *t, int64_t i);

/* Reorders a rank-4 tensor's data between two raw buffers, NCHW to NHWC
 * (to_nhwc) or back, for its logical dims
 * (n, c, h, w) with elements of es bytes. */
void het_layout_permute(const void *src, void *dst, const int64_t *dims,
                        size_t es, bool to_nhwc);

#endif
