/* linalg_rnn.c — RNN, GRU and LSTM on the CPU (ONNX semantics: forward,
 * reverse, bidirectional; layout 0/1; sequence_lens with zeroed Y past the
 * end and Y_h/Y_c from each sequence's last step; initial_h/c; LSTM
 * peepholes and input_forget; GRU linear_before_reset; activations with
 * alpha/beta; clip).  Computes in float64 with dgemm for X·W and h·R;
 * the common float32 LSTM takes linalg_lstm_f32.c instead.
 */
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/dtype.h"
#include "kernels/linalg_kern.h"

typedef enum {
  ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_AFFINE, ACT_LEAKY, ACT_THRESH,
  ACT_SCALED_TANH, ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS,
} act_kind;

typedef struct act_fn {
  act_kind kind;
  double alpha, beta;
} act_fn;

typedef struct rnn_io {
  int gates, nd, nact, layout;
  int64_t seq, batch, in, hid;
  double clip; /* <= 0: none */
  bool reverse, lbr, input_forget;
  act_fn acts[6];
  int32_t *lens;                   /* batch entries */
  het_lk_buf x, w, r, b, h0, c0, p; /* float64 working copies */
  double *y, *yh, *yc;             /* float64 outputs (NULL if omitted) */
} rnn_io;

static const struct {
  const char *name;
  act_kind kind;
  double alpha, beta;
} act_table[] = {
    {"Sigmoid", ACT_SIGMOID, 0, 0},     {"Tanh", ACT_TANH, 0, 0},
    {"Relu", ACT_RELU, 0, 0},           {"Affine", ACT_AFFINE, 1, 0},
    {"LeakyRelu", ACT_LEAKY, 0.01, 0},  {"ThresholdedRelu", ACT_THRESH, 1, 0},
    {"ScaledTanh", ACT_SCALED_TANH, 1, 1},
    {"HardSigmoid", ACT_HARD_SIGMOID, 0.2, 0.5},
    {"Elu", ACT_ELU, 1, 0},             {"Softsign", ACT_SOFTSIGN, 0, 0},
    {"Softplus", ACT_SOFTPLUS, 0, 0},
};

static double act_apply(const act_fn *f, double x) {
  switch (f->kind) {
  case ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
  case ACT_TANH: return tanh(x);
  case ACT_RELU: return x > 0 ? x : 0;
  case ACT_AFFINE: return f->alpha * x + f->beta;
  case ACT_LEAKY: return x >= 0 ? x : f->alpha * x;
  case ACT_THRESH: return x > f->alpha ? x : 0;
  case ACT_SCALED_TANH: return f->alpha * tanh(f->beta * x);
  case ACT_HARD_SIGMOID: {
    double v = f->alpha * x + f->beta;
    return v < 0 ? 0 : v > 1 ? 1 : v;
  }
  case ACT_ELU: return x >= 0 ? x : f->alpha * (exp(x) - 1);
  case ACT_SOFTSIGN: return x / (1 + fabs(x));
  case ACT_SOFTPLUS: return log1p(exp(x));
  }
  return x;
}

static het_status parse_acts(const het_kernel_ctx *ctx, rnn_io *io) {
  static const act_kind dflt[3][3] = {{ACT_TANH},
                                      {ACT_SIGMOID, ACT_TANH},
                                      {ACT_SIGMOID, ACT_TANH, ACT_TANH}};
  io->nact = io->gates == 1 ? 1 : io->gates == 3 ? 2 : 3;
  size_t na = 0, nal = 0, nbe = 0;
  const het_attr *a = het_node_find_attr(ctx->node, "activations");
  if (a && a->type == HET_ATTR_STRINGS)
    na = a->n;
  const float *al = het_node_attr_floats(ctx->node, "activation_alpha", &nal);
  const float *be = het_node_attr_floats(ctx->node, "activation_beta", &nbe);
  if (na && na != (size_t)(io->nact * io->nd))
    return het_lk_fail(ctx, HET_ERR_INVALID_MODEL,
                       "%zu activations given, expected %d", na,
                       io->nact * io->nd);
  for (int i = 0; i < io->nact * io->nd; i++) {
    act_fn *f = &io->acts[i];
    int def_row = io->gates == 1 ? 0 : io->gates == 3 ? 1 : 2;
    f->kind = dflt[def_row][i % io->nact];
    f->alpha = f->beta = 0;
    if (na) {
      size_t k = 0, nt = sizeof act_table / sizeof *act_table;
      while (k < nt && strcasecmp(act_table[k].name, a->strings[i]) != 0)
        k++;
      if (k == nt)
        return het_lk_fail(ctx, HET_ERR_UNSUPPORTED,
                           "unknown activation '%s'", a->strings[i]);
      f->kind = act_table[k].kind;
      f->alpha = act_table[k].alpha;
      f->beta = act_table[k].beta;
    }
    if ((size_t)i < nal)
      f->alpha = al[i];
    if ((size_t)i < nbe)
      f->beta = be[i];
  }
  return HET_OK;
}

static const het_tensor *opt_in(const het_kernel_ctx *ctx, int i) {
  return i < ctx->n_inputs ? ctx->inputs[i] : NULL;
}

static het_status load_opt(const het_kernel_ctx *ctx, int i,
                           het_lk_buf *b) {
  const het_tensor *t = opt_in(ctx, i);
  memset(b, 0, sizeof *b);
  if (!t || het_tensor_count(t) == 0)
    return HET_OK;
  return het_lk_buf_input(ctx, t, HET_DTYPE_FLOAT64, b);
}

static het_status rnn_setup(het_kernel_ctx *ctx, int gates, rnn_io *io) {
  const het_tensor *x = ctx->inputs[0], *r = ctx->inputs[2];
  const char *dir = het_node_attr_string(ctx->node, "direction");
  memset(io, 0, sizeof *io);
  io->gates = gates;
  io->nd = dir && strcmp(dir, "bidirectional") == 0 ? 2 : 1;
  io->reverse = dir && strcmp(dir, "reverse") == 0;
  io->layout = ctx->opset >= 14
                   ? (int)het_node_attr_int(ctx->node, "layout", 0) : 0;
  io->clip = het_node_attr_float(ctx->node, "clip", 0.0f);
  io->lbr = het_node_attr_int(ctx->node, "linear_before_reset", 0) != 0;
  io->input_forget = het_node_attr_int(ctx->node, "input_forget", 0) != 0;
  io->seq = x->dims[io->layout ? 1 : 0];
  io->batch = x->dims[io->layout ? 0 : 1];
  io->in = x->dims[2];
  io->hid = r->dims[2];
  if (ctx->inputs[1]->dims[2] != io->in || r->dims[1] != gates * io->hid ||
      ctx->inputs[1]->dims[0] != io->nd || r->dims[0] != io->nd)
    return het_lk_fail(ctx, HET_ERR_SHAPE,
                       "W/R shapes do not match X and hidden size %lld",
                       (long long)io->hid);
  HET_TRY(parse_acts(ctx, io));
  HET_TRY(het_lk_alloc(ctx, sizeof(int32_t) * (size_t)io->batch,
                       (void **)&io->lens));
  const het_tensor *sl = opt_in(ctx, 4);
  for (int64_t b = 0; b < io->batch; b++) {
    int64_t v = sl && het_tensor_count(sl) ? het_dtype_load_i64(sl->dtype, sl->data, b)
                                           : io->seq;
    if (v < 0 || v > io->seq)
      return het_lk_fail(ctx, HET_ERR_SHAPE,
                         "sequence_lens[%lld] = %lld outside 0..%lld",
                         (long long)b, (long long)v, (long long)io->seq);
    io->lens[b] = (int32_t)v;
  }
  HET_TRY(het_lk_buf_input(ctx, x, HET_DTYPE_FLOAT64, &io->x));
  HET_TRY(het_lk_buf_input(ctx, ctx->inputs[1], HET_DTYPE_FLOAT64, &io->w));
  HET_TRY(het_lk_buf_input(ctx, r, HET_DTYPE_FLOAT64, &io->r));
  HET_TRY(load_opt(ctx, 3, &io->b));
  HET_TRY(load_opt(ctx, 5, &io->h0));
  if (gates == 4) {
    HET_TRY(load_opt(ctx, 6, &io->c0));
    HET_TRY(load_opt(ctx, 7, &io->p));
  }
  return HET_OK;
}

static void rnn_teardown(rnn_io *io) {
  free(io->lens);
  het_lk_buf_release(&io->x);
  het_lk_buf_release(&io->w);
  het_lk_buf_release(&io->r);
  het_lk_buf_release(&io->b);
  het_lk_buf_release(&io->h0);
  het_lk_buf_release(&io->c0);
  het_lk_buf_release(&io->p);
}

/* Offsets of Y[t, d, b, :] and Y_h[d, b, :] for the layout. */
static int64_t y_off(const rnn_io *io, int64_t t, int d, int64_t b) {
  return (io->layout ? (b * io->seq + t) * io->nd + d
                     : (t * io->nd + d) * io->batch + b) *
         io->hid;
}

static int64_t h_off(const rnn_io *io, int d, int64_t b) {
  return (io->layout ? b * io->nd + d : d * io->batch + b) * io->hid;
}

static double clipv(const rnn_io *io, double v) {
  if (io->clip > 0)
    return v < -io->clip ? -io->clip : v > io->clip ? io->clip : v;
  return v;
}

/* xw[(t*batch + b) * G*H + j] = X[t, b, :] · W[d, j, :] + Wb[d, j]. */
static void input_proj(const rnn_io *io, int d, double *xw) {
  int64_t gh = io->gates * io->hid;
  const double *w = (const double *)io->w.data + d * gh * io->in;
  const double *x = io->x.data;
  for (int64_t t = 0; t < io->seq; t++)
    for (int64_t b = 0; b < io->batch; b++) {
      int64_t row = io->layout ? b * io->seq + t : t * io->batch + b;
      cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)gh, (blasint)io->in,
                  1.0, w, (blasint)io->in, x + row * io->in, 1, 0.0,
                  xw + (t * io->batch + b) * gh, 1);
      if (io->b.data) {
        const double *wb = (const double *)io->b.data + d * 2 * gh;
        for (int64_t j = 0; j < gh; j++)
          xw[(t * io->batch + b) * gh + j] += wb[j];
      }
    }
}

/* dst[b, j] = h[b, :] · R[d, row0 + j, :] (+ Rb) for j < n. */
static void hidden_proj(const rnn_io *io, int d, const double *h,
                        int64_t row0, int64_t n, double *dst, int64_t ld) {
  int64_t gh = io->gates * io->hid;
  const double *r = (const double *)io->r.data + (d * gh + row0) * io->hid;
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (blasint)io->batch,
              (blasint)n, (blasint)io->hid, 1.0, h, (blasint)io->hid, r,
              (blasint)io->hid, 0.0, dst, (blasint)ld);
  if (io->b.data) {
    const double *rb = (const double *)io->b.data + d * 2 * gh + gh + row0;
    for (int64_t b = 0; b < io->batch; b++)
      for (int64_t j = 0; j < n; j++)
        dst[b * ld + j] += rb[j];
  }
}

/* Per-direction state: projections and the running h (and c). */
typedef struct dir_state {
  int d;
  bool fwd;
  double *xw, *hr, *h, *c, *tmp;
} dir_state;

static het_status dir_init(const het_kernel_ctx *ctx, const rnn_io *io,
                           int d, dir_state *s) {
  int64_t gh = io->gates * io->hid, bh = io->batch * io->hid;
  size_t n = (size_t)(io->seq * io->batch * gh + io->batch * gh + 3 * bh);
  memset(s, 0, sizeof *s);
  s->d = d;
  s->fwd = io->nd == 2 ? d == 0 : !io->reverse;
  HET_TRY(het_lk_alloc(ctx, sizeof(double) * n, (void **)&s->xw));
  s->hr = s->xw + io->seq * io->batch * gh;
  s->h = s->hr + io->batch * gh;
  s->c = s->h + bh;
  s->tmp = s->c + bh;
  input_proj(io, d, s->xw);
  for (int64_t b = 0; b < io->batch; b++)
    for (int64_t j = 0; j < io->hid; j++) {
      s->h[b * io->hid + j] =
          io->h0.data ? ((double *)io->h0.data)[h_off(io, d, b) + j] : 0.0;
      s->c[b * io->hid + j] =
          io->c0.data ? ((double *)io->c0.data)[h_off(io, d, b) + j] : 0.0;
    }
  return HET_OK;
}

/* Time index of step s for batch b, or -1 when b's sequence has ended. */
static int64_t step_t(const rnn_io *io, const dir_state *s, int64_t step,
                      int64_t b) {
  if (step >= io->lens[b])
    return -1;
  return s->fwd ? step : io->lens[b] - 1 - step;
}

static void dir_finish(rnn_io *io, dir_state *s, int64_t b, int64_t t) {
  const double *h = s->h + b * io->hid;
  if (io->y)
    memcpy(io->y + y_off(io, t, s->d, b), h, sizeof(double) * (size_t)io->hid);
}

static void rnn_cell(rnn_io *io, dir_state *s, int64_t step) {
  const act_fn *f = &io->acts[s->d * io->nact];
  hidden_proj(io, s->d, s->h, 0, io->hid, s->hr, io->hid);
  for (int64_t b = 0; b < io->batch; b++) {
    int64_t t = step_t(io, s, step, b);
    if (t < 0)
      continue;
    const double *xw = s->xw + (t * io->batch + b) * io->hid;
    for (int64_t j = 0; j < io->hid; j++)
      s->h[b * io->hid + j] =
          act_apply(f, clipv(io, xw[j] + s->hr[b * io->hid + j]));
    dir_finish(io, s, b, t);
  }
}

static void gru_cell(rnn_io *io, dir_state *s, int64_t step) {
  const act_fn *f = &io->acts[s->d * io->nact], *g = f + 1;
  int64_t H = io->hid, gh = 3 * H;
  hidden_proj(io, s->d, s->h, 0, io->lbr ? gh : 2 * H, s->hr, gh);
  if (!io->lbr) {
    for (int64_t b = 0; b < io->batch; b++) {
      int64_t t = step_t(io, s, step, b);
      const double *xw = s->xw + ((t < 0 ? 0 : t) * io->batch + b) * gh;
      for (int64_t j = 0; j < H; j++) {
        double r = act_apply(f, clipv(io, xw[H + j] + s->hr[b * gh + H + j]));
        s->tmp[b * H + j] = r * s->h[b * H + j];
      }
    }
    hidden_proj(io, s->d, s->tmp, 2 * H, H, s->hr + 2 * H, gh);
  }
  for (int64_t b = 0; b < io->batch; b++) {
    int64_t t = step_t(io, s, step, b);
    if (t < 0)
      continue;
    const double *xw = s->xw + (t * io->batch + b) * gh;
    const double *hr = s->hr + b * gh;
    for (int64_t j = 0; j < H; j++) {
      double z = act_apply(f, clipv(io, xw[j] + hr[j]));
      double hh;
      if (io->lbr) {
        double r = act_apply(f, clipv(io, xw[H + j] + hr[H + j]));
        hh = act_apply(g, clipv(io, xw[2 * H + j] + r * hr[2 * H + j]));
      } else {
        hh = act_apply(g, clipv(io, xw[2 * H + j] + hr[2 * H + j]));
      }
      double *h = &s->h[b * H + j];
      *h = (1 - z) * hh + z * *h;
    }
    dir_finish(io, s, b, t);
  }
}

static void lstm_cell(rnn_io *io, dir_state *s, int64_t step) {
  const act_fn *f = &io->acts[s->d * io->nact], *g = f + 1, *hf = f + 2;
  int64_t H = io->hid, gh = 4 * H;
  const double *p = io->p.data ? (const double *)io->p.data + s->d * 3 * H
                               : NULL;
  hidden_proj(io, s->d, s->h, 0, gh, s->hr, gh);
  for (int64_t b = 0; b < io->batch; b++) {
    int64_t t = step_t(io, s, step, b);
    if (t < 0)
      continue;
    const double *xw = s->xw + (t * io->batch + b) * gh;
    const double *hr = s->hr + b * gh;
    for (int64_t j = 0; j < H; j++) {
      double *c = &s->c[b * H + j];
      double pi = p ? p[j] : 0, po = p ? p[H + j] : 0, pf = p ? p[2 * H + j] : 0;
      double i = act_apply(f, clipv(io, xw[j] + hr[j] + pi * *c));
      double fg = act_apply(f, clipv(io, xw[2 * H + j] + hr[2 * H + j] + pf * *c));
      if (io->input_forget)
        fg = 1 - i;
      double cc = act_apply(g, clipv(io, xw[3 * H + j] + hr[3 * H + j]));
      *c = fg * *c + i * cc;
      double o = act_apply(f, clipv(io, xw[H + j] + hr[H + j] + po * *c));
      s->h[b * H + j] = o * act_apply(hf, *c);
    }
    dir_finish(io, s, b, t);
  }
}

typedef void (*cell_fn)(rnn_io *io, dir_state *s, int64_t step);

static het_status run_dirs(het_kernel_ctx *ctx, rnn_io *io, cell_fn cell) {
  for (int d = 0; d < io->nd; d++) {
    dir_state s;
    HET_TRY(dir_init(ctx, io, d, &s));
    for (int64_t step = 0; step < io->seq; step++)
      cell(io, &s, step);
    for (int64_t b = 0; b < io->batch; b++) {
      if (io->yh)
        memcpy(io->yh + h_off(io, d, b), s.h + b * io->hid,
               sizeof(double) * (size_t)io->hid);
      if (io->yc)
        memcpy(io->yc + h_off(io, d, b), s.c + b * io->hid,
               sizeof(double) * (size_t)io->hid);
    }
    free(s.xw);
  }
  return HET_OK;
}

static het_status recurrent_run(het_kernel_ctx *ctx, int gates,
                                cell_fn cell) {
  rnn_io io;
  het_lk_buf out[3] = {{0}, {0}, {0}};
  double **dst[3] = {&io.y, &io.yh, &io.yc};
  het_status st = rnn_setup(ctx, gates, &io);
  for (int o = 0; st == HET_OK && o < 3 && o < ctx->n_outputs; o++) {
    het_tensor *t = ctx->outputs[o];
    if (!t)
      continue;
    st = het_lk_buf_output(ctx, t, HET_DTYPE_FLOAT64, &out[o]);
    if (st == HET_OK) {
      *dst[o] = out[o].data;
      memset(out[o].data, 0, sizeof(double) * (size_t)het_tensor_count(t));
    }
  }
  if (st == HET_OK)
    st = run_dirs(ctx, &io, cell);
  for (int o = 0; o < 3 && o < ctx->n_outputs; o++) {
    if (st == HET_OK && ctx->outputs[o])
      het_lk_buf_commit(ctx->outputs[o], &out[o]);
    het_lk_buf_release(&out[o]);
  }
  rnn_teardown(&io);
  return st;
}

het_status het_lk_rnn_run(het_kernel_ctx *ctx) {
  return recurrent_run(ctx, 1, rnn_cell);
}

het_status het_lk_gru_run(het_kernel_ctx *ctx) {
  return recurrent_run(ctx, 3, gru_cell);
}

het_status het_lk_lstm_run(het_kernel_ctx *ctx) {
  bool taken;
  HET_TRY(het_lk_lstm_f32_run(ctx, &taken));
  if (taken)
    return HET_OK;
  return recurrent_run(ctx, 4, lstm_cell);
}
