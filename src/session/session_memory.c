/* session_memory.c — a session's memory plans.  Passes per signature:
 * (1) concrete shape inference over the step order (inputs' shapes,
 * initializer data); (2) lifetimes, spaces and in-place candidates per
 * value; (3) het_memplan_compute; (4) bytes outside the arena and the
 * device capacity check.  Plans are cached by (graph fingerprint, input
 * signature) in an LRU with reference counts; each entry pools the host
 * arena blocks its runs use.
 */
#include "session/session_memory.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "hetrt/hetrt.h"

#define HET_PLAN_CACHE 16 /* entries (all sessions; see het_plan_cache) */
#define HET_PLAN_IDLE 4   /* pooled arena blocks per entry */
#define HET_SIG_PER_INPUT (2 + HET_MAX_RANK)

struct het_plan_entry {
  uint64_t fingerprint;
  int n_key;
  int64_t *key;        /* per input: dtype, rank, dims[HET_MAX_RANK] */
  het_memplan plan;
  int refs;            /* the cache's own + one per run using it */
  uint64_t stamp;      /* LRU clock */
  int n_idle;
  void *idle[HET_PLAN_IDLE];
};

/* The plan cache.  Sessions carry no slot for it yet (session.h), so it is
 * process-wide and keyed by a fingerprint of the session's partitioned
 * graph: sessions of one model share plans, which is sound because a plan
 * is a function of that structure and the input shapes. */
static pthread_mutex_t het_plan_lock = PTHREAD_MUTEX_INITIALIZER;
static het_plan_entry *het_plan_cache[HET_PLAN_CACHE];
static uint64_t het_plan_clock;
static atomic_long het_plans_computed;

long het_session_memory_plans_computed(void) {
  return atomic_load(&het_plans_computed);
}

/* ---- fingerprint and signature ------------------------------------------ */

static uint64_t het_fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++)
    h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

static uint64_t het_fnv_i64(uint64_t h, int64_t v) {
  return het_fnv(h, &v, sizeof v);
}

static uint64_t het_fnv_str(uint64_t h, const char *s) {
  return s ? het_fnv(h, s, strlen(s) + 1) : het_fnv_i64(h, -7);
}

static uint64_t het_hash_value(const het_session *s, uint64_t h, int v) {
  const het_value *val = &s->graph->values[v];
  h = het_fnv_i64(h, val->flags);
  h = het_fnv_i64(h, val->dtype);
  h = het_fnv_i64(h, val->producer);
  h = het_fnv_i64(h, s->uses[v]);
  h = het_fnv_i64(h, s->placed && s->placed[v]);
  h = het_fnv_i64(h, val->shape.rank);
  for (int i = 0; i < val->shape.rank; i++)
    h = het_fnv_i64(h, val->shape.dims[i].value);
  const het_tensor *t = val->initializer;
  if (t && t->dtype != HET_DTYPE_STRING && t->data) {
    h = het_fnv(h, t->dims, (size_t)t->rank * sizeof t->dims[0]);
    if (t->nbytes <= 512) /* shape-carrying constants */
      h = het_fnv(h, t->data, t->nbytes);
  }
  return h;
}

/* Hash of everything a plan depends on besides the input shapes (cached
 * in s->plan_fp once the session is built: see het_session_fp). */
static uint64_t het_session_fingerprint(const het_session *s) {
  const het_graph *g = s->graph;
  uint64_t h = 1469598103934665603ull;
  h = het_fnv_i64(h, g->n_values);
  h = het_fnv_i64(h, g->n_nodes);
  for (int p = 0; p < s->n_providers; p++) {
    h = het_fnv_str(h, s->providers[p].vt->name);
    h = het_fnv_i64(h, s->host_memory[p]);
    h = het_fnv_i64(h, (int64_t)s->info[p].memory_capacity);
  }
  for (int v = 0; v < g->n_values; v++)
    h = het_hash_value(s, h, v);
  for (int i = 0; i < s->partition.n_subgraphs; i++) {
    const het_subgraph *sg = &s->partition.subgraphs[i];
    h = het_fnv_i64(h, sg->kind * 64 + sg->provider);
    for (int k = 0; k < sg->n_nodes; k++) {
      const het_node *n = &g->nodes[sg->nodes[k]];
      h = het_fnv_str(h, n->op_type);
      h = het_fnv_str(h, n->domain);
      h = het_fnv(h, n->inputs, (size_t)n->n_inputs * sizeof(int));
      h = het_fnv(h, n->outputs, (size_t)n->n_outputs * sizeof(int));
      h = het_fnv_i64(h, n->n_attrs);
    }
  }
  return h;
}

static uint64_t het_session_fp(const het_session *s) {
  return s->plan_fp ? s->plan_fp : het_session_fingerprint(s);
}

/* key[] for the given per-input tensors (NULL: load-time shapes, which
 * must be concrete: ERR_SHAPE otherwise). */
static het_status het_signature(const het_session *s,
                                het_tensor *const *values, int64_t *key) {
  for (int i = 0; i < s->n_inputs; i++) {
    int v = s->inputs[i];
    int64_t *k = key + (size_t)i * HET_SIG_PER_INPUT;
    memset(k, 0, HET_SIG_PER_INPUT * sizeof *k);
    if (values) {
      const het_tensor *t = values[v];
      k[0] = t->dtype;
      k[1] = t->rank;
      memcpy(k + 2, t->dims, (size_t)t->rank * sizeof *k);
      continue;
    }
    const het_value *val = &s->graph->values[v];
    if (val->dtype == HET_DTYPE_UNDEFINED || !het_shape_is_concrete(&val->shape))
      return het_error(HET_ERR_SHAPE,
                       "memory plan: input '%s' has no concrete shape before "
                       "a run",
                       val->name);
    k[0] = val->dtype;
    k[1] = val->shape.rank;
    for (int d = 0; d < val->shape.rank; d++)
      k[2 + d] = val->shape.dims[d].value;
  }
  return HET_OK;
}

/* ---- pass 1: concrete shapes --------------------------------------------- */

static size_t het_info_bytes(const het_value_info *in) {
  size_t nbytes;
  int64_t dims[HET_MAX_RANK];
  if (in->dtype == HET_DTYPE_UNDEFINED || in->dtype == HET_DTYPE_STRING ||
      !het_shape_is_concrete(&in->shape))
    return 0;
  for (int i = 0; i < in->shape.rank; i++)
    dims[i] = in->shape.dims[i].value;
  if (het_tensor_check_shape(in->dtype, dims, in->shape.rank, "value",
                             &nbytes) != HET_OK)
    return 0;
  return nbytes;
}

/* Infers one compute node's outputs into info (unknown on any failure: the
 * run reports real errors; the plan just leaves such values out). */
static void het_infer_step(const het_node *n, het_value_info *info,
                           het_arena *scratch) {
  het_value_info in_small[16], out_small[16];
  het_value_info *in = in_small, *out = out_small;
  bool ok = true;
  if (n->n_inputs > 16 || n->n_outputs > 16) {
    in = calloc((size_t)n->n_inputs + 1, sizeof *in);
    out = calloc((size_t)n->n_outputs + 1, sizeof *out);
    ok = in && out;
  }
  for (int i = 0; ok && i < n->n_inputs; i++) {
    memset(&in[i], 0, sizeof in[i]);
    in[i].shape.rank = -1;
    if (n->inputs[i] < 0)
      continue;
    in[i] = info[n->inputs[i]];
    ok = in[i].shape.rank >= 0 && in[i].dtype != HET_DTYPE_UNDEFINED;
  }
  for (int o = 0; ok && o < n->n_outputs; o++) {
    memset(&out[o], 0, sizeof out[o]);
    out[o].present = n->outputs[o] >= 0;
    out[o].shape.rank = -1;
  }
  if (ok)
    ok = het_infer_node(n, n->n_inputs, in, n->n_outputs, out, scratch) ==
         HET_OK;
  for (int o = 0; ok && o < n->n_outputs; o++)
    if (n->outputs[o] >= 0) {
      info[n->outputs[o]] = out[o];
      info[n->outputs[o]].present = true;
    }
  if (in != in_small)
    free(in);
  if (out != out_small)
    free(out);
}

/* bytes[v] for every value the signature determines (0 = unknown). */
static het_status het_infer_sizes(const het_session *s, const int64_t *key,
                                  size_t *bytes) {
  const het_graph *g = s->graph;
  het_value_info *info = calloc((size_t)g->n_values + 1, sizeof *info);
  if (!info)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  het_arena scratch;
  het_arena_init(&scratch);
  for (int v = 0; v < g->n_values; v++) {
    info[v].shape.rank = -1;
    if (g->values[v].initializer)
      het_value_info_from_tensor(&info[v], g->values[v].initializer);
  }
  for (int i = 0; i < s->n_inputs; i++) {
    const int64_t *k = key + (size_t)i * HET_SIG_PER_INPUT;
    het_value_info *x = &info[s->inputs[i]];
    x->present = true;
    x->dtype = (het_dtype)k[0];
    het_shape_set(&x->shape, (int)k[1], k + 2);
    x->data = NULL;
  }
  for (int i = 0; i < s->partition.n_subgraphs; i++) {
    const het_subgraph *sg = &s->partition.subgraphs[i];
    for (int j = 0; j < sg->n_nodes; j++) {
      const het_node *n = &g->nodes[sg->nodes[j]];
      het_step_kind kind = (het_step_kind)s->partition.kind[sg->nodes[j]];
      if (kind == HET_STEP_COMPUTE) {
        het_infer_step(n, info, &scratch);
        continue;
      }
      /* A boundary step keeps the shape (Layout reorders the data only). */
      het_value_info *y = &info[n->outputs[0]];
      *y = info[n->inputs[0]];
      if (het_step_base(kind) == HET_STEP_CAST) {
        y->dtype = (het_dtype)het_node_attr_int(n, "to", 0);
        y->data = NULL;
      } else if (het_step_base(kind) == HET_STEP_LAYOUT) {
        y->data = NULL;
      }
    }
  }
  for (int v = 0; v < g->n_values; v++)
    bytes[v] = het_info_bytes(&info[v]);
  het_arena_deinit(&scratch);
  free(info);
  return HET_OK;
}

/* ---- pass 2: lifetimes, spaces, in-place candidates ----------------------- */

static int het_node_space(const het_session *s, int node) {
  int p = s->partition.provider[node];
  return p >= 0 && !s->host_memory[p] ? p + 1 : 0;
}

static bool het_has_subgraph(const het_node *n) {
  for (int a = 0; a < n->n_attrs; a++)
    if (n->attrs[a].type == HET_ATTR_GRAPH || n->attrs[a].type == HET_ATTR_GRAPHS)
      return true;
  return false;
}

/* Whether v lives outside the arena (but still in memory).  Host-side
 * Cast/Layout boundary steps allocate their own results. */
static bool het_unplanned(const het_session *s, int v, const int *pos) {
  const het_value *val = &s->graph->values[v];
  if (val->producer < 0 || pos[val->producer] < 0)
    return true;
  het_step_kind kind = (het_step_kind)s->partition.kind[val->producer];
  return (kind != HET_STEP_COMPUTE && kind != HET_STEP_COPY &&
          het_node_space(s, val->producer) == 0) ||
         (val->flags & (HET_VALUE_GRAPH_OUTPUT | HET_VALUE_INITIALIZER |
                        HET_VALUE_GRAPH_INPUT)) ||
         (s->placed && s->placed[v]) ||
         het_has_subgraph(&s->graph->nodes[val->producer]);
}

static void het_inplace_candidates(const het_session *s, int v,
                                   const size_t *bytes,
                                   het_memplan_value *mv) {
  const het_graph *g = s->graph;
  const het_node *n = &g->nodes[g->values[v].producer];
  int o = 0, k = 0;
  while (o < n->n_outputs && n->outputs[o] != v)
    o++;
  for (int i = 0; i < n->n_inputs && k < HET_MEMPLAN_INPLACE; i++) {
    int x = n->inputs[i];
    if (x >= 0 && x != v && bytes[x] == bytes[v] &&
        g->values[x].dtype == g->values[v].dtype &&
        het_memplan_inplace_ok(n, o, i))
      mv->inplace[k++] = x;
  }
}

/* Fills vals[] from the partition's step order and bytes[]. */
static het_status het_plan_values(const het_session *s, const size_t *bytes,
                                  het_memplan_value *vals) {
  const het_graph *g = s->graph;
  int *pos = malloc(((size_t)g->n_nodes + 1) * sizeof *pos);
  if (!pos)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  int steps = 0;
  for (int n = 0; n < g->n_nodes; n++)
    pos[n] = -1;
  for (int i = 0; i < s->partition.n_subgraphs; i++) {
    const het_subgraph *sg = &s->partition.subgraphs[i];
    for (int j = 0; !het_step_is_static(sg->kind) && j < sg->n_nodes; j++)
      pos[sg->nodes[j]] = steps++;
  }
  for (int v = 0; v < g->n_values; v++) {
    het_memplan_value *mv = &vals[v];
    memset(mv, 0, sizeof *mv);
    for (int c = 0; c < HET_MEMPLAN_INPLACE; c++)
      mv->inplace[c] = -1;
    mv->bytes = bytes[v];
    mv->skip = het_unplanned(s, v, pos);
    if (mv->skip)
      continue;
    mv->first = mv->last = pos[g->values[v].producer];
    mv->space = het_node_space(s, g->values[v].producer);
    if (s->uses[v] < 0)
      mv->last = steps;
  }
  for (int n = 0; n < g->n_nodes; n++)
    for (int i = 0; pos[n] >= 0 && i < g->nodes[n].n_inputs; i++) {
      int x = g->nodes[n].inputs[i];
      if (x >= 0 && !vals[x].skip && pos[n] > vals[x].last)
        vals[x].last = pos[n];
    }
  for (int v = 0; v < g->n_values; v++)
    if (!vals[v].skip && vals[v].bytes)
      het_inplace_candidates(s, v, bytes, &vals[v]);
  free(pos);
  return HET_OK;
}

/* ---- pass 4: bytes outside the arena, capacity ---------------------------- */

static void het_plan_resident(const het_session *s, const size_t *bytes,
                              const het_memplan_value *vals, het_memplan *p) {
  const het_graph *g = s->graph;
  for (int v = 0; v < g->n_values; v++) {
    const het_value *val = &g->values[v];
    if (p->offset[v] != HET_MEMPLAN_NONE)
      continue;
    if (s->placed && s->placed[v]) {
      const het_tensor *t = s->placed[v];
      int sp = t->device && t->device->vt->alloc ? t->device->index + 1 : 0;
      p->resident[sp] += t->nbytes;
      p->weights[sp] += t->nbytes;
    } else if (val->initializer) {
      p->resident[0] += val->initializer->nbytes;
      p->weights[0] += val->initializer->nbytes;
    } else if (val->producer < 0 || !vals[v].skip) {
      p->resident[0] += bytes[v]; /* inputs; unknown sizes count 0 */
    } else {
      int sp = het_node_space(s, val->producer);
      p->resident[sp] += bytes[v];
      if (!(val->flags & HET_VALUE_GRAPH_OUTPUT))
        p->loose[sp] += bytes[v]; /* an intermediate outside the arena */
    }
  }
}

static het_status het_plan_check_capacity(const het_session *s,
                                          const het_memplan *p) {
  for (int d = 0; d < s->n_providers; d++) {
    size_t cap = s->info[d].memory_capacity;
    size_t need = p->peak[d + 1] + p->resident[d + 1];
    if (s->host_memory[d] || !cap || need <= cap)
      continue;
    return het_error(HET_ERR_CAPACITY,
                     "memory plan: %s device needs %zu bytes (%zu planned "
                     "for intermediates + %zu resident) but its capacity is "
                     "%zu bytes",
                     s->providers[d].vt->name, need, p->peak[d + 1],
                     p->resident[d + 1], cap);
  }
  return HET_OK;
}

/* Passes 1-4 for one signature into *out (caller deinits). */
static het_status het_plan_build(const het_session *s, const int64_t *key,
                                 het_memplan *out) {
  const het_graph *g = s->graph;
  size_t *bytes = calloc((size_t)g->n_values + 1, sizeof *bytes);
  het_memplan_value *vals = calloc((size_t)g->n_values + 1, sizeof *vals);
  het_status st = bytes && vals ? HET_OK
                                : het_error(HET_ERR_OUT_OF_MEMORY,
                                            "memory plan: out of memory");
  if (st == HET_OK)
    st = het_infer_sizes(s, key, bytes);
  if (st == HET_OK)
    st = het_plan_values(s, bytes, vals);
  if (st == HET_OK)
    st = het_memplan_compute(vals, g->n_values, s->n_providers + 1, out);
  if (st == HET_OK) {
    het_plan_resident(s, bytes, vals, out);
    atomic_fetch_add(&het_plans_computed, 1);
  }
  free(bytes);
  free(vals);
  return st;
}

/* ---- the cache ------------------------------------------------------------ */

static void het_entry_destroy(het_plan_entry *e) {
  for (int i = 0; i < e->n_idle; i++)
    free(e->idle[i]);
  het_memplan_deinit(&e->plan);
  free(e->key);
  free(e);
}

/* Drops one reference (lock held); the last one frees the entry. */
static void het_entry_unref(het_plan_entry *e) {
  if (--e->refs == 0)
    het_entry_destroy(e);
}

/* The cached entry for (fp, key), referenced for the caller; lock held. */
static het_plan_entry *het_cache_find(uint64_t fp, const int64_t *key,
                                      int n_key) {
  for (int i = 0; i < HET_PLAN_CACHE; i++) {
    het_plan_entry *e = het_plan_cache[i];
    if (e && e->fingerprint == fp && e->n_key == n_key &&
        memcmp(e->key, key, (size_t)n_key * sizeof *key) == 0) {
      e->stamp = ++het_plan_clock;
      e->refs++;
      return e;
    }
  }
  return NULL;
}

/* Inserts e (one reference for the cache), evicting the least recently
 * used entry; lock held.  An entry with the same key wins the race. */
static het_plan_entry *het_cache_insert(het_plan_entry *e) {
  het_plan_entry *old = het_cache_find(e->fingerprint, e->key, e->n_key);
  if (old) {
    het_entry_destroy(e);
    return old;
  }
  int victim = 0;
  for (int i = 0; i < HET_PLAN_CACHE; i++) {
    if (!het_plan_cache[i]) {
      victim = i;
      break;
    }
    if (het_plan_cache[i]->stamp < het_plan_cache[victim]->stamp)
      victim = i;
  }
  if (het_plan_cache[victim])
    het_entry_unref(het_plan_cache[victim]);
  e->refs = 2; /* the cache's and the caller's */
  e->stamp = ++het_plan_clock;
  het_plan_cache[victim] = e;
  return e;
}

/* The entry for key, built when missing.  Caller holds one reference. */
static het_status het_plan_get(const het_session *s, const int64_t *key,
                               het_plan_entry **out) {
  int n_key = s->n_inputs * HET_SIG_PER_INPUT;
  uint64_t fp = het_session_fp(s);
  pthread_mutex_lock(&het_plan_lock);
  het_plan_entry *e = het_cache_find(fp, key, n_key);
  pthread_mutex_unlock(&het_plan_lock);
  if (e) {
    *out = e;
    return HET_OK;
  }
  e = calloc(1, sizeof *e);
  if (e)
    e->key = malloc(((size_t)n_key + 1) * sizeof *e->key);
  if (!e || !e->key) {
    free(e);
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  }
  e->fingerprint = fp;
  e->n_key = n_key;
  memcpy(e->key, key, (size_t)n_key * sizeof *key);
  het_status st = het_plan_build(s, key, &e->plan);
  if (st != HET_OK) {
    het_entry_destroy(e);
    return st;
  }
  pthread_mutex_lock(&het_plan_lock);
  *out = het_cache_insert(e);
  pthread_mutex_unlock(&het_plan_lock);
  return HET_OK;
}

static void het_plan_put(het_plan_entry *e) {
  pthread_mutex_lock(&het_plan_lock);
  het_entry_unref(e);
  pthread_mutex_unlock(&het_plan_lock);
}

/* ---- runs ----------------------------------------------------------------- */

het_status het_session_memory_acquire(het_session *s, het_run_ctx *ctx,
                                      het_plan_entry **entry) {
  const char *off = getenv("HETRT_MEMPLAN"); /* "0": no plan (debugging) */
  *entry = NULL;
  if (off && strcmp(off, "0") == 0)
    return HET_OK;
  int64_t small[4 * HET_SIG_PER_INPUT];
  size_t n_key = (size_t)s->n_inputs * HET_SIG_PER_INPUT;
  int64_t *key = n_key <= 4 * HET_SIG_PER_INPUT ? small
                                                 : malloc(n_key * sizeof *key);
  if (!key)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  het_plan_entry *e = NULL;
  het_status st = het_signature(s, ctx->values, key);
  if (st == HET_OK)
    st = het_plan_get(s, key, &e);
  if (key != small)
    free(key);
  if (st == HET_OK)
    st = het_plan_check_capacity(s, &e->plan);
  void *block = NULL;
  size_t size = st == HET_OK ? e->plan.peak[0] : 0;
  if (size) {
    pthread_mutex_lock(&het_plan_lock);
    if (e->n_idle)
      block = e->idle[--e->n_idle];
    pthread_mutex_unlock(&het_plan_lock);
    if (!block)
      block = aligned_alloc(HET_MEMPLAN_ALIGN,
                            (size + HET_MEMPLAN_ALIGN - 1) &
                                ~(size_t)(HET_MEMPLAN_ALIGN - 1));
    if (!block)
      st = het_error(HET_ERR_OUT_OF_MEMORY,
                     "memory plan: cannot allocate the %zu-byte host arena",
                     size);
  }
  if (st != HET_OK) {
    if (e)
      het_plan_put(e);
    return st;
  }
  ctx->plan = &e->plan;
  ctx->arena = block;
  *entry = e;
  return HET_OK;
}

void het_session_memory_release(het_plan_entry *e, het_run_ctx *ctx) {
  if (!e)
    return;
  void *block = ctx->arena;
  ctx->plan = NULL;
  ctx->arena = NULL;
  pthread_mutex_lock(&het_plan_lock);
  if (block && e->n_idle < HET_PLAN_IDLE) {
    e->idle[e->n_idle++] = block;
    block = NULL;
  }
  het_entry_unref(e);
  pthread_mutex_unlock(&het_plan_lock);
  free(block);
}

/* ---- reports -------------------------------------------------------------- */

/* The most recently used cached entry of s, referenced; lock held. */
static het_plan_entry *het_cache_latest(uint64_t fp) {
  het_plan_entry *best = NULL;
  for (int i = 0; i < HET_PLAN_CACHE; i++) {
    het_plan_entry *e = het_plan_cache[i];
    if (e && e->fingerprint == fp && (!best || e->stamp > best->stamp))
      best = e;
  }
  if (best)
    best->refs++;
  return best;
}

het_status het_session_memory_summary(const het_session *s, bool latest,
                                      bool check_capacity,
                                      het_memory_summary *summary) {
  size_t n_key = (size_t)s->n_inputs * HET_SIG_PER_INPUT;
  int64_t *key = malloc((n_key + 1) * sizeof *key);
  if (!key)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  het_plan_entry *e = NULL;
  het_status st = het_signature(s, NULL, key);
  if (st == HET_OK) {
    st = het_plan_get(s, key, &e);
  } else if (latest) {
    pthread_mutex_lock(&het_plan_lock);
    e = het_cache_latest(het_session_fp(s));
    pthread_mutex_unlock(&het_plan_lock);
    st = e ? HET_OK
           : het_error(HET_ERR_SHAPE,
                       "memory plan: the model's input shapes are symbolic "
                       "and the session has not run yet");
  }
  free(key);
  if (st == HET_OK && check_capacity)
    st = het_plan_check_capacity(s, &e->plan);
  for (int sp = 0; st == HET_OK && sp <= s->n_providers; sp++) {
    het_memory_summary *m = &summary[sp];
    memset(m, 0, sizeof *m);
    m->peak = e->plan.peak[sp];
    m->total = e->plan.total[sp];
    m->resident = e->plan.resident[sp];
    m->intermediates = e->plan.total[sp] + e->plan.loose[sp];
    m->weights = e->plan.weights[sp];
    for (int v = 0; v < e->plan.n_values; v++)
      if (e->plan.offset[v] != HET_MEMPLAN_NONE && e->plan.space[v] == sp) {
        m->n_planned++;
        m->n_inplace += e->plan.shares[v] >= 0;
      }
  }
  if (e)
    het_plan_put(e);
  return st;
}

het_status het_session_get_planned_peak(const het_session *s,
                                        const char *provider, size_t *bytes) {
  if (!s || !provider || !bytes)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_session_get_planned_peak: NULL argument");
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
  het_memory_summary *m = calloc((size_t)s->n_providers + 1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  het_status st = het_session_memory_summary(s, true, true, m);
  if (st == HET_OK)
    *bytes = m[space].peak + m[space].resident;
  free(m);
  return st;
}

void het_session_memory_forget(const het_session *s) {
  if (!s || !s->graph || !s->uses || !s->partition.subgraphs)
    return;
  uint64_t fp = het_session_fp(s);
  pthread_mutex_lock(&het_plan_lock);
  for (int i = 0; i < HET_PLAN_CACHE; i++)
    if (het_plan_cache[i] && het_plan_cache[i]->fingerprint == fp) {
      het_entry_unref(het_plan_cache[i]);
      het_plan_cache[i] = NULL;
    }
  pthread_mutex_unlock(&het_plan_lock);
}

het_status het_session_memory_check(het_session *s) {
  s->plan_fp = het_session_fingerprint(s);
  for (int i = 0; i < s->n_inputs; i++) {
    const het_value *v = &s->graph->values[s->inputs[i]];
    if (v->dtype == HET_DTYPE_UNDEFINED || !het_shape_is_concrete(&v->shape))
      return HET_OK; /* planned per signature at run time */
  }
  het_memory_summary *m = calloc((size_t)s->n_providers + 1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
  het_status st = het_session_memory_summary(s, false, true, m);
  free(m);
  return st;
}
