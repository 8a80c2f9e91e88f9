/* ir.c — graph construction, value lookup, validation and topological
 * order.  Invariants: name_index holds every value (power-of-two table,
 * load <= 1/2); values and nodes arrays only grow.
 */
#include "core/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"

het_status het_graph_create(het_graph **out) {
  het_graph *g = calloc(1, sizeof *g);
  if (!g)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate graph");
  het_arena_init(&g->arena);
  g->name = "";
  g->producer_name = "";
  *out = g;
  return HET_OK;
}

static void het_attr_deinit(het_attr *a) {
  het_tensor_destroy(a->t);
  for (size_t i = 0; a->tensors && i < a->n; i++)
    het_tensor_destroy(a->tensors[i]);
}

void het_graph_destroy(het_graph *g) {
  if (!g)
    return;
  for (int i = 0; i < g->n_values; i++)
    het_tensor_destroy(g->values[i].initializer);
  for (int i = 0; i < g->n_nodes; i++)
    for (int a = 0; a < g->nodes[i].n_attrs; a++)
      het_attr_deinit(&g->nodes[i].attrs[a]);
  for (int i = 0; i < g->n_subgraphs; i++)
    het_graph_destroy(g->subgraphs[i]);
  free(g->subgraphs);
  free(g->values);
  free(g->nodes);
  free(g->order);
  free(g->name_index);
  het_arena_deinit(&g->arena);
  free(g);
}

static uint64_t het_name_hash(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void het_index_put(int *index, int cap, const het_value *values,
                          int id) {
  size_t mask = (size_t)cap - 1;
  size_t i = het_name_hash(values[id].name) & mask;
  while (index[i] >= 0)
    i = (i + 1) & mask;
  index[i] = id;
}

static het_status het_index_grow(het_graph *g) {
  int cap = g->name_index_cap ? g->name_index_cap * 2 : 64;
  int *index = malloc((size_t)cap * sizeof *index);
  if (!index)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot grow value index");
  for (int i = 0; i < cap; i++)
    index[i] = -1;
  for (int id = 0; id < g->n_values; id++)
    het_index_put(index, cap, g->values, id);
  free(g->name_index);
  g->name_index = index;
  g->name_index_cap = cap;
  return HET_OK;
}

int het_graph_find_value(het_graph *g, const char *name) {
  if (!g->name_index_cap)
    return -1;
  size_t mask = (size_t)g->name_index_cap - 1;
  size_t i = het_name_hash(name) & mask;
  while (g->name_index[i] >= 0) {
    if (strcmp(g->values[g->name_index[i]].name, name) == 0)
      return g->name_index[i];
    i = (i + 1) & mask;
  }
  return -1;
}

het_status het_graph_intern_value(het_graph *g, const char *name, int *id) {
  int found = het_graph_find_value(g, name);
  if (found >= 0) {
    *id = found;
    return HET_OK;
  }
  if (g->n_values == g->cap_values) {
    int cap = g->cap_values ? g->cap_values * 2 : 64;
    het_value *v = realloc(g->values, (size_t)cap * sizeof *v);
    if (!v)
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot grow value table");
    g->values = v;
    g->cap_values = cap;
  }
  if ((g->n_values + 1) * 2 > g->name_index_cap)
    HET_TRY(het_index_grow(g));
  het_value *v = &g->values[g->n_values];
  memset(v, 0, sizeof *v);
  v->name = het_arena_strdup(&g->arena, name);
  if (!v->name)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot copy value name");
  v->dtype = HET_DTYPE_UNDEFINED;
  v->shape.rank = -1;
  v->producer = -1;
  het_index_put(g->name_index, g->name_index_cap, g->values, g->n_values);
  *id = g->n_values++;
  return HET_OK;
}

het_status het_graph_add_node(het_graph *g, const het_node *node, int *id) {
  for (int o = 0; o < node->n_outputs; o++) {
    int v = node->outputs[o];
    if (v < 0)
      continue;
    if (v >= g->n_values)
      return het_error(HET_ERR_INTERNAL, "node '%s': bad output id %d",
                       node->name, v);
    const het_value *val = &g->values[v];
    if (val->producer >= 0)
      return het_error(HET_ERR_INVALID_MODEL,
                       "node '%s': output '%s' is already produced by node "
                       "'%s'",
                       node->name, val->name, g->nodes[val->producer].name);
    if (val->flags & (HET_VALUE_INITIALIZER | HET_VALUE_GRAPH_INPUT))
      return het_error(HET_ERR_INVALID_MODEL,
                       "node '%s': output '%s' is also a graph input or "
                       "initializer",
                       node->name, val->name);
  }
  if (g->n_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
    het_node *n = realloc(g->nodes, (size_t)cap * sizeof *n);
    if (!n)
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot grow node table");
    g->nodes = n;
    g->cap_nodes = cap;
  }
  int nid = g->n_nodes++;
  g->nodes[nid] = *node;
  for (int o = 0; o < node->n_outputs; o++)
    if (node->outputs[o] >= 0)
      g->values[node->outputs[o]].producer = nid;
  if (id)
    *id = nid;
  return HET_OK;
}

het_status het_graph_adopt_subgraph(het_graph *g, het_graph *sub) {
  if (g->n_subgraphs == g->cap_subgraphs) {
    int cap = g->cap_subgraphs ? g->cap_subgraphs * 2 : 4;
    het_graph **s = realloc(g->subgraphs, (size_t)cap * sizeof *s);
    if (!s)
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot grow subgraph list");
    g->subgraphs = s;
    g->cap_subgraphs = cap;
  }
  g->subgraphs[g->n_subgraphs++] = sub;
  return HET_OK;
}

bool het_graph_value_constant(const het_graph *g, int v) {
  if (v < 0 || v >= g->n_values || !g->values[v].initializer)
    return false;
  return !(g->values[v].flags & HET_VALUE_GRAPH_INPUT) || g->ir_version < 4;
}

int64_t het_graph_opset(const het_graph *g, const char *domain) {
  bool onnx = !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
  for (int i = 0; i < g->n_opsets; i++) {
    const char *d = g->opsets[i].domain;
    bool d_onnx = !d || !*d || strcmp(d, "ai.onnx") == 0;
    if (onnx ? d_onnx : (d && strcmp(d, domain) == 0))
      return g->opsets[i].version;
  }
  return 0;
}

/* True when name resolves in an enclosing graph (subgraph outer scope). */
static bool het_outer_has(const het_graph *outer, const char *name) {
  return outer && het_graph_find_value((het_graph *)outer, name) >= 0;
}

/* Pass 1 of validation: every consumed value has a source. */
static het_status het_validate_sources(het_graph *g, const het_graph *outer) {
  for (int n = 0; n < g->n_nodes; n++) {
    const het_node *node = &g->nodes[n];
    for (int i = 0; i < node->n_inputs; i++) {
      int v = node->inputs[i];
      if (v < 0)
        continue;
      const het_value *val = &g->values[v];
      if (val->producer < 0 &&
          !(val->flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER)) &&
          !het_outer_has(outer, val->name))
        return het_error(HET_ERR_INVALID_MODEL,
                         "node '%s' (%s): input %d '%s' is not produced by "
                         "any node, graph input or initializer",
                         node->name, node->op_type, i, val->name);
    }
  }
  for (int i = 0; i < g->n_outputs; i++) {
    const het_value *val = &g->values[g->outputs[i]];
    if (val->producer < 0 &&
        !(val->flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER)) &&
        !het_outer_has(outer, val->name))
      return het_error(HET_ERR_INVALID_MODEL,
                       "graph output '%s' is not produced by any node",
                       val->name);
  }
  return HET_OK;
}

het_status het_graph_outer_reads(const het_graph *g, const het_graph *sub,
                                 het_status (*fn)(void *ctx, int v),
                                 void *ctx) {
  for (int v = 0; v < sub->n_values; v++) {
    const het_value *val = &sub->values[v];
    if (val->producer >= 0 ||
        (val->flags & (HET_VALUE_GRAPH_INPUT | HET_VALUE_INITIALIZER)))
      continue;
    int outer = het_graph_find_value((het_graph *)g, val->name);
    if (outer >= 0)
      HET_TRY(fn(ctx, outer));
  }
  for (int k = 0; k < sub->n_nodes; k++)
    for (int a = 0; a < sub->nodes[k].n_attrs; a++)
      if (sub->nodes[k].attrs[a].type == HET_ATTR_GRAPH &&
          sub->nodes[k].attrs[a].g)
        HET_TRY(het_graph_outer_reads(g, sub->nodes[k].attrs[a].g, fn, ctx));
  return HET_OK;
}

/* A growing list of value ids (the dependencies being collected). */
typedef struct het_dep_list {
  int *d;
  size_t n, cap;
} het_dep_list;

static het_status het_dep_push(void *ctx, int v) {
  het_dep_list *l = ctx;
  if (l->n == l->cap) {
    size_t c = l->cap ? 2 * l->cap : 64;
    int *d = realloc(l->d, c * sizeof *d);
    if (!d)
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot sort graph");
    l->d = d;
    l->cap = c;
  }
  l->d[l->n++] = v;
  return HET_OK;
}

/* Pass 2a: per node, the values it depends on (inputs, and what its
 * subgraphs read from this graph), as CSR: deps[start[i]..start[i+1]). */
static het_status het_node_deps(const het_graph *g, size_t **start,
                                int **deps) {
  het_dep_list l = {0};
  het_status st = HET_OK;
  size_t *at = malloc(((size_t)g->n_nodes + 1) * sizeof *at);
  if (!at)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot sort graph");
  for (int i = 0; i < g->n_nodes && st == HET_OK; i++) {
    const het_node *node = &g->nodes[i];
    at[i] = l.n;
    for (int k = 0; k < node->n_inputs && st == HET_OK; k++)
      if (node->inputs[k] >= 0)
        st = het_dep_push(&l, node->inputs[k]);
    for (int a = 0; a < node->n_attrs && st == HET_OK; a++)
      if (node->attrs[a].type == HET_ATTR_GRAPH && node->attrs[a].g)
        st = het_graph_outer_reads(g, node->attrs[a].g, het_dep_push, &l);
  }
  if (st != HET_OK) {
    free(l.d);
    free(at);
    return st;
  }
  at[g->n_nodes] = l.n;
  *start = at;
  *deps = l.d;
  return HET_OK;
}

/* Pass 2b: Kahn's algorithm, depth first, lowest node index for ties. */
static het_status het_validate_order(het_graph *g) {
  int n = g->n_nodes;
  size_t *start = NULL;
  int *deps = NULL;
  HET_TRY(het_node_deps(g, &start, &deps));
  int *indeg = calloc((size_t)n + 1, sizeof *indeg);
  int *order = malloc(((size_t)n + 1) * sizeof *order);
  int *queue = malloc(((size_t)n + 1) * sizeof *queue);
  int *cnt = calloc((size_t)g->n_values + 1, sizeof *cnt);
  int *fill = calloc((size_t)g->n_values + 1, sizeof *fill);
  int *adj = malloc((start[n] + 1) * sizeof *adj);
  het_status st = HET_OK;
  if (!indeg || !order || !queue || !cnt || !fill || !adj) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "cannot sort graph");
    goto fail;
  }
  /* Edges value -> dependent nodes, as CSR over values. */
  for (int i = 0; i < n; i++)
    for (size_t k = start[i]; k < start[i + 1]; k++) {
      if (g->values[deps[k]].producer >= 0)
        indeg[i]++;
      cnt[deps[k] + 1]++;
    }
  for (int v = 0; v < g->n_values; v++)
    cnt[v + 1] += cnt[v];
  for (int i = 0; i < n; i++)
    for (size_t k = start[i]; k < start[i + 1]; k++)
      adj[cnt[deps[k]] + fill[deps[k]]++] = i;
  /* Depth first: the nodes a node makes ready run next (lowest index
   * first), so a branch is finished before the next one starts — fewer
   * live tensors, and copies of one branch overlap another's compute. */
  int top = 0, done = 0;
  for (int i = n - 1; i >= 0; i--)
    if (indeg[i] == 0)
      queue[top++] = i;
  while (top > 0) {
    int i = queue[--top];
    order[done++] = i;
    const het_node *node = &g->nodes[i];
    int first = top;
    for (int o = 0; o < node->n_outputs; o++) {
      int v = node->outputs[o];
      for (int e = v < 0 ? 0 : cnt[v]; v >= 0 && e < cnt[v + 1]; e++)
        if (--indeg[adj[e]] == 0)
          queue[top++] = adj[e];
    }
    for (int a = first, b = top - 1; a < b; a++, b--) {
      int t = queue[a];
      queue[a] = queue[b];
      queue[b] = t;
    }
  }
  if (done < n) {
    int bad = 0;
    while (bad < n && indeg[bad] == 0)
      bad++;
    st = het_error(HET_ERR_INVALID_MODEL,
                   "graph '%s' has a cycle through node '%s' (%s)", g->name,
                   g->nodes[bad].name, g->nodes[bad].op_type);
    goto fail;
  }
  free(g->order);
  g->order = order;
  order = NULL;
fail:
  free(start);
  free(deps);
  free(indeg);
  free(order);
  free(queue);
  free(cnt);
  free(fill);
  free(adj);
  return st;
}

het_status het_graph_validate(het_graph *g, const het_graph *outer) {
  /* Value names are unique by construction (interning).  Node names may
   * repeat, as ONNX allows; messages also give the op type. */
  for (int i = 0; i < g->n_nodes; i++) {
    if (!g->nodes[i].name || !g->nodes[i].op_type)
      return het_error(HET_ERR_INVALID_MODEL, "node %d has no name or op",
                       i);
  }
  HET_TRY(het_validate_sources(g, outer));
  return het_validate_order(g);
}

const het_attr *het_node_find_attr(const het_node *n, const char *name) {
  for (int i = 0; i < n->n_attrs; i++)
    if (strcmp(n->attrs[i].name, name) == 0)
      return &n->attrs[i];
  return NULL;
}

int64_t het_node_attr_int(const het_node *n, const char *name, int64_t dflt) {
  const het_attr *a = het_node_find_attr(n, name);
  return a && a->type == HET_ATTR_INT ? a->i : dflt;
}

float het_node_attr_float(const het_node *n, const char *name, float dflt) {
  const het_attr *a = het_node_find_attr(n, name);
  if (!a)
    return dflt;
  if (a->type == HET_ATTR_FLOAT)
    return a->f;
  if (a->type == HET_ATTR_INT)
    return (float)a->i;
  return dflt;
}

void het_node_act_params(const het_node *n, float *alpha, float *beta) {
  const char *op = n->op_type;
  float da = 0.0f, db = 0.0f;
  if (strcmp(op, "Shrink") == 0) {
    *alpha = het_node_attr_float(n, "lambd", 0.5f);
    *beta = het_node_attr_float(n, "bias", 0.0f);
    return;
  }
  if (strcmp(op, "LeakyRelu") == 0)
    da = 0.01f;
  else if (strcmp(op, "Elu") == 0 || strcmp(op, "Celu") == 0 ||
           strcmp(op, "ThresholdedRelu") == 0)
    da = 1.0f;
  else if (strcmp(op, "Selu") == 0)
    da = 1.67326319217681884765625f;
  else if (strcmp(op, "HardSigmoid") == 0)
    da = 0.2f, db = 0.5f;
  *alpha = het_node_attr_float(n, "alpha", da);
  *beta = het_node_attr_float(n, "beta", db);
}

const char *het_conv_act_name(const char *op) {
  static const char *const named[] = {"LeakyRelu", "HardSigmoid", "HardSwish",
                                      "Sigmoid",   "Tanh",        NULL};
  for (int i = 0; op && named[i]; i++)
    if (strcmp(op, named[i]) == 0)
      return named[i];
  return NULL;
}

const char *het_node_attr_string(const het_node *n, const char *name) {
  const het_attr *a = het_node_find_attr(n, name);
  return a && a->type == HET_ATTR_STRING ? a->s : NULL;
}

const int64_t *het_node_attr_ints(const het_node *n, const char *name,
                                  size_t *count) {
  const het_attr *a = het_node_find_attr(n, name);
  if (!a || a->type != HET_ATTR_INTS) {
    *count = 0;
    return NULL;
  }
  *count = a->n;
  return a->ints;
}

bool het_node_attr_ints_all(const het_node *n, const char *name,
                            int64_t v) {
  size_t k = 0;
  const int64_t *p = het_node_attr_ints(n, name, &k);
  for (size_t i = 0; p && i < k; i++)
    if (p[i] != v)
      return false;
  return true;
}

const float *het_node_attr_floats(const het_node *n, const char *name,
                                  size_t *count) {
  const het_attr *a = het_node_find_attr(n, name);
  if (!a || a->type != HET_ATTR_FLOATS) {
    *count = 0;
    return NULL;
  }
  *count = a->n;
  return a->floats;
}

int het_node_input(const het_node *n, int i) {
  return i >= 0 && i < n->n_inputs ? n->inputs[i] : -1;
}

het_status het_node_errorv(const het_node *n, het_status st, const char *fmt,
                           va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return het_error(st, "node '%s' (%s): %s", n->name, n->op_type, msg);
}

het_status het_node_error(const het_node *n, het_status st, const char *fmt,
                          ...) {
  va_list ap;
  va_start(ap, fmt);
  het_status r = het_node_errorv(n, st, fmt, ap);
  va_end(ap);
  return r;
}

void het_graph_set_constant(het_graph *g, int v, het_tensor *t) {
  het_value *val = &g->values[v];
  het_tensor_destroy(val->initializer);
  val->initializer = t;
  val->flags |= HET_VALUE_INITIALIZER;
  val->producer = -1;
  val->dtype = t->dtype;
  het_shape_set(&val->shape, t->rank, t->dims);
}

het_status het_graph_fresh_value(het_graph *g, const char *base, int *id) {
  char name[256];
  snprintf(name, sizeof name, "%s", base);
  for (int k = 1; het_graph_find_value(g, name) >= 0; k++) {
    if (k > 1000000)
      return het_error(HET_ERR_INTERNAL, "no free value name for '%s'",
                       base);
    snprintf(name, sizeof name, "%s_%d", base, k);
  }
  return het_graph_intern_value(g, name, id);
}

het_status het_graph_add_constant(het_graph *g, const char *base,
                                  het_tensor *t, int *id) {
  int v;
  het_status st = het_graph_fresh_value(g, base, &v);
  if (st != HET_OK) {
    het_tensor_destroy(t);
    return st;
  }
  het_graph_set_constant(g, v, t);
  *id = v;
  return HET_OK;
}
