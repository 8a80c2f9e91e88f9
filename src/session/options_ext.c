/* options_ext.c — session options beyond providers and threads: device
 * profiles, algorithm, strictness, provider-specific options, per-node
 * constraints and memory budgets.  Everything is copied; nothing is checked
 * against a model until a session is created.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/session.h"
#include "session/session_api.h"
#include "core/status.h"

static het_status het_kv_append(het_kv **list, int *n, const char *key,
                                const char *value) {
  for (int i = 0; i < *n; i++)
    if (strcmp((*list)[i].key, key) == 0) {
      char *v = strdup(value);
      if (!v)
        return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
      free((*list)[i].value);
      (*list)[i].value = v;
      return HET_OK;
    }
  het_kv *grown = realloc(*list, (size_t)(*n + 1) * sizeof **list);
  if (!grown)
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  *list = grown;
  grown[*n].key = strdup(key);
  grown[*n].value = strdup(value);
  if (!grown[*n].key || !grown[*n].value) {
    free(grown[*n].key);
    free(grown[*n].value);
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  }
  (*n)++;
  return HET_OK;
}

static void het_kv_clear(het_kv *list, int n) {
  for (int i = 0; i < n; i++) {
    free(list[i].key);
    free(list[i].value);
  }
  free(list);
}

void het_options_ext_clear(het_session_options *o) {
  for (int i = 0; i < o->n_profiles; i++)
    free(o->profiles[i]);
  o->n_profiles = 0;
  free(o->node_times);
  het_kv_clear(o->kv, o->n_kv);
  het_kv_clear(o->budgets, o->n_budgets);
  for (int i = 0; i < o->n_rules; i++) {
    free(o->rules[i].node);
    free(o->rules[i].provider);
  }
  free(o->rules);
  het_policy_destroy(o->policy);
  o->policy = NULL;
  for (int i = 0; i < o->n_shapes; i++)
    free(o->shapes[i].input);
  free(o->shapes);
  o->shapes = NULL;
  o->n_shapes = 0;
}

het_status het_options_set_profiles(het_session_options *o,
                                    const char *value) {
  char *copy[HET_MAX_PROFILES] = {0};
  int n = 0;
  const char *p = value;
  het_status st = HET_OK;
  while (*p && st == HET_OK) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == 0)
      st = het_error(HET_ERR_INVALID_ARGUMENT, "devices: empty profile path");
    else if (n == HET_MAX_PROFILES)
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "devices: more than %d profiles", HET_MAX_PROFILES);
    else if (!(copy[n++] = strndup(p, len)))
      st = het_error(HET_ERR_OUT_OF_MEMORY, "devices: out of memory");
    p += len + (end ? 1 : 0);
  }
  if (st != HET_OK) {
    for (int i = 0; i < n; i++)
      free(copy[i]);
    return st;
  }
  for (int i = 0; i < o->n_profiles; i++)
    free(o->profiles[i]);
  memcpy(o->profiles, copy, sizeof copy);
  o->n_profiles = n;
  return HET_OK;
}

het_status het_options_set_ext(het_session_options *o, const char *key,
                               const char *value, bool *handled) {
  *handled = true;
  if (strcmp(key, "devices") == 0)
    return het_options_set_profiles(o, value);
  if (strcmp(key, "algorithm") == 0) {
    if (strcmp(value, "cost") && strcmp(value, "priority"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'algorithm': '%s' is not cost or priority",
                       value);
    o->use_priority = strcmp(value, "priority") == 0;
    return HET_OK;
  }
  if (strcmp(key, "optimization") == 0) {
    static const char *const levels[] = {"none", "basic", "extended",
                                         "all"};
    for (int i = 0; i < 4; i++)
      if (strcmp(value, levels[i]) == 0) {
        o->opt_level = i;
        return HET_OK;
      }
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "option 'optimization': '%s' is not none, basic, "
                     "extended or all",
                     value);
  }
  if (strcmp(key, "measure") == 0 || strcmp(key, "trace") == 0 ||
      strcmp(key, "deterministic") == 0) {
    if (strcmp(value, "true") && strcmp(value, "false"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option '%s': '%s' is not true or false", key, value);
    *(key[0] == 'm'   ? &o->measure
      : key[0] == 't' ? &o->trace
                      : &o->deterministic) = strcmp(value, "true") == 0;
    return HET_OK;
  }
  if (strcmp(key, "int8") == 0) {
    if (strcmp(value, "on") && strcmp(value, "off"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'int8': '%s' is not on or off", value);
    o->int8_off = strcmp(value, "off") == 0;
    return HET_OK;
  }
  if (strcmp(key, "executor") == 0) {
    if (strcmp(value, "sequential") && strcmp(value, "streams"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'executor': '%s' is not sequential or streams",
                       value);
    o->streams = strcmp(value, "streams") == 0;
    return HET_OK;
  }
  if (strcmp(key, "node_times") == 0) {
    char *copy = NULL;
    if (*value && !(copy = strdup(value)))
      return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
    free(o->node_times);
    o->node_times = copy; /* "" clears it */
    return HET_OK;
  }
  if (strcmp(key, "max_memory") == 0) {
    /* decimal bytes, or with K, M, G (powers of 1024); 0 = no cap; auto:
     * the default */
    if (strcmp(value, "auto") == 0) {
      o->max_memory_set = false;
      return HET_OK;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    unsigned shift = !end ? 0
                     : *end == 'K' ? 10
                     : *end == 'M' ? 20
                     : *end == 'G' ? 30
                                   : 0;
    if (shift)
      end++;
    if (end == value || *end || errno || value[0] == '-' ||
        (shift && v > (SIZE_MAX >> shift)))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'max_memory': '%s' is not a byte count "
                       "(e.g. 536870912, 512M, 2G, auto)",
                       value);
    o->max_memory = (size_t)(v << shift);
    o->max_memory_set = true;
    return HET_OK;
  }
  if (strcmp(key, "max_loop_iterations") == 0) {
    char *end = NULL;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end || errno || v < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'max_loop_iterations': '%s' is not a count "
                       "(>= 0; 0: no cap)",
                       value);
    o->max_loop_iterations = v;
    o->max_loop_set = true;
    return HET_OK;
  }
  if (strcmp(key, "strict") == 0) {
    if (strcmp(value, "true") && strcmp(value, "false"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'strict': '%s' is not true or false", value);
    o->non_strict = strcmp(value, "false") == 0;
    return HET_OK;
  }
  if (strcmp(key, "policy") == 0)
    return het_options_load_policy(o, value);
  if (strcmp(key, "shape") == 0)
    return het_options_set_shape(o, value);
  if (strcmp(key, "min_subgraph_nodes") == 0) {
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (end == value || *end || errno || v < 0 || v > 1000000)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'min_subgraph_nodes': '%s' is not a count in "
                       "0..1000000",
                       value);
    o->min_subgraph_nodes = (int)v;
    return HET_OK;
  }
  if (strcmp(key, "plan_mismatch") == 0) {
    if (strcmp(value, "fail") && strcmp(value, "rebuild"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'plan_mismatch': '%s' is not fail or rebuild",
                       value);
    o->plan_rebuild = strcmp(value, "rebuild") == 0;
    return HET_OK;
  }
  if (strcmp(key, "plan_load") == 0) {
    if (strcmp(value, "background") && strcmp(value, "eager"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'plan_load': '%s' is not background or eager",
                       value);
    o->plan_load_eager = strcmp(value, "eager") == 0;
    return HET_OK;
  }
  if (strcmp(key, "replan") == 0) {
    if (strcmp(value, "on") && strcmp(value, "off"))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'replan': '%s' is not on or off", value);
    o->replan_off = strcmp(value, "off") == 0;
    return HET_OK;
  }
  if (strcmp(key, "replan_gain") == 0) {
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end || errno || !(v > 0) || v > 1)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'replan_gain': '%s' is not a fraction in "
                       "(0, 1] (e.g. 0.2: re-plan when the estimate drops "
                       "by 20%%)",
                       value);
    o->replan_gain = v;
    return HET_OK;
  }
  if (strcmp(key, "max_regimes") == 0) {
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (end == value || *end || errno || v < 1 || v > HET_MAX_REGIMES)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'max_regimes': '%s' is not a count in 1..%d",
                       value, HET_MAX_REGIMES);
    o->max_regimes = (int)v;
    return HET_OK;
  }
  const char *dot = strchr(key, '.');
  if (dot && dot != key && dot[1])
    return het_kv_append(&o->kv, &o->n_kv, key, value);
  *handled = false;
  return HET_OK;
}

static het_status het_add_rule(het_session_options *o, het_rule_kind kind,
                               const char *node, const char *provider,
                               double factor) {
  if (!o || !node || !*node || !provider || !*provider)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "placement constraint: NULL or empty node/provider");
  het_node_rule *grown =
      realloc(o->rules, (size_t)(o->n_rules + 1) * sizeof *grown);
  if (!grown)
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  o->rules = grown;
  het_node_rule *r = &grown[o->n_rules];
  r->kind = kind;
  r->factor = factor;
  r->node = strdup(node);
  r->provider = strdup(provider);
  if (!r->node || !r->provider) {
    free(r->node);
    free(r->provider);
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  }
  o->n_rules++;
  return HET_OK;
}

het_status het_session_options_pin_impl(het_session_options *o, const char *node,
                                   const char *provider) {
  return het_add_rule(o, HET_RULE_PIN, node, provider, 1.0);
}

het_status het_session_options_forbid_impl(het_session_options *o,
                                      const char *node,
                                      const char *provider) {
  return het_add_rule(o, HET_RULE_FORBID, node, provider, 1.0);
}

het_status het_session_options_prefer_impl(het_session_options *o,
                                      const char *node, const char *provider,
                                      double factor) {
  if (!(factor > 0) || factor > 1e6)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "prefer '%s' on '%s': factor %g is not in (0, 1e6]",
                     node ? node : "(null)", provider ? provider : "(null)",
                     factor);
  return het_add_rule(o, HET_RULE_PREFER, node, provider, factor);
}

het_status het_session_options_set_memory_budget_impl(het_session_options *o,
                                                 const char *provider,
                                                 size_t bytes) {
  char text[32];
  if (!o || !provider || !*provider)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "memory budget: NULL or empty provider");
  snprintf(text, sizeof text, "%zu", bytes);
  return het_kv_append(&o->budgets, &o->n_budgets, provider, text);
}

size_t het_options_max_memory(const het_session_options *o) {
  if (o && o->max_memory_set)
    return o->max_memory;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || size <= 0 || (size_t)pages > SIZE_MAX / (size_t)size)
    return 0; /* unknown: no cap */
  return (size_t)pages * (size_t)size;
}

int64_t het_options_max_loop_iterations(const het_session_options *o) {
  return o && o->max_loop_set ? o->max_loop_iterations
                              : HET_DEFAULT_MAX_LOOP_ITERATIONS;
}

/* ---- a deep copy, for the shape regimes a session makes later ---- */

static het_status het_options_copy_lists(const het_session_options *src,
                                         het_session_options *o) {
  for (int i = 0; i < src->n_providers; i++) {
    if (!(o->providers[i] = strdup(src->providers[i])))
      return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
    o->n_providers = i + 1;
  }
  for (int i = 0; i < src->n_profiles; i++) {
    if (!(o->profiles[i] = strdup(src->profiles[i])))
      return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
    o->n_profiles = i + 1;
  }
  if (src->node_times && !(o->node_times = strdup(src->node_times)))
    return het_error(HET_ERR_OUT_OF_MEMORY, "options: out of memory");
  for (int i = 0; i < src->n_kv; i++)
    HET_TRY(het_kv_append(&o->kv, &o->n_kv, src->kv[i].key, src->kv[i].value));
  for (int i = 0; i < src->n_budgets; i++)
    HET_TRY(het_kv_append(&o->budgets, &o->n_budgets, src->budgets[i].key,
                          src->budgets[i].value));
  for (int i = 0; i < src->n_rules; i++) {
    const het_node_rule *r = &src->rules[i];
    HET_TRY(het_add_rule(o, r->kind, r->node, r->provider, r->factor));
  }
  for (int i = 0; i < src->n_shapes; i++)
    HET_TRY(het_options_add_shape(o, src->shapes[i].input,
                                  src->shapes[i].rank, src->shapes[i].dims));
  return HET_OK;
}

het_status het_options_copy(const het_session_options *src,
                            het_session_options **out) {
  het_session_options *o = NULL;
  HET_TRY(het_session_options_create_impl(&o));
  if (src) {
    het_session_options scalars = *src;
    /* the owned lists start empty and are copied one by one */
    scalars.n_providers = scalars.n_profiles = 0;
    memset(scalars.providers, 0, sizeof scalars.providers);
    memset(scalars.profiles, 0, sizeof scalars.profiles);
    scalars.node_times = NULL;
    scalars.n_kv = scalars.n_budgets = scalars.n_rules = scalars.n_shapes = 0;
    scalars.kv = scalars.budgets = NULL;
    scalars.rules = NULL;
    scalars.shapes = NULL;
    scalars.policy = het_policy_ref(src->policy);
    *o = scalars;
    het_status st = het_options_copy_lists(src, o);
    if (st != HET_OK) {
      het_session_options_destroy_impl(o);
      return st;
    }
  }
  *out = o;
  return HET_OK;
}
