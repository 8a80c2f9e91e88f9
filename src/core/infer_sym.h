/* infer_sym.h — load-time contents of small integer shape tensors, in
 * symbols: what Shape(x) holds when x's dims are named ("batch", "seq"),
 * carried through the ops exporters compute Reshape targets with (Gather,
 * Unsqueeze, Squeeze, Concat, Cast, Identity, Constant, and integer Mul,
 * Div, Add, Sub), so
 * that a Reshape to Concat(Shape(x)[0], Shape(x)[1] * 12, 64) gets the
 * dims [batch, seq*12, 64] instead of three unknowns.  Rewrites that need
 * two values' dims to agree (attention: Q, K and V's leading dims) then
 * see them agree.  Only het_graph_infer_shapes uses it.
 */
#ifndef HETRT_CORE_INFER_SYM_H
#define HETRT_CORE_INFER_SYM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/infer.h"
#include "core/ir.h"

/* One element: a literal (lit, any value, -1 and 0 included), a symbol,
 * or neither (unknown). */
typedef struct het_sym_elem {
  int64_t v;
  const char *sym;
  bool lit;
} het_sym_elem;

/* The contents of one int64/int32 value of rank 0 or 1 with at most
 * HET_MAX_RANK elements: n elements, or n < 0 when not known. */
typedef struct het_sym_value {
  int n;
  het_sym_elem e[HET_MAX_RANK];
} het_sym_value;

/* Sets tab[node's output] from its inputs' contents (tab, initializers,
 * Constant attributes); symbols it derives (seq*12) go in g's arena.
 * Nothing is set for ops or operands it does not follow. */
void het_sym_node(het_graph *g, het_sym_value *tab, const het_node *node);

/* A Reshape whose target's contents are known in symbols: *out (the
 * shape inference gave) takes their literal and named dims. */
void het_sym_reshape(const het_graph *g, const het_sym_value *tab,
                     const het_node *node, het_value_info *out);

#endif
