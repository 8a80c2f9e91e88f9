/* qlinear_dnnl.c — oneDNN (C API, 2.6) int8 convolution for QLinearConv
 * nodes whose scales, zero points, weights and bias are initializers: X
 * and Y uint8 or int8, W int8 with all-zero zero points and a per-tensor
 * or per-output-channel scale, 1-D and 2-D, any group count (depthwise
 * included).  The requantization x_scale * w_scale[c] / y_scale is a
 * oneDNN output scale fixed at primitive creation, x's zero point a oneDNN
 * source zero point, the int32 bias oneDNN's s32 bias (it is in the
 * accumulator's scale, and oneDNN 2.x adds it before the output scale).
 * Primitives run channels-last (brgconv).  Inside a CPU subgraph whose
 * layout pass stores X and/or Y NHWC (providers/cpu/layout.c) they are
 * read and written in place; otherwise X is transposed from NCHW per call
 * and Y back (transpose_u8: 3x oneDNN's u8 reorder).  oneDNN 2.6's
 * brgconv takes a source zero point only without padding (else it picks
 * jit_int8: 1.5x slower on 256x14x14), so a padded node with a nonzero x
 * zero point is padded here while X is transposed (the borders hold the
 * zero point, i.e. real zero, as ONNX pads) and the primitive runs
 * unpadded.  Only CPUs with VNNI are used: without it oneDNN's u8 x s8
 * products go through saturating int16 pairs.
 * The 1x1 nodes and those on at most 4 input channels (a stem) that
 * kernels/qconv_own.h takes run on hetrt's own VNNI kernel instead
 * (qconv_vnni.h: 0.80-0.98x oneDNN's time on ResNet-50's 1x1 shapes,
 * ResNet-50's stem 0.41 instead of 0.52 ms in the model; bit-exact with
 * the reference at any size), staged by qconv_own.c where they need it;
 * their weights go into a plan as panels (layout "hetqv1", presets.h).
 * Each node keeps a cache of primitives keyed by X's shape under the
 * state's mutex; entries are read-only once published, staging is the
 * run's scratch or per thread and streams are per thread, so several
 * threads may run one node at once.  A shape beyond the cache gets a
 * primitive for that call.  3-D Convs and primitives oneDNN only has a
 * reference implementation for fall back to the reference kernel
 * (linalg_qlinear.c) in NCHW; in NHWC the layout pass is refused at
 * prepare (HET_ERR_UNSUPPORTED) and a shape refused later is an error.
 *
 * Exactness against that reference, which computes
 *   y = sat(rint(float(acc + bias) * m) + y_zp),  m = x_s * w_s[c] / y_s
 * in float, rint rounding half to even: oneDNN computes float(acc) +
 * float(bias), times the same m (computed the same way here), and rounds
 * half to even; y's zero point is added after an explicit eltwise_round
 * post-op (a oneDNN dst zero point is added before the rounding: 1 LSB
 * off on ties with an odd zero point, which tests/test_qlinear_dnnl.c
 * catches).  So results are bit-exact while |acc| and |bias| stay below
 * 2^24, where int32 -> float is exact.  Beyond it (possible from
 * K = C/group * kernel size >= 519 with every product near 255 x 127, far
 * from real data: K = 2304 random data reach ~2^18) float(acc) +
 * float(bias) and float(acc + bias) may round apart, and a result lying
 * within that rounding of a half-integer may differ by 1 LSB.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/dtype.h"
#include "core/status.h"
#include "kernels/dnnl/dnnl_common.h"
#include "kernels/dnnl/qlinear_common.h"
#include "kernels/dnnl/qlinear_dnnl.h"
#include "kernels/linalg_kern.h"
#include "kernels/qconv_own.h"

#define QCONV_CACHE 8
#define QCONV_MAX_SP 2 /* 1-D and 2-D */

/* QLinearConv's inputs. */
enum { IN_X, IN_XS, IN_XZ, IN_W, IN_WS, IN_WZ, IN_YS, IN_YZ, IN_B };

/* One primitive for one X shape.  Its src is X channels-last, with
 * prepad padded by lo[d] before and full[d] - in[d] - lo[d] after each
 * spatial dim d (the borders hold x's zero point); its dst is Y
 * channels-last.  X and Y are transposed at the edges (transpose_u8). */
typedef struct qconv_entry {
  int key_rank;
  int64_t key[HET_MAX_RANK];
  bool ok;         /* false: oneDNN refused, run the reference */
  bool own;        /* runs hetrt's VNNI kernel (qown), not p */
  het_qown qown;
  het_dnnl_prim p; /* p.w owned by the entry, or a plan's (w_borrowed) */
  bool prepad;
  int nsp;
  int64_t n, c, m;
  int64_t in[QCONV_MAX_SP], lo[QCONV_MAX_SP], full[QCONV_MAX_SP];
  int64_t out_pixels; /* of one image of Y */
  int64_t *pix_off;   /* prepad: byte offset of each X pixel in the padded
                       * image (owned); NULL: pixel p at p * C */
} qconv_entry;

/* Invariant: scales holds n_scales (1 or m) finite values, bias m values
 * or is NULL; both are fixed after prepare. */
typedef struct qconv_state {
  het_dtype xt, yt; /* UINT8 or INT8 */
  int32_t xzp, yzp;
  int64_t m; /* output channels */
  bool nhwc_x, nhwc_y; /* X / Y stored NHWC (the layout pass's bits) */
  int n_scales;
  float *scales; /* x_scale * w_scale[c] / y_scale */
  int32_t *bias;
  pthread_mutex_t mu;
  int n;
  qconv_entry entries[QCONV_CACHE];
} qconv_state;

const het_tensor *het_dnnl_q8_init(const het_graph *g, const het_node *node,
                                   int i) {
  int id = het_node_input(node, i);
  return id >= 0 ? g->values[id].initializer : NULL;
}

static dnnl_format_tag_t plain_tag(int nd) {
  static const dnnl_format_tag_t tags[] = {dnnl_a,    dnnl_ab,    dnnl_abc,
                                           dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  return tags[nd - 1];
}

/* Channels-last tag (N, spatial..., C) of a 3-D or 4-D activation. */
static dnnl_format_tag_t cl_tag(int nd) {
  return nd == 3 ? dnnl_acb : dnnl_acdb;
}

static bool md_init(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                    dnnl_data_type_t dt, dnnl_format_tag_t tag) {
  dnnl_dims_t d = {0};
  for (int i = 0; i < nd; i++)
    d[i] = dims[i];
  return dnnl_memory_desc_init_by_tag(md, nd, d, dt, tag) == dnnl_success;
}

bool het_dnnl_q8_usable(void) {
  if (!het_dnnl_engine())
    return false;
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  return (isa & dnnl_cpu_isa_avx512_core_vnni) ==
             dnnl_cpu_isa_avx512_core_vnni ||
         (isa & dnnl_cpu_isa_avx2_vnni) == dnnl_cpu_isa_avx2_vnni;
}

bool het_dnnl_q8_zp(const het_graph *g, const het_node *node, int i,
                    het_dtype t, int32_t *zp) {
  *zp = 0;
  if (het_node_input(node, i) < 0)
    return true;
  const het_tensor *z = het_dnnl_q8_init(g, node, i);
  if (!z || z->dtype != t || het_tensor_count(z) != 1)
    return false;
  *zp = (int32_t)het_dtype_load_i64(t, z->data, 0);
  return true;
}

bool het_dnnl_q8_zp_zero(const het_graph *g, const het_node *node, int i,
                         int64_t n) {
  if (het_node_input(node, i) < 0)
    return true;
  const het_tensor *z = het_dnnl_q8_init(g, node, i);
  int64_t cnt = z ? het_tensor_count(z) : 0;
  if (!z || z->dtype != HET_DTYPE_INT8 || (cnt != 1 && cnt != n))
    return false;
  for (int64_t k = 0; k < cnt; k++)
    if (((const int8_t *)z->data)[k] != 0)
      return false;
  return true;
}

dnnl_primitive_attr_t het_dnnl_q8_attr(int n, const float *scales, int32_t xzp,
                                       int32_t yzp) {
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  dnnl_post_ops_t po = NULL;
  if (!attr)
    return NULL;
  bool ok = dnnl_primitive_attr_set_output_scales(attr, n, n > 1 ? 1 << 1 : 0,
                                                  scales) == dnnl_success &&
            (xzp == 0 || dnnl_primitive_attr_set_zero_points(
                             attr, DNNL_ARG_SRC, 1, 0, &xzp) == dnnl_success);
  if (ok && yzp != 0)
    ok = dnnl_post_ops_create(&po) == dnnl_success &&
         dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_round, 0.0f,
                                      0.0f) == dnnl_success &&
         dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, 1.0f,
                                      (float)yzp) == dnnl_success &&
         dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  return het_dnnl_attr_finish(attr, po, ok);
}

const char *het_dnnl_q8_impl(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (!pd ||
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
          dnnl_success ||
      !impl || strncmp(impl, "ref", 3) == 0)
    return NULL;
  return impl;
}

static bool const_f32(const het_tensor *t, int64_t n1, int64_t n2) {
  int64_t n = t ? het_tensor_count(t) : 0;
  return t && t->dtype == HET_DTYPE_FLOAT32 && (n == n1 || n == n2);
}

/* Fills s's types, zero points, scales and bias from node's constant
 * inputs; false (nothing allocated) when oneDNN does not run the node. */
static bool qconv_read(const het_graph *g, const het_node *node,
                       qconv_state *s) {
  int x = het_node_input(node, IN_X);
  const het_tensor *w = het_dnnl_q8_init(g, node, IN_W);
  const het_tensor *xs = het_dnnl_q8_init(g, node, IN_XS);
  const het_tensor *ws = het_dnnl_q8_init(g, node, IN_WS);
  const het_tensor *ys = het_dnnl_q8_init(g, node, IN_YS);
  bool has_b = het_node_input(node, IN_B) >= 0;
  const het_tensor *b = has_b ? het_dnnl_q8_init(g, node, IN_B) : NULL;
  if (x < 0 || node->n_outputs < 1 || node->outputs[0] < 0 || !w ||
      w->dtype != HET_DTYPE_INT8 || w->rank < 3 || w->rank > 2 + QCONV_MAX_SP)
    return false;
  s->xt = g->values[x].dtype;
  s->yt = g->values[node->outputs[0]].dtype;
  s->m = w->dims[0];
  if (!het_dnnl_q8_type(s->xt) || !het_dnnl_q8_type(s->yt) || s->m < 1 ||
      !het_dnnl_q8_zp(g, node, IN_XZ, s->xt, &s->xzp) ||
      !het_dnnl_q8_zp(g, node, IN_YZ, s->yt, &s->yzp) || !const_f32(xs, 1, 1) ||
      !const_f32(ys, 1, 1) || !const_f32(ws, 1, s->m) ||
      !het_dnnl_q8_zp_zero(g, node, IN_WZ, s->m) ||
      (has_b &&
       (!b || b->dtype != HET_DTYPE_INT32 || het_tensor_count(b) != s->m)))
    return false;
  s->n_scales = (int)het_tensor_count(ws);
  s->scales = het_dnnl_malloc(sizeof(float) * (size_t)s->n_scales);
  s->bias = b ? het_dnnl_malloc(sizeof(int32_t) * (size_t)s->m) : NULL;
  bool ok = s->scales && (!b || s->bias);
  /* the reference's multiplier, operation for operation */
  float fx = ((const float *)xs->data)[0], fy = ((const float *)ys->data)[0];
  for (int i = 0; ok && i < s->n_scales; i++) {
    s->scales[i] = fx * ((const float *)ws->data)[i] / fy;
    ok = isfinite(s->scales[i]);
  }
  if (ok && b)
    memcpy(s->bias, b->data, sizeof(int32_t) * (size_t)s->m);
  if (!ok) {
    free(s->scales);
    free(s->bias);
    s->scales = NULL;
    s->bias = NULL;
  }
  return ok;
}

/* oneDNN's descriptors of a QLinearConv: the primitive's src dims (X's,
 * or padded), Y's dims, the weights' (grouped: G first) and strides,
 * dilations (0 = dense) and pads (0 with prepad). */
typedef struct qconv_dims {
  int64_t src[HET_MAX_RANK], y[HET_MAX_RANK], w[HET_MAX_RANK + 1];
  int wr;
  dnnl_dims_t st, dil, pl, pr;
} qconv_dims;

/* Fills c and e's geometry for X dims xd; false when out of reach. */
static bool qconv_dims_init(const qconv_state *s, const het_node *node,
                            const int64_t *xd, int xr, const het_tensor *w,
                            qconv_dims *c, qconv_entry *e) {
  het_conv_geom g;
  if (xr < 3 || xr > 2 + QCONV_MAX_SP || w->rank != xr ||
      het_conv_geom_init(node, HET_GEOM_CONV, xr - 2, xd + 2, w->dims + 2,
                         &g) != HET_OK) {
    het_error_clear();
    return false;
  }
  int64_t group = het_node_attr_int(node, "group", 1), m = w->dims[0];
  if (group < 1 || xd[1] != w->dims[1] * group || m % group != 0 || m != s->m ||
      xd[0] < 1)
    return false;
  bool padded = false;
  for (int i = 0; i < g.nsp; i++)
    padded |= g.pad_b[i] > 0 || g.pad_e[i] > 0;
  e->prepad = padded && s->xzp != 0;
  e->nsp = g.nsp;
  e->n = xd[0];
  e->c = xd[1];
  e->m = m;
  e->out_pixels = het_conv_geom_count(g.out, g.nsp);
  memcpy(c->src, xd, sizeof(int64_t) * (size_t)xr);
  c->y[0] = xd[0];
  c->y[1] = m;
  for (int i = 0; i < g.nsp; i++) {
    if (g.kernel[i] != w->dims[2 + i] || g.pad_b[i] < 0 || g.pad_e[i] < 0)
      return false;
    e->in[i] = xd[2 + i];
    e->lo[i] = e->prepad ? g.pad_b[i] : 0;
    e->full[i] = e->prepad ? xd[2 + i] + g.pad_b[i] + g.pad_e[i] : xd[2 + i];
    c->src[2 + i] = e->full[i];
    c->y[2 + i] = g.out[i];
    c->st[i] = g.stride[i];
    c->dil[i] = g.dil[i] - 1;
    c->pl[i] = e->prepad ? 0 : g.pad_b[i];
    c->pr[i] = e->prepad ? 0 : g.pad_e[i];
  }
  int off = group > 1 ? 1 : 0;
  c->wr = xr + off;
  c->w[0] = group;
  for (int i = 0; i < xr; i++)
    c->w[off + i] = w->dims[i];
  c->w[off] = m / group;
  return true;
}

/* Weights up to this size take oneDNN's direct int8 kernel (jit_int8)
 * instead of brgconv, its first choice.  ResNet-50's 3x3 Convs in the
 * model (one thread, this CPU): jit_int8 3-15 us less per Conv at 56x56
 * and 28x28 (36 and 147 KiB of weights; eight alternations), brgconv
 * 4-14 us less at 14x14 (590 KiB) and 43-48 us less at 7x7 (2.3 MiB). */
#define QCONV_JIT_W_BYTES (256 * 1024)

/* oneDNN's implementation for cd: its first choice (what
 * dnnl_primitive_desc_create gives), or with jit its direct int8 kernel
 * where it has one; NULL when it has none. */
static dnnl_primitive_desc_t qconv_pick_pd(const dnnl_convolution_desc_t *cd,
                                           const_dnnl_primitive_attr_t attr,
                                           bool jit) {
  dnnl_primitive_desc_iterator_t it;
  dnnl_primitive_desc_t chosen = NULL;
  if (dnnl_primitive_desc_iterator_create(&it, cd, attr, het_dnnl_engine(),
                                          NULL) != dnnl_success)
    return NULL;
  do {
    dnnl_primitive_desc_t pd = dnnl_primitive_desc_iterator_fetch(it);
    if (!pd)
      break;
    const char *impl = het_dnnl_q8_impl(pd);
    if (jit && impl && strncmp(impl, "jit_int8", 8) == 0) {
      if (chosen)
        dnnl_primitive_desc_destroy(chosen);
      chosen = pd;
      break;
    }
    if (!chosen)
      chosen = pd;
    else
      dnnl_primitive_desc_destroy(pd);
  } while (jit && dnnl_primitive_desc_iterator_next(it) == dnnl_success);
  dnnl_primitive_desc_iterator_destroy(it);
  return chosen;
}

static int64_t qconv_w_bytes(const qconv_dims *c) {
  int64_t n = 1;
  for (int i = 0; i < c->wr; i++)
    n *= c->w[i];
  return n;
}

/* The primitive descriptor for c (channels-last src and dst, weights in
 * oneDNN's layout); NULL when oneDNN refuses or has only a reference
 * implementation.  Ungrouped Convs with at most QCONV_JIT_W_BYTES of
 * weights take oneDNN's direct int8 kernel where it has one. */
static dnnl_primitive_desc_t qconv_pd(const qconv_state *s, const qconv_dims *c,
                                      int xr) {
  dnnl_memory_desc_t src, dst, w, b;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_t pd = NULL;
  if (!md_init(&src, xr, c->src, het_dnnl_q8_dt(s->xt), cl_tag(xr)) ||
      !md_init(&dst, xr, c->y, het_dnnl_q8_dt(s->yt), cl_tag(xr)) ||
      !md_init(&w, c->wr, c->w, dnnl_s8, dnnl_format_tag_any) ||
      !md_init(&b, 1, &s->m, dnnl_s32, dnnl_a))
    return NULL;
  dnnl_primitive_attr_t attr =
      het_dnnl_q8_attr(s->n_scales, s->scales, s->xzp, s->yzp);
  if (attr &&
      dnnl_dilated_convolution_forward_desc_init(
          &cd, dnnl_forward_inference, dnnl_convolution_direct, &src, &w,
          s->bias ? &b : NULL, &dst, c->st, c->dil, c->pl,
          c->pr) == dnnl_success)
    pd = qconv_pick_pd(&cd, attr,
                       c->wr == xr && qconv_w_bytes(c) <= QCONV_JIT_W_BYTES);
  dnnl_primitive_attr_destroy(attr);
  if (pd && !het_dnnl_q8_impl(pd)) {
    dnnl_primitive_desc_destroy(pd);
    pd = NULL;
  }
  return pd;
}

static bool pix_off_init(qconv_entry *e);

static void entry_clear(qconv_entry *e) {
  het_qown_free(&e->qown);
  dnnl_primitive_destroy(e->p.prim);
  het_dnnl_weights_free(&e->p);
  free(e->pix_off);
  memset(e, 0, sizeof *e);
}

/* Whether X (Y) of entry e is laid out channels-last: the layout pass
 * made it so, or NCHW and channels-last agree (one channel or one
 * pixel per image). */
static bool x_channels_last(const qconv_state *s, const qconv_entry *e) {
  return s->nhwc_x || e->c == 1 || het_conv_geom_count(e->in, e->nsp) == 1;
}

static bool y_channels_last(const qconv_state *s, const qconv_entry *e) {
  return s->nhwc_y || e->m == 1 || e->out_pixels == 1;
}

/* What hetrt's own kernel (qconv_own.h) needs to know of geometry c. */
static void own_desc(const qconv_state *s, const qconv_dims *c,
                     const qconv_entry *e, int xr, const het_tensor *w,
                     het_qown_desc *d) {
  memset(d, 0, sizeof *d);
  d->nsp = e->nsp;
  d->n = e->n;
  d->c = e->c;
  d->m = e->m;
  d->group = c->wr == xr ? 1 : c->w[0];
  for (int i = 0; i < e->nsp; i++) {
    d->in[i] = e->in[i];
    d->kernel[i] = c->w[c->wr - e->nsp + i];
    d->stride[i] = c->st[i];
    d->dil[i] = c->dil[i] + 1;
    /* with prepad the pads live in lo / full, not in c */
    d->pad_b[i] = e->prepad ? e->lo[i] : c->pl[i];
    d->pad_e[i] = e->prepad ? e->full[i] - e->in[i] - e->lo[i] : c->pr[i];
    d->out[i] = c->y[2 + i];
  }
  d->x_u8 = s->xt == HET_DTYPE_UINT8;
  d->nhwc_x = x_channels_last(s, e);
  d->nhwc_y = y_channels_last(s, e);
  d->w = w ? w->data : NULL;
  d->bias = s->bias;
  d->xzp = s->xzp;
  d->yzp = s->yzp;
  d->scales = s->scales;
  d->n_scales = s->n_scales;
  d->y_signed = s->yt == HET_DTYPE_INT8;
}

/* Builds e for X dims xd: hetrt's own kernel where it applies, else the
 * primitive and its weights, reordered once from W's plain layout (or a
 * plan's, already in the primitive's). */
static bool entry_create(const qconv_state *s, const het_node *node,
                         const int64_t *xd, int xr, const het_tensor *w,
                         qconv_entry *e) {
  qconv_dims c;
  dnnl_memory_desc_t wuser;
  if (!qconv_dims_init(s, node, xd, xr, w, &c, e) ||
      !md_init(&wuser, c.wr, c.w, dnnl_s8, plain_tag(c.wr)))
    return false;
  het_qown_desc od;
  own_desc(s, &c, e, xr, w, &od);
  if (het_qown_kind_of(&od) != HET_QOWN_NONE) {
    if (!het_qown_init(&e->qown, &od)) {
      het_dnnl_oom_note();
      return false;
    }
    return e->own = true;
  }
  dnnl_primitive_desc_t pd = qconv_pd(s, &c, xr);
  if (!pd || !het_dnnl_prim_init(&e->p, pd))
    return false;
  return het_dnnl_weights_prepare(&e->p, &wuser, w->data) &&
         (!e->prepad || pix_off_init(e));
}

static het_status build_oom(const het_node *node) {
  return het_node_error(node, HET_ERR_OUT_OF_MEMORY,
                        "oneDNN int8: out of memory building the primitive");
}

/* Finds or builds the entry for X dims xd: *out, NULL when the cache is
 * full; OUT_OF_MEMORY (nothing cached) when the build ran out of memory. */
static het_status entry_get(qconv_state *s, const het_node *node,
                            const int64_t *xd, int xr, const het_tensor *w,
                            const qconv_entry **out) {
  const qconv_entry *found = NULL;
  het_status st = HET_OK;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->n && !found; i++)
    if (s->entries[i].key_rank == xr &&
        memcmp(s->entries[i].key, xd, sizeof(int64_t) * (size_t)xr) == 0)
      found = &s->entries[i];
  if (!found && s->n < QCONV_CACHE) {
    qconv_entry *e = &s->entries[s->n];
    memset(e, 0, sizeof *e);
    het_dnnl_oom_take();
    e->ok = entry_create(s, node, xd, xr, w, e);
    bool oom = het_dnnl_oom_take();
    if (!e->ok || oom)
      entry_clear(e);
    if (oom) {
      st = build_oom(node);
    } else {
      e->key_rank = xr;
      memcpy(e->key, xd, sizeof(int64_t) * (size_t)xr);
      found = &s->entries[s->n++];
    }
  }
  pthread_mutex_unlock(&s->mu);
  *out = found;
  return st;
}

void het_dnnl_qconv_destroy(void *state) {
  qconv_state *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->n; i++)
    entry_clear(&s->entries[i]);
  free(s->scales);
  free(s->bias);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

het_status het_dnnl_qconv_prepare_with(const het_graph *graph,
                                       const het_node *node,
                                       const het_kernel_prep *prep,
                                       void **state) {
  *state = NULL;
  bool nhwc = prep && ((prep->nhwc_in | prep->nhwc_out) & 1);
  qconv_state *s = NULL;
  if (het_dnnl_q8_usable() && !(s = calloc(1, sizeof *s)))
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "node '%s': oneDNN state: out of memory", node->name);
  het_dnnl_oom_take();
  bool read = s && qconv_read(graph, node, s);
  if (s && !read && het_dnnl_oom_take()) {
    free(s);
    return build_oom(node);
  }
  if (!read) {
    free(s); /* the reference runs it, in NCHW only */
    return nhwc ? het_error(HET_ERR_UNSUPPORTED,
                            "node '%s': no oneDNN int8 path for NHWC",
                            node->name)
                : HET_OK;
  }
  pthread_mutex_init(&s->mu, NULL);
  s->nhwc_x = nhwc && (prep->nhwc_in & 1);
  s->nhwc_y = nhwc && (prep->nhwc_out & 1);
  *state = s;
  /* a primitive for the declared shape now; in NHWC also for a symbolic
   * batch (as 1), to learn whether oneDNN takes the node at all */
  const het_shape *xs = &graph->values[het_node_input(node, IN_X)].shape;
  const qconv_entry *e = NULL;
  if (xs->rank > 1 && xs->rank <= HET_MAX_RANK &&
      het_shape_item_count(xs) >= 0 &&
      (het_shape_is_concrete(xs) || nhwc)) {
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
      dims[i] = xs->dims[i].value < 0 ? 1 : xs->dims[i].value;
    het_status st = entry_get(s, node, dims, xs->rank,
                              het_dnnl_q8_init(graph, node, IN_W), &e);
    if (st != HET_OK) {
      het_dnnl_qconv_destroy(s);
      *state = NULL;
      return st;
    }
  }
  if (nhwc && (!e || !e->ok)) {
    het_dnnl_qconv_destroy(s);
    *state = NULL;
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s': oneDNN refused the NHWC int8 primitive",
                     node->name);
  }
  return HET_OK;
}

size_t het_dnnl_qconv_state_prefetch(const void *state, const void **data) {
  qconv_state *s = (qconv_state *)state;
  size_t bytes = 0;
  *data = NULL;
  if (!s)
    return 0;
  pthread_mutex_lock(&s->mu);
  const qconv_entry *e = s->n > 0 ? &s->entries[0] : NULL;
  if (e && e->ok && !e->own && e->p.w) {
    *data = e->p.w;
    bytes = dnnl_memory_desc_get_size(&e->p.w_md);
  }
  pthread_mutex_unlock(&s->mu);
  return bytes;
}

void het_dnnl_qconv_state_weights(const void *state, het_kernel_weight_fn fn,
                                  void *ctx) {
  qconv_state *s = (qconv_state *)state;
  if (!s)
    return;
  pthread_mutex_lock(&s->mu); /* runs may add entries meanwhile */
  for (int i = 0; i < s->n; i++) {
    const qconv_entry *e = &s->entries[i];
    if (e->ok && e->own) {
      het_qown_weights(&e->qown, fn, ctx);
    } else if (e->ok) {
      het_dnnl_prim_weights(&e->p, fn, ctx);
    }
  }
  pthread_mutex_unlock(&s->mu);
}

het_status het_dnnl_qconv_prepare(const het_graph *graph, const het_node *node,
                                  void **state) {
  return het_dnnl_qconv_prepare_with(graph, node, NULL, state);
}

bool het_dnnl_qconv_takes(const het_graph *graph, const het_node *node) {
  qconv_state s;
  memset(&s, 0, sizeof s);
  if (!het_dnnl_q8_usable() || !qconv_read(graph, node, &s))
    return false;
  free(s.scales);
  free(s.bias);
  return true;
}

const char *het_dnnl_qconv_impl(const void *state) {
  const qconv_state *s = state;
  const_dnnl_primitive_desc_t pd = NULL;
  if (s && s->n > 0 && s->entries[0].ok && s->entries[0].own)
    return s->entries[0].qown.kind == HET_QOWN_1X1 ? "hetrt:vnni_1x1"
                                                   : "hetrt:vnni_narrow";
  if (!s || s->n == 0 || !s->entries[0].ok ||
      dnnl_primitive_get_primitive_desc(s->entries[0].p.prim, &pd) !=
          dnnl_success)
    return NULL;
  return het_dnnl_q8_impl(pd);
}

#if defined(__SSE2__)
/* The 16x16 byte block at s (row stride ss) transposed: out[j] is its
 * column j.  Four rounds of unpacks, 8-, 16-, 32- and 64-bit. */
static void transpose16(const uint8_t *s, size_t ss, __m128i *out) {
  __m128i r[16], a[16], b[16], c[16];
  for (int k = 0; k < 16; k++)
    r[k] = _mm_loadu_si128((const __m128i *)(s + (size_t)k * ss));
  /* a[k], a[k + 8]: rows 2k, 2k+1 interleaved, columns 0-7 / 8-15 */
  for (int k = 0; k < 8; k++) {
    a[k] = _mm_unpacklo_epi8(r[2 * k], r[2 * k + 1]);
    a[k + 8] = _mm_unpackhi_epi8(r[2 * k], r[2 * k + 1]);
  }
  /* b[4g + k]: columns 4g..4g+3 of rows 4k..4k+3 */
  for (int h = 0; h < 16; h += 8)
    for (int k = 0; k < 4; k++) {
      b[h + k] = _mm_unpacklo_epi16(a[h + 2 * k], a[h + 2 * k + 1]);
      b[h + k + 4] = _mm_unpackhi_epi16(a[h + 2 * k], a[h + 2 * k + 1]);
    }
  /* c[g], c[g + 1]: columns g, g+1 of rows 0-7 / 8-15; c[g + 2],
   * c[g + 3]: columns g+2, g+3 */
  for (int g = 0; g < 16; g += 4) {
    c[g] = _mm_unpacklo_epi32(b[g], b[g + 1]);
    c[g + 2] = _mm_unpackhi_epi32(b[g], b[g + 1]);
    c[g + 1] = _mm_unpacklo_epi32(b[g + 2], b[g + 3]);
    c[g + 3] = _mm_unpackhi_epi32(b[g + 2], b[g + 3]);
  }
  for (int g = 0; g < 16; g += 2) {
    out[g] = _mm_unpacklo_epi64(c[g], c[g + 1]);
    out[g + 1] = _mm_unpackhi_epi64(c[g], c[g + 1]);
  }
}

/* The start of the 16-block after the one at i of n, the last one ending
 * at n (overlapping its neighbour); -1 after the last. */
static int64_t next_block(int64_t i, int64_t n) {
  return i + 16 >= n ? -1 : i + 32 <= n ? i + 16 : n - 16;
}
#endif

/* Byte transposition: element (i, j) of the rows x cols matrix at src
 * (row stride ss) goes to dst + off[j] + i, or dst + j * ds + i when off
 * is NULL.  In 16x16 blocks where both counts reach 16 (overlapping
 * blocks write the same values twice).  oneDNN 2.6's u8 reorder between
 * NCHW and NHWC took 55-60 us for 64x56x56 here, this 19-22 us. */
static void transpose_u8(const uint8_t *src, size_t ss, uint8_t *dst, size_t ds,
                         const int64_t *off, int64_t rows, int64_t cols) {
#if defined(__SSE2__)
  if (rows >= 16 && cols >= 16) {
    __m128i col[16];
    for (int64_t i = 0; i >= 0; i = next_block(i, rows))
      for (int64_t j = 0; j >= 0; j = next_block(j, cols)) {
        transpose16(src + (size_t)i * ss + (size_t)j, ss, col);
        for (int k = 0; k < 16; k++) {
          size_t at = off ? (size_t)off[j + k] : (size_t)(j + k) * ds;
          _mm_storeu_si128((__m128i *)(dst + at + (size_t)i), col[k]);
        }
      }
    return;
  }
#endif
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < cols; j++)
      dst[(off ? (size_t)off[j] : (size_t)j * ds) + (size_t)i] =
          src[(size_t)i * ss + (size_t)j];
}

/* Sets the borders of dim d (and the dims inside it) of one padded image
 * at p to the zero point; blk[d] is the bytes of one index of dim d. */
static void fill_border(const qconv_entry *e, int d, const size_t *blk,
                        uint8_t *p, uint8_t zp) {
  int64_t hi = e->lo[d] + e->in[d];
  memset(p, zp, (size_t)e->lo[d] * blk[d]);
  memset(p + (size_t)hi * blk[d], zp, (size_t)(e->full[d] - hi) * blk[d]);
  if (d + 1 < e->nsp && d + 1 < QCONV_MAX_SP)
    for (int64_t i = e->lo[d]; i < hi; i++)
      fill_border(e, d + 1, blk, p + (size_t)i * blk[d], zp);
}

/* Bytes of one index of each spatial dim of the primitive's src (blk[d]
 * for dim d, blk[nsp] = C) and of one image (the result). */
static size_t src_blocks(const qconv_entry *e, size_t *blk) {
  blk[e->nsp] = (size_t)e->c;
  for (int d = e->nsp - 1; d >= 0; d--)
    blk[d] = blk[d + 1] * (size_t)e->full[d];
  return blk[0];
}

/* e->pix_off: where each pixel of X goes in the padded image. */
static bool pix_off_init(qconv_entry *e) {
  size_t blk[QCONV_MAX_SP + 1];
  src_blocks(e, blk);
  int64_t pixels = het_conv_geom_count(e->in, e->nsp);
  e->pix_off = het_dnnl_malloc(sizeof(int64_t) * (size_t)pixels);
  if (!e->pix_off)
    return false;
  for (int64_t p = 0; p < pixels; p++) {
    int64_t off = 0, q = p;
    for (int d = e->nsp - 1; d >= 0; q /= e->in[d], d--)
      off += (e->lo[d] + q % e->in[d]) * (int64_t)blk[d + 1];
    e->pix_off[p] = off;
  }
  return true;
}

/* NCHW x into xs, the primitive's src, image by image; with prepad the
 * borders are set to x's zero point first. */
static void stage_src(const qconv_state *s, const qconv_entry *e,
                      const uint8_t *x, uint8_t *xs) {
  size_t blk[QCONV_MAX_SP + 1];
  size_t img = src_blocks(e, blk);
  int64_t pixels = het_conv_geom_count(e->in, e->nsp);
  uint8_t zp = (uint8_t)(s->xt == HET_DTYPE_UINT8 ? s->xzp : (int8_t)s->xzp);
  for (int64_t b = 0; b < e->n; b++, x += e->c * pixels, xs += img) {
    if (e->prepad)
      fill_border(e, 0, blk + 1, xs, zp);
    transpose_u8(x, (size_t)pixels, xs, (size_t)e->c, e->pix_off, e->c, pixels);
  }
}

/* NHWC x into the padded xs: the borders, then each row of the last
 * spatial dim (contiguous in both) where pix_off puts its first pixel. */
static void stage_src_nhwc(const qconv_state *s, const qconv_entry *e,
                           const uint8_t *x, uint8_t *xs) {
  size_t blk[QCONV_MAX_SP + 1];
  size_t img = src_blocks(e, blk);
  int64_t pixels = het_conv_geom_count(e->in, e->nsp);
  int64_t row = e->in[e->nsp - 1];
  size_t row_bytes = (size_t)(row * e->c);
  uint8_t zp = (uint8_t)(s->xt == HET_DTYPE_UINT8 ? s->xzp : (int8_t)s->xzp);
  for (int64_t b = 0; b < e->n; b++, xs += img) {
    fill_border(e, 0, blk + 1, xs, zp);
    for (int64_t p = 0; p < pixels; p += row, x += row_bytes)
      memcpy(xs + e->pix_off[p], x, row_bytes);
  }
}

/* Channels-last ys (the primitive's dst) into NCHW y. */
static void unstage_dst(const qconv_entry *e, const uint8_t *ys, uint8_t *y) {
  size_t img = (size_t)(e->m * e->out_pixels);
  for (int64_t b = 0; b < e->n; b++, ys += img, y += img)
    transpose_u8(ys, (size_t)e->m, y, (size_t)e->out_pixels, NULL,
                 e->out_pixels, e->m);
}

/* n bytes of staging: from the run's scratch while it has room (a
 * provider that plans memory sized it with het_dnnl_qconv_scratch), else
 * this thread's staging buffer slot. */
static void *stage_get(het_kernel_ctx *ctx, int slot, size_t n) {
  size_t need = (n + 63) & ~(size_t)63;
  void *p = NULL;
  if (ctx->scratch && need <= ctx->scratch_size - ctx->scratch_used &&
      het_kernel_take(ctx, n, &p) == HET_OK)
    return p;
  return het_dnnl_stage(slot, n);
}

size_t het_dnnl_qconv_scratch(const het_kernel_ctx *ctx) {
  const qconv_state *s = ctx->state;
  const het_tensor *x = ctx->inputs[IN_X], *w = ctx->inputs[IN_W];
  const het_tensor *y = ctx->outputs[0];
  qconv_dims c;
  qconv_entry e;
  if (!s || !x || !w || !y)
    return 0;
  memset(&e, 0, sizeof e);
  if (!qconv_dims_init(s, ctx->node, x->dims, x->rank, w, &c, &e))
    return 0;
  het_qown_desc od;
  own_desc(s, &c, &e, x->rank, NULL, &od);
  size_t src =
      het_qown_kind_of(&od) != HET_QOWN_NONE ? het_qown_stage_bytes(&od)
      : s->nhwc_x && !e.prepad             ? 0
                               : (size_t)het_dims_count(c.src, x->rank);
  size_t dst = s->nhwc_y ? 0 : (size_t)het_tensor_count(y);
  return ((src + 63) & ~(size_t)63) + ((dst + 63) & ~(size_t)63);
}

/* Runs entry e on ctx's X and Y, staging what the layouts need. */
static het_status entry_run(het_kernel_ctx *ctx, const qconv_state *s,
                            const qconv_entry *e) {
  const het_tensor *x = ctx->inputs[IN_X];
  het_tensor *y = ctx->outputs[0];
  bool src_direct = !e->prepad && x_channels_last(s, e);
  bool dst_direct = y_channels_last(s, e);
  if (e->own) {
    uint8_t *stage = e->qown.stage_bytes ? stage_get(ctx, 0, e->qown.stage_bytes)
                                         : NULL;
    if (e->qown.stage_bytes && !stage)
      return het_lk_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                         "cannot allocate the staging of X");
    het_qown_run(&e->qown, x->data, stage, y->data, ctx->par, ctx->prefetch,
                 ctx->prefetch_bytes);
    return HET_OK;
  }
  uint8_t *xs =
      src_direct ? x->data
                 : stage_get(ctx, 0, dnnl_memory_desc_get_size(&e->p.src_md));
  uint8_t *ys =
      dst_direct ? y->data
                 : stage_get(ctx, 1, dnnl_memory_desc_get_size(&e->p.dst_md));
  if (!xs || !ys)
    return het_lk_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                       "cannot allocate oneDNN staging");
  if (!src_direct && s->nhwc_x)
    stage_src_nhwc(s, e, x->data, xs);
  else if (!src_direct)
    stage_src(s, e, x->data, xs);
  if (!het_dnnl_prim_execute(&e->p, xs, e->p.b_md.ndims ? s->bias : NULL, ys))
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
  if (!dst_direct)
    unstage_dst(e, ys, y->data);
  return HET_OK;
}

het_status het_dnnl_qconv_run(het_kernel_ctx *ctx, bool *done) {
  qconv_state *s = ctx->state;
  const het_tensor *x = ctx->inputs[IN_X], *w = ctx->inputs[IN_W];
  het_tensor *y = ctx->outputs[0];
  bool nhwc = s && (s->nhwc_x || s->nhwc_y);
  *done = false;
  if (s && (s->nhwc_x != (bool)(ctx->nhwc_in & 1) ||
            s->nhwc_y != (bool)(ctx->nhwc_out & 1)))
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "layout bits differ from those prepared for");
  if (!s || !x || !w || !y || x->dtype != s->xt || y->dtype != s->yt ||
      w->dtype != HET_DTYPE_INT8 || het_tensor_count(y) == 0)
    return nhwc ? het_lk_fail(ctx, HET_ERR_INTERNAL,
                              "NHWC QLinearConv without a oneDNN primitive")
                : HET_OK;
  const qconv_entry *e;
  HET_TRY(entry_get(s, ctx->node, x->dims, x->rank, w, &e));
  qconv_entry once; /* cache full: a primitive for this call */
  if (!e) {
    memset(&once, 0, sizeof once);
    het_dnnl_oom_take();
    once.ok = entry_create(s, ctx->node, x->dims, x->rank, w, &once);
    if (!once.ok && het_dnnl_oom_take()) {
      entry_clear(&once);
      return build_oom(ctx->node);
    }
    e = &once;
  }
  het_status st = HET_OK;
  size_t dst_bytes = e->own ? (size_t)(e->n * e->m * e->out_pixels)
                            : dnnl_memory_desc_get_size(&e->p.dst_md);
  if (e->ok && dst_bytes == y->nbytes) {
    st = entry_run(ctx, s, e);
    *done = st == HET_OK;
  } else if (nhwc) { /* the reference knows NCHW only */
    st = het_lk_fail(ctx, HET_ERR_INTERNAL,
                     "NHWC QLinearConv without a oneDNN primitive");
  }
  if (e == &once)
    entry_clear(&once);
  return st;
}
