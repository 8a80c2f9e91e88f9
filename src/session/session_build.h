/* session_build.h — the passes shared by session_build.c (one graph: claims,
 * assignment, boundaries, compilation) and session_program.c (the tree of
 * graphs: bodies first, their captured values, the executor programs). */
#ifndef HET_SESSION_SESSION_BUILD_H
#define HET_SESSION_SESSION_BUILD_H

#include "session/session.h"

/* A policy rule's providers resolved against the session. */
typedef struct het_rule_prep {
  unsigned pin, forbid; /* provider masks (providers in the session) */
  int pin_absent;       /* index of a pin name not in the session, or -1 */
  int prefer;           /* provider index, -1: none or not in session */
} het_rule_prep;

typedef struct het_build_ctx {
  het_session *s;
  const het_session_options *o;
  int *rule_hits; /* per placement rule: nodes it matched */
  het_rule_prep *prep; /* per policy rule */
} het_build_ctx;

/* Claims, assignment, boundaries, compilation and placed initializers of
 * graph build b (its bodies built already). */
het_status het_build_graph(het_build_ctx *x, het_graph_build *b);

/* Compilation of b's compute steps and the placement of its initializer
 * copies: the end of het_build_graph, or done later for every build of a
 * session loaded from a plan (session_ready.c). */
het_status het_build_compile(het_session *s, het_graph_build *b);

/* The model's graph and every body below it, bodies first; the programs
 * numbered and ready for the executor. */
het_status het_build_programs(het_build_ctx *x);

/* session_policy.c, in build order: 1. the rules' providers resolved
 * (unknown names fail at their line and column); 2. graph b's constraints
 * from the rules (c->nodes, b->allowed, b->rule_of, b->placed_by already
 * allocated); 3. after the claims: nodes pinned where every allowed
 * provider refuses them fall back (or fail under strict: true); 4. the
 * warnings of rules that matched nothing or could not be followed. */
het_status het_policy_prepare(het_build_ctx *x);
het_status het_policy_apply(het_build_ctx *x, het_graph_build *b,
                            het_constraints *c);
het_status het_policy_check_claims(het_build_ctx *x, het_graph_build *b,
                                   het_constraints *c,
                                   het_claim *const *claims);
het_status het_policy_finish(het_build_ctx *x);

/* session_shapes.c: while the cost table of the model's graph is built,
 * g's value shapes are those inferred from the shapes to plan for (*saved
 * holds the model's own; NULL when there are none); _end restores them.
 * An input the model lacks, or a rank or dim that contradicts the model's
 * declaration, fails naming it. */
het_status het_shape_hints_begin(const het_session_options *o, het_graph *g,
                                 het_shape **saved);
void het_shape_hints_end(het_graph *g, het_shape *saved);
/* b->n_estimated_unknown: nodes with a value of unknown shape now. */
void het_count_unknown(het_session *s, het_graph_build *b);

#endif
