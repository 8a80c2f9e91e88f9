/* reduce_ops.h — infer functions of the reduce operator group, split over
 * src/core/ops/reduce*.c and listed in the single table het_ops_reduce.
 */
#ifndef HET_CORE_OPS_REDUCE_OPS_H
#define HET_CORE_OPS_REDUCE_OPS_H

#include "core/infer.h"

het_status het_infer_softmax(het_infer_ctx *ctx);
het_status het_infer_layernorm(het_infer_ctx *ctx);
het_status het_infer_instancenorm(het_infer_ctx *ctx);
het_status het_infer_mvn(het_infer_ctx *ctx);
het_status het_infer_lrn(het_infer_ctx *ctx);
het_status het_infer_topk(het_infer_ctx *ctx);
het_status het_infer_cumsum(het_infer_ctx *ctx);
het_status het_infer_det(het_infer_ctx *ctx);
het_status het_infer_nllloss(het_infer_ctx *ctx);
het_status het_infer_sceloss(het_infer_ctx *ctx);
het_status het_infer_einsum(het_infer_ctx *ctx);

/* A parsed Einsum equation.  Labels are ids: 'a'-'z' -> 0-25, 'A'-'Z' ->
 * 26-51, and the dims an ellipsis stands for -> 52 + k, right-aligned over
 * the widest ellipsis (so ellipsis dims broadcast like numpy). */
#define HET_EINSUM_MAX_INPUTS 16
#define HET_EINSUM_LABELS (52 + HET_MAX_RANK)
typedef struct het_einsum_spec {
  int n_inputs;
  int in_rank[HET_EINSUM_MAX_INPUTS];
  int in_labels[HET_EINSUM_MAX_INPUTS][HET_MAX_RANK];
  int out_rank;
  int out_labels[HET_MAX_RANK];
} het_einsum_spec;

/* Parses eq for inputs of the given ranks (explicit "->" or implicit
 * output, ellipsis, repeated labels).  On error writes a reason to err and
 * returns false. */
bool het_einsum_parse(const char *eq, int n_inputs, const int *ranks,
                      het_einsum_spec *spec, char *err, size_t cap);

#endif
