/* api_quantize.c — the C API of the quantizer (hetrt/quantize.h):
 * argument checks (NULL pointers, indices in range), then the quant layer
 * (quant/quant_api.h). */
#include "core/status.h"
#include "quant/quant_api.h"

#define HET_NULL(fn) het_error(HET_ERR_INVALID_ARGUMENT, fn ": NULL argument")

static het_status het_quant_index(size_t index, size_t count,
                                  const char *what) {
  if (index < count)
    return HET_OK;
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "quantizer %s index %zu out of range (%zu)", what, index,
                   count);
}

het_status het_quantizer_create(het_env *env, const char *model_path,
                                const het_session_options *options,
                                het_quantizer **out) {
  if (!env || !model_path || !out)
    return HET_NULL("het_quantizer_create");
  return het_quantizer_create_impl(env, model_path, options, out);
}

void het_quantizer_destroy(het_quantizer *q) {
  if (q)
    het_quantizer_destroy_impl(q);
}

het_status het_quantizer_set(het_quantizer *q, const char *key,
                             const char *value) {
  if (!q || !key || !value)
    return HET_NULL("het_quantizer_set");
  return het_quantizer_set_impl(q, key, value);
}

het_status het_quantizer_add_input(het_quantizer *q, bool evaluation,
                                   const char *const *names,
                                   het_tensor *const *tensors, size_t n) {
  if (!q || (n && (!names || !tensors)))
    return HET_NULL("het_quantizer_add_input");
  for (size_t i = 0; i < n; i++)
    if (!names[i] || !tensors[i])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "het_quantizer_add_input: input %zu is NULL", i);
  return het_quantizer_add_input_impl(q, evaluation, names, tensors, n);
}

void het_quantizer_set_progress(het_quantizer *q,
                                het_quantizer_progress_fn fn, void *ctx) {
  if (q)
    het_quantizer_set_progress_impl(q, fn, ctx);
}

het_status het_quantizer_calibrate(het_quantizer *q) {
  if (!q)
    return HET_NULL("het_quantizer_calibrate");
  return het_quantizer_calibrate_impl(q);
}

het_status het_quantizer_save(het_quantizer *q, const char *path) {
  if (!q || !path)
    return HET_NULL("het_quantizer_save");
  return het_quantizer_save_impl(q, path);
}

size_t het_quantizer_get_node_count(const het_quantizer *q) {
  return q ? het_quantizer_get_node_count_impl(q) : 0;
}

size_t het_quantizer_get_tensor_count(const het_quantizer *q) {
  return q ? het_quantizer_get_tensor_count_impl(q) : 0;
}

het_status het_quantizer_get_tensor(const het_quantizer *q, size_t index,
                                    const char **name, float *lo, float *hi,
                                    float *scale, int32_t *zero_point) {
  if (!q)
    return HET_NULL("het_quantizer_get_tensor");
  HET_TRY(het_quant_index(index, het_quantizer_get_tensor_count_impl(q),
                          "tensor"));
  return het_quantizer_get_tensor_impl(q, index, name, lo, hi, scale,
                                       zero_point);
}

het_status het_quantizer_evaluate(het_quantizer *q, char **report) {
  if (!q)
    return HET_NULL("het_quantizer_evaluate");
  return het_quantizer_evaluate_impl(q, report);
}

size_t het_quantizer_get_output_count(const het_quantizer *q) {
  return q ? het_quantizer_get_output_count_impl(q) : 0;
}

het_status het_quantizer_get_accuracy(const het_quantizer *q, size_t index,
                                      het_quant_accuracy *out) {
  if (!q || !out)
    return HET_NULL("het_quantizer_get_accuracy");
  HET_TRY(het_quant_index(index, het_quantizer_get_output_count_impl(q),
                          "output"));
  return het_quantizer_get_accuracy_impl(q, index, out);
}

het_status het_quantizer_get_sqnr(const het_quantizer *q, size_t index,
                                  double *db) {
  if (!q || !db)
    return HET_NULL("het_quantizer_get_sqnr");
  HET_TRY(het_quant_index(index, het_quantizer_get_tensor_count_impl(q),
                          "tensor"));
  return het_quantizer_get_sqnr_impl(q, index, db);
}

size_t het_quantizer_get_warning_count(const het_quantizer *q) {
  return q ? het_quantizer_get_warning_count_impl(q) : 0;
}

const char *het_quantizer_get_warning(const het_quantizer *q, size_t index) {
  if (!q || index >= het_quantizer_get_warning_count_impl(q))
    return NULL;
  return het_quantizer_get_warning_impl(q, index);
}
