/* reduce_einsum.c — Einsum equation parsing (shared with the CPU kernel)
 * and Einsum shape inference.  Implicit output: ellipsis dims first, then
 * the labels used exactly once, in ASCII order (as numpy).
 */
#include <stdio.h>
#include <string.h>

#include "core/ops/reduce_ops.h"
#include "core/status.h"

static int het_einsum_letter(char c) {
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/* Parses one term [p, end) for a tensor of rank `rank` (rank < 0: output
 * term, ellipsis width ell).  Returns false with err set. */
static bool het_einsum_term(const char *p, const char *end, int rank,
                            int ell, int *labels, int *n_out, bool *has_ell,
                            char *err, size_t cap) {
  int n = 0, n_letters = 0;
  bool seen_ell = false;
  for (const char *q = p; q < end; q++)
    if (het_einsum_letter(*q) >= 0)
      n_letters++;
  int width = rank >= 0 ? rank - n_letters : ell;
  for (const char *q = p; q < end; q++) {
    if (*q == ' ')
      continue;
    if (*q == '.') {
      if (seen_ell || end - q < 3 || q[1] != '.' || q[2] != '.') {
        snprintf(err, cap, "malformed ellipsis in equation");
        return false;
      }
      seen_ell = true;
      q += 2;
      if (width < 0 || n + width > HET_MAX_RANK) {
        snprintf(err, cap, "term has more labels than its input's rank");
        return false;
      }
      for (int k = 0; k < width; k++)
        labels[n++] = 52 + (ell - width) + k;
      continue;
    }
    int l = het_einsum_letter(*q);
    if (l < 0 || n >= HET_MAX_RANK) {
      snprintf(err, cap, "invalid character or too many labels in equation");
      return false;
    }
    labels[n++] = l;
  }
  if (rank >= 0 && n != rank) {
    snprintf(err, cap, "term has %d labels but its input has rank %d", n,
             rank);
    return false;
  }
  *n_out = n;
  *has_ell = seen_ell;
  return true;
}

static void het_einsum_implicit(het_einsum_spec *s, int ell, bool any_ell) {
  int count[HET_EINSUM_LABELS] = {0};
  for (int i = 0; i < s->n_inputs; i++)
    for (int d = 0; d < s->in_rank[i]; d++)
      count[s->in_labels[i][d]]++;
  int n = 0;
  if (any_ell)
    for (int k = 0; k < ell; k++)
      s->out_labels[n++] = 52 + k;
  for (int l = 26; l < 52; l++) /* 'A'..'Z' sort before 'a'..'z' */
    if (count[l] == 1 && n < HET_MAX_RANK)
      s->out_labels[n++] = l;
  for (int l = 0; l < 26; l++)
    if (count[l] == 1 && n < HET_MAX_RANK)
      s->out_labels[n++] = l;
  s->out_rank = n;
}

bool het_einsum_parse(const char *eq, int n_inputs, const int *ranks,
                      het_einsum_spec *s, char *err, size_t cap) {
  memset(s, 0, sizeof *s);
  if (n_inputs > HET_EINSUM_MAX_INPUTS) {
    snprintf(err, cap, "too many inputs (%d)", n_inputs);
    return false;
  }
  const char *arrow = strstr(eq, "->");
  const char *lhs_end = arrow ? arrow : eq + strlen(eq);
  /* pass 1: widest ellipsis */
  int ell = 0;
  const char *p = eq;
  for (int i = 0; i < n_inputs; i++) {
    const char *e = memchr(p, ',', (size_t)(lhs_end - p));
    if (!e)
      e = lhs_end;
    int letters = 0;
    for (const char *q = p; q < e; q++)
      letters += het_einsum_letter(*q) >= 0;
    if (memchr(p, '.', (size_t)(e - p)) && ranks[i] - letters > ell)
      ell = ranks[i] - letters;
    p = e < lhs_end ? e + 1 : e;
  }
  /* pass 2: input terms */
  p = eq;
  bool any_ell = false;
  for (int i = 0; i < n_inputs; i++) {
    const char *e = memchr(p, ',', (size_t)(lhs_end - p));
    if (!e)
      e = lhs_end;
    if (i == n_inputs - 1 && e != lhs_end) {
      snprintf(err, cap, "equation has more terms than the %d inputs",
               n_inputs);
      return false;
    }
    bool he;
    if (!het_einsum_term(p, e, ranks[i], ell, s->in_labels[i], &s->in_rank[i],
                         &he, err, cap))
      return false;
    any_ell |= he;
    if (e == lhs_end && i < n_inputs - 1) {
      snprintf(err, cap, "equation has fewer terms than the %d inputs",
               n_inputs);
      return false;
    }
    p = e + 1;
  }
  s->n_inputs = n_inputs;
  if (!arrow) {
    het_einsum_implicit(s, ell, any_ell);
    return true;
  }
  bool he;
  if (!het_einsum_term(arrow + 2, arrow + strlen(arrow), -1, ell,
                       s->out_labels, &s->out_rank, &he, err, cap))
    return false;
  for (int a = 0; a < s->out_rank; a++) {
    bool found = false;
    for (int b = 0; b < a; b++)
      if (s->out_labels[b] == s->out_labels[a]) {
        snprintf(err, cap, "output repeats a label");
        return false;
      }
    for (int i = 0; i < n_inputs && !found; i++)
      for (int d = 0; d < s->in_rank[i]; d++)
        found |= s->in_labels[i][d] == s->out_labels[a];
    if (!found) {
      snprintf(err, cap, "output label does not appear in any input");
      return false;
    }
  }
  return true;
}

het_status het_infer_einsum(het_infer_ctx *ctx) {
  const char *eq = het_node_attr_string(ctx->node, "equation");
  if (!eq)
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL,
                          "missing attribute 'equation'");
  int ranks[HET_EINSUM_MAX_INPUTS];
  for (int i = 0; i < ctx->n_inputs && i < HET_EINSUM_MAX_INPUTS; i++) {
    HET_TRY(het_infer_require_type(ctx, i, HET_TYPES_NUMERIC));
    if (ctx->inputs[i].dtype != ctx->inputs[0].dtype)
      return het_infer_fail(ctx, HET_ERR_TYPE, "inputs differ in type");
    ranks[i] = ctx->inputs[i].shape.rank;
  }
  het_einsum_spec s;
  char err[128];
  if (!het_einsum_parse(eq, ctx->n_inputs, ranks, &s, err, sizeof err))
    return het_infer_fail(ctx, HET_ERR_INVALID_MODEL, "equation '%s': %s", eq,
                          err);
  het_dim dim[HET_EINSUM_LABELS];
  for (int l = 0; l < HET_EINSUM_LABELS; l++)
    dim[l] = het_dim_known(1);
  for (int i = 0; i < s.n_inputs; i++)
    for (int d = 0; d < s.in_rank[i]; d++) {
      het_dim v = ctx->inputs[i].shape.dims[d];
      het_dim *cur = &dim[s.in_labels[i][d]];
      if (v.value == 1 && cur->value != 1)
        continue;
      if (cur->value > 1 && v.value > 1 && v.value != cur->value)
        return het_infer_fail(ctx, HET_ERR_SHAPE,
                              "equation '%s': label sizes %lld and %lld "
                              "disagree", eq, (long long)cur->value,
                              (long long)v.value);
      if (cur->value == 1 || cur->value < 0)
        *cur = v;
    }
  het_value_info *y = &ctx->outputs[0];
  y->dtype = ctx->inputs[0].dtype;
  y->shape.rank = s.out_rank;
  for (int d = 0; d < s.out_rank; d++)
    y->shape.dims[d] = dim[s.out_labels[d]];
  return HET_OK;
}
