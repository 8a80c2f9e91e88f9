/* session_api.h — what the session layer offers the C API (src/api/): the
 * work behind each public call, with its arguments already checked there
 * (non-NULL pointers, indices in range).  Each behaves as the hetrt.h
 * call of the same name without _impl documents. */
#ifndef HET_SESSION_SESSION_API_H
#define HET_SESSION_SESSION_API_H

#include "hetrt/hetrt.h"
#include "hetrt/provider.h"

#include <stdbool.h>

het_status het_env_create_impl(het_env **out);
void het_env_destroy_impl(het_env *env);
const char *het_env_get_built_providers_impl(const het_env *env);
het_status het_env_register_provider_impl(het_env *env,
                                          const het_provider_vtable *vt);

het_status het_session_options_create_impl(het_session_options **out);
void het_session_options_destroy_impl(het_session_options *o);
het_status het_session_options_set_providers_impl(het_session_options *o,
                                                  const char *const *names,
                                                  size_t count);
het_status het_session_options_set_threads_impl(het_session_options *o,
                                                int threads);
het_status het_session_options_set_impl(het_session_options *o,
                                         const char *key, const char *value);
het_status het_session_options_pin_impl(het_session_options *o,
                                        const char *node,
                                        const char *provider);
het_status het_session_options_forbid_impl(het_session_options *o,
                                           const char *node,
                                           const char *provider);
het_status het_session_options_prefer_impl(het_session_options *o,
                                           const char *node,
                                           const char *provider,
                                           double factor);
het_status het_session_options_set_memory_budget_impl(het_session_options *o,
                                                      const char *provider,
                                                      size_t bytes);
het_status het_session_options_load_policy_impl(het_session_options *o,
                                                const char *path);
het_status het_session_options_set_policy_impl(het_session_options *o,
                                               const char *yaml);

het_status het_session_create_impl(het_env *env, const char *path,
                                   const het_session_options *o,
                                   het_session **out);
het_status het_session_create_from_memory_impl(het_env *env, const void *data,
                                               size_t size,
                                               const het_session_options *o,
                                               het_session **out);
void het_session_destroy_impl(het_session *s);
size_t het_session_get_input_count_impl(const het_session *s);
size_t het_session_get_output_count_impl(const het_session *s);
size_t het_session_get_node_count_impl(const het_session *s);
size_t het_session_get_warning_count_impl(const het_session *s);
const char *het_session_get_warning_impl(const het_session *s, size_t index);
het_status het_session_get_input_impl(const het_session *s, size_t index,
                                      het_value_desc *out);
het_status het_session_get_output_impl(const het_session *s, size_t index,
                                       het_value_desc *out);
het_status het_session_get_placement_impl(const het_session *s, size_t index,
                                          het_node_placement *out);
het_status het_session_explain_impl(const het_session *s, const char *format,
                                    char **out);
het_status het_session_save_node_times_impl(het_session *s, const char *path);
het_status het_session_get_planned_peak_impl(const het_session *s,
                                             const char *provider,
                                             size_t *bytes);
het_status het_session_save_trace_impl(het_session *s, const char *path);
het_status het_session_save_plan_impl(het_session *s, const char *path);
het_status het_session_plan_shapes_impl(het_session *s, const char *shapes,
                                        int *regime);
het_status het_plan_get_info_impl(het_env *env, const char *path, char **out);
void het_session_clear_trace_impl(het_session *s);
het_status het_session_get_profile_summary_impl(het_session *s, char **out);

/* het_session_run (into false: outputs allocated) and
 * het_session_run_into (into true: outputs are the caller's). */
het_status het_session_execute(het_session *s, const char *const *in_names,
                               het_tensor *const *inputs, size_t n_in,
                               const char *const *out_names, size_t n_out,
                               het_tensor **outputs, bool into);

#endif
