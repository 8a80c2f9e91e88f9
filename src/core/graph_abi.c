/* graph_abi.c — the graph, tensor and error accessors of the provider ABI
 * (hetrt/provider.h) for providers built out of tree: read-only views of
 * the IR (ir.h), which they cannot include.  Ids are checked; nothing is
 * allocated.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/ir.h"
#include "core/status.h"
#include "core/tensor.h"
#include "hetrt/provider.h"

static het_status het_graph_check_id(const het_graph *g, int id, int count,
                                     const char *fn, const char *what) {
  if (!g)
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s: NULL graph", fn);
  if (id < 0 || id >= count)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s: %s id %d out of range (graph '%s' has %d)", fn,
                     what, id, g->name ? g->name : "", count);
  return HET_OK;
}

int het_graph_get_node_count(const het_graph *graph) {
  return graph ? graph->n_nodes : 0;
}

int het_graph_get_value_count(const het_graph *graph) {
  return graph ? graph->n_values : 0;
}

het_status het_graph_get_node(const het_graph *graph, int node,
                              het_node_desc *out) {
  if (!out)
    return het_error(HET_ERR_INVALID_ARGUMENT, "het_graph_get_node: NULL out");
  HET_TRY(het_graph_check_id(graph, node, het_graph_get_node_count(graph),
                             "het_graph_get_node", "node"));
  const het_node *n = &graph->nodes[node];
  *out = (het_node_desc){.name = n->name,
                         .op_type = n->op_type,
                         .domain = n->domain ? n->domain : "",
                         .opset = n->opset,
                         .n_inputs = n->n_inputs,
                         .inputs = n->inputs,
                         .n_outputs = n->n_outputs,
                         .outputs = n->outputs};
  return HET_OK;
}

het_status het_graph_get_value(const het_graph *graph, int value,
                               het_value_desc *out) {
  if (!out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_graph_get_value: NULL out");
  HET_TRY(het_graph_check_id(graph, value, het_graph_get_value_count(graph),
                             "het_graph_get_value", "value"));
  const het_value *v = &graph->values[value];
  memset(out, 0, sizeof *out);
  out->name = v->name;
  out->dtype = v->dtype;
  out->rank = v->shape.rank;
  for (int d = 0; d < v->shape.rank && d < HET_MAX_RANK; d++) {
    out->dims[d] = v->shape.dims[d].value >= 0 ? v->shape.dims[d].value : -1;
    out->dim_names[d] = v->shape.dims[d].symbol;
  }
  return HET_OK;
}

het_tensor *het_graph_get_constant(const het_graph *graph, int value) {
  if (!graph || value < 0 || value >= graph->n_values)
    return NULL;
  return graph->values[value].initializer;
}

/* The attribute of node named name, of type want. */
static het_status het_graph_attr(const het_graph *g, int node,
                                 const char *name, het_attr_type want,
                                 const char *fn, const het_attr **out) {
  HET_TRY(het_graph_check_id(g, node, het_graph_get_node_count(g), fn,
                             "node"));
  if (!name)
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s: NULL name", fn);
  const het_node *n = &g->nodes[node];
  const het_attr *a = het_node_find_attr(n, name);
  if (!a)
    return het_error(HET_ERR_NOT_FOUND, "node '%s' (%s): no attribute '%s'",
                     n->name, n->op_type, name);
  if (a->type != want)
    return het_error(HET_ERR_TYPE,
                     "node '%s' (%s): attribute '%s' has type %d, not %d",
                     n->name, n->op_type, name, (int)a->type, (int)want);
  *out = a;
  return HET_OK;
}

het_status het_graph_get_attr_int(const het_graph *graph, int node,
                                  const char *name, int64_t *value) {
  const het_attr *a = NULL;
  HET_TRY(het_graph_attr(graph, node, name, HET_ATTR_INT,
                         "het_graph_get_attr_int", &a));
  *value = a->i;
  return HET_OK;
}

het_status het_graph_get_attr_float(const het_graph *graph, int node,
                                    const char *name, float *value) {
  const het_attr *a = NULL;
  HET_TRY(het_graph_attr(graph, node, name, HET_ATTR_FLOAT,
                         "het_graph_get_attr_float", &a));
  *value = a->f;
  return HET_OK;
}

het_status het_graph_get_attr_string(const het_graph *graph, int node,
                                     const char *name, const char **value) {
  const het_attr *a = NULL;
  HET_TRY(het_graph_attr(graph, node, name, HET_ATTR_STRING,
                         "het_graph_get_attr_string", &a));
  *value = a->s;
  return HET_OK;
}

het_status het_graph_get_attr_ints(const het_graph *graph, int node,
                                   const char *name, const int64_t **values,
                                   size_t *count) {
  const het_attr *a = NULL;
  HET_TRY(het_graph_attr(graph, node, name, HET_ATTR_INTS,
                         "het_graph_get_attr_ints", &a));
  *values = a->ints;
  *count = a->n;
  return HET_OK;
}

het_status het_graph_get_attr_floats(const het_graph *graph, int node,
                                     const char *name, const float **values,
                                     size_t *count) {
  const het_attr *a = NULL;
  HET_TRY(het_graph_attr(graph, node, name, HET_ATTR_FLOATS,
                         "het_graph_get_attr_floats", &a));
  *values = a->floats;
  *count = a->n;
  return HET_OK;
}

const het_device *het_tensor_get_device(const het_tensor *tensor) {
  return tensor ? tensor->device : NULL;
}

het_status het_error_set(het_status status, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt ? fmt : "", ap);
  va_end(ap);
  return het_error(status, "%s", msg);
}
