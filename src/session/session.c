/* session.c — session creation (load → infer → providers → partition →
 * compile), destruction and the descriptive getters.
 */
#include "session/session.h"

#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "session/session_memory.h"
#include "executor/run.h"
#include "onnx/loader.h"

void het_session_destroy(het_session *s) {
  if (!s)
    return;
  for (int i = 0; s->compiled && i < s->partition.n_subgraphs; i++) {
    if (!s->compiled[i])
      continue;
    het_device *p = &s->providers[s->partition.subgraphs[i].provider];
    if (p->vt->destroy_compiled)
      p->vt->destroy_compiled(p->state, s->compiled[i]);
  }
  for (int v = 0; s->placed && v < s->graph->n_values; v++)
    het_tensor_destroy(s->placed[v]);
  het_measure_destroy(s);
  het_session_memory_forget(s);
  for (int i = 0; i < s->n_providers; i++)
    if (s->providers[i].vt->destroy)
      s->providers[i].vt->destroy(s->providers[i].state);
  free(s->compiled);
  free(s->uses);
  free(s->inputs);
  het_graph_destroy(s->graph);
  het_arena_deinit(&s->arena);
  free(s);
}

static het_status het_session_finish(het_graph *g, const char *model,
                                     const het_session_options *o,
                                     het_session **out) {
  het_session *s = calloc(1, sizeof *s);
  if (!s) {
    het_graph_destroy(g);
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  }
  s->graph = g;
  het_arena_init(&s->arena);
  s->model = het_arena_strdup(&s->arena, model);
  het_status st = s->model ? het_session_build(s, o)
                           : het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  if (st != HET_OK) {
    het_session_destroy(s);
    return st;
  }
  *out = s;
  return HET_OK;
}

het_status het_session_create(het_env *env, const char *path,
                              const het_session_options *o,
                              het_session **out) {
  het_graph *g;
  if (!env || !path || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_create: NULL argument");
  HET_TRY(het_onnx_load_file(path, &g));
  het_status st = het_session_finish(g, path, o, out);
  if (st != HET_OK)
    het_error_wrap(st, "%s", path);
  return st;
}

het_status het_session_create_from_memory(het_env *env, const void *data,
                                          size_t size,
                                          const het_session_options *o,
                                          het_session **out) {
  het_graph *g;
  if (!env || !data || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_create_from_memory: NULL argument");
  HET_TRY(het_onnx_load_memory(data, size, NULL, "<memory>", &g));
  return het_session_finish(g, "<memory>", o, out);
}

size_t het_session_get_input_count(const het_session *s) {
  return s ? (size_t)s->n_inputs : 0;
}

size_t het_session_get_output_count(const het_session *s) {
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

het_status het_session_get_input(const het_session *s, size_t index,
                                 het_value_desc *out) {
  if (!s || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_get_input: NULL argument");
  if (index >= (size_t)s->n_inputs)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "input index %zu out of range (%d inputs)", index,
                     s->n_inputs);
  het_describe(&s->graph->values[s->inputs[index]], out);
  return HET_OK;
}

het_status het_session_get_output(const het_session *s, size_t index,
                                  het_value_desc *out) {
  if (!s || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_get_output: NULL argument");
  if (index >= (size_t)s->graph->n_outputs)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "output index %zu out of range (%d outputs)", index,
                     s->graph->n_outputs);
  het_describe(&s->graph->values[s->graph->outputs[index]], out);
  return HET_OK;
}

size_t het_session_get_node_count(const het_session *s) {
  return s ? (size_t)s->graph->n_nodes : 0;
}

het_status het_session_get_placement(const het_session *s, size_t index,
                                     het_node_placement *out) {
  if (!s || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_get_placement: NULL argument");
  if (index >= (size_t)s->graph->n_nodes)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "node index %zu out of range (%d nodes)", index,
                     s->graph->n_nodes);
  int node = s->graph->order[index];
  out->name = s->graph->nodes[node].name;
  out->op_type = s->graph->nodes[node].op_type;
  int prov = s->partition.provider[node];
  out->provider = prov >= 0 ? s->providers[prov].vt->name : "host";
  out->reason = s->partition.reason[node];
  return HET_OK;
}
