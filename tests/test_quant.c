/* test_quant.c — static quantization (hetrt/quantize.h) on the models of
 * tests/data/quant/gen_quant.py: each calibration method against ranges
 * computed by hand, scales and zero points by the ONNX formulas, the QDQ
 * model's structure (per-channel int8 weights with the right axis, int32
 * biases in the accumulator's scale, Q/DQ where an int8 kernel would sit,
 * the model output quantized), its accuracy against the float model,
 * opset rules, exclusions, and every misuse as a clean status.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cases.h"
#include "core/ir.h"
#include "core/tensor.h"
#include "hetrt/quantize.h"
#include "onnx/loader.h"
#include "quant/quant_internal.h"

#define QDIR HETRT_TEST_DATA "/quant/"

/* ---- helpers ---- */

static uint64_t rng_state;

static float rng_normal(void) {
  double u[2];
  for (int k = 0; k < 2; k++) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    u[k] = ((double)(rng_state >> 11) + 1.0) / 9007199254740993.0;
  }
  return (float)(sqrt(-2 * log(u[0])) * cos(6.283185307179586 * u[1]));
}

static het_tensor *make_tensor(const int64_t *dims, int rank) {
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, rank, &t), HET_OK);
  return t;
}

/* Adds n inputs of N(0,1) values named name of dims to q. */
static void add_random(het_quantizer *q, bool eval, int n, const char *name,
                       const int64_t *dims, int rank) {
  for (int i = 0; i < n; i++) {
    het_tensor *t = make_tensor(dims, rank);
    float *x = het_tensor_get_data(t);
    for (int64_t k = 0; k < het_tensor_get_count(t); k++)
      x[k] = rng_normal();
    ck_assert_int_eq(het_quantizer_add_input(q, eval, &name, &t, 1), HET_OK);
    het_tensor_destroy(t);
  }
}

static het_quantizer *open_quantizer(het_env *env, const char *model) {
  het_quantizer *q = NULL;
  char path[512];
  snprintf(path, sizeof path, QDIR "%s", model);
  ck_assert_msg(het_quantizer_create(env, path, NULL, &q) == HET_OK, "%s: %s",
                model, het_last_error());
  return q;
}

/* Index of the activation tensor named name; fails the test if absent. */
static size_t tensor_index(const het_quantizer *q, const char *name) {
  for (size_t i = 0; i < het_quantizer_get_tensor_count(q); i++) {
    const char *n;
    ck_assert_int_eq(het_quantizer_get_tensor(q, i, &n, NULL, NULL, NULL, NULL),
                     HET_OK);
    if (strcmp(n, name) == 0)
      return i;
  }
  ck_abort_msg("tensor '%s' was not quantized", name);
  return 0;
}

static bool tensor_quantized(const het_quantizer *q, const char *name) {
  for (size_t i = 0; i < het_quantizer_get_tensor_count(q); i++) {
    const char *n;
    het_quantizer_get_tensor(q, i, &n, NULL, NULL, NULL, NULL);
    if (strcmp(n, name) == 0)
      return true;
  }
  return false;
}

/* Saves q's model to a temporary file and loads it back; caller destroys. */
static het_graph *save_and_load(het_quantizer *q) {
  char path[] = "/tmp/test_quant_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_msg(het_quantizer_save(q, path) == HET_OK, "%s", het_last_error());
  het_graph *g = NULL;
  ck_assert_msg(het_onnx_load_file(path, &g) == HET_OK, "%s", het_last_error());
  unlink(path);
  return g;
}

/* The node producing value name in g, or NULL. */
static const het_node *producer_of(het_graph *g, const char *name) {
  int v = het_graph_find_value(g, name);
  return v >= 0 && g->values[v].producer >= 0 ? &g->nodes[g->values[v].producer]
                                               : NULL;
}

static const het_node *node_named(het_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (strcmp(g->nodes[i].name, name) == 0)
      return &g->nodes[i];
  return NULL;
}

static int count_op(const het_graph *g, const char *op) {
  int n = 0;
  for (int i = 0; i < g->n_nodes; i++)
    n += strcmp(g->nodes[i].op_type, op) == 0;
  return n;
}

static const het_tensor *init_of(het_graph *g, int v) {
  ck_assert_int_ge(v, 0);
  ck_assert_ptr_nonnull(g->values[v].initializer);
  return g->values[v].initializer;
}

/* ---- calibration methods against hand-computed ranges ---- */

START_TEST(test_params_formula) {
  float s;
  int32_t zp;
  het_quant_params(-1, 3, HET_DTYPE_UINT8, &s, &zp);
  ck_assert_float_eq_tol(s, 4.0f / 255, 1e-9);
  ck_assert_int_eq(zp, 64); /* round(0 - (-1) / (4/255)) = round(63.75) */
  het_quant_params(-1, 3, HET_DTYPE_INT8, &s, &zp);
  ck_assert_int_eq(zp, -64); /* round(-128 + 63.75) */
  het_quant_params(0.5f, 2, HET_DTYPE_UINT8, &s, &zp); /* 0 joins the range */
  ck_assert_float_eq_tol(s, 2.0f / 255, 1e-9);
  ck_assert_int_eq(zp, 0);
  het_quant_params(-2, -0.5f, HET_DTYPE_UINT8, &s, &zp);
  ck_assert_float_eq_tol(s, 2.0f / 255, 1e-9);
  ck_assert_int_eq(zp, 255);
  het_quant_params(0, 0, HET_DTYPE_UINT8, &s, &zp); /* all zeros */
  ck_assert_float_eq(s, 1.0f);
  ck_assert_int_eq(zp, 0);
}
END_TEST

/* n values i / n, i = 0..n-1 (uniform on [0, 1)), then extra outliers. */
static void stats_of(het_quant_method m, int n, int outliers, float at,
                     bool negate_half, het_quant_stats *st) {
  float *x = malloc(((size_t)n + outliers) * sizeof *x);
  ck_assert_ptr_nonnull(x);
  for (int i = 0; i < n; i++)
    x[i] = (float)i / n * (negate_half && i % 2 ? -1.0f : 1.0f);
  for (int i = 0; i < outliers; i++)
    x[n + i] = at;
  memset(st, 0, sizeof *st);
  /* in two halves, as two calibration inputs would come */
  het_quant_stats_minmax(st, x, n / 2);
  het_quant_stats_minmax(st, x + n / 2, n - n / 2 + outliers);
  ck_assert_int_eq(het_quant_stats_hist_init(st, m), HET_OK);
  het_quant_stats_hist_add(st, m, x, n / 2);
  het_quant_stats_hist_add(st, m, x + n / 2, n - n / 2 + outliers);
  free(x);
}

START_TEST(test_minmax_by_hand) {
  het_quant_stats st;
  float lo, hi;
  float x[] = {0.5f, -1.25f, NAN, 3.0f, INFINITY, 2.0f};
  memset(&st, 0, sizeof st);
  het_quant_stats_minmax(&st, x, 3);
  het_quant_stats_minmax(&st, x + 3, 3);
  het_quant_stats_range(&st, HET_QUANT_MINMAX, 0, &lo, &hi);
  ck_assert_float_eq(lo, -1.25f); /* non-finite values are ignored */
  ck_assert_float_eq(hi, 3.0f);
  het_quant_stats_deinit(&st);
}
END_TEST

START_TEST(test_percentile_by_hand) {
  het_quant_stats st;
  float lo, hi;
  /* 100000 values on [0, 1): keeping 99% cuts 0.5% from each end, so the
   * range is [0.005, 0.995] to one bin (1 / 8192). */
  stats_of(HET_QUANT_PERCENTILE, 100000, 0, 0, false, &st);
  het_quant_stats_range(&st, HET_QUANT_PERCENTILE, 99.0, &lo, &hi);
  double bin = 1.0 / HET_QUANT_PERCENTILE_BINS;
  ck_assert_msg(fabs(lo - 0.005) <= bin && fabs(hi - 0.995) <= bin,
                "range [%g, %g]", lo, hi);
  het_quant_stats_deinit(&st);
  /* ten outliers at 1000 among 100000: 99.9% cuts 50 values per side, the
   * outliers and 40 more, so hi ends at the bin holding 0.9996. */
  stats_of(HET_QUANT_PERCENTILE, 100000, 10, 1000, false, &st);
  het_quant_stats_range(&st, HET_QUANT_PERCENTILE, 99.9, &lo, &hi);
  bin = 1000.0 / HET_QUANT_PERCENTILE_BINS;
  ck_assert_float_eq(lo, 0);
  ck_assert_msg(hi >= 0.9996 && hi <= 0.9996 + bin, "hi %g", hi);
  /* 100 keeps everything */
  het_quant_stats_range(&st, HET_QUANT_PERCENTILE, 100, &lo, &hi);
  ck_assert_float_eq(hi, 1000);
  het_quant_stats_deinit(&st);
}
END_TEST

START_TEST(test_entropy_by_hand) {
  het_quant_stats st;
  float lo, hi;
  /* Uniform values: clipping only loses information, the best threshold
   * is the top of the data. */
  stats_of(HET_QUANT_ENTROPY, 100000, 0, 0, false, &st);
  het_quant_stats_range(&st, HET_QUANT_ENTROPY, 0, &lo, &hi);
  ck_assert_float_eq(lo, 0);
  ck_assert_msg(hi > 0.97 && hi <= 1.0, "hi %g", hi);
  het_quant_stats_deinit(&st);
  /* Five outliers at 20: the threshold drops to the bulk (about 1), far
   * below the maximum, which minmax would keep.  (The lowest threshold
   * the method can pick is 256 of its bins: 1/64 of the maximum.) */
  stats_of(HET_QUANT_ENTROPY, 100000, 5, 20, false, &st);
  het_quant_stats_range(&st, HET_QUANT_ENTROPY, 0, &lo, &hi);
  ck_assert_msg(hi > 0.9 && hi < 1.1, "hi %g", hi);
  het_quant_stats_deinit(&st);
  /* Signed data: the threshold applies to both sides. */
  stats_of(HET_QUANT_ENTROPY, 100000, 5, -20, true, &st);
  het_quant_stats_range(&st, HET_QUANT_ENTROPY, 0, &lo, &hi);
  ck_assert_msg(lo < -0.9 && lo > -1.2 && hi > 0.9 && hi < 1.2,
                "range [%g, %g]", lo, hi);
  het_quant_stats_deinit(&st);
}
END_TEST

/* minmax through the whole quantizer: a = -1 + 4 i / 63, b = 2 i / 63 on
 * add.onnx give ranges [-1, 3] and [0, 2], z = a + b [-1, 5]. */
START_TEST(test_model_minmax_by_hand) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = open_quantizer(env, "add.onnx");
  ck_assert_int_eq(het_quantizer_set(q, "method", "minmax"), HET_OK);
  int64_t dims[2] = {1, 64};
  het_tensor *t[2] = {make_tensor(dims, 2), make_tensor(dims, 2)};
  float *a = het_tensor_get_data(t[0]), *b = het_tensor_get_data(t[1]);
  for (int i = 0; i < 64; i++) {
    a[i] = -1 + 4.0f * i / 63;
    b[i] = 2.0f * i / 63;
  }
  const char *names[2] = {"b", "a"};
  het_tensor *swapped[2] = {t[1], t[0]};
  ck_assert_int_eq(het_quantizer_add_input(q, false, names, swapped, 2), HET_OK);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  ck_assert_int_eq(het_quantizer_get_node_count(q), 2); /* Add, Mul */
  ck_assert_int_eq(het_quantizer_get_tensor_count(q), 4); /* a, b, z, y */
  float lo, hi, s;
  int32_t zp;
  het_quantizer_get_tensor(q, tensor_index(q, "a"), NULL, &lo, &hi, &s, &zp);
  ck_assert_float_eq_tol(lo, -1, 1e-6);
  ck_assert_float_eq_tol(hi, 3, 1e-6);
  ck_assert_float_eq_tol(s, 4.0f / 255, 1e-9);
  ck_assert_int_eq(zp, 64);
  het_quantizer_get_tensor(q, tensor_index(q, "b"), NULL, &lo, &hi, &s, &zp);
  ck_assert_float_eq_tol(s, 2.0f / 255, 1e-9);
  ck_assert_int_eq(zp, 0);
  het_quantizer_get_tensor(q, tensor_index(q, "z"), NULL, &lo, &hi, &s, &zp);
  ck_assert_float_eq_tol(lo, -1, 1e-6);
  ck_assert_float_eq_tol(hi, 5, 1e-5);
  /* round(0 - (-1) / (6/255)): 42.5 up to float rounding of the scale */
  ck_assert_int_eq(zp, (int32_t)nearbyint(1.0 / s));
  ck_assert(zp == 42 || zp == 43);
  /* the written model carries exactly these */
  het_graph *g = save_and_load(q);
  const het_tensor *sc = init_of(g, het_graph_find_value(g, "a_scale"));
  const het_tensor *zt = init_of(g, het_graph_find_value(g, "a_zero_point"));
  ck_assert_int_eq(sc->rank, 0);
  ck_assert_float_eq_tol(*(float *)sc->data, 4.0f / 255, 1e-9);
  ck_assert_int_eq(zt->dtype, HET_DTYPE_UINT8);
  ck_assert_int_eq(*(uint8_t *)zt->data, 64);
  /* the model output y stays its name, now made by a DequantizeLinear */
  ck_assert_str_eq(producer_of(g, "y")->op_type, "DequantizeLinear");
  ck_assert_str_eq(producer_of(g, "y_float")->op_type, "Mul");
  het_graph_destroy(g);
  het_tensor_destroy(t[0]);
  het_tensor_destroy(t[1]);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

/* ---- the QDQ model ---- */

/* cnn.onnx calibrated on 12 random inputs, 6 more held apart. */
static het_quantizer *calibrated_cnn(het_env *env, const char *model,
                                     const char *method) {
  het_quantizer *q = open_quantizer(env, model);
  ck_assert_int_eq(het_quantizer_set(q, "method", method), HET_OK);
  int64_t dims[4] = {1, 3, 16, 16};
  rng_state = 0x1234567;
  add_random(q, false, 12, "x", dims, 4);
  add_random(q, true, 6, "x", dims, 4);
  ck_assert_msg(het_quantizer_calibrate(q) == HET_OK, "%s", het_last_error());
  return q;
}

/* Checks the per-channel int8 weight behind node input 1: scale[c] =
 * max |W along axis| / 127 from the float model, values in [-127, 127]
 * reproducing W within half a step. */
static void check_weight(het_graph *g, het_graph *fg, const char *node,
                         const char *w, int axis, const float **scales) {
  const het_node *n = node_named(g, node);
  ck_assert_ptr_nonnull(n);
  const het_node *dq = producer_of(g, g->values[n->inputs[1]].name);
  ck_assert_ptr_nonnull(dq);
  ck_assert_str_eq(dq->op_type, "DequantizeLinear");
  ck_assert_int_eq(het_node_attr_int(dq, "axis", 1), axis);
  const het_tensor *wq = init_of(g, dq->inputs[0]);
  const het_tensor *ws = init_of(g, dq->inputs[1]);
  const het_tensor *wf = init_of(fg, het_graph_find_value(fg, w));
  ck_assert_int_eq(wq->dtype, HET_DTYPE_INT8);
  int64_t c = wf->dims[axis], inner = 1, outer = 1;
  for (int d = axis + 1; d < wf->rank; d++)
    inner *= wf->dims[d];
  for (int d = 0; d < axis; d++)
    outer *= wf->dims[d];
  ck_assert_int_eq(het_tensor_count(ws), c);
  const float *x = wf->data, *s = ws->data;
  const int8_t *qd = wq->data;
  for (int64_t k = 0; k < c; k++) {
    float amax = 0;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++)
        amax = fmaxf(amax, fabsf(x[(o * c + k) * inner + i]));
    ck_assert_float_eq_tol(s[k], amax / 127, 1e-9);
    for (int64_t o = 0; o < outer; o++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t at = (o * c + k) * inner + i;
        ck_assert_int_ge(qd[at], -127);
        ck_assert(fabsf(qd[at] * s[k] - x[at]) <= s[k] / 2 + 1e-7f);
      }
  }
  /* the float weight is gone from the model */
  ck_assert_int_lt(het_graph_find_value(g, w), 0);
  *scales = s;
}

/* Bias behind node input 2: int32 with scale x_scale * w_scale[c]. */
static void check_bias(het_graph *g, het_graph *fg, const char *node,
                       const char *b, float x_scale, const float *w_scales) {
  const het_node *n = node_named(g, node);
  const het_node *dq = producer_of(g, g->values[n->inputs[2]].name);
  ck_assert_ptr_nonnull(dq);
  ck_assert_int_eq(het_node_attr_int(dq, "axis", 1), 0);
  const het_tensor *bq = init_of(g, dq->inputs[0]);
  const het_tensor *bs = init_of(g, dq->inputs[1]);
  const het_tensor *bf = init_of(fg, het_graph_find_value(fg, b));
  ck_assert_int_eq(bq->dtype, HET_DTYPE_INT32);
  for (int64_t c = 0; c < het_tensor_count(bf); c++) {
    float s = ((const float *)bs->data)[c];
    ck_assert_float_eq_tol(s, x_scale * w_scales[c], 1e-12);
    ck_assert_int_eq(((const int32_t *)bq->data)[c],
                     (int32_t)nearbyint(((const float *)bf->data)[c] / ((double)x_scale * w_scales[c])));
  }
}

START_TEST(test_cnn_structure) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = calibrated_cnn(env, "cnn.onnx", "minmax");
  ck_assert_int_eq(het_quantizer_get_warning_count(q), 0);
  /* conv1, pool1, conv2, add, gap, fc */
  ck_assert_int_eq(het_quantizer_get_node_count(q), 6);
  /* Conv+Relu and Add+Relu quantize after the Relu; Flatten's output is
   * the Gemm's input; the model output too. */
  const char *quantized[] = {"x", "r1", "p1", "c2", "r2", "g", "f", "y"};
  ck_assert_int_eq(het_quantizer_get_tensor_count(q), CASE_COUNT(quantized));
  for (int i = 0; i < CASE_COUNT(quantized); i++)
    tensor_index(q, quantized[i]);
  ck_assert(!tensor_quantized(q, "c1") && !tensor_quantized(q, "s"));
  het_graph *g = save_and_load(q), *fg = NULL;
  ck_assert_int_eq(het_onnx_load_file(QDIR "cnn.onnx", &fg), HET_OK);
  ck_assert_int_eq(count_op(g, "QuantizeLinear"), 8);
  ck_assert_int_eq(count_op(g, "DequantizeLinear"), 8 + 3 + 3);
  const float *ws;
  float xs;
  check_weight(g, fg, "conv1", "w1", 0, &ws);
  het_quantizer_get_tensor(q, tensor_index(q, "x"), NULL, NULL, NULL, &xs, NULL);
  check_bias(g, fg, "conv1", "b1", xs, ws);
  check_weight(g, fg, "conv2", "w2", 0, &ws);
  het_quantizer_get_tensor(q, tensor_index(q, "p1"), NULL, NULL, NULL, &xs, NULL);
  check_bias(g, fg, "conv2", "b2", xs, ws);
  check_weight(g, fg, "fc", "wf", 0, &ws); /* transB=1: [N, K], axis 0 */
  het_quantizer_get_tensor(q, tensor_index(q, "f"), NULL, NULL, NULL, &xs, NULL);
  check_bias(g, fg, "fc", "bf", xs, ws);
  /* the Relu reads the Conv's float output; the MaxPool the Relu's DQ */
  ck_assert_str_eq(g->values[node_named(g, "relu1")->inputs[0]].name, "c1");
  ck_assert_str_eq(producer_of(g, g->values[node_named(g, "pool1")->inputs[0]].name)->op_type,
                   "DequantizeLinear");
  het_graph_destroy(g);
  het_graph_destroy(fg);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_cnn_accuracy) {
  static const char *const methods[] = {"minmax", "percentile", "entropy"};
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = calibrated_cnn(env, "cnn.onnx", methods[_i]);
  char *report = NULL;
  ck_assert_msg(het_quantizer_evaluate(q, &report) == HET_OK, "%s", het_last_error());
  ck_assert_int_eq(het_quantizer_get_output_count(q), 1);
  het_quant_accuracy a;
  ck_assert_int_eq(het_quantizer_get_accuracy(q, 0, &a), HET_OK);
  ck_assert_str_eq(a.name, "y");
  ck_assert_msg(a.cosine >= 0.99 && a.min_cosine >= 0.98 && a.min_cosine <= a.cosine + 1e-12,
                "%s: cosine %g (worst %g)\n%s", methods[_i], a.cosine, a.min_cosine, report);
  ck_assert(a.max_abs_error > 0); /* quantization is not exact */
  ck_assert(a.max_rel_error > 0 && a.max_rel_error < 0.1);
  ck_assert_int_eq(a.top1_total, 6); /* [1, 10] per held-apart input */
  ck_assert_uint_le(a.top1_agree, a.top1_total);
  for (size_t i = 0; i < het_quantizer_get_tensor_count(q); i++) {
    double db;
    ck_assert_int_eq(het_quantizer_get_sqnr(q, i, &db), HET_OK);
    ck_assert_msg(db > 20 && db < 80, "%s: tensor %zu SQNR %g dB", methods[_i], i, db);
  }
  ck_assert_ptr_nonnull(strstr(report, "output 'y': cosine"));
  ck_assert_ptr_nonnull(strstr(report, "top-1 agreement"));
  ck_assert_ptr_nonnull(strstr(report, "worst 8 of 8 quantized tensors by SQNR"));
  het_string_destroy(report);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

/* The QDQ model runs in hetrt and its output is the simulated quantized
 * one: on the output's grid, within a few steps of the float model. */
START_TEST(test_qdq_model_runs) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = calibrated_cnn(env, "cnn.onnx", "percentile");
  char path[] = "/tmp/test_quant_run_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  close(fd);
  ck_assert_int_eq(het_quantizer_save(q, path), HET_OK);
  het_session *sq, *sf;
  ck_assert_msg(het_session_create(env, path, NULL, &sq) == HET_OK, "%s", het_last_error());
  ck_assert_int_eq(het_session_create(env, QDIR "cnn.onnx", NULL, &sf), HET_OK);
  unlink(path);
  het_tensor *x = case_pattern_input(sf), *yq = NULL, *yf = NULL;
  const char *name = "x";
  ck_assert_int_eq(het_session_run(sq, &name, &x, 1, NULL, 1, &yq), HET_OK);
  ck_assert_int_eq(het_session_run(sf, &name, &x, 1, NULL, 1, &yf), HET_OK);
  float ys;
  int32_t yz;
  het_quantizer_get_tensor(q, tensor_index(q, "y"), NULL, NULL, NULL, &ys, &yz);
  /* every output value is on the output's grid */
  const float *v = het_tensor_get_data(yq);
  for (int i = 0; i < 10; i++) {
    double steps = v[i] / ys;
    ck_assert_msg(fabs(steps - nearbyint(steps)) < 1e-3, "y[%d] = %g is off the grid", i, v[i]);
  }
  /* and within a few steps of the float output clamped to the grid's
   * range (this input is not one calibration saw: it may saturate) */
  const float *w = het_tensor_get_data(yf);
  float glo = ys * (0 - yz), ghi = ys * (255 - yz);
  for (int i = 0; i < 10; i++) {
    float want = fminf(ghi, fmaxf(glo, w[i]));
    ck_assert_msg(fabsf(v[i] - want) <= 8 * ys, "y[%d]: quantized %g, float %g (grid [%g, %g])",
                  i, v[i], w[i], glo, ghi);
  }
  het_tensor_destroy(x);
  het_tensor_destroy(yq);
  het_tensor_destroy(yf);
  het_session_destroy(sq);
  het_session_destroy(sf);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_matmul_per_channel) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = open_quantizer(env, "matmul.onnx");
  int64_t dims[2] = {2, 32};
  rng_state = 99;
  add_random(q, false, 4, "x", dims, 2);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  het_graph *g = save_and_load(q), *fg = NULL;
  ck_assert_int_eq(het_onnx_load_file(QDIR "matmul.onnx", &fg), HET_OK);
  const float *ws;
  check_weight(g, fg, "mm", "W", 1, &ws); /* [K, N]: one scale per column */
  ck_assert(ws[3] > 5 * ws[2]);           /* the wide column has its own */
  het_graph_destroy(g);
  /* per_channel=false: one scale */
  ck_assert_int_eq(het_quantizer_set(q, "per_channel", "false"), HET_OK);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  g = save_and_load(q);
  const het_node *dq = producer_of(g, g->values[node_named(g, "mm")->inputs[1]].name);
  ck_assert_int_eq(init_of(g, dq->inputs[1])->rank, 0);
  ck_assert_ptr_null(het_node_find_attr(dq, "axis"));
  het_graph_destroy(g);
  het_graph_destroy(fg);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

/* mode=dynamic: y = x @ W becomes DynamicQuantizeLinear(x) ->
 * MatMulInteger(int8 W per column) -> Cast -> Mul(x_scale * w_scale), the
 * output keeping its name; no calibration input is needed. */
START_TEST(test_dynamic_matmul) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = open_quantizer(env, "matmul.onnx");
  ck_assert_int_eq(het_quantizer_set(q, "mode", "dynamic"), HET_OK);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  ck_assert_int_eq(het_quantizer_get_node_count(q), 1);
  ck_assert_int_eq(het_quantizer_get_tensor_count(q), 0);
  het_graph *g = save_and_load(q), *fg = NULL;
  ck_assert_int_eq(het_onnx_load_file(QDIR "matmul.onnx", &fg), HET_OK);
  ck_assert_int_eq(count_op(g, "DynamicQuantizeLinear"), 1);
  ck_assert_int_eq(count_op(g, "MatMulInteger"), 1);
  ck_assert_int_eq(count_op(g, "MatMul"), 0);
  const het_node *mul = producer_of(g, "y");
  ck_assert_str_eq(mul->op_type, "Mul");
  const het_node *mi = producer_of(g, g->values[producer_of(g, g->values[mul->inputs[0]].name)->inputs[0]].name);
  ck_assert_str_eq(mi->op_type, "MatMulInteger");
  const het_tensor *wq = init_of(g, mi->inputs[1]), *wz = init_of(g, mi->inputs[3]);
  ck_assert_int_eq(wq->dtype, HET_DTYPE_INT8);
  ck_assert_int_eq(het_tensor_count(wz), 16); /* one zero point per column */
  ck_assert_int_lt(het_graph_find_value(g, "W"), 0);
  het_graph_destroy(g);
  het_graph_destroy(fg);
  int64_t dims[2] = {2, 32};
  rng_state = 17;
  add_random(q, true, 3, "x", dims, 2);
  ck_assert_msg(het_quantizer_evaluate(q, NULL) == HET_OK, "%s", het_last_error());
  het_quant_accuracy a;
  ck_assert_int_eq(het_quantizer_get_accuracy(q, 0, &a), HET_OK);
  ck_assert_msg(a.cosine > 0.999 && a.max_abs_error > 0, "cosine %g", a.cosine);
  ck_assert_int_eq(het_quantizer_set(q, "mode", "fast"), HET_ERR_INVALID_ARGUMENT);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_int8_activations) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = open_quantizer(env, "cnn.onnx");
  ck_assert_int_eq(het_quantizer_set(q, "activation_type", "int8"), HET_OK);
  int64_t dims[4] = {1, 3, 16, 16};
  rng_state = 5;
  add_random(q, false, 3, "x", dims, 4);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  het_graph *g = save_and_load(q);
  const het_tensor *z = init_of(g, het_graph_find_value(g, "r1_zero_point"));
  ck_assert_int_eq(z->dtype, HET_DTYPE_INT8);
  ck_assert_int_eq(*(int8_t *)z->data, -128); /* a Relu's output: [0, hi] */
  het_graph_destroy(g);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

START_TEST(test_opset_rules) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  /* opset 11: per-tensor weights, said in a warning */
  het_quantizer *q = calibrated_cnn(env, "cnn11.onnx", "minmax");
  ck_assert_int_eq(het_quantizer_get_warning_count(q), 1);
  ck_assert_ptr_nonnull(strstr(het_quantizer_get_warning(q, 0), "opset 11"));
  het_graph *g = save_and_load(q);
  const het_node *dq = producer_of(g, g->values[node_named(g, "conv1")->inputs[1]].name);
  ck_assert_int_eq(init_of(g, dq->inputs[1])->rank, 0);
  ck_assert_int_eq(het_graph_opset(g, ""), 11);
  het_graph_destroy(g);
  het_quantizer_destroy(q);
  /* opset 9 has no QuantizeLinear */
  q = NULL;
  ck_assert_int_eq(het_quantizer_create(env, QDIR "cnn9.onnx", NULL, &q), HET_ERR_UNSUPPORTED);
  ck_assert_ptr_null(q);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "opset 9"));
  ck_assert_ptr_nonnull(strstr(het_last_error(), "cnn9.onnx"));
  het_env_destroy(env);
}
END_TEST

START_TEST(test_exclusions) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = open_quantizer(env, "cnn.onnx");
  ck_assert_int_eq(het_quantizer_set(q, "exclude_op_types", "Gemm,MaxPool"), HET_OK);
  ck_assert_int_eq(het_quantizer_set(q, "exclude_nodes", "conv*"), HET_OK);
  int64_t dims[4] = {1, 3, 16, 16};
  add_random(q, false, 2, "x", dims, 4);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  ck_assert_int_eq(het_quantizer_get_node_count(q), 2); /* add, gap */
  het_graph *g = save_and_load(q);
  for (int i = 0; i < g->n_nodes; i++) {
    const het_node *n = &g->nodes[i];
    if (strcmp(n->op_type, "Conv") && strcmp(n->op_type, "Gemm"))
      continue;
    const het_node *w = producer_of(g, g->values[n->inputs[1]].name);
    ck_assert_msg(!w, "%s's weight was quantized", n->name);
  }
  ck_assert(!tensor_quantized(q, "x") && tensor_quantized(q, "c2"));
  het_graph_destroy(g);
  het_quantizer_destroy(q);
  het_env_destroy(env);
}
END_TEST

/* ---- misuse: clean statuses, the quantizer stays usable ---- */

START_TEST(test_errors) {
  het_env *env;
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  het_quantizer *q = NULL;
  ck_assert_int_eq(het_quantizer_create(NULL, "m", NULL, &q), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_quantizer_create(env, QDIR "missing.onnx", NULL, &q), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "missing.onnx"));
  q = open_quantizer(env, "add.onnx");
  struct {
    const char *key, *value, *word;
  } bad[] = {{"methd", "minmax", "unknown quantize option 'methd'"},
             {"method", "kl", "unknown method 'kl'"},
             {"percentile", "10", "(50, 100]"},
             {"percentile", "99x", "(50, 100]"},
             {"per_channel", "yes", "not true or false"},
             {"activation_type", "uint4", "expected uint8 or int8"}};
  for (int i = 0; i < CASE_COUNT(bad); i++) {
    ck_assert_int_eq(het_quantizer_set(q, bad[i].key, bad[i].value), HET_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(het_last_error(), bad[i].word), "%s", het_last_error());
  }
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no calibration inputs"));
  ck_assert_int_eq(het_quantizer_save(q, "/tmp/never.onnx"), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_quantizer_evaluate(q, NULL), HET_ERR_INVALID_ARGUMENT);
  int64_t dims[2] = {1, 64};
  het_tensor *t = make_tensor(dims, 2), *ti = NULL;
  memset(het_tensor_get_data(t), 0, het_tensor_get_nbytes(t));
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_INT32, dims, 2, &ti), HET_OK);
  const char *ab[2] = {"a", "b"}, *ac[2] = {"a", "c"}, *aa[2] = {"a", "a"};
  het_tensor *tt[2] = {t, t}, *tw[2] = {t, ti};
  ck_assert_int_eq(het_quantizer_add_input(q, false, ab, tt, 1), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "input 'b' is missing"));
  ck_assert_int_eq(het_quantizer_add_input(q, false, ac, tt, 2), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no input 'c'"));
  ck_assert_int_eq(het_quantizer_add_input(q, false, aa, tt, 2), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_quantizer_add_input(q, false, ab, tw, 2), HET_ERR_TYPE);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "'b' is int32"));
  ck_assert_int_eq(het_quantizer_add_input(q, false, ab, NULL, 2), HET_ERR_INVALID_ARGUMENT);
  /* still usable: a good input, calibration, save to a missing folder */
  ck_assert_int_eq(het_quantizer_add_input(q, false, ab, tt, 2), HET_OK);
  ck_assert_int_eq(het_quantizer_calibrate(q), HET_OK);
  ck_assert_int_eq(het_quantizer_save(q, "/nonexistent-dir/q.onnx"), HET_ERR_IO);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "/nonexistent-dir/q.onnx"));
  ck_assert_int_eq(het_quantizer_evaluate(q, NULL), HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_nonnull(strstr(het_last_error(), "no evaluation inputs"));
  het_quant_accuracy a;
  ck_assert_int_eq(het_quantizer_get_accuracy(q, 0, &a), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_quantizer_get_accuracy(q, 5, &a), HET_ERR_INVALID_ARGUMENT);
  ck_assert_int_eq(het_quantizer_get_tensor(q, 99, NULL, NULL, NULL, NULL, NULL),
                   HET_ERR_INVALID_ARGUMENT);
  ck_assert_ptr_null(het_quantizer_get_warning(q, 0));
  het_tensor_destroy(t);
  het_tensor_destroy(ti);
  het_quantizer_destroy(q);
  het_quantizer_destroy(NULL);
  het_env_destroy(env);
}
END_TEST

int main(void) {
  Suite *s = suite_create("quant");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_params_formula);
  tcase_add_test(tc, test_minmax_by_hand);
  tcase_add_test(tc, test_percentile_by_hand);
  tcase_add_test(tc, test_entropy_by_hand);
  tcase_add_test(tc, test_model_minmax_by_hand);
  tcase_add_test(tc, test_cnn_structure);
  tcase_add_loop_test(tc, test_cnn_accuracy, 0, 3);
  tcase_add_test(tc, test_qdq_model_runs);
  tcase_add_test(tc, test_matmul_per_channel);
  tcase_add_test(tc, test_int8_activations);
  tcase_add_test(tc, test_dynamic_matmul);
  tcase_add_test(tc, test_opset_rules);
  suite_add_tcase(s, tc);
  TCase *te = tcase_create("errors");
  tcase_add_test(te, test_exclusions);
  tcase_add_test(te, test_errors);
  suite_add_tcase(s, te);
  return case_run_suite(s);
}
