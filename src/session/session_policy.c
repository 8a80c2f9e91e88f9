/* session_policy.c — YAML placement policies in a session: 1. loading one
 * into options (its global settings become options; its rules are kept);
 * 2. resolving its provider names against the session; 3. applying the
 * rules, in order, to each graph build: constraints for the partitioner and
 * the rule that placed each node; 4. after the claims, the fallbacks (or
 * strict failures) of nodes a rule sent where they cannot run; 5. warnings
 * for rules that matched nothing or could not be followed.
 * Invariant: every constraint a rule adds is reported — in the node's
 * placed_by, in the rule's report, or in a warning — never silently lost.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "onnx/loader.h"
#include "session/env.h"
#include "session/session_api.h"
#include "session/session_build.h"

#define HET_POLICY_MAX_BYTES ((size_t)16 << 20)

/* ---- 1. loading ---- */

static het_status het_policy_to_options(het_session_options *o,
                                        const het_policy *p) {
  if (p->n_providers) {
    if (p->n_providers > HET_MAX_PROVIDERS)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%d:%d: more than %d providers", p->source,
                       p->providers[0].line, p->providers[0].column,
                       HET_MAX_PROVIDERS);
    const char *names[HET_MAX_PROVIDERS];
    for (int i = 0; i < p->n_providers; i++)
      names[i] = p->providers[i].s;
    HET_TRY(het_session_options_set_providers_impl(o, names,
                                                   (size_t)p->n_providers));
    /* A policy names providers for any machine: absent ones are skipped
     * with a warning unless it says strict: true. */
    o->non_strict = p->strict != 1;
  }
  if (p->algorithm >= 0)
    o->use_priority = p->algorithm == 1;
  for (int i = 0; i < p->n_budgets; i++)
    HET_TRY(het_session_options_set_memory_budget_impl(
        o, p->budgets[i].provider.s, p->budgets[i].bytes));
  for (int i = 0; i < p->n_shapes; i++)
    HET_TRY(het_options_add_shape(o, p->shapes[i].input.s, p->shapes[i].rank,
                                  p->shapes[i].dims));
  if (p->min_subgraph_nodes)
    o->min_subgraph_nodes = p->min_subgraph_nodes;
  return HET_OK;
}

het_status het_options_set_policy(het_session_options *o, const char *text,
                                  size_t len, const char *source) {
  het_policy *p = NULL;
  HET_TRY(het_policy_parse(text, len, source, &p));
  het_status st = het_policy_to_options(o, p);
  if (st != HET_OK) {
    het_policy_destroy(p);
    return st;
  }
  het_policy_destroy(o->policy);
  o->policy = p;
  return HET_OK;
}

het_status het_options_load_policy(het_session_options *o, const char *path) {
  uint8_t *data = NULL;
  size_t size = 0;
  het_status st = het_read_file(path, HET_POLICY_MAX_BYTES, &data, &size);
  if (st != HET_OK)
    return het_error_wrap(st, "policy '%s'", path);
  st = het_options_set_policy(o, (const char *)data, size, path);
  free(data);
  return st;
}

het_status het_session_options_load_policy_impl(het_session_options *o,
                                                const char *path) {
  return het_options_load_policy(o, path);
}

het_status het_session_options_set_policy_impl(het_session_options *o,
                                               const char *yaml) {
  return het_options_set_policy(o, yaml, strlen(yaml), "<string>");
}

/* ---- 2. names ---- */

/* Session provider index of name, -1 when it is a provider this session
 * does not have; a name no registry knows is an error at its position. */
static het_status het_policy_provider(het_build_ctx *x,
                                      const het_policy_str *name, int *out) {
  het_session *s = x->s;
  for (int i = 0; i < s->n_providers; i++)
    if (strcmp(s->providers[i].vt->name, name->s) == 0) {
      *out = i;
      return HET_OK;
    }
  const het_provider_vtable *vt;
  het_status st = het_env_find_provider(s->env, name->s, &vt);
  if (st == HET_ERR_NOT_FOUND) {
    char why[512];
    snprintf(why, sizeof why, "%s", het_last_error());
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%d:%d: %s",
                     x->o->policy->source, name->line, name->column, why);
  }
  *out = -1;
  return HET_OK;
}

static het_status het_policy_mask(het_build_ctx *x, const het_policy_str *l,
                                  int n, unsigned *mask, int *absent) {
  *mask = 0;
  *absent = -1;
  for (int i = 0; i < n; i++) {
    int p = -1;
    HET_TRY(het_policy_provider(x, &l[i], &p));
    if (p >= 0)
      *mask |= 1u << p;
    else if (*absent < 0)
      *absent = i;
  }
  return HET_OK;
}

/* Appends to buf (cap bytes, *used so far), truncating at the end. */
static void het_buf_add(char *buf, size_t cap, size_t *used, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

static void het_buf_add(char *buf, size_t cap, size_t *used, const char *fmt,
                        ...) {
  if (*used + 1 >= cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *used, cap - *used, fmt, ap);
  va_end(ap);
  if (n > 0)
    *used = *used + (size_t)n < cap ? *used + (size_t)n : cap - 1;
}

static const char *het_rule_actions(het_arena *a, const het_policy_rule *r) {
  char buf[512];
  size_t used = 0;
  const struct { const char *verb; const het_policy_str *l; int n; } lists[] =
      {{"pin", r->pin, r->n_pin}, {"forbid", r->forbid, r->n_forbid}};
  buf[0] = 0;
  for (int k = 0; k < 2; k++) {
    if (!lists[k].n)
      continue;
    het_buf_add(buf, sizeof buf, &used, "%s%s ", used ? "; " : "",
                lists[k].verb);
    for (int i = 0; i < lists[k].n; i++)
      het_buf_add(buf, sizeof buf, &used, "%s%s", i ? ", " : "",
                  lists[k].l[i].s);
  }
  if (r->prefer.s)
    het_buf_add(buf, sizeof buf, &used, "%sprefer %s (x%g)",
                used ? "; " : "", r->prefer.s, r->prefer_factor);
  if (r->precision)
    het_buf_add(buf, sizeof buf, &used, "%sprecision %s", used ? "; " : "",
                het_precision_str(r->precision));
  return het_arena_strdup(a, buf);
}

het_status het_policy_prepare(het_build_ctx *x) {
  het_session *s = x->s;
  const het_policy *p = x->o ? x->o->policy : NULL;
  if (!p || !p->n_rules)
    return HET_OK;
  x->prep = het_arena_calloc(&s->arena, (size_t)p->n_rules, sizeof *x->prep);
  s->rule_reports = het_arena_calloc(&s->arena, (size_t)p->n_rules,
                                     sizeof *s->rule_reports);
  if (!x->prep || !s->rule_reports)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  s->n_rule_reports = p->n_rules;
  for (int i = 0; i < p->n_rules; i++) {
    const het_policy_rule *r = &p->rules[i];
    het_rule_prep *rp = &x->prep[i];
    het_rule_report *rep = &s->rule_reports[i];
    char where[512], label[320];
    snprintf(where, sizeof where, "%s:%d:%d", p->source, r->line, r->column);
    if (r->label)
      snprintf(label, sizeof label, "rule %d '%s'", i + 1, r->label);
    else
      snprintf(label, sizeof label, "rule %d", i + 1);
    rep->where = het_arena_strdup(&s->arena, where);
    rep->label = het_arena_strdup(&s->arena, label);
    rep->actions = het_rule_actions(&s->arena, r);
    char placed[900];
    snprintf(placed, sizeof placed, "%s (%s)", label, where);
    rep->placed_by = het_arena_strdup(&s->arena, placed);
    snprintf(placed, sizeof placed, "cost, biased by %s (%s)", label, where);
    rep->biased_by = het_arena_strdup(&s->arena, placed);
    if (!rep->where || !rep->label || !rep->actions || !rep->placed_by ||
        !rep->biased_by)
      return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
    HET_TRY(het_policy_mask(x, r->pin, r->n_pin, &rp->pin, &rp->pin_absent));
    int unused;
    HET_TRY(het_policy_mask(x, r->forbid, r->n_forbid, &rp->forbid, &unused));
    rp->prefer = -1;
    if (r->prefer.s)
      HET_TRY(het_policy_provider(x, &r->prefer, &rp->prefer));
    if (r->n_pin && !rp->pin) {
      if (p->strict == 1)
        return het_error(HET_ERR_INVALID_ARGUMENT,
                         "%s: %s pins to %s, which is not in this session "
                         "(strict: true)",
                         rep->where, rep->label, r->pin[rp->pin_absent].s);
      rep->note = "none of its pin providers is in this session: its pin "
                  "is not applied";
    } else if (r->prefer.s && rp->prefer < 0) {
      rep->note = "the provider it prefers is not in this session";
    }
  }
  return HET_OK;
}

/* ---- 3. rules on one graph ---- */

/* Operators whose arithmetic is on 8-bit integers (the standard quantized
 * ones and the QDQ fusions' hetrt.QLinearAdd and QLinearLut;
 * het_session_precision adds a MaxPool of 8-bit values). */
static bool het_integer_op(const het_node *n) {
  static const char *const onnx[] = {
      "QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger",
      "QLinearAdd", "QLinearMul", "QLinearLut", "QLinearAveragePool",
      "QLinearGlobalAveragePool", "QLinearConcat", "QLinearSigmoid",
      "QLinearLeakyRelu", "QGemm"};
  if (strcmp(n->domain, "") && strcmp(n->domain, "hetrt") &&
      strcmp(n->domain, "com.microsoft"))
    return false;
  for (size_t i = 0; i < sizeof onnx / sizeof *onnx; i++)
    if (strcmp(n->op_type, onnx[i]) == 0)
      return true;
  return false;
}

het_precision het_session_precision(const het_session *s, const het_graph *g,
                                    int n, int p) {
  const het_node *node = &g->nodes[n];
  int x = het_node_input(node, 0);
  het_dtype xt = x >= 0 ? g->values[x].dtype : HET_DTYPE_UNDEFINED;
  if (het_integer_op(node) ||
      (!node->domain[0] && strcmp(node->op_type, "MaxPool") == 0 &&
       (xt == HET_DTYPE_UINT8 || xt == HET_DTYPE_INT8)))
    return HET_PRECISION_INT8;
  const het_ep *ep = p >= 0 && p < s->n_providers ? &s->providers[p] : NULL;
  /* a quantization computes on its float input; others on their output's
   * type */
  bool quantizes = !node->domain[0] &&
                   (strcmp(node->op_type, "QuantizeLinear") == 0 ||
                    strcmp(node->op_type, "DynamicQuantizeLinear") == 0);
  int v = quantizes ? het_node_input(node, 0)
          : node->n_outputs > 0 ? node->outputs[0]
                                : -1;
  het_dtype t = v >= 0 ? g->values[v].dtype : HET_DTYPE_UNDEFINED;
  if (t != HET_DTYPE_FLOAT32 && t != HET_DTYPE_FLOAT16 &&
      t != HET_DTYPE_BFLOAT16)
    return HET_PRECISION_ANY;
  het_dtype as = ep && HET_PROVIDER_HAS(ep->vt, 4, compute_type)
                    ? ep->vt->compute_type(ep->state, g, n)
                    : HET_DTYPE_UNDEFINED;
  if (as == HET_DTYPE_UNDEFINED && ep && t == HET_DTYPE_FLOAT32)
    as = ep->device->info.float32_as;
  if (as == HET_DTYPE_UNDEFINED)
    as = t;
  return as == HET_DTYPE_FLOAT16    ? HET_PRECISION_FP16
         : as == HET_DTYPE_BFLOAT16 ? HET_PRECISION_BF16
                                    : HET_PRECISION_FP32;
}

/* last[n] (g->n_nodes entries) = the last of p's rules with a precision
 * that matches node n of g, or -1 (matched: scratch of as many). */
static het_status het_last_precision_rules(const het_policy *p,
                                           const het_graph *g,
                                           const char *prefix, bool *matched,
                                           int *last) {
  for (int n = 0; n < g->n_nodes; n++)
    last[n] = -1;
  for (int i = 0; i < p->n_rules; i++) {
    int unknown;
    if (!p->rules[i].precision)
      continue;
    HET_TRY(het_policy_match_graph(&p->rules[i], g, prefix, matched,
                                   &unknown));
    for (int n = 0; n < g->n_nodes; n++)
      if (matched[n])
        last[n] = i;
  }
  return HET_OK;
}

het_status het_policy_int8_choices(het_session *s, const het_session_options *o,
                                   const het_graph *g, const char *prefix,
                                   het_optimize_int8 *out) {
  memset(out, 0, sizeof *out);
  out->off = o && o->int8_off;
  if (!out->off)
    HET_TRY(het_island_weighing(s, prefix, out));
  const het_policy *p = o ? o->policy : NULL;
  if (out->off || !p || g->n_nodes == 0)
    return HET_OK;
  int *last = malloc((size_t)g->n_nodes * sizeof *last);
  bool *matched = malloc((size_t)g->n_nodes * sizeof *matched);
  het_status st = last && matched ? HET_OK
                                  : het_error(HET_ERR_OUT_OF_MEMORY,
                                              "policy: out of memory");
  if (st == HET_OK)
    st = het_last_precision_rules(p, g, prefix, matched, last);
  int count = 0;
  for (int n = 0; st == HET_OK && n < g->n_nodes; n++)
    count += last[n] >= 0;
  const char **names =
      count ? het_arena_calloc(&s->arena, (size_t)count, sizeof *names) : NULL;
  bool *int8 =
      count ? het_arena_calloc(&s->arena, (size_t)count, sizeof *int8) : NULL;
  if (st == HET_OK && count && (!names || !int8))
    st = het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  for (int n = 0; st == HET_OK && n < g->n_nodes; n++)
    if (last[n] >= 0) {
      names[out->n_names] = g->nodes[n].name;
      int8[out->n_names++] = p->rules[last[n]].precision == HET_PRECISION_INT8;
    }
  out->names = names;
  out->int8 = int8;
  free(last);
  free(matched);
  return st;
}

/* Providers that compute node n in precision want; all of them when the
 * node computes in no precision (*applies false: it moves or indexes
 * data, or its arithmetic is not floating point or 8-bit). */
static unsigned het_precision_mask(const het_session *s, const het_graph *g,
                                   int n, het_precision want, bool *applies) {
  *applies = het_session_precision(s, g, n, -1) != HET_PRECISION_ANY;
  if (!*applies)
    return ~0u;
  unsigned mask = 0;
  for (int p = 0; p < s->n_providers; p++)
    if (het_session_precision(s, g, n, p) == want)
      mask |= 1u << p;
  return mask;
}

/* Node n's report name ("If_0/then_branch/conv" in a body); the build's
 * own table of names is made only after partitioning. */
static const char *het_policy_node_name(het_session *s,
                                        const het_graph_build *b, int n) {
  const char *name = b->prog.graph->nodes[n].name;
  if (!*b->prefix)
    return name;
  size_t len = strlen(b->prefix) + strlen(name) + 1;
  char *full = het_arena_calloc(&s->arena, len, 1);
  if (full)
    snprintf(full, len, "%s%s", b->prefix, name);
  return full;
}

static het_status het_report_node(het_rule_report *rep, const char *name) {
  if (rep->n_nodes == rep->cap_nodes) {
    int cap = rep->cap_nodes ? rep->cap_nodes * 2 : 16;
    const char **grown = realloc(rep->nodes, (size_t)cap * sizeof *grown);
    if (!grown)
      return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
    rep->nodes = grown;
    rep->cap_nodes = cap;
  }
  rep->nodes[rep->n_nodes++] = name;
  return HET_OK;
}

static void het_rule_fallback(het_rule_report *rep, const char *node,
                              const char *why) {
  if (!rep->n_fallback++) {
    rep->fallback_node = node;
    rep->fallback_why = why;
  }
}

/* Rule i on the nodes of b it matches; last_precision[n]: the last rule
 * with a precision that matches node n (only that one's precision
 * applies to n: a later precision replaces an earlier one). */
static het_status het_policy_rule_apply(het_build_ctx *x, het_graph_build *b,
                                        int i, bool *matched,
                                        const int *last_precision,
                                        het_constraints *c) {
  het_session *s = x->s;
  const het_policy *p = x->o->policy;
  const het_policy_rule *r = &p->rules[i];
  const het_rule_prep *rp = &x->prep[i];
  het_rule_report *rep = &s->rule_reports[i];
  const het_graph *g = b->prog.graph;
  unsigned all = (1u << s->n_providers) - 1u;
  int unknown = 0;
  HET_TRY(het_policy_match_graph(r, g, b->prefix, matched, &unknown));
  rep->n_unknown += unknown;
  for (int k = 0; k < g->n_nodes; k++) {
    int n = g->order[k];
    if (!matched[n])
      continue;
    const char *name = het_policy_node_name(s, b, n);
    if (!name)
      return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
    HET_TRY(het_report_node(rep, name));
    het_node_constraint *nc = &c->nodes[n];
    unsigned before = b->allowed[n];
    bool applies = false;
    unsigned mine = (r->n_pin && rp->pin ? rp->pin : all) & ~rp->forbid;
    if (r->precision && last_precision[n] == i)
      mine &= het_precision_mask(s, g, n, r->precision, &applies);
    /* A later rule overrides an earlier one: its restrictions meet the
     * earlier ones, and where nothing is left, its own win. */
    unsigned allowed = r->n_pin && rp->pin ? mine : before & mine;
    if (!allowed)
      allowed = mine;
    if (rp->prefer >= 0)
      nc->bias[rp->prefer] = r->prefer_factor;
    if (allowed == 0) {
      const char *why = r->precision && applies
                            ? "no provider of this session computes it in "
                              "that precision"
                            : "it leaves the node no provider";
      if (p->strict == 1)
        return het_error(HET_ERR_UNSUPPORTED,
                         "%s: %s cannot be followed for node '%s': %s "
                         "(strict: true)",
                         rep->where, rep->label, name, why);
      het_rule_fallback(rep, name, why);
      continue;
    }
    if (allowed != before) {
      b->allowed[n] = allowed;
      b->placed_by[n] = rep->placed_by;
      b->rule_of[n] = i;
    } else if (rp->prefer >= 0 && b->rule_of[n] < 0) {
      b->placed_by[n] = rep->biased_by;
    }
  }
  return HET_OK;
}

het_status het_policy_apply(het_build_ctx *x, het_graph_build *b,
                            het_constraints *c) {
  const het_policy *p = x->o ? x->o->policy : NULL;
  if (!p || !p->n_rules)
    return HET_OK;
  const het_graph *g = b->prog.graph;
  bool *matched = calloc((size_t)g->n_nodes + 1, sizeof *matched);
  int *last_precision = malloc(((size_t)g->n_nodes + 1) * sizeof(int));
  het_status st = matched && last_precision
                      ? HET_OK
                      : het_error(HET_ERR_OUT_OF_MEMORY,
                                  "policy: out of memory");
  if (st == HET_OK)
    st = het_last_precision_rules(p, g, b->prefix, matched, last_precision);
  for (int i = 0; i < p->n_rules && st == HET_OK; i++)
    st = het_policy_rule_apply(x, b, i, matched, last_precision, c);
  free(matched);
  free(last_precision);
  unsigned all = (1u << x->s->n_providers) - 1u;
  for (int n = 0; st == HET_OK && n < g->n_nodes; n++)
    if (b->allowed[n] != all)
      c->nodes[n].pinned = b->allowed[n];
  return st;
}

/* ---- 4. after the claims ---- */

het_status het_policy_check_claims(het_build_ctx *x, het_graph_build *b,
                                   het_constraints *c,
                                   het_claim *const *claims) {
  const het_policy *p = x->o ? x->o->policy : NULL;
  het_session *s = x->s;
  if (!p || !b->rule_of)
    return HET_OK;
  const het_graph *g = b->prog.graph;
  for (int n = 0; n < g->n_nodes; n++) {
    int i = b->rule_of[n];
    if (i < 0 || !c->nodes[n].pinned)
      continue;
    unsigned can = 0;
    int refuser = -1;
    for (int d = 0; d < s->n_providers; d++) {
      if (!(c->nodes[n].pinned >> d & 1u))
        continue;
      if (claims[d][n].claimed)
        can |= 1u << d;
      else if (refuser < 0)
        refuser = d;
    }
    if (can)
      continue;
    het_rule_report *rep = &s->rule_reports[i];
    const char *name = het_policy_node_name(s, b, n);
    if (!name)
      return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
    char why[400];
    snprintf(why, sizeof why, "%s refuses it: %s",
             s->providers[refuser].vt->name, claims[refuser][n].reason);
    if (p->strict == 1)
      return het_error(HET_ERR_UNSUPPORTED,
                       "%s: %s cannot be followed for node '%s': %s "
                       "(strict: true)",
                       rep->where, rep->label, name, why);
    const char *kept = het_arena_strdup(&s->arena, why);
    if (!kept)
      return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
    het_rule_fallback(rep, name, kept);
    c->nodes[n].pinned = 0;
    b->placed_by[n] = NULL;
    b->rule_of[n] = -1;
  }
  return HET_OK;
}

/* ---- 5. the warnings ---- */

het_status het_policy_finish(het_build_ctx *x) {
  het_session *s = x->s;
  for (int i = 0; i < s->n_rule_reports; i++) {
    const het_rule_report *rep = &s->rule_reports[i];
    if (!rep->n_nodes)
      HET_TRY(het_session_warn(
          s, "%s: %s matches no node%s", rep->where, rep->label,
          rep->n_unknown ? " (some have shapes unknown at load time: give "
                           "shapes to plan for)"
                         : ""));
    else if (rep->note)
      HET_TRY(het_session_warn(s, "%s: %s: %s", rep->where, rep->label,
                               rep->note));
    if (rep->n_fallback)
      HET_TRY(het_session_warn(
          s,
          "%s: %s could not be followed for %d of the %d nodes it matches "
          "(e.g. '%s': %s); they are placed without it",
          rep->where, rep->label, rep->n_fallback, rep->n_nodes,
          rep->fallback_node, rep->fallback_why));
  }
  return HET_OK;
}

void het_policy_reports_destroy(het_session *s) {
  for (int i = 0; i < s->n_rule_reports; i++)
    free(s->rule_reports[i].nodes);
  s->n_rule_reports = 0;
}
