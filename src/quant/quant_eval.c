/* quant_eval.c — the accuracy report: the float model and the QDQ model
 * (both run by hetrt, Q/DQ computed as the spec says) on the evaluation
 * inputs; per float32 output the error, cosine similarity and top-1
 * agreement, per quantized tensor the SQNR of its dequantized value
 * against the float one (what ONNX Runtime's qdq_loss_debug gives).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "quant/quant_api.h"
#include "quant/quant_internal.h"
#include "session/session_api.h"

/* Running sums of one output's comparison. */
typedef struct het_quant_sums {
  double qf, qq, ff, max_f;
} het_quant_sums;

static int64_t het_quant_argmax(const float *x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (x[i] > x[best])
      best = i;
  return best;
}

/* Adds one input's output pair f (float model), qt (quantized) to a. */
static het_status het_quant_compare_output(het_quant_accuracy *a,
                                           het_quant_sums *sum,
                                           const het_tensor *f,
                                           const het_tensor *qt) {
  if (f->dtype != HET_DTYPE_FLOAT32)
    return HET_OK;
  int64_t n = het_tensor_count(f);
  if (qt->dtype != f->dtype || het_tensor_count(qt) != n)
    return het_error(HET_ERR_INTERNAL, "quantize: output '%s' of the "
                     "quantized model has another type or size than the "
                     "float model's", a->name);
  const float *x = f->data, *y = qt->data;
  double qf = 0, qq = 0, ff = 0;
  for (int64_t i = 0; i < n; i++) {
    double e = fabs((double)y[i] - x[i]);
    if (e > a->max_abs_error)
      a->max_abs_error = e;
    if (fabs(x[i]) > sum->max_f)
      sum->max_f = fabs(x[i]);
    qf += (double)x[i] * y[i];
    qq += (double)y[i] * y[i];
    ff += (double)x[i] * x[i];
  }
  double cos = qq > 0 && ff > 0 ? qf / sqrt(qq * ff) : (qq == ff ? 1 : 0);
  if (cos < a->min_cosine)
    a->min_cosine = cos;
  sum->qf += qf;
  sum->qq += qq;
  sum->ff += ff;
  if (f->rank == 2 && f->dims[1] >= 2)
    for (int64_t r = 0; r < f->dims[0]; r++) {
      int64_t c = f->dims[1];
      a->top1_total++;
      a->top1_agree +=
          het_quant_argmax(x + r * c, c) == het_quant_argmax(y + r * c, c);
    }
  return HET_OK;
}

static void het_quant_compare_tensor(het_quant_tensor *t, const het_tensor *f,
                                     const het_tensor *qt) {
  int64_t n = het_tensor_count(f);
  if (het_tensor_count(qt) != n)
    return;
  const float *x = f->data, *y = qt->data;
  for (int64_t i = 0; i < n; i++) {
    double e = (double)y[i] - x[i];
    t->sum_sq += (double)x[i] * x[i];
    t->sum_err_sq += e * e;
  }
}

static double het_quant_sqnr(const het_quant_tensor *t) {
  if (t->sum_err_sq <= 0)
    return INFINITY;
  return 10 * log10(t->sum_sq / t->sum_err_sq);
}

/* The two sessions: the float model with the quantized tensors as extra
 * outputs, and the QDQ model with their dequantized values as outputs. */
typedef struct het_quant_pair {
  het_session *f, *q;
  const char **f_names, **q_names; /* model outputs, then tensors */
  int n;
  het_graph *fg, *qg;
} het_quant_pair;

static het_status het_quant_pair_open(het_quantizer *q, het_quant_pair *p) {
  int n_out = q->g->n_outputs;
  p->n = n_out + q->n_tensors;
  int *values = malloc(((size_t)q->n_tensors + 1) * sizeof *values);
  int *dq = malloc(((size_t)q->n_tensors + 1) * sizeof *dq);
  p->f_names = calloc((size_t)p->n + 1, sizeof *p->f_names);
  p->q_names = calloc((size_t)p->n + 1, sizeof *p->q_names);
  het_status st = HET_ERR_OUT_OF_MEMORY;
  if (!values || !dq || !p->f_names || !p->q_names) {
    st = het_error(st, "quantize: out of memory");
    goto done;
  }
  for (int i = 0; i < q->n_tensors; i++)
    values[i] = q->tensors[i].value;
  st = het_quant_load(q, &p->fg);
  if (st == HET_OK)
    st = het_quant_add_outputs(p->fg, values, q->n_tensors);
  if (st == HET_OK)
    st = het_quant_open(q, p->fg, &p->f);
  if (st == HET_OK)
    st = het_quant_load(q, &p->qg);
  if (st == HET_OK)
    st = het_quant_rewrite(q, p->qg, dq);
  if (st == HET_OK)
    st = het_quant_add_outputs(p->qg, dq, q->n_tensors);
  if (st == HET_OK)
    st = het_quant_open(q, p->qg, &p->q);
  if (st != HET_OK)
    goto done;
  for (int i = 0; i < n_out; i++)
    p->f_names[i] = p->q_names[i] = q->g->values[q->g->outputs[i]].name;
  for (int i = 0; i < q->n_tensors; i++) {
    p->f_names[n_out + i] = q->tensors[i].name;
    p->q_names[n_out + i] = p->qg->values[dq[i]].name;
  }
done:
  free(values);
  free(dq);
  return st;
}

static void het_quant_pair_close(het_quant_pair *p) {
  het_session_destroy_impl(p->f);
  het_session_destroy_impl(p->q);
  free(p->f_names);
  free(p->q_names);
  het_graph_destroy(p->fg);
  het_graph_destroy(p->qg);
}

/* Runs one evaluation input through both sessions and adds it up. */
static het_status het_quant_eval_row(het_quantizer *q, het_quant_pair *p,
                                     het_tensor *const *row,
                                     het_quant_sums *sums,
                                     het_tensor **fo, het_tensor **qo) {
  int n_out = q->g->n_outputs;
  het_status st = het_quant_run(q, p->f, row, p->f_names, p->n, fo);
  if (st == HET_OK)
    st = het_quant_run(q, p->q, row, p->q_names, p->n, qo);
  for (int i = 0; st == HET_OK && i < n_out; i++)
    st = het_quant_compare_output(&q->accuracy[i], &sums[i], fo[i], qo[i]);
  for (int i = 0; st == HET_OK && i < q->n_tensors; i++)
    het_quant_compare_tensor(&q->tensors[i], fo[n_out + i], qo[n_out + i]);
  for (int i = 0; i < p->n; i++) {
    het_tensor_destroy(fo[i]);
    het_tensor_destroy(qo[i]);
    fo[i] = qo[i] = NULL;
  }
  return st;
}

static void het_quant_finish(het_quantizer *q, const het_quant_sums *sums) {
  for (int i = 0; i < q->n_accuracy; i++) {
    het_quant_accuracy *a = &q->accuracy[i];
    const het_quant_sums *s = &sums[i];
    a->cosine = s->qq > 0 && s->ff > 0 ? s->qf / sqrt(s->qq * s->ff)
                                       : (s->qq == s->ff ? 1 : 0);
    a->max_rel_error = s->max_f > 0 ? a->max_abs_error / s->max_f : 0;
  }
}

static int het_quant_by_sqnr(const void *a, const void *b, void *ctx) {
  const het_quant_tensor *t = ctx;
  double x = het_quant_sqnr(&t[*(const int *)a]);
  double y = het_quant_sqnr(&t[*(const int *)b]);
  return x < y ? -1 : x > y;
}

/* The text report (caller frees). */
static het_status het_quant_report(const het_quantizer *q, char **out) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  int *idx = malloc(((size_t)q->n_tensors + 1) * sizeof *idx);
  if (!f || !idx) {
    if (f)
      fclose(f);
    free(buf);
    free(idx);
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  }
  fprintf(f, "accuracy of the quantized model against the float model on "
          "%zu %s input%s:\n", q->n_eval,
          q->dynamic ? "evaluation" : "held-apart", q->n_eval == 1 ? "" : "s");
  for (int i = 0; i < q->n_accuracy; i++) {
    const het_quant_accuracy *a = &q->accuracy[i];
    fprintf(f, "  output '%s': ", a->name);
    if (q->g->values[q->g->outputs[i]].dtype != HET_DTYPE_FLOAT32) {
      fprintf(f, "not float32, not compared\n");
      continue;
    }
    fprintf(f, "cosine %.5f (worst input %.5f), max |error| %.4g (%.2f%% "
            "of max |value|)", a->cosine, a->min_cosine, a->max_abs_error,
            100 * a->max_rel_error);
    if (a->top1_total)
      fprintf(f, ", top-1 agreement %zu/%zu (%.1f%%)", a->top1_agree,
              a->top1_total, 100.0 * a->top1_agree / a->top1_total);
    fprintf(f, "\n");
  }
  for (int i = 0; i < q->n_tensors; i++)
    idx[i] = i;
  qsort_r(idx, (size_t)q->n_tensors, sizeof *idx, het_quant_by_sqnr,
          q->tensors);
  int shown = q->n_tensors < 10 ? q->n_tensors : 10;
  if (shown)
    fprintf(f, "worst %d of %d quantized tensors by SQNR (dequantized "
            "against float):\n", shown, q->n_tensors);
  for (int k = 0; k < shown; k++) {
    const het_quant_tensor *t = &q->tensors[idx[k]];
    fprintf(f, "  %7.2f dB  '%s' (at node '%s')\n", het_quant_sqnr(t),
            t->name, t->reader);
  }
  free(idx);
  if (fclose(f) != 0 || !buf) {
    free(buf);
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  }
  *out = buf;
  return HET_OK;
}

het_status het_quantizer_evaluate_impl(het_quantizer *q, char **report) {
  if (!q->calibrated)
    return het_error(HET_ERR_INVALID_ARGUMENT, "quantize: "
                     "het_quantizer_calibrate must run before evaluation");
  if (q->n_eval == 0)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize: no evaluation inputs were added");
  free(q->accuracy);
  q->n_accuracy = q->g->n_outputs;
  q->accuracy = calloc((size_t)q->n_accuracy + 1, sizeof *q->accuracy);
  het_quant_sums *sums = calloc((size_t)q->n_accuracy + 1, sizeof *sums);
  het_quant_pair p = {0};
  het_tensor **fo = NULL, **qo = NULL;
  het_status st = HET_ERR_OUT_OF_MEMORY;
  if (!q->accuracy || !sums) {
    st = het_error(st, "quantize: out of memory");
    goto done;
  }
  for (int i = 0; i < q->n_accuracy; i++) {
    q->accuracy[i].name = q->g->values[q->g->outputs[i]].name;
    q->accuracy[i].min_cosine = 1;
  }
  for (int i = 0; i < q->n_tensors; i++)
    q->tensors[i].sum_sq = q->tensors[i].sum_err_sq = 0;
  st = het_quant_pair_open(q, &p);
  fo = calloc((size_t)p.n + 1, sizeof *fo);
  qo = calloc((size_t)p.n + 1, sizeof *qo);
  if (st == HET_OK && (!fo || !qo))
    st = het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (size_t r = 0; st == HET_OK && r < q->n_eval; r++) {
    st = het_quant_eval_row(q, &p, q->eval + r * q->n_inputs, sums, fo, qo);
    if (st == HET_OK && q->progress)
      q->progress(q->progress_ctx, "evaluate", r + 1, q->n_eval);
  }
  if (st == HET_OK) {
    het_quant_finish(q, sums);
    q->evaluated = true;
    if (report)
      st = het_quant_report(q, report);
  }
done:
  free(fo);
  free(qo);
  free(sums);
  het_quant_pair_close(&p);
  return st;
}

size_t het_quantizer_get_output_count_impl(const het_quantizer *q) {
  return (size_t)q->g->n_outputs;
}

het_status het_quantizer_get_accuracy_impl(const het_quantizer *q,
                                           size_t index,
                                           het_quant_accuracy *out) {
  if (!q->evaluated)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize: het_quantizer_evaluate has not run");
  *out = q->accuracy[index];
  return HET_OK;
}

het_status het_quantizer_get_sqnr_impl(const het_quantizer *q, size_t index,
                                       double *db) {
  if (!q->evaluated)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize: het_quantizer_evaluate has not run");
  *db = het_quant_sqnr(&q->tensors[index]);
  return HET_OK;
}
