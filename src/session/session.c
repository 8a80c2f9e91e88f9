/* session.c — session creation (load → infer → providers → partition →
 * compile → programs; a plan file goes to session_aot.c), destruction and
 * the descriptive getters.
 */
#include "session/session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "core/file.h"
#include "core/infer.h"
#include "core/status.h"
#include "onnx/loader.h"
#include "session/session_aot.h"
#include "session/session_api.h"

void het_session_destroy_impl(het_session *s) {
  if (!s)
    return;
  het_session_ready_destroy(s); /* the compiling thread uses the builds */
  het_regimes_destroy(s); /* their graphs borrow s->graph's weights */
  het_session_builds_destroy(s);
  het_stream_pool_destroy(s->streams);
  het_measure_destroy(s);
  het_session_remove_providers(s);
  het_policy_reports_destroy(s);
  free(s->warnings);
  free(s->islands);
  free(s->island_claims);
  free(s->builds);
  het_graph_destroy(s->optimized);
  het_graph_destroy(s->graph);
  het_session_options_destroy_impl(s->options);
  if (!s->aot_regime) /* after the graphs: they borrow its weights */
    het_aot_destroy(s->aot);
  het_arena_deinit(&s->arena);
  free(s);
}

het_status het_session_warn(het_session *s, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (s->n_warnings == s->cap_warnings) {
    int cap = s->cap_warnings ? 2 * s->cap_warnings : 8;
    const char **grown = realloc(s->warnings, (size_t)cap * sizeof *grown);
    if (!grown)
      return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
    s->warnings = grown;
    s->cap_warnings = cap;
  }
  const char *kept = het_arena_strdup(&s->arena, msg);
  if (!kept)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  s->warnings[s->n_warnings++] = kept;
  return HET_OK;
}

/* The session of het_session_create_graph, from a plan when a is set
 * (regime: the plan's shape regime; a > 0 borrows a). */
static het_status het_session_make(het_env *env, het_graph *g,
                                   struct het_aot *a, int regime,
                                   const char *model,
                                   const het_session_options *o,
                                   bool graph_ready, bool plan_only,
                                   het_session **out) {
  het_session *s = calloc(1, sizeof *s);
  if (!s) {
    het_graph_destroy(g);
    if (!regime)
      het_aot_destroy(a);
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  }
  s->env = env;
  s->graph = g;
  s->aot = a;
  s->aot_regime = regime;
  s->graph_ready = graph_ready;
  s->plan_only = plan_only;
  het_arena_init(&s->arena);
  s->model = het_arena_strdup(&s->arena, model);
  het_status st = s->model ? het_session_build(s, o)
                           : het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  if (st != HET_OK) {
    het_session_destroy_impl(s);
    return st;
  }
  *out = s;
  return HET_OK;
}

het_status het_session_create_graph(het_env *env, het_graph *g,
                                    const char *model,
                                    const het_session_options *o,
                                    bool graph_ready, bool plan_only,
                                    het_session **out) {
  return het_session_make(env, g, NULL, 0, model, o, graph_ready, plan_only,
                          out);
}

het_status het_session_create_aot(het_env *env, het_graph *g,
                                  struct het_aot *a,
                                  const het_session_options *o,
                                  het_session **out) {
  return het_session_make(env, g, a, 0, a->path, o, true, false, out);
}

het_status het_session_create_aot_regime(het_env *env, het_graph *g,
                                         struct het_aot *a, int k,
                                         const het_session_options *o,
                                         het_session **out) {
  return het_session_make(env, g, a, k, a->path, o, true, false, out);
}

/* Whether the file at path starts like a plan file (an unreadable one is
 * left to the model loader's messages). */
static bool het_is_plan_file(const char *path) {
  int fd;
  uint64_t size;
  if (het_open_regular(path, path, &fd, &size) != HET_OK) {
    het_error_clear();
    return false;
  }
  char head[8];
  bool plan = read(fd, head, sizeof head) == (ssize_t)sizeof head &&
              het_plan_file_sniff(head, sizeof head);
  close(fd);
  return plan;
}

het_status het_session_create_impl(het_env *env, const char *path,
                              const het_session_options *o,
                              het_session **out) {
  if (het_is_plan_file(path)) {
    het_aot *a = NULL;
    HET_TRY(het_aot_open(path, NULL, 0, &a));
    return het_session_create_plan(env, a, o, out);
  }
  het_graph *g;
  HET_TRY(het_onnx_load_file(path, &g));
  het_status st = het_session_create_graph(env, g, path, o, false, false, out);
  if (st != HET_OK)
    het_error_wrap(st, "%s", path);
  return st;
}

het_status het_session_create_from_memory_impl(het_env *env, const void *data,
                                          size_t size,
                                          const het_session_options *o,
                                          het_session **out) {
  if (het_plan_file_sniff(data, size)) {
    het_aot *a = NULL;
    HET_TRY(het_aot_open(NULL, data, size, &a));
    return het_session_create_plan(env, a, o, out);
  }
  het_graph *g;
  HET_TRY(het_onnx_load_memory(data, size, NULL, "<memory>", &g));
  return het_session_create_graph(env, g, "<memory>", o, false, false, out);
}

size_t het_session_get_input_count_impl(const het_session *s) {
  return s ? (size_t)s->top.prog.n_params : 0;
}

size_t het_session_get_output_count_impl(const het_session *s) {
  return s ? (size_t)s->graph->n_outputs : 0;
}

static void het_describe(const het_value *v, het_value_desc *out) {
  memset(out, 0, sizeof *out);
  out->name = v->name;
  out->dtype = v->dtype;
  out->rank = v->shape.rank;
  for (int i = 0; i < v->shape.rank; i++) {
    out->dims[i] = v->shape.dims[i].value;
    out->dim_names[i] = v->shape.dims[i].symbol;
  }
}

het_status het_session_get_input_impl(const het_session *s, size_t index,
                                 het_value_desc *out) {
  het_describe(&s->graph->values[s->top.prog.params[index]], out);
  return HET_OK;
}

het_status het_session_get_output_impl(const het_session *s, size_t index,
                                  het_value_desc *out) {
  het_describe(&s->graph->values[s->graph->outputs[index]], out);
  return HET_OK;
}

size_t het_session_get_node_count_impl(const het_session *s) {
  return s ? (size_t)s->n_nodes_total : 0;
}

size_t het_session_get_warning_count_impl(const het_session *s) {
  return (size_t)s->n_warnings;
}

const char *het_session_get_warning_impl(const het_session *s, size_t index) {
  return index < (size_t)s->n_warnings ? s->warnings[index] : NULL;
}

het_status het_session_get_placement_impl(const het_session *s, size_t index,
                                     het_node_placement *out) {
  /* in each build's execution order; bodies after the graph holding them */
  size_t k = index;
  const het_graph_build *b = NULL;
  for (int i = 0; i < s->n_builds; i++) {
    b = s->builds[i];
    if (k < (size_t)b->prog.graph->n_nodes)
      break;
    k -= (size_t)b->prog.graph->n_nodes;
  }
  const het_graph *g = b->prog.graph;
  int node = g->order[k];
  out->name = het_session_node_name(s, b, node);
  out->op_type = g->nodes[node].op_type;
  int prov = b->partition.provider[node];
  out->provider = prov >= 0 ? s->providers[prov].vt->name : "host";
  out->reason = b->partition.reason[node];
  return HET_OK;
}

const char *het_session_node_name(const het_session *s,
                                  const het_graph_build *b, int node) {
  (void)s;
  return b->names ? b->names[node] : b->prog.graph->nodes[node].name;
}
