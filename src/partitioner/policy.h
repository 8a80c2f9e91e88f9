/* policy.h — YAML placement policies (docs/policy.md).  A policy is parsed
 * once (policy_parse.c) into an immutable het_policy whose every rule and
 * provider name keeps the line and column it came from, then matched
 * against each graph of a session, bodies included (policy_match.c).
 * Invariant: a parsed policy is self-consistent (known keys only, valid
 * values); provider names are checked against a session, not here.
 */
#ifndef HET_PARTITIONER_POLICY_H
#define HET_PARTITIONER_POLICY_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ir.h"

#define HET_POLICY_MAX_RANK 8

/* A string from the policy and where it was written (1-based). */
typedef struct het_policy_str {
  char *s;
  int line, column;
} het_policy_str;

typedef enum het_precision {
  HET_PRECISION_ANY = 0, /* no precision rule */
  HET_PRECISION_FP32,
  HET_PRECISION_FP16,
  HET_PRECISION_BF16,
  HET_PRECISION_INT8,
} het_precision;

/* "fp32", "fp16", "bf16", "int8" ("any" for HET_PRECISION_ANY). */
const char *het_precision_str(het_precision p);

typedef enum het_policy_cmp {
  HET_CMP_NONE = 0, /* no predicate */
  HET_CMP_LT, HET_CMP_LE, HET_CMP_GT, HET_CMP_GE, HET_CMP_EQ, HET_CMP_NE,
} het_policy_cmp;

/* "batch: >= 32": cmp and value. */
typedef struct het_policy_pred {
  het_policy_cmp cmp;
  int64_t value;
} het_policy_pred;

/* One rule: every condition given must hold (an empty match matches every
 * node); the actions then apply in rule order (policy_match.c). */
typedef struct het_policy_rule {
  int line, column;      /* of the rule's mapping */
  char *label;           /* its `name:`, or NULL */
  /* match */
  int n_ops;
  het_policy_str *ops;   /* op types: "Op" (any domain) or "domain.Op" */
  int n_names;
  het_policy_str *names; /* globs (fnmatch) over the node's report name */
  bool has_regex;
  regex_t regex;         /* POSIX extended, over the report name */
  char *regex_text;
  int n_outputs;
  het_policy_str *outputs; /* globs over output value names (any output) */
  unsigned dtypes;       /* bit per het_dtype of the first output; 0 = any */
  het_policy_pred batch;    /* dim 0 of the first input */
  het_policy_pred elements; /* element count of the first input */
  het_policy_str from, to;  /* a range by node name (both or neither):
                               the nodes between them in execution order */
  char *block;           /* a name pattern with one "{i}": the node's name
                            contains it with {i} a decimal index ... */
  int64_t block_first, block_last; /* ... in [first, last] */
  /* actions */
  int n_pin;
  het_policy_str *pin;   /* only these providers */
  int n_forbid;
  het_policy_str *forbid;
  het_policy_str prefer; /* a provider whose estimates are scaled ... */
  double prefer_factor;  /* ... by this (default 0.5) */
  het_precision precision;
} het_policy_rule;

typedef struct het_policy_budget {
  het_policy_str provider;
  size_t bytes;
} het_policy_budget;

/* An input shape to plan for. */
typedef struct het_policy_shape {
  het_policy_str input;
  int rank;
  int64_t dims[HET_POLICY_MAX_RANK];
} het_policy_shape;

typedef struct het_policy {
  char *source;          /* the file, or "<string>" */
  int n_providers;
  het_policy_str *providers; /* priority list, or none */
  int n_rules;
  het_policy_rule *rules;
  int n_budgets;
  het_policy_budget *budgets;
  int min_subgraph_nodes;    /* 0: none */
  int strict;                /* -1 unset, else 0 or 1 */
  int algorithm;             /* -1 unset, 0 cost, 1 priority */
  int n_shapes;
  het_policy_shape *shapes;
  int refs;                  /* holders (het_policy_ref); atomic */
} het_policy;

/* Parses YAML text (len bytes) into *out (caller owns:
 * het_policy_destroy).  source names the text in messages.  Errors are
 * ERR_INVALID_ARGUMENT with "SOURCE:LINE:COLUMN: what is wrong (what was
 * expected)"; nothing is written to *out then. */
het_status het_policy_parse(const char *text, size_t len, const char *source,
                            het_policy **out);

/* Another holder of p (NULL stays NULL): a parsed policy is immutable, so
 * session options and the sessions made from them share it.  Returns p. */
het_policy *het_policy_ref(het_policy *p);

/* Drops one holder; the last frees p.  Accepts NULL. */
void het_policy_destroy(het_policy *p);

/* Whether a name_regex is cheap enough to compile (policy_regex.c): at
 * most 1024 characters, groups at most 64 deep, repeats ('+', {n,m})
 * that would not expand glibc's compiled tree past 20,000 nodes, and no
 * anchor (^ $ \b ...) under more than two stacked or nested repeats;
 * else false with why (cap bytes) saying which. */
bool het_policy_regex_bounded(const char *pattern, char *why, size_t cap);

/* Parses "1x3x640x640" (or "1,3,640,640") into dims; ERR_INVALID_ARGUMENT
 * naming what (an input name) when it is not 1..HET_POLICY_MAX_RANK dims
 * each >= 0. */
het_status het_policy_parse_dims(const char *text, const char *what,
                                 int *rank, int64_t *dims);

/* ---- matching (policy_match.c) ---- */

/* Marks in matched[n] (g->n_nodes entries, written) the nodes of g that
 * rule r matches; prefix ("" or "If_0/then_branch/") is prepended to node
 * names for the name, regex and range conditions (the names partview
 * prints).  *n_unknown counts nodes a shape predicate could not test for
 * want of a known dim (they do not match).  ERR_OUT_OF_MEMORY only. */
het_status het_policy_match_graph(const het_policy_rule *r,
                                  const het_graph *g, const char *prefix,
                                  bool *matched, int *n_unknown);

#endif
