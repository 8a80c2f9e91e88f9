/* quant_select.c — which nodes and tensors of a float model are quantized.
 * A node is quantized when its op is one hetrt and the QDQ format know
 * (Conv, ConvTranspose, Gemm, MatMul with a constant weight or two
 * activations; Add, Mul, Concat and the pools), it is not excluded and
 * its inputs are float32.  Its float activation inputs and its output get
 * a Q/DQ pair; an output read only by a Relu or Clip is quantized after
 * that activation instead, so the pair sits where an int8 kernel would
 * write (Conv+Relu is one int8 step); a graph output they make is
 * quantized too (as ONNX Runtime's quantizer does).  Dynamic mode takes
 * MatMuls with a constant weight only.  Only the main graph is quantized.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "quant/quant_internal.h"

static const char *const het_quant_weighted_ops[] = {
    "Conv", "ConvTranspose", "Gemm", "MatMul", NULL};
static const char *const het_quant_plain_ops[] = {
    "Add", "Mul", "Concat", "AveragePool", "GlobalAveragePool", "MaxPool",
    NULL};

static bool het_quant_in_list(const char *const *list, const char *s) {
  for (; *list; list++)
    if (strcmp(*list, s) == 0)
      return true;
  return false;
}

/* True when name matches an entry of the comma list (exact, or fnmatch
 * glob when glob is set). */
static bool het_quant_in_csv(const char *csv, const char *name, bool glob) {
  if (!csv)
    return false;
  char item[256];
  for (const char *p = csv; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > 0 && len < sizeof item) {
      memcpy(item, p, len);
      item[len] = '\0';
      if (glob ? fnmatch(item, name, 0) == 0 : strcmp(item, name) == 0)
        return true;
    }
    p += len + (e ? 1 : 0);
  }
  return false;
}

static bool het_quant_excluded(const het_quantizer *q, const het_node *n) {
  return het_quant_in_csv(q->exclude_ops, n->op_type, false) ||
         het_quant_in_csv(q->exclude_nodes, n->name, true);
}

/* A float32 constant the model cannot override at run time. */
static const het_tensor *het_quant_const(const het_graph *g, int v) {
  if (v < 0)
    return NULL;
  const het_value *val = &g->values[v];
  if (!(val->flags & HET_VALUE_INITIALIZER) || !val->initializer ||
      (val->flags & HET_VALUE_GRAPH_INPUT))
    return NULL;
  return val->initializer->dtype == HET_DTYPE_FLOAT32 ? val->initializer
                                                      : NULL;
}

/* A float32 value computed at run time (graph input or node output). */
static bool het_quant_activation(const het_graph *g, int v) {
  if (v < 0)
    return false;
  const het_value *val = &g->values[v];
  if (val->dtype != HET_DTYPE_FLOAT32)
    return false;
  return !(val->flags & HET_VALUE_INITIALIZER) ||
         (val->flags & HET_VALUE_GRAPH_INPUT);
}

/* Fills qn's weight, axis and bias for a weighted op; false when the node
 * cannot be quantized (a MatMul whose first operand is constant, a Conv
 * whose weight is not a constant). */
static bool het_quant_weight_of(const het_quantizer *q, const het_node *n,
                                het_quant_node *qn) {
  const het_graph *g = q->g;
  const het_tensor *w = het_quant_const(g, het_node_input(n, 1));
  bool pc = q->per_channel && q->opset >= 13;
  qn->weight = qn->axis = qn->bias = -1;
  if (!het_quant_activation(g, het_node_input(n, 0)))
    return false;
  if (strcmp(n->op_type, "MatMul") == 0) {
    if (!w)
      return het_quant_activation(g, het_node_input(n, 1));
    qn->weight = 1;
    qn->axis = pc && w->rank == 2 ? 1 : -1;
    return true;
  }
  if (!w)
    return false;
  int64_t channels = 0;
  qn->weight = 1;
  if (strcmp(n->op_type, "Gemm") == 0) {
    if (w->rank != 2)
      return false;
    bool tb = het_node_attr_int(n, "transB", 0) != 0;
    qn->axis = pc ? (tb ? 0 : 1) : -1;
    channels = w->dims[tb ? 0 : 1];
    if (het_node_attr_float(n, "alpha", 1.0f) != 1.0f ||
        het_node_attr_float(n, "beta", 1.0f) != 1.0f)
      return true;
  } else if (strcmp(n->op_type, "ConvTranspose") == 0) {
    int64_t group = het_node_attr_int(n, "group", 1);
    if (w->rank < 3)
      return false;
    qn->axis = pc && group == 1 ? 1 : -1;
    channels = w->dims[1] * group;
  } else {
    if (w->rank < 3)
      return false;
    qn->axis = pc ? 0 : -1;
    channels = w->dims[0];
  }
  const het_tensor *b = het_quant_const(g, het_node_input(n, 2));
  if (b && b->rank == 1 && b->dims[0] == channels)
    qn->bias = 2;
  return true;
}

/* The activation reading only v (its single reader is a Relu or a Clip
 * that is not excluded), or -1. */
static int het_quant_absorbing_act(const het_quantizer *q, const int *readers,
                                   const int *reader_node, int v) {
  const het_graph *g = q->g;
  if (readers[v] != 1 || (g->values[v].flags & HET_VALUE_GRAPH_OUTPUT))
    return -1;
  const het_node *a = &g->nodes[reader_node[v]];
  if (strcmp(a->op_type, "Relu") != 0 && strcmp(a->op_type, "Clip") != 0)
    return -1;
  if (het_quant_excluded(q, a) || a->n_outputs < 1)
    return -1;
  return a->outputs[0];
}

/* Marks v for a Q/DQ pair (reader names the node, for the report). */
static void het_quant_mark(const het_quantizer *q, const char **mark, int v,
                           const het_node *reader) {
  if (v >= 0 && het_quant_activation(q->g, v) && !mark[v])
    mark[v] = reader->name;
}

/* Pass 1: count each value's readers in the main graph. */
static void het_quant_count_readers(const het_graph *g, int *readers,
                                    int *reader_node) {
  for (int i = 0; i < g->n_nodes; i++) {
    const het_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++) {
      int v = n->inputs[k];
      if (v < 0)
        continue;
      readers[v]++;
      reader_node[v] = i;
    }
  }
}

/* Pass 2: choose the nodes; pass 3: mark their tensors. */
static het_status het_quant_choose(het_quantizer *q, int *readers,
                                   int *reader_node, const char **mark) {
  het_graph *g = q->g;
  q->nodes = calloc((size_t)g->n_nodes + 1, sizeof *q->nodes);
  if (!q->nodes)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int k = 0; k < g->n_nodes; k++) {
    const het_node *n = &g->nodes[g->order[k]];
    bool weighted = het_quant_in_list(het_quant_weighted_ops, n->op_type);
    if (n->domain[0] || het_quant_excluded(q, n) ||
        (!weighted && !het_quant_in_list(het_quant_plain_ops, n->op_type)))
      continue;
    het_quant_node qn = {.node = g->order[k], .weight = -1, .axis = -1,
                         .bias = -1, .act_tensor = -1};
    if (weighted && !het_quant_weight_of(q, n, &qn))
      continue;
    if (!weighted) {
      bool any = false;
      for (int i = 0; i < n->n_inputs; i++)
        any |= het_quant_activation(g, n->inputs[i]);
      if (!any || n->n_outputs < 1 ||
          g->values[n->outputs[0]].dtype != HET_DTYPE_FLOAT32)
        continue;
    }
    q->nodes[q->n_nodes++] = qn;
    /* Gemm's C and MatMul's constant operand are not activations. */
    int n_act = weighted ? (qn.weight < 0 ? 2 : 1) : n->n_inputs;
    for (int i = 0; i < n_act && i < n->n_inputs; i++)
      het_quant_mark(q, mark, n->inputs[i], n);
    int out = n->n_outputs > 0 ? n->outputs[0] : -1;
    if (out < 0)
      continue;
    int act = het_quant_absorbing_act(q, readers, reader_node, out);
    if (act >= 0)
      out = act;
    if (readers[out] > 0 || (g->values[out].flags & HET_VALUE_GRAPH_OUTPUT))
      het_quant_mark(q, mark, out, n);
  }
  return HET_OK;
}

/* Dynamic mode: every MatMul of a float32 activation and a constant 2-D
 * float32 weight (weights per column unless per_channel is off). */
static het_status het_quant_select_dynamic(het_quantizer *q) {
  het_graph *g = q->g;
  q->nodes = calloc((size_t)g->n_nodes + 1, sizeof *q->nodes);
  if (!q->nodes)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int k = 0; k < g->n_nodes; k++) {
    const het_node *n = &g->nodes[g->order[k]];
    const het_tensor *w = het_quant_const(g, het_node_input(n, 1));
    if (n->domain[0] || strcmp(n->op_type, "MatMul") != 0 ||
        het_quant_excluded(q, n) || !w || w->rank != 2 ||
        !het_quant_activation(g, het_node_input(n, 0)))
      continue;
    q->nodes[q->n_nodes++] = (het_quant_node){
        .node = g->order[k], .weight = 1, .axis = q->per_channel ? 1 : -1,
        .bias = -1, .act_tensor = -1};
  }
  return HET_OK;
}

het_status het_quant_select(het_quantizer *q) {
  het_graph *g = q->g;
  if (q->dynamic)
    return het_quant_select_dynamic(q);
  het_status st = HET_OK;
  int *readers = calloc((size_t)g->n_values + 1, sizeof *readers);
  int *reader_node = calloc((size_t)g->n_values + 1, sizeof *reader_node);
  const char **mark = calloc((size_t)g->n_values + 1, sizeof *mark);
  int *index = malloc(((size_t)g->n_values + 1) * sizeof *index);
  if (!readers || !reader_node || !mark || !index) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
    goto fail;
  }
  het_quant_count_readers(g, readers, reader_node);
  st = het_quant_choose(q, readers, reader_node, mark);
  if (st != HET_OK)
    goto fail;
  q->tensors = calloc((size_t)g->n_values + 1, sizeof *q->tensors);
  if (!q->tensors) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
    goto fail;
  }
  for (int v = 0; v < g->n_values; v++) {
    index[v] = -1;
    if (!mark[v])
      continue;
    index[v] = q->n_tensors;
    q->tensors[q->n_tensors++] = (het_quant_tensor){
        .value = v, .name = g->values[v].name, .reader = mark[v]};
  }
  /* A bias is quantized with its input's scale: that input must have one. */
  for (int i = 0; i < q->n_nodes; i++) {
    het_quant_node *qn = &q->nodes[i];
    int x = het_node_input(&g->nodes[qn->node], 0);
    qn->act_tensor = x >= 0 ? index[x] : -1;
    if (qn->act_tensor < 0)
      qn->bias = -1;
  }
fail:
  free(readers);
  free(reader_node);
  free(mark);
  free(index);
  return st;
}
