/* session_run.c — het_session_run and het_session_run_into: checks the
 * inputs against the model and binds them in the model program's order,
 * finds the outputs asked for, and hands the run to the executor.
 * Invariant: nothing is written to outputs unless the whole run succeeds
 * (run_into: the tensors given are written, but only by a run that
 * succeeds or fails after it started).
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/exec.h"
#include "session/session.h"
#include "session/session_api.h"

static het_status het_check_input(const het_value *v, const het_tensor *t) {
  if (v->dtype != HET_DTYPE_UNDEFINED && t->dtype != v->dtype)
    return het_error(HET_ERR_TYPE, "input '%s': got %s, model expects %s",
                     v->name, het_dtype_str(t->dtype), het_dtype_str(v->dtype));
  if (v->shape.rank < 0)
    return HET_OK;
  if (t->rank != v->shape.rank)
    return het_error(HET_ERR_SHAPE, "input '%s': got rank %d, model expects %d",
                     v->name, t->rank, v->shape.rank);
  for (int i = 0; i < t->rank; i++)
    if (v->shape.dims[i].value >= 0 && v->shape.dims[i].value != t->dims[i])
      return het_error(HET_ERR_SHAPE,
                       "input '%s': dim %d is %lld, model expects %lld",
                       v->name, i, (long long)t->dims[i],
                       (long long)v->shape.dims[i].value);
  return HET_OK;
}

/* params[i] = the tensor given for the model program's parameter i. */
static het_status het_bind_inputs(het_session *s, const char *const *names,
                                  het_tensor *const *inputs, size_t n,
                                  het_tensor **params) {
  het_graph *g = s->graph;
  const het_program *p = &s->top.prog;
  for (int i = 0; i < p->n_params; i++)
    params[i] = NULL;
  for (size_t i = 0; i < n; i++) {
    if (!names || !names[i])
      return het_error(HET_ERR_INVALID_ARGUMENT, "input %zu: NULL name", i);
    if (!inputs || !inputs[i])
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "input %zu ('%s'): NULL tensor", i, names[i]);
    int v = het_graph_find_value(g, names[i]);
    if (v < 0 || !(g->values[v].flags & HET_VALUE_GRAPH_INPUT))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "'%s' is not an input of the model", names[i]);
    if (!inputs[i]->data && inputs[i]->nbytes)
      return het_error(HET_ERR_INVALID_ARGUMENT, "input '%s' has no data",
                       names[i]);
    if (!het_device_is_host(inputs[i]->device))
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "input '%s' is not in host memory", names[i]);
    HET_TRY(het_check_input(&g->values[v], inputs[i]));
    for (int k = 0; k < p->n_params; k++) {
      if (p->params[k] != v)
        continue;
      if (params[k])
        return het_error(HET_ERR_INVALID_ARGUMENT,
                         "input '%s' is given twice", names[i]);
      params[k] = inputs[i];
    }
  }
  for (int i = 0; i < p->n_params; i++)
    if (!params[i])
      return het_error(HET_ERR_INVALID_ARGUMENT, "input '%s' is not given",
                       g->values[p->params[i]].name);
  return HET_OK;
}

/* index[i] = the position in the graph's outputs of the output asked for
 * as names[i] (names NULL: all of them, in order). */
static het_status het_find_outputs(het_session *s, const char *const *names,
                                   size_t n, int *index) {
  het_graph *g = s->graph;
  if (!names) {
    if (n != (size_t)g->n_outputs)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%zu outputs requested without names; the model has %d",
                       n, g->n_outputs);
    for (size_t i = 0; i < n; i++)
      index[i] = (int)i;
    return HET_OK;
  }
  for (size_t i = 0; i < n; i++) {
    index[i] = -1;
    for (int o = 0; names[i] && o < g->n_outputs && index[i] < 0; o++)
      if (strcmp(g->values[g->outputs[o]].name, names[i]) == 0)
        index[i] = o;
    if (index[i] < 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "'%s' is not an output of the model",
                       names[i] ? names[i] : "(null)");
  }
  return HET_OK;
}

het_status het_session_execute(het_session *s, const char *const *in_names,
                               het_tensor *const *inputs, size_t n_in,
                               const char *const *out_names, size_t n_out,
                               het_tensor **outputs, bool into) {
  HET_TRY(het_session_ready(s)); /* a plan's session compiles after creation */
  const het_program *p = &s->top.prog;
  het_tensor *small_p[16];
  int small_i[16];
  het_tensor **params = p->n_params <= 16
                            ? small_p
                            : calloc((size_t)p->n_params, sizeof *params);
  int *ids = n_out <= 16 ? small_i : calloc(n_out + 1, sizeof *ids);
  het_status st = params && ids ? HET_OK
                                : het_error(HET_ERR_OUT_OF_MEMORY,
                                            "run: out of memory");
  if (st == HET_OK)
    st = het_find_outputs(s, out_names, n_out, ids);
  if (st == HET_OK)
    st = het_bind_inputs(s, in_names, inputs, n_in, params);
  for (size_t i = 0; st == HET_OK && into && i < n_out; i++)
    if (!outputs[i])
      st = het_error(HET_ERR_INVALID_ARGUMENT, "output %zu: NULL tensor", i);
  het_session *regime = s;
  if (st == HET_OK)
    st = het_regime_select(s, params, &regime);
  if (st == HET_OK && regime != s) { /* its own partition for these shapes */
    if (params != small_p)
      free(params);
    if (ids != small_i)
      free(ids);
    return het_session_execute(regime, in_names, inputs, n_in, out_names,
                               n_out, outputs, into);
  }
  if (st == HET_OK && s->plans_only)
    st = het_error(HET_ERR_NO_DEVICE,
                   "the placement uses %s, which stands for hardware that is "
                   "not present (a device profile): this session places and "
                   "plans (het_session_explain, partview) but cannot run",
                   s->plans_only->device->name);
  het_exec_recorder rec = {0};
  struct het_run_rec *run = NULL;
  if (st == HET_OK)
    st = het_measure_begin(s, &rec, &run);
  if (st == HET_OK) {
    st = het_exec_run(&s->top.prog, params, ids, n_out,
                      into ? HET_EXEC_INTO : HET_EXEC_ALLOCATE, outputs,
                      rec.record ? &rec : NULL);
    het_measure_end(s, run, st);
  }
  if (params != small_p)
    free(params);
  if (ids != small_i)
    free(ids);
  return st;
}
