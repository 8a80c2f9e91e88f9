/* signal_nms.c — NonMaxSuppression on the CPU.  Per batch and class:
 * boxes scoring above score_threshold are visited by descending score
 * (ties: lower index first) and kept unless their IoU with a kept box
 * exceeds iou_threshold, up to max_output_boxes_per_class.  The output
 * [num_selected, 3] is sized here, as its shape depends on the data.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/signal_kernels.h"

typedef struct nms_cand {
  double score;
  int64_t index;
} nms_cand;

typedef struct nms_params {
  int64_t max_out;
  double iou;
  bool has_score_thr;
  double score_thr;
  bool center;
} nms_params;

/* Growable list of [batch, class, box] triples. */
typedef struct nms_out {
  int64_t *v;
  int64_t n, cap;
} nms_out;

static int nms_cand_cmp(const void *a, const void *b) {
  const nms_cand *x = a, *y = b;
  if (x->score != y->score)
    return x->score > y->score ? -1 : 1;
  return x->index < y->index ? -1 : (x->index > y->index);
}

static double scalar_f64(const het_tensor *t, double dflt) {
  if (!t || het_tensor_count(t) < 1)
    return dflt;
  return het_dtype_load_f64(t->dtype, t->data, 0);
}

/* Box i as [ymin, xmin, ymax, xmax] from either input format. */
static void nms_corners(const double *b, bool center, double *c) {
  if (center) {
    c[0] = b[1] - b[3] / 2;
    c[1] = b[0] - b[2] / 2;
    c[2] = b[1] + b[3] / 2;
    c[3] = b[0] + b[2] / 2;
    return;
  }
  c[0] = fmin(b[0], b[2]);
  c[1] = fmin(b[1], b[3]);
  c[2] = fmax(b[0], b[2]);
  c[3] = fmax(b[1], b[3]);
}

/* True when IoU(a, b) > thr (a, b in corner form). */
static bool nms_suppresses(const double *a, const double *b, double thr) {
  double y0 = fmax(a[0], b[0]), x0 = fmax(a[1], b[1]);
  double y1 = fmin(a[2], b[2]), x1 = fmin(a[3], b[3]);
  if (y1 <= y0 || x1 <= x0)
    return false;
  double inter = (y1 - y0) * (x1 - x0);
  double area_a = (a[2] - a[0]) * (a[3] - a[1]);
  double area_b = (b[2] - b[0]) * (b[3] - b[1]);
  double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0)
    return false;
  return inter / uni > thr;
}

static bool nms_push(nms_out *o, int64_t b, int64_t c, int64_t i) {
  if (o->n == o->cap) {
    int64_t cap = o->cap ? o->cap * 2 : 64;
    int64_t *v = realloc(o->v, (size_t)cap * 3 * sizeof *v);
    if (!v)
      return false;
    o->v = v;
    o->cap = cap;
  }
  o->v[o->n * 3] = b;
  o->v[o->n * 3 + 1] = c;
  o->v[o->n * 3 + 2] = i;
  o->n++;
  return true;
}

/* One (batch, class): corners holds the batch's boxes in corner form,
 * scores the class's scores; cand and kept are scratch of nbox entries. */
static bool nms_class(const nms_params *p, const double *corners,
                      const double *scores, int64_t nbox, nms_cand *cand,
                      int64_t *kept, int64_t b, int64_t c, nms_out *o) {
  int64_t nc = 0, nk = 0;
  for (int64_t i = 0; i < nbox; i++)
    if (!p->has_score_thr || scores[i] > p->score_thr)
      cand[nc++] = (nms_cand){scores[i], i};
  qsort(cand, (size_t)nc, sizeof *cand, nms_cand_cmp);
  for (int64_t k = 0; k < nc && nk < p->max_out; k++) {
    const double *box = corners + cand[k].index * 4;
    bool keep = true;
    for (int64_t j = 0; j < nk && keep; j++)
      keep = !nms_suppresses(corners + kept[j] * 4, box, p->iou);
    if (!keep)
      continue;
    kept[nk++] = cand[k].index;
    if (!nms_push(o, b, c, cand[k].index))
      return false;
  }
  return true;
}

static het_status nms_select(het_kernel_ctx *ctx, const nms_params *p,
                             const double *boxes, const double *scores,
                             nms_out *o) {
  const het_tensor *tb = ctx->inputs[0], *ts = ctx->inputs[1];
  int64_t nb = tb->dims[0], nbox = tb->dims[1], ncls = ts->dims[1];
  size_t m = (size_t)(nbox > 0 ? nbox : 1);
  double *corners = malloc(m * 4 * sizeof *corners);
  nms_cand *cand = malloc(m * sizeof *cand);
  int64_t *kept = malloc(m * sizeof *kept);
  het_status st = HET_OK;
  if (!corners || !cand || !kept)
    goto oom;
  for (int64_t b = 0; b < nb; b++) {
    for (int64_t i = 0; i < nbox; i++)
      nms_corners(boxes + (b * nbox + i) * 4, p->center, corners + i * 4);
    for (int64_t c = 0; c < ncls; c++)
      if (!nms_class(p, corners, scores + (b * ncls + c) * nbox, nbox, cand,
                     kept, b, c, o))
        goto oom;
  }
  goto done;
oom:
  st = het_sig_fail(ctx, HET_ERR_OUT_OF_MEMORY, "out of memory");
done:
  free(corners);
  free(cand);
  free(kept);
  return st;
}

static het_status nms_check(het_kernel_ctx *ctx) {
  const het_tensor *b = ctx->inputs[0], *s = ctx->inputs[1];
  if (b->rank != 3 || b->dims[2] != 4 || s->rank != 3 ||
      s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1])
    return het_sig_fail(ctx, HET_ERR_SHAPE,
                        "boxes must be [batches, boxes, 4] and scores "
                        "[batches, classes, boxes]");
  return HET_OK;
}

het_status het_sig_run_nms(het_kernel_ctx *ctx) {
  HET_TRY(nms_check(ctx));
  nms_params p = {0};
  het_tensor *t_max = ctx->n_inputs > 2 ? ctx->inputs[2] : NULL;
  p.max_out = t_max && het_tensor_count(t_max) > 0
                  ? het_tensor_get_i64(t_max, 0) : 0;
  p.iou = scalar_f64(ctx->n_inputs > 3 ? ctx->inputs[3] : NULL, 0.0);
  het_tensor *t_thr = ctx->n_inputs > 4 ? ctx->inputs[4] : NULL;
  p.has_score_thr = t_thr && het_tensor_count(t_thr) > 0;
  p.score_thr = scalar_f64(t_thr, 0.0);
  p.center = het_node_attr_int(ctx->node, "center_point_box", 0) == 1;
  nms_out o = {0};
  double *boxes = NULL, *scores = NULL;
  het_status st = HET_OK;
  if (p.max_out > 0) {
    st = het_sig_widen(ctx, ctx->inputs[0], &boxes);
    if (st == HET_OK)
      st = het_sig_widen(ctx, ctx->inputs[1], &scores);
    if (st == HET_OK)
      st = nms_select(ctx, &p, boxes, scores, &o);
  }
  if (st == HET_OK) {
    int64_t dims[2] = {o.n, 3};
    st = het_tensor_alloc(ctx->outputs[0], HET_DTYPE_INT64, dims, 2);
    if (st != HET_OK)
      het_error_wrap(st, "node '%s' (NonMaxSuppression)", ctx->node->name);
    if (st == HET_OK && o.n > 0)
      memcpy(ctx->outputs[0]->data, o.v, (size_t)o.n * 3 * sizeof *o.v);
  }
  free(boxes);
  free(scores);
  free(o.v);
  return st;
}
