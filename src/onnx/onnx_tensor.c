/* onnx_tensor.c — TensorProto → het_tensor (typed fields, raw_data,
 * external data files), het_tensor → TensorProto (raw_data, shared by the
 * .pb encoder and the model writer) and TensorProto encode/decode.
 * Invariant: the element count comes from dims checked for sign, rank and
 * overflow, and is compared with the data actually present (in the message
 * or in the external file) before anything is allocated.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/ep.h"
#include "core/hostmem.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/loader.h"
#include "onnx/onnx_internal.h"

/* Which TensorProto repeated field carries a dtype's elements. */
typedef enum het_onnx_field {
  HET_FIELD_FLOAT,
  HET_FIELD_INT32,
  HET_FIELD_STRING,
  HET_FIELD_INT64,
  HET_FIELD_DOUBLE,
  HET_FIELD_UINT64,
  HET_FIELD_COUNT_
} het_onnx_field;

static const char *const het_field_names[HET_FIELD_COUNT_] = {
    "float_data", "int32_data", "string_data",
    "int64_data", "double_data", "uint64_data"};

static het_onnx_field het_onnx_typed_field(het_dtype dt) {
  switch (dt) {
  case HET_DTYPE_FLOAT32:
    return HET_FIELD_FLOAT;
  case HET_DTYPE_INT64:
    return HET_FIELD_INT64;
  case HET_DTYPE_FLOAT64:
    return HET_FIELD_DOUBLE;
  case HET_DTYPE_UINT32:
  case HET_DTYPE_UINT64:
    return HET_FIELD_UINT64;
  default: /* int32, int16/8, uint16/8, bool, float16, bfloat16 */
    return HET_FIELD_INT32;
  }
}

static size_t het_onnx_field_count(const Onnx__TensorProto *tp,
                                   het_onnx_field f) {
  switch (f) {
  case HET_FIELD_FLOAT:
    return tp->n_float_data;
  case HET_FIELD_INT32:
    return tp->n_int32_data;
  case HET_FIELD_STRING:
    return tp->n_string_data;
  case HET_FIELD_INT64:
    return tp->n_int64_data;
  case HET_FIELD_DOUBLE:
    return tp->n_double_data;
  default:
    return tp->n_uint64_data;
  }
}

static bool het_host_big_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one == 0;
}

/* Little-endian file order → host order (no-op on little-endian hosts). */
static void het_onnx_swap_elems(void *data, size_t nbytes, size_t es) {
  if (es < 2 || !het_host_big_endian())
    return;
  uint8_t *p = data;
  for (size_t i = 0; i + es <= nbytes; i += es)
    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
      uint8_t c = p[i + a];
      p[i + a] = p[i + b];
      p[i + b] = c;
    }
}

static void het_onnx_dims_str(char *buf, size_t cap, const int64_t *dims,
                              size_t n) {
  size_t used = (size_t)snprintf(buf, cap, "[");
  for (size_t i = 0; i < n && used < cap; i++)
    used += (size_t)snprintf(buf + used, cap - used, "%s%lld", i ? "," : "",
                             (long long)dims[i]);
  if (used < cap)
    snprintf(buf + used, cap - used, "]");
}

/* Checks dtype and dims; gives the element count and byte size. */
static het_status het_onnx_tensor_shape(const Onnx__TensorProto *tp,
                                        const char *name, het_dtype *dtype,
                                        size_t *count, size_t *nbytes) {
  if (!tp->has_data_type || tp->data_type == 0)
    return het_error(HET_ERR_INVALID_MODEL, "tensor '%s' has no data type",
                     name);
  if (!het_dtype_valid(tp->data_type))
    return het_error(tp->data_type > 0 && tp->data_type < 32
                         ? HET_ERR_UNSUPPORTED
                         : HET_ERR_INVALID_MODEL,
                     "tensor '%s' has unknown data type %d", name,
                     (int)tp->data_type);
  het_dtype dt = (het_dtype)tp->data_type;
  if (dt == HET_DTYPE_STRING || dt == HET_DTYPE_COMPLEX64 ||
      dt == HET_DTYPE_COMPLEX128)
    return het_error(HET_ERR_UNSUPPORTED,
                     "tensor '%s': %s tensors are not supported", name,
                     het_dtype_str(dt));
  if (tp->n_dims > HET_MAX_RANK)
    return het_error(HET_ERR_UNSUPPORTED,
                     "tensor '%s' has rank %zu, more than the %d supported",
                     name, tp->n_dims, HET_MAX_RANK);
  for (size_t i = 0; i < tp->n_dims; i++)
    if (tp->dims[i] < 0)
      return het_error(HET_ERR_INVALID_MODEL, "tensor '%s': dim %zu is %lld",
                       name, i, (long long)tp->dims[i]);
  int64_t n = het_dims_count(tp->dims, (int)tp->n_dims);
  size_t es = het_dtype_size(dt);
  if (n < 0 || (uint64_t)n > (SIZE_MAX / 2) / es)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': element count overflows", name);
  if (tp->segment)
    return het_error(HET_ERR_UNSUPPORTED,
                     "tensor '%s': segmented tensors are not supported",
                     name);
  *dtype = dt;
  *count = (size_t)n;
  *nbytes = (size_t)n * es;
  return HET_OK;
}

/* Parses a non-negative decimal integer (external_data offset/length). */
static bool het_onnx_parse_u64(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!s || !*s)
    return false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return false;
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

/* Refuses absolute locations and any ".." component. */
static bool het_onnx_location_safe(const char *loc) {
  if (loc[0] == '/')
    return false;
  for (const char *p = loc; *p;) {
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 2 && p[0] == '.' && p[1] == '.')
      return false;
    p += len;
    while (*p == '/')
      p++;
  }
  return true;
}

typedef struct het_onnx_ext {
  const char *location;
  uint64_t offset, length;
  bool has_length;
} het_onnx_ext;

static het_status het_onnx_ext_parse(const Onnx__TensorProto *tp,
                                     const char *name, het_onnx_ext *ext) {
  memset(ext, 0, sizeof *ext);
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const Onnx__StringStringEntryProto *e = tp->external_data[i];
    const char *key = e->key ? e->key : "";
    if (strcmp(key, "location") == 0) {
      ext->location = e->value;
    } else if (strcmp(key, "offset") == 0) {
      if (!het_onnx_parse_u64(e->value, &ext->offset))
        return het_error(HET_ERR_INVALID_MODEL,
                         "tensor '%s': external data offset '%s' is not a "
                         "non-negative integer",
                         name, e->value ? e->value : "");
    } else if (strcmp(key, "length") == 0) {
      if (!het_onnx_parse_u64(e->value, &ext->length))
        return het_error(HET_ERR_INVALID_MODEL,
                         "tensor '%s': external data length '%s' is not a "
                         "non-negative integer",
                         name, e->value ? e->value : "");
      ext->has_length = true;
    }
  }
  if (!ext->location || !*ext->location)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': external data has no location", name);
  if (!het_onnx_location_safe(ext->location))
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': external data location '%s' is absolute "
                     "or leaves the model folder",
                     name, ext->location);
  return HET_OK;
}

/* Resolves the external file inside ctx->base_dir and opens it when it is
 * a regular file (*size: its length). */
static het_status het_onnx_ext_open(const het_onnx_ctx *ctx, const char *name,
                                    const char *loc, int *fd_out,
                                    uint64_t *size) {
  char *base = realpath(ctx->base_dir, NULL);
  if (!base)
    return het_error(HET_ERR_IO, "tensor '%s': model folder '%s': %s", name,
                     ctx->base_dir, strerror(errno));
  size_t len = strlen(ctx->base_dir) + strlen(loc) + 2;
  char *joined = malloc(len);
  char *real = NULL;
  het_status st = HET_OK;
  if (!joined) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate path");
    goto done;
  }
  snprintf(joined, len, "%s/%s", ctx->base_dir, loc);
  real = realpath(joined, NULL);
  if (!real) {
    st = het_error(HET_ERR_IO, "tensor '%s': external data file '%s': %s",
                   name, loc, strerror(errno));
    goto done;
  }
  size_t bl = strlen(base);
  bool inside = strncmp(real, base, bl) == 0 &&
                (real[bl] == '/' || (bl == 1 && base[0] == '/'));
  if (!inside) {
    st = het_error(HET_ERR_INVALID_MODEL,
                   "tensor '%s': external data location '%s' resolves "
                   "outside the model folder",
                   name, loc);
    goto done;
  }
  char what[512];
  snprintf(what, sizeof what, "tensor '%s': external data '%s'", name, loc);
  st = het_open_regular(real, what, fd_out, size);
done:
  free(base);
  free(joined);
  free(real);
  return st;
}

/* Opens the external data of tp and checks that it holds exactly nbytes
 * at the given offset.  On success *fd is open (caller closes). */
static het_status het_onnx_ext_check(const het_onnx_ctx *ctx,
                                     const Onnx__TensorProto *tp,
                                     const char *name, size_t nbytes, int *fd,
                                     uint64_t *offset) {
  het_onnx_ext ext;
  if (!ctx->base_dir)
    return het_error(HET_ERR_UNSUPPORTED,
                     "tensor '%s': external data is refused for a model "
                     "loaded from memory",
                     name);
  HET_TRY(het_onnx_ext_parse(tp, name, &ext));
  uint64_t size;
  HET_TRY(het_onnx_ext_open(ctx, name, ext.location, fd, &size));
  het_status st = HET_OK;
  if (ext.offset > size) {
    st = het_error(HET_ERR_INVALID_MODEL,
                   "tensor '%s': external data offset %llu is beyond the end "
                   "of '%s' (%llu bytes)",
                   name, (unsigned long long)ext.offset, ext.location,
                   (unsigned long long)size);
    goto fail;
  }
  uint64_t length = ext.has_length ? ext.length : size - ext.offset;
  if (length > size - ext.offset) {
    st = het_error(HET_ERR_INVALID_MODEL,
                   "tensor '%s': external data offset %llu + length %llu "
                   "exceeds the size of '%s' (%llu bytes)",
                   name, (unsigned long long)ext.offset,
                   (unsigned long long)length, ext.location,
                   (unsigned long long)size);
    goto fail;
  }
  if (length != nbytes) {
    st = het_error(HET_ERR_INVALID_MODEL,
                   "tensor '%s': external data holds %llu bytes, its shape "
                   "needs %zu",
                   name, (unsigned long long)length, nbytes);
    goto fail;
  }
  *offset = ext.offset;
  return HET_OK;
fail:
  close(*fd);
  *fd = -1;
  return st;
}

static het_status het_onnx_ext_read(int fd, uint64_t offset, void *dst,
                                    size_t nbytes, const char *name) {
  uint8_t *p = dst;
  size_t done = 0;
  while (done < nbytes) {
    ssize_t r = pread(fd, p + done, nbytes - done, (off_t)(offset + done));
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      return het_error(HET_ERR_IO, "tensor '%s': reading external data: %s",
                       name, r < 0 ? strerror(errno) : "unexpected end");
    done += (size_t)r;
  }
  return HET_OK;
}

/* Copies typed-field elements into t (already sized to count). */
static void het_onnx_fill_typed(const Onnx__TensorProto *tp, het_tensor *t,
                                size_t count) {
  void *d = t->data;
  switch (t->dtype) {
  case HET_DTYPE_FLOAT32:
    memcpy(d, tp->float_data, count * sizeof(float));
    break;
  case HET_DTYPE_FLOAT64:
    memcpy(d, tp->double_data, count * sizeof(double));
    break;
  case HET_DTYPE_INT64:
    memcpy(d, tp->int64_data, count * sizeof(int64_t));
    break;
  case HET_DTYPE_UINT64:
    memcpy(d, tp->uint64_data, count * sizeof(uint64_t));
    break;
  case HET_DTYPE_UINT32:
    for (size_t i = 0; i < count; i++)
      ((uint32_t *)d)[i] = (uint32_t)tp->uint64_data[i];
    break;
  case HET_DTYPE_INT32:
    memcpy(d, tp->int32_data, count * sizeof(int32_t));
    break;
  case HET_DTYPE_INT16:
  case HET_DTYPE_UINT16:
  case HET_DTYPE_FLOAT16:
  case HET_DTYPE_BFLOAT16:
    for (size_t i = 0; i < count; i++)
      ((uint16_t *)d)[i] = (uint16_t)(uint32_t)tp->int32_data[i];
    break;
  case HET_DTYPE_BOOL:
    for (size_t i = 0; i < count; i++)
      ((uint8_t *)d)[i] = tp->int32_data[i] != 0;
    break;
  default: /* int8, uint8 */
    for (size_t i = 0; i < count; i++)
      ((uint8_t *)d)[i] = (uint8_t)(uint32_t)tp->int32_data[i];
    break;
  }
}

/* Where the elements come from, checked against the shape. */
typedef enum het_onnx_source {
  HET_SRC_NONE, /* empty tensor */
  HET_SRC_RAW,
  HET_SRC_TYPED,
  HET_SRC_EXTERNAL,
} het_onnx_source;

static het_status het_onnx_inline_source(const Onnx__TensorProto *tp,
                                         const char *name, het_dtype dt,
                                         size_t count, size_t nbytes,
                                         het_onnx_source *src) {
  het_onnx_field want = het_onnx_typed_field(dt);
  size_t typed = het_onnx_field_count(tp, want);
  for (int f = 0; f < HET_FIELD_COUNT_; f++)
    if (f != (int)want && het_onnx_field_count(tp, (het_onnx_field)f))
      return het_error(HET_ERR_INVALID_MODEL,
                       "tensor '%s': field %s is not valid for a %s tensor",
                       name, het_field_names[f], het_dtype_str(dt));
  char shape[160];
  het_onnx_dims_str(shape, sizeof shape, tp->dims, tp->n_dims);
  if (tp->has_raw_data && (tp->raw_data.len > 0 || typed == 0)) {
    if (tp->raw_data.len != nbytes)
      return het_error(HET_ERR_INVALID_MODEL,
                       "tensor '%s': raw_data holds %zu bytes, shape %s of "
                       "%s needs %zu",
                       name, tp->raw_data.len, shape, het_dtype_str(dt),
                       nbytes);
    *src = HET_SRC_RAW;
    return HET_OK;
  }
  if (typed != count)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': %s holds %zu elements, shape %s needs %zu",
                     name, het_field_names[want], typed, shape, count);
  *src = count ? HET_SRC_TYPED : HET_SRC_NONE;
  return HET_OK;
}

/* A plan's initializer: a borrowed view of its bytes in the plan's
 * weights (a bool tensor is copied: its bytes are made 0 or 1). */
static het_status het_onnx_plan_weight(const het_onnx_ctx *ctx,
                                       const Onnx__TensorProto *tp,
                                       const char *name, het_dtype dt,
                                       size_t nbytes, het_tensor **out) {
  het_onnx_ext ext;
  HET_TRY(het_onnx_ext_parse(tp, name, &ext));
  if (strcmp(ext.location, HET_ONNX_PLAN_WEIGHTS) != 0)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': external data '%s' outside the plan's "
                     "weights",
                     name, ext.location);
  uint64_t length = ext.has_length ? ext.length : nbytes;
  if (ext.offset % 64 || ext.offset > ctx->weights_size ||
      length > ctx->weights_size - ext.offset || length != nbytes)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': %llu bytes at %llu of the plan's weights "
                     "(%zu bytes; the shape needs %zu, 64-byte aligned)",
                     name, (unsigned long long)length,
                     (unsigned long long)ext.offset, ctx->weights_size,
                     nbytes);
  void *at = (void *)(uintptr_t)(ctx->weights + ext.offset);
  if (dt != HET_DTYPE_BOOL)
    return het_tensor_create_over(dt, tp->dims, (int)tp->n_dims,
                                  nbytes ? at : NULL, nbytes, out);
  het_tensor *t = NULL;
  HET_TRY(het_tensor_create_empty(dt, tp->dims, (int)tp->n_dims, &t));
  for (size_t i = 0; i < nbytes; i++)
    ((uint8_t *)t->data)[i] = ((const uint8_t *)at)[i] != 0;
  *out = t;
  return HET_OK;
}

static _Thread_local bool het_onnx_pb_oom;

static void *het_onnx_pb_alloc(void *data, size_t size) {
  (void)data;
  void *p = size < HET_ONNX_ADOPT_BYTES ? malloc(size ? size : 1)
                                         : het_host_alloc(size);
  het_onnx_pb_oom |= !p;
  return p;
}

bool het_onnx_pb_oom_take(void) {
  bool was = het_onnx_pb_oom;
  het_onnx_pb_oom = false;
  return was;
}

static void het_onnx_pb_free(void *data, void *p) {
  (void)data;
  free(p);
}

ProtobufCAllocator het_onnx_pb_allocator = {
    .alloc = het_onnx_pb_alloc, .free = het_onnx_pb_free, .allocator_data = NULL};

/* The tensor of dims over raw_data's buffer, taken from tp (ctx->adopt:
 * its message is ours and freed after the conversion), or NULL (st OK)
 * when the buffer is small or unaligned and must be copied. */
static het_status het_onnx_adopt_raw(const het_onnx_ctx *ctx,
                                     const Onnx__TensorProto *tp, het_dtype dt,
                                     size_t nbytes, het_tensor **out) {
  *out = NULL;
  if (!ctx->adopt || nbytes < HET_ONNX_ADOPT_BYTES ||
      tp->raw_data.len != nbytes || (uintptr_t)tp->raw_data.data % 64)
    return HET_OK;
  HET_TRY(het_tensor_create_over(dt, tp->dims, (int)tp->n_dims,
                                 tp->raw_data.data, nbytes, out));
  (*out)->owned = true;
  /* not const: the message was unpacked by this load, which owns it */
  Onnx__TensorProto *mine = (Onnx__TensorProto *)tp;
  mine->raw_data.data = NULL;
  mine->raw_data.len = 0;
  return HET_OK;
}

het_status het_onnx_tensor_from_proto(const het_onnx_ctx *ctx,
                                      const Onnx__TensorProto *tp,
                                      const char *label, het_tensor **out) {
  const char *name = tp->name && *tp->name ? tp->name : label;
  het_dtype dt = HET_DTYPE_UNDEFINED;
  size_t count = 0, nbytes = 0;
  HET_TRY(het_onnx_tensor_shape(tp, name, &dt, &count, &nbytes));
  if (tp->has_data_location &&
      tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT &&
      tp->data_location != ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return het_error(HET_ERR_INVALID_MODEL,
                     "tensor '%s': unknown data_location %d", name,
                     (int)tp->data_location);
  het_onnx_source src = HET_SRC_NONE;
  int fd = -1;
  uint64_t offset = 0;
  bool external =
      tp->has_data_location &&
      tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (external && ctx->has_weights)
    return het_onnx_plan_weight(ctx, tp, name, dt, nbytes, out);
  if (external) {
    HET_TRY(het_onnx_ext_check(ctx, tp, name, nbytes, &fd, &offset));
    src = HET_SRC_EXTERNAL;
  } else {
    HET_TRY(het_onnx_inline_source(tp, name, dt, count, nbytes, &src));
  }
  het_tensor *t = NULL;
  het_status st = src == HET_SRC_RAW
                      ? het_onnx_adopt_raw(ctx, tp, dt, nbytes, &t)
                      : HET_OK;
  bool adopted = t != NULL;
  if (st == HET_OK && !adopted)
    st = het_tensor_create_empty(dt, tp->dims, (int)tp->n_dims, &t);
  if (st != HET_OK) {
    het_error_wrap(st, "tensor '%s'", name);
    goto done;
  }
  if (src == HET_SRC_RAW && nbytes && !adopted)
    memcpy(t->data, tp->raw_data.data, nbytes);
  else if (src == HET_SRC_TYPED)
    het_onnx_fill_typed(tp, t, count);
  else if (src == HET_SRC_EXTERNAL)
    st = het_onnx_ext_read(fd, offset, t->data, nbytes, name);
  if (st != HET_OK)
    goto done;
  if (src == HET_SRC_RAW || src == HET_SRC_EXTERNAL) {
    het_onnx_swap_elems(t->data, nbytes, het_dtype_size(dt));
    if (dt == HET_DTYPE_BOOL)
      for (size_t i = 0; i < nbytes; i++)
        ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
  }
  *out = t;
  t = NULL;
done:
  if (fd >= 0)
    close(fd);
  het_tensor_destroy(t);
  return st;
}

het_status het_onnx_tensor_decode(const void *data, size_t size,
                                  const char *what, het_tensor **out,
                                  char **name) {
  static const uint8_t empty[1];
  if (!out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_tensor_decode: out is NULL");
  if (!data && size)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_tensor_decode: data is NULL");
  if (!what)
    what = "tensor";
  het_onnx_pb_oom_take();
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(
      &het_onnx_pb_allocator, size, data ? data : empty);
  if (!tp && het_onnx_pb_oom_take())
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s: out of memory decoding",
                     what);
  if (!tp)
    return het_error(HET_ERR_INVALID_MODEL,
                     "%s: not a valid TensorProto (protobuf decoding failed)",
                     what);
  het_onnx_ctx ctx = {.what = what, .base_dir = NULL, .root = NULL,
                      .adopt = true};
  het_tensor *t = NULL;
  char *copy = NULL;
  het_status st = het_onnx_tensor_from_proto(&ctx, tp, "(unnamed)", &t);
  if (st != HET_OK) {
    het_error_wrap(st, "%s", what);
    goto done;
  }
  if (name) {
    copy = strdup(tp->name ? tp->name : "");
    if (!copy) {
      st = het_error(HET_ERR_OUT_OF_MEMORY, "%s: cannot copy name", what);
      het_tensor_destroy(t);
      goto done;
    }
    *name = copy;
  }
  *out = t;
done:
  onnx__tensor_proto__free_unpacked(tp, &het_onnx_pb_allocator);
  return st;
}

het_status het_onnx_tensor_to_proto(het_arena *ar, const het_tensor *t,
                                    const char *name, Onnx__TensorProto *tp) {
  size_t nbytes;
  const char *what = name && *name ? name : "tensor";
  HET_TRY(het_tensor_check_shape(t->dtype, t->dims, t->rank, what, &nbytes));
  if (nbytes != t->nbytes || (nbytes && !t->data))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "tensor '%s': data size %zu does not match its shape",
                     name ? name : "", t->nbytes);
  if (!het_device_is_host(t->device))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "tensor '%s': data is not in host memory", what);
  int64_t *dims = het_arena_calloc(ar, (size_t)t->rank + 1, sizeof *dims);
  char *tname = het_arena_strdup(ar, name ? name : "");
  uint8_t *data = t->data;
  if (het_host_big_endian() && nbytes && het_dtype_size(t->dtype) > 1) {
    data = het_arena_alloc(ar, nbytes);
    if (data) {
      memcpy(data, t->data, nbytes);
      het_onnx_swap_elems(data, nbytes, het_dtype_size(t->dtype));
    }
  }
  if (!dims || !tname || (nbytes && !data))
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot encode tensor '%s'",
                     what);
  for (int i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  tp->n_dims = (size_t)t->rank;
  tp->dims = dims;
  tp->has_data_type = 1;
  tp->data_type = (int32_t)t->dtype;
  tp->name = tname;
  tp->has_raw_data = 1;
  tp->raw_data.len = nbytes;
  tp->raw_data.data = data;
  return HET_OK;
}

het_status het_onnx_tensor_encode(const het_tensor *t, const char *name,
                                  uint8_t **buf, size_t *len) {
  if (!t || !buf || !len)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_tensor_encode: NULL argument");
  het_arena ar;
  het_arena_init(&ar);
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  uint8_t *b = NULL;
  het_status st = het_onnx_tensor_to_proto(&ar, t, name, &tp);
  if (st != HET_OK)
    goto fail;
  size_t n = onnx__tensor_proto__get_packed_size(&tp);
  b = malloc(n ? n : 1);
  if (!b) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "cannot encode tensor (%zu bytes)",
                   n);
    goto fail;
  }
  onnx__tensor_proto__pack(&tp, b);
  het_arena_deinit(&ar);
  *buf = b;
  *len = n;
  return HET_OK;
fail:
  het_arena_deinit(&ar);
  return st;
}
