/* memplan.c — offset assignment for the memory planner (memplan.h).
 * Passes: (1) in-place chains: a value takes over an input's block where
 * that input dies; a chain is one block live from its first member's
 * producer to its last member's last access; (2) blocks are placed greedily
 * (by size, by start, by area; each space keeps its best order), each at
 * the best-fitting gap among the blocks already placed in its space whose
 * lifetimes overlap it (else above them all).  Two blocks overlap in time
 * unless one's members are all done before the other's first position:
 * interval comparison, or the order's before() for several streams.
 */
#include "executor/memplan.h"

#include <stdlib.h>
#include <string.h>

#include "core/status.h"

static size_t het_align_up(size_t n) {
  return (n + HET_MEMPLAN_ALIGN - 1) & ~(size_t)(HET_MEMPLAN_ALIGN - 1);
}

static bool het_planned(const het_memplan_value *v) {
  return !v->skip && v->bytes > 0;
}

/* One block: a value or an in-place chain, placed as a unit. */
typedef struct het_block {
  int root;
  int space;
  int first, last;
  size_t size;   /* aligned */
  size_t used;   /* largest member, unaligned */
  size_t offset;
  int *members;  /* the chain's values (order given), n_members of them */
  int n_members;
} het_block;

/* Whether value a is done before position at. */
static bool het_value_done(const het_memplan_order *order,
                           const het_memplan_value *vals, int a, int at) {
  return order ? order->before(order->ctx, a, at) : vals[a].last < at;
}

static bool het_block_done(const het_memplan_order *order,
                           const het_memplan_value *vals, const het_block *b,
                           int at) {
  if (!order)
    return b->last < at; /* the chain's last access */
  for (int k = 0; k < b->n_members; k++)
    if (!het_value_done(order, vals, b->members[k], at))
      return false;
  return true;
}

static bool het_blocks_overlap(const het_memplan_order *order,
                               const het_memplan_value *vals,
                               const het_block *a, const het_block *b) {
  return !het_block_done(order, vals, a, b->first) &&
         !het_block_done(order, vals, b, a->first);
}

void het_memplan_deinit(het_memplan *p) {
  free(p->offset);
  free(p->bytes);
  free(p->space);
  free(p->shares);
  free(p->peak);
  free(p->total);
  free(p->resident);
  free(p->weights);
  free(p->loose);
  memset(p, 0, sizeof *p);
}

static het_status het_memplan_alloc(het_memplan *p, int n, int n_spaces) {
  memset(p, 0, sizeof *p);
  p->n_values = n;
  p->n_spaces = n_spaces;
  p->offset = malloc(((size_t)n + 1) * sizeof *p->offset);
  p->bytes = calloc((size_t)n + 1, sizeof *p->bytes);
  p->space = calloc((size_t)n + 1, sizeof *p->space);
  p->shares = malloc(((size_t)n + 1) * sizeof *p->shares);
  p->peak = calloc((size_t)n_spaces + 1, sizeof *p->peak);
  p->total = calloc((size_t)n_spaces + 1, sizeof *p->total);
  p->resident = calloc((size_t)n_spaces + 1, sizeof *p->resident);
  p->weights = calloc((size_t)n_spaces + 1, sizeof *p->weights);
  p->loose = calloc((size_t)n_spaces + 1, sizeof *p->loose);
  if (!p->offset || !p->bytes || !p->space || !p->shares || !p->peak ||
      !p->total || !p->resident || !p->weights || !p->loose) {
    het_memplan_deinit(p);
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  }
  for (int v = 0; v < n; v++) {
    p->offset[v] = HET_MEMPLAN_NONE;
    p->shares[v] = -1;
  }
  return HET_OK;
}

static het_status het_memplan_check_input(const het_memplan_value *vals,
                                          int n, int n_spaces) {
  for (int v = 0; v < n; v++) {
    const het_memplan_value *x = &vals[v];
    if (!het_planned(x))
      continue;
    if (x->space < 0 || x->space >= n_spaces || x->first < 0 ||
        x->last < x->first)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "memory plan: value %d has space %d (of %d) and steps "
                       "[%d, %d]",
                       v, x->space, n_spaces, x->first, x->last);
  }
  return HET_OK;
}

/* A value keyed by its producer step, for sorting without context. */
typedef struct het_step_key {
  int first, id;
} het_step_key;

static int het_by_first(const void *a, const void *b) {
  const het_step_key *x = a, *y = b;
  if (x->first != y->first)
    return x->first < y->first ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

static int het_by_size(const void *a, const void *b) {
  const het_block *x = a, *y = b;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  if (x->first != y->first)
    return x->first < y->first ? -1 : 1;
  return (x->root > y->root) - (x->root < y->root);
}

static int het_by_start(const void *a, const void *b) {
  const het_block *x = a, *y = b;
  if (x->first != y->first)
    return x->first < y->first ? -1 : 1;
  return het_by_size(a, b);
}

static double het_area(const het_block *b) {
  return (double)b->size * (double)(b->last - b->first + 1);
}

static int het_by_area(const void *a, const void *b) {
  double x = het_area(a), y = het_area(b);
  if (x != y)
    return x > y ? -1 : 1;
  return het_by_size(a, b);
}

/* Placement orders tried; each space keeps the one with the lowest peak. */
static int (*const het_orders[])(const void *, const void *) = {
    het_by_size, het_by_start, het_by_area};
#define HET_N_ORDERS (int)(sizeof het_orders / sizeof het_orders[0])

/* Pass 1: in-place chains.  group[v] = the chain's root; claimed[x] once a
 * value took over x's block.  Values are visited by producer step, so a
 * candidate's chain is complete when a later value looks at it. */
static het_status het_memplan_chains(const het_memplan_value *vals, int n,
                                     const het_memplan_order *order,
                                     het_memplan *p, int *group,
                                     int *chain_last) {
  het_step_key *by_first = malloc(((size_t)n + 1) * sizeof *by_first);
  bool *claimed = calloc((size_t)n + 1, sizeof *claimed);
  if (!by_first || !claimed) {
    free(by_first);
    free(claimed);
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  }
  int m = 0;
  for (int v = 0; v < n; v++) {
    group[v] = v;
    chain_last[v] = vals[v].last;
    if (het_planned(&vals[v]))
      by_first[m++] = (het_step_key){vals[v].first, v};
  }
  qsort(by_first, (size_t)m, sizeof *by_first, het_by_first);
  for (int k = 0; k < m; k++) {
    int v = by_first[k].id;
    const het_memplan_value *x = &vals[v];
    for (int c = 0; c < HET_MEMPLAN_INPLACE; c++) {
      int in = x->inplace[c];
      if (in < 0 || in >= n || in == v || claimed[in] ||
          !het_planned(&vals[in]))
        continue;
      const het_memplan_value *y = &vals[in];
      bool dies = order ? order->dies_at(order->ctx, in, x->first)
                        : y->last == x->first;
      if (y->space != x->space || !dies || y->first >= x->first ||
          het_align_up(y->bytes) != het_align_up(x->bytes))
        continue;
      claimed[in] = true;
      p->shares[v] = in;
      group[v] = group[in];
      if (x->last > chain_last[group[v]])
        chain_last[group[v]] = x->last;
      p->n_inplace++;
      break;
    }
  }
  free(by_first);
  free(claimed);
  return HET_OK;
}

/* Best-fit offset for b among placed[0..np) (sorted by offset). */
static size_t het_best_fit(const het_memplan_order *order,
                           const het_memplan_value *vals, const het_block *b,
                           het_block *const *placed, int np) {
  size_t best = HET_MEMPLAN_NONE, best_gap = HET_MEMPLAN_NONE, end = 0;
  for (int k = 0; k < np; k++) {
    const het_block *o = placed[k];
    if (o->space != b->space || !het_blocks_overlap(order, vals, o, b))
      continue;
    if (o->offset >= end) {
      size_t gap = o->offset - end;
      if (gap >= b->size && gap < best_gap) {
        best_gap = gap;
        best = end;
      }
    }
    if (o->offset + o->size > end)
      end = o->offset + o->size;
  }
  return best != HET_MEMPLAN_NONE ? best : end;
}

/* Places blocks in their current order; peak[space] gets each arena. */
static void het_place_in_order(const het_memplan_order *order,
                               const het_memplan_value *vals,
                               het_block *blocks, int nb, het_block **placed,
                               size_t *peak) {
  int np = 0;
  for (int i = 0; i < nb; i++) {
    het_block *b = &blocks[i];
    b->offset = het_best_fit(order, vals, b, placed, np);
    int at = np;
    while (at > 0 && placed[at - 1]->offset > b->offset) {
      placed[at] = placed[at - 1];
      at--;
    }
    placed[at] = b;
    np++;
    if (b->offset + b->used > peak[b->space])
      peak[b->space] = b->offset + b->used;
  }
}

/* Pass 2: places the blocks once per order in het_orders; every space
 * takes the offsets of the order that gave it the smallest arena.
 * off_by_root[v] receives the offset of the block rooted at v. */
static het_status het_memplan_place(const het_memplan_order *order,
                                    const het_memplan_value *vals,
                                    const het_block *blocks, int nb,
                                    het_memplan *p, size_t *off_by_root) {
  het_block **placed = malloc(((size_t)nb + 1) * sizeof *placed);
  het_block *tmp = malloc(((size_t)nb + 1) * sizeof *tmp);
  size_t *peak = calloc((size_t)p->n_spaces, sizeof *peak);
  het_status st = HET_OK;
  if (!placed || !tmp || !peak) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
    goto done;
  }
  for (int sp = 0; sp < p->n_spaces; sp++)
    p->peak[sp] = HET_MEMPLAN_NONE;
  for (int k = 0; k < HET_N_ORDERS; k++) {
    memcpy(tmp, blocks, (size_t)nb * sizeof *tmp);
    memset(peak, 0, (size_t)p->n_spaces * sizeof *peak);
    qsort(tmp, (size_t)nb, sizeof *tmp, het_orders[k]);
    het_place_in_order(order, vals, tmp, nb, placed, peak);
    for (int i = 0; i < nb; i++)
      if (peak[tmp[i].space] < p->peak[tmp[i].space])
        off_by_root[tmp[i].root] = tmp[i].offset;
    for (int sp = 0; sp < p->n_spaces; sp++)
      if (peak[sp] < p->peak[sp])
        p->peak[sp] = peak[sp];
  }
done:
  free(placed);
  free(tmp);
  free(peak);
  return st;
}

static het_status het_memplan_blocks(const het_memplan_value *vals, int n,
                                     const het_memplan_order *order,
                                     het_memplan *p, const int *group,
                                     const int *chain_last) {
  het_block *blocks = calloc((size_t)n + 1, sizeof *blocks);
  int *block_of = malloc(((size_t)n + 1) * sizeof *block_of);
  int *members = malloc(((size_t)n + 1) * sizeof *members);
  het_status st = HET_OK;
  if (!blocks || !block_of || !members) {
    st = het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
    goto done;
  }
  int nb = 0;
  for (int v = 0; v < n; v++) {
    block_of[v] = -1;
    if (!het_planned(&vals[v]) || group[v] != v)
      continue;
    blocks[nb] = (het_block){.root = v, .space = vals[v].space,
                             .first = vals[v].first, .last = chain_last[v]};
    block_of[v] = nb++;
  }
  for (int v = 0; v < n; v++)
    if (het_planned(&vals[v]))
      blocks[block_of[group[v]]].n_members++;
  int used = 0;
  for (int k = 0; k < nb; k++) {
    blocks[k].members = members + used;
    used += blocks[k].n_members;
    blocks[k].n_members = 0;
  }
  for (int v = 0; v < n; v++) {
    if (!het_planned(&vals[v]))
      continue;
    het_block *b = &blocks[block_of[group[v]]];
    b->members[b->n_members++] = v;
    if (het_align_up(vals[v].bytes) > b->size)
      b->size = het_align_up(vals[v].bytes);
    if (vals[v].bytes > b->used)
      b->used = vals[v].bytes;
    p->bytes[v] = vals[v].bytes;
    p->space[v] = vals[v].space;
    p->total[vals[v].space] += vals[v].bytes;
  }
  /* p->offset doubles as off_by_root, then every member takes its root's. */
  st = het_memplan_place(order, vals, blocks, nb, p, p->offset);
  for (int v = 0; st == HET_OK && v < n; v++)
    if (het_planned(&vals[v]) && group[v] != v)
      p->offset[v] = p->offset[group[v]];
done:
  free(blocks);
  free(block_of);
  free(members);
  return st;
}

het_status het_memplan_compute(const het_memplan_value *vals, int n,
                               int n_spaces, const het_memplan_order *order,
                               het_memplan *out) {
  het_memplan p;
  if (n < 0 || n_spaces < 1 || (n > 0 && !vals))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "memory plan: %d values over %d spaces", n, n_spaces);
  HET_TRY(het_memplan_check_input(vals, n, n_spaces));
  HET_TRY(het_memplan_alloc(&p, n, n_spaces));
  int *group = malloc(((size_t)n + 1) * sizeof *group);
  int *chain_last = malloc(((size_t)n + 1) * sizeof *chain_last);
  het_status st = group && chain_last
                      ? het_memplan_chains(vals, n, order, &p, group,
                                           chain_last)
                      : het_error(HET_ERR_OUT_OF_MEMORY,
                                  "memory plan: out of memory");
  if (st == HET_OK)
    st = het_memplan_blocks(vals, n, order, &p, group, chain_last);
  free(group);
  free(chain_last);
#ifndef NDEBUG
  if (st == HET_OK)
    st = het_memplan_validate(vals, order, &p);
#endif
  if (st != HET_OK) {
    het_memplan_deinit(&p);
    return st;
  }
  *out = p;
  return HET_OK;
}

/* Whether i and j legitimately share bytes: one took over the other's
 * block in place at the step where the other died. */
static bool het_handoff(const het_memplan_value *vals,
                        const het_memplan_order *order, const het_memplan *p,
                        int i, int j) {
  bool dies = order ? order->dies_at(order->ctx, i, vals[j].first)
                    : vals[i].last == vals[j].first;
  if (p->shares[j] == i && dies && p->offset[i] == p->offset[j])
    for (int c = 0; c < HET_MEMPLAN_INPLACE; c++)
      if (vals[j].inplace[c] == i)
        return true;
  return false;
}

static het_status het_memplan_check_value(const het_memplan_value *vals,
                                          const het_memplan *p, int v) {
  size_t off = p->offset[v];
  if (off == HET_MEMPLAN_NONE)
    return het_error(HET_ERR_INTERNAL, "memory plan: value %d not placed", v);
  if (off % HET_MEMPLAN_ALIGN != 0)
    return het_error(HET_ERR_INTERNAL,
                     "memory plan: value %d at offset %zu is not %d-byte "
                     "aligned",
                     v, off, HET_MEMPLAN_ALIGN);
  if (off + vals[v].bytes > p->peak[vals[v].space])
    return het_error(HET_ERR_INTERNAL,
                     "memory plan: value %d [%zu, %zu) exceeds the arena "
                     "(%zu bytes)",
                     v, off, off + vals[v].bytes, p->peak[vals[v].space]);
  return HET_OK;
}

het_status het_memplan_validate(const het_memplan_value *vals,
                                const het_memplan_order *order,
                                const het_memplan *p) {
  int n = p->n_values;
  for (int i = 0; i < n; i++) {
    if (!het_planned(&vals[i])) {
      if (p->offset[i] != HET_MEMPLAN_NONE)
        return het_error(HET_ERR_INTERNAL,
                         "memory plan: value %d is placed but not planned", i);
      continue;
    }
    HET_TRY(het_memplan_check_value(vals, p, i));
    for (int j = i + 1; j < n; j++) {
      const het_memplan_value *a = &vals[i], *b = &vals[j];
      if (!het_planned(b) || a->space != b->space ||
          het_value_done(order, vals, i, b->first) ||
          het_value_done(order, vals, j, a->first))
        continue;
      size_t ai = p->offset[i], bj = p->offset[j];
      if (ai >= bj + b->bytes || bj >= ai + a->bytes)
        continue;
      if (het_handoff(vals, order, p, i, j) ||
          het_handoff(vals, order, p, j, i))
        continue;
      return het_error(HET_ERR_INTERNAL,
                       "memory plan: values %d (steps %d-%d, bytes [%zu, "
                       "%zu)) and %d (steps %d-%d, bytes [%zu, %zu)) are "
                       "live together and overlap",
                       i, a->first, a->last, ai, ai + a->bytes, j, b->first,
                       b->last, bj, bj + b->bytes);
    }
  }
  return HET_OK;
}

/* Ops whose CPU kernels write output element i from input element i only
 * (unary maps, binary broadcasts; broadcast.h allows in-place), or copy
 * ops that skip the copy when output and input are one buffer. */
static const char *const het_inplace_unary[] = {
    "Abs", "Neg", "Reciprocal", "Sqrt", "Exp", "Log", "Erf", "Sin", "Cos",
    "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
    "Ceil", "Floor", "Round", "Sign", "Relu", "LeakyRelu", "Elu", "Selu",
    "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Softplus",
    "Softsign", "ThresholdedRelu", "Shrink", "Clip", "PRelu", "Identity",
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", NULL};
static const char *const het_inplace_binary[] = {"Add", "Sub", "Mul", "Div",
                                                 "Pow", NULL};

static bool het_in_list(const char *const *list, const char *op) {
  for (int i = 0; list[i]; i++)
    if (strcmp(list[i], op) == 0)
      return true;
  return false;
}

bool het_memplan_inplace_ok(const het_node *node, int out, int in) {
  /* hetrt.FusedConv's residual: oneDNN accumulates into it (sum post-op),
   * the generic path saves it first; not when X is the same value. */
  if (out == 0 && in == 3 && strcmp(node->domain, "hetrt") == 0 &&
      strcmp(node->op_type, "FusedConv") == 0)
    return node->inputs[3] != node->inputs[0];
  if (out != 0 || in < 0 ||
      (node->domain[0] && strcmp(node->domain, "ai.onnx") != 0))
    return false;
  if (in == 0 && het_in_list(het_inplace_unary, node->op_type))
    return true;
  return in <= 1 && het_in_list(het_inplace_binary, node->op_type);
}
