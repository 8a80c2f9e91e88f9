/* session_plan.c — the model's plan outside runs: for the load-time input
 * shapes when they are static (built at session creation, so a device too
 * small fails there, and cached for the runs), else the most recent run's;
 * and het_session_get_planned_peak over it.
 */
#include <stdlib.h>
#include <string.h>

#include "core/infer.h"
#include "core/status.h"
#include "executor/plan.h"
#include "session/session.h"

/* The key of the model's load-time input shapes; false when one is not
 * concrete. */
static bool het_static_key(const het_session *s, int64_t *key) {
  const het_program *p = &s->top.prog;
  for (int i = 0; i < p->n_params; i++) {
    const het_value *v = &s->graph->values[p->params[i]];
    int64_t *k = key + (size_t)i * HET_PLAN_KEY_PER_PARAM;
    if (v->dtype == HET_DTYPE_UNDEFINED || !het_shape_is_concrete(&v->shape))
      return false;
    memset(k, 0, HET_PLAN_KEY_PER_PARAM * sizeof *k);
    k[0] = v->dtype;
    k[1] = v->shape.rank;
    for (int d = 0; d < v->shape.rank; d++)
      k[2 + d] = v->shape.dims[d].value;
  }
  return true;
}

het_status het_session_plan_for_report(const het_session *s, bool latest,
                                       het_plan **out) {
  het_program *p = (het_program *)&s->top.prog;
  size_t n_key = (size_t)p->n_params * HET_PLAN_KEY_PER_PARAM;
  int64_t *key = malloc((n_key + 1) * sizeof *key);
  if (!key)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  het_status st;
  if (het_static_key(s, key)) {
    st = het_plan_get(p, key, out);
  } else {
    *out = latest ? het_plan_latest(p) : NULL;
    st = *out ? HET_OK
              : het_error(HET_ERR_SHAPE,
                          "memory plan: the model's input shapes are "
                          "symbolic and the session has not run yet");
  }
  free(key);
  return st;
}

het_status het_session_plan_check(het_session *s) {
  het_plan *plan;
  het_status st = het_session_plan_for_report(s, false, &plan);
  if (st == HET_ERR_SHAPE) {
    het_error_clear();
    return HET_OK; /* planned per signature at run time */
  }
  HET_TRY(st);
  het_plan_put(plan);
  return HET_OK;
}

het_status het_session_get_planned_peak_impl(const het_session *s,
                                        const char *provider, size_t *bytes) {
  int space = -1;
  if (strcmp(provider, "host") == 0)
    space = 0;
  for (int p = 0; space < 0 && p < s->n_providers; p++)
    if (strcmp(s->providers[p].vt->name, provider) == 0)
      space = s->host_memory[p] ? 0 : p + 1;
  if (space < 0)
    return het_error(HET_ERR_NOT_FOUND,
                     "het_session_get_planned_peak: the session has no "
                     "provider '%s'",
                     provider);
  HET_TRY(het_session_ready(s));
  het_plan *plan;
  HET_TRY(het_session_plan_for_report(s, true, &plan));
  het_plan_summary *m = calloc((size_t)plan->n_spaces, sizeof *m);
  het_status st = m ? het_plan_check_capacity(plan)
                    : het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  if (st == HET_OK) {
    het_plan_summary_get(plan, m);
    *bytes = m[space].peak + m[space].resident;
  }
  free(m);
  het_plan_put(plan);
  return st;
}
