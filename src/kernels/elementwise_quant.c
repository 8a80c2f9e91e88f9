/* elementwise_quant.c — QuantizeLinear, DequantizeLinear (per tensor, or
 * per axis from opset 13), DynamicQuantizeLinear, hetrt.QLinearAdd
 * (the optimizer's DQ + DQ -> Add -> Q, operands of one shape) and
 * hetrt.QLinearLut (its DQ -> elementwise ops -> Q as a table of 256).
 * Quantization divides in float32, rounds half to even and saturates to the zero point's type
 * (uint8 when absent).  float32 <-> (u)int8 runs on the vector loops of
 * quant_vec.c, one call per channel block; other types element by element.
 */
#include <math.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "kernels/elementwise_internal.h"
#include "kernels/parallel.h"
#include "kernels/quant_vec.h"

/* The [outer, channels, inner] split of x for a scale of `channels`
 * elements along `axis` (channels 1 = per tensor). */
typedef struct het_ew_qlayout {
  int64_t outer, channels, inner;
} het_ew_qlayout;

static het_status het_ew_qlayout_get(const het_kernel_ctx *ctx,
                                     const het_tensor *x,
                                     const het_tensor *scale,
                                     const het_tensor *zp,
                                     het_ew_qlayout *l) {
  int64_t ns = het_tensor_count(scale);
  l->outer = 1;
  l->channels = 1;
  l->inner = het_tensor_count(x);
  if (zp && het_tensor_count(zp) != ns)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): zero point has %lld "
                     "elements, scale %lld", ctx->node->name,
                     ctx->node->op_type, (long long)het_tensor_count(zp),
                     (long long)ns);
  if (ns == 1 && scale->rank <= 1)
    return HET_OK;
  int64_t axis = het_node_attr_int(ctx->node, "axis", 1);
  if (axis < 0)
    axis += x->rank;
  if (ctx->opset < 13 || scale->rank != 1 || axis < 0 || axis >= x->rank ||
      x->dims[axis] != ns)
    return het_error(HET_ERR_SHAPE, "node '%s' (%s): scale of %lld elements "
                     "does not match input axis %lld", ctx->node->name,
                     ctx->node->op_type, (long long)ns, (long long)axis);
  l->channels = ns;
  l->outer = 1;
  for (int d = 0; d < axis; d++)
    l->outer *= x->dims[d];
  l->inner = 1;
  for (int d = (int)axis + 1; d < x->rank; d++)
    l->inner *= x->dims[d];
  return HET_OK;
}

static double het_ew_qrange(het_dtype t, bool hi) {
  switch (t) {
  case HET_DTYPE_INT8: return hi ? 127 : -128;
  case HET_DTYPE_UINT8: return hi ? 255 : 0;
  case HET_DTYPE_INT16: return hi ? 32767 : -32768;
  case HET_DTYPE_UINT16: return hi ? 65535 : 0;
  default: return hi ? 2147483647.0 : -2147483648.0;
  }
}

/* float f, float32 scale, 8-bit q: the vector loops apply. */
static bool het_ew_q8(const het_tensor *f, const het_tensor *scale,
                      const het_tensor *q) {
  return f->dtype == HET_DTYPE_FLOAT32 && scale->dtype == HET_DTYPE_FLOAT32 &&
         (q->dtype == HET_DTYPE_UINT8 || q->dtype == HET_DTYPE_INT8);
}

static int32_t het_ew_qzp(const het_tensor *zp, int64_t c) {
  return zp ? (int32_t)het_dtype_load_i64(zp->dtype, zp->data, c) : 0;
}

het_status het_kernel_ew_run_QuantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const het_tensor *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  het_ew_qlayout l;
  HET_TRY(het_ew_qlayout_get(ctx, x, scale, zp, &l));
  if (het_ew_q8(x, scale, y)) {
    for (int64_t o = 0, i = 0; o < l.outer; o++)
      for (int64_t c = 0; c < l.channels; c++, i += l.inner)
        het_quant_vec_quantize((const float *)x->data + i,
                               ((const float *)scale->data)[c],
                               het_ew_qzp(zp, c), y->dtype == HET_DTYPE_INT8,
                               (uint8_t *)y->data + i, l.inner);
    return HET_OK;
  }
  double lo = het_ew_qrange(y->dtype, false);
  double hi = het_ew_qrange(y->dtype, true);
  int64_t i = 0;
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t c = 0; c < l.channels; c++) {
      float s = (float)het_ew_load(scale, c);
      double z = zp ? het_ew_load(zp, c) : 0.0;
      for (int64_t k = 0; k < l.inner; k++, i++) {
        float q = nearbyintf((float)het_ew_load(x, i) / s);
        double v = (double)q + z;
        v = v < lo ? lo : v > hi ? hi : v;
        het_dtype_store_f64(y->dtype, y->data, i, v);
      }
    }
  return HET_OK;
}

het_status het_kernel_ew_run_DequantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *scale = ctx->inputs[1];
  const het_tensor *zp = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  if (zp && zp->dtype != x->dtype)
    return het_error(HET_ERR_TYPE, "node '%s' (DequantizeLinear): zero "
                     "point is %s, x is %s", ctx->node->name,
                     het_dtype_str(zp->dtype), het_dtype_str(x->dtype));
  het_ew_qlayout l;
  HET_TRY(het_ew_qlayout_get(ctx, x, scale, zp, &l));
  if (het_ew_q8(y, scale, x)) {
    for (int64_t o = 0, i = 0; o < l.outer; o++)
      for (int64_t c = 0; c < l.channels; c++, i += l.inner)
        het_quant_vec_dequantize((const uint8_t *)x->data + i,
                                 x->dtype == HET_DTYPE_INT8,
                                 het_ew_qzp(zp, c),
                                 ((const float *)scale->data)[c],
                                 (float *)y->data + i, l.inner);
    return HET_OK;
  }
  int64_t i = 0;
  for (int64_t o = 0; o < l.outer; o++)
    for (int64_t c = 0; c < l.channels; c++) {
      float s = (float)het_ew_load(scale, c);
      int64_t z = zp ? het_dtype_load_i64(zp->dtype, zp->data, c) : 0;
      for (int64_t k = 0; k < l.inner; k++, i++) {
        int64_t q = het_dtype_load_i64(x->dtype, x->data, i);
        het_dtype_store_f64(y->dtype, y->data, i, (float)(q - z) * s);
      }
    }
  return HET_OK;
}

het_status het_kernel_ew_run_DynamicQuantizeLinear(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  if (x->dtype != HET_DTYPE_FLOAT32)
    return het_ew_unsupported(ctx, x->dtype);
  const float *xs = x->data;
  int64_t n = het_tensor_count(x);
  float mn = 0.0f, mx = 0.0f; /* the range always holds 0 */
  het_quant_vec_minmax(xs, n, &mn, &mx);
  float scale = (mx - mn) / 255.0f;
  float zpf = scale > 0 ? nearbyintf((0.0f - mn) / scale) : 0.0f;
  zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
  if (scale > 0)
    het_quant_vec_quantize(xs, scale, (int32_t)zpf, false, y->data, n);
  else /* every element is 0 */
    memset(y->data, (int)zpf, (size_t)n);
  if (ctx->n_outputs > 1 && ctx->outputs[1])
    het_dtype_store_f64(ctx->outputs[1]->dtype, ctx->outputs[1]->data, 0,
                        scale);
  if (ctx->n_outputs > 2 && ctx->outputs[2])
    het_dtype_store_f64(ctx->outputs[2]->dtype, ctx->outputs[2]->data, 0,
                        zpf);
  return HET_OK;
}

/* A per-tensor float32 scale and its zero point, for QLinearAdd. */
static bool het_ew_qscalar(const het_tensor *s, const het_tensor *z,
                           float *scale, int32_t *zp) {
  if (s->dtype != HET_DTYPE_FLOAT32 || het_tensor_count(s) != 1 ||
      het_tensor_count(z) != 1)
    return false;
  *scale = *(const float *)s->data;
  *zp = het_ew_qzp(z, 0);
  return true;
}

typedef struct het_qadd_job {
  const uint8_t *a, *b;
  uint8_t *c;
  float as, bs, cs;
  int32_t az, bz, cz;
  bool is_signed;
} het_qadd_job;

/* Elements [i0, i1) of a QLinearAdd (each byte of c from the same bytes
 * of a and b alone, so any split gives the same bytes). */
static void het_qadd_range(void *arg, int64_t i0, int64_t i1) {
  const het_qadd_job *j = arg;
  het_quant_vec_add(j->a + i0, j->as, j->az, j->b + i0, j->bs, j->bz, j->cs,
                    j->cz, j->is_signed, j->c + i0, i1 - i0);
}

het_status het_kernel_ew_run_QLinearAdd(het_kernel_ctx *ctx) {
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[3];
  het_tensor *c = ctx->outputs[0];
  float as, bs, cs;
  int32_t az, bz, cz;
  if (!het_ew_qscalar(ctx->inputs[1], ctx->inputs[2], &as, &az) ||
      !het_ew_qscalar(ctx->inputs[4], ctx->inputs[5], &bs, &bz) ||
      !het_ew_qscalar(ctx->inputs[6], ctx->inputs[7], &cs, &cz))
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (QLinearAdd): scales "
                     "and zero points must be float32 and uint8/int8 "
                     "scalars", ctx->node->name);
  if (het_tensor_count(a) != het_tensor_count(c) ||
      het_tensor_count(b) != het_tensor_count(c) || a->dtype != b->dtype ||
      a->dtype != c->dtype)
    return het_error(HET_ERR_UNSUPPORTED, "node '%s' (QLinearAdd): a, b and "
                     "c must be of one shape and one type", ctx->node->name);
  het_qadd_job j = {.a = a->data, .b = b->data, .c = c->data, .as = as,
                    .bs = bs, .cs = cs, .az = az, .bz = bz, .cz = cz,
                    .is_signed = a->dtype == HET_DTYPE_INT8};
  het_parallel_for(ctx->par, het_tensor_count(c), 1 << 16, het_qadd_range,
                   &j);
  return HET_OK;
}

/* ---- hetrt.QLinearLut: y = table[x] ---- */

typedef struct het_qlut_job {
  const uint8_t *x, *table;
  uint8_t *y;
  uint8_t flip; /* 0x80 for int8 x: byte -128 is entry 0 */
} het_qlut_job;

#if defined(__x86_64__) && defined(__GNUC__)
/* 64 bytes at a time: two 128-entry halves of the table (vpermi2b picks
 * within one by the low 7 bits of the index), the top bit choosing. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static int64_t
het_qlut_avx512(const het_qlut_job *j, int64_t i, int64_t end) {
  __m512i t0 = _mm512_loadu_si512(j->table);
  __m512i t1 = _mm512_loadu_si512(j->table + 64);
  __m512i t2 = _mm512_loadu_si512(j->table + 128);
  __m512i t3 = _mm512_loadu_si512(j->table + 192);
  __m512i f = _mm512_set1_epi8((char)j->flip);
  for (; i + 64 <= end; i += 64) {
    __m512i v = _mm512_xor_si512(_mm512_loadu_si512(j->x + i), f);
    __m512i lo = _mm512_permutex2var_epi8(t0, v, t1);
    __m512i hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_storeu_si512(j->y + i,
                        _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
  return i;
}
#endif

static void het_qlut_range(void *arg, int64_t begin, int64_t end) {
  const het_qlut_job *j = arg;
  int64_t i = begin;
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512vbmi") &&
      __builtin_cpu_supports("avx512bw"))
    i = het_qlut_avx512(j, i, end);
#endif
  for (; i < end; i++)
    j->y[i] = j->table[(uint8_t)(j->x[i] ^ j->flip)];
}

het_status het_kernel_ew_run_QLinearLut(het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *t = ctx->inputs[1];
  het_tensor *y = ctx->outputs[0];
  bool byte_x = x->dtype == HET_DTYPE_UINT8 || x->dtype == HET_DTYPE_INT8;
  if (!byte_x || het_tensor_count(t) != 256 || t->dtype != y->dtype ||
      (y->dtype != HET_DTYPE_UINT8 && y->dtype != HET_DTYPE_INT8))
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s' (QLinearLut): x and the table of 256 must "
                     "be uint8/int8, the table of y's type",
                     ctx->node->name);
  if (het_tensor_count(x) != het_tensor_count(y))
    return het_error(HET_ERR_SHAPE, "node '%s' (QLinearLut): y has %lld "
                     "values for x's %lld", ctx->node->name,
                     (long long)het_tensor_count(y),
                     (long long)het_tensor_count(x));
  het_qlut_job j = {.x = x->data, .table = t->data, .y = y->data,
                    .flip = x->dtype == HET_DTYPE_INT8 ? 0x80 : 0};
  het_parallel_for(ctx->par, het_tensor_count(x), 1 << 16, het_qlut_range,
                   &j);
  return HET_OK;
}
