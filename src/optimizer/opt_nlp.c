/* opt_nlp.c — level all: transformer fusions into hetrt-domain ops.
 * The Erf form of Gelu (x * 0.5 * (1 + erf(x / sqrt2)), in the orders
 * torch and HF export) becomes hetrt.Gelu; ReduceMean/Sub/Pow/ReduceMean/
 * Add(eps)/Sqrt/Div (+ Mul gamma, + Add beta) over the last axis becomes
 * hetrt.LayerNorm; MatMul with constant 2-D B + Add of a constant bias
 * over the last axis becomes hetrt.FusedMatMul, which then takes over a
 * following hetrt.Gelu.  Attention: opt_nlp_attention.c.  A pattern fires
 * only when its intermediate values have exactly the readers the pattern
 * has and are not pinned, for float32, with exact constants.  The last
 * node of a pattern is rewritten in place (it keeps its output value), the
 * others die.
 */
#include <math.h>
#include <string.h>

#include "core/status.h"
#include "optimizer/opt_internal.h"
#include "optimizer/opt_nlp.h"

/* The live ai.onnx node of type op producing v, or -1. */
int het_opt_nlp_producer(const het_opt *o, int v, const char *op) {
  if (v < 0 || v >= o->n_values || o->g->values[v].producer < 0)
    return -1;
  int n = o->g->values[v].producer;
  const het_node *node = &o->g->nodes[n];
  if (o->dead[n] || *node->domain || strcmp(node->op_type, op) != 0 ||
      node->n_outputs != 1)
    return -1;
  return n;
}

/* The only live reader of v when it is an ai.onnx op node (any op when
 * op is NULL) and v has one use and is not pinned; -1 otherwise. */
int het_opt_nlp_reader(const het_opt *o, int v, const char *op) {
  if (v < 0 || het_opt_uses(o, v) != 1)
    return -1;
  const het_graph *g = o->g;
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    if (o->dead[n])
      continue;
    for (int i = 0; i < node->n_inputs; i++)
      if (node->inputs[i] == v)
        return (*node->domain || node->n_outputs != 1 ||
                (op && strcmp(node->op_type, op) != 0))
                   ? -1
                   : n;
  }
  return -1;
}

/* v is a constant float32 holding one value. */
bool het_opt_nlp_scalar(const het_graph *g, int v, float *out) {
  if (v < 0 || !het_opt_is_constant(g, v))
    return false;
  const het_tensor *t = g->values[v].initializer;
  if (t->dtype != HET_DTYPE_FLOAT32 || het_tensor_count(t) != 1)
    return false;
  *out = ((const float *)t->data)[0];
  return true;
}

bool het_opt_nlp_f32(const het_graph *g, int v) {
  return v >= 0 && g->values[v].dtype == HET_DTYPE_FLOAT32;
}

het_status het_opt_rewrite(het_opt *o, int n, const char *domain, int opset,
                           const char *op, const int *in, int n_in,
                           het_attr *attrs, int n_attrs) {
  het_graph *g = o->g;
  het_node *node = &g->nodes[n];
  int *ins = het_arena_calloc(&g->arena, (size_t)n_in, sizeof *ins);
  if (!ins)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < node->n_inputs; i++)
    if (node->inputs[i] >= 0 && node->inputs[i] < o->n_values)
      o->uses[node->inputs[i]]--;
  for (int i = 0; i < n_in; i++) {
    ins[i] = in[i];
    if (in[i] >= 0 && in[i] < o->n_values)
      o->uses[in[i]]++;
  }
  node->inputs = ins;
  node->n_inputs = n_in;
  node->op_type = op;
  node->domain = domain;
  node->opset = opset;
  node->attrs = attrs;
  node->n_attrs = n_attrs;
  o->changes++;
  return HET_OK;
}

het_status het_opt_nlp_rewrite(het_opt *o, int n, const char *op,
                               const int *in, int n_in, het_attr *attrs,
                               int n_attrs) {
  return het_opt_rewrite(o, n, "hetrt", 1, op, in, n_in, attrs, n_attrs);
}

/* One float attribute in the arena. */
static het_attr *nlp_attr_float(het_graph *g, const char *name, float f) {
  het_attr *a = het_arena_calloc(&g->arena, 1, sizeof *a);
  if (a)
    *a = (het_attr){.name = name, .type = HET_ATTR_FLOAT, .f = f};
  return a;
}

/* Binary node n has v as one input: the other one (or -1). */
static int nlp_other(const het_node *n, int v) {
  if (n->n_inputs != 2)
    return -1;
  return n->inputs[0] == v ? n->inputs[1]
                           : (n->inputs[1] == v ? n->inputs[0] : -1);
}

static bool nlp_near(float a, float b) { return fabsf(a - b) <= 1e-3f; }

bool het_opt_const_operand(const het_graph *g, const het_node *n, float c,
                           float tol, int *x) {
  float f;
  for (int i = 0; i < 2 && n->n_inputs == 2; i++)
    if (het_opt_nlp_scalar(g, n->inputs[i], &f) && fabsf(f - c) <= tol &&
        n->inputs[1 - i] >= 0) {
      *x = n->inputs[1 - i];
      return true;
    }
  return false;
}

/* het_opt_const_operand within nlp_near's tolerance. */
static bool nlp_const_operand(const het_graph *g, const het_node *n, float c,
                              int *x) {
  return het_opt_const_operand(g, n, c, 1e-3f, x);
}

/* ---- Gelu ---- */

/* Erf node e: its input is x / sqrt2 (Div) or x * (1/sqrt2) (Mul). */
static int nlp_gelu_input(const het_opt *o, const het_node *e, int *dn) {
  const het_graph *g = o->g;
  int in = het_node_input(e, 0), x;
  if (het_opt_uses(o, in) != 1)
    return -1;
  int d = het_opt_nlp_producer(o, in, "Div");
  float c;
  if (d >= 0) {
    const het_node *dv = &g->nodes[d];
    if (dv->n_inputs != 2 || !het_opt_nlp_scalar(g, dv->inputs[1], &c) ||
        !nlp_near(c, 1.41421356f))
      return -1;
    x = dv->inputs[0];
  } else if ((d = het_opt_nlp_producer(o, in, "Mul")) >= 0) {
    if (!nlp_const_operand(g, &g->nodes[d], 0.70710678f, &x))
      return -1;
  } else {
    return -1;
  }
  *dn = d;
  return het_opt_nlp_f32(g, x) ? x : -1;
}

/* From m1 = Mul(?, 1 + erf): the final node of the Gelu over x and the
 * extra node to kill (-1 if none); -1 when the orders do not match. */
static int nlp_gelu_tail(const het_opt *o, int m1, int a_out, int x,
                         int *extra) {
  const het_graph *g = o->g;
  int other = nlp_other(&g->nodes[m1], a_out), y;
  float f;
  *extra = -1;
  if (other == x || (het_opt_nlp_scalar(g, other, &f) && nlp_near(f, 0.5f))) {
    int m2 = het_opt_nlp_reader(o, g->nodes[m1].outputs[0], "Mul");
    if (m2 < 0)
      return -1;
    int want = other == x ? -2 : x; /* -2: the 0.5 constant */
    int rest = nlp_other(&g->nodes[m2], g->nodes[m1].outputs[0]);
    if (want == -2 ? !(het_opt_nlp_scalar(g, rest, &f) && nlp_near(f, 0.5f))
                   : rest != x)
      return -1;
    *extra = m1;
    return m2;
  }
  int h = het_opt_nlp_producer(o, other, "Mul");
  if (h < 0 || het_opt_uses(o, other) != 1 ||
      !nlp_const_operand(g, &g->nodes[h], 0.5f, &y) || y != x)
    return -1;
  *extra = h;
  return m1;
}

static het_status nlp_fuse_gelu_at(het_opt *o, int e) {
  het_graph *g = o->g;
  int d, a, m1, extra;
  int x = nlp_gelu_input(o, &g->nodes[e], &d);
  if (x < 0 || (a = het_opt_nlp_reader(o, g->nodes[e].outputs[0], "Add")) < 0)
    return HET_OK;
  int one_side;
  if (!nlp_const_operand(g, &g->nodes[a], 1.0f, &one_side) ||
      one_side != g->nodes[e].outputs[0])
    return HET_OK;
  if ((m1 = het_opt_nlp_reader(o, g->nodes[a].outputs[0], "Mul")) < 0)
    return HET_OK;
  int fin = nlp_gelu_tail(o, m1, g->nodes[a].outputs[0], x, &extra);
  if (fin < 0)
    return HET_OK;
  int kill[] = {d, e, a, extra};
  for (int i = 0; i < 4; i++)
    if (kill[i] >= 0)
      het_opt_kill_node(o, kill[i]);
  HET_TRY(het_opt_nlp_rewrite(o, fin, "Gelu", &x, 1, NULL, 0));
  if (o->stats)
    o->stats->gelus_fused++;
  return HET_OK;
}

static het_status nlp_fuse_gelus(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (!o->dead[n] && !*node->domain && strcmp(node->op_type, "Erf") == 0 &&
        node->n_inputs == 1 && node->n_outputs == 1)
      HET_TRY(nlp_fuse_gelu_at(o, n));
  }
  return HET_OK;
}

/* ---- LayerNorm ---- */

/* ReduceMean node r reduces only the last axis of its input, keepdims. */
static bool nlp_mean_last(const het_graph *g, const het_node *r) {
  int x = het_node_input(r, 0);
  int rank = x >= 0 ? g->values[x].shape.rank : -1;
  if (rank < 1 || het_node_attr_int(r, "keepdims", 1) != 1)
    return false;
  size_t na = 0;
  const int64_t *axes = NULL;
  if (r->opset >= 18) {
    int a = het_node_input(r, 1);
    if (a < 0 || !het_opt_is_constant(g, a) ||
        g->values[a].initializer->dtype != HET_DTYPE_INT64)
      return false;
    axes = g->values[a].initializer->data;
    na = (size_t)het_tensor_count(g->values[a].initializer);
  } else {
    axes = het_node_attr_ints(r, "axes", &na);
  }
  return na == 1 && (axes[0] == -1 || axes[0] == rank - 1);
}

/* Constant float32 p holding d values along the last axis of an x of
 * rank r (shape [d] or [1, .., 1, d], rank <= r). */
static bool nlp_affine_param(const het_graph *g, int p, int64_t d, int r) {
  if (p < 0 || !het_opt_is_constant(g, p) || d < 1)
    return false;
  const het_tensor *t = g->values[p].initializer;
  return t->dtype == HET_DTYPE_FLOAT32 && t->rank >= 1 && t->rank <= r &&
         t->dims[t->rank - 1] == d && het_tensor_count(t) == d;
}

/* The Sub, Pow, ReduceMean, Add(eps), Sqrt, Div chain after ReduceMean
 * r1 over x: fills nodes[6] and eps; the Div's index or -1. */
static int nlp_ln_core(const het_opt *o, int r1, int x, int *nodes,
                       float *eps) {
  const het_graph *g = o->g;
  int s = het_opt_nlp_reader(o, g->nodes[r1].outputs[0], "Sub");
  if (s < 0 || g->nodes[s].n_inputs != 2 || g->nodes[s].inputs[0] != x ||
      het_opt_uses(o, g->nodes[s].outputs[0]) != 2)
    return -1;
  int sv = g->nodes[s].outputs[0], p = -1, dv = -1;
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *nd = &g->nodes[n];
    if (o->dead[n] || *nd->domain || nd->n_inputs != 2 || nd->inputs[0] != sv)
      continue;
    if (strcmp(nd->op_type, "Pow") == 0)
      p = n;
    else if (strcmp(nd->op_type, "Div") == 0)
      dv = n;
  }
  float two;
  if (p < 0 || dv < 0 || !het_opt_nlp_scalar(g, g->nodes[p].inputs[1], &two) ||
      two != 2.0f)
    return -1;
  int r2 = het_opt_nlp_reader(o, g->nodes[p].outputs[0], "ReduceMean");
  if (r2 < 0 || !nlp_mean_last(g, &g->nodes[r2]))
    return -1;
  int ae = het_opt_nlp_reader(o, g->nodes[r2].outputs[0], "Add");
  if (ae < 0 ||
      !het_opt_nlp_scalar(g, nlp_other(&g->nodes[ae], g->nodes[r2].outputs[0]),
                          eps) ||
      !(*eps >= 0.0f))
    return -1;
  int sq = het_opt_nlp_reader(o, g->nodes[ae].outputs[0], "Sqrt");
  if (sq < 0 || het_opt_nlp_reader(o, g->nodes[sq].outputs[0], "Div") != dv ||
      g->nodes[dv].inputs[1] != g->nodes[sq].outputs[0])
    return -1;
  int list[6] = {r1, s, p, r2, ae, sq};
  memcpy(nodes, list, sizeof list);
  return dv;
}

static het_status nlp_fuse_layernorm_at(het_opt *o, int r1) {
  het_graph *g = o->g;
  int x = het_node_input(&g->nodes[r1], 0), nodes[6];
  float eps;
  if (!het_opt_nlp_f32(g, x) || !nlp_mean_last(g, &g->nodes[r1]))
    return HET_OK;
  int fin = nlp_ln_core(o, r1, x, nodes, &eps);
  if (fin < 0)
    return HET_OK;
  const het_shape *xs = &g->values[x].shape;
  int64_t d = xs->dims[xs->rank - 1].value;
  int in[3] = {x, -1, -1}, dead_div = -1, cur = g->nodes[fin].outputs[0];
  int m = het_opt_nlp_reader(o, cur, "Mul");
  if (m >= 0 && nlp_affine_param(g, nlp_other(&g->nodes[m], cur), d,
                                 xs->rank)) {
    in[1] = nlp_other(&g->nodes[m], cur);
    dead_div = fin;
    fin = m;
    cur = g->nodes[m].outputs[0];
  }
  int a = het_opt_nlp_reader(o, cur, "Add");
  if (a >= 0 && nlp_affine_param(g, nlp_other(&g->nodes[a], cur), d,
                                 xs->rank)) {
    in[2] = nlp_other(&g->nodes[a], cur);
    if (dead_div < 0)
      dead_div = fin;
    else
      het_opt_kill_node(o, fin);
    fin = a;
  }
  het_attr *at = nlp_attr_float(g, "epsilon", eps);
  if (!at)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < 6; i++)
    het_opt_kill_node(o, nodes[i]);
  if (dead_div >= 0)
    het_opt_kill_node(o, dead_div);
  int n_in = in[2] >= 0 ? 3 : (in[1] >= 0 ? 2 : 1);
  HET_TRY(het_opt_nlp_rewrite(o, fin, "LayerNorm", in, n_in, at, 1));
  if (o->stats)
    o->stats->layernorms_fused++;
  return HET_OK;
}

static het_status nlp_fuse_layernorms(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    const het_node *node = &g->nodes[n];
    if (!o->dead[n] && !*node->domain &&
        strcmp(node->op_type, "ReduceMean") == 0 && node->n_outputs == 1)
      HET_TRY(nlp_fuse_layernorm_at(o, n));
  }
  return HET_OK;
}

/* ---- MatMul + bias (+ Gelu) ---- */

static het_status nlp_fuse_matmul_add_at(het_opt *o, int mm) {
  het_graph *g = o->g;
  const het_node *node = &g->nodes[mm];
  int a = het_node_input(node, 0), b = het_node_input(node, 1);
  if (node->n_inputs != 2 || !het_opt_nlp_f32(g, a) ||
      g->values[a].shape.rank < 2 || b < 0 || !het_opt_is_constant(g, b))
    return HET_OK;
  const het_tensor *w = g->values[b].initializer;
  if (w->dtype != HET_DTYPE_FLOAT32 || w->rank != 2)
    return HET_OK;
  int y = node->outputs[0];
  int ad = het_opt_nlp_reader(o, y, "Add");
  if (ad < 0)
    return HET_OK;
  int bias = nlp_other(&g->nodes[ad], y);
  if (!nlp_affine_param(g, bias, w->dims[1], g->values[a].shape.rank))
    return HET_OK;
  int in[3] = {a, b, bias};
  het_opt_kill_node(o, mm);
  HET_TRY(het_opt_nlp_rewrite(o, ad, "FusedMatMul", in, 3, NULL, 0));
  if (o->stats)
    o->stats->matmul_adds_fused++;
  return HET_OK;
}

/* A hetrt.FusedMatMul without activation whose only reader is a
 * hetrt.Gelu: the Gelu node becomes the FusedMatMul with gelu = 1. */
static het_status nlp_fuse_matmul_gelu_at(het_opt *o, int fm) {
  het_graph *g = o->g;
  het_node *f = &g->nodes[fm];
  int y = f->outputs[0];
  if (f->n_attrs != 0 || y < 0 || het_opt_uses(o, y) != 1)
    return HET_OK;
  int ge = -1;
  for (int n = 0; n < g->n_nodes && ge < 0; n++)
    if (!o->dead[n] && g->nodes[n].n_inputs >= 1 &&
        g->nodes[n].inputs[0] == y)
      ge = n;
  if (ge < 0 || strcmp(g->nodes[ge].domain, "hetrt") != 0 ||
      strcmp(g->nodes[ge].op_type, "Gelu") != 0)
    return HET_OK;
  het_attr *at = het_arena_calloc(&g->arena, 1, sizeof *at);
  if (!at)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  *at = (het_attr){.name = "gelu", .type = HET_ATTR_INT, .i = 1};
  int in[3] = {f->inputs[0], f->inputs[1], f->inputs[2]};
  het_opt_kill_node(o, fm);
  return het_opt_nlp_rewrite(o, ge, "FusedMatMul", in, 3, at, 1);
}

static bool nlp_is(const het_node *n, const char *domain, const char *op) {
  return strcmp(n->domain, domain) == 0 && strcmp(n->op_type, op) == 0 &&
         n->n_outputs == 1;
}

het_status het_opt_fuse_nlp(het_opt *o) {
  het_graph *g = o->g;
  HET_TRY(nlp_fuse_gelus(o));
  HET_TRY(nlp_fuse_layernorms(o));
  HET_TRY(het_opt_fuse_attention(o));
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (!o->dead[n] && nlp_is(&g->nodes[n], "", "MatMul"))
      HET_TRY(nlp_fuse_matmul_add_at(o, n));
  }
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (!o->dead[n] && nlp_is(&g->nodes[n], "hetrt", "FusedMatMul") &&
        g->nodes[n].n_inputs == 3)
      HET_TRY(nlp_fuse_matmul_gelu_at(o, n));
  }
  return HET_OK;
}
