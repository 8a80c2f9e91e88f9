/* infer_sym.c — symbolic contents of shape tensors at load time (see
 * infer_sym.h).  Every rule checks what it reads (ranks, counts, index
 * bounds, overflow) and leaves the output unknown otherwise: a wrong
 * model fails where its kernels run, never here.
 */
#include "core/infer_sym.h"

#include <stdio.h>
#include <string.h>

#include "core/ops/tensor_ops.h"
#include "core/tensor.h"

#define HET_SYM_TEXT 64 /* longest derived symbol; longer ones stay unknown */

static bool sym_from_tensor(const het_tensor *t, het_sym_value *out) {
  if (!t || (t->dtype != HET_DTYPE_INT64 && t->dtype != HET_DTYPE_INT32) ||
      t->rank > 1)
    return false;
  int64_t c = het_tensor_count(t);
  if (c < 0 || c > HET_MAX_RANK)
    return false;
  out->n = (int)c;
  for (int k = 0; k < out->n; k++)
    out->e[k] = (het_sym_elem){.v = het_tensor_get_i64(t, k), .lit = true};
  return true;
}

/* The contents of value v: the table's, or a constant initializer's. */
static bool sym_get(const het_graph *g, const het_sym_value *tab, int v,
                    het_sym_value *out) {
  if (v < 0 || v >= g->n_values)
    return false;
  if (tab[v].n >= 0) {
    *out = tab[v];
    return true;
  }
  return het_graph_value_constant(g, v) &&
         sym_from_tensor(g->values[v].initializer, out);
}

static int sym_rank(const het_graph *g, int v) {
  return v >= 0 && v < g->n_values ? g->values[v].shape.rank : -1;
}

/* e's text (symbol or literal) into buf, parenthesized when compound. */
static bool sym_text(const het_sym_elem *e, char *buf, size_t cap) {
  int n = e->sym ? (strpbrk(e->sym, "*/+-") ? snprintf(buf, cap, "(%s)", e->sym)
                                            : snprintf(buf, cap, "%s", e->sym))
                 : snprintf(buf, cap, "%lld", (long long)e->v);
  return n > 0 && (size_t)n < cap;
}

/* a op b for op one of + - * /. */
static het_sym_elem sym_arith(het_graph *g, char op, het_sym_elem a,
                              het_sym_elem b) {
  het_sym_elem r = {0};
  if ((!a.lit && !a.sym) || (!b.lit && !b.sym))
    return r; /* unknown */
  if (a.lit && b.lit) {
    int64_t v;
    bool ok = op == '+'   ? !__builtin_add_overflow(a.v, b.v, &v)
              : op == '-' ? !__builtin_sub_overflow(a.v, b.v, &v)
              : op == '*' ? !__builtin_mul_overflow(a.v, b.v, &v)
                          : a.v >= 0 && b.v > 0 && ((v = a.v / b.v), true);
    return ok ? (het_sym_elem){.v = v, .lit = true} : r;
  }
  if (op == '*' && ((a.lit && a.v == 1) || (b.lit && b.v == 1)))
    return a.lit ? b : a;
  if ((op == '/' && b.lit && b.v == 1) || ((op == '+' || op == '-') && b.lit && b.v == 0))
    return a;
  if (op == '/' && !(b.lit && b.v > 0))
    return r; /* only exact division by a positive literal is named */
  char ta[HET_SYM_TEXT], tb[HET_SYM_TEXT], t[HET_SYM_TEXT];
  if (!sym_text(&a, ta, sizeof ta) || !sym_text(&b, tb, sizeof tb))
    return r;
  int n = snprintf(t, sizeof t, "%s%c%s", ta, op, tb);
  if (n <= 0 || (size_t)n >= sizeof t)
    return r;
  r.sym = het_arena_strdup(&g->arena, t);
  return r;
}

static void sym_shape(const het_graph *g, const het_node *node,
                      het_sym_value *out) {
  const het_shape *s = &g->values[node->inputs[0]].shape;
  if (s->rank < 0)
    return;
  int64_t start, end;
  het_shape_op_range(node, s->rank, &start, &end);
  out->n = 0;
  for (int64_t i = start; i < end; i++) {
    const het_dim *d = &s->dims[i];
    out->e[out->n++] = d->value >= 0 ? (het_sym_elem){.v = d->value, .lit = true}
                                     : (het_sym_elem){.sym = d->symbol};
  }
}

static void sym_gather(const het_graph *g, const het_sym_value *tab,
                       const het_node *node, het_sym_value *out) {
  het_sym_value d, ix;
  int64_t axis = het_node_attr_int(node, "axis", 0);
  if (node->n_inputs != 2 || sym_rank(g, node->inputs[0]) != 1 ||
      (axis != 0 && axis != -1) || !sym_get(g, tab, node->inputs[0], &d) ||
      !sym_get(g, tab, node->inputs[1], &ix) ||
      sym_rank(g, node->inputs[1]) > 1)
    return;
  for (int k = 0; k < ix.n; k++) {
    int64_t i = ix.e[k].v;
    if (!ix.e[k].lit || i < -d.n || i >= d.n)
      return;
    out->e[k] = d.e[i < 0 ? i + d.n : i];
  }
  out->n = ix.n;
}

static void sym_concat(const het_graph *g, const het_sym_value *tab,
                       const het_node *node, het_sym_value *out) {
  int64_t axis = het_node_attr_int(node, "axis", 0);
  if (axis != 0 && axis != -1)
    return;
  int n = 0;
  for (int i = 0; i < node->n_inputs; i++) {
    het_sym_value p;
    if (sym_rank(g, node->inputs[i]) != 1 ||
        !sym_get(g, tab, node->inputs[i], &p) || n + p.n > HET_MAX_RANK)
      return;
    memcpy(out->e + n, p.e, (size_t)p.n * sizeof *p.e);
    n += p.n;
  }
  out->n = n;
}

static void sym_binary(het_graph *g, const het_sym_value *tab,
                       const het_node *node, char op, het_sym_value *out) {
  het_sym_value a, b;
  if (node->n_inputs != 2 || !sym_get(g, tab, node->inputs[0], &a) ||
      !sym_get(g, tab, node->inputs[1], &b) ||
      (a.n != b.n && a.n != 1 && b.n != 1))
    return;
  int n = a.n == 0 || b.n == 0 ? 0 : a.n > b.n ? a.n : b.n;
  for (int k = 0; k < n; k++)
    out->e[k] = sym_arith(g, op, a.e[a.n == 1 ? 0 : k], b.e[b.n == 1 ? 0 : k]);
  out->n = n;
}

static bool sym_is(const het_node *node, const char *op) {
  return strcmp(node->op_type, op) == 0;
}

void het_sym_node(het_graph *g, het_sym_value *tab, const het_node *node) {
  if (node->domain && *node->domain)
    return;
  if (node->n_outputs < 1 || node->outputs[0] < 0)
    return;
  int y = node->outputs[0];
  const het_value *yv = &g->values[y];
  if ((yv->dtype != HET_DTYPE_INT64 && yv->dtype != HET_DTYPE_INT32) ||
      yv->shape.rank < 0 || yv->shape.rank > 1)
    return;
  het_sym_value out = {.n = -1};
  const het_attr *a;
  if (sym_is(node, "Constant")) {
    if ((a = het_node_find_attr(node, "value")) && a->type == HET_ATTR_TENSOR)
      sym_from_tensor(a->t, &out);
    else if ((a = het_node_find_attr(node, "value_int")))
      out = (het_sym_value){.n = 1, .e = {{.v = a->i, .lit = true}}};
  } else if (node->n_inputs < 1 || node->inputs[0] < 0) {
    return;
  } else if (sym_is(node, "Shape")) {
    sym_shape(g, node, &out);
  } else if (sym_is(node, "Gather")) {
    sym_gather(g, tab, node, &out);
  } else if (sym_is(node, "Concat")) {
    sym_concat(g, tab, node, &out);
  } else if (sym_is(node, "Unsqueeze") || sym_is(node, "Squeeze") ||
             sym_is(node, "Identity") || sym_is(node, "Cast")) {
    sym_get(g, tab, node->inputs[0], &out);
    for (int k = 0; yv->dtype == HET_DTYPE_INT32 && k < out.n; k++)
      if (out.e[k].lit && (out.e[k].v < INT32_MIN || out.e[k].v > INT32_MAX))
        out.e[k] = (het_sym_elem){0}; /* what the Cast makes of it: unknown */
  } else if (sym_is(node, "Mul") || sym_is(node, "Div") ||
             sym_is(node, "Add") || sym_is(node, "Sub")) {
    sym_binary(g, tab, node, *node->op_type == 'M'   ? '*'
                             : *node->op_type == 'D' ? '/'
                             : *node->op_type == 'A' ? '+'
                                                     : '-',
               &out);
  }
  /* the contents must fill the output as inference shaped it */
  int64_t count = het_shape_count(&yv->shape);
  if (out.n >= 0 && (count < 0 || count == out.n))
    tab[y] = out;
}

void het_sym_reshape(const het_graph *g, const het_sym_value *tab,
                     const het_node *node, het_value_info *out) {
  het_sym_value t;
  if ((node->domain && *node->domain) || !sym_is(node, "Reshape") ||
      node->opset < 5 || node->n_inputs != 2 || node->inputs[0] < 0 ||
      sym_rank(g, node->inputs[1]) != 1 ||
      !sym_get(g, tab, node->inputs[1], &t) ||
      (out->shape.rank >= 0 && out->shape.rank != t.n))
    return;
  const het_shape *in = &g->values[node->inputs[0]].shape;
  bool allowzero = het_node_attr_int(node, "allowzero", 0) != 0;
  het_shape s = out->shape;
  if (s.rank < 0) {
    s.rank = t.n;
    for (int i = 0; i < t.n; i++)
      s.dims[i] = het_dim_unknown();
  }
  int neg = -1;
  int64_t prod = 1;
  bool rest_known = true;
  for (int i = 0; i < t.n; i++) {
    const het_sym_elem *e = &t.e[i];
    if (e->lit && e->v == -1) {
      neg = i;
      continue;
    }
    if (s.dims[i].value < 0 && !s.dims[i].symbol) {
      if (e->lit && e->v == 0 && !allowzero)
        s.dims[i] = i < in->rank ? in->dims[i] : het_dim_unknown();
      else if (e->lit && e->v > 0)
        s.dims[i] = het_dim_known(e->v);
      else if (e->sym)
        s.dims[i] = (het_dim){.value = -1, .symbol = e->sym};
    }
    if (s.dims[i].value < 0 || !het_dim_mul(prod, s.dims[i].value, &prod))
      rest_known = false;
  }
  int64_t in_count = het_shape_count(in);
  if (neg >= 0 && s.dims[neg].value < 0 && rest_known && in_count >= 0 &&
      prod > 0 && in_count % prod == 0)
    s.dims[neg] = het_dim_known(in_count / prod);
  out->shape = s;
}
