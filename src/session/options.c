/* options.c — session options (string key/value setters). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "core/status.h"

static void het_options_clear_providers(het_session_options *o) {
  for (int i = 0; i < o->n_providers; i++)
    free(o->providers[i]);
  o->n_providers = 0;
}

het_status het_session_options_create_impl(het_session_options **out) {
  het_session_options *o = calloc(1, sizeof *o);
  if (!o)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate options");
  o->threads = 1;
  o->opt_level = 3; /* HET_OPT_ALL */
  *out = o;
  return HET_OK;
}

void het_session_options_destroy_impl(het_session_options *o) {
  if (!o)
    return;
  het_options_clear_providers(o);
  het_options_ext_clear(o);
  free(o);
}

het_status het_session_options_set_providers_impl(het_session_options *o,
                                             const char *const *names,
                                             size_t count) {
  if (count == 0 || count > HET_MAX_PROVIDERS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "providers: %zu names given, expected 1..%d", count,
                     HET_MAX_PROVIDERS);
  char *copy[HET_MAX_PROVIDERS] = {0};
  for (size_t i = 0; i < count; i++) {
    if (!names[i] || !*names[i]) {
      for (size_t k = 0; k < i; k++)
        free(copy[k]);
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "providers: name %zu is empty", i);
    }
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0) {
        for (size_t j = 0; j < i; j++)
          free(copy[j]);
        return het_error(HET_ERR_INVALID_ARGUMENT,
                         "providers: '%s' is listed twice", names[i]);
      }
    copy[i] = strdup(names[i]);
    if (!copy[i]) {
      for (size_t k = 0; k < i; k++)
        free(copy[k]);
      return het_error(HET_ERR_OUT_OF_MEMORY, "providers: out of memory");
    }
  }
  het_options_clear_providers(o);
  for (size_t i = 0; i < count; i++)
    o->providers[i] = copy[i];
  o->n_providers = (int)count;
  return HET_OK;
}

het_status het_session_options_set_threads_impl(het_session_options *o,
                                           int threads) {
  if (threads < 1 || threads > 1024)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "threads: %d is outside 1..1024", threads);
  o->threads = threads;
  return HET_OK;
}

static het_status het_options_set_provider_list(het_session_options *o,
                                                const char *value) {
  char buf[512];
  const char *names[HET_MAX_PROVIDERS + 1];
  size_t n = 0;
  if (strlen(value) >= sizeof buf)
    return het_error(HET_ERR_INVALID_ARGUMENT, "providers: list too long");
  strcpy(buf, value);
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok;
       tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    if (n == HET_MAX_PROVIDERS + 1)
      break;
    names[n++] = tok;
  }
  if (n > HET_MAX_PROVIDERS)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "providers: more than %d names", HET_MAX_PROVIDERS);
  return het_session_options_set_providers_impl(o, names, n);
}

het_status het_session_options_set_impl(het_session_options *o, const char *key,
                                   const char *value) {
  if (strcmp(key, "providers") == 0)
    return het_options_set_provider_list(o, value);
  if (strcmp(key, "threads") == 0) {
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < 1 || v > 1024)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "option 'threads': '%s' is not an integer in 1..1024",
                       value);
    o->threads = (int)v;
    return HET_OK;
  }
  bool handled;
  HET_TRY(het_options_set_ext(o, key, value, &handled));
  if (handled)
    return HET_OK;
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "unknown session option '%s' (known: providers, threads, "
                   "devices, algorithm, strict, optimization, executor, measure, trace, node_times, max_memory, max_loop_iterations, policy, shape, min_subgraph_nodes, replan, replan_gain, max_regimes, plan_mismatch, plan_load, deterministic, int8, <provider>.<key>)",
                   key);
}
