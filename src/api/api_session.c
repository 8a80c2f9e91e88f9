/* api_session.c — the C API of sessions: argument checks (NULL pointers,
 * indices in range), then the session layer (session/session_api.h). */
#include <stdlib.h>

#include "core/status.h"
#include "session/session_api.h"

#define HET_NULL(fn) het_error(HET_ERR_INVALID_ARGUMENT, fn ": NULL argument")

het_status het_session_create(het_env *env, const char *path,
                              const het_session_options *o,
                              het_session **out) {
  if (!env || !path || !out)
    return HET_NULL("het_session_create");
  return het_session_create_impl(env, path, o, out);
}

het_status het_session_create_from_memory(het_env *env, const void *data,
                                          size_t size,
                                          const het_session_options *o,
                                          het_session **out) {
  if (!env || !data || !out)
    return HET_NULL("het_session_create_from_memory");
  return het_session_create_from_memory_impl(env, data, size, o, out);
}

void het_session_destroy(het_session *s) {
  if (s)
    het_session_destroy_impl(s);
}

size_t het_session_get_input_count(const het_session *s) {
  return s ? het_session_get_input_count_impl(s) : 0;
}

size_t het_session_get_output_count(const het_session *s) {
  return s ? het_session_get_output_count_impl(s) : 0;
}

size_t het_session_get_node_count(const het_session *s) {
  return s ? het_session_get_node_count_impl(s) : 0;
}

size_t het_session_get_warning_count(const het_session *s) {
  return s ? het_session_get_warning_count_impl(s) : 0;
}

const char *het_session_get_warning(const het_session *s, size_t index) {
  return s ? het_session_get_warning_impl(s, index) : NULL;
}

/* ERR_INVALID_ARGUMENT unless index < count. */
static het_status het_index(size_t index, size_t count, const char *what) {
  if (index < count)
    return HET_OK;
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "%s index %zu out of range (%zu %ss)", what, index, count,
                   what);
}

het_status het_session_get_input(const het_session *s, size_t index,
                                 het_value_desc *out) {
  if (!s || !out)
    return HET_NULL("het_session_get_input");
  HET_TRY(het_index(index, het_session_get_input_count_impl(s), "input"));
  return het_session_get_input_impl(s, index, out);
}

het_status het_session_get_output(const het_session *s, size_t index,
                                  het_value_desc *out) {
  if (!s || !out)
    return HET_NULL("het_session_get_output");
  HET_TRY(het_index(index, het_session_get_output_count_impl(s), "output"));
  return het_session_get_output_impl(s, index, out);
}

het_status het_session_get_placement(const het_session *s, size_t index,
                                     het_node_placement *out) {
  if (!s || !out)
    return HET_NULL("het_session_get_placement");
  HET_TRY(het_index(index, het_session_get_node_count_impl(s), "node"));
  return het_session_get_placement_impl(s, index, out);
}

het_status het_session_explain(const het_session *s, const char *format,
                               char **out) {
  if (!s || !format || !out)
    return HET_NULL("het_session_explain");
  return het_session_explain_impl(s, format, out);
}

void het_string_destroy(char *s) { free(s); }

het_status het_session_save_node_times(het_session *s, const char *path) {
  if (!s || !path)
    return HET_NULL("het_session_save_node_times");
  return het_session_save_node_times_impl(s, path);
}

het_status het_session_get_planned_peak(const het_session *s,
                                        const char *provider, size_t *bytes) {
  if (!s || !provider || !bytes)
    return HET_NULL("het_session_get_planned_peak");
  return het_session_get_planned_peak_impl(s, provider, bytes);
}

het_status het_session_save_trace(het_session *s, const char *path) {
  if (!s || !path)
    return HET_NULL("het_session_save_trace");
  return het_session_save_trace_impl(s, path);
}

het_status het_session_save_plan(het_session *s, const char *path) {
  if (!s || !path)
    return HET_NULL("het_session_save_plan");
  return het_session_save_plan_impl(s, path);
}

het_status het_session_plan_shapes(het_session *s, const char *shapes,
                                   int *regime) {
  if (!s || !shapes)
    return HET_NULL("het_session_plan_shapes");
  return het_session_plan_shapes_impl(s, shapes, regime);
}

het_status het_plan_get_info(het_env *env, const char *path, char **out) {
  if (!env || !path || !out)
    return HET_NULL("het_plan_get_info");
  return het_plan_get_info_impl(env, path, out);
}

void het_session_clear_trace(het_session *s) {
  if (s)
    het_session_clear_trace_impl(s);
}

het_status het_session_get_profile_summary(het_session *s, char **out) {
  if (!s || !out)
    return HET_NULL("het_session_get_profile_summary");
  return het_session_get_profile_summary_impl(s, out);
}

het_status het_session_run(het_session *s, const char *const *input_names,
                           het_tensor *const *inputs, size_t n_inputs,
                           const char *const *output_names, size_t n_outputs,
                           het_tensor **outputs) {
  if (!s || !outputs || (n_inputs && (!input_names || !inputs)))
    return HET_NULL("het_session_run");
  return het_session_execute(s, input_names, inputs, n_inputs, output_names,
                             n_outputs, outputs, false);
}

het_status het_session_run_into(het_session *s, const char *const *input_names,
                                het_tensor *const *inputs, size_t n_inputs,
                                const char *const *output_names,
                                size_t n_outputs, het_tensor *const *outputs) {
  if (!s || !outputs || (n_inputs && (!input_names || !inputs)))
    return HET_NULL("het_session_run_into");
  return het_session_execute(s, input_names, inputs, n_inputs, output_names,
                             n_outputs, (het_tensor **)outputs, true);
}
