/* policy_parse.c — the YAML policy reader (libyaml document API, so every
 * message names the source, line and column).  docs/policy.md is the
 * format's reference; the key tables below are its authority.
 * Invariants: unknown and repeated keys are errors; on any error nothing is
 * returned and everything allocated so far is freed.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/status.h"
#include "partitioner/policy.h"

const char *het_precision_str(het_precision p) {
  static const char *const names[] = {"any", "fp32", "fp16", "bf16", "int8"};
  return (unsigned)p < 5 ? names[p] : "invalid";
}

/* ---- the reader's context and its messages ---- */

typedef struct het_pctx {
  yaml_document_t *doc;
  const char *source;
  het_policy *p;
  long strings;   /* strings read so far: aliases can repeat a node */
} het_pctx;

/* Strings one policy may hold (aliases repeat nodes without growing the
 * text, so the file size alone does not bound the work). */
#define HET_POLICY_MAX_STRINGS 1000000

static het_status het_perr(const het_pctx *x, const yaml_node_t *at,
                           const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static het_status het_perr(const het_pctx *x, const yaml_node_t *at,
                           const char *fmt, ...) {
  char what[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu:%zu: %s", x->source,
                   at->start_mark.line + 1, at->start_mark.column + 1, what);
}

static yaml_node_t *het_pnode(const het_pctx *x, int id) {
  return yaml_document_get_node(x->doc, id);
}

static const char *het_pscalar(const yaml_node_t *n) {
  return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                     : NULL;
}

static const char *het_pkind(const yaml_node_t *n) {
  return n->type == YAML_MAPPING_NODE    ? "a mapping"
         : n->type == YAML_SEQUENCE_NODE ? "a list"
                                         : "a scalar";
}

static het_status het_pstr(het_pctx *x, const yaml_node_t *n,
                           const char *key, het_policy_str *out) {
  const char *v = het_pscalar(n);
  if (++x->strings > HET_POLICY_MAX_STRINGS)
    return het_perr(x, n, "the policy holds more than %d strings (aliases "
                          "included)", HET_POLICY_MAX_STRINGS);
  if (!v || !*v)
    return het_perr(x, n, "'%s' must be a non-empty string, not %s", key,
                    v ? "an empty one" : het_pkind(n));
  out->s = strdup(v);
  if (!out->s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  out->line = (int)n->start_mark.line + 1;
  out->column = (int)n->start_mark.column + 1;
  return HET_OK;
}

/* A scalar or a list of scalars into a fresh array. */
static het_status het_pstr_list(het_pctx *x, const yaml_node_t *n,
                                const char *key, het_policy_str **out,
                                int *count) {
  if (n->type == YAML_MAPPING_NODE)
    return het_perr(x, n, "'%s' must be a string or a list of strings", key);
  int total = n->type == YAML_SCALAR_NODE
                  ? 1
                  : (int)(n->data.sequence.items.top -
                          n->data.sequence.items.start);
  if (total == 0)
    return het_perr(x, n, "'%s' is an empty list", key);
  het_policy_str *list = calloc((size_t)total, sizeof *list);
  if (!list)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  *out = list;
  *count = 0;
  for (int i = 0; i < total; i++) {
    const yaml_node_t *item =
        n->type == YAML_SCALAR_NODE
            ? n
            : het_pnode(x, n->data.sequence.items.start[i]);
    HET_TRY(het_pstr(x, item, key, &list[i]));
    (*count)++;
  }
  return HET_OK;
}

static het_status het_pint(const het_pctx *x, const yaml_node_t *n,
                           const char *key, int64_t lo, int64_t hi,
                           int64_t *out) {
  const char *v = het_pscalar(n);
  char *end = NULL;
  errno = 0;
  long long k = v ? strtoll(v, &end, 10) : 0;
  if (!v || !*v || *end || errno || k < lo || k > hi)
    return het_perr(x, n, "'%s' must be an integer in [%lld, %lld]%s%s%s",
                    key, (long long)lo, (long long)hi, v ? ", not '" : "",
                    v ? v : "", v ? "'" : "");
  *out = k;
  return HET_OK;
}

/* "true"/"false" (YAML 1.1's yes/no are not accepted: one spelling). */
static het_status het_pbool(const het_pctx *x, const yaml_node_t *n,
                            const char *key, int *out) {
  const char *v = het_pscalar(n);
  if (v && (strcmp(v, "true") == 0 || strcmp(v, "false") == 0)) {
    *out = v[0] == 't';
    return HET_OK;
  }
  return het_perr(x, n, "'%s' must be true or false", key);
}

/* Bytes: a number with an optional unit B, KB/MB/GB/TB (10^3k) or
 * KiB/MiB/GiB/TiB (2^10k). */
static het_status het_pbytes(const het_pctx *x, const yaml_node_t *n,
                             const char *key, size_t *out) {
  static const struct { const char *unit; double mult; } units[] = {
      {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
      {"TiB", 1099511627776.0}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
      {"TB", 1e12}, {"B", 1.0}, {"", 1.0}};
  const char *v = het_pscalar(n);
  char *end = NULL;
  double d = v ? strtod(v, &end) : NAN;
  if (v && end != v) {
    while (*end == ' ')
      end++;
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
      if (strcmp(end, units[i].unit) == 0 && isfinite(d) && d >= 0 &&
          d * units[i].mult < 1.8e19) {
        *out = (size_t)(d * units[i].mult);
        return HET_OK;
      }
  }
  return het_perr(x, n,
                  "'%s' must be a size like 512MiB or 6GiB (units B, KB, MB, "
                  "GB, TB, KiB, MiB, GiB, TiB)",
                  key);
}

/* Finds key in a key table; else an error listing the table. */
static het_status het_pkey(const het_pctx *x, const yaml_node_t *k,
                           const char *what, const char *const *table,
                           int *index) {
  const char *v = het_pscalar(k);
  for (int i = 0; v && table[i]; i++)
    if (strcmp(v, table[i]) == 0) {
      *index = i;
      return HET_OK;
    }
  char expected[400];
  size_t used = 0;
  for (int i = 0; table[i] && used < sizeof expected; i++)
    used += (size_t)snprintf(expected + used, sizeof expected - used, "%s%s",
                             i ? (table[i + 1] ? ", " : " or ") : "",
                             table[i]);
  return het_perr(x, k, "unknown %s '%s' (expected %s)", what,
                  v ? v : het_pkind(k), expected);
}

/* Iterates a mapping's pairs, refusing repeated keys.  Calls fn(x, key
 * index, value node, ctx) for each. */
typedef het_status (*het_pfield_fn)(het_pctx *x, int key,
                                    const yaml_node_t *value, void *ctx);

static het_status het_pmapping(het_pctx *x, const yaml_node_t *n,
                               const char *what, const char *keyword,
                               const char *const *table, het_pfield_fn fn,
                               void *ctx) {
  if (n->type != YAML_MAPPING_NODE)
    return het_perr(x, n, "%s must be a mapping, not %s", what,
                    het_pkind(n));
  unsigned long long seen = 0;
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
       pr < n->data.mapping.pairs.top; pr++) {
    const yaml_node_t *k = het_pnode(x, pr->key);
    int idx;
    HET_TRY(het_pkey(x, k, keyword, table, &idx));
    if (seen >> idx & 1ull)
      return het_perr(x, k, "'%s' is given twice in %s", table[idx], what);
    seen |= 1ull << idx;
    HET_TRY(fn(x, idx, het_pnode(x, pr->value), ctx));
  }
  return HET_OK;
}

/* ---- predicates and dims ---- */

/* "32" (equal), ">= 32", "<1000", "!= 1". */
static het_status het_ppred(const het_pctx *x, const yaml_node_t *n,
                            const char *key, het_policy_pred *out) {
  static const struct { const char *op; het_policy_cmp cmp; } ops[] = {
      {"<=", HET_CMP_LE}, {">=", HET_CMP_GE}, {"==", HET_CMP_EQ},
      {"!=", HET_CMP_NE}, {"<", HET_CMP_LT}, {">", HET_CMP_GT},
      {"", HET_CMP_EQ}};
  const char *v = het_pscalar(n);
  for (size_t i = 0; v && i < sizeof ops / sizeof *ops; i++) {
    size_t len = strlen(ops[i].op);
    if (strncmp(v, ops[i].op, len) != 0)
      continue;
    const char *num = v + len;
    while (*num == ' ')
      num++;
    char *end = NULL;
    errno = 0;
    long long k = strtoll(num, &end, 10);
    if (*num && !*end && !errno && k >= 0) {
      out->cmp = ops[i].cmp;
      out->value = k;
      return HET_OK;
    }
    break;
  }
  return het_perr(x, n,
                  "'%s' must be a comparison like '>= 32' or '< 1000' "
                  "(<, <=, >, >=, ==, != and an integer >= 0)",
                  key);
}

het_status het_policy_parse_dims(const char *text, const char *what,
                                 int *rank, int64_t *dims) {
  int r = 0;
  const char *p = text;
  while (p && *p) {
    char *end = NULL;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (end == p || errno || d < 0 || r == HET_POLICY_MAX_RANK ||
        (*end && *end != 'x' && *end != ',') ||
        ((*end == 'x' || *end == ',') && !end[1]))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "shape of '%s': '%s' is not dims like 1x3x640x640 "
                       "(1 to %d integers >= 0)",
                       what, text, HET_POLICY_MAX_RANK);
    dims[r++] = d;
    p = *end ? end + 1 : end;
  }
  if (r == 0)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "shape of '%s': empty (expected dims like 1x3x640x640)",
                     what);
  *rank = r;
  return HET_OK;
}

/* ---- match: ---- */

static const char *const het_match_keys[] = {
    "op", "name", "name_regex", "output", "dtype", "batch", "elements",
    "from", "to", "block", NULL};

static het_status het_pdtypes(het_pctx *x, const yaml_node_t *v,
                              unsigned *mask) {
  het_policy_str *names = NULL;
  int n = 0;
  het_status st = het_pstr_list(x, v, "dtype", &names, &n);
  for (int i = 0; st == HET_OK && i < n; i++) {
    int t = 1;
    while (t <= HET_DTYPE_BFLOAT16 &&
           strcmp(het_dtype_str((het_dtype)t), names[i].s) != 0)
      t++;
    if (t > HET_DTYPE_BFLOAT16)
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s:%d:%d: unknown dtype '%s' (expected a name like "
                     "float32, float16, bfloat16, int8, int64)",
                     x->source, names[i].line, names[i].column, names[i].s);
    else
      *mask |= 1u << t;
  }
  for (int i = 0; i < n; i++)
    free(names[i].s);
  free(names);
  return st;
}

static const char *const het_block_keys[] = {"pattern", "first", "last",
                                             NULL};

static het_status het_pblock_field(het_pctx *x, int key,
                                   const yaml_node_t *v, void *ctx) {
  het_policy_rule *r = ctx;
  if (key == 0) {
    het_policy_str s = {0};
    HET_TRY(het_pstr(x, v, "pattern", &s));
    r->block = s.s;
    const char *at = strstr(s.s, "{i}");
    if (!at || strstr(at + 3, "{i}"))
      return het_perr(x, v,
                      "block pattern '%s' must contain '{i}' exactly once "
                      "(where the block index is, e.g. 'layer.{i}/')",
                      s.s);
    return HET_OK;
  }
  return het_pint(x, v, het_block_keys[key], 0, INT64_MAX,
                  key == 1 ? &r->block_first : &r->block_last);
}

static het_status het_pmatch_field(het_pctx *x, int key,
                                   const yaml_node_t *v, void *ctx) {
  het_policy_rule *r = ctx;
  const char *k = het_match_keys[key];
  switch (key) {
  case 0:
    return het_pstr_list(x, v, k, &r->ops, &r->n_ops);
  case 1:
    return het_pstr_list(x, v, k, &r->names, &r->n_names);
  case 2: {
    het_policy_str s = {0};
    HET_TRY(het_pstr(x, v, k, &s));
    r->regex_text = s.s;
    char bound[128];
    if (!het_policy_regex_bounded(s.s, bound, sizeof bound))
      return het_perr(x, v, "name_regex '%s': %s", s.s, bound);
    int rc = regcomp(&r->regex, s.s, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
      char why[128];
      regerror(rc, &r->regex, why, sizeof why);
      return het_perr(x, v, "name_regex '%s': %s", s.s, why);
    }
    r->has_regex = true;
    return HET_OK;
  }
  case 3:
    return het_pstr_list(x, v, k, &r->outputs, &r->n_outputs);
  case 4:
    return het_pdtypes(x, v, &r->dtypes);
  case 5:
    return het_ppred(x, v, k, &r->batch);
  case 6:
    return het_ppred(x, v, k, &r->elements);
  case 7:
    return het_pstr(x, v, k, &r->from);
  case 8:
    return het_pstr(x, v, k, &r->to);
  default:
    r->block_first = 0;
    r->block_last = INT64_MAX;
    HET_TRY(het_pmapping(x, v, "'block'", "block key", het_block_keys,
                         het_pblock_field, r));
    if (!r->block)
      return het_perr(x, v, "block needs a 'pattern' with '{i}'");
    if (r->block_first > r->block_last)
      return het_perr(x, v, "block: first %lld is after last %lld",
                      (long long)r->block_first, (long long)r->block_last);
    return HET_OK;
  }
}

/* ---- a rule ---- */

static const char *const het_rule_keys[] = {
    "name", "match", "pin", "forbid", "prefer", "precision", NULL};
static const char *const het_prefer_keys[] = {"provider", "factor", NULL};

static het_status het_pprefer_field(het_pctx *x, int key,
                                    const yaml_node_t *v, void *ctx) {
  het_policy_rule *r = ctx;
  if (key == 0)
    return het_pstr(x, v, "provider", &r->prefer);
  const char *s = het_pscalar(v);
  char *end = NULL;
  double f = s ? strtod(s, &end) : NAN;
  if (!s || end == s || *end || !(f > 0 && f <= 1e6))
    return het_perr(x, v, "prefer factor must be a number in (0, 1e6] "
                          "(< 1 prefers the provider, > 1 avoids it)");
  r->prefer_factor = f;
  return HET_OK;
}

static het_status het_prule_field(het_pctx *x, int key, const yaml_node_t *v,
                                  void *ctx) {
  het_policy_rule *r = ctx;
  switch (key) {
  case 0: {
    het_policy_str s = {0};
    HET_TRY(het_pstr(x, v, "name", &s));
    r->label = s.s;
    return HET_OK;
  }
  case 1:
    return het_pmapping(x, v, "'match'", "match key", het_match_keys,
                        het_pmatch_field, r);
  case 2:
    return het_pstr_list(x, v, "pin", &r->pin, &r->n_pin);
  case 3:
    return het_pstr_list(x, v, "forbid", &r->forbid, &r->n_forbid);
  case 4:
    r->prefer_factor = 0.5;
    if (v->type == YAML_SCALAR_NODE)
      return het_pstr(x, v, "prefer", &r->prefer);
    HET_TRY(het_pmapping(x, v, "'prefer'", "prefer key", het_prefer_keys,
                         het_pprefer_field, r));
    if (!r->prefer.s)
      return het_perr(x, v, "prefer needs a 'provider'");
    return HET_OK;
  default: {
    static const char *const precisions[] = {"fp32", "fp16", "bf16", "int8",
                                             NULL};
    int idx;
    if (v->type != YAML_SCALAR_NODE)
      return het_perr(x, v, "precision must be fp32, fp16, bf16 or int8");
    HET_TRY(het_pkey(x, v, "precision", precisions, &idx));
    r->precision = (het_precision)(idx + 1);
    return HET_OK;
  }
  }
}

static het_status het_prule(het_pctx *x, const yaml_node_t *n,
                            het_policy_rule *r) {
  if (++x->strings > HET_POLICY_MAX_STRINGS)
    return het_perr(x, n, "the policy holds more than %d rules and strings "
                          "(aliases included)", HET_POLICY_MAX_STRINGS);
  r->line = (int)n->start_mark.line + 1;
  r->column = (int)n->start_mark.column + 1;
  if (n->type != YAML_MAPPING_NODE)
    return het_perr(x, n, "a rule must be a mapping with 'match' and an "
                          "action (pin, forbid, prefer, precision)");
  /* Rule keys that are not match keys read as misspelt actions. */
  HET_TRY(het_pmapping(x, n, "a rule", "action", het_rule_keys,
                       het_prule_field, r));
  if (!r->n_pin && !r->n_forbid && !r->prefer.s && !r->precision)
    return het_perr(x, n, "rule has no action (expected pin, forbid, "
                          "prefer or precision)");
  if (!r->from.s != !r->to.s)
    return het_perr(x, n, "a range needs both 'from' and 'to'");
  return HET_OK;
}

/* ---- top level ---- */

static const char *const het_top_keys[] = {
    "providers", "rules", "memory", "min_subgraph_nodes", "strict",
    "algorithm", "shapes", NULL};

static het_status het_pbudget_map(het_pctx *x, const yaml_node_t *v) {
  het_policy *p = x->p;
  if (v->type != YAML_MAPPING_NODE)
    return het_perr(x, v, "'memory' must map providers to sizes "
                          "(memory: {cuda: 6GiB})");
  int total = (int)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
  p->budgets = calloc((size_t)total + 1, sizeof *p->budgets);
  if (!p->budgets)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  for (int i = 0; i < total; i++) {
    yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
    het_policy_budget *b = &p->budgets[p->n_budgets];
    HET_TRY(het_pstr(x, het_pnode(x, pr->key), "memory", &b->provider));
    p->n_budgets++;
    for (int j = 0; j < p->n_budgets - 1; j++)
      if (strcmp(p->budgets[j].provider.s, b->provider.s) == 0)
        return het_perr(x, het_pnode(x, pr->key),
                        "memory budget for '%s' is given twice",
                        b->provider.s);
    HET_TRY(het_pbytes(x, het_pnode(x, pr->value), "memory", &b->bytes));
  }
  return HET_OK;
}

static het_status het_pshape_map(het_pctx *x, const yaml_node_t *v) {
  het_policy *p = x->p;
  if (v->type != YAML_MAPPING_NODE)
    return het_perr(x, v, "'shapes' must map inputs to dims "
                          "(shapes: {images: 1x3x640x640})");
  int total = (int)(v->data.mapping.pairs.top - v->data.mapping.pairs.start);
  p->shapes = calloc((size_t)total + 1, sizeof *p->shapes);
  if (!p->shapes)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  for (int i = 0; i < total; i++) {
    yaml_node_pair_t *pr = &v->data.mapping.pairs.start[i];
    het_policy_shape *sh = &p->shapes[p->n_shapes];
    HET_TRY(het_pstr(x, het_pnode(x, pr->key), "shapes", &sh->input));
    p->n_shapes++;
    const yaml_node_t *val = het_pnode(x, pr->value);
    const char *dims = het_pscalar(val);
    if (!dims ||
        het_policy_parse_dims(dims, sh->input.s, &sh->rank, sh->dims) !=
            HET_OK)
      return het_perr(x, val, "shape of '%s' must be dims like 1x3x640x640 "
                              "(1 to %d integers >= 0)",
                      sh->input.s, HET_POLICY_MAX_RANK);
  }
  return HET_OK;
}

static het_status het_prules(het_pctx *x, const yaml_node_t *v) {
  het_policy *p = x->p;
  if (v->type != YAML_SEQUENCE_NODE)
    return het_perr(x, v, "'rules' must be a list of rules");
  int total = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
  p->rules = calloc((size_t)total + 1, sizeof *p->rules);
  if (!p->rules)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  for (int i = 0; i < total; i++) {
    p->n_rules++;
    HET_TRY(het_prule(x, het_pnode(x, v->data.sequence.items.start[i]),
                      &p->rules[i]));
  }
  return HET_OK;
}

static het_status het_ptop_field(het_pctx *x, int key, const yaml_node_t *v,
                                 void *ctx) {
  (void)ctx;
  het_policy *p = x->p;
  int64_t k = 0;
  switch (key) {
  case 0:
    return het_pstr_list(x, v, "providers", &p->providers, &p->n_providers);
  case 1:
    return het_prules(x, v);
  case 2:
    return het_pbudget_map(x, v);
  case 3:
    HET_TRY(het_pint(x, v, "min_subgraph_nodes", 0, 1000000, &k));
    p->min_subgraph_nodes = (int)k;
    return HET_OK;
  case 4:
    return het_pbool(x, v, "strict", &p->strict);
  case 5: {
    static const char *const algorithms[] = {"cost", "priority", NULL};
    int idx;
    HET_TRY(het_pkey(x, v, "algorithm", algorithms, &idx));
    p->algorithm = idx;
    return HET_OK;
  }
  default:
    return het_pshape_map(x, v);
  }
}

static void het_policy_str_free(het_policy_str *list, int n) {
  for (int i = 0; i < n; i++)
    free(list[i].s);
  free(list);
}

het_policy *het_policy_ref(het_policy *p) {
  if (p)
    __atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
  return p;
}

void het_policy_destroy(het_policy *p) {
  if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  for (int i = 0; i < p->n_rules; i++) {
    het_policy_rule *r = &p->rules[i];
    free(r->label);
    het_policy_str_free(r->ops, r->n_ops);
    het_policy_str_free(r->names, r->n_names);
    if (r->has_regex)
      regfree(&r->regex);
    free(r->regex_text);
    het_policy_str_free(r->outputs, r->n_outputs);
    free(r->from.s);
    free(r->to.s);
    free(r->block);
    het_policy_str_free(r->pin, r->n_pin);
    het_policy_str_free(r->forbid, r->n_forbid);
    free(r->prefer.s);
  }
  free(p->rules);
  het_policy_str_free(p->providers, p->n_providers);
  for (int i = 0; i < p->n_budgets; i++)
    free(p->budgets[i].provider.s);
  free(p->budgets);
  for (int i = 0; i < p->n_shapes; i++)
    free(p->shapes[i].input.s);
  free(p->shapes);
  free(p->source);
  free(p);
}

het_status het_policy_parse(const char *text, size_t len, const char *source,
                            het_policy **out) {
  if (!source)
    source = "<string>";
  yaml_parser_t parser;
  yaml_document_t doc;
  if (!yaml_parser_initialize(&parser))
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
  if (!yaml_parser_load(&parser, &doc)) {
    het_status st = het_error(
        HET_ERR_INVALID_ARGUMENT, "%s:%zu:%zu: %s%s%s", source,
        parser.problem_mark.line + 1, parser.problem_mark.column + 1,
        parser.problem ? parser.problem : "YAML syntax error",
        parser.context ? " " : "", parser.context ? parser.context : "");
    yaml_parser_delete(&parser);
    return st;
  }
  het_status st = HET_OK;
  het_policy *p = calloc(1, sizeof *p);
  het_pctx x = {.doc = &doc, .source = source, .p = p};
  yaml_node_t *root = yaml_document_get_root_node(&doc);
  if (!p || !(p->source = strdup(source))) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  } else if (!root) {
    st = het_error(HET_ERR_INVALID_ARGUMENT,
                   "%s:1:1: the policy is empty (expected a mapping with "
                   "rules, providers, memory, ...)",
                   source);
  } else {
    p->refs = 1;
    p->strict = -1;
    p->algorithm = -1;
    st = het_pmapping(&x, root, "the policy", "key", het_top_keys,
                      het_ptop_field, NULL);
  }
  yaml_document_delete(&doc);
  if (st == HET_OK) {
    yaml_document_t extra;
    if (yaml_parser_load(&parser, &extra)) {
      if (yaml_document_get_root_node(&extra))
        st = het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%zu:%zu: a second YAML document (a policy is one "
                       "document)",
                       source, extra.start_mark.line + 1,
                       extra.start_mark.column + 1);
      yaml_document_delete(&extra);
    } else {
      st = het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu:%zu: %s", source,
                     parser.problem_mark.line + 1,
                     parser.problem_mark.column + 1,
                     parser.problem ? parser.problem : "YAML syntax error");
    }
  }
  yaml_parser_delete(&parser);
  if (st != HET_OK) {
    het_policy_destroy(p);
    return st;
  }
  *out = p;
  return HET_OK;
}
