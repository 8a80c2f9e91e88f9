/* opt_hard.c — hard-swish and hard-sigmoid as exporters write them out
 * (paddle2onnx, tf2onnx, hand-written MobileNetV3 blocks) become the ONNX
 * ops, which a Conv before them then takes over (opt_activation.c):
 *   Clip(x + 3, 0, 6) / 6          (or * 1/6)   → HardSigmoid(x; 1/6, 0.5)
 *   Clip(x * a + b, 0, 1)                      → HardSigmoid(x; a, b)
 *   x * HardSigmoid(x; 1/6, 0.5)   (either order) → HardSwish(x)
 *   (x * Clip(x + 3, 0, 6)) / 6    (or * 1/6)   → HardSwish(x)
 *   Max(x, x * a), 0 <= a < 1      (any order)  → LeakyRelu(x; a)
 *   Max(x, 0)                      (any order)  → Relu(x)
 * (the last two as tf2onnx and Keras write leaky ReLU and ReLU);
 * float32 only, constants scalar, every intermediate read once and not
 * pinned.  The rewritten node keeps its output value and name; the nodes
 * it replaces go.  HardSwish is an opset-14 op: the node carries opset 14.
 */
#include <math.h>
#include <string.h>

#include "core/status.h"
#include "optimizer/opt_internal.h"
#include "optimizer/opt_nlp.h"

#define HARD_TOL 1e-5f

static bool hard_near(float a, float b) { return fabsf(a - b) <= HARD_TOL; }

/* The live ai.onnx node of op producing v when v is read once (and not
 * pinned); -1 otherwise. */
static int hard_producer(const het_opt *o, int v, const char *op) {
  return het_opt_uses(o, v) == 1 ? het_opt_nlp_producer(o, v, op) : -1;
}

/* Constant k (one element) broadcast against x leaves x's shape: its
 * rank is x's or less. */
static bool hard_keeps_shape(const het_graph *g, int k, int x) {
  return x >= 0 && g->values[x].shape.rank >= 0 &&
         g->values[k].initializer->rank <= g->values[x].shape.rank;
}

/* Binary node n with a scalar constant operand c that leaves the other's
 * shape: the other into *x. */
static bool hard_const_operand(const het_graph *g, const het_node *n, float c,
                               int *x) {
  return het_opt_const_operand(g, n, c, HARD_TOL, x) &&
         hard_keeps_shape(g, n->inputs[0] == *x ? n->inputs[1] : n->inputs[0],
                          *x);
}

/* Clip node n with constant bounds lo and hi; its input into *x. */
static bool hard_clip(const het_graph *g, const het_node *n, float lo,
                      float hi, int *x) {
  float a = -INFINITY, b = INFINITY;
  if (n->opset < 11) {
    a = het_node_attr_float(n, "min", -INFINITY);
    b = het_node_attr_float(n, "max", INFINITY);
  } else if (!(n->n_inputs > 1 && het_opt_nlp_scalar(g, n->inputs[1], &a)) ||
             !(n->n_inputs > 2 && het_opt_nlp_scalar(g, n->inputs[2], &b))) {
    return false;
  }
  if (!hard_near(a, lo) || !hard_near(b, hi))
    return false;
  *x = n->inputs[0];
  return true;
}

/* v = Clip(x + 3, 0, 6): x, and the Add and Clip nodes. */
static bool hard_relu6_of_x3(const het_opt *o, int v, int *x, int *add,
                             int *clip) {
  const het_graph *g = o->g;
  int in;
  *clip = hard_producer(o, v, "Clip");
  if (*clip < 0 || !hard_clip(g, &g->nodes[*clip], 0.0f, 6.0f, &in))
    return false;
  *add = hard_producer(o, in, "Add");
  return *add >= 0 && hard_const_operand(g, &g->nodes[*add], 3.0f, x);
}

/* Node n divides by 6 or multiplies by 1/6: what it scales into *v. */
static bool hard_sixth(const het_graph *g, const het_node *n, int *v) {
  if (*n->domain)
    return false;
  if (strcmp(n->op_type, "Div") == 0 && n->n_inputs == 2) {
    float f;
    *v = n->inputs[0];
    return het_opt_nlp_scalar(g, n->inputs[1], &f) && hard_near(f, 6.0f);
  }
  return strcmp(n->op_type, "Mul") == 0 &&
         hard_const_operand(g, n, 1.0f / 6.0f, v);
}

/* Node n becomes the ai.onnx op (opset) of x alone with attrs. */
static het_status hard_rewrite(het_opt *o, int n, const char *op, int opset,
                               int x, het_attr *attrs, int n_attrs) {
  return het_opt_rewrite(o, n, "", opset, op, &x, 1, attrs, n_attrs);
}

static het_attr *hard_sigmoid_attrs(het_graph *g, float alpha, float beta) {
  het_attr *a = het_arena_calloc(&g->arena, 2, sizeof *a);
  if (a) {
    a[0] = (het_attr){.name = "alpha", .type = HET_ATTR_FLOAT, .f = alpha};
    a[1] = (het_attr){.name = "beta", .type = HET_ATTR_FLOAT, .f = beta};
  }
  return a;
}

/* Max(x, x * a) with 0 <= a < 1 into LeakyRelu, Max(x, 0) into Relu:
 * node n, a two-input Max. */
static het_status hard_max(het_opt *o, int n, bool *done) {
  het_graph *g = o->g;
  const het_node *node = &g->nodes[n];
  for (int i = 0; i < 2; i++) {
    float c; /* exactly 0: Max(x, 1e-6) is no Relu */
    int x = node->inputs[1 - i];
    if (het_opt_nlp_scalar(g, node->inputs[i], &c) && c == 0.0f &&
        hard_keeps_shape(g, node->inputs[i], x)) {
      HET_TRY(hard_rewrite(o, n, "Relu", 6, x, NULL, 0));
      *done = true;
      return HET_OK;
    }
  }
  for (int i = 0; i < 2; i++) {
    int m = hard_producer(o, node->inputs[i], "Mul"), y;
    float a;
    if (m < 0 || g->nodes[m].n_inputs != 2)
      continue;
    for (int k = 0; k < 2; k++) {
      y = g->nodes[m].inputs[1 - k];
      if (y != node->inputs[1 - i] ||
          !het_opt_nlp_scalar(g, g->nodes[m].inputs[k], &a) ||
          !(a >= 0.0f && a < 1.0f) ||
          !hard_keeps_shape(g, g->nodes[m].inputs[k], y))
        continue;
      het_attr *at = het_arena_calloc(&g->arena, 1, sizeof *at);
      if (!at)
        return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
      *at = (het_attr){.name = "alpha", .type = HET_ATTR_FLOAT, .f = a};
      het_opt_kill_node(o, m);
      HET_TRY(hard_rewrite(o, n, "LeakyRelu", 6, y, at, 1));
      *done = true;
      return HET_OK;
    }
  }
  return HET_OK;
}

/* Node n ends a written-out hard-swish or hard-sigmoid: rewrites it. */
static het_status hard_try(het_opt *o, int n, bool *done) {
  het_graph *g = o->g;
  const het_node *node = &g->nodes[n];
  *done = false;
  if (node->n_outputs != 1 || !het_opt_nlp_f32(g, node->outputs[0]))
    return HET_OK;
  int v, x, add, clip;
  if (!*node->domain && strcmp(node->op_type, "Max") == 0 &&
      node->n_inputs == 2)
    return hard_max(o, n, done);
  /* ... / 6 over Clip(x + 3) (hard-sigmoid) or x * Clip(x + 3) (swish) */
  if (hard_sixth(g, node, &v)) {
    if (hard_relu6_of_x3(o, v, &x, &add, &clip)) {
      het_attr *a = hard_sigmoid_attrs(g, 1.0f / 6.0f, 0.5f);
      if (!a)
        return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
      het_opt_kill_node(o, clip);
      het_opt_kill_node(o, add);
      HET_TRY(hard_rewrite(o, n, "HardSigmoid", 6, x, a, 2));
      *done = true;
      return HET_OK;
    }
    int m = hard_producer(o, v, "Mul");
    const het_node *mul = m >= 0 ? &g->nodes[m] : NULL;
    for (int i = 0; mul && i < 2 && mul->n_inputs == 2; i++)
      if (hard_relu6_of_x3(o, mul->inputs[i], &x, &add, &clip) &&
          mul->inputs[1 - i] == x) {
        het_opt_kill_node(o, m);
        het_opt_kill_node(o, clip);
        het_opt_kill_node(o, add);
        HET_TRY(hard_rewrite(o, n, "HardSwish", 14, x, NULL, 0));
        *done = true;
        return HET_OK;
      }
    return HET_OK;
  }
  /* x * HardSigmoid(x; 1/6, 0.5) */
  if (!*node->domain && strcmp(node->op_type, "Mul") == 0 &&
      node->n_inputs == 2) {
    for (int i = 0; i < 2; i++) {
      int hs = hard_producer(o, node->inputs[i], "HardSigmoid");
      float alpha, beta;
      if (hs < 0)
        continue;
      het_node_act_params(&g->nodes[hs], &alpha, &beta);
      if (!hard_near(alpha, 1.0f / 6.0f) || !hard_near(beta, 0.5f) ||
          g->nodes[hs].inputs[0] != node->inputs[1 - i])
        continue;
      x = node->inputs[1 - i];
      het_opt_kill_node(o, hs);
      HET_TRY(hard_rewrite(o, n, "HardSwish", 14, x, NULL, 0));
      *done = true;
      return HET_OK;
    }
    return HET_OK;
  }
  /* Clip(x * a + b, 0, 1) */
  if (!*node->domain && strcmp(node->op_type, "Clip") == 0 &&
      hard_clip(g, node, 0.0f, 1.0f, &v)) {
    int ad = hard_producer(o, v, "Add"), mu;
    float a, b;
    const het_node *an = ad >= 0 ? &g->nodes[ad] : NULL;
    for (int i = 0; an && i < 2 && an->n_inputs == 2; i++) {
      if (!het_opt_nlp_scalar(g, an->inputs[i], &b) ||
          (mu = hard_producer(o, an->inputs[1 - i], "Mul")) < 0)
        continue;
      const het_node *mn = &g->nodes[mu];
      for (int k = 0; k < 2 && mn->n_inputs == 2; k++)
        if (het_opt_nlp_scalar(g, mn->inputs[k], &a)) {
          x = mn->inputs[1 - k];
          het_attr *at = hard_sigmoid_attrs(g, a, b);
          if (!at)
            return het_error(HET_ERR_OUT_OF_MEMORY,
                             "optimizer: out of memory");
          het_opt_kill_node(o, ad);
          het_opt_kill_node(o, mu);
          HET_TRY(hard_rewrite(o, n, "HardSigmoid", 6, x, at, 2));
          *done = true;
          return HET_OK;
        }
    }
  }
  return HET_OK;
}

het_status het_opt_fuse_hard(het_opt *o) {
  het_graph *g = o->g;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    bool done;
    if (o->dead[n])
      continue;
    HET_TRY(hard_try(o, n, &done));
    if (done && o->stats)
      o->stats->hard_activations_fused++;
  }
  return HET_OK;
}
