/* plan_cache.c — a program's plans, one per signature, in an LRU of
 * HET_PLAN_CACHE entries with reference counts (a run holds its plan until
 * it ends; an evicted plan dies with its last run).  Plans are built
 * outside the lock; when two threads build the same signature at once, the
 * first inserted wins and the other is dropped.  Also the session's pool
 * of stream sets.
 */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "executor/exec.h"
#include "executor/plan_internal.h"

#define HET_PLAN_CACHE 16

typedef struct het_plan_cache {
  pthread_mutex_t lock;
  het_plan *entries[HET_PLAN_CACHE];
  uint64_t clock;
} het_plan_cache;

het_status het_program_init(het_program *p) {
  het_plan_cache *c = calloc(1, sizeof *c);
  if (!c)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan cache: out of memory");
  pthread_mutex_init(&c->lock, NULL);
  p->cache = c;
  return HET_OK;
}

/* Drops a reference (lock of the owning cache held, or the plan already
 * out of every cache). */
static void het_plan_unref_locked(het_plan *plan) {
  if (--plan->refs == 0)
    het_plan_destroy(plan);
}

void het_program_deinit(het_program *p) {
  het_plan_cache *c = p->cache;
  if (!c)
    return;
  pthread_mutex_lock(&c->lock);
  for (int i = 0; i < HET_PLAN_CACHE; i++)
    if (c->entries[i]) {
      het_plan_unref_locked(c->entries[i]);
      c->entries[i] = NULL;
    }
  pthread_mutex_unlock(&c->lock);
  pthread_mutex_destroy(&c->lock);
  free(c);
  p->cache = NULL;
}

static het_plan *het_cache_find(het_plan_cache *c, const int64_t *key,
                                int n_key) {
  for (int i = 0; i < HET_PLAN_CACHE; i++) {
    het_plan *e = c->entries[i];
    if (e && e->n_key == n_key &&
        memcmp(e->key, key, (size_t)n_key * sizeof *key) == 0) {
      e->stamp = ++c->clock;
      e->refs++;
      return e;
    }
  }
  return NULL;
}

het_status het_plan_get(het_program *p, const int64_t *key, het_plan **out) {
  het_plan_cache *c = p->cache;
  int n_key = p->n_params * HET_PLAN_KEY_PER_PARAM;
  pthread_mutex_lock(&c->lock);
  het_plan *e = het_cache_find(c, key, n_key);
  pthread_mutex_unlock(&c->lock);
  if (e) {
    *out = e;
    return HET_OK;
  }
  het_plan *built;
  HET_TRY(het_plan_build(p, key, &built));
  pthread_mutex_lock(&c->lock);
  e = het_cache_find(c, key, n_key);
  if (e) {
    pthread_mutex_unlock(&c->lock);
    het_plan_destroy(built);
    *out = e;
    return HET_OK;
  }
  int victim = 0;
  for (int i = 0; i < HET_PLAN_CACHE; i++) {
    if (!c->entries[i]) {
      victim = i;
      break;
    }
    if (c->entries[i]->stamp < c->entries[victim]->stamp)
      victim = i;
  }
  if (c->entries[victim])
    het_plan_unref_locked(c->entries[victim]);
  built->refs = 2; /* the cache's and the caller's */
  built->stamp = ++c->clock;
  c->entries[victim] = built;
  pthread_mutex_unlock(&c->lock);
  *out = built;
  return HET_OK;
}

void het_plan_put(het_plan *plan) {
  if (!plan)
    return;
  het_plan_cache *c = plan->prog->cache;
  pthread_mutex_lock(&c->lock);
  het_plan_unref_locked(plan);
  pthread_mutex_unlock(&c->lock);
}

het_plan *het_plan_latest(het_program *p) {
  het_plan_cache *c = p->cache;
  het_plan *best = NULL;
  pthread_mutex_lock(&c->lock);
  for (int i = 0; i < HET_PLAN_CACHE; i++)
    if (c->entries[i] && (!best || c->entries[i]->stamp > best->stamp))
      best = c->entries[i];
  if (best)
    best->refs++;
  pthread_mutex_unlock(&c->lock);
  return best;
}

/* ---- stream sets ----------------------------------------------------------- */

typedef struct het_stream_pool {
  pthread_mutex_t lock;
  const het_stream_layout *layout;
  const het_ep *eps;
  het_stream_set *idle;
} het_stream_pool;

het_status het_stream_pool_create(const het_stream_layout *layout,
                                  const het_ep *eps, het_stream_pool **out) {
  het_stream_pool *pool = calloc(1, sizeof *pool);
  if (!pool)
    return het_error(HET_ERR_OUT_OF_MEMORY, "streams: out of memory");
  pthread_mutex_init(&pool->lock, NULL);
  pool->layout = layout;
  pool->eps = eps;
  *out = pool;
  return HET_OK;
}

static void het_stream_set_destroy(het_stream_set *set) {
  for (int s = 0; s < set->n_slots; s++)
    het_stream_deinit(&set->slots[s]);
  free(set);
}

void het_stream_pool_destroy(het_stream_pool *pool) {
  if (!pool)
    return;
  while (pool->idle) {
    het_stream_set *set = pool->idle;
    pool->idle = set->next;
    het_stream_set_destroy(set);
  }
  pthread_mutex_destroy(&pool->lock);
  free(pool);
}

het_status het_stream_set_acquire(het_stream_pool *pool, het_stream_set **out) {
  pthread_mutex_lock(&pool->lock);
  het_stream_set *set = pool->idle;
  if (set)
    pool->idle = set->next;
  pthread_mutex_unlock(&pool->lock);
  if (set) {
    *out = set;
    return HET_OK;
  }
  const het_stream_layout *l = pool->layout;
  set = calloc(1, sizeof *set);
  if (!set)
    return het_error(HET_ERR_OUT_OF_MEMORY, "streams: out of memory");
  set->pool = pool;
  for (int s = 0; s < l->n_slots; s++) {
    const het_ep *ep = l->ep[s] >= 0 ? &pool->eps[l->ep[s]] : NULL;
    het_status st = het_stream_init(&set->slots[s], ep, l->flags[s],
                                    ep ? ep->vt->name : "host");
    if (st != HET_OK) {
      het_stream_set_destroy(set);
      return het_error_wrap(st, "creating a stream of %s",
                            ep ? ep->vt->name : "the host");
    }
    set->n_slots = s + 1;
  }
  *out = set;
  return HET_OK;
}

void het_stream_set_release(het_stream_set *set) {
  het_stream_pool *pool = set->pool;
  pthread_mutex_lock(&pool->lock);
  set->next = pool->idle;
  pool->idle = set;
  pthread_mutex_unlock(&pool->lock);
}

void het_stream_layout_init(het_stream_layout *l, const het_ep *eps, int n_eps,
                            bool streams) {
  memset(l, 0, sizeof *l);
  l->streams = streams;
  for (int e = 0; e < n_eps; e++) {
    bool host = het_device_is_host(eps[e].device);
    int roles = streams && !host ? 3 : 1;
    for (int r = 0; r < roles; r++) {
      l->ep[l->n_slots] = e;
      l->role[l->n_slots] = (het_slot_role)r;
      l->flags[l->n_slots] = host && !streams ? HET_STREAM_INLINE : 0;
      l->n_slots++;
    }
  }
  l->ep[l->n_slots] = -1;
  l->role[l->n_slots] = HET_SLOT_HOST;
  l->flags[l->n_slots] = streams ? 0 : HET_STREAM_INLINE;
  l->n_slots++;
}
