/* opt_qlut.c — an 8-bit activation through a table.  A per-tensor
 * QuantizeLinear whose input is computed by elementwise float ops from one
 * per-tensor DequantizeLinear's output and scalar constants (a Sigmoid, a
 * LeakyRelu, hard-swish written out as x * HardSigmoid(x) with the
 * quantizer's Q/DQ pair between the two, a Gelu from Erf, ...) gives each
 * output byte as a function of one input byte: the chain becomes
 * hetrt.QLinearLut(x, table), the table holding the 256 results.  They
 * are computed here by the chain's own CPU kernels on every byte value,
 * so the fused node is bit-exact with the graph it replaces, and the
 * activation stays 8-bit between two int8 operators instead of a float
 * round trip through four to six nodes.  A DequantizeLinear read
 * directly by a QuantizeLinear of another scale or zero point (a
 * requantization: a MaxPool's output calibrated apart from its input, the
 * DQ having moved below the pool) is such a chain too; one of the same
 * scale and zero point is dropped before (opt_qdq.c).  The DequantizeLinear stays when
 * something else reads it; every other node of the chain must be read
 * only inside it.  Per-channel scales, a constant of more than one value
 * (it would broadcast), an op outside the list or a policy rule giving one
 * of the nodes a float precision keep the chain as it is.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/tensor.h"
#include "optimizer/opt_internal.h"
#include "optimizer/opt_nlp.h"

#define QLUT_MAX_NODES 16

/* Float ops of one output computed element by element (with scalar
 * constants as their other inputs). */
static const char *const qlut_ops[] = {
    "Relu",  "LeakyRelu", "Elu",      "Selu",       "Celu",  "Sigmoid",
    "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "Erf",
    "Exp",   "Log",       "Neg",      "Abs",        "Sqrt",  "Reciprocal",
    "Floor", "Ceil",      "Round",    "Identity",   "Clip",  "Add",
    "Sub",   "Mul",       "Div",      "Pow",        "Max",   "Min",
    "QuantizeLinear", "DequantizeLinear", NULL};

static bool qlut_listed(const het_node *n) {
  if (n->domain[0] || n->n_outputs != 1)
    return false;
  for (const char *const *op = qlut_ops; *op; op++)
    if (strcmp(*op, n->op_type) == 0)
      return true;
  return false;
}

static bool qlut_byte(het_dtype t) {
  return t == HET_DTYPE_UINT8 || t == HET_DTYPE_INT8;
}

static bool qlut_is(const het_node *n, const char *op) {
  return !n->domain[0] && strcmp(n->op_type, op) == 0;
}

/* The chain ending at QuantizeLinear qn: its nodes (qn excluded) and the
 * one 8-bit value they all start from (src, read by DequantizeLinears). */
typedef struct qlut_chain {
  int nodes[QLUT_MAX_NODES];
  int n;
  int src;
} qlut_chain;

static bool qlut_has(const qlut_chain *c, int node) {
  for (int i = 0; i < c->n; i++)
    if (c->nodes[i] == node)
      return true;
  return false;
}

/* Adds value v's producer and what it is computed from to c: constants
 * of one value end the walk, and so does a DequantizeLinear's 8-bit input
 * (a source); false when v comes from anything else. */
static bool qlut_walk(const het_opt *o, int v, qlut_chain *c, int *srcs,
                      int *n_srcs) {
  const het_graph *g = o->g;
  const het_tensor *k = het_opt_const_tensor(g, v);
  if (k)
    return het_tensor_count(k) == 1;
  int p = v >= 0 ? g->values[v].producer : -1;
  if (p < 0 || o->dead[p] || !qlut_listed(&g->nodes[p]))
    return false;
  if (qlut_has(c, p))
    return true;
  if (c->n == QLUT_MAX_NODES)
    return false;
  c->nodes[c->n++] = p;
  const het_node *n = &g->nodes[p];
  bool dq = qlut_is(n, "DequantizeLinear");
  if (!dq && g->values[n->outputs[0]].dtype != HET_DTYPE_FLOAT32 &&
      !qlut_is(n, "QuantizeLinear"))
    return false;
  for (int i = 0; i < n->n_inputs; i++) {
    int in = n->inputs[i];
    if (in < 0)
      continue;
    if (dq && i == 0 && !het_opt_const_tensor(g, in)) {
      if (!qlut_byte(g->values[in].dtype))
        return false;
      /* an 8-bit source, unless it is a Q of the chain (seen later) */
      bool seen = false;
      for (int s = 0; s < *n_srcs; s++)
        seen |= srcs[s] == in;
      if (!seen && *n_srcs == QLUT_MAX_NODES)
        return false; /* never dropped: a lost source would be misread */
      if (!seen)
        srcs[(*n_srcs)++] = in;
      continue;
    }
    if (!qlut_walk(o, in, c, srcs, n_srcs))
      return false;
  }
  return true;
}

/* Collects the chain of qn: sources produced by a QuantizeLinear are
 * walked through (a Q/DQ pair inside the chain) until one is left. */
static bool qlut_collect(const het_opt *o, int qn, qlut_chain *c) {
  const het_graph *g = o->g;
  int srcs[QLUT_MAX_NODES], n_srcs = 0;
  c->n = 0;
  if (!qlut_walk(o, het_node_input(&g->nodes[qn], 0), c, srcs, &n_srcs))
    return false;
  for (int s = 0; s < n_srcs && n_srcs > 1; s++) {
    int v = srcs[s], p = g->values[v].producer;
    if (p < 0 || !qlut_is(&g->nodes[p], "QuantizeLinear"))
      continue;
    /* on copies: a Q that does not lead back into the chain (the
     * model's input quantized, say) stays a source */
    qlut_chain c2 = *c;
    int s2[QLUT_MAX_NODES], n2 = n_srcs - 1;
    memcpy(s2, srcs, sizeof(int) * (size_t)n_srcs);
    s2[s] = s2[n2];
    if (!qlut_walk(o, v, &c2, s2, &n2))
      continue;
    for (int t = 0; t < n2; t++) /* the Q's own output is no source */
      if (s2[t] == v)
        s2[t--] = s2[--n2];
    *c = c2;
    memcpy(srcs, s2, sizeof(int) * (size_t)n2);
    n_srcs = n2;
    s = -1; /* the walk may have added sources: look again */
  }
  if (n_srcs != 1)
    return false;
  c->src = srcs[0];
  return true;
}

/* Every reader of the chain's values is in the chain or qn; a
 * DequantizeLinear of the source may have others (it stays): *keep. */
static bool qlut_closed(const het_opt *o, int qn, const qlut_chain *c,
                        bool *keep) {
  const het_graph *g = o->g;
  for (int i = 0; i < c->n; i++) {
    int v = g->nodes[c->nodes[i]].outputs[0];
    int inside = 0;
    for (int j = 0; j <= c->n; j++) {
      const het_node *r = &g->nodes[j < c->n ? c->nodes[j] : qn];
      for (int k = 0; k < r->n_inputs; k++)
        inside += r->inputs[k] == v;
    }
    keep[i] = het_opt_uses(o, v) > inside;
    if (keep[i] && !(qlut_is(&g->nodes[c->nodes[i]], "DequantizeLinear") &&
                     het_node_input(&g->nodes[c->nodes[i]], 0) == c->src))
      return false;
  }
  return true;
}

/* The value tensors the evaluation has made (value id -> tensor). */
typedef struct qlut_vals {
  int id[QLUT_MAX_NODES + 2];
  het_tensor *t[QLUT_MAX_NODES + 2];
  int n;
} qlut_vals;

static het_tensor *qlut_val(const qlut_vals *m, int v) {
  for (int i = 0; i < m->n; i++)
    if (m->id[i] == v)
      return m->t[i];
  return NULL;
}

/* Runs node n on the values made so far and constants; its output joins
 * m.  UNSUPPORTED when a kernel refuses. */
static het_status qlut_eval(const het_graph *g, const het_node *n,
                            qlut_vals *m) {
  het_tensor *in[8] = {0}, *out[1] = {0};
  if (n->n_inputs > 8)
    return het_error(HET_ERR_UNSUPPORTED, "qlut: too many inputs");
  for (int i = 0; i < n->n_inputs; i++) {
    int v = n->inputs[i];
    in[i] = v < 0 ? NULL : qlut_val(m, v);
    if (v >= 0 && !in[i])
      in[i] = (het_tensor *)het_opt_const_tensor(g, v);
  }
  HET_TRY(het_opt_eval_node(g, n, in, out));
  m->id[m->n] = n->outputs[0];
  m->t[m->n++] = out[0];
  return HET_OK;
}

/* The table of the chain c ending at qn: the chain's nodes in graph
 * order, then qn, on the 256 byte values of the source (index i is byte
 * i for uint8, i - 128 for int8). */
static het_status qlut_table(const het_opt *o, int qn, const qlut_chain *c,
                             const int *pos, het_tensor **table) {
  const het_graph *g = o->g;
  qlut_vals m = {.n = 0};
  int64_t n256 = 256;
  het_dtype st = g->values[c->src].dtype;
  het_status s = het_tensor_create_empty(st, &n256, 1, &m.t[0]);
  if (s != HET_OK)
    return s;
  m.id[0] = c->src;
  m.n = 1;
  uint8_t *b = m.t[0]->data;
  for (int i = 0; i < 256; i++)
    b[i] = (uint8_t)(st == HET_DTYPE_INT8 ? i ^ 0x80 : i);
  int order[QLUT_MAX_NODES];
  memcpy(order, c->nodes, sizeof(int) * (size_t)c->n);
  for (int i = 1; i < c->n; i++) /* by position in g->order */
    for (int j = i; j > 0 && pos[order[j]] < pos[order[j - 1]]; j--) {
      int t = order[j];
      order[j] = order[j - 1];
      order[j - 1] = t;
    }
  for (int i = 0; s == HET_OK && i < c->n; i++)
    s = qlut_eval(g, &g->nodes[order[i]], &m);
  if (s == HET_OK)
    s = qlut_eval(g, &g->nodes[qn], &m);
  if (s == HET_OK) {
    *table = m.t[m.n - 1];
    m.n--;
    if (het_tensor_count(*table) != 256 || !qlut_byte((*table)->dtype)) {
      het_tensor_destroy(*table);
      s = het_error(HET_ERR_UNSUPPORTED, "qlut: not a table of bytes");
    }
  }
  for (int i = 0; i < m.n; i++)
    het_tensor_destroy(m.t[i]);
  return s;
}

/* The name of the chain's first compute node in graph order (reports and
 * policy rules know the fused node by a name of the model's); a
 * requantization's is its QuantizeLinear's, qn. */
static const char *qlut_name(const het_graph *g, const qlut_chain *c,
                             const int *pos, int qn) {
  int best = qn;
  for (int i = 0; i < c->n; i++) {
    const het_node *n = &g->nodes[c->nodes[i]];
    if (!qlut_is(n, "QuantizeLinear") && !qlut_is(n, "DequantizeLinear") &&
        (best == qn || pos[c->nodes[i]] < pos[best]))
      best = c->nodes[i];
  }
  return g->nodes[best].name;
}

/* A policy rule giving a node of the chain, or its Q, a float precision
 * keeps the chain as written. */
static bool qlut_kept_float(const het_opt *o, int qn, const qlut_chain *c) {
  const het_optimize_int8 *x = o->int8;
  for (int i = 0; x && i < x->n_names; i++)
    for (int j = 0; !x->int8[i] && j <= c->n; j++)
      if (strcmp(x->names[i],
                 o->g->nodes[j < c->n ? c->nodes[j] : qn].name) == 0)
        return true;
  return false;
}

static het_status qlut_try(het_opt *o, int qn, const int *pos) {
  het_graph *g = o->g;
  const het_node *q = &g->nodes[qn];
  int y = q->outputs[0];
  qlut_chain c;
  bool keep[QLUT_MAX_NODES];
  if (y < 0 || !qlut_byte(g->values[y].dtype) || !qlut_collect(o, qn, &c) ||
      !qlut_closed(o, qn, &c, keep) || qlut_kept_float(o, qn, &c))
    return HET_OK;
  for (int i = 0; i < c.n; i++)
    if (pos[c.nodes[i]] < 0)
      return HET_OK; /* added this round: not in g->order */
  het_tensor *table = NULL;
  het_status st = qlut_table(o, qn, &c, pos, &table);
  if (st == HET_ERR_OUT_OF_MEMORY)
    return st;
  if (st != HET_OK) { /* a kernel refused: the chain stays */
    het_error_clear();
    return HET_OK;
  }
  int in[2] = {c.src, -1};
  HET_TRY(het_graph_add_constant(g, "qlut_table", table, &in[1]));
  const char *name = qlut_name(g, &c, pos, qn);
  for (int i = 0; i < c.n; i++)
    if (!keep[i])
      het_opt_kill_node(o, c.nodes[i]);
  HET_TRY(het_opt_rewrite(o, qn, "hetrt", 1, "QLinearLut", in, 2, NULL, 0));
  g->nodes[qn].name = name;
  if (o->stats)
    o->stats->qdq_luts++;
  return HET_OK;
}

het_status het_opt_fuse_qlut(het_opt *o) {
  het_graph *g = o->g;
  if (het_graph_opset(g, "") < 10)
    return HET_OK;
  int *pos = malloc(sizeof(int) * (size_t)(g->n_nodes > 0 ? g->n_nodes : 1));
  if (!pos)
    return het_error(HET_ERR_OUT_OF_MEMORY, "optimizer: out of memory");
  for (int i = 0; i < g->n_nodes; i++)
    pos[i] = -1;
  for (int k = 0; k < o->n_nodes; k++)
    pos[g->order[k]] = k;
  het_status st = HET_OK;
  /* last first: a chain's inner Q/DQ pair is taken into the chain of the
   * Q after it before it could become a table of its own */
  for (int k = o->n_nodes - 1; st == HET_OK && k >= 0; k--) {
    int n = g->order[k];
    if (!o->dead[n] && qlut_is(&g->nodes[n], "QuantizeLinear"))
      st = qlut_try(o, n, pos);
  }
  free(pos);
  return st;
}
