/* linalg_lstm_f32.c — the float32 path of LSTM for the common form:
 * default activations (Sigmoid, Tanh, Tanh), no clip, no peepholes, no
 * input_forget, layout 0, every sequence the full length; any direction,
 * batch and optional initial state.  X·W for all steps is one sgemm
 * (oneDNN's where built: OpenBLAS's may be held to its AVX2 kernels); each
 * step adds h·R as broadcast FMAs over R transposed (4H lanes, so the
 * compiler vectorises it; AVX-512 clone) and applies the gates with the
 * branch-free float math of simd.h; where H is a multiple of 32, R is
 * stored by blocks of 32 units and each block's gates are applied as soon
 * as its sums are done (lstm_step_blocked).  R transposed and the two biases
 * summed are packed once at prepare when they are initializers
 * (het_lk_lstm_prepare), else per run.  Working memory comes from the
 * run's scratch (het_lk_lstm_scratch sizes it).  Other LSTMs take the float64
 * path of linalg_rnn.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/linalg_kern.h"
#include "kernels/sgemm.h"
#include "kernels/simd.h"

typedef struct lstm_dims {
  int nd;
  bool reverse;
  int64_t seq, batch, in, hid;
} lstm_dims;

static const het_tensor *lstm_in(const het_kernel_ctx *ctx, int i) {
  const het_tensor *t = i < ctx->n_inputs ? ctx->inputs[i] : NULL;
  return t && het_tensor_count(t) > 0 ? t : NULL;
}

/* Whether ctx's LSTM is of the form this path takes; its dims if so. */
static bool lstm_f32_form(const het_kernel_ctx *ctx, lstm_dims *d) {
  const het_node *n = ctx->node;
  if (ctx->n_inputs < 3 || !ctx->inputs[0] || !ctx->inputs[1] ||
      !ctx->inputs[2])
    return false;
  const het_tensor *x = ctx->inputs[0], *w = ctx->inputs[1],
                   *r = ctx->inputs[2];
  for (int i = 0; i < ctx->n_inputs && i < 8; i++) {
    const het_tensor *t = ctx->inputs[i];
    if (t && i != 4 && t->dtype != HET_DTYPE_FLOAT32)
      return false;
  }
  for (int o = 0; o < ctx->n_outputs; o++)
    if (ctx->outputs[o] && ctx->outputs[o]->dtype != HET_DTYPE_FLOAT32)
      return false;
  const char *dir = het_node_attr_string(n, "direction");
  if (lstm_in(ctx, 7) || het_node_find_attr(n, "activations") ||
      het_node_find_attr(n, "activation_alpha") ||
      het_node_find_attr(n, "activation_beta") ||
      het_node_attr_float(n, "clip", 0.0f) > 0 ||
      het_node_attr_int(n, "input_forget", 0) != 0 ||
      (ctx->opset >= 14 && het_node_attr_int(n, "layout", 0) != 0) ||
      x->rank != 3 || w->rank != 3 || r->rank != 3)
    return false;
  d->nd = dir && strcmp(dir, "bidirectional") == 0 ? 2 : 1;
  d->reverse = dir && strcmp(dir, "reverse") == 0;
  d->seq = x->dims[0];
  d->batch = x->dims[1];
  d->in = x->dims[2];
  d->hid = r->dims[2];
  if (w->dims[0] != d->nd || r->dims[0] != d->nd || w->dims[2] != d->in ||
      w->dims[1] != 4 * d->hid || r->dims[1] != 4 * d->hid || d->hid <= 0)
    return false;
  const het_tensor *b = lstm_in(ctx, 3), *sl = lstm_in(ctx, 4);
  if (b && (b->rank != 2 || b->dims[0] != d->nd || b->dims[1] != 8 * d->hid))
    return false;
  for (int i = 5; i <= 6; i++) {
    const het_tensor *s = lstm_in(ctx, i);
    if (s && (s->rank != 3 || s->dims[0] != d->nd || s->dims[1] != d->batch ||
              s->dims[2] != d->hid))
      return false;
  }
  for (int64_t k = 0; sl && sl->data && k < het_tensor_count(sl); k++)
    if (het_dtype_load_i64(sl->dtype, sl->data, k) != d->seq)
      return false;
  return !sl || sl->data; /* unknown lengths: the general path */
}

/* R transposed per direction (nd x H x 4H) and W's and R's biases summed
 * (nd x 4H, or NULL when B is not an initializer). */
typedef struct lstm_packed {
  int64_t nd, hid;
  float *rt, *bias;
} lstm_packed;

/* Units per block of the blocked layout (LSTM_BLOCK | H): a block's
 * four gates are 4 x 32 = 128 sums, eight vectors of 16. */
#define LSTM_BLOCK 32

/* R (4H x H, gates i, o, f, c) transposed for h·R.  H a multiple of
 * LSTM_BLOCK: by unit block, rt[((blk * H + k) * 4 + q) * 32 + l] =
 * R[q * H + blk * 32 + l][k], so that one block's four gates are summed
 * and applied before the next block's part of R is read (lstm_step_blocked).
 * Otherwise plain: rt[k * 4H + j] = R[j][k]. */
static void lstm_pack_r(const float *r, int64_t hid, float *rt) {
  int64_t gh = 4 * hid;
  if (hid % LSTM_BLOCK == 0) {
    for (int64_t blk = 0; blk < hid / LSTM_BLOCK; blk++)
      for (int64_t k = 0; k < hid; k++)
        for (int64_t q = 0; q < 4; q++)
          for (int64_t l = 0; l < LSTM_BLOCK; l++)
            *rt++ = r[(q * hid + blk * LSTM_BLOCK + l) * hid + k];
    return;
  }
  for (int64_t j = 0; j < gh; j++)
    for (int64_t k = 0; k < hid; k++)
      rt[k * gh + j] = r[j * hid + k];
}

static void lstm_sum_bias(const float *b, int64_t gh, float *out) {
  for (int64_t j = 0; j < gh; j++)
    out[j] = b[j] + b[gh + j];
}

void het_lk_lstm_destroy(void *state) {
  lstm_packed *p = state;
  if (!p)
    return;
  free(p->rt);
  free(p->bias);
  free(p);
}

het_status het_lk_lstm_prepare(const het_graph *graph, const het_node *node,
                               void **state) {
  *state = NULL;
  int rv = het_node_input(node, 2), bv = het_node_input(node, 3);
  const het_tensor *r = rv >= 0 ? graph->values[rv].initializer : NULL;
  const het_tensor *b = bv >= 0 ? graph->values[bv].initializer : NULL;
  if (!r || r->dtype != HET_DTYPE_FLOAT32 || r->rank != 3 ||
      r->dims[1] != 4 * r->dims[2] || r->dims[2] <= 0)
    return HET_OK; /* packed per run, or the general path */
  int64_t nd = r->dims[0], hid = r->dims[2], gh = 4 * hid;
  bool use_b = b && b->dtype == HET_DTYPE_FLOAT32 && b->rank == 2 &&
               b->dims[0] == nd && b->dims[1] == 2 * gh;
  lstm_packed *p = calloc(1, sizeof *p);
  if (p) {
    p->nd = nd;
    p->hid = hid;
    p->rt = malloc(sizeof(float) * (size_t)(nd * hid * gh));
    p->bias = use_b ? malloc(sizeof(float) * (size_t)(nd * gh)) : NULL;
  }
  if (!p || !p->rt || (use_b && !p->bias)) {
    het_lk_lstm_destroy(p);
    return het_error(HET_ERR_OUT_OF_MEMORY, "node '%s': out of memory",
                     node->name);
  }
  for (int64_t d = 0; d < nd; d++) {
    lstm_pack_r((const float *)r->data + d * gh * hid, hid,
                p->rt + d * hid * gh);
    if (use_b)
      lstm_sum_bias((const float *)b->data + d * 2 * gh, gh, p->bias + d * gh);
  }
  *state = p;
  return HET_OK;
}

static size_t lstm_f32_floats(const lstm_dims *d) {
  int64_t gh = 4 * d->hid;
  return (size_t)(d->seq * d->batch * gh + d->hid * gh + d->batch * gh +
                  3 * d->batch * d->hid);
}

size_t het_lk_lstm_scratch(const het_kernel_ctx *ctx) {
  lstm_dims d;
  return lstm_f32_form(ctx, &d) ? lstm_f32_floats(&d) * sizeof(float) + 256
                                : 0;
}

/* 16 floats as one value (GCC vector extension): a zmm register in the
 * AVX-512 clone. */
typedef float lstm_v16 __attribute__((vector_size(64)));

/* One step for one batch row: g (4H, starting as X·W + biases) += h·R,
 * then the gates (ONNX order i, o, f, c) update c and h in place.  h·R
 * reads all of R (4H x H) once a step: 128 gate sums at a time stay in
 * registers over all of h (eight independent chains), contracted into
 * FMAs where the clone has them, so results differ from the baseline
 * clone's in the last bits. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif
HET_SIMD_CLONES
static void lstm_step(float *restrict g, const float *restrict rt,
                      float *restrict h, float *restrict c, int64_t hid) {
  int64_t gh = 4 * hid, j0 = 0;
  for (; j0 + 128 <= gh; j0 += 128) {
    lstm_v16 acc[8];
    memcpy(acc, g + j0, sizeof acc);
    for (int64_t k = 0; k < hid; k++) {
      lstm_v16 hk = (lstm_v16){0} + h[k];
      const float *row = rt + k * gh + j0;
      for (int q = 0; q < 8; q++) {
        lstm_v16 r;
        memcpy(&r, row + 16 * q, sizeof r);
        acc[q] += hk * r;
      }
    }
    memcpy(g + j0, acc, sizeof acc);
  }
  for (int64_t k = 0; k < hid && j0 < gh; k++) {
    float hk = h[k];
    const float *row = rt + k * gh;
    for (int64_t j = j0; j < gh; j++)
      g[j] += hk * row[j];
  }
  for (int64_t j = 0; j < hid; j++) {
    float i = het_simd_sigmoidf(g[j]);
    float o = het_simd_sigmoidf(g[hid + j]);
    float f = het_simd_sigmoidf(g[2 * hid + j]);
    float cc = het_simd_tanhf(g[3 * hid + j]);
    float cn = f * c[j] + i * cc;
    c[j] = cn;
    h[j] = o * het_simd_tanhf(cn);
  }
}

/* lstm_step for H a multiple of LSTM_BLOCK, R in the blocked layout of
 * lstm_pack_r: block by block, the 128 sums of its 32 units start from
 * X·W + biases (xw, gate order), take h·R over all of h (the previous
 * step's, hp) in registers, and become those units' c and h (hn) at
 * once, so the gate math of one block overlaps the reading of the next
 * block's R (R does not fit in L1: H = 64 is 64 KiB).  Same sums in the
 * same order and the same gate functions as lstm_step: the same
 * results. */
HET_SIMD_CLONES
static void lstm_step_blocked(const float *restrict xw,
                              const float *restrict rt,
                              const float *restrict hp, float *restrict hn,
                              float *restrict c, int64_t hid) {
  for (int64_t u0 = 0; u0 < hid; u0 += LSTM_BLOCK) {
    lstm_v16 acc[8];
    for (int q = 0; q < 4; q++)
      memcpy(&acc[2 * q], xw + q * hid + u0, 2 * sizeof acc[0]);
    const float *blk = rt + u0 * hid * 4;
    for (int64_t k = 0; k < hid; k++) {
      lstm_v16 hk = (lstm_v16){0} + hp[k];
      const float *row = blk + k * 4 * LSTM_BLOCK;
      for (int q = 0; q < 8; q++) {
        lstm_v16 r;
        memcpy(&r, row + 16 * q, sizeof r);
        acc[q] += hk * r;
      }
    }
    float g[4 * LSTM_BLOCK];
    memcpy(g, acc, sizeof g);
    for (int64_t l = 0; l < LSTM_BLOCK; l++) {
      float i = het_simd_sigmoidf(g[l]);
      float o = het_simd_sigmoidf(g[LSTM_BLOCK + l]);
      float f = het_simd_sigmoidf(g[2 * LSTM_BLOCK + l]);
      float cc = het_simd_tanhf(g[3 * LSTM_BLOCK + l]);
      float cn = f * c[u0 + l] + i * cc;
      c[u0 + l] = cn;
      hn[u0 + l] = o * het_simd_tanhf(cn);
    }
  }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

het_status het_lk_lstm_f32_run(het_kernel_ctx *ctx, bool *taken) {
  lstm_dims d;
  *taken = lstm_f32_form(ctx, &d);
  if (!*taken)
    return HET_OK;
  const float *x = ctx->inputs[0]->data, *w = ctx->inputs[1]->data,
              *r = ctx->inputs[2]->data;
  const het_tensor *bt = lstm_in(ctx, 3), *h0t = lstm_in(ctx, 5),
                   *c0t = lstm_in(ctx, 6);
  het_tensor *yt = ctx->n_outputs > 0 ? ctx->outputs[0] : NULL;
  het_tensor *yht = ctx->n_outputs > 1 ? ctx->outputs[1] : NULL;
  het_tensor *yct = ctx->n_outputs > 2 ? ctx->outputs[2] : NULL;
  int64_t H = d.hid, gh = 4 * H, rows = d.seq * d.batch;
  float *work;
  HET_TRY(het_kernel_take(ctx, lstm_f32_floats(&d) * sizeof(float),
                          (void **)&work));
  float *xw = work, *rt = xw + rows * gh, *g = rt + H * gh;
  float *h = g + d.batch * gh, *c = h + d.batch * H, *h2 = c + d.batch * H;
  bool blocked = H % LSTM_BLOCK == 0;
  const lstm_packed *pk = ctx->state;
  if (pk && (pk->nd != d.nd || pk->hid != H))
    pk = NULL;
  for (int dir = 0; dir < d.nd; dir++) {
    bool fwd = d.nd == 2 ? dir == 0 : !d.reverse;
    const float *wd = w + dir * gh * d.in, *rd = r + dir * gh * H;
    if (rows > 0)
      het_kernel_sgemm('T', rows, gh, d.in, 1.0f, x, d.in, wd, d.in, xw, gh);
    if (bt) {
      float *bias = g; /* g is free until the first step */
      if (pk && pk->bias)
        bias = pk->bias + dir * gh;
      else
        lstm_sum_bias((const float *)bt->data + dir * 2 * gh, gh, bias);
      for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < gh; j++)
          xw[i * gh + j] += bias[j];
    }
    const float *rtd = rt;
    if (pk)
      rtd = pk->rt + dir * H * gh;
    else
      lstm_pack_r(rd, H, rt);
    size_t state = sizeof(float) * (size_t)(d.batch * H);
    if (h0t)
      memcpy(h, (const float *)h0t->data + dir * d.batch * H, state);
    else
      memset(h, 0, state);
    if (c0t)
      memcpy(c, (const float *)c0t->data + dir * d.batch * H, state);
    else
      memset(c, 0, state);
    for (int64_t step = 0; step < d.seq; step++) {
      int64_t t = fwd ? step : d.seq - 1 - step;
      for (int64_t b = 0; b < d.batch; b++) {
        const float *xwt = xw + (t * d.batch + b) * gh;
        if (blocked) { /* the new h into h2, then swapped with h */
          lstm_step_blocked(xwt, rtd, h + b * H, h2 + b * H, c + b * H, H);
        } else {
          float *gb = g + b * gh;
          memcpy(gb, xwt, sizeof(float) * (size_t)gh);
          lstm_step(gb, rtd, h + b * H, c + b * H, H);
        }
      }
      if (blocked) {
        float *tmp = h;
        h = h2;
        h2 = tmp;
      }
      for (int64_t b = 0; yt && b < d.batch; b++)
        memcpy((float *)yt->data + ((t * d.nd + dir) * d.batch + b) * H,
               h + b * H, sizeof(float) * (size_t)H);
    }
    if (yht)
      memcpy((float *)yht->data + dir * d.batch * H, h, state);
    if (yct)
      memcpy((float *)yct->data + dir * d.batch * H, c, state);
  }
  het_kernel_give(ctx, work);
  return HET_OK;
}
