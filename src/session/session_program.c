/* session_program.c — the tree of graph builds: the model's graph and,
 * recursively, the bodies of its If, Loop and Scan nodes.  Bodies are
 * built first (bottom-up, as the peers do), so a graph is partitioned
 * knowing its bodies' costs.  Per body: its captured values (read from an
 * enclosing scope by name) get the enclosing value's type before the
 * body's shape inference; after the body's own bodies are built (which may
 * capture more names through it), every captured name is resolved in the
 * enclosing graph, added there as a captured value of its own when the
 * enclosing graph is a body that does not define it.  A program binds
 * its graph inputs and then its captured values per run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/optimizer.h"
#include "session/session_build.h"

static bool het_is_captured(const het_graph *g, int v) {
  const het_value *val = &g->values[v];
  return val->producer < 0 && !val->initializer &&
         !(val->flags & HET_VALUE_GRAPH_INPUT);
}

/* Whether some node of g, a graph output or a body below reads v. */
static bool het_is_read(const het_graph_build *b, int v) {
  const het_graph *g = b->prog.graph;
  for (int n = 0; n < g->n_nodes; n++) {
    for (int i = 0; i < g->nodes[n].n_inputs; i++)
      if (g->nodes[n].inputs[i] == v)
        return true;
    for (int k = 0; b->prog.n_bodies && k < b->prog.n_bodies[n]; k++) {
      const het_program *body = b->prog.bodies[n][k];
      for (int c = 0; c < body->n_outer; c++)
        if (body->outer_src[c] == v)
          return true;
    }
  }
  for (int o = 0; o < g->n_outputs; o++)
    if (g->outputs[o] == v)
      return true;
  return false;
}

/* Interns into g, as a captured value, every name that a body below sub
 * (at any depth, sub = g to start) reads from an enclosing scope and g
 * does not define, so each graph holds what the bodies below it capture
 * (their own scopes are checked against it). */
static het_status het_pull_captures(het_graph *g, const het_graph *sub) {
  for (int n = 0; n < sub->n_nodes; n++)
    for (int a = 0; a < sub->nodes[n].n_attrs; a++) {
      const het_attr *at = &sub->nodes[n].attrs[a];
      if (at->type != HET_ATTR_GRAPH || !at->g)
        continue;
      const het_graph *inner = at->g;
      for (int v = 0; v < inner->n_values; v++) {
        if (!het_is_captured(inner, v))
          continue;
        const char *name = inner->values[v].name;
        int d = het_graph_find_value((het_graph *)sub, name);
        if (d >= 0 && !het_is_captured(sub, d))
          continue; /* sub defines it (a level between may too: harmless) */
        int id;
        if (het_graph_find_value(g, name) < 0)
          HET_TRY(het_graph_intern_value(g, name, &id));
      }
      HET_TRY(het_pull_captures(g, inner));
    }
  return HET_OK;
}

/* Types of body's captured values from the enclosing graph (by name); a
 * captured initializer becomes an initializer of the body too, borrowing
 * the enclosing graph's data (which outlives the body), so it is placed
 * on a device once rather than copied every run. */
static het_status het_capture_types(het_graph *body, het_graph *outer) {
  for (int v = 0; v < body->n_values; v++) {
    if (!het_is_captured(body, v))
      continue;
    int o = het_graph_find_value(outer, body->values[v].name);
    if (o < 0)
      continue;
    const het_value *ov = &outer->values[o];
    het_value *bv = &body->values[v];
    if (bv->dtype == HET_DTYPE_UNDEFINED) {
      bv->dtype = ov->dtype;
      bv->shape = ov->shape;
    }
    const het_tensor *t = ov->initializer;
    if (!t || (ov->flags & HET_VALUE_GRAPH_INPUT) || !t->data)
      continue;
    HET_TRY(het_tensor_create_over(t->dtype, t->dims, t->rank, t->data,
                                   t->nbytes, &bv->initializer));
    bv->flags |= HET_VALUE_INITIALIZER;
    bv->dtype = t->dtype;
    het_shape_set(&bv->shape, t->rank, t->dims);
  }
  return HET_OK;
}

/* child's captured values, resolved in parent's graph (node names the
 * control-flow node, for messages). */
static het_status het_resolve_captures(het_session *s, het_graph_build *parent,
                                       het_graph_build *child,
                                       const het_node *node) {
  het_graph *g = child->prog.graph, *outer = parent->prog.graph;
  int n = 0;
  for (int v = 0; v < g->n_values; v++)
    n += het_is_captured(g, v) && het_is_read(child, v);
  het_program *p = &child->prog;
  p->outer = het_arena_calloc(&s->arena, (size_t)n + 1, sizeof(int));
  p->outer_src = het_arena_calloc(&s->arena, (size_t)n + 1, sizeof(int));
  p->params = het_arena_calloc(&s->arena, (size_t)(g->n_inputs + n) + 1,
                               sizeof(int));
  if (!p->outer || !p->outer_src || !p->params)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int v = 0; v < g->n_values; v++) {
    if (!het_is_captured(g, v) || !het_is_read(child, v))
      continue;
    const char *name = g->values[v].name;
    int o = het_graph_find_value(outer, name);
    if (o < 0 && !parent->prog.parent)
      return het_error(HET_ERR_INVALID_MODEL,
                       "node '%s' (%s): its body '%s' reads '%s', which is "
                       "not defined",
                       node->name, node->op_type, child->prefix, name);
    if (o < 0) { /* the enclosing body captures it in turn */
      HET_TRY(het_graph_intern_value(outer, name, &o));
      outer->values[o].dtype = g->values[v].dtype;
      outer->values[o].shape = g->values[v].shape;
      for (const het_program *up = parent->prog.parent;
           up && outer->values[o].dtype == HET_DTYPE_UNDEFINED;
           up = up->parent) {
        int u = het_graph_find_value(up->graph, name);
        if (u >= 0) {
          outer->values[o].dtype = up->graph->values[u].dtype;
          outer->values[o].shape = up->graph->values[u].shape;
        }
      }
    }
    p->outer[p->n_outer] = v;
    p->outer_src[p->n_outer++] = o;
  }
  for (int i = 0; i < g->n_inputs; i++)
    p->params[p->n_params++] = g->inputs[i];
  for (int k = 0; k < p->n_outer; k++)
    p->params[p->n_params++] = p->outer[k];
  return HET_OK;
}

static het_status het_add_build(het_session *s, het_graph_build *b) {
  het_graph_build **list = realloc(s->builds, ((size_t)s->n_builds + 1) *
                                                  sizeof *list);
  if (!list)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  s->builds = list;
  s->builds[s->n_builds++] = b;
  return HET_OK;
}

static het_status het_build_tree(het_build_ctx *x, het_graph_build *b);

/* The body in graph attribute `a` of node n of b. */
static het_status het_build_body(het_build_ctx *x, het_graph_build *b, int n,
                                 const het_attr *a, het_program **out) {
  het_session *s = x->s;
  const het_node *node = &b->prog.graph->nodes[n];
  het_graph_build *child = het_arena_calloc(&s->arena, 1, sizeof *child);
  char prefix[768];
  snprintf(prefix, sizeof prefix, "%s%s/%s/", b->prefix, node->name, a->name);
  if (!child || !(child->prefix = het_arena_strdup(&s->arena, prefix)))
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  HET_TRY(het_add_build(s, child));
  child->prog.graph = a->g;
  child->prog.parent = &b->prog;
  het_status st = het_pull_captures(a->g, a->g);
  if (st == HET_OK)
    st = het_capture_types(a->g, b->prog.graph);
  if (st == HET_OK)
    st = het_graph_infer_shapes(a->g);
  het_optimize_int8 int8;
  if (st == HET_OK)
    st = het_policy_int8_choices(s, x->o, a->g, prefix, &int8);
  if (st == HET_OK)
    st = het_optimize_with(a->g, b->prog.graph,
                           x->o ? x->o->opt_level : HET_OPT_ALL, &int8, NULL);
  if (st == HET_OK)
    st = het_build_tree(x, child);
  if (st == HET_OK)
    st = het_resolve_captures(s, b, child, node);
  if (st != HET_OK)
    return het_error_wrap(st, "node '%s' (%s) body '%s'", node->name,
                          node->op_type, a->name);
  *out = &child->prog;
  return HET_OK;
}

static bool het_is_control(const het_node *n) {
  return (strcmp(n->op_type, "If") == 0 || strcmp(n->op_type, "Loop") == 0 ||
          strcmp(n->op_type, "Scan") == 0) &&
         (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

/* Bodies of b's control-flow nodes (n_bodies/bodies per model node). */
static het_status het_build_bodies(het_build_ctx *x, het_graph_build *b) {
  het_session *s = x->s;
  het_graph *g = b->prog.graph;
  int nn = g->n_nodes;
  b->prog.n_bodies = het_arena_calloc(&s->arena, (size_t)nn + 1, sizeof(int));
  b->prog.bodies = het_arena_calloc(&s->arena, (size_t)nn + 1,
                                    sizeof(het_program **));
  if (!b->prog.n_bodies || !b->prog.bodies)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int n = 0; n < nn; n++) {
    const het_node *node = &g->nodes[n];
    if (!het_is_control(node))
      continue;
    static const char *const if_attrs[] = {"then_branch", "else_branch"};
    static const char *const body_attr[] = {"body"};
    bool is_if = strcmp(node->op_type, "If") == 0;
    const char *const *attrs = is_if ? if_attrs : body_attr;
    int count = is_if ? 2 : 1;
    b->prog.bodies[n] = het_arena_calloc(&s->arena, (size_t)count,
                                         sizeof(het_program *));
    if (!b->prog.bodies[n])
      return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
    for (int k = 0; k < count; k++) {
      const het_attr *a = het_node_find_attr(node, attrs[k]);
      if (!a || a->type != HET_ATTR_GRAPH || !a->g)
        return het_error(HET_ERR_INVALID_MODEL,
                         "node '%s' (%s): graph attribute '%s' is missing",
                         node->name, node->op_type, attrs[k]);
      HET_TRY(het_build_body(x, b, n, a, &b->prog.bodies[n][k]));
      b->prog.n_bodies[n] = k + 1;
    }
  }
  return HET_OK;
}

/* n_bodies / bodies over every node (boundary nodes have none). */
static het_status het_extend_bodies(het_session *s, het_graph_build *b) {
  int nn = b->prog.graph->n_nodes;
  int *n_bodies = het_arena_calloc(&s->arena, (size_t)nn + 1, sizeof(int));
  het_program ***bodies = het_arena_calloc(&s->arena, (size_t)nn + 1,
                                           sizeof(het_program **));
  if (!n_bodies || !bodies)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  memcpy(n_bodies, b->prog.n_bodies, (size_t)b->n_model_nodes * sizeof(int));
  memcpy(bodies, b->prog.bodies,
         (size_t)b->n_model_nodes * sizeof(het_program **));
  b->prog.n_bodies = n_bodies;
  b->prog.bodies = bodies;
  return HET_OK;
}

static het_status het_build_tree(het_build_ctx *x, het_graph_build *b) {
  HET_TRY(het_build_bodies(x, b));
  HET_TRY(het_build_graph(x, b));
  return het_extend_bodies(x->s, b);
}

/* The model's parameters: its graph inputs without an initializer. */
static het_status het_top_params(het_session *s) {
  het_graph *g = s->graph;
  het_program *p = &s->top.prog;
  p->params = het_arena_calloc(&s->arena, (size_t)g->n_inputs + 1, sizeof(int));
  if (!p->params)
    return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
  for (int i = 0; i < g->n_inputs; i++)
    if (!g->values[g->inputs[i]].initializer)
      p->params[p->n_params++] = g->inputs[i];
  return HET_OK;
}

het_status het_build_programs(het_build_ctx *x) {
  het_session *s = x->s;
  s->top.prog.graph = s->graph;
  s->top.prefix = "";
  HET_TRY(het_add_build(s, &s->top));
  HET_TRY(het_build_tree(x, &s->top));
  if (s->plan_only)
    return HET_OK;
  HET_TRY(het_top_params(s));
  int base = 0;
  for (int k = 0; k < s->n_builds; k++) {
    het_program *p = &s->builds[k]->prog;
    p->eps = s->providers;
    p->n_eps = s->n_providers;
    p->layout = &s->layout;
    p->streams = s->streams;
    p->node_base = base;
    p->path = s->builds[k]->prefix;
    p->max_host_bytes = het_options_max_memory(x->o);
    p->max_loop_iterations = het_options_max_loop_iterations(x->o);
    base += p->graph->n_nodes;
    HET_TRY(het_program_init(p));
    if (k == 0)
      continue;
    het_graph_build *b = s->builds[k];
    b->names = het_arena_calloc(&s->arena, (size_t)p->graph->n_nodes + 1,
                                sizeof *b->names);
    if (!b->names)
      return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
    for (int n = 0; n < p->graph->n_nodes; n++) {
      char name[1024];
      snprintf(name, sizeof name, "%s%s", b->prefix, p->graph->nodes[n].name);
      if (!(b->names[n] = het_arena_strdup(&s->arena, name)))
        return het_error(HET_ERR_OUT_OF_MEMORY, "session: out of memory");
    }
  }
  s->n_nodes_total = base;
  return HET_OK;
}
