/* quant_graph.c — the graphs the quantizer builds from the float model:
 * the model with extra outputs (calibration, evaluation) and the QDQ
 * model: a QuantizeLinear/DequantizeLinear pair after every chosen
 * activation, constant weights stored as int8 (symmetric, [-127, 127],
 * one scale per output channel or per tensor) behind a DequantizeLinear,
 * biases as int32 in the accumulator's scale (input scale × weight
 * scale); in dynamic mode MatMuls with a constant weight become
 * DynamicQuantizeLinear + MatMulInteger.  Every graph is a fresh load of
 * the model's bytes, so value and node ids match q->g.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "onnx/loader.h"
#include "quant/quant_internal.h"
#include "session/session_api.h"

het_status het_quant_load(const het_quantizer *q, het_graph **out) {
  return het_onnx_load_memory(q->model, q->model_size, q->base_dir, q->path,
                              out);
}

het_status het_quant_add_outputs(het_graph *g, const int *values, int n) {
  int *outs = het_arena_calloc(&g->arena, (size_t)g->n_outputs + n + 1,
                               sizeof *outs);
  if (!outs)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  memcpy(outs, g->outputs, (size_t)g->n_outputs * sizeof *outs);
  int count = g->n_outputs;
  for (int i = 0; i < n; i++) {
    het_value *v = &g->values[values[i]];
    if (v->flags & HET_VALUE_GRAPH_OUTPUT)
      continue;
    v->flags |= HET_VALUE_GRAPH_OUTPUT;
    v->dtype = HET_DTYPE_FLOAT32;
    outs[count++] = values[i];
  }
  g->outputs = outs;
  g->n_outputs = count;
  return HET_OK;
}

/* A new constant of dtype and dims named base (graph owns it); *data
 * points at its storage. */
static het_status het_quant_constant(het_graph *g, const char *base,
                                     het_dtype dtype, const int64_t *dims,
                                     int rank, void **data, int *id) {
  het_tensor *t;
  HET_TRY(het_tensor_create_empty(dtype, dims, rank, &t));
  HET_TRY(het_graph_add_constant(g, base, t, id));
  memset(t->data, 0, t->nbytes);
  *data = t->data;
  return HET_OK;
}

/* Appends op(inputs) -> outputs (values without a producer yet), the node
 * named "<label>_<op>"; attr (NULL: none) is one int attribute. */
static het_status het_quant_node_make(het_graph *g, int opset, const char *op,
                                      const char *label, const int *inputs,
                                      int n_inputs, const int *outputs,
                                      int n_outputs, const char *attr,
                                      int64_t value) {
  char name[300];
  snprintf(name, sizeof name, "%s_%s", label, op);
  het_node node = {.op_type = op, .domain = "", .opset = opset};
  node.name = het_arena_strdup(&g->arena, name);
  node.inputs = het_arena_calloc(&g->arena, (size_t)n_inputs, sizeof(int));
  node.outputs = het_arena_calloc(&g->arena, (size_t)n_outputs, sizeof(int));
  if (attr)
    node.attrs = het_arena_calloc(&g->arena, 1, sizeof *node.attrs);
  if (!node.name || !node.inputs || !node.outputs || (attr && !node.attrs))
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  memcpy(node.inputs, inputs, (size_t)n_inputs * sizeof(int));
  node.n_inputs = n_inputs;
  if (attr) {
    node.attrs[0] = (het_attr){.name = attr, .type = HET_ATTR_INT,
                               .i = value};
    node.n_attrs = 1;
  }
  memcpy(node.outputs, outputs, (size_t)n_outputs * sizeof(int));
  node.n_outputs = n_outputs;
  int id;
  return het_graph_add_node(g, &node, &id);
}

/* op(inputs) -> out; axis >= 0 adds an "axis" attribute. */
static het_status het_quant_node_add_to(het_graph *g, int opset,
                                        const char *op, const char *label,
                                        const int *inputs, int n_inputs,
                                        int64_t axis, int out) {
  return het_quant_node_make(g, opset, op, label, inputs, n_inputs, &out, 1,
                             axis >= 0 ? "axis" : NULL, axis);
}

/* As het_quant_node_add_to, into a fresh value named out_base (*out). */
static het_status het_quant_node_add(het_graph *g, int opset, const char *op,
                                     const char *out_base, const int *inputs,
                                     int n_inputs, int64_t axis, int *out) {
  int v;
  HET_TRY(het_graph_fresh_value(g, out_base, &v));
  HET_TRY(het_quant_node_add_to(g, opset, op, out_base, inputs, n_inputs,
                                axis, v));
  *out = v;
  return HET_OK;
}

/* Replaces reads of `from` by `to` in the first n_nodes nodes. */
static void het_quant_replace_reads(het_graph *g, int n_nodes, int from,
                                    int to) {
  for (int i = 0; i < n_nodes; i++) {
    het_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] == from)
        n->inputs[k] = to;
  }
}

/* The value QuantizeLinear reads for t.  A graph output keeps its name
 * for the dequantized value: its producer writes a fresh "<name>_float"
 * value instead, and *dq_is_v is set. */
static het_status het_quant_float_side(het_graph *g, int v, bool *dq_is_v,
                                       int *out) {
  het_value *val = &g->values[v];
  *dq_is_v = false;
  *out = v;
  if (!(val->flags & HET_VALUE_GRAPH_OUTPUT) || val->producer < 0)
    return HET_OK;
  char base[280];
  int f;
  snprintf(base, sizeof base, "%s_float", val->name);
  HET_TRY(het_graph_fresh_value(g, base, &f));
  het_node *p = &g->nodes[g->values[v].producer];
  for (int k = 0; k < p->n_outputs; k++)
    if (p->outputs[k] == v)
      p->outputs[k] = f;
  g->values[f].producer = g->values[v].producer;
  g->values[f].dtype = HET_DTYPE_FLOAT32;
  g->values[v].producer = -1;
  *dq_is_v = true;
  *out = f;
  return HET_OK;
}

/* Activation t: v -> QuantizeLinear -> DequantizeLinear -> *dq (readers
 * switch to *dq, or *dq is v itself for a graph output). */
static het_status het_quant_activation_pair(const het_quantizer *q,
                                            het_graph *g, int n_model_nodes,
                                            const het_quant_tensor *t,
                                            int *dq) {
  char base[280];
  void *p;
  int s, z, qv, x;
  bool dq_is_v;
  snprintf(base, sizeof base, "%s_scale", t->name);
  HET_TRY(het_quant_constant(g, base, HET_DTYPE_FLOAT32, NULL, 0, &p, &s));
  *(float *)p = t->scale;
  snprintf(base, sizeof base, "%s_zero_point", t->name);
  HET_TRY(het_quant_constant(g, base, q->act_type, NULL, 0, &p, &z));
  if (q->act_type == HET_DTYPE_INT8)
    *(int8_t *)p = (int8_t)t->zero_point;
  else
    *(uint8_t *)p = (uint8_t)t->zero_point;
  HET_TRY(het_quant_float_side(g, t->value, &dq_is_v, &x));
  snprintf(base, sizeof base, "%s_quantized", t->name);
  int in[3] = {x, s, z};
  HET_TRY(het_quant_node_add(g, q->opset, "QuantizeLinear", base, in, 3, -1,
                             &qv));
  in[0] = qv;
  if (dq_is_v) {
    *dq = t->value;
    return het_quant_node_add_to(g, q->opset, "DequantizeLinear", t->name,
                                 in, 3, -1, t->value);
  }
  snprintf(base, sizeof base, "%s_dequantized", t->name);
  HET_TRY(het_quant_node_add(g, q->opset, "DequantizeLinear", base, in, 3,
                             -1, dq));
  het_quant_replace_reads(g, n_model_nodes, t->value, *dq);
  return HET_OK;
}

/* Weight w (float32 constant) → int8 constant, its scales (float32, one
 * per channel along axis or one) and zero points (int8 zeros): consts[]
 * receives their value ids, *scales (malloc'd) the scales, channels their
 * count. */
static het_status het_quant_weight_consts(het_graph *g, int wv, int axis,
                                          float **scales, int64_t *channels,
                                          int *consts) {
  const het_tensor *w = g->values[wv].initializer;
  const char *name = g->values[wv].name;
  int64_t c = axis >= 0 ? w->dims[axis] : 1, inner = 1, outer = 1;
  for (int d = axis + 1; axis >= 0 && d < w->rank; d++)
    inner *= w->dims[d];
  for (int d = 0; d < axis; d++)
    outer *= w->dims[d];
  if (axis < 0)
    inner = het_tensor_count(w);
  float *s = calloc((size_t)c, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  const float *x = w->data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t i = 0; i < inner; i++) {
        float a = fabsf(x[(o * c + k) * inner + i]);
        if (isfinite(a) && a > s[k])
          s[k] = a;
      }
  for (int64_t k = 0; k < c; k++)
    s[k] = s[k] > 0 ? s[k] / 127.0f : 1.0f;
  char base[280];
  void *p;
  int wq, sv, zv;
  int64_t cdims[1] = {c};
  snprintf(base, sizeof base, "%s_quantized", name);
  het_status st = het_quant_constant(g, base, HET_DTYPE_INT8, w->dims,
                                     w->rank, &p, &wq);
  if (st != HET_OK)
    goto fail;
  w = g->values[wv].initializer; /* g->values may have moved */
  x = w->data;
  int8_t *qd = p;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < c; k++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t at = (o * c + k) * inner + i;
        float r = nearbyintf(x[at] / s[k]);
        qd[at] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : isfinite(r) ? r : 0);
      }
  snprintf(base, sizeof base, "%s_scale", name);
  st = het_quant_constant(g, base, HET_DTYPE_FLOAT32, cdims, axis >= 0, &p,
                          &sv);
  if (st != HET_OK)
    goto fail;
  memcpy(p, s, (size_t)c * sizeof *s);
  snprintf(base, sizeof base, "%s_zero_point", name);
  st = het_quant_constant(g, base, HET_DTYPE_INT8, cdims, axis >= 0, &p, &zv);
  if (st != HET_OK)
    goto fail;
  consts[0] = wq;
  consts[1] = sv;
  consts[2] = zv;
  *scales = s;
  *channels = c;
  return HET_OK;
fail:
  free(s);
  return st;
}

/* Weight w → int8 constants (het_quant_weight_consts) + DequantizeLinear
 * *dq. */
static het_status het_quant_weight(const het_quantizer *q, het_graph *g,
                                   int wv, int axis, float **scales,
                                   int64_t *channels, int *dq) {
  int in[3];
  char base[280];
  HET_TRY(het_quant_weight_consts(g, wv, axis, scales, channels, in));
  snprintf(base, sizeof base, "%s_dequantized", g->values[wv].name);
  het_status st = het_quant_node_add(g, q->opset, "DequantizeLinear", base,
                                     in, 3, axis, dq);
  if (st != HET_OK) {
    free(*scales);
    *scales = NULL;
  }
  return st;
}

/* Bias bv → int32 in scale x_scale × w_scales[c], behind a
 * DequantizeLinear (axis 0 when there are per-channel scales). */
static het_status het_quant_bias(const het_quantizer *q, het_graph *g, int bv,
                                 float x_scale, const float *w_scales,
                                 int64_t channels, int *dq) {
  const char *name = g->values[bv].name;
  int64_t n = g->values[bv].initializer->dims[0];
  int64_t sdims[1] = {channels};
  char base[280];
  void *p;
  int bq, sv, zv;
  snprintf(base, sizeof base, "%s_quantized", name);
  HET_TRY(het_quant_constant(g, base, HET_DTYPE_INT32, &n, 1, &p, &bq));
  const float *b = g->values[bv].initializer->data;
  int32_t *qd = p;
  for (int64_t i = 0; i < n; i++) {
    double s = (double)x_scale * w_scales[channels > 1 ? i : 0];
    double r = s > 0 ? nearbyint(b[i] / s) : 0;
    qd[i] = (int32_t)(r > 2147483647.0 ? 2147483647.0
                      : r < -2147483647.0 ? -2147483647.0
                      : isfinite(r) ? r : 0);
  }
  snprintf(base, sizeof base, "%s_scale", name);
  HET_TRY(het_quant_constant(g, base, HET_DTYPE_FLOAT32, sdims, channels > 1,
                             &p, &sv));
  for (int64_t c = 0; c < channels; c++)
    ((float *)p)[c] = x_scale * w_scales[c];
  snprintf(base, sizeof base, "%s_zero_point", name);
  HET_TRY(het_quant_constant(g, base, HET_DTYPE_INT32, sdims, channels > 1,
                             &p, &zv));
  snprintf(base, sizeof base, "%s_dequantized", name);
  int in[3] = {bq, sv, zv};
  return het_quant_node_add(g, q->opset, "DequantizeLinear", base, in, 3,
                            channels > 1 ? 0 : -1, dq);
}

/* Pass 2 of the rewrite: the weights (and biases) of the chosen nodes.
 * A weight several nodes share gets one int8 copy per reader, so each
 * reader's bias can use its own scales. */
static het_status het_quant_weights(const het_quantizer *q, het_graph *g) {
  for (int i = 0; i < q->n_nodes; i++) {
    const het_quant_node *qn = &q->nodes[i];
    if (qn->weight < 0)
      continue;
    int wv = g->nodes[qn->node].inputs[qn->weight], dq = -1;
    float *scales = NULL;
    int64_t channels = 0;
    HET_TRY(het_quant_weight(q, g, wv, qn->axis, &scales, &channels, &dq));
    g->nodes[qn->node].inputs[qn->weight] = dq;
    het_status st = HET_OK;
    if (qn->bias >= 0) {
      int bv = g->nodes[qn->node].inputs[qn->bias], bdq;
      float xs = q->tensors[qn->act_tensor].scale;
      st = het_quant_bias(q, g, bv, xs, scales, channels, &bdq);
      if (st == HET_OK)
        g->nodes[qn->node].inputs[qn->bias] = bdq;
    }
    free(scales);
    HET_TRY(st);
  }
  return HET_OK;
}

static het_status het_quant_count_read(void *ctx, int v) {
  ((int *)ctx)[v]++;
  return HET_OK;
}

/* Pass 3: the float weights and biases pass 2 replaced leave the model
 * when nothing reads them any more (a node or subgraph, a graph output). */
static het_status het_quant_drop_replaced(const het_quantizer *q,
                                          het_graph *g) {
  int *reads = calloc((size_t)g->n_values + 1, sizeof *reads);
  if (!reads)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int i = 0; i < g->n_nodes; i++) {
    const het_node *n = &g->nodes[i];
    for (int k = 0; k < n->n_inputs; k++)
      if (n->inputs[k] >= 0)
        reads[n->inputs[k]]++;
    for (int a = 0; a < n->n_attrs; a++) {
      const het_attr *at = &n->attrs[a];
      /* GRAPHS: at->n subgraphs from g->subgraphs[at->i] (loader). */
      size_t n_sub = at->type == HET_ATTR_GRAPH ? 1
                     : at->type == HET_ATTR_GRAPHS ? at->n : 0;
      for (size_t j = 0; j < n_sub; j++) {
        const het_graph *sub = at->type == HET_ATTR_GRAPH
                                   ? at->g : g->subgraphs[at->i + (int)j];
        (void)het_graph_outer_reads(g, sub, het_quant_count_read, reads);
      }
    }
  }
  for (int i = 0; i < q->n_nodes; i++) {
    const het_quant_node *qn = &q->nodes[i];
    const het_node *orig = &q->g->nodes[qn->node];
    for (int k = 0; k < 2; k++) {
      int at = k ? qn->bias : qn->weight;
      int v = at >= 0 ? orig->inputs[at] : -1;
      het_value *val = v >= 0 ? &g->values[v] : NULL;
      if (!val || reads[v] || !val->initializer ||
          (val->flags & (HET_VALUE_GRAPH_OUTPUT | HET_VALUE_GRAPH_INPUT)))
        continue;
      het_tensor_destroy(val->initializer);
      val->initializer = NULL;
      val->flags &= ~(unsigned)HET_VALUE_INITIALIZER;
      val->dtype = HET_DTYPE_UNDEFINED;
      val->shape.rank = -1;
    }
  }
  free(reads);
  return HET_OK;
}

/* Dynamic quantization of MatMul node qn (ONNX Runtime's
 * quantize_dynamic form): A -> DynamicQuantizeLinear (once per A) ->
 * MatMulInteger with the int8 weight -> Cast to float -> Mul by
 * a_scale × w_scale; the MatMul node itself becomes that last Mul, so its
 * output keeps its name.  aq[v] memoises A's three outputs (-1: none). */
static het_status het_quant_dynamic_matmul(const het_quantizer *q,
                                           het_graph *g,
                                           const het_quant_node *qn,
                                           int *aq) {
  int a = g->nodes[qn->node].inputs[0], wv = g->nodes[qn->node].inputs[1];
  int y = g->nodes[qn->node].outputs[0];
  const char *yname = g->values[y].name;
  char base[280];
  if (aq[3 * a] < 0) {
    const char *an = g->values[a].name;
    const char *suffix[3] = {"quantized", "scale", "zero_point"};
    for (int k = 0; k < 3; k++) {
      snprintf(base, sizeof base, "%s_%s", an, suffix[k]);
      HET_TRY(het_graph_fresh_value(g, base, &aq[3 * a + k]));
    }
    HET_TRY(het_quant_node_make(g, q->opset, "DynamicQuantizeLinear", an, &a,
                                1, &aq[3 * a], 3, NULL, 0));
  }
  float *scales = NULL;
  int64_t channels;
  int w[3], yi, yf, s;
  HET_TRY(het_quant_weight_consts(g, wv, qn->axis, &scales, &channels, w));
  free(scales);
  int mm[4] = {aq[3 * a], w[0], aq[3 * a + 2], w[2]};
  snprintf(base, sizeof base, "%s_int32", yname);
  HET_TRY(het_quant_node_add(g, q->opset, "MatMulInteger", base, mm, 4, -1,
                             &yi));
  snprintf(base, sizeof base, "%s_float", yname);
  HET_TRY(het_graph_fresh_value(g, base, &yf));
  HET_TRY(het_quant_node_make(g, q->opset, "Cast", base, &yi, 1, &yf, 1, "to",
                              HET_DTYPE_FLOAT32));
  int ss[2] = {aq[3 * a + 1], w[1]};
  snprintf(base, sizeof base, "%s_output_scale", yname);
  HET_TRY(het_quant_node_add(g, q->opset, "Mul", base, ss, 2, -1, &s));
  int *in = het_arena_calloc(&g->arena, 2, sizeof *in);
  if (!in)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  in[0] = yf;
  in[1] = s;
  het_node *n = &g->nodes[qn->node]; /* g->nodes may have moved */
  n->op_type = "Mul";
  n->inputs = in;
  n->n_inputs = 2;
  n->n_attrs = 0;
  return HET_OK;
}

static het_status het_quant_rewrite_dynamic(const het_quantizer *q,
                                            het_graph *g) {
  int *aq = malloc(3 * ((size_t)g->n_values + 1) * sizeof *aq);
  if (!aq)
    return het_error(HET_ERR_OUT_OF_MEMORY, "quantize: out of memory");
  for (int i = 0; i < 3 * g->n_values; i++)
    aq[i] = -1;
  het_status st = HET_OK;
  for (int i = 0; i < q->n_nodes && st == HET_OK; i++)
    st = het_quant_dynamic_matmul(q, g, &q->nodes[i], aq);
  free(aq);
  return st;
}

het_status het_quant_rewrite(const het_quantizer *q, het_graph *g,
                             int *dq_values) {
  if (q->dynamic) {
    HET_TRY(het_quant_rewrite_dynamic(q, g));
    HET_TRY(het_quant_drop_replaced(q, g));
    return het_graph_validate(g, NULL);
  }
  int n_model_nodes = g->n_nodes;
  /* Pass 1: activation pairs; readers among the model's nodes switch to
   * the dequantized value (a graph output moves its name onto it). */
  for (int i = 0; i < q->n_tensors; i++) {
    int dq;
    HET_TRY(het_quant_activation_pair(q, g, n_model_nodes, &q->tensors[i],
                                      &dq));
    if (dq_values)
      dq_values[i] = dq;
  }
  HET_TRY(het_quant_weights(q, g));
  HET_TRY(het_quant_drop_replaced(q, g));
  return het_graph_validate(g, NULL);
}

het_status het_quant_open(const het_quantizer *q, const het_graph *g,
                          het_session **out) {
  uint8_t *buf;
  size_t len;
  HET_TRY(het_onnx_save_memory(g, &buf, &len));
  het_status st = het_session_create_from_memory_impl(
      q->env, buf, len, q->session_options, out);
  free(buf);
  return st;
}

het_status het_quant_run(const het_quantizer *q, het_session *s,
                         het_tensor *const *row, const char *const *names,
                         int n, het_tensor **outputs) {
  return het_session_execute(s, q->input_names, row, (size_t)q->n_inputs,
                             names, (size_t)n, outputs, false);
}
