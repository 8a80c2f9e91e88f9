/* quant_api.h — what the quant layer offers the C API (src/api/): the
 * work behind each hetrt/quantize.h call, arguments already checked there
 * (non-NULL pointers, indices in range).  Each behaves as the call of the same name without
 * _impl documents. */
#ifndef HET_QUANT_QUANT_API_H
#define HET_QUANT_QUANT_API_H

#include "hetrt/quantize.h"

het_status het_quantizer_create_impl(het_env *env, const char *path,
                                     const het_session_options *options,
                                     het_quantizer **out);
void het_quantizer_destroy_impl(het_quantizer *q);
het_status het_quantizer_set_impl(het_quantizer *q, const char *key,
                                  const char *value);
het_status het_quantizer_add_input_impl(het_quantizer *q, bool evaluation,
                                        const char *const *names,
                                        het_tensor *const *tensors, size_t n);
void het_quantizer_set_progress_impl(het_quantizer *q,
                                     het_quantizer_progress_fn fn, void *ctx);
het_status het_quantizer_calibrate_impl(het_quantizer *q);
het_status het_quantizer_save_impl(het_quantizer *q, const char *path);
size_t het_quantizer_get_node_count_impl(const het_quantizer *q);
size_t het_quantizer_get_tensor_count_impl(const het_quantizer *q);
het_status het_quantizer_get_tensor_impl(const het_quantizer *q, size_t index,
                                         const char **name, float *lo,
                                         float *hi, float *scale,
                                         int32_t *zero_point);
het_status het_quantizer_evaluate_impl(het_quantizer *q, char **report);
size_t het_quantizer_get_output_count_impl(const het_quantizer *q);
het_status het_quantizer_get_accuracy_impl(const het_quantizer *q,
                                           size_t index,
                                           het_quant_accuracy *out);
het_status het_quantizer_get_sqnr_impl(const het_quantizer *q, size_t index,
                                       double *db);
size_t het_quantizer_get_warning_count_impl(const het_quantizer *q);
const char *het_quantizer_get_warning_impl(const het_quantizer *q,
                                           size_t index);

#endif
