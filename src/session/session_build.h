/* session_build.h — the passes shared by session_build.c (one graph: claims,
 * assignment, boundaries, compilation) and session_program.c (the tree of
 * graphs: bodies first, their captured values, the executor programs). */
#ifndef HET_SESSION_SESSION_BUILD_H
#define HET_SESSION_SESSION_BUILD_H

#include "session/session.h"

typedef struct het_build_ctx {
  het_session *s;
  const het_session_options *o;
  int *rule_hits; /* per placement rule: nodes it matched */
} het_build_ctx;

/* Claims, assignment, boundaries, compilation and placed initializers of
 * graph build b (its bodies built already). */
het_status het_build_graph(het_build_ctx *x, het_graph_build *b);

/* The model's graph and every body below it, bodies first; the programs
 * numbered and ready for the executor. */
het_status het_build_programs(het_build_ctx *x);

#endif
