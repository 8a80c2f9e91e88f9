/* api_env.c — the C API of environments and session options: argument
 * checks (NULL objects; the values themselves are checked where they are
 * understood), then the session layer (session/session_api.h). */
#include "core/status.h"
#include "session/session_api.h"

#define HET_NULL(fn) het_error(HET_ERR_INVALID_ARGUMENT, fn ": NULL argument")

het_status het_env_create(het_env **out) {
  return out ? het_env_create_impl(out) : HET_NULL("het_env_create");
}

void het_env_destroy(het_env *env) {
  if (env)
    het_env_destroy_impl(env);
}

const char *het_env_get_built_providers(const het_env *env) {
  return het_env_get_built_providers_impl(env);
}

het_status het_env_register_provider(het_env *env,
                                     const het_provider_vtable *vt) {
  if (!env || !vt || !vt->name)
    return HET_NULL("het_env_register_provider");
  return het_env_register_provider_impl(env, vt);
}

het_status het_session_options_create(het_session_options **out) {
  return out ? het_session_options_create_impl(out)
             : HET_NULL("het_session_options_create");
}

void het_session_options_destroy(het_session_options *o) {
  if (o)
    het_session_options_destroy_impl(o);
}

het_status het_session_options_set_providers(het_session_options *o,
                                             const char *const *names,
                                             size_t count) {
  if (!o || (count && !names))
    return HET_NULL("het_session_options_set_providers");
  return het_session_options_set_providers_impl(o, names, count);
}

het_status het_session_options_set_threads(het_session_options *o,
                                           int threads) {
  return o ? het_session_options_set_threads_impl(o, threads)
           : HET_NULL("het_session_options_set_threads");
}

het_status het_session_options_set(het_session_options *o, const char *key,
                                   const char *value) {
  if (!o || !key || !value)
    return HET_NULL("het_session_options_set");
  return het_session_options_set_impl(o, key, value);
}

het_status het_session_options_pin(het_session_options *o, const char *node,
                                   const char *provider) {
  if (!o)
    return HET_NULL("het_session_options_pin");
  return het_session_options_pin_impl(o, node, provider);
}

het_status het_session_options_forbid(het_session_options *o,
                                      const char *node, const char *provider) {
  if (!o)
    return HET_NULL("het_session_options_forbid");
  return het_session_options_forbid_impl(o, node, provider);
}

het_status het_session_options_prefer(het_session_options *o,
                                      const char *node, const char *provider,
                                      double factor) {
  if (!o)
    return HET_NULL("het_session_options_prefer");
  return het_session_options_prefer_impl(o, node, provider, factor);
}

het_status het_session_options_set_memory_budget(het_session_options *o,
                                                 const char *provider,
                                                 size_t bytes) {
  if (!o)
    return HET_NULL("het_session_options_set_memory_budget");
  return het_session_options_set_memory_budget_impl(o, provider, bytes);
}

het_status het_session_options_load_policy(het_session_options *o,
                                           const char *path) {
  if (!o || !path)
    return HET_NULL("het_session_options_load_policy");
  return het_session_options_load_policy_impl(o, path);
}

het_status het_session_options_set_policy(het_session_options *o,
                                          const char *yaml) {
  if (!o || !yaml)
    return HET_NULL("het_session_options_set_policy");
  return het_session_options_set_policy_impl(o, yaml);
}
