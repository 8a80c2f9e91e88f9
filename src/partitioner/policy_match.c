/* policy_match.c — which nodes of a graph a policy rule matches.  A rule's
 * conditions are a conjunction; names are report names (a body node's
 * path), so one rule can reach into If/Loop/Scan bodies or single one out.
 * Invariant: a shape predicate on an unknown dim never matches; callers
 * learn how many nodes that left untested.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "partitioner/policy.h"

static bool het_glob_any(const het_policy_str *globs, int n,
                         const char *name) {
  for (int i = 0; i < n; i++)
    if (fnmatch(globs[i].s, name, 0) == 0)
      return true;
  return false;
}

/* A bare op type matches in any domain (so "Attention" finds the fused
 * hetrt op too); "domain.Op" only in that domain. */
static bool het_op_any(const het_policy_rule *r, const het_node *node) {
  for (int i = 0; i < r->n_ops; i++) {
    const char *want = r->ops[i].s;
    const char *dot = strrchr(want, '.');
    if (!dot) {
      if (strcmp(want, node->op_type) == 0)
        return true;
    } else if (strlen(node->domain) == (size_t)(dot - want) &&
               strncmp(want, node->domain, (size_t)(dot - want)) == 0 &&
               strcmp(dot + 1, node->op_type) == 0) {
      return true;
    }
  }
  return false;
}

static bool het_cmp_holds(const het_policy_pred *p, int64_t v) {
  switch (p->cmp) {
  case HET_CMP_LT: return v < p->value;
  case HET_CMP_LE: return v <= p->value;
  case HET_CMP_GT: return v > p->value;
  case HET_CMP_GE: return v >= p->value;
  case HET_CMP_EQ: return v == p->value;
  case HET_CMP_NE: return v != p->value;
  default: return true;
  }
}

/* The block condition: name contains the pattern with {i} an index in
 * [first, last] (digits only, the longest run). */
static bool het_block_matches(const het_policy_rule *r, const char *name) {
  const char *hole = strstr(r->block, "{i}");
  size_t head = (size_t)(hole - r->block);
  const char *tail = hole + 3;
  size_t tail_len = strlen(tail);
  for (const char *at = name; *at; at++) {
    if (strncmp(at, r->block, head) != 0)
      continue;
    const char *digits = at + head;
    const char *end = digits;
    int64_t index = 0;
    bool overflow = false;
    while (*end >= '0' && *end <= '9') {
      overflow |= index > (INT64_MAX - 9) / 10;
      index = index * 10 + (*end - '0');
      end++;
    }
    if (end == digits || overflow || strncmp(end, tail, tail_len) != 0)
      continue;
    if (index >= r->block_first && index <= r->block_last)
      return true;
  }
  return false;
}

/* Node n's first input's shape, for the shape predicates. */
static bool het_pred_matches(const het_policy_rule *r, const het_graph *g,
                             const het_node *node, bool *unknown) {
  if (r->batch.cmp == HET_CMP_NONE && r->elements.cmp == HET_CMP_NONE)
    return true;
  if (node->n_inputs < 1 || node->inputs[0] < 0)
    return false;
  const het_shape *s = &g->values[node->inputs[0]].shape;
  if (r->batch.cmp != HET_CMP_NONE) {
    if (s->rank < 1)
      return false;
    if (s->dims[0].value < 0) {
      *unknown = true;
      return false;
    }
    if (!het_cmp_holds(&r->batch, s->dims[0].value))
      return false;
  }
  if (r->elements.cmp != HET_CMP_NONE) {
    int64_t count = het_shape_count(s);
    if (count < 0) {
      *unknown = true;
      return false;
    }
    if (!het_cmp_holds(&r->elements, count))
      return false;
  }
  return true;
}

static bool het_node_matches(const het_policy_rule *r, const het_graph *g,
                             int n, const char *name, bool *unknown) {
  const het_node *node = &g->nodes[n];
  if (r->n_ops && !het_op_any(r, node))
    return false;
  if (r->n_names && !het_glob_any(r->names, r->n_names, name))
    return false;
  if (r->has_regex && regexec(&r->regex, name, 0, NULL, 0) != 0)
    return false;
  if (r->block && !het_block_matches(r, name))
    return false;
  if (r->n_outputs) {
    bool any = false;
    for (int i = 0; i < node->n_outputs && !any; i++)
      any = node->outputs[i] >= 0 &&
            het_glob_any(r->outputs, r->n_outputs,
                         g->values[node->outputs[i]].name);
    if (!any)
      return false;
  }
  if (r->dtypes) {
    het_dtype t = node->n_outputs > 0 && node->outputs[0] >= 0
                      ? g->values[node->outputs[0]].dtype
                      : HET_DTYPE_UNDEFINED;
    if (!(r->dtypes >> t & 1u))
      return false;
  }
  return het_pred_matches(r, g, node, unknown);
}

het_status het_policy_match_graph(const het_policy_rule *r,
                                  const het_graph *g, const char *prefix,
                                  bool *matched, int *n_unknown) {
  size_t plen = strlen(prefix);
  size_t cap = plen + 256;
  char *name = malloc(cap);
  if (!name)
    return het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
  memcpy(name, prefix, plen + 1);
  /* The range, as positions in g->order (both ends must be here). */
  int lo = -1, hi = -1;
  *n_unknown = 0;
  het_status st = HET_OK;
  for (int k = 0; k < g->n_nodes && st == HET_OK; k++) {
    int n = g->order[k];
    size_t len = strlen(g->nodes[n].name);
    if (plen + len + 1 > cap) {
      char *grown = realloc(name, plen + len + 1);
      if (!grown) {
        st = het_error(HET_ERR_OUT_OF_MEMORY, "policy: out of memory");
        break;
      }
      name = grown;
      cap = plen + len + 1;
    }
    memcpy(name + plen, g->nodes[n].name, len + 1);
    if (r->from.s && strcmp(name, r->from.s) == 0)
      lo = k;
    if (r->to.s && strcmp(name, r->to.s) == 0)
      hi = k;
    bool unknown = false;
    matched[n] = het_node_matches(r, g, n, name, &unknown);
    *n_unknown += unknown;
  }
  free(name);
  if (st != HET_OK || !r->from.s)
    return st;
  for (int k = 0; k < g->n_nodes; k++)
    if (lo < 0 || hi < 0 || k < lo || k > hi)
      matched[g->order[k]] = false;
  return HET_OK;
}
