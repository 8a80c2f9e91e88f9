/* session_regime.c — one partition per shape regime.  A session whose
 * inputs leave dims open is partitioned at creation for the shapes it was
 * given to plan for (or for unknown dims).  A run's shapes fall in a
 * regime by the power-of-two range of each open dim (its key); the first
 * run of a key not seen before: 1. builds a trial partition for its
 * shapes (a session over a copy of the optimized graph, stopped after
 * assignment); 2. estimates, on the trial's cost table, every existing
 * regime's assignment and the trial's own; 3. when the trial beats the
 * best existing regime by replan_gain or more (and max_regimes allows),
 * makes a new regime (a full session over another copy, planned for those
 * shapes), else keeps the best existing one.  The choice is remembered
 * per key, reported by het_session_explain and marked in the trace.
 * Invariants: regimes and choices are only added (under lock), never
 * changed or removed before the session is destroyed, so a run may use
 * what it read after unlocking; evaluations run one at a time (build).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/status.h"
#include "core/tensor.h"
#include "session/session_aot.h"
#include "session/session_api.h"
#include "session/session_regime.h"

/* A key's bucket of dim d: floor(log2 d), -1 for 0. */
static int16_t het_regime_bucket(int64_t d) {
  return d <= 0 ? -1 : (int16_t)(63 - __builtin_clzll((unsigned long long)d));
}

/* Appends the buckets of the open dims of param i (declared shape decl,
 * concrete dims) to key. */
static void het_key_add(const het_shape *decl, int rank, const int64_t *dims,
                        het_regime_key *k) {
  if (decl->rank < 0 && k->n < HET_REGIME_KEY)
    k->b[k->n++] = (int16_t)rank; /* rank open too */
  for (int d = 0; d < rank && k->n < HET_REGIME_KEY; d++)
    if (decl->rank < 0 || d >= decl->rank || decl->dims[d].value < 0)
      k->b[k->n++] = het_regime_bucket(dims[d]);
}

static bool het_key_eq(const het_regime_key *a, const het_regime_key *b) {
  return a->n == b->n && memcmp(a->b, b->b, (size_t)a->n * sizeof *a->b) == 0;
}

static int het_key_distance(const het_regime_key *a, const het_regime_key *b) {
  int d = abs(a->n - b->n) * 64;
  for (int i = 0; i < a->n && i < b->n; i++)
    d += abs(a->b[i] - b->b[i]);
  return d;
}

/* "x=1x3x640x640, y=2x7" into buf. */
static void het_shapes_text(const het_session *s, het_tensor *const *params,
                            char *buf, size_t cap) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < s->top.prog.n_params && used < cap; i++) {
    const het_tensor *t = params[i];
    used += (size_t)snprintf(buf + used, cap - used, "%s%s=", i ? ", " : "",
                             s->graph->values[s->top.prog.params[i]].name);
    for (int d = 0; d < t->rank && used < cap; d++)
      used += (size_t)snprintf(buf + used, cap - used, "%s%lld", d ? "x" : "",
                               (long long)t->dims[d]);
    if (t->rank == 0 && used < cap)
      used += (size_t)snprintf(buf + used, cap - used, "scalar");
  }
}

/* Model graph inputs without an initializer, in declared order (the
 * top program's params, before het_build_programs has made them). */
static int het_model_params(const het_graph *g, int *ids) {
  int n = 0;
  for (int i = 0; i < g->n_inputs; i++)
    if (!g->values[g->inputs[i]].initializer)
      ids[n++] = g->inputs[i];
  return n;
}

static bool het_has_open_dims(const het_graph *g) {
  for (int i = 0; i < g->n_inputs; i++) {
    const het_value *v = &g->values[g->inputs[i]];
    if (v->initializer)
      continue;
    if (v->shape.rank < 0)
      return true;
    for (int d = 0; d < v->shape.rank; d++)
      if (v->shape.dims[d].value < 0)
        return true;
  }
  return false;
}

/* The key of the shapes to plan for of options o and their text
 * ("x=1x3x64x64, ..."); *covered: whether they cover every input with an
 * open dim. */
static het_status het_hints_key(const het_session *s,
                                const het_session_options *o,
                                het_regime_key *key, char *text, size_t cap,
                                bool *covered) {
  int *ids = malloc(((size_t)s->graph->n_inputs + 1) * sizeof *ids);
  if (!ids)
    return het_error(HET_ERR_OUT_OF_MEMORY, "regimes: out of memory");
  int n = het_model_params(s->graph, ids);
  het_regime_key k = {0};
  size_t used = 0;
  *covered = true;
  text[0] = '\0';
  for (int i = 0; i < n && *covered; i++) {
    const het_value *v = &s->graph->values[ids[i]];
    const het_shape_hint *h = NULL;
    for (int j = 0; j < o->n_shapes && !h; j++)
      if (strcmp(o->shapes[j].input, v->name) == 0)
        h = &o->shapes[j];
    bool open = v->shape.rank < 0;
    for (int d = 0; d < v->shape.rank; d++)
      open |= v->shape.dims[d].value < 0;
    if (!h) {
      *covered &= !open;
      continue;
    }
    het_key_add(&v->shape, h->rank, h->dims, &k);
    char dims[160] = "";
    size_t dl = 0;
    for (int d = 0; d < h->rank && dl < sizeof dims; d++)
      dl += (size_t)snprintf(dims + dl, sizeof dims - dl, "%s%lld",
                             d ? "x" : "", (long long)h->dims[d]);
    if (used < cap)
      used += (size_t)snprintf(text + used, cap - used, "%s%s=%s",
                               used ? ", " : "", v->name, dims);
  }
  free(ids);
  *covered &= o->n_shapes > 0;
  *key = k;
  return HET_OK;
}

/* Regime 0's key and shape text from the shapes to plan for, when they
 * cover every input with an open dim. */
static het_status het_base_key(const het_session *s, het_regimes *r) {
  het_regime *base = &r->regimes[0];
  snprintf(base->shapes, sizeof base->shapes,
           "the model's own shapes (open dims unknown)");
  bool covered;
  HET_TRY(het_hints_key(s, s->options, &r->base_key, r->base_hints,
                        sizeof r->base_hints, &covered));
  if (covered) {
    r->base_keyed = true;
    snprintf(base->shapes, sizeof base->shapes, "%s (shapes to plan for)",
             r->base_hints);
  }
  return HET_OK;
}

/* s->regimes: regime 0 alone, keyed by s's shapes to plan for. */
static het_status het_regimes_new(het_session *s, double gain, int max) {
  het_regimes *r = calloc(1, sizeof *r);
  if (!r)
    return het_error(HET_ERR_OUT_OF_MEMORY, "regimes: out of memory");
  pthread_mutex_init(&r->lock, NULL);
  pthread_mutex_init(&r->build, NULL);
  r->n_regimes = 1;
  r->gain = gain > 0 ? gain : HET_DEFAULT_REPLAN_GAIN;
  r->max = max > 0 ? max : HET_DEFAULT_MAX_REGIMES;
  s->regimes = r;
  return het_base_key(s, r);
}

het_status het_regimes_init(het_session *s, const het_session_options *o) {
  if ((o && o->replan_off) || !s->optimized || s->n_providers < 2 ||
      s->use_priority || !het_has_open_dims(s->graph))
    return HET_OK;
  return het_regimes_new(s, o ? o->replan_gain : 0, o ? o->max_regimes : 0);
}

void het_regimes_destroy(het_session *s) {
  het_regimes *r = s->regimes;
  if (!r)
    return;
  for (int k = 1; k < r->n_regimes; k++)
    het_session_destroy_impl(r->regimes[k].session);
  pthread_mutex_destroy(&r->lock);
  pthread_mutex_destroy(&r->build);
  free(r);
  s->regimes = NULL;
}

/* The model nodes' providers in session x's partition (control flow: the
 * host provider the cost model gave it). */
static void het_top_assign(const het_session *x, int *out) {
  const het_graph_build *b = &x->top;
  for (int n = 0; n < b->n_model_nodes; n++) {
    int p = b->partition.provider[n];
    out[n] = p >= 0 ? p : b->cost_assign[n];
  }
}

static het_session *het_regime_owner(het_session *s, int k) {
  return k ? s->regimes->regimes[k].session : s;
}

/* A copy of s's options for a regime's session, without shapes to plan
 * for (the caller adds the regime's). */
static het_status het_regime_base_options(const het_session *s,
                                          het_session_options **out) {
  HET_TRY(het_options_copy(s->options, out));
  (*out)->replan_off = true; /* a regime keeps its one partition */
  for (int i = 0; i < (*out)->n_shapes; i++)
    free((*out)->shapes[i].input);
  (*out)->n_shapes = 0;
  return HET_OK;
}

/* Options of a session planned for the run's shapes. */
static het_status het_regime_options(het_session *s, het_tensor *const *params,
                                     het_session_options **out) {
  het_session_options *o = NULL;
  HET_TRY(het_regime_base_options(s, &o));
  het_status st = HET_OK;
  for (int i = 0; i < s->top.prog.n_params && st == HET_OK; i++) {
    const het_tensor *t = params[i];
    if (t->rank >= 1) /* a scalar input has no dims to plan for */
      st = het_options_add_shape(
          o, s->graph->values[s->top.prog.params[i]].name, t->rank, t->dims);
  }
  if (st != HET_OK) {
    het_session_options_destroy_impl(o);
    return st;
  }
  *out = o;
  return HET_OK;
}

/* A session over a copy of the optimized graph for options o: planned
 * afresh, or (stored > 0) placed and compiled as s's plan stores regime
 * stored. */
static het_status het_regime_session_make(het_session *s,
                                          const het_session_options *o,
                                          bool plan_only, int stored,
                                          het_session **out) {
  het_graph *g = NULL;
  HET_TRY(het_graph_clone(s->optimized, &g));
  het_status st =
      stored ? het_session_create_aot_regime(s->env, g, s->aot, stored, o, out)
             : het_session_create_graph(s->env, g, s->model, o, true,
                                        plan_only, out);
  if (st != HET_OK)
    return st;
  int nodes = (*out)->top.n_model_nodes;
  if (nodes != s->top.n_model_nodes) {
    het_session_destroy_impl(*out);
    *out = NULL;
    return het_error(HET_ERR_INTERNAL,
                     "shape regime: the copy has %d nodes, the session %d",
                     nodes, s->top.n_model_nodes);
  }
  return HET_OK;
}

/* "conv1 emu->cpu, ..." for the nodes a and b place differently. */
static int het_moved_text(const het_session *s, const het_session *x,
                          const int *a, const int *b, char *buf, size_t cap) {
  int moved = 0;
  size_t used = 0;
  buf[0] = '\0';
  for (int n = 0; n < s->top.n_model_nodes; n++) {
    if (a[n] == b[n] || s->top.prog.n_bodies[n])
      continue;
    if (moved++ < 8 && used < cap)
      used += (size_t)snprintf(buf + used, cap - used, "%s%s %s->%s",
                               moved > 1 ? ", " : "",
                               s->graph->nodes[n].name,
                               s->providers[a[n]].vt->name,
                               x->providers[b[n]].vt->name);
  }
  if (moved > 8 && used < cap)
    snprintf(buf + used, cap - used, ", and %d more", moved - 8);
  return moved;
}

/* Pass 2: each existing regime's estimate on the trial's table; *best is
 * the lowest. */
static het_status het_regime_compare(het_session *s, const het_session *trial,
                                     int *assign, int *best, double *est) {
  het_regimes *r = s->regimes;
  *best = 0;
  *est = INFINITY;
  for (int k = 0; k < r->n_regimes; k++) {
    double e;
    het_top_assign(het_regime_owner(s, k), assign);
    HET_TRY(het_cost_evaluate(&trial->top.cost, assign, &e));
    if (e < *est || k == 0) {
      *est = e;
      *best = k;
    }
  }
  return HET_OK;
}

/* Pass 3: a new regime for choice c (its shapes in params). */
static het_status het_regime_add(het_session *s, const het_session_options *o,
                                 het_regime_choice *c, int *assign,
                                 int *next) {
  het_regimes *r = s->regimes;
  het_session *made = NULL;
  HET_TRY(het_regime_session_make(s, o, false, 0, &made));
  het_measure_set_origin(made, het_measure_origin(s));
  het_regime *g = &r->regimes[r->n_regimes];
  memset(g, 0, sizeof *g);
  g->session = made;
  g->run = c->run;
  g->from = c->kept;
  g->est_before = c->est_kept;
  g->est_after = made->top.est_cost;
  snprintf(g->shapes, sizeof g->shapes, "%s", c->shapes);
  het_top_assign(het_regime_owner(s, c->kept), assign);
  het_top_assign(made, next);
  g->n_moved = het_moved_text(s, made, assign, next, g->moved,
                              sizeof g->moved);
  pthread_mutex_lock(&r->lock);
  c->regime = r->n_regimes++;
  pthread_mutex_unlock(&r->lock);
  return HET_OK;
}

/* Passes 1-3 for a key seen for the first time; fills c. */
static het_status het_regime_evaluate(het_session *s,
                                      het_tensor *const *params,
                                      het_regime_choice *c) {
  het_regimes *r = s->regimes;
  double t0 = het_clock_seconds();
  het_session_options *o = NULL;
  het_session *trial = NULL;
  size_t nn = (size_t)s->top.n_model_nodes + 1;
  int *assign = malloc(nn * sizeof *assign), *next = malloc(nn * sizeof *next);
  het_status st = assign && next ? HET_OK
                                 : het_error(HET_ERR_OUT_OF_MEMORY,
                                             "regimes: out of memory");
  if (st == HET_OK)
    st = het_regime_options(s, params, &o);
  if (st == HET_OK)
    st = het_regime_session_make(s, o, true, 0, &trial);
  if (st == HET_OK)
    st = het_regime_compare(s, trial, assign, &c->kept, &c->est_kept);
  if (st == HET_OK) {
    c->est_best = trial->top.est_cost;
    c->regime = c->kept;
    double gain = isfinite(c->est_kept)
                      ? (c->est_kept - c->est_best) / c->est_kept
                      : 1.0;
    if (!(gain >= r->gain))
      c->why = "kept: the gain is below replan_gain";
    else if (r->n_regimes >= r->max)
      c->why = "kept: max_regimes reached";
    else {
      het_session_destroy_impl(trial);
      trial = NULL;
      st = het_regime_add(s, o, c, assign, next);
      c->why = "new regime";
    }
  }
  het_session_destroy_impl(trial);
  het_session_options_destroy_impl(o);
  free(assign);
  free(next);
  c->seconds = het_clock_seconds() - t0;
  return st;
}

/* The choice for key k, or NULL (under r->lock). */
static const het_regime_choice *het_choice_find(const het_regimes *r,
                                                const het_regime_key *k) {
  for (int i = 0; i < r->n_choices; i++)
    if (het_key_eq(&r->choices[i].key, k))
      return &r->choices[i];
  return NULL;
}

/* With the choice table full: the regime of the nearest key. */
static int het_choice_nearest(const het_regimes *r, const het_regime_key *k) {
  int best = 0, dist = -1;
  for (int i = 0; i < r->n_choices; i++) {
    int d = het_key_distance(&r->choices[i].key, k);
    if (dist < 0 || d < dist) {
      dist = d;
      best = r->choices[i].regime;
    }
  }
  return best;
}

/* The regime of key k: remembered, or evaluated now (one at a time). */
static het_status het_regime_of(het_session *s, het_tensor *const *params,
                                const het_regime_key *k, long run, int *out) {
  het_regimes *r = s->regimes;
  pthread_mutex_lock(&r->build);
  pthread_mutex_lock(&r->lock);
  const het_regime_choice *seen = het_choice_find(r, k);
  bool full = r->n_choices == HET_REGIME_CHOICES;
  int nearest = full ? het_choice_nearest(r, k) : 0;
  pthread_mutex_unlock(&r->lock);
  if (seen || full) {
    *out = seen ? seen->regime : nearest;
    pthread_mutex_unlock(&r->build);
    return HET_OK;
  }
  het_regime_choice c = {.key = *k, .run = run};
  c.at = het_clock_seconds();
  het_shapes_text(s, params, c.shapes, sizeof c.shapes);
  het_status st = HET_OK;
  if (r->stored) { /* a plan's regimes: the nearest, nothing re-planned */
    pthread_mutex_lock(&r->lock);
    c.kept = c.regime = het_choice_nearest(r, k);
    pthread_mutex_unlock(&r->lock);
    c.est_kept = c.est_best = NAN;
    c.why = "kept: the plan's regime of the nearest shapes";
  } else
    st = het_regime_evaluate(s, params, &c);
  if (st != HET_OK && st != HET_ERR_OUT_OF_MEMORY) {
    /* A partition for these shapes could not be made: the run keeps the
     * best regime it had, and the report says why. */
    snprintf(c.failure, sizeof c.failure, "%s", het_last_error());
    c.why = "kept: re-planning failed";
    c.regime = c.kept;
    het_error_clear();
    st = HET_OK;
  }
  if (st == HET_OK) {
    pthread_mutex_lock(&r->lock);
    r->choices[r->n_choices++] = c;
    pthread_mutex_unlock(&r->lock);
    *out = c.regime;
  }
  pthread_mutex_unlock(&r->build);
  return st;
}

/* The regime of a run with these parameters (run: whether it counts as
 * one; a shape planned without running is run 0 of the report). */
static het_status het_regime_pick(het_session *s, het_tensor *const *params,
                                  bool run, int *regime) {
  het_regimes *r = s->regimes;
  het_regime_key k = {0};
  for (int i = 0; i < s->top.prog.n_params; i++)
    het_key_add(&s->graph->values[s->top.prog.params[i]].shape,
                params[i]->rank, params[i]->dims, &k);
  pthread_mutex_lock(&r->lock);
  long number = run ? ++r->runs : 0;
  const het_regime_choice *seen = het_choice_find(r, &k);
  *regime = seen ? seen->regime : -1;
  pthread_mutex_unlock(&r->lock);
  if (*regime < 0 && r->base_keyed && het_key_eq(&k, &r->base_key))
    *regime = 0; /* the shapes it was planned for */
  if (*regime < 0)
    HET_TRY(het_regime_of(s, params, &k, number, regime));
  return HET_OK;
}

het_status het_regime_select(het_session *s, het_tensor *const *params,
                             het_session **run_in) {
  *run_in = s;
  if (!s->regimes)
    return HET_OK;
  int regime;
  HET_TRY(het_regime_pick(s, params, true, &regime));
  *run_in = het_regime_owner(s, regime);
  return HET_OK;
}

/* Params of the shapes in text ("NAME=DIMS,..."; an input left out keeps
 * its declared shape, which must then be fully known) into t[]. */
static het_status het_shapes_params(het_session *s, const char *text,
                                    het_tensor *t) {
  het_session_options *o = NULL;
  HET_TRY(het_options_copy(NULL, &o));
  het_status st = HET_OK;
  char *copy = strdup(text ? text : "");
  if (!copy)
    st = het_error(HET_ERR_OUT_OF_MEMORY, "regimes: out of memory");
  char *save = NULL;
  for (char *e = copy ? strtok_r(copy, ",", &save) : NULL; e && st == HET_OK;
       e = strtok_r(NULL, ",", &save))
    st = het_options_set_shape(o, e);
  free(copy);
  for (int j = 0; j < o->n_shapes && st == HET_OK; j++) {
    bool found = false;
    for (int i = 0; i < s->top.prog.n_params && !found; i++)
      found = strcmp(s->graph->values[s->top.prog.params[i]].name,
                     o->shapes[j].input) == 0;
    if (!found)
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "shapes to plan for: the model has no input '%s'",
                     o->shapes[j].input);
  }
  for (int i = 0; i < s->top.prog.n_params && st == HET_OK; i++) {
    const het_value *v = &s->graph->values[s->top.prog.params[i]];
    const het_shape_hint *h = NULL;
    for (int j = 0; j < o->n_shapes && !h; j++)
      if (strcmp(o->shapes[j].input, v->name) == 0)
        h = &o->shapes[j];
    t[i] = (het_tensor){.dtype = v->dtype, .rank = h ? h->rank : v->shape.rank};
    if (t[i].rank < 0 || (v->shape.rank >= 0 && t[i].rank != v->shape.rank)) {
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "shapes to plan for: input '%s' needs %s", v->name,
                     h ? "its declared rank" : "a shape (its dims are open)");
      break;
    }
    for (int d = 0; d < t[i].rank && st == HET_OK; d++) {
      int64_t decl = v->shape.rank >= 0 ? v->shape.dims[d].value : -1;
      t[i].dims[d] = h ? h->dims[d] : decl;
      if (t[i].dims[d] < 0 || (decl >= 0 && t[i].dims[d] != decl))
        st = het_error(HET_ERR_INVALID_ARGUMENT,
                       "shapes to plan for: input '%s' dim %d %s", v->name, d,
                       h ? "differs from the model's" : "is open: give a shape");
    }
  }
  het_session_options_destroy_impl(o);
  return st;
}

het_status het_session_plan_shapes_impl(het_session *s, const char *text,
                                        int *regime) {
  if (regime)
    *regime = 0;
  HET_TRY(het_session_ready(s));
  int n = s->top.prog.n_params;
  het_tensor *t = calloc((size_t)n + 1, sizeof *t);
  het_tensor **params = calloc((size_t)n + 1, sizeof *params);
  het_status st = t && params ? HET_OK
                              : het_error(HET_ERR_OUT_OF_MEMORY,
                                          "regimes: out of memory");
  for (int i = 0; i < n && st == HET_OK; i++)
    params[i] = &t[i];
  if (st == HET_OK)
    st = het_shapes_params(s, text, t);
  int k = 0;
  if (st == HET_OK && s->regimes)
    st = het_regime_pick(s, params, false, &k);
  if (st == HET_OK && regime)
    *regime = k;
  free(t);
  free(params);
  return st;
}

/* Stored regime k of s's plan: its session and the choice of its key. */
static het_status het_regime_load_one(het_session *s, int k) {
  het_regimes *r = s->regimes;
  const het_aot_regime *stored = &s->aot->regimes[k];
  het_session_options *o = NULL;
  HET_TRY(het_regime_base_options(s, &o));
  het_status st = HET_OK;
  for (int i = 0; i < stored->n_shapes && st == HET_OK; i++)
    st = het_options_set_shape(o, stored->shapes[i]);
  het_session *x = NULL;
  if (st == HET_OK)
    st = het_regime_session_make(s, o, false, k, &x);
  het_regime_choice c = {.regime = k, .kept = k, .est_kept = NAN,
                         .why = "planned for: stored in the plan"};
  bool covered = false;
  if (st == HET_OK)
    st = het_hints_key(s, o, &c.key, c.shapes, sizeof c.shapes, &covered);
  if (st == HET_OK && !covered)
    st = het_error(HET_ERR_INVALID_MODEL,
                   "its shapes leave an input's dims open");
  het_session_options_destroy_impl(o);
  if (st != HET_OK) {
    het_session_destroy_impl(x);
    return het_error_wrap(st, "plan '%s': shape regime %d", s->aot->path, k);
  }
  size_t nn = (size_t)s->top.n_model_nodes + 1;
  int *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b);
  if (!a || !b) {
    free(a);
    free(b);
    het_session_destroy_impl(x);
    return het_error(HET_ERR_OUT_OF_MEMORY, "regimes: out of memory");
  }
  het_regime *made = &r->regimes[k];
  *made = (het_regime){.session = x, .est_before = NAN,
                     .est_after = x->top.est_cost, .stored = true};
  snprintf(made->shapes, sizeof made->shapes, "%s", c.shapes);
  het_top_assign(s, a);
  het_top_assign(x, b);
  made->n_moved = het_moved_text(s, x, a, b, made->moved, sizeof made->moved);
  free(a);
  free(b);
  c.est_best = x->top.est_cost;
  r->choices[r->n_choices++] = c;
  r->n_regimes = k + 1;
  return HET_OK;
}

het_status het_regimes_load(het_session *s) {
  het_aot *a = s->aot;
  if (!a || s->aot_regime || s->aot_rebuild || a->n_regimes < 2)
    return HET_OK;
  HET_TRY(het_regimes_new(s, s->options->replan_gain, a->n_regimes));
  het_regimes *r = s->regimes;
  r->stored = true;
  if (r->base_keyed) {
    het_regime_choice *c = &r->choices[r->n_choices++];
    *c = (het_regime_choice){.key = r->base_key, .est_kept = NAN,
                             .est_best = NAN,
                             .why = "planned for: stored in the plan"};
    snprintf(c->shapes, sizeof c->shapes, "%s", r->base_hints);
  }
  for (int k = 1; k < a->n_regimes; k++)
    HET_TRY(het_regime_load_one(s, k));
  return HET_OK;
}

het_session *het_regime_session(const het_session *s, int k,
                                const char **shapes) {
  het_regimes *r = s->regimes;
  if (!r || k < 1)
    return NULL;
  pthread_mutex_lock(&r->lock);
  het_session *x = k < r->n_regimes ? r->regimes[k].session : NULL;
  if (x && shapes)
    *shapes = r->regimes[k].shapes;
  pthread_mutex_unlock(&r->lock);
  return x;
}

het_status het_regimes_explain(const het_session *s, het_arena *a,
                               het_explain *e) {
  het_regimes *r = s->regimes;
  if (!r)
    return HET_OK;
  e->replans = true;
  e->regimes_stored = r->stored;
  e->replan_gain = r->gain;
  e->max_regimes = r->max;
  pthread_mutex_lock(&r->lock);
  int n_regimes = r->n_regimes, n_choices = r->n_choices;
  pthread_mutex_unlock(&r->lock);
  e->regimes = het_arena_calloc(a, (size_t)n_regimes, sizeof *e->regimes);
  e->choices = het_arena_calloc(a, (size_t)n_choices + 1, sizeof *e->choices);
  if (!e->regimes || !e->choices)
    return het_error(HET_ERR_OUT_OF_MEMORY, "explain: out of memory");
  for (int k = 0; k < n_regimes; k++) {
    const het_regime *g = &r->regimes[k];
    e->regimes[k] = (het_explain_regime){
        .shapes = g->shapes, .run = g->run, .from = g->from,
        .est_before = g->est_before, .est_after = g->est_after,
        .n_moved = g->n_moved, .moved = g->moved, .stored = g->stored};
  }
  for (int i = 0; i < n_choices; i++) {
    const het_regime_choice *c = &r->choices[i];
    e->choices[i] = (het_explain_regime_choice){
        .shapes = c->shapes, .run = c->run, .regime = c->regime,
        .kept = c->kept, .est_kept = c->est_kept, .est_best = c->est_best,
        .why = c->why, .failure = c->failure[0] ? c->failure : NULL};
  }
  e->n_regimes = n_regimes;
  e->n_choices = n_choices;
  return HET_OK;
}
