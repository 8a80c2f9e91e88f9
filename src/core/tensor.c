/* tensor.c — tensor creation, storage and the public tensor accessors. */
#include "core/tensor.h"

#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/ep.h"
#include "core/hostmem.h"
#include "core/status.h"

bool het_dim_mul(int64_t a, int64_t b, int64_t *out) {
  int64_t p;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &p))
    return false;
  *out = p;
  return true;
}

/* The product of the non-zero dims must fit even when a dim is 0: the
 * tensor is empty, but its strides are still products of its dims. */
int64_t het_dims_count(const int64_t *dims, int rank) {
  int64_t n = 1;
  bool empty = false;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0)
      empty = true;
    else if (!het_dim_mul(n, dims[i], &n))
      return -1;
  }
  return empty ? 0 : n;
}

het_status het_tensor_check_shape(het_dtype dtype, const int64_t *dims,
                                  int rank, const char *what, size_t *nbytes) {
  if (!het_dtype_valid((int)dtype))
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", what,
                     (int)dtype);
  if (dtype == HET_DTYPE_STRING || dtype == HET_DTYPE_COMPLEX64 ||
      dtype == HET_DTYPE_COMPLEX128)
    return het_error(HET_ERR_UNSUPPORTED, "%s: %s tensors are not supported",
                     what, het_dtype_str(dtype));
  if (rank < 0 || rank > HET_MAX_RANK)
    return het_error(rank < 0 ? HET_ERR_INVALID_ARGUMENT : HET_ERR_UNSUPPORTED,
                     "%s: rank %d outside 0..%d", what, rank, HET_MAX_RANK);
  if (rank > 0 && !dims)
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s: dims is NULL", what);
  for (int i = 0; i < rank; i++)
    if (dims[i] < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT, "%s: dim %d is %lld", what, i,
                       (long long)dims[i]);
  int64_t n = het_dims_count(dims, rank);
  size_t es = het_dtype_size(dtype);
  if (n < 0 || (uint64_t)n > (SIZE_MAX / 2) / es)
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s: element count overflows",
                     what);
  *nbytes = (size_t)n * es;
  return HET_OK;
}

void het_tensor_reset(het_tensor *t) {
  if (t->owned && t->device)
    het_device_free(t->device, t->data);
  else if (t->owned)
    free(t->data);
  t->data = NULL;
  t->nbytes = 0;
  t->owned = false;
  t->device = NULL;
}

het_status het_tensor_alloc_on(het_tensor *t, const het_device *device,
                               het_dtype dtype, const int64_t *dims,
                               int rank) {
  if (het_device_is_host(device))
    return het_tensor_alloc(t, dtype, dims, rank);
  size_t nbytes;
  het_tensor_reset(t);
  HET_TRY(het_tensor_check_shape(dtype, dims, rank, "tensor", &nbytes));
  void *handle;
  HET_TRY(het_device_alloc(device, nbytes ? nbytes : 1, &handle));
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  t->data = handle;
  t->nbytes = nbytes;
  t->owned = true;
  t->device = device;
  return HET_OK;
}

het_status het_tensor_alloc(het_tensor *t, het_dtype dtype,
                            const int64_t *dims, int rank) {
  size_t nbytes;
  het_tensor_reset(t);
  HET_TRY(het_tensor_check_shape(dtype, dims, rank, "tensor", &nbytes));
  void *p = het_host_alloc(nbytes);
  if (!p)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes",
                     nbytes);
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  t->data = p;
  t->nbytes = nbytes;
  t->owned = true;
  return HET_OK;
}

het_status het_tensor_create_empty(het_dtype dtype, const int64_t *dims,
                                   int rank, het_tensor **out) {
  het_tensor *t = calloc(1, sizeof *t);
  if (!t)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate tensor");
  het_status st = het_tensor_alloc(t, dtype, dims, rank);
  if (st != HET_OK) {
    free(t);
    return st;
  }
  *out = t;
  return HET_OK;
}

het_status het_tensor_create(het_dtype dtype, const int64_t *dims, int rank,
                             het_tensor **out) {
  if (!out)
    return het_error(HET_ERR_INVALID_ARGUMENT, "het_tensor_create: out is NULL");
  het_tensor *t = NULL;
  HET_TRY(het_tensor_create_empty(dtype, dims, rank, &t));
  memset(t->data, 0, t->nbytes);
  *out = t;
  return HET_OK;
}

het_status het_tensor_create_over(het_dtype dtype, const int64_t *dims,
                                  int rank, void *data, size_t nbytes,
                                  het_tensor **out) {
  size_t want;
  if (!out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_tensor_create_over: out is NULL");
  HET_TRY(het_tensor_check_shape(dtype, dims, rank, "het_tensor_create_over",
                                 &want));
  if (nbytes != want)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_tensor_create_over: nbytes is %zu, shape needs %zu",
                     nbytes, want);
  if (!data && want)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_tensor_create_over: data is NULL");
  het_tensor *t = calloc(1, sizeof *t);
  if (!t)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate tensor");
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank; i++)
    t->dims[i] = dims[i];
  t->data = data;
  t->nbytes = nbytes;
  t->owned = false;
  *out = t;
  return HET_OK;
}

het_status het_tensor_clone(const het_tensor *src, het_tensor **out) {
  het_tensor *t = NULL;
  HET_TRY(het_tensor_create_empty(src->dtype, src->dims, src->rank, &t));
  if (src->nbytes)
    memcpy(t->data, src->data, src->nbytes);
  *out = t;
  return HET_OK;
}

void het_tensor_destroy(het_tensor *tensor) {
  if (!tensor)
    return;
  het_tensor_reset(tensor);
  free(tensor);
}

void het_tensor_move_into(het_tensor *dst, het_tensor *src) {
  het_tensor_reset(dst);
  *dst = *src;
  src->owned = false;
  src->data = NULL;
  het_tensor_destroy(src);
}

int64_t het_tensor_count(const het_tensor *t) {
  return het_dims_count(t->dims, t->rank);
}

int64_t het_tensor_get_i64(const het_tensor *t, int64_t i) {
  return het_dtype_load_i64(t->dtype, t->data, i);
}

het_dtype het_tensor_get_dtype(const het_tensor *t) {
  return t ? t->dtype : HET_DTYPE_UNDEFINED;
}

int het_tensor_get_rank(const het_tensor *t) { return t ? t->rank : -1; }

int het_tensor_get_dims(const het_tensor *t, int64_t *dims, int max_dims) {
  if (!t)
    return -1;
  for (int i = 0; i < t->rank && i < max_dims; i++)
    dims[i] = t->dims[i];
  return t->rank;
}

int64_t het_tensor_get_count(const het_tensor *t) {
  return t ? het_tensor_count(t) : -1;
}

size_t het_tensor_get_nbytes(const het_tensor *t) { return t ? t->nbytes : 0; }

void *het_tensor_get_data(het_tensor *t) { return t ? t->data : NULL; }

void het_layout_permute(const void *src, void *dst, const int64_t *dims,
                        size_t es, bool to_nhwc) {
  int64_t n = dims[0], c = dims[1], hw = dims[2] * dims[3];
  const char *s = src;
  char *d = dst;
  for (int64_t b = 0; b < n; b++)
    for (int64_t ch = 0; ch < c; ch++)
      for (int64_t p = 0; p < hw; p++) {
        size_t nchw = (size_t)((b * c + ch) * hw + p) * es;
        size_t nhwc = (size_t)((b * hw + p) * c + ch) * es;
        memcpy(d + (to_nhwc ? nhwc : nchw), s + (to_nhwc ? nchw : nhwc), es);
      }
}
