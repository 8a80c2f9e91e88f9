/* optimizer.c — the rewrite driver: runs the passes of the requested level
 * in rounds until a round changes nothing (folding can make shapes static,
 * which enables more folding), then compacts, validates and re-infers.
 * Invariant: between rounds the graph is compact, validated and inferred.
 */
#include "optimizer/optimizer.h"

#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "optimizer/opt_internal.h"

#define HET_OPT_MAX_ROUNDS 8

/* One round of every pass of the level; o->changes counts rewrites. */
static het_status het_opt_round(het_opt *o) {
  HET_TRY(het_opt_refresh(o));
  o->changes = 0;
  HET_TRY(het_opt_cancel_casts(o));
  HET_TRY(het_opt_remove_identities(o));
  /* Before folding, which would turn the weights' DQs into floats.  Moved
   * Q/DQs leave g->order stale, and a Gemm island adds nodes and values
   * that the per-value counts of the passes below do not cover: either
   * way the round ends, and the next one sees the graph validated. */
  bool moved = false, int8 = o->level >= HET_OPT_EXTENDED &&
                            !(o->int8 && o->int8->off);
  if (int8)
    HET_TRY(het_opt_move_qdq(o, &moved));
  if (int8 && !moved) {
    HET_TRY(het_opt_fuse_qdq(o));
    HET_TRY(het_opt_fuse_qlut(o)); /* adds tables: the round grows */
  }
  if (o->level >= HET_OPT_EXTENDED && !moved)
    HET_TRY(het_opt_f16_to_f32(o)); /* adds Casts and values */
  bool grew = moved || o->g->n_nodes > o->n_nodes ||
              o->g->n_values > o->n_values;
  if (!grew)
    HET_TRY(het_opt_fold_constants(o));
  if (!grew && o->level >= HET_OPT_EXTENDED) {
    HET_TRY(het_opt_fuse_batchnorm(o));
    HET_TRY(het_opt_fuse_hard(o));
    HET_TRY(het_opt_fuse_activations(o));
  }
  if (!grew && o->level >= HET_OPT_ALL) {
    HET_TRY(het_opt_fuse_conv_add(o));
    HET_TRY(het_opt_fuse_conv_dw(o));
    HET_TRY(het_opt_fuse_conv_pool(o));
    HET_TRY(het_opt_fuse_nlp(o));
    HET_TRY(het_opt_split_concats(o)); /* adds nodes: last */
  }
  het_opt_remove_dead(o);
  if (o->changes == 0)
    return HET_OK;
  HET_TRY(het_opt_compact(o));
  het_status st = het_graph_validate(o->g, o->outer);
  if (st == HET_OK)
    st = het_graph_infer_shapes(o->g);
  if (st != HET_OK)
    return het_error_wrap(st, "optimizer: rewritten graph is invalid");
  return HET_OK;
}

het_status het_optimize(het_graph *g, int level, het_optimize_stats *stats) {
  return het_optimize_with(g, NULL, level, NULL, stats);
}

het_status het_optimize_with(het_graph *g, const het_graph *outer, int level,
                             const het_optimize_int8 *int8,
                             het_optimize_stats *stats) {
  het_optimize_stats local;
  if (!stats)
    stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->nodes_before = stats->nodes_after = g->n_nodes;
  if (level <= HET_OPT_NONE)
    return HET_OK;
  if (!g->order)
    return het_error(HET_ERR_INTERNAL, "optimizer: graph not validated");
  het_opt o = {.g = g, .outer = outer, .level = level, .int8 = int8,
               .stats = stats};
  het_status st = HET_OK;
  for (int r = 0; r < HET_OPT_MAX_ROUNDS; r++) {
    stats->rounds++;
    st = het_opt_round(&o);
    if (st != HET_OK || o.changes == 0)
      break;
  }
  if (st == HET_OK)
    st = het_opt_refresh(&o);
  if (st == HET_OK)
    het_opt_drop_unused_initializers(&o);
  het_opt_deinit(&o);
  stats->nodes_after = g->n_nodes;
  return st;
}
