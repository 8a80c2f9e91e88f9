/* quantizer.c — the het_quantizer object: the float model, the options,
 * the caller's calibration and evaluation inputs, and calibration (pass 1
 * ranges, pass 2 histograms for the histogram methods) and saving.
 * Invariant: tensors[i].scale/zero_point are valid once calibrated is
 * set; het_quantizer_set clears calibrated (the choice may change).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx/loader.h"
#include "quant/quant_api.h"
#include "quant/quant_internal.h"
#include "session/session_api.h"

#define HET_QUANT_MAX_MODEL_BYTES ((size_t)2 << 30)

void het_quant_warn(het_quantizer *q, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  char **w = realloc(q->warnings, ((size_t)q->n_warnings + 1) * sizeof *w);
  if (!w)
    return;
  q->warnings = w;
  if ((w[q->n_warnings] = strdup(msg)))
    q->n_warnings++;
}

static het_status het_quant_inputs_init(het_quantizer *q) {
  het_graph *g = q->g;
  q->input_names = calloc((size_t)g->n_inputs + 1, sizeof *q->input_names);
  if (!q->input_names)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int i = 0; i < g->n_inputs; i++) {
    const het_value *v = &g->values[g->inputs[i]];
    if (!(v->flags & HET_VALUE_INITIALIZER))
      q->input_names[q->n_inputs++] = v->name;
  }
  return HET_OK;
}

het_status het_quantizer_create_impl(het_env *env, const char *path,
                                     const het_session_options *options,
                                     het_quantizer **out) {
  het_quantizer *q = calloc(1, sizeof *q);
  if (!q)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  q->env = env;
  q->session_options = options;
  q->method = HET_QUANT_PERCENTILE;
  q->percentile = 99.999;
  q->per_channel = true;
  q->act_type = HET_DTYPE_UINT8;
  het_status st = HET_ERR_OUT_OF_MEMORY;
  q->path = strdup(path);
  q->base_dir = strdup(path);
  if (!q->path || !q->base_dir) {
    st = het_error(st, "quantize: out of memory");
    goto fail;
  }
  char *slash = strrchr(q->base_dir, '/');
  if (slash)
    slash[slash == q->base_dir ? 1 : 0] = '\0';
  else
    strcpy(q->base_dir, ".");
  st = het_read_file(path, HET_QUANT_MAX_MODEL_BYTES, &q->model,
                     &q->model_size);
  if (st == HET_OK)
    st = het_quant_load(q, &q->g);
  if (st == HET_OK)
    st = het_graph_infer_shapes(q->g);
  if (st != HET_OK)
    goto fail;
  q->opset = (int)het_graph_opset(q->g, "");
  if (q->opset < 10) {
    st = het_error(HET_ERR_UNSUPPORTED,
                   "%s: the model imports opset %d of the default domain; "
                   "QuantizeLinear needs opset 10 (13 for per-channel "
                   "weights): convert it first (onnx.version_converter)",
                   path, q->opset);
    goto fail;
  }
  st = het_quant_inputs_init(q);
  if (st != HET_OK)
    goto fail;
  *out = q;
  return HET_OK;
fail:
  het_quantizer_destroy_impl(q);
  return st;
}

static void het_quant_rows_free(het_tensor **rows, size_t n, int width) {
  for (size_t i = 0; rows && i < n * (size_t)width; i++)
    het_tensor_destroy(rows[i]);
  free(rows);
}

static void het_quant_choice_clear(het_quantizer *q) {
  for (int i = 0; i < q->n_tensors; i++)
    het_quant_stats_deinit(&q->tensors[i].stats);
  free(q->tensors);
  free(q->nodes);
  free(q->accuracy);
  q->tensors = NULL;
  q->nodes = NULL;
  q->accuracy = NULL;
  q->n_tensors = q->n_nodes = q->n_accuracy = 0;
  q->calibrated = q->evaluated = false;
}

void het_quantizer_destroy_impl(het_quantizer *q) {
  het_quant_choice_clear(q);
  het_quant_rows_free(q->calib, q->n_calib, q->n_inputs);
  het_quant_rows_free(q->eval, q->n_eval, q->n_inputs);
  for (int i = 0; i < q->n_warnings; i++)
    free(q->warnings[i]);
  free(q->warnings);
  free(q->input_names);
  het_graph_destroy(q->g);
  free(q->model);
  free(q->path);
  free(q->base_dir);
  free(q->exclude_ops);
  free(q->exclude_nodes);
  free(q);
}

static het_status het_quant_set_bool(const char *key, const char *v,
                                     bool *out) {
  if (strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
    *out = true;
  else if (strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
    *out = false;
  else
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize option %s: '%s' is not true or false", key, v);
  return HET_OK;
}

static het_status het_quant_set_text(char **slot, const char *v) {
  char *copy = v[0] ? strdup(v) : NULL;
  if (v[0] && !copy)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  free(*slot);
  *slot = copy;
  return HET_OK;
}

het_status het_quantizer_set_impl(het_quantizer *q, const char *key,
                                  const char *v) {
  het_quant_choice_clear(q);
  if (strcmp(key, "method") == 0) {
    if (strcmp(v, "minmax") == 0)
      q->method = HET_QUANT_MINMAX;
    else if (strcmp(v, "percentile") == 0)
      q->method = HET_QUANT_PERCENTILE;
    else if (strcmp(v, "entropy") == 0)
      q->method = HET_QUANT_ENTROPY;
    else
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "quantize option method: unknown method '%s' "
                       "(expected minmax, percentile or entropy)", v);
    return HET_OK;
  }
  if (strcmp(key, "percentile") == 0) {
    char *end;
    errno = 0;
    double p = strtod(v, &end);
    if (errno || end == v || *end || !(p > 50 && p <= 100))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "quantize option percentile: '%s' is not a number in "
                       "(50, 100]", v);
    q->percentile = p;
    return HET_OK;
  }
  if (strcmp(key, "mode") == 0) {
    if (strcmp(v, "static") != 0 && strcmp(v, "dynamic") != 0)
      return het_error(HET_ERR_INVALID_ARGUMENT, "quantize option mode: '%s' "
                       "(expected static or dynamic)", v);
    q->dynamic = strcmp(v, "dynamic") == 0;
    return HET_OK;
  }
  if (strcmp(key, "per_channel") == 0)
    return het_quant_set_bool(key, v, &q->per_channel);
  if (strcmp(key, "activation_type") == 0) {
    if (strcmp(v, "uint8") == 0)
      q->act_type = HET_DTYPE_UINT8;
    else if (strcmp(v, "int8") == 0)
      q->act_type = HET_DTYPE_INT8;
    else
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "quantize option activation_type: '%s' (expected "
                       "uint8 or int8)", v);
    return HET_OK;
  }
  if (strcmp(key, "exclude_op_types") == 0)
    return het_quant_set_text(&q->exclude_ops, v);
  if (strcmp(key, "exclude_nodes") == 0)
    return het_quant_set_text(&q->exclude_nodes, v);
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "unknown quantize option '%s' (expected mode, method, "
                   "percentile, per_channel, activation_type, "
                   "exclude_op_types, exclude_nodes)", key);
}

/* Row of n_inputs clones in model input order from the caller's named
 * tensors: every model input exactly once, of the model's dtype. */
static het_status het_quant_row(const het_quantizer *q,
                                const char *const *names,
                                het_tensor *const *tensors, size_t n,
                                het_tensor **row) {
  for (size_t k = 0; k < n; k++) {
    int i = 0;
    while (i < q->n_inputs && strcmp(q->input_names[i], names[k]) != 0)
      i++;
    if (i == q->n_inputs)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s: the model has no input '%s'", q->path, names[k]);
    if (row[i])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "quantize: input '%s' given twice", names[k]);
    int v = het_graph_find_value(q->g, names[k]);
    het_dtype want = q->g->values[v].dtype;
    if (want != HET_DTYPE_UNDEFINED && tensors[k]->dtype != want)
      return het_error(HET_ERR_TYPE, "quantize: input '%s' is %s, the model "
                       "takes %s", names[k], het_dtype_str(tensors[k]->dtype),
                       het_dtype_str(want));
    HET_TRY(het_tensor_clone(tensors[k], &row[i]));
  }
  for (int i = 0; i < q->n_inputs; i++)
    if (!row[i])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "quantize: input '%s' is missing", q->input_names[i]);
  return HET_OK;
}

het_status het_quantizer_add_input_impl(het_quantizer *q, bool evaluation,
                                        const char *const *names,
                                        het_tensor *const *tensors,
                                        size_t n) {
  het_tensor ***rows = evaluation ? &q->eval : &q->calib;
  size_t *count = evaluation ? &q->n_eval : &q->n_calib;
  size_t *cap = evaluation ? &q->cap_eval : &q->cap_calib;
  size_t width = (size_t)q->n_inputs;
  if (*count == *cap) {
    size_t nc = *cap ? 2 * *cap : 16;
    het_tensor **r = realloc(*rows, nc * (width ? width : 1) * sizeof *r);
    if (!r)
      return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
    *rows = r;
    *cap = nc;
  }
  het_tensor **row = *rows + *count * width;
  memset(row, 0, width * sizeof *row);
  het_status st = het_quant_row(q, names, tensors, n, row);
  if (st != HET_OK) {
    for (size_t i = 0; i < width; i++)
      het_tensor_destroy(row[i]);
    return st;
  }
  (*count)++;
  return HET_OK;
}

void het_quantizer_set_progress_impl(het_quantizer *q,
                                     het_quantizer_progress_fn fn,
                                     void *ctx) {
  q->progress = fn;
  q->progress_ctx = ctx;
}

/* One calibration pass over every calibration input: pass 1 widens the
 * ranges, pass 2 fills the histograms. */
static het_status het_quant_pass(het_quantizer *q, het_session *s,
                                 const char **names, int pass) {
  het_tensor **outs = calloc((size_t)q->n_tensors + 1, sizeof *outs);
  if (!outs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  het_status st = HET_OK;
  for (size_t r = 0; r < q->n_calib && st == HET_OK; r++) {
    st = het_quant_run(q, s, q->calib + r * q->n_inputs, names, q->n_tensors,
                       outs);
    for (int i = 0; st == HET_OK && i < q->n_tensors; i++) {
      het_quant_stats *stt = &q->tensors[i].stats;
      const float *x = outs[i]->data;
      int64_t n = het_tensor_count(outs[i]);
      if (pass == 1)
        het_quant_stats_minmax(stt, x, n);
      else
        het_quant_stats_hist_add(stt, q->method, x, n);
    }
    for (int i = 0; i < q->n_tensors; i++) {
      het_tensor_destroy(outs[i]);
      outs[i] = NULL;
    }
    if (st == HET_OK && q->progress)
      q->progress(q->progress_ctx, pass == 1 ? "calibrate: ranges"
                                             : "calibrate: histograms",
                  r + 1, q->n_calib);
  }
  free(outs);
  return st;
}

static het_status het_quant_calibrate_runs(het_quantizer *q, het_graph *g,
                                           const char **names) {
  int *values = malloc(((size_t)q->n_tensors + 1) * sizeof *values);
  if (!values)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int i = 0; i < q->n_tensors; i++) {
    values[i] = q->tensors[i].value;
    names[i] = q->tensors[i].name;
  }
  het_session *s = NULL;
  het_status st = het_quant_add_outputs(g, values, q->n_tensors);
  free(values);
  if (st == HET_OK)
    st = het_quant_open(q, g, &s);
  if (st == HET_OK)
    st = het_quant_pass(q, s, names, 1);
  for (int i = 0; st == HET_OK && i < q->n_tensors; i++)
    st = het_quant_stats_hist_init(&q->tensors[i].stats, q->method);
  if (st == HET_OK && q->method != HET_QUANT_MINMAX)
    st = het_quant_pass(q, s, names, 2);
  het_session_destroy_impl(s);
  return st;
}

/* Dynamic mode: the choice alone; scales come at run time. */
static het_status het_quant_choose_dynamic(het_quantizer *q) {
  if (q->opset < 11)
    return het_error(HET_ERR_UNSUPPORTED, "%s: the model imports opset %d; "
                     "dynamic quantization needs DynamicQuantizeLinear "
                     "(opset 11)", q->path, q->opset);
  HET_TRY(het_quant_select(q));
  if (q->n_nodes == 0)
    het_quant_warn(q, "no MatMul with a constant weight: the model is "
                   "written unchanged");
  q->calibrated = true;
  return HET_OK;
}

het_status het_quantizer_calibrate_impl(het_quantizer *q) {
  if (q->dynamic) {
    het_quant_choice_clear(q);
    return het_quant_choose_dynamic(q);
  }
  if (q->n_calib == 0)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize: no calibration inputs were added");
  het_quant_choice_clear(q);
  if (q->per_channel && q->opset < 13)
    het_quant_warn(q, "the model imports opset %d: weights get one scale "
                   "per tensor (per-channel scales need opset 13)", q->opset);
  HET_TRY(het_quant_select(q));
  if (q->n_tensors == 0) {
    het_quant_warn(q, "no node of the model can be quantized: the model is "
                   "written unchanged");
    q->calibrated = true;
    return HET_OK;
  }
  het_graph *g = NULL;
  const char **names = calloc((size_t)q->n_tensors + 1, sizeof *names);
  het_status st = names ? het_quant_load(q, &g)
                        : het_error(HET_ERR_OUT_OF_MEMORY,
                                    "quantize: out of memory");
  if (st == HET_OK)
    st = het_quant_calibrate_runs(q, g, names);
  free(names);
  het_graph_destroy(g);
  if (st != HET_OK) {
    het_quant_choice_clear(q);
    return st;
  }
  /* A model output is never clipped: the caller sees its values. */
  for (int i = 0; i < q->n_tensors; i++) {
    het_quant_tensor *t = &q->tensors[i];
    bool output = q->g->values[t->value].flags & HET_VALUE_GRAPH_OUTPUT;
    het_quant_stats_range(&t->stats, output ? HET_QUANT_MINMAX : q->method,
                          q->percentile, &t->lo, &t->hi);
    het_quant_params(t->lo, t->hi, q->act_type, &t->scale, &t->zero_point);
  }
  q->calibrated = true;
  return HET_OK;
}

het_status het_quantizer_save_impl(het_quantizer *q, const char *path) {
  if (!q->calibrated)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "quantize: het_quantizer_calibrate must run before "
                     "het_quantizer_save");
  het_graph *g;
  HET_TRY(het_quant_load(q, &g));
  het_status st = het_quant_rewrite(q, g, NULL);
  if (st == HET_OK)
    st = het_onnx_save_file(g, path);
  het_graph_destroy(g);
  return st;
}

size_t het_quantizer_get_node_count_impl(const het_quantizer *q) {
  return q->calibrated ? (size_t)q->n_nodes : 0;
}

size_t het_quantizer_get_tensor_count_impl(const het_quantizer *q) {
  return q->calibrated ? (size_t)q->n_tensors : 0;
}

het_status het_quantizer_get_tensor_impl(const het_quantizer *q, size_t index,
                                         const char **name, float *lo,
                                         float *hi, float *scale,
                                         int32_t *zero_point) {
  const het_quant_tensor *t = &q->tensors[index];
  if (name)
    *name = t->name;
  if (lo)
    *lo = t->lo;
  if (hi)
    *hi = t->hi;
  if (scale)
    *scale = t->scale;
  if (zero_point)
    *zero_point = t->zero_point;
  return HET_OK;
}

size_t het_quantizer_get_warning_count_impl(const het_quantizer *q) {
  return (size_t)q->n_warnings;
}

const char *het_quantizer_get_warning_impl(const het_quantizer *q,
                                           size_t index) {
  return q->warnings[index];
}
