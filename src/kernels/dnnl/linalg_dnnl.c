/* linalg_dnnl.c — oneDNN (C API, 2.6) primitives for float32 Conv (and
 * hetrt.FusedConv) and MatMul whose weights are initializers.  Each node
 * keeps a small cache of primitives keyed by the input shape, filled in
 * prepare() when the shape is static and lazily in run() otherwise, under
 * the state's mutex; the weights are reordered once per entry.  Conv runs
 * channels-last (brgconv: ~1.5x the im2col path on this CPU) with the
 * fused activation as an eltwise post-op and FusedConv's residual as a sum
 * post-op (the residual is first copied or reordered into the primitive's
 * dst: oneDNN 2.6 has no brgconv with a binary-add post-op and falls back
 * to a 2x slower kernel); X, Y and the residual are reordered per call only
 * where the layout pass (layout.c) left them plain NCHW (a 3-channel X, an
 * image input, by rgb_to_nhwc: 4x oneDNN's reorder here).  A 3x3 stride-1
 * Conv may run as Winograd instead (cpu.conv_algo; conv_entry_create),
 * in oneDNN's blocked layout with reorders at the node's edges.  A 1x1
 * Conv with strides on an NHWC X runs at unit stride on the pixels the
 * strides pick, gathered into a staging buffer first (gather_shape).
 * Depthwise Convs run here too (brdgmm_dw), and hetrt.FusedConvDw's two
 * halves, band by band where that keeps the 1x1 half's output in the
 * cache and X and Y are channels-last (convdw_bands), else each half
 * whole, through a channels-last buffer; hetrt.FusedConvPool's Conv and
 * MaxPool likewise (convpool_bands); a 1x1 FusedConv whose Y exceeds the
 * L2 in bands with each band's residual read ahead (zband_execute).
 * Entries are read-only once published; scratchpads and staging buffers
 * are per thread (user scratchpad mode), so runs on several threads at
 * once are safe.  A
 * plain-layout node oneDNN refuses falls back; an NHWC one is refused at
 * prepare (HET_ERR_UNSUPPORTED).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dnnl.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/cpuinfo.h"
#include "core/status.h"
#include "kernels/dnnl/dnnl_common.h"
#include "kernels/half.h"
#include "kernels/tuning.h"
#include "kernels/linalg_dnnl_api.h"
#include "kernels/linalg_kern.h"
#include "kernels/linalg_pool_f32.h"
#include "kernels/parallel.h"

#define DNNL_CACHE 8
#define DNNL_L2_BYTES (1024 * 1024) /* when the CPU does not say */

typedef enum { KIND_CONV, KIND_MATMUL } dnnl_kind;

typedef struct dnnl_entry {
  int key_rank;
  int64_t key[HET_MAX_RANK];
  bool ok;         /* false: oneDNN refused, fall back */
  het_dnnl_prim p; /* w owned by the entry */
  /* Conv with src/dst layouts chosen by oneDNN: reorders from the plain
   * user X and into the plain user Y (NULL when the layout is plain). */
  dnnl_memory_desc_t src_user, dst_user;
  dnnl_primitive_t src_r, dst_r;
  /* src_r turns 3-channel NCHW into NHWC (an image input): rgb_to_nhwc
   * runs instead. */
  bool rgb;
  int n_cand; /* primitives built to choose this one from */
  dnnl_primitive_t z_r; /* residual: user Y layout → primitive's dst */
  /* A 1x1 Conv with strides on an NHWC X (gather): the primitive runs
   * with unit strides on the pixels the strides pick, which are first
   * copied out of the user X (gx: its N, C, H, W; gs: the strides). */
  bool gather;
  int64_t gx[4], gs[2];
  bool w_shared; /* p.w is an earlier entry's (het_dnnl_state.share_w) */
} dnnl_entry;

typedef struct het_dnnl_state {
  dnnl_kind kind;
  het_conv_algo algo;         /* Conv: Winograd choice (cpu.conv_algo) */
  uint32_t nhwc_in, nhwc_out; /* Conv: X / Y (and residual) stored NHWC */
  bool has_z;                 /* FusedConv: residual input 3 */
  bool has_act;               /* hetrt_act_min/max as a post-op */
  float act_lo, act_hi;
  const char *act_op;         /* hetrt_act (op name) as a post-op, or NULL */
  bool act_bad;               /* hetrt_act names no activation: no primitive */
  float act_alpha, act_beta;
  /* float16 Conv or MatMul: the float32 primitive runs it, on weights
   * (and bias)
   * converted once here and X, Y (and the residual) converted per call
   * through the run's scratch. */
  bool f16;
  het_tensor *w32, *b32;
  /* cpu.precision=bf16: the primitive's src and weights are bfloat16 (X
   * converted per call by the src reorder, W once), dst and bias float32 */
  bool bf16;
  /* hetrt.FusedConvDw: this state runs the 1x1 half (the node's own
   * attributes), dw the depthwise half on a band (dw_node: pads left and
   * right only; convdw_bands), dw_full on a whole image (dw_full_node);
   * entries of equal weight layouts share one copy of the weights
   * (share_w). */
  struct het_dnnl_state *dw, *dw_full;
  het_lk_dw_half *dw_node, *dw_full_node;
  /* hetrt.FusedConvPool: this state runs the Conv half on whole images
   * (the node's own attributes), band the Conv on a band of rows (on
   * band_node: no pads above and below; convpool_bands); pool is the
   * MaxPool half's node. */
  struct het_dnnl_state *band;
  struct convpool_band_node *band_node;
  het_pool_half *pool;
  long l2; /* bytes of L2: FusedConvDw bands above this much 1x1 output
            * (one image), FusedConv residual bands above this much Y */
  bool share_w;
  pthread_mutex_t mu;
  int n;
  dnnl_entry entries[DNNL_CACHE];
} het_dnnl_state;

static dnnl_format_tag_t plain_tag(int ndims) {
  static const dnnl_format_tag_t tags[] = {dnnl_a,    dnnl_ab,    dnnl_abc,
                                           dnnl_abcd, dnnl_abcde, dnnl_abcdef};
  return tags[ndims - 1];
}

/* Channels-last tag (N, spatial..., C) of an ndims activation. */
static dnnl_format_tag_t cl_tag(int ndims) {
  return ndims == 3 ? dnnl_acb : ndims == 4 ? dnnl_acdb : dnnl_acdeb;
}

static bool md_tag_dt(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                      dnnl_format_tag_t tag, dnnl_data_type_t dt) {
  dnnl_dims_t d = {0};
  for (int i = 0; i < nd; i++)
    d[i] = dims[i];
  return dnnl_memory_desc_init_by_tag(md, nd, d, dt, tag) == dnnl_success;
}

static bool md_tag(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                   dnnl_format_tag_t tag) {
  return md_tag_dt(md, nd, dims, tag, dnnl_f32);
}

static bool plain_md(dnnl_memory_desc_t *md, int nd, const int64_t *dims,
                     bool any) {
  return md_tag(md, nd, dims, any ? dnnl_format_tag_any : plain_tag(nd));
}

/* Builds the entry's primitive from pd (destroyed) and reorders the
 * weights from their user layout into the primitive's. */
static bool entry_finish(dnnl_entry *e, dnnl_primitive_desc_t pd,
                         const dnnl_memory_desc_t *w_user, const void *w) {
  return het_dnnl_prim_init(&e->p, pd) &&
         het_dnnl_weights_prepare(&e->p, w_user, w);
}

/* Appends the named activation (hetrt_act) as eltwise post-ops; false
 * for a name oneDNN cannot express. */
static bool append_named_act(dnnl_post_ops_t po, const het_dnnl_state *s) {
  const char *op = s->act_op;
  if (strcmp(op, "LeakyRelu") == 0)
    return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu,
                                        s->act_alpha, 0.0f) == dnnl_success;
  if (strcmp(op, "HardSigmoid") == 0) /* clip(alpha * x + beta, 0, 1) */
    return dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear,
                                        s->act_alpha,
                                        s->act_beta) == dnnl_success &&
           dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip, 0.0f,
                                        1.0f) == dnnl_success;
  dnnl_alg_kind_t alg = strcmp(op, "HardSwish") == 0 ? dnnl_eltwise_hardswish
                        : strcmp(op, "Sigmoid") == 0 ? dnnl_eltwise_logistic
                        : strcmp(op, "Tanh") == 0    ? dnnl_eltwise_tanh
                                                     : dnnl_alg_kind_undef;
  return alg != dnnl_alg_kind_undef &&
         dnnl_post_ops_append_eltwise(po, 1.0f, alg, 0.0f, 0.0f) ==
             dnnl_success;
}

/* The scratchpad attribute plus the state's post-ops: residual sum (dst
 * holds the residual when the primitive runs), then the activation. */
static dnnl_primitive_attr_t conv_attr(const het_dnnl_state *s) {
  if (s->act_bad)
    return NULL;
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  dnnl_post_ops_t po = NULL;
  if (!attr || (!s->has_z && !s->has_act && !s->act_op))
    return attr;
  bool relu = s->act_lo == 0.0f && isinf(s->act_hi) && s->act_hi > 0;
  bool ok =
      dnnl_post_ops_create(&po) == dnnl_success &&
      (!s->has_z || dnnl_post_ops_append_sum(po, 1.0f) == dnnl_success) &&
      (!s->has_act ||
       dnnl_post_ops_append_eltwise(
           po, 1.0f, relu ? dnnl_eltwise_relu : dnnl_eltwise_clip,
           relu ? 0.0f : s->act_lo, relu ? 0.0f : s->act_hi) == dnnl_success) &&
      (!s->act_op || append_named_act(po, s)) &&
      dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  return het_dnnl_attr_finish(attr, po, ok);
}

/* Conv geometry in oneDNN's terms: Y dims, weight dims (grouped: G first),
 * strides, dilations (0 = dense) and pads.  False when out of reach. */
typedef struct conv_dims {
  int64_t y[HET_MAX_RANK], w[HET_MAX_RANK + 1];
  int wr;
  dnnl_dims_t st, dil, pl, pr;
} conv_dims;

static bool conv_dims_init(const het_node *node, const int64_t *xd, int xr,
                           const het_tensor *w, conv_dims *c) {
  het_conv_geom g;
  if (xr < 3 || xr > 5 || w->rank != xr ||
      het_conv_geom_init(node, HET_GEOM_CONV, xr - 2, xd + 2, w->dims + 2,
                         &g) != HET_OK) {
    het_error_clear();
    return false;
  }
  int64_t group = het_node_attr_int(node, "group", 1), m = w->dims[0];
  if (group < 1 || xd[1] != w->dims[1] * group || m % group != 0)
    return false;
  c->y[0] = xd[0];
  c->y[1] = m;
  for (int i = 0; i < g.nsp; i++) {
    c->y[2 + i] = g.out[i];
    c->st[i] = g.stride[i];
    c->dil[i] = g.dil[i] - 1;
    c->pl[i] = g.pad_b[i];
    c->pr[i] = g.pad_e[i];
  }
  int off = group > 1 ? 1 : 0;
  c->wr = xr + off;
  c->w[0] = group;
  for (int i = 0; i < xr; i++)
    c->w[off + i] = w->dims[i];
  c->w[off] = m / group;
  return true;
}

/* How a Conv primitive is asked for: direct with src/dst channels-last,
 * direct in the layouts oneDNN picks (no residual then), or Winograd in
 * the layouts it picks (blocked; the entry reorders at its edges). */
typedef enum { PD_DIRECT_CL, PD_DIRECT_ANY, PD_WINOGRAD } conv_pd_mode;

/* Winograd kernels tried per Conv under auto (oneDNN 2.6 has two), on
 * images of at least CONV_WINO_ALL_PIXELS output pixels; smaller ones try
 * oneDNN's first only.  F(4,3) beat F(2,3) here on 55x55 and 56x56 images
 * and lost on 14x14 and 7x7 ones (hot-cache microbenchmark), and building
 * and timing it on ResNet-18's 256- and 512-channel layers doubled session
 * creation (1.35 → 2.78 s) and added 80 MB of peak RSS. */
#define CONV_WINO_MAX 3
#define CONV_WINO_ALL_PIXELS (27 * 27)

/* Up to max primitive descriptors for mode, in oneDNN's order of
 * preference (for Winograd: F(2,3) before F(4,3) where both apply; the
 * rest of the list is slower kernels only direct mode has); how many. */
static int conv_pds(const het_dnnl_state *s, const conv_dims *c,
                    const int64_t *xd, int xr, bool bias, conv_pd_mode mode,
                    dnnl_primitive_desc_t *out, int max) {
  dnnl_format_tag_t tag =
      mode == PD_DIRECT_CL ? cl_tag(xr) : dnnl_format_tag_any;
  dnnl_alg_kind_t alg = mode == PD_WINOGRAD ? dnnl_convolution_winograd
                                            : dnnl_convolution_direct;
  dnnl_memory_desc_t src, dst, wany, b;
  dnnl_convolution_desc_t cd;
  dnnl_primitive_desc_iterator_t it = NULL;
  int64_t m = c->y[1];
  int n = 0;
  if ((mode == PD_DIRECT_ANY && s->has_z) ||
      (mode == PD_WINOGRAD && s->bf16)) /* no bfloat16 Winograd on CPUs */
    return 0;
  dnnl_data_type_t in = s->bf16 ? dnnl_bf16 : dnnl_f32;
  if (!md_tag_dt(&src, xr, xd, tag, in) || !md_tag(&dst, xr, c->y, tag) ||
      !md_tag_dt(&wany, c->wr, c->w, dnnl_format_tag_any, in) ||
      !plain_md(&b, 1, &m, false))
    return 0;
  dnnl_primitive_attr_t attr = conv_attr(s);
  if (attr &&
      dnnl_dilated_convolution_forward_desc_init(
          &cd, dnnl_forward_inference, alg, &src, &wany, bias ? &b : NULL,
          &dst, c->st, c->dil, c->pl, c->pr) == dnnl_success &&
      dnnl_primitive_desc_iterator_create(&it, &cd, attr, het_dnnl_engine(),
                                          NULL) == dnnl_success) {
    do
      out[n] = dnnl_primitive_desc_iterator_fetch(it);
    while (out[n] && ++n < max &&
           dnnl_primitive_desc_iterator_next(it) == dnnl_success);
  }
  dnnl_primitive_desc_iterator_destroy(it);
  dnnl_primitive_attr_destroy(attr);
  return n;
}

/* The preferred primitive descriptor for mode; NULL when oneDNN refuses. */
static dnnl_primitive_desc_t conv_pd(const het_dnnl_state *s,
                                     const conv_dims *c, const int64_t *xd,
                                     int xr, bool bias, conv_pd_mode mode) {
  dnnl_primitive_desc_t pd = NULL;
  return conv_pds(s, c, xd, xr, bias, mode, &pd, 1) ? pd : NULL;
}

/* Whether c, a rank-xr Conv on an NHWC X, is 1x1 with strides above 1
 * and no padding: then it runs on the strided pixels gathered
 * (het_lk_gather_strided).
 * oneDNN 2.6's brgconv_1x1 reads a strided X itself, but slowly: on
 * ResNet-50's 512 -> 1024 channel 28x28 -> 14x14 downsample, 1.58 ms with
 * cold caches against 0.97 ms at unit stride on the gathered 14x14
 * pixels (1.79 ms against ONNX Runtime's 1.15 ms inside the model). */
static bool gather_shape(const het_dnnl_state *s, const conv_dims *c, int xr) {
  return xr == 4 && c->wr == 4 && (s->nhwc_in & 1) && c->w[2] == 1 &&
         c->w[3] == 1 && (c->st[0] > 1 || c->st[1] > 1) && c->pl[0] == 0 &&
         c->pl[1] == 0 && c->pr[0] <= 0 && c->pr[1] <= 0;
}

/* Builds e for pd (destroyed): the primitive, its weights and the
 * reorders between the user layouts the layout pass chose and the
 * primitive's. */
static bool conv_entry_build(const het_dnnl_state *s, const conv_dims *c,
                             const int64_t *xd, int xr, const het_tensor *w,
                             dnnl_primitive_desc_t pd, dnnl_entry *e) {
  dnnl_memory_desc_t wuser;
  /* a FusedConvDw's 1x1 half (s->dw set) writes the channels-last buffer
   * its depthwise half reads, whatever the node's Y layout */
  dnnl_format_tag_t xt = s->nhwc_in & 1 ? cl_tag(xr) : plain_tag(xr);
  dnnl_format_tag_t yt =
      s->nhwc_out & 1 || s->dw ? cl_tag(xr) : plain_tag(xr);
  if (!plain_md(&wuser, c->wr, c->w, false) ||
      !md_tag(&e->src_user, xr, xd, xt) ||
      !md_tag(&e->dst_user, xr, c->y, yt)) {
    dnnl_primitive_desc_destroy(pd);
    return false;
  }
  if (!entry_finish(e, pd, &wuser, w->data))
    return false;
  dnnl_memory_desc_t nhwc;
  e->rgb = xr == 4 && xd[1] == 3 && !(s->nhwc_in & 1) &&
           md_tag(&nhwc, xr, xd, cl_tag(xr)) &&
           dnnl_memory_desc_equal(&nhwc, &e->p.src_md);
  return het_dnnl_reorder_create(&e->src_user, &e->p.src_md, &e->src_r) &&
         het_dnnl_reorder_create(&e->p.dst_md, &e->dst_user, &e->dst_r) &&
         (!s->has_z || het_dnnl_reorder_create(&e->dst_user, &e->p.dst_md, &e->z_r));
}

static bool entry_execute(const dnnl_entry *e, void *x, void *b, void *y,
                          void *z);
static bool stage_src(const dnnl_entry *e, void *x, void *xs);
static void entry_clear(dnnl_entry *e);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Evicts e's weights from the caches: inside a large model they stream
 * in from memory on every call, and Winograd's transformed weights are
 * 1.8x (F(2,3)) to 4x (F(4,3)) the direct ones, which is what makes it
 * lose on ResNet-50's 512-channel 7x7 Convs when timed with hot
 * weights: 15% faster in the timing, 10% slower in the model. */
static void evict_weights(const dnnl_entry *e) {
#if defined(__x86_64__) || defined(__i386__)
  const char *w = e->p.w;
  size_t n = dnnl_memory_desc_get_size(&e->p.w_md);
  for (size_t i = 0; w && i < n; i += 64)
    _mm_clflush(w + i);
  _mm_mfence();
#else
  (void)e;
#endif
}

/* Seconds one call of e takes on x/b/y, its weights evicted from the
 * caches first; a huge value when the call fails. */
static double entry_time(const het_dnnl_state *s, const dnnl_entry *e,
                         void *x, void *b, void *y) {
  evict_weights(e);
  double t0 = now_s();
  if (!entry_execute(e, x, b, y, s->has_z ? y : NULL))
    return 1e30;
  return now_s() - t0;
}

/* Which of the n candidate entries to keep: best of five calls each,
 * alternating (after one untimed call each), on zeroed buffers, the
 * reorders at their edges included.  Candidate 0 (direct) is kept unless
 * another is at least 5% faster. */
static int fastest_entry(const het_dnnl_state *s, const dnnl_entry *cand,
                         int n) {
  const dnnl_entry *d = &cand[0];
  size_t nx = dnnl_memory_desc_get_size(&d->src_user);
  size_t ny = dnnl_memory_desc_get_size(&d->dst_user);
  size_t nb = dnnl_memory_desc_get_size(&d->p.b_md);
  void *x = calloc(1, nx + 64), *y = calloc(1, ny + 64);
  void *b = nb ? calloc(1, nb + 64) : NULL;
  double best[1 + CONV_WINO_MAX];
  for (int k = 0; k < n; k++)
    best[k] = 1e30;
  for (int i = 0; x && y && (b || !nb) && i < 6; i++)
    for (int k = 0; k < n; k++) {
      double t = entry_time(s, &cand[k], x, b, y);
      if (i > 0 && t < best[k])
        best[k] = t;
    }
  free(x);
  free(y);
  free(b);
  int pick = 0;
  for (int k = 1; k < n; k++)
    if (best[k] < 0.95 * best[0] && best[k] < best[pick])
      pick = k;
  return pick;
}

/* A 2-D 3x3 Conv with unit strides and dilations, not grouped: the shape
 * oneDNN's Winograd kernels take. */
static bool winograd_shape(const conv_dims *c, int xr) {
  return xr == 4 && c->wr == 4 && c->w[2] == 3 && c->w[3] == 3 &&
         c->st[0] == 1 && c->st[1] == 1 && c->dil[0] == 0 && c->dil[1] == 0;
}

/* Whether cpu.conv_algo=auto considers Winograd for c at all: its shape,
 * and an output at least HET_WINOGRAD_MIN_OUT high and wide (F(4,3) needs
 * HET_WINOGRAD_F43_MIN_OUT: conv_entry_create drops it below that). */
static bool winograd_auto(const conv_dims *c, int xr) {
  return winograd_shape(c, xr) && c->y[2] >= HET_WINOGRAD_MIN_OUT &&
         c->y[3] >= HET_WINOGRAD_MIN_OUT;
}

/* The tuning-cache key of a timed Conv choice: oneDNN's version and
 * everything the timing depends on (shapes, strides, pads, the fused
 * activation and residual, the layouts at the node's edges). */
static bool conv_choice_key(const het_dnnl_state *s, const conv_dims *c,
                            const int64_t *xd, int xr, bool bias, char *key,
                            size_t cap) {
  const dnnl_version_t *v = dnnl_version();
  int n = snprintf(key, cap, "conv dnnl=%d.%d.%d x=", v->major, v->minor,
                   v->patch);
  for (int i = 0; i < xr && n > 0 && (size_t)n < cap; i++)
    n += snprintf(key + n, cap - (size_t)n, "%s%lld", i ? "x" : "",
                  (long long)xd[i]);
  if (n > 0 && (size_t)n < cap)
    n += snprintf(key + n, cap - (size_t)n,
                  " w=%lldx%lldx%lldx%lld s=%lldx%lld pl=%lldx%lld "
                  "pr=%lldx%lld b=%d z=%d act=%s/%d io=%u/%u",
                  (long long)c->w[0], (long long)c->w[1], (long long)c->w[2],
                  (long long)c->w[3], (long long)c->st[0],
                  (long long)c->st[1], (long long)c->pl[0],
                  (long long)c->pl[1], (long long)c->pr[0],
                  (long long)c->pr[1], bias, s->has_z,
                  s->act_op ? s->act_op : "-", s->has_act, s->nhwc_in & 1,
                  s->nhwc_out & 1);
  return n > 0 && (size_t)n < cap;
}

/* oneDNN's implementation name of pd ("" when it has none). */
static const char *pd_impl(const_dnnl_primitive_desc_t pd) {
  const char *impl = NULL;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
          dnnl_success ||
      !impl)
    return "";
  return impl;
}

/* The direct Conv entry: channels-last, else in the layouts oneDNN
 * picks; false (e cleared) when oneDNN refuses both. */
static bool conv_entry_direct(const het_dnnl_state *s, const conv_dims *c,
                              const int64_t *xd, int xr, const het_tensor *w,
                              bool bias, dnnl_entry *e) {
  dnnl_primitive_desc_t pd = conv_pd(s, c, xd, xr, bias, PD_DIRECT_CL);
  if (!pd)
    pd = conv_pd(s, c, xd, xr, bias, PD_DIRECT_ANY);
  if (pd && conv_entry_build(s, c, xd, xr, w, pd, e))
    return true;
  entry_clear(e);
  return false;
}

/* A remembered Conv choice: 0 direct, k >= 1 oneDNN's k-th Winograd
 * kernel, whose implementation name goes into impl; -1 none usable. */
static int conv_choice_parse(const char *value, char *impl, size_t cap) {
  int k = 0, used = 0;
  if (strcmp(value, "direct") == 0)
    return 0;
  if (sscanf(value, "winograd %d %n", &k, &used) != 1 || used == 0 ||
      k < 1 || k > CONV_WINO_MAX)
    return -1;
  snprintf(impl, cap, "%s", value + used);
  return impl[0] ? k : -1;
}

/* Builds the remembered choice (want, impl) as *e; false when it cannot
 * be built as it was (oneDNN now offers another kernel at that place). */
static bool conv_entry_remembered(const het_dnnl_state *s, const conv_dims *c,
                                  const int64_t *xd, int xr,
                                  const het_tensor *w, bool bias, int want,
                                  const char *impl, dnnl_entry *e) {
  if (want == 0)
    return conv_entry_direct(s, c, xd, xr, w, bias, e);
  dnnl_primitive_desc_t wpd[CONV_WINO_MAX];
  int nw = conv_pds(s, c, xd, xr, bias, PD_WINOGRAD, wpd, want);
  bool same = nw == want && strcmp(pd_impl(wpd[want - 1]), impl) == 0;
  for (int k = 0; k < nw - (same ? 1 : 0); k++)
    dnnl_primitive_desc_destroy(wpd[k]);
  if (same && conv_entry_build(s, c, xd, xr, w, wpd[want - 1], e))
    return true;
  entry_clear(e);
  return false;
}

/* The Conv entry for x dims xd: direct convolution (channels-last, else
 * oneDNN's layouts) or Winograd, as algo asks.  HET_CONV_ALGO_AUTO builds
 * direct and the Winograd kernels oneDNN offers (F(2,3) and F(4,3) on
 * AVX-512; see CONV_WINO_MAX), times them here and keeps the fastest,
 * Winograd only when at least 5% faster than direct: 1.4-2.2x on ResNet's
 * 3x3 Convs in the model on this CPU, slower on some small ones.  The
 * timed choice is remembered in the tuning cache (kernels/tuning.h), and
 * a later session on this machine builds just that one (n_cand 1), or
 * times again when oneDNN no longer offers the remembered kernel.
 * HET_CONV_ALGO_WINOGRAD takes oneDNN's first Winograd kernel untimed
 * (the same on every run); HET_CONV_ALGO_DIRECT builds none.  While a
 * plan's choices are replayed, auto never times: the plan's choice, else
 * direct. */
static bool conv_entry_create(const het_dnnl_state *s, const het_node *node,
                              const int64_t *xd, int xr, const het_tensor *w,
                              bool bias, het_conv_algo algo, dnnl_entry *e) {
  conv_dims c;
  if (!conv_dims_init(node, xd, xr, w, &c))
    return false;
  /* a gathered 1x1 Conv is built for unit strides on OH x OW pixels */
  if (gather_shape(s, &c, xr)) {
    int64_t xg[4] = {xd[0], xd[1], c.y[2], c.y[3]};
    int64_t gs[2] = {c.st[0], c.st[1]};
    c.st[0] = c.st[1] = 1;
    c.pr[0] = c.pr[1] = 0;
    if (!conv_entry_direct(s, &c, xg, xr, w, bias, e))
      return false;
    e->gather = true;
    memcpy(e->gx, xd, sizeof e->gx);
    memcpy(e->gs, gs, sizeof e->gs);
    e->n_cand = 1;
    return true;
  }
  bool timed = algo == HET_CONV_ALGO_AUTO && winograd_auto(&c, xr);
  char key[HET_TUNING_KEY_CAP], value[HET_TUNING_VALUE_CAP];
  char impl[HET_TUNING_VALUE_CAP];
  bool keyed = timed && conv_choice_key(s, &c, xd, xr, bias, key, sizeof key);
  int want = keyed && het_tuning_get(key, value, sizeof value)
                 ? conv_choice_parse(value, impl, sizeof impl)
                 : -1;
  if (want >= 0 &&
      conv_entry_remembered(s, &c, xd, xr, w, bias, want, impl, e)) {
    e->n_cand = 1;
    return true;
  }
  /* Replaying a plan's choices (kernels/tuning.h), a choice the plan does
   * not hold, or one oneDNN no longer offers, is direct: never timed. */
  if (algo == HET_CONV_ALGO_AUTO && !het_tuning_may_time())
    algo = HET_CONV_ALGO_DIRECT;
  /* cand[0]: direct (unset under winograd); cand[1..]: Winograd */
  dnnl_entry cand[1 + CONV_WINO_MAX];
  dnnl_primitive_desc_t wpd[CONV_WINO_MAX];
  memset(cand, 0, sizeof cand);
  bool wide = c.y[2] * c.y[3] >= CONV_WINO_ALL_PIXELS;
  int nw = algo == HET_CONV_ALGO_DIRECT || !winograd_shape(&c, xr) ||
                   (algo == HET_CONV_ALGO_AUTO && !winograd_auto(&c, xr))
               ? 0
               : conv_pds(s, &c, xd, xr, bias, PD_WINOGRAD, wpd,
                          algo == HET_CONV_ALGO_AUTO && wide ? CONV_WINO_MAX
                                                             : 1);
  int n = 1;
  const char *names[1 + CONV_WINO_MAX] = {"direct"};
  char seen[CONV_WINO_MAX][128];
  bool f43 = c.y[2] >= HET_WINOGRAD_F43_MIN_OUT &&
             c.y[3] >= HET_WINOGRAD_F43_MIN_OUT;
  for (int k = 0; k < nw; k++) {
    char *name = NULL;
    const char *in = pd_impl(wpd[k]);
    /* oneDNN 2.6 may list a kernel twice: build and time it once; F(4,3)
     * is not tried on an output one of its tiles high or wide */
    bool again = algo == HET_CONV_ALGO_AUTO && !f43 && strstr(in, "4x3");
    for (int j = 0; j < k && !again; j++)
      again = strcmp(seen[j], in) == 0;
    snprintf(seen[k], sizeof seen[k], "%s", in);
    if (again) {
      dnnl_primitive_desc_destroy(wpd[k]);
      continue;
    }
    if (keyed && (name = het_dnnl_malloc(strlen(in) + 16)))
      snprintf(name, strlen(in) + 16, "winograd %d %s", k + 1, in);
    if (conv_entry_build(s, &c, xd, xr, w, wpd[k], &cand[n])) {
      names[n++] = name;
    } else {
      entry_clear(&cand[n]);
      free(name);
    }
  }
  bool direct = n == 1 || algo != HET_CONV_ALGO_WINOGRAD;
  if (direct)
    direct = conv_entry_direct(s, &c, xd, xr, w, bias, &cand[0]);
  int pick = !direct ? (n > 1 ? 1 : -1)
             : n > 1 ? fastest_entry(s, cand, n)
                     : 0;
  /* Remember what was timed (a Winograd name holds its position among
   * oneDNN's kernels, which the remembered path checks). */
  if (keyed && direct && pick >= 0 && names[pick])
    het_tuning_put(key, names[pick]);
  for (int k = 1; k < n; k++)
    free((char *)names[k]);
  for (int k = 0; k < n; k++)
    if (k != pick)
      entry_clear(&cand[k]);
  if (pick < 0)
    return false;
  *e = cand[pick];
  e->n_cand = (direct ? 1 : 0) + n - 1;
  return true;
}

/* MatMul with 2-D constant B: A's leading dims fold into M (bfloat16 A
 * and B under s->bf16: A converted per call by the src reorder). */
static bool matmul_entry_create(const het_dnnl_state *s, const int64_t *xd,
                                int xr, const het_tensor *w, dnnl_entry *e) {
  if (xr < 2 || w->rank != 2 || xd[xr - 1] != w->dims[0])
    return false;
  int64_t m = het_dims_count(xd, xr - 1);
  int64_t a[2] = {m, xd[xr - 1]}, y[2] = {m, w->dims[1]};
  dnnl_data_type_t in = s->bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t src, dst, wany, wuser;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  bool ok =
      attr && m > 0 && md_tag_dt(&src, 2, a, dnnl_ab, in) &&
      plain_md(&e->src_user, 2, a, false) && plain_md(&dst, 2, y, false) &&
      md_tag_dt(&wany, 2, w->dims, dnnl_format_tag_any, in) &&
      plain_md(&wuser, 2, w->dims, false) &&
      dnnl_matmul_desc_init(&md, &src, &wany, NULL, &dst) == dnnl_success &&
      dnnl_primitive_desc_create(&pd, &md, attr, het_dnnl_engine(), NULL) ==
          dnnl_success;
  dnnl_primitive_attr_destroy(attr);
  return ok && entry_finish(e, pd, &wuser, w->data) &&
         het_dnnl_reorder_create(&e->src_user, &e->p.src_md, &e->src_r);
}

static void entry_clear(dnnl_entry *e) {
  dnnl_primitive_destroy(e->p.prim);
  dnnl_primitive_destroy(e->src_r);
  dnnl_primitive_destroy(e->dst_r);
  dnnl_primitive_destroy(e->z_r);
  het_dnnl_weights_free(&e->p);
  memset(e, 0, sizeof *e);
}

/* OUT_OF_MEMORY for node when a primitive's build ran out of memory
 * (het_dnnl_oom_take). */
static het_status build_oom(const het_node *node) {
  return het_node_error(node, HET_ERR_OUT_OF_MEMORY,
                        "oneDNN: out of memory building the primitive");
}

/* Builds into *e an entry of s for X dims xd (rank xr) that no cache
 * holds, for one call when the cache is full (direct algorithm: nothing
 * is timed for it); *oom when the build ran out of memory.  The caller
 * clears *e after its run; false (and *e cleared) when oneDNN refused it
 * or memory ran out. */
static bool entry_build_once(const het_dnnl_state *s, const het_node *node,
                             const int64_t *xd, int xr, const het_tensor *w,
                             bool bias, dnnl_entry *e, bool *oom) {
  memset(e, 0, sizeof *e);
  het_dnnl_oom_take();
  bool ok = conv_entry_create(s, node, xd, xr, w, bias, HET_CONV_ALGO_DIRECT,
                              e);
  *oom = het_dnnl_oom_take();
  if (!ok || *oom) {
    entry_clear(e);
    ok = false;
  }
  return ok;
}

/* Finds or builds the entry for x's shape: *out, NULL when the cache is
 * full; OUT_OF_MEMORY (nothing cached, a later call tries again) when the
 * build ran out of memory. */
static het_status entry_get(het_dnnl_state *s, const het_node *node,
                            const int64_t *xd, int xr, const het_tensor *w,
                            bool bias, const dnnl_entry **out) {
  const dnnl_entry *found = NULL;
  het_status st = HET_OK;
  pthread_mutex_lock(&s->mu);
  for (int i = 0; i < s->n && !found; i++)
    if (s->entries[i].key_rank == xr &&
        memcmp(s->entries[i].key, xd, sizeof(int64_t) * (size_t)xr) == 0)
      found = &s->entries[i];
  if (!found && s->n < DNNL_CACHE) {
    dnnl_entry *e = &s->entries[s->n];
    memset(e, 0, sizeof *e);
    het_dnnl_oom_take();
    e->ok = s->kind == KIND_CONV
                ? conv_entry_create(s, node, xd, xr, w, bias, s->algo, e)
                : matmul_entry_create(s, xd, xr, w, e);
    bool oom = het_dnnl_oom_take();
    if (!e->ok || oom)
      entry_clear(e);
    for (int i = 0; s->share_w && e->ok && i < s->n; i++)
      if (s->entries[i].ok && !s->entries[i].p.w_borrowed &&
          dnnl_memory_desc_equal(&s->entries[i].p.w_md, &e->p.w_md)) {
        het_dnnl_weights_free(&e->p);
        e->p.w = s->entries[i].p.w; /* freed with entry i */
        e->p.w_borrowed = e->w_shared = true;
        break;
      }
    if (oom) {
      st = build_oom(node);
    } else {
      e->key_rank = xr; /* after: a create may replace the whole entry */
      memcpy(e->key, xd, sizeof(int64_t) * (size_t)xr);
      found = &s->entries[s->n++];
    }
  }
  pthread_mutex_unlock(&s->mu);
  *out = found;
  return st;
}

static const het_tensor *node_init(const het_graph *g, const het_node *n,
                                   int i) {
  int id = het_node_input(n, i);
  return id >= 0 ? g->values[id].initializer : NULL;
}

static bool is_f32(const het_graph *g, int v) {
  return v >= 0 && g->values[v].dtype == HET_DTYPE_FLOAT32;
}

/* hetrt.FusedConvDw (opt_conv_dw.c): inputs 3 and 4 are the depthwise
 * half's weights and bias, not a residual. */
static bool is_convdw(const het_node *node) {
  return strcmp(node->domain, "hetrt") == 0 &&
         strcmp(node->op_type, "FusedConvDw") == 0;
}

/* hetrt.FusedConvPool (opt_conv_pool.c): a Conv and the MaxPool after it. */
static bool is_convpool(const het_node *node) {
  return strcmp(node->domain, "hetrt") == 0 &&
         strcmp(node->op_type, "FusedConvPool") == 0;
}

/* oneDNN takes float32 X with float32 constant W (and B when present),
 * depthwise Convs included (its channels-last brdgmm_dw kernel runs 2x the
 * direct kernel of linalg_conv_dw.c, which serves builds without it). */
static bool dnnl_takes(const het_graph *graph, const het_node *node,
                       dnnl_kind kind) {
  const het_tensor *w = node_init(graph, node, 1);
  bool has_b = kind == KIND_CONV && het_node_input(node, 2) >= 0;
  const het_tensor *b = has_b ? node_init(graph, node, 2) : NULL;
  bool convdw = kind == KIND_CONV && is_convdw(node);
  int z = kind == KIND_CONV && !convdw ? het_node_input(node, 3) : -1;
  if (convdw) {
    const het_tensor *wd = node_init(graph, node, 3);
    bool has_bd = het_node_input(node, 4) >= 0;
    const het_tensor *bd = has_bd ? node_init(graph, node, 4) : NULL;
    int64_t st[2], pads[4];
    if (!wd || wd->dtype != HET_DTYPE_FLOAT32 || wd->rank != 4 ||
        wd->dims[1] != 1 || (has_bd && (!bd || bd->dtype != HET_DTYPE_FLOAT32)) ||
        !het_conv_dw_attrs(node, st, pads))
      return false;
  }
  if (!het_dnnl_engine() || !is_f32(graph, het_node_input(node, 0)) || !w ||
      w->dtype != HET_DTYPE_FLOAT32 || (has_b && !b) ||
      (b && b->dtype != HET_DTYPE_FLOAT32) || (z >= 0 && !is_f32(graph, z)))
    return false;
  return true;
}

/* A float16 Conv or MatMul with float16 constant weights (and bias,
 * residual): runs on the float32 primitive (het_dnnl_state.f16). */
static bool dnnl_takes_f16(const het_graph *graph, const het_node *node) {
  const het_tensor *w = node_init(graph, node, 1);
  bool has_b = het_node_input(node, 2) >= 0;
  const het_tensor *b = has_b ? node_init(graph, node, 2) : NULL;
  int x = het_node_input(node, 0), z = het_node_input(node, 3);
  return het_dnnl_engine() && x >= 0 &&
         graph->values[x].dtype == HET_DTYPE_FLOAT16 && w &&
         w->dtype == HET_DTYPE_FLOAT16 && (!has_b || b) &&
         (!b || b->dtype == HET_DTYPE_FLOAT16) &&
         (z < 0 || graph->values[z].dtype == HET_DTYPE_FLOAT16);
}

/* A float32 copy of float16 tensor t into *out (caller owns). */
static het_status f16_widen(const het_tensor *t, het_tensor **out) {
  HET_TRY(het_tensor_create_empty(HET_DTYPE_FLOAT32, t->dims, t->rank, out));
  het_half_to_float(t->data, (*out)->data, het_tensor_count(t));
  return HET_OK;
}

static het_status state_create(const het_node *node, dnnl_kind kind,
                               const het_kernel_prep *prep,
                               het_dnnl_state **out) {
  het_dnnl_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN state: out of memory");
  s->kind = kind;
  s->nhwc_in = prep->nhwc_in;
  s->nhwc_out = prep->nhwc_out;
  s->algo = prep->conv_algo;
  s->bf16 = prep->bf16;
  long l2 = het_cpuinfo_get()->cache_l2;
  s->l2 = prep->cache_l2 > 0 ? prep->cache_l2 : l2 > 0 ? l2 : DNNL_L2_BYTES;
  if (kind == KIND_CONV) {
    const het_attr *lo = het_node_find_attr(node, "hetrt_act_min");
    const het_attr *hi = het_node_find_attr(node, "hetrt_act_max");
    s->has_z = !is_convdw(node) && het_node_input(node, 3) >= 0;
    s->has_act = lo && hi;
    s->act_lo = lo ? lo->f : 0.0f;
    s->act_hi = hi ? hi->f : 0.0f;
    const het_attr *op = het_node_find_attr(node, "hetrt_act");
    s->act_op = op && op->type == HET_ATTR_STRING ? het_conv_act_name(op->s)
                                                  : NULL;
    s->act_bad = op && !s->act_op; /* the reference path says why */
    s->act_alpha = het_node_attr_float(node, "hetrt_act_alpha", 0.0f);
    s->act_beta = het_node_attr_float(node, "hetrt_act_beta", 0.0f);
  }
  pthread_mutex_init(&s->mu, NULL);
  *out = s;
  return HET_OK;
}

/* ---- bands on several threads ----
 * A fused node that goes band by band on one thread goes so on more too
 * where each thread's share of the intermediate exceeds the L2: its bands
 * are split into as many runs as threads, a whole number of bands each,
 * and each thread takes a run with its own buffer and oneDNN on that
 * thread alone.  That is one fork and join for the node; with oneDNN's
 * own threads there would be one per band, costing more than the bands
 * save.  At two threads SqueezeNet's stem and its MaxPool took 202-214 us
 * in two runs of bands, 246-255 us whole; MobileNetV2's 16 -> 96 pair at
 * 112x112 261-319 us against 305-443.  Smaller shares stay in L2 whole,
 * and bands would have the next node read rows another core wrote
 * (MobileNetV2's 56x56x144 pair: +17 us, the Conv after it +41). */

/* Rows per band for out rows, ob of them at most, so that they make a
 * multiple of threads bands (threads > 1; *ob unchanged on one); returns
 * the runs of bands, min(threads, bands). */
static int band_runs(int64_t out, int threads, int64_t *ob) {
  if (threads <= 1)
    return 1;
  int64_t nb = (out + *ob - 1) / *ob;
  nb = (nb + threads - 1) / threads * threads;
  *ob = (out + nb - 1) / nb;
  nb = (out + *ob - 1) / *ob;
  return nb < threads ? (int)nb : threads;
}

/* Rows [*q0, *q1) of run k of `runs` over out rows in bands of ob. */
static void band_run_rows(int64_t out, int64_t ob, int runs, int k,
                          int64_t *q0, int64_t *q1) {
  int64_t nb = (out + ob - 1) / ob;
  int64_t b0 = nb * k / runs, b1 = nb * (k + 1) / runs;
  *q0 = b0 * ob;
  *q1 = b1 * ob < out ? b1 * ob : out;
}

/* Runs fn(arg, k, buffer, ctx) for runs k in [0, runs) on ctx's threads,
 * a buffer of floats each from buf; ctx with no parallel loop runner (its
 * loops run on the calling thread).  Returns the first failure, its
 * message recorded on this thread. */
typedef het_status (*band_run_fn)(void *arg, int k, float *buf,
                                   const het_kernel_ctx *ctx);

typedef struct band_job {
  band_run_fn fn;
  void *arg;
  const het_kernel_ctx *ctx;
  float *buf;
  size_t floats;
  atomic_int failed;
  het_status st;
  char msg[256];
} band_job;

static void band_job_run(void *arg, int64_t k0, int64_t k1) {
  band_job *j = arg;
  het_kernel_ctx ctx = *j->ctx;
  ctx.par = NULL;
  het_kernel_set_omp_threads(1);
  het_status st = HET_OK;
  for (int64_t k = k0; k < k1 && st == HET_OK; k++)
    st = j->fn(j->arg, (int)k, j->buf + (size_t)k0 * j->floats, &ctx);
  int none = 0;
  if (st != HET_OK && atomic_compare_exchange_strong(&j->failed, &none, 1)) {
    j->st = st;
    snprintf(j->msg, sizeof j->msg, "%s", het_last_error());
  }
}

static het_status band_runs_execute(const het_kernel_ctx *ctx, int runs,
                                    float *buf, size_t floats, band_run_fn fn,
                                    void *arg) {
  band_job j = {.fn = fn, .arg = arg, .ctx = ctx, .buf = buf,
                .floats = floats};
  atomic_init(&j.failed, 0);
  het_parallel_for(ctx->par, runs, 1, band_job_run, &j);
  het_kernel_set_omp_threads(ctx->threads); /* this thread's again */
  return atomic_load(&j.failed) ? het_error(j.st, "%s", j.msg) : HET_OK;
}

/* ---- hetrt.FusedConvDw: the 1x1 half and the depthwise half, band by
 * band ----
 * Where the 1x1 half's output (one image) is larger than the L2 cache
 * (per thread: see "bands on several threads"), each band of output rows
 * goes through a
 * buffer in the run's scratch: the 1x1 half writes the image rows the band's
 * depthwise taps read (zero rows where they reach into the pads above and
 * below; rows the previous band already made are moved, not recomputed),
 * then the depthwise half reads the buffer as its whole input (pads left
 * and right only) and writes the band's rows of Y.  The buffer stays
 * within CONVDW_BAND_BYTES, so the wide 1x1 output is written and read in
 * the cache: MobileNetV2's 16 -> 96 channel pair at 112x112 (4.8 MB)
 * took 459 us instead of 656 as two Convs in the model, bit-identical.
 * Smaller outputs already stay in L2 between two Convs (MobileNetV2's
 * 56x56x144 pair ran 4-7% slower in bands): then the 1x1 half writes the
 * whole output into the buffer and the depthwise half (on dw_full, the
 * real pads) reads it, as two Convs would.  More threads: see above. */
#define CONVDW_BAND_BYTES (512 * 1024)

/* The depthwise half's geometry on an image of H x W. */
typedef struct convdw_geom {
  int64_t c, h, w, m, kh, kw, sh, sw, pt, pb, oh, ow;
} convdw_geom;

static bool convdw_geom_init(const het_node *node, const int64_t *xd,
                             const het_tensor *w, const het_tensor *wd,
                             convdw_geom *g) {
  int64_t st[2], pads[4];
  if (!het_conv_dw_attrs(node, st, pads) || wd->rank != 4)
    return false;
  *g = (convdw_geom){.c = xd[1], .h = xd[2], .w = xd[3], .m = w->dims[0],
                     .kh = wd->dims[2], .kw = wd->dims[3], .sh = st[0],
                     .sw = st[1], .pt = pads[0], .pb = pads[2]};
  int64_t sh = g->h + g->pt + g->pb - g->kh, sw = g->w + pads[1] + pads[3] - g->kw;
  g->oh = sh / g->sh + 1;
  g->ow = sw / g->sw + 1;
  return sh >= 0 && sw >= 0;
}

/* Output rows per band: what fits CONVDW_BAND_BYTES of buffer (a
 * divisor of OH when one is at least half that, so every band runs the
 * same primitives). */
static int64_t convdw_band_rows(const convdw_geom *g) {
  int64_t rows = CONVDW_BAND_BYTES / (g->w * g->m * (int64_t)sizeof(float));
  int64_t ob = rows < g->kh ? 1 : (rows - g->kh) / g->sh + 1;
  if (ob >= g->oh)
    return g->oh;
  for (int64_t k = ob; 2 * k >= ob; k--)
    if (g->oh % k == 0)
      return k;
  return ob;
}

/* Runs (x non-NULL) or only builds (x NULL) the entry of s for X dims xd
 * on x -> y: the cached one, else, with the cache full, one built for
 * this call alone. */
static het_status convdw_half(het_dnnl_state *s, const het_node *node,
                              const het_node *errnode, const int64_t *xd,
                              const het_tensor *w, const het_tensor *b,
                              const void *x, void *y) {
  const dnnl_entry *e;
  dnnl_entry tmp;
  HET_TRY(entry_get(s, node, xd, 4, w, b != NULL, &e));
  if (!e) {
    bool oom;
    tmp.ok = entry_build_once(s, node, xd, 4, w, b != NULL, &tmp, &oom);
    if (oom)
      return build_oom(errnode);
    e = &tmp;
  }
  bool ok = e->ok && (!x || entry_execute(e, (void *)x, b ? b->data : NULL,
                                          y, NULL));
  bool built = e->ok;
  if (e == &tmp)
    entry_clear(&tmp);
  if (!built)
    return het_node_error(errnode, HET_ERR_UNSUPPORTED,
                          "oneDNN refused a primitive for part of the "
                          "fused node (X %lldx%lldx%lldx%lld)",
                          (long long)xd[0], (long long)xd[1],
                          (long long)xd[2], (long long)xd[3]);
  return ok ? HET_OK
            : het_node_error(errnode, HET_ERR_KERNEL,
                             "oneDNN primitive failed");
}

/* Output rows [q0, q1) of one image of the pair, ob per band (see
 * above); x NULL builds the primitives the bands need and runs nothing. */
static het_status convdw_bands(het_dnnl_state *s, const het_node *node,
                               const convdw_geom *g, int64_t ob, int64_t q0,
                               int64_t q1, const het_tensor *const *in,
                               const float *x, float *buf, float *y) {
  const het_tensor *w = in[1], *b = in[2], *wd = in[3], *bd = in[4];
  size_t row = (size_t)(g->w * g->m);
  int64_t have0 = 0, have1 = INT64_MIN; /* image rows now in buf */
  for (int64_t o0 = q0; o0 < q1; o0 += ob) {
    int64_t n = ob < q1 - o0 ? ob : q1 - o0;
    int64_t r0 = o0 * g->sh - g->pt, r1 = (o0 + n - 1) * g->sh - g->pt + g->kh;
    int64_t keep = have1 > r0 ? have1 - r0 : 0;
    int64_t c0 = r0 + keep > 0 ? r0 + keep : 0, c1 = r1 < g->h ? r1 : g->h;
    if (x && keep > 0)
      memmove(buf, buf + (size_t)(r0 - have0) * row,
              (size_t)keep * row * sizeof(float));
    if (x) /* the pads above and below as zero rows */
      for (int64_t r = r0 + keep; r < r1; r++)
        if (r < 0 || r >= g->h)
          memset(buf + (size_t)(r - r0) * row, 0, row * sizeof(float));
    if (c1 > c0) {
      int64_t xd[4] = {1, g->c, c1 - c0, g->w};
      HET_TRY(convdw_half(s, node, node, xd, w, b,
                          x ? x + (size_t)(c0 * g->w * g->c) : NULL,
                          buf + (size_t)(c0 - r0) * row));
    }
    int64_t bd_dims[4] = {1, g->m, r1 - r0, g->w};
    HET_TRY(convdw_half(s->dw, &s->dw_node->node, node, bd_dims, wd, bd, x ? buf : NULL,
                        y + (size_t)(o0 * g->ow * g->m)));
    have0 = r0;
    have1 = r1;
  }
  return HET_OK;
}

/* How the pair runs on X dims xd: band by band (see above; ob output
 * rows per band) or whole, and the floats of buffer it takes. */
typedef struct convdw_sched {
  convdw_geom g;
  bool bands;
  int64_t ob;
  int runs;      /* of bands, each on a thread of its own */
  size_t floats; /* of buffer, per run */
} convdw_sched;

/* Whether s holds an entry for X dims xd (4 of them; NULL: looks for
 * none), else whether it has room for k more; *found says which. */
static bool entry_room(het_dnnl_state *s, const int64_t *xd, int k,
                       bool *found) {
  pthread_mutex_lock(&s->mu);
  *found = false;
  for (int i = 0; xd && i < s->n && !*found; i++)
    *found = s->entries[i].key_rank == 4 &&
             memcmp(s->entries[i].key, xd, 4 * sizeof(int64_t)) == 0;
  bool room = s->n + k <= DNNL_CACHE;
  pthread_mutex_unlock(&s->mu);
  return *found || room;
}

/* The schedule for X dims xd on threads; false when the depthwise half
 * does not fit its input.  Bands need X and Y channels-last (a band is a
 * run of their rows) and their primitives cached (a shape
 * seen before, or room for the 1x1 half's few row counts and the band's
 * depthwise primitives): with the caches full, each band would build its
 * primitives on every call, so the pair runs whole. */
static bool convdw_sched_init(het_dnnl_state *s, const het_node *node,
                              const int64_t *xd, const het_tensor *w,
                              const het_tensor *wd, int threads,
                              convdw_sched *p) {
  convdw_geom *g = &p->g;
  if (!convdw_geom_init(node, xd, w, wd, g))
    return false;
  size_t mid = (size_t)(g->h * g->w * g->m);
  p->ob = convdw_band_rows(g);
  p->runs = band_runs(g->oh, threads, &p->ob);
  int64_t bd[4] = {1, g->m, (p->ob - 1) * g->sh + g->kh, g->w};
  bool seen = false, none; /* seen: this band shape ran, its 1x1 rows too */
  size_t l2s = (size_t)s->l2 * (size_t)(threads > 1 ? threads : 1);
  p->bands = (s->nhwc_in & s->nhwc_out & 1) && mid * sizeof(float) > l2s &&
             entry_room(s->dw, bd, 2, &seen) &&
             (seen || entry_room(s, NULL, 5, &none));
  p->floats = p->bands ? (size_t)(bd[2] * g->w * g->m) : mid * (size_t)xd[0];
  if (!p->bands) {
    p->ob = g->oh;
    p->runs = 1;
  }
  return true;
}

/* The run of bands k of every image (band_runs_execute). */
typedef struct convdw_job {
  het_dnnl_state *s;
  const convdw_sched *p;
  const int64_t *xd;
  const het_tensor *const *in;
  const float *x;
  float *y;
} convdw_job;

static het_status convdw_run_k(void *arg, int k, float *buf,
                               const het_kernel_ctx *ctx) {
  const convdw_job *j = arg;
  const convdw_geom *g = &j->p->g;
  int64_t q0, q1;
  band_run_rows(g->oh, j->p->ob, j->p->runs, k, &q0, &q1);
  for (int64_t i = 0; i < j->xd[0]; i++)
    HET_TRY(convdw_bands(j->s, ctx->node, g, j->p->ob, q0, q1, j->in,
                         j->x + (size_t)(i * g->c * g->h * g->w), buf,
                         j->y + (size_t)(i * g->m * g->oh * g->ow)));
  return HET_OK;
}

/* The pair on x (dims xd) through buf (p->runs * p->floats): band by
 * band per image, in runs on ctx's threads, or each half whole; x NULL:
 * builds only (ctx unused). */
static het_status convdw_run_images(het_dnnl_state *s, const het_node *node,
                                    const convdw_sched *p, const int64_t *xd,
                                    const het_tensor *const *in, const float *x,
                                    float *buf, float *y,
                                    const het_kernel_ctx *ctx) {
  const convdw_geom *g = &p->g;
  if (!p->bands) {
    int64_t md[4] = {xd[0], g->m, g->h, g->w};
    HET_TRY(convdw_half(s, node, node, xd, in[1], in[2], x, buf));
    return convdw_half(s->dw_full, &s->dw_full_node->node, node, md, in[3],
                       in[4], x ? buf : NULL, y);
  }
  if (x) {
    convdw_job j = {.s = s, .p = p, .xd = xd, .in = in, .x = x, .y = y};
    return band_runs_execute(ctx, p->runs, buf, p->floats, convdw_run_k, &j);
  }
  for (int k = 0; k < p->runs; k++) {
    int64_t q0, q1;
    band_run_rows(g->oh, p->ob, p->runs, k, &q0, &q1);
    HET_TRY(convdw_bands(s, node, g, p->ob, q0, q1, in, NULL, NULL, NULL));
  }
  return HET_OK;
}

/* FusedConvDw's state: s runs the 1x1 half (from X in the node's layout
 * into the channels-last buffer), s->dw and s->dw_full the depthwise
 * half (bands: channels-last in and out; whole images: from the buffer
 * into Y in the node's layout); the primitives X's shape needs (batch 1
 * for a symbolic batch) are built now when it is otherwise static. */
static het_status convdw_prepare(const het_graph *graph, const het_node *node,
                                 const het_kernel_prep *prep,
                                 het_dnnl_state *s) {
  het_kernel_prep nhwc = {.nhwc_in = 1, .nhwc_out = 1,
                          .conv_algo = HET_CONV_ALGO_DIRECT};
  het_kernel_prep full = nhwc;
  full.nhwc_out = prep->nhwc_out;
  const het_tensor *in[5] = {NULL, node_init(graph, node, 1),
                             het_node_input(node, 2) >= 0
                                 ? node_init(graph, node, 2)
                                 : NULL,
                             node_init(graph, node, 3),
                             het_node_input(node, 4) >= 0
                                 ? node_init(graph, node, 4)
                                 : NULL};
  s->share_w = true;
  s->bf16 = false; /* the pair runs float32 (README, CPU layout) */
  s->dw_node = calloc(1, sizeof *s->dw_node);
  s->dw_full_node = calloc(1, sizeof *s->dw_full_node);
  if (!s->dw_node || !s->dw_full_node)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN state: out of memory");
  het_lk_dw_half_init(node, in[1]->dims[0], true, s->dw_node);
  het_lk_dw_half_init(node, in[1]->dims[0], false, s->dw_full_node);
  HET_TRY(state_create(&s->dw_node->node, KIND_CONV, &nhwc, &s->dw));
  HET_TRY(state_create(&s->dw_full_node->node, KIND_CONV, &full, &s->dw_full));
  s->dw->share_w = s->dw_full->share_w = true;
  const het_shape *xs = &graph->values[het_node_input(node, 0)].shape;
  if (xs->rank != 4 || het_shape_item_count(xs) < 0)
    return HET_OK; /* built at run time */
  int64_t xd[4];
  convdw_sched p;
  for (int i = 0; i < 4; i++)
    xd[i] = xs->dims[i].value < 0 ? 1 : xs->dims[i].value;
  if (!convdw_sched_init(s, node, xd, in[1], in[3], prep->threads, &p))
    return het_node_error(node, HET_ERR_SHAPE,
                          "depthwise half does not fit its input");
  return convdw_run_images(s, node, &p, xd, in, NULL, NULL, NULL, NULL);
}

/* ---- hetrt.FusedConvPool: the Conv and its MaxPool, band by band ----
 * Where one image of the Conv's output is larger than the L2 cache (per
 * thread: see "bands on several threads") and Y is channels-last, the
 * pair goes band by
 * band of pooled rows through a buffer of half the L2 in the run's
 * scratch: the Conv writes the rows the band's pool windows read (rows
 * the previous band already made are moved, not recomputed), on a
 * primitive without pads above and below whose input is X's rows (the
 * bands at the image's edges read a copy of them with zero rows for the
 * pads), then the pool reads the buffer and writes the band's rows of Y.
 * The Conv's output never goes to memory and back: SqueezeNet's stem
 * (3x3 stride 2, 3 -> 64 channels, 111x111) and its MaxPool took 370-398
 * us as two nodes and 332-336 us fused, ResNet-50's at 512x512 6.9-7.6 ms
 * and 6.5-6.6 ms (one thread, `hetrt profile`).  An X not stored
 * channels-last (an image input) is first made so whole.  Elsewhere
 * (outputs that fit the L2; Winograd Convs) the Conv writes its whole
 * output into the buffer and the pool reads it, as the two nodes would. */

/* The pair's geometry on X dims xd: the Conv on the whole image, the
 * pool on the Conv's output; ob pooled rows per band (0: whole). */
typedef struct convpool_sched {
  conv_dims c;
  het_conv_geom pg;
  int64_t kh, pt; /* the Conv's dilated kernel height, pad above */
  int64_t ob;
  int runs;      /* of bands, each on a thread of its own */
  size_t floats; /* of buffer, per run */
} convpool_sched;

/* The band Conv's node, in one allocation (freed with free()): the
 * pair's attributes with no pads above and below (its input rows hold
 * them). */
typedef struct convpool_band_node {
  het_node node;
  int64_t pads[4];
  het_attr attrs[]; /* the node's, pads replaced (or added) */
} convpool_band_node;

static het_status convpool_band_node_create(const het_node *node,
                                            convpool_band_node **out) {
  size_t attrs = ((size_t)node->n_attrs + 1) * sizeof(het_attr);
  convpool_band_node *n = calloc(1, sizeof *n + attrs);
  if (!n)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN state: out of memory");
  size_t np = 0;
  const int64_t *p = het_node_attr_ints(node, "pads", &np);
  if (p && np == 4) {
    n->pads[1] = p[1];
    n->pads[3] = p[3];
  }
  int k = 0;
  for (int i = 0; i < node->n_attrs; i++)
    if (strcmp(node->attrs[i].name, "pads") != 0)
      n->attrs[k++] = node->attrs[i];
  n->attrs[k++] = (het_attr){.name = "pads", .type = HET_ATTR_INTS, .n = 4,
                             .ints = n->pads};
  n->node = *node;
  n->node.attrs = n->attrs;
  n->node.n_attrs = k;
  *out = n;
  return HET_OK;
}

/* The schedule for X dims xd (rank 4) with weights w on threads, e the
 * whole-image entry (NULL: not built); false when the shapes do not fit. */
static bool convpool_sched_init(const het_dnnl_state *s, const het_node *node,
                                const int64_t *xd, const het_tensor *w,
                                const dnnl_entry *e, int threads,
                                convpool_sched *p) {
  if (!conv_dims_init(node, xd, 4, w, &p->c))
    return false;
  int64_t in[2] = {p->c.y[2], p->c.y[3]};
  if (het_conv_geom_init(&s->pool->node, HET_GEOM_POOL, 2, in, NULL,
                         &p->pg) != HET_OK) {
    het_error_clear();
    return false;
  }
  p->kh = (p->c.w[p->c.wr - 2] - 1) * (p->c.dil[0] + 1) + 1; /* G first */
  p->pt = p->c.pl[0];
  int64_t row = p->c.y[3] * p->c.y[1], ps = p->pg.stride[0];
  int64_t pk = p->pg.kernel[0];
  int64_t rows = s->l2 / 2 / (row * (int64_t)sizeof(float));
  p->ob = rows < pk ? 1 : (rows - pk) / ps + 1;
  int64_t out = p->pg.out[0];
  bool bands = (s->nhwc_out & 1) && e && e->ok && !e->dst_r && !e->gather &&
               p->c.y[2] * row * (int64_t)sizeof(float) >
                   s->l2 * (threads > 1 ? threads : 1) &&
               p->ob < out;
  p->runs = bands ? band_runs(out, threads, &p->ob) : 1;
  if (!bands)
    p->ob = 0;
  p->floats = bands ? (size_t)(((p->ob - 1) * ps + pk) * row)
                    : (size_t)(xd[0] * p->c.y[2] * row);
  return true;
}

/* The pool half on in (rows of the Conv's output, channels-last when
 * nhwc) into out with geometry g, on ctx's loop runner. */
static het_status convpool_pool(const het_kernel_ctx *ctx, het_tensor *in,
                                het_tensor *out, const het_conv_geom *g,
                                bool nhwc) {
  het_tensor *ins[1] = {in}, *outs[1] = {out};
  het_kernel_ctx pc = *ctx;
  pc.inputs = ins;
  pc.outputs = outs;
  pc.n_inputs = pc.n_outputs = 1;
  pc.nhwc_in = pc.nhwc_out = nhwc;
  pc.state = NULL;
  return het_lk_pool2d_f32_run(&pc, g, true, false);
}

/* Pooled rows [q0, q1) of one image of the pair band by band (see
 * above): x the image's X channels-last (NULL: builds the band
 * primitives, runs nothing), y its Y, buf p->floats of buffer. */
static het_status convpool_bands(het_dnnl_state *s, const het_node *node,
                                 const convpool_sched *p, const int64_t *xd,
                                 const het_tensor *w, const het_tensor *b,
                                 int64_t q0, int64_t q1, const float *x,
                                 float *buf, float *y,
                                 const het_kernel_ctx *ctx) {
  const het_conv_geom *pg = &p->pg;
  int64_t c = xd[1], h = xd[2], wd = xd[3], m = p->c.y[1];
  int64_t oh = p->c.y[2], row = p->c.y[3] * m, st = p->c.st[0];
  int64_t ps = pg->stride[0], ppt = pg->pad_b[0], pk = pg->kernel[0];
  int64_t have0 = 0, have1 = 0; /* the Conv's rows now in buf */
  for (int64_t p0 = q0; p0 < q1; p0 += p->ob) {
    int64_t p1 = p0 + p->ob < q1 ? p0 + p->ob : q1;
    int64_t a = p0 * ps - ppt, bnd = (p1 - 1) * ps - ppt + pk;
    a = a < 0 ? 0 : a > oh ? oh : a;
    bnd = bnd > oh ? oh : bnd < a ? a : bnd;
    int64_t keep = have1 > a ? have1 - a : 0, c0 = a + keep;
    if (x && keep > 0)
      memmove(buf, buf + (a - have0) * row,
              (size_t)(keep * row) * sizeof(float));
    if (bnd > c0) { /* the Conv's rows [c0, bnd) from X rows [r0, r1) */
      int64_t r0 = c0 * st - p->pt, r1 = (bnd - 1) * st - p->pt + p->kh;
      int64_t xb[4] = {1, c, r1 - r0, wd};
      const float *src = x ? x + r0 * wd * c : NULL;
      if (x && (r0 < 0 || r1 > h)) { /* pad rows as zeros */
        float *stage = het_dnnl_stage(2, (size_t)((r1 - r0) * wd * c) *
                                             sizeof(float));
        if (!stage)
          return het_lk_fail(ctx, HET_ERR_OUT_OF_MEMORY,
                             "oneDNN staging: out of memory");
        for (int64_t r = r0; r < r1; r++) {
          float *d = stage + (r - r0) * wd * c;
          if (r < 0 || r >= h)
            memset(d, 0, (size_t)(wd * c) * sizeof(float));
          else
            memcpy(d, x + r * wd * c, (size_t)(wd * c) * sizeof(float));
        }
        src = stage;
      }
      HET_TRY(convdw_half(s->band, &s->band_node->node, node, xb, w, b, src,
                          x ? buf + (c0 - a) * row : NULL));
    }
    if (x) { /* the pool on rows [a, bnd) of the Conv's output */
      het_conv_geom gb = *pg;
      gb.in[0] = bnd - a;
      gb.out[0] = p1 - p0;
      gb.pad_b[0] = a - (p0 * ps - ppt);
      het_tensor in = {.dtype = HET_DTYPE_FLOAT32, .rank = 4,
                       .dims = {1, m, bnd - a, p->c.y[3]}, .data = buf};
      het_tensor out = {.dtype = HET_DTYPE_FLOAT32, .rank = 4,
                        .dims = {1, m, p1 - p0, pg->out[1]},
                        .data = y + p0 * pg->out[1] * m};
      HET_TRY(convpool_pool(ctx, &in, &out, &gb, true));
    }
    have0 = a;
    have1 = bnd;
  }
  return HET_OK;
}

/* FusedConvPool's state beyond the Conv half's: the pool half, the band
 * Conv's node and state. */
static het_status convpool_prepare(const het_node *node,
                                   het_dnnl_state *s) {
  s->pool = calloc(1, sizeof *s->pool);
  if (!s->pool)
    return het_error(HET_ERR_OUT_OF_MEMORY, "oneDNN state: out of memory");
  if (!het_pool_half_init(node, s->pool))
    return het_node_error(node, HET_ERR_INVALID_MODEL,
                          "FusedConvPool without its pool attributes");
  het_kernel_prep nhwc = {.nhwc_in = 1, .nhwc_out = 1,
                          .conv_algo = HET_CONV_ALGO_DIRECT};
  HET_TRY(convpool_band_node_create(node, &s->band_node));
  HET_TRY(state_create(&s->band_node->node, KIND_CONV, &nhwc, &s->band));
  s->band->share_w = true;
  return HET_OK;
}

/* Builds what the pair needs on X dims xd (4 of them) beyond the
 * whole-image entry e: the band primitives, when it runs in bands. */
static het_status convpool_build(het_dnnl_state *s, const het_node *node,
                                 const int64_t *xd, const het_tensor *w,
                                 const het_tensor *b, const dnnl_entry *e,
                                 int threads) {
  convpool_sched p;
  if (!convpool_sched_init(s, node, xd, w, e, threads, &p))
    return het_node_error(node, HET_ERR_SHAPE,
                          "the MaxPool half does not fit the Conv's output");
  het_kernel_ctx none = {.node = node};
  for (int k = 0; p.ob && k < p.runs; k++) {
    int64_t q0, q1;
    band_run_rows(p.pg.out[0], p.ob, p.runs, k, &q0, &q1);
    HET_TRY(convpool_bands(s, node, &p, xd, w, b, q0, q1, NULL, NULL, NULL,
                           &none));
  }
  return HET_OK;
}

/* The run of bands k of every image (band_runs_execute). */
typedef struct convpool_job {
  het_dnnl_state *s;
  const convpool_sched *p;
  const het_tensor *x, *w, *b;
  het_tensor *y;
  const float *xl; /* X channels-last */
} convpool_job;

static het_status convpool_run_k(void *arg, int k, float *buf,
                                 const het_kernel_ctx *ctx) {
  const convpool_job *j = arg;
  const het_tensor *x = j->x;
  int64_t xi = x->dims[1] * x->dims[2] * x->dims[3];
  int64_t yi = j->y->dims[1] * j->y->dims[2] * j->y->dims[3], q0, q1;
  band_run_rows(j->p->pg.out[0], j->p->ob, j->p->runs, k, &q0, &q1);
  for (int64_t i = 0; i < x->dims[0]; i++)
    HET_TRY(convpool_bands(j->s, ctx->node, j->p, x->dims, j->w, j->b, q0, q1,
                           j->xl + i * xi, buf, (float *)j->y->data + i * yi,
                           ctx));
  return HET_OK;
}

/* Scratch of FusedConvPool: the Conv's whole output (bands take less). */
static size_t convpool_scratch(const het_kernel_ctx *ctx) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  conv_dims c;
  if (!x || !w || x->rank != 4 || !conv_dims_init(ctx->node, x->dims, 4, w, &c))
    return 0; /* the run reports it */
  return ((size_t)(c.y[0] * c.y[1] * c.y[2] * c.y[3]) * sizeof(float) + 63) &
         ~(size_t)63;
}

/* FusedConvPool on its states: band by band, or the Conv whole into a
 * buffer from the run's scratch and the pool from it. */
static het_status convpool_run(het_kernel_ctx *ctx, het_dnnl_state *s,
                               bool *done) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  het_tensor *y = ctx->outputs[0];
  bool nhwc = (s->nhwc_in | s->nhwc_out) != 0;
  *done = false;
  if (ctx->nhwc_in != s->nhwc_in || ctx->nhwc_out != s->nhwc_out)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "layout bits differ from those prepared for");
  if (x->dtype != HET_DTYPE_FLOAT32 || x->rank != 4 ||
      het_tensor_count(y) == 0)
    return nhwc ? het_lk_fail(ctx, HET_ERR_INTERNAL,
                              "NHWC FusedConvPool without a oneDNN path")
                : HET_OK;
  const dnnl_entry *e;
  convpool_sched p;
  HET_TRY(entry_get(s, ctx->node, x->dims, 4, w, b != NULL, &e));
  if (!convpool_sched_init(s, ctx->node, x->dims, w, e, ctx->threads, &p))
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "the MaxPool half does not fit the Conv's output");
  if (y->rank != 4 || y->dims[0] != x->dims[0] || y->dims[1] != p.c.y[1] ||
      y->dims[2] != p.pg.out[0] || y->dims[3] != p.pg.out[1])
    return het_lk_fail(ctx, HET_ERR_SHAPE, "Y is not the pooled Conv output");
  float *buf = NULL, *xl = x->data;
  HET_TRY(het_kernel_take(ctx, (size_t)p.runs * p.floats * sizeof(float),
                          (void **)&buf));
  het_status st = HET_OK;
  if (p.ob && !(s->nhwc_in & 1) && e->src_r) { /* X channels-last first */
    xl = het_dnnl_stage(0, dnnl_memory_desc_get_size(&e->p.src_md));
    if (!xl || !stage_src(e, x->data, xl))
      st = het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN reorder failed");
  }
  if (p.ob && st == HET_OK) {
    convpool_job j = {.s = s, .p = &p, .x = x, .w = w, .b = b, .y = y,
                      .xl = xl};
    st = band_runs_execute(ctx, p.runs, buf, p.floats, convpool_run_k, &j);
  } else if (!p.ob) {
    st = convdw_half(s, ctx->node, ctx->node, x->dims, w, b, x->data, buf);
    het_tensor mid = {.dtype = HET_DTYPE_FLOAT32, .rank = 4,
                      .dims = {x->dims[0], p.c.y[1], p.c.y[2], p.c.y[3]},
                      .data = buf};
    if (st == HET_OK)
      st = convpool_pool(ctx, &mid, y, &p.pg, s->nhwc_out & 1);
  }
  het_kernel_give(ctx, buf);
  *done = st == HET_OK;
  return st;
}

/* ---- hetrt.FusedConv: the residual band by band ----
 * A 1x1 Conv with unit strides and no pads maps X's image rows to Y's
 * one to one.  Where one image of its Y is larger than the L2 cache, X
 * and Y are channels-last and the node runs on one thread, the residual
 * comes from memory, and oneDNN 2.6's brgconv_1x1 stalls on its sum
 * post-op's reads: ResNet-50's 64 -> 256 channel 56x56 Conv took 991 us
 * with a cold 3.2 MB residual against 646 us without the sum (a program
 * of its own, caches flushed by a 64 MiB walk before each call).  So the
 * node runs on a primitive for a quarter of the L2's worth of Y rows,
 * band after band, and each band's residual is first read (or copied
 * into Y) in one sequential pass that the hardware prefetchers stream, so
 * the primitive finds it in L2: the same Conv took 645 us cold, 524
 * against 547 hot.  Inside ResNet-50 at 224x224 the three 56x56 ones
 * gained about 50 us each (the residual is partly cached there), at
 * 512x512 the whole model about 5%.  With two threads the passes cost
 * more than they save (oneDNN splits each band; 623 against 451 us
 * whole), so only one thread bands. */

/* Rows per residual band of FusedConv on X dims xd (rank xr) with
 * weights w on threads; 0: the node runs whole. */
static int64_t zband_rows(const het_dnnl_state *s, const het_node *node,
                          const int64_t *xd, int xr, const het_tensor *w,
                          int threads) {
  conv_dims c;
  if (!s->has_z || s->f16 || s->bf16 || threads > 1 || xr != 4 ||
      !(s->nhwc_in & s->nhwc_out & 1) || !conv_dims_init(node, xd, xr, w, &c) ||
      c.w[c.wr - 2] != 1 || c.w[c.wr - 1] != 1)
    return 0;
  for (int i = 0; i < 2; i++)
    if (c.st[i] != 1 || c.pl[i] != 0 || c.pr[i] != 0)
      return 0;
  int64_t row = xd[3] * c.y[1] * (int64_t)sizeof(float);
  int64_t rows = s->l2 / 4 / row;
  if (row * xd[2] <= s->l2 || rows >= xd[2])
    return 0;
  if (rows < 1)
    return 1;
  for (int64_t k = rows; 2 * k >= rows; k--) /* every band alike if it can */
    if (xd[2] % k == 0)
      return k;
  return rows;
}

/* The entries for bands of rb rows and of the rows left over (eb[1],
 * NULL when rb divides H) of X dims xd; eb[0] NULL when the cache has no
 * room for them or oneDNN runs them otherwise than in place. */
static het_status zband_entries(het_dnnl_state *s, const het_node *node,
                                const int64_t *xd, const het_tensor *w,
                                bool bias, int64_t rb,
                                const dnnl_entry *eb[2]) {
  int64_t left = xd[2] % rb;
  eb[0] = eb[1] = NULL;
  for (int i = 0; i < (left ? 2 : 1); i++) {
    int64_t bd[4] = {1, xd[1], i ? left : rb, xd[3]};
    HET_TRY(entry_get(s, node, bd, 4, w, bias, &eb[i]));
    if (!eb[i] || !eb[i]->ok || eb[i]->src_r || eb[i]->dst_r ||
        eb[i]->gather || eb[i]->z_r) {
      eb[0] = eb[1] = NULL;
      return HET_OK;
    }
  }
  return HET_OK;
}

/* Reads one byte of each cache line of [p, p + n): a sequential pass,
 * which leaves the bytes in the cache. */
static void touch_lines(const void *p, size_t n) {
  const volatile unsigned char *c = p;
  for (size_t i = 0; i < n; i += 64)
    (void)c[i];
}

/* FusedConv on x (NHWC) with residual z into y, rb rows per band on
 * eb (zband_entries). */
static bool zband_execute(const dnnl_entry *const eb[2], int64_t rb,
                          const het_tensor *x, void *b, const het_tensor *z,
                          het_tensor *y) {
  int64_t h = x->dims[2], xrow = x->dims[3] * x->dims[1];
  int64_t yrow = y->dims[3] * y->dims[1];
  for (int64_t i = 0; i < x->dims[0]; i++)
    for (int64_t r = 0; r < h; r += rb) {
      int64_t k = rb < h - r ? rb : h - r;
      float *yb = (float *)y->data + (i * h + r) * yrow;
      const float *zb = (const float *)z->data + (i * h + r) * yrow;
      size_t bytes = (size_t)(k * yrow) * sizeof(float);
      if (zb != yb)
        memcpy(yb, zb, bytes);
      else
        touch_lines(yb, bytes);
      if (!het_dnnl_prim_execute(&eb[k != rb]->p,
                                 (float *)x->data + (i * h + r) * xrow, b, yb))
        return false;
    }
  return true;
}

/* Shared prepare: primitives built now when X's shape is static.  With
 * NHWC bits the entry must build (HET_ERR_UNSUPPORTED otherwise); with a
 * symbolic batch it is built for batch 1 as a probe, and per batch size
 * at run time (an error then, never a fallback). */
static het_status dnnl_prepare(const het_graph *graph, const het_node *node,
                               dnnl_kind kind, const het_kernel_prep *prep,
                               void **state) {
  *state = NULL;
  bool nhwc = (prep->nhwc_in | prep->nhwc_out) != 0;
  bool f16 = false;
  if (!dnnl_takes(graph, node, kind)) {
    f16 = !nhwc && !is_convdw(node) && !is_convpool(node) &&
          dnnl_takes_f16(graph, node);
    if (!f16)
      return nhwc ? het_error(HET_ERR_UNSUPPORTED,
                              "node '%s': no oneDNN path for NHWC", node->name)
                  : HET_OK;
  }
  het_dnnl_state *s = NULL;
  HET_TRY(state_create(node, kind, prep, &s));
  *state = s;
  if (kind == KIND_CONV && is_convdw(node)) {
    het_status st = convdw_prepare(graph, node, prep, s);
    if (st != HET_OK) {
      het_dnnl_state_destroy(s);
      *state = NULL;
    }
    return st;
  }
  bool pool = kind == KIND_CONV && is_convpool(node);
  if (pool) {
    het_status st = convpool_prepare(node, s);
    if (st != HET_OK) {
      het_dnnl_state_destroy(s);
      *state = NULL;
      return st;
    }
  }
  const het_tensor *w = node_init(graph, node, 1);
  if (f16) {
    const het_tensor *b = het_node_input(node, 2) >= 0
                              ? node_init(graph, node, 2)
                              : NULL;
    s->f16 = true;
    het_status st = f16_widen(w, &s->w32);
    if (st == HET_OK && b)
      st = f16_widen(b, &s->b32);
    if (st != HET_OK) {
      het_dnnl_state_destroy(s);
      *state = NULL;
      return st;
    }
    w = s->w32;
  }
  const het_shape *xs = &graph->values[het_node_input(node, 0)].shape;
  const dnnl_entry *e = NULL;
  bool batch_only = xs->rank > 1 && het_shape_item_count(xs) >= 0;
  if (batch_only && (het_shape_is_concrete(xs) || nhwc)) {
    int64_t dims[HET_MAX_RANK];
    for (int i = 0; i < xs->rank; i++)
      dims[i] = xs->dims[i].value < 0 ? 1 : xs->dims[i].value;
    bool bias = het_node_input(node, 2) >= 0 && kind == KIND_CONV;
    het_status st = entry_get(s, node, dims, xs->rank, w, bias, &e);
    int64_t rb = zband_rows(s, node, dims, xs->rank, w, prep->threads);
    const dnnl_entry *eb[2];
    if (st == HET_OK && rb > 0)
      st = zband_entries(s, node, dims, w, bias, rb, eb);
    if (st == HET_OK && pool && xs->rank == 4)
      st = convpool_build(s, node, dims, w,
                          bias ? node_init(graph, node, 2) : NULL, e,
                          prep->threads);
    if (st != HET_OK) {
      het_dnnl_state_destroy(s);
      *state = NULL;
      return st;
    }
  }
  if (nhwc && (!e || !e->ok)) {
    het_dnnl_state_destroy(s);
    *state = NULL;
    return het_error(HET_ERR_UNSUPPORTED,
                     "node '%s': oneDNN refused the NHWC primitive",
                     node->name);
  }
  return HET_OK;
}

/* Plain layouts, direct convolution: constant folding and providers
 * other than the CPU one. */
static const het_kernel_prep plain_direct = {.conv_algo = HET_CONV_ALGO_DIRECT};

het_status het_dnnl_conv_prepare(const het_graph *graph, const het_node *node,
                                 void **state) {
  return dnnl_prepare(graph, node, KIND_CONV, &plain_direct, state);
}

het_status het_dnnl_conv_prepare_with(const het_graph *graph,
                                      const het_node *node,
                                      const het_kernel_prep *prep, void **state) {
  return dnnl_prepare(graph, node, KIND_CONV, prep, state);
}

const char *het_dnnl_conv_impl(const void *state) {
  const het_dnnl_state *s = state;
  const_dnnl_primitive_desc_t pd = NULL;
  const char *impl = NULL;
  if (!s || s->n == 0 || !s->entries[0].ok ||
      dnnl_primitive_get_primitive_desc(s->entries[0].p.prim, &pd) !=
          dnnl_success ||
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
          dnnl_success)
    return NULL;
  return impl;
}

int het_dnnl_conv_entries(const void *state, int part) {
  const het_dnnl_state *s = state;
  const het_dnnl_state *d = !s        ? NULL
                            : part == 0 ? s
                            : part == 1 ? (s->dw ? s->dw : s->band)
                                        : s->dw_full;
  return d ? d->n : 0;
}

bool het_dnnl_conv_gathered(const void *state) {
  const het_dnnl_state *s = state;
  return s && s->n > 0 && s->entries[0].ok && s->entries[0].gather;
}

int het_dnnl_conv_candidates(const void *state) {
  const het_dnnl_state *s = state;
  return s && s->n > 0 && s->entries[0].ok ? s->entries[0].n_cand : 0;
}

bool het_dnnl_conv_takes(const het_graph *graph, const het_node *node) {
  return dnnl_takes(graph, node, KIND_CONV);
}

het_status het_dnnl_matmul_prepare(const het_graph *graph, const het_node *node,
                                   void **state) {
  return dnnl_prepare(graph, node, KIND_MATMUL, &plain_direct, state);
}

het_status het_dnnl_matmul_prepare_with(const het_graph *graph,
                                        const het_node *node,
                                        const het_kernel_prep *prep,
                                        void **state) {
  het_kernel_prep p = {.bf16 = prep && prep->bf16};
  return dnnl_prepare(graph, node, KIND_MATMUL, &p, state);
}

void het_dnnl_state_weights(const void *state, het_kernel_weight_fn fn,
                            void *ctx) {
  het_dnnl_state *s = (het_dnnl_state *)state;
  if (!s)
    return;
  pthread_mutex_lock(&s->mu); /* runs may add entries meanwhile */
  for (int i = 0; i < s->n; i++)
    if (s->entries[i].ok && !s->entries[i].w_shared)
      het_dnnl_prim_weights(&s->entries[i].p, fn, ctx);
  pthread_mutex_unlock(&s->mu);
  het_dnnl_state_weights(s->dw, fn, ctx);
  het_dnnl_state_weights(s->dw_full, fn, ctx);
  het_dnnl_state_weights(s->band, fn, ctx);
}

void het_dnnl_state_destroy(void *state) {
  het_dnnl_state *s = state;
  if (!s)
    return;
  for (int i = 0; i < s->n; i++)
    entry_clear(&s->entries[i]);
  het_dnnl_state_destroy(s->dw);
  het_dnnl_state_destroy(s->dw_full);
  het_dnnl_state_destroy(s->band);
  free(s->band_node);
  free(s->pool);
  free(s->dw_node);
  free(s->dw_full_node);
  het_tensor_destroy(s->w32);
  het_tensor_destroy(s->b32);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* The residual z (user Y layout) into ys (the primitive's dst) for the
 * sum post-op. */
static bool stage_residual(const dnnl_entry *e, void *z, void *ys) {
  if (!z || z == ys)
    return true;
  if (e->z_r)
    return het_dnnl_reorder_run(e->z_r, &e->dst_user, z, &e->p.dst_md, ys);
  memcpy(ys, z, dnnl_memory_desc_get_size(&e->p.dst_md));
  return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The first pixels of rgb_to_nhwc, 16 at a time; how many it did. */
__attribute__((target("avx512f"))) static int64_t
rgb_to_nhwc_avx512(const float *x, float *y, int64_t hw) {
  /* Output vector k, lane j is pixel (16k + j) / 3, channel (16k + j) % 3:
   * lo picks R (0-15) or G (16-31), then hi keeps it (0-15) or picks B. */
  int32_t lo[3][16], hi[3][16];
  for (int k = 0; k < 3; k++)
    for (int j = 0; j < 16; j++) {
      int f = 16 * k + j, px = f / 3, ch = f % 3;
      lo[k][j] = ch == 1 ? 16 + px : px;
      hi[k][j] = ch == 2 ? 16 + px : j;
    }
  __m512i l0 = _mm512_loadu_si512(lo[0]), l1 = _mm512_loadu_si512(lo[1]);
  __m512i l2 = _mm512_loadu_si512(lo[2]), h0 = _mm512_loadu_si512(hi[0]);
  __m512i h1 = _mm512_loadu_si512(hi[1]), h2 = _mm512_loadu_si512(hi[2]);
  int64_t p = 0;
  for (; p + 16 <= hw; p += 16, y += 48) {
    __m512 r = _mm512_loadu_ps(x + p), g = _mm512_loadu_ps(x + hw + p);
    __m512 b = _mm512_loadu_ps(x + 2 * hw + p);
    _mm512_storeu_ps(y, _mm512_permutex2var_ps(
                            _mm512_permutex2var_ps(r, l0, g), h0, b));
    _mm512_storeu_ps(y + 16, _mm512_permutex2var_ps(
                                 _mm512_permutex2var_ps(r, l1, g), h1, b));
    _mm512_storeu_ps(y + 32, _mm512_permutex2var_ps(
                                 _mm512_permutex2var_ps(r, l2, g), h2, b));
  }
  return p;
}
#endif

/* 3-channel NCHW x (e->src_user's dims) → NHWC y: oneDNN 2.6's reorder
 * took 44 µs for a 3x224x224 image here, this 10 µs (AVX-512). */
static void rgb_to_nhwc(const dnnl_entry *e, const float *x, float *y) {
  const dnnl_dims_t *d = &e->src_user.dims;
  int64_t hw = (*d)[2] * (*d)[3];
  for (int64_t b = 0; b < (*d)[0]; b++, x += 3 * hw, y += 3 * hw) {
    int64_t p = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f"))
      p = rgb_to_nhwc_avx512(x, y, hw);
#endif
    for (; p < hw; p++) {
      y[3 * p] = x[p];
      y[3 * p + 1] = x[hw + p];
      y[3 * p + 2] = x[2 * hw + p];
    }
  }
}

/* x (user layout) into xs (the primitive's src) when their layouts
 * differ: rgb_to_nhwc for an image input, else oneDNN's reorder. */
static bool stage_src(const dnnl_entry *e, void *x, void *xs) {
  if (!e->src_r)
    return true;
  if (e->rgb) {
    rgb_to_nhwc(e, x, xs);
    return true;
  }
  return het_dnnl_reorder_run(e->src_r, &e->src_user, x, &e->p.src_md, xs);
}

/* Executes e on user-layout x/b/y (z: the residual, or NULL), through
 * this thread's staging buffers in the primitive's layouts where those
 * differ. */
static bool entry_execute(const dnnl_entry *e, void *x, void *b, void *y,
                          void *z) {
  if (e->gather) {
    void *xg = het_dnnl_stage(2, dnnl_memory_desc_get_size(&e->src_user));
    if (!xg)
      return false;
    het_lk_gather_strided(x, xg, e->gx[0], e->gx[2], e->gx[3], e->gs[0],
                          e->gs[1], (size_t)e->gx[1] * sizeof(float));
    x = xg;
  }
  void *xs =
      e->src_r ? het_dnnl_stage(0, dnnl_memory_desc_get_size(&e->p.src_md))
               : x;
  void *ys =
      e->dst_r ? het_dnnl_stage(1, dnnl_memory_desc_get_size(&e->p.dst_md))
               : y;
  bool ok = xs && ys && stage_src(e, x, xs) && stage_residual(e, z, ys) &&
            het_dnnl_prim_execute(&e->p, xs, b, ys) &&
            (!e->dst_r || het_dnnl_reorder_run(e->dst_r, &e->p.dst_md, ys,
                                               &e->dst_user, y));
  return ok;
}

/* A Conv whose shape found the cache full (more than DNNL_CACHE input
 * shapes): builds, runs and drops a primitive for this call alone (slow,
 * but an NHWC node has no other path); plain nodes fall back as usual. */
static het_status conv_run_uncached(het_kernel_ctx *ctx,
                                    const het_dnnl_state *s, bool *done) {
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const het_tensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  het_tensor *y = ctx->outputs[0];
  dnnl_entry e;
  bool oom;
  bool built = entry_build_once(s, ctx->node, x->dims, x->rank, w, b != NULL,
                                &e, &oom) &&
               dnnl_memory_desc_get_size(&e.dst_user) == y->nbytes;
  bool ok = built && entry_execute(&e, x->data, b ? b->data : NULL, y->data,
                                   z ? z->data : NULL);
  entry_clear(&e);
  if (oom)
    return build_oom(ctx->node);
  if (!built)
    return s->nhwc_in | s->nhwc_out
               ? het_lk_fail(ctx, HET_ERR_INTERNAL,
                             "NHWC Conv without a oneDNN primitive")
               : HET_OK;
  if (!ok)
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
  *done = true;
  return HET_OK;
}

/* Bytes of float32 staging a float16 node takes from the run's scratch:
 * X, Y and the residual, 64-byte aligned each. */
static size_t f16_staging(const het_kernel_ctx *ctx) {
  size_t b = 0;
  const het_tensor *t[3] = {ctx->inputs[0], ctx->outputs[0],
                            ctx->n_inputs > 3 ? ctx->inputs[3] : NULL};
  for (int i = 0; i < 3; i++)
    if (t[i])
      b += ((size_t)het_tensor_count(t[i]) * sizeof(float) + 63) & ~(size_t)63;
  return b;
}

static size_t convdw_scratch(const het_kernel_ctx *ctx);

size_t het_dnnl_scratch(const het_kernel_ctx *ctx) {
  const het_dnnl_state *s = ctx->state;
  if (s && s->dw)
    return convdw_scratch(ctx);
  if (s && s->pool)
    return convpool_scratch(ctx);
  return s && s->f16 ? f16_staging(ctx) : 0;
}

/* A float16 Conv or MatMul on its float32 entry, converting at the
 * edges. */
static het_status dnnl_run_f16(het_kernel_ctx *ctx, het_dnnl_state *s,
                               bool *done) {
  const het_tensor *x = ctx->inputs[0];
  const het_tensor *z = ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  het_tensor *y = ctx->outputs[0];
  if (x->dtype != HET_DTYPE_FLOAT16 || y->dtype != HET_DTYPE_FLOAT16 ||
      (z && z->dtype != HET_DTYPE_FLOAT16) || het_tensor_count(y) == 0)
    return HET_OK; /* the generic path */
  const dnnl_entry *e;
  HET_TRY(entry_get(s, ctx->node, x->dims, x->rank, s->w32, s->b32 != NULL,
                    &e));
  if (!e || !e->ok ||
      dnnl_memory_desc_get_size(e->dst_user.ndims ? &e->dst_user
                                                  : &e->p.dst_md) !=
          (size_t)het_tensor_count(y) * sizeof(float))
    return HET_OK;
  float *x32 = NULL, *y32 = NULL, *z32 = NULL;
  HET_TRY(het_kernel_take(ctx, (size_t)het_tensor_count(x) * sizeof(float),
                          (void **)&x32));
  het_status st = het_kernel_take(
      ctx, (size_t)het_tensor_count(y) * sizeof(float), (void **)&y32);
  if (st == HET_OK && z)
    st = het_kernel_take(ctx, (size_t)het_tensor_count(z) * sizeof(float),
                         (void **)&z32);
  if (st == HET_OK) {
    het_half_to_float(x->data, x32, het_tensor_count(x));
    if (z)
      het_half_to_float(z->data, z32, het_tensor_count(z));
    if (!entry_execute(e, x32, s->b32 ? s->b32->data : NULL, y32, z32))
      st = het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
    else
      het_float_to_half(y32, y->data, het_tensor_count(y));
  }
  het_kernel_give(ctx, z32);
  het_kernel_give(ctx, y32);
  het_kernel_give(ctx, x32);
  *done = st == HET_OK;
  return st;
}

/* FusedConvDw's schedule for ctx's shapes; false when they do not fit. */
static bool convdw_ctx_sched(const het_kernel_ctx *ctx, convdw_sched *p) {
  const het_tensor *x = ctx->inputs[0];
  return x && x->rank == 4 && ctx->inputs[1] && ctx->n_inputs > 3 &&
         ctx->inputs[3] &&
         convdw_sched_init(ctx->state, ctx->node, x->dims, ctx->inputs[1],
                           ctx->inputs[3], ctx->threads, p);
}

static size_t convdw_scratch(const het_kernel_ctx *ctx) {
  convdw_sched p;
  return convdw_ctx_sched(ctx, &p)
             ? ((size_t)p.runs * p.floats * sizeof(float) + 63) & ~(size_t)63
             : 0; /* the run reports it */
}

/* FusedConvDw on its states, through a buffer from the run's scratch. */
static het_status convdw_run(het_kernel_ctx *ctx, het_dnnl_state *s,
                             bool *done) {
  const het_tensor *x = ctx->inputs[0];
  het_tensor *y = ctx->outputs[0];
  const het_tensor *in[5] = {x, ctx->inputs[1], ctx->inputs[2],
                             ctx->n_inputs > 3 ? ctx->inputs[3] : NULL,
                             ctx->n_inputs > 4 ? ctx->inputs[4] : NULL};
  if (ctx->nhwc_in != s->nhwc_in || ctx->nhwc_out != s->nhwc_out)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "layout bits differ from those prepared for");
  if (x->dtype != HET_DTYPE_FLOAT32 || x->rank != 4 || !in[3])
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "FusedConvDw without float32 rank-4 X and weights");
  *done = true;
  if (het_tensor_count(y) == 0)
    return HET_OK;
  convdw_sched p;
  if (!convdw_ctx_sched(ctx, &p))
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "depthwise half does not fit its input");
  float *buf = NULL;
  HET_TRY(het_kernel_take(ctx, (size_t)p.runs * p.floats * sizeof(float),
                          (void **)&buf));
  het_status st = convdw_run_images(s, ctx->node, &p, x->dims, in, x->data,
                                    buf, y->data, ctx);
  het_kernel_give(ctx, buf);
  return st;
}

static het_status dnnl_run(het_kernel_ctx *ctx, bool *done) {
  het_dnnl_state *s = ctx->state;
  if (s->dw)
    return convdw_run(ctx, s, done);
  if (s->pool)
    return convpool_run(ctx, s, done);
  if (s->f16) {
    *done = false;
    return dnnl_run_f16(ctx, s, done);
  }
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1];
  const het_tensor *b =
      s->kind == KIND_CONV && ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  const het_tensor *z =
      s->kind == KIND_CONV && ctx->n_inputs > 3 ? ctx->inputs[3] : NULL;
  het_tensor *y = ctx->outputs[0];
  bool nhwc = (s->nhwc_in | s->nhwc_out) != 0;
  *done = false;
  if (ctx->nhwc_in != s->nhwc_in || ctx->nhwc_out != s->nhwc_out)
    return het_lk_fail(ctx, HET_ERR_INTERNAL,
                       "layout bits differ from those prepared for");
  if (x->dtype != HET_DTYPE_FLOAT32 || w->dtype != HET_DTYPE_FLOAT32 ||
      het_tensor_count(y) == 0)
    return nhwc ? het_lk_fail(ctx, HET_ERR_INTERNAL,
                              "NHWC Conv without a oneDNN primitive")
                : HET_OK;
  int64_t rb = zband_rows(s, ctx->node, x->dims, x->rank, w, ctx->threads);
  const dnnl_entry *e, *eb[2] = {NULL, NULL};
  if (rb > 0)
    HET_TRY(zband_entries(s, ctx->node, x->dims, w, b != NULL, rb, eb));
  if (eb[0] && y->dims[2] == x->dims[2] && z) {
    if (!zband_execute(eb, rb, x, b ? b->data : NULL, z, y))
      return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
    *done = true;
    return HET_OK;
  }
  HET_TRY(entry_get(s, ctx->node, x->dims, x->rank, w, b != NULL, &e));
  if (!e && s->kind == KIND_CONV) /* cache full: a primitive for this call */
    return conv_run_uncached(ctx, s, done);
  if (!e || !e->ok ||
      dnnl_memory_desc_get_size(e->dst_user.ndims ? &e->dst_user
                                                  : &e->p.dst_md) != y->nbytes)
    return nhwc ? het_lk_fail(ctx, HET_ERR_INTERNAL,
                              "NHWC Conv without a oneDNN primitive")
                : HET_OK;
  if (!entry_execute(e, x->data, b ? b->data : NULL, y->data,
                     z ? z->data : NULL))
    return het_lk_fail(ctx, HET_ERR_KERNEL, "oneDNN primitive failed");
  *done = true;
  return HET_OK;
}

het_status het_dnnl_conv_run(het_kernel_ctx *ctx, bool *done) {
  return dnnl_run(ctx, done);
}

het_status het_dnnl_matmul_run(het_kernel_ctx *ctx, bool *done) {
  return dnnl_run(ctx, done);
}
