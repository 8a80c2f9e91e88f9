/* dnnl_common.c — the oneDNN helpers declared in dnnl_common.h. */
#include "kernels/dnnl/dnnl_common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/hostmem.h"
#include "kernels/presets.h"

static dnnl_engine_t g_engine;
static pthread_once_t g_engine_once = PTHREAD_ONCE_INIT;

static void het_dnnl_engine_init(void) {
  if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success)
    g_engine = NULL;
}

dnnl_engine_t het_dnnl_engine(void) {
  pthread_once(&g_engine_once, het_dnnl_engine_init);
  return g_engine;
}

/* A per-thread buffer grown to the largest size asked of it. */
typedef struct het_dnnl_buf {
  void *p;
  size_t cap;
} het_dnnl_buf;

/* The oneDNN memory objects (src, weights, dst, bias, scratchpad; NULL
 * where the primitive has none) of primitive id on one thread. */
#define HET_DNNL_MEM_SLOTS 256
typedef struct het_dnnl_mem_slot {
  uint64_t id; /* 0: empty */
  dnnl_memory_t m[5];
} het_dnnl_mem_slot;

/* Per thread, made on first use and freed at thread exit: a stream
 * (creating one per primitive call cost a few microseconds each), the
 * scratchpad and the staging buffers (a malloc and free per call showed
 * up in profiles), and memory objects of recent primitives, direct-mapped
 * by primitive id: a call sets their data handles (~5 ns each) instead of
 * creating and destroying five (~0.17 µs each; MobileNetV2 runs 53
 * Convs). */
typedef struct het_dnnl_tls {
  dnnl_stream_t stream;
  het_dnnl_buf scratch;
  het_dnnl_buf stage[HET_DNNL_STAGE_SLOTS];
  het_dnnl_mem_slot mem[HET_DNNL_MEM_SLOTS];
} het_dnnl_tls;

static pthread_key_t g_tls_key;
static pthread_once_t g_tls_once = PTHREAD_ONCE_INIT;
static bool g_tls_key_ok;

static void het_dnnl_mem_slot_clear(het_dnnl_mem_slot *s) {
  for (int i = 0; i < 5; i++)
    dnnl_memory_destroy(s->m[i]);
  memset(s, 0, sizeof *s);
}

static void het_dnnl_tls_free(void *p) {
  het_dnnl_tls *t = p;
  for (int i = 0; i < HET_DNNL_MEM_SLOTS; i++)
    het_dnnl_mem_slot_clear(&t->mem[i]);
  dnnl_stream_destroy(t->stream);
  free(t->scratch.p);
  for (int i = 0; i < HET_DNNL_STAGE_SLOTS; i++)
    free(t->stage[i].p);
  free(t);
}

static void het_dnnl_tls_key_init(void) {
  g_tls_key_ok = pthread_key_create(&g_tls_key, het_dnnl_tls_free) == 0;
}

static het_dnnl_tls *het_dnnl_tls_get(void) {
  pthread_once(&g_tls_once, het_dnnl_tls_key_init);
  if (!g_tls_key_ok || !het_dnnl_engine())
    return NULL;
  het_dnnl_tls *t = pthread_getspecific(g_tls_key);
  if (t)
    return t;
  t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  if (dnnl_stream_create(&t->stream, g_engine, dnnl_stream_default_flags) !=
          dnnl_success ||
      pthread_setspecific(g_tls_key, t) != 0) {
    het_dnnl_tls_free(t);
    return NULL;
  }
  return t;
}

/* b grown to at least n bytes; NULL when out of memory. */
static void *het_dnnl_buf_get(het_dnnl_buf *b, size_t n) {
  if (n <= b->cap)
    return b->p;
  free(b->p);
  b->cap = 0;
  b->p = het_host_alloc(n);
  if (b->p)
    b->cap = n;
  return b->p;
}

void *het_dnnl_stage(int slot, size_t n) {
  het_dnnl_tls *t = het_dnnl_tls_get();
  return t && slot >= 0 && slot < HET_DNNL_STAGE_SLOTS
             ? het_dnnl_buf_get(&t->stage[slot], n)
             : NULL;
}

static void het_dnnl_query_md(dnnl_primitive_desc_t pd, dnnl_query_t what,
                              int i, dnnl_memory_desc_t *out) {
  const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, what, i);
  if (md)
    *out = *md;
  else
    memset(out, 0, sizeof *out);
}

static _Thread_local bool t_oom;

bool het_dnnl_oom_take(void) {
  bool was = t_oom;
  t_oom = false;
  return was;
}

void het_dnnl_oom_note(void) { t_oom = true; }

void *het_dnnl_malloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    t_oom = true;
  return p;
}

bool het_dnnl_prim_init(het_dnnl_prim *p, dnnl_primitive_desc_t pd) {
  static atomic_uint_fast64_t next_id;
  p->id = (uint64_t)atomic_fetch_add(&next_id, 1) + 1;
  het_dnnl_query_md(pd, dnnl_query_src_md, 0, &p->src_md);
  het_dnnl_query_md(pd, dnnl_query_dst_md, 0, &p->dst_md);
  het_dnnl_query_md(pd, dnnl_query_weights_md, 0, &p->w_md);
  het_dnnl_query_md(pd, dnnl_query_weights_md, 1, &p->b_md);
  het_dnnl_query_md(pd, dnnl_query_scratchpad_md, 0, &p->scratch_md);
  dnnl_status_t st = dnnl_primitive_create(&p->prim, pd);
  dnnl_primitive_desc_destroy(pd);
  if (st == dnnl_out_of_memory)
    t_oom = true;
  return st == dnnl_success;
}

dnnl_primitive_attr_t het_dnnl_scratch_attr(void) {
  dnnl_primitive_attr_t attr = NULL;
  if (dnnl_primitive_attr_create(&attr) != dnnl_success)
    return NULL;
  if (dnnl_primitive_attr_set_scratchpad_mode(
          attr, dnnl_scratchpad_mode_user) != dnnl_success) {
    dnnl_primitive_attr_destroy(attr);
    return NULL;
  }
  return attr;
}

dnnl_primitive_attr_t het_dnnl_attr_finish(dnnl_primitive_attr_t attr,
                                           dnnl_post_ops_t po, bool ok) {
  dnnl_post_ops_destroy(po);
  if (ok)
    return attr;
  dnnl_primitive_attr_destroy(attr);
  return NULL;
}

void *het_dnnl_alloc(const dnnl_memory_desc_t *md) {
  void *p = het_host_alloc(dnnl_memory_desc_get_size(md));
  if (!p)
    t_oom = true;
  return p;
}

/* p's memory objects on this thread (see het_dnnl_tls), made on its
 * first call here; NULL when oneDNN fails. */
static dnnl_memory_t *het_dnnl_prim_mems(het_dnnl_tls *t,
                                         const het_dnnl_prim *p) {
  het_dnnl_mem_slot *s = &t->mem[p->id % HET_DNNL_MEM_SLOTS];
  if (s->id == p->id)
    return s->m;
  het_dnnl_mem_slot_clear(s);
  const dnnl_memory_desc_t *md[5] = {&p->src_md, &p->w_md, &p->dst_md,
                                     &p->b_md, &p->scratch_md};
  for (int i = 0; i < 5; i++)
    if ((i < 3 || dnnl_memory_desc_get_size(md[i]) > 0) &&
        dnnl_memory_create(&s->m[i], md[i], g_engine, DNNL_MEMORY_NONE) !=
            dnnl_success) {
      het_dnnl_mem_slot_clear(s);
      return NULL;
    }
  s->id = p->id;
  return s->m;
}

bool het_dnnl_prim_execute(const het_dnnl_prim *p, void *src, void *bias,
                           void *dst) {
  het_dnnl_tls *t = het_dnnl_tls_get();
  dnnl_memory_t *m = t ? het_dnnl_prim_mems(t, p) : NULL;
  size_t scratch_size = dnnl_memory_desc_get_size(&p->scratch_md);
  void *scratch =
      scratch_size && t ? het_dnnl_buf_get(&t->scratch, scratch_size) : NULL;
  if (!m || (scratch_size && !scratch) || (bias && !m[3]))
    return false;
  void *data[5] = {src, p->w, dst, bias, scratch};
  dnnl_exec_arg_t args[5];
  static const int kind[5] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST,
                              DNNL_ARG_BIAS, DNNL_ARG_SCRATCHPAD};
  int n = 0;
  for (int i = 0; i < 5; i++) {
    if (!m[i] || (i >= 3 && !data[i]))
      continue;
    if (dnnl_memory_set_data_handle(m[i], data[i]) != dnnl_success)
      return false;
    args[n++] = (dnnl_exec_arg_t){kind[i], m[i]};
  }
  return dnnl_primitive_execute(p->prim, t->stream, n, args) ==
             dnnl_success &&
         dnnl_stream_wait(t->stream) == dnnl_success;
}

bool het_dnnl_reorder_run(dnnl_primitive_t r, const dnnl_memory_desc_t *fmd,
                          const void *from, const dnnl_memory_desc_t *tmd,
                          void *to) {
  dnnl_engine_t eng = het_dnnl_engine();
  het_dnnl_tls *t = het_dnnl_tls_get();
  const_dnnl_primitive_desc_t pd = NULL;
  bool ok = t && dnnl_primitive_get_primitive_desc(r, &pd) == dnnl_success;
  /* zero-size unless r was made in user scratchpad mode */
  const dnnl_memory_desc_t *smd =
      ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)
         : NULL;
  size_t ns = smd ? dnnl_memory_desc_get_size(smd) : 0;
  void *scratch = ns ? het_dnnl_buf_get(&t->scratch, ns) : NULL;
  dnnl_memory_t m[3] = {NULL, NULL, NULL};
  ok = ok && (!ns || scratch) &&
       dnnl_memory_create(&m[0], fmd, eng, (void *)from) == dnnl_success &&
       dnnl_memory_create(&m[1], tmd, eng, to) == dnnl_success &&
       (!ns || dnnl_memory_create(&m[2], smd, eng, scratch) == dnnl_success);
  dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, m[0]},
                             {DNNL_ARG_TO, m[1]},
                             {DNNL_ARG_SCRATCHPAD, m[2]}};
  ok = ok && dnnl_primitive_execute(r, t->stream, ns ? 3 : 2, args) ==
                 dnnl_success &&
       dnnl_stream_wait(t->stream) == dnnl_success;
  for (int i = 0; i < 3; i++)
    dnnl_memory_destroy(m[i]);
  return ok;
}

bool het_dnnl_reorder_create(const dnnl_memory_desc_t *from,
                             const dnnl_memory_desc_t *to,
                             dnnl_primitive_t *r) {
  dnnl_primitive_desc_t rpd = NULL;
  *r = NULL;
  if (dnnl_memory_desc_equal(from, to))
    return true;
  dnnl_engine_t eng = het_dnnl_engine();
  bool ok = dnnl_reorder_primitive_desc_create(&rpd, from, eng, to, eng,
                                               NULL) == dnnl_success &&
            dnnl_primitive_create(r, rpd) == dnnl_success;
  dnnl_primitive_desc_destroy(rpd);
  return ok;
}

het_status het_dnnl_stage_src(dnnl_primitive_t r,
                              const dnnl_memory_desc_t *user, void *x,
                              const dnnl_memory_desc_t *to, void **out) {
  *out = x;
  if (!r)
    return HET_OK;
  *out = het_dnnl_stage(0, dnnl_memory_desc_get_size(to));
  if (!*out)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "oneDNN: out of memory staging an input");
  if (!het_dnnl_reorder_run(r, user, x, to, *out))
    return het_error(HET_ERR_KERNEL, "oneDNN: reordering an input failed");
  return HET_OK;
}

/* A one-off reorder (weights into a primitive's layout), made in user
 * scratchpad mode so that het_dnnl_reorder_run gives it the thread's
 * reused scratchpad: a Winograd weight transform's is megabytes, which
 * oneDNN would otherwise allocate afresh on every call. */
bool het_dnnl_reorder(const dnnl_memory_desc_t *fmd, const void *from,
                      const dnnl_memory_desc_t *tmd, void *to) {
  dnnl_engine_t eng = het_dnnl_engine();
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t r = NULL;
  bool ok = attr &&
            dnnl_reorder_primitive_desc_create(&rpd, fmd, eng, tmd, eng,
                                               attr) == dnnl_success &&
            dnnl_primitive_create(&r, rpd) == dnnl_success &&
            het_dnnl_reorder_run(r, fmd, from, tmd, to);
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_primitive_attr_destroy(attr);
  return ok;
}

/* ---- a plan's prepared weights (presets.h) ---- */

/* A saved layout (unaligned bytes of a descriptor) is the descriptor
 * want (het_kernel_presets_match). */
static bool het_dnnl_md_same(const void *saved, const void *want) {
  dnnl_memory_desc_t md;
  memcpy(&md, saved, sizeof md);
  return dnnl_memory_desc_equal(&md, want);
}

bool het_dnnl_weights_prepare_preset(het_dnnl_prim *p) {
  const void *preset = het_kernel_presets_match(
      &p->w_md, sizeof p->w_md, dnnl_memory_desc_get_size(&p->w_md),
      het_dnnl_md_same);
  if (!preset)
    return false;
  p->w = (void *)(uintptr_t)preset; /* already in this layout: in place */
  p->w_borrowed = true;
  het_kernel_presets_take();
  return true;
}

bool het_dnnl_weights_prepare(het_dnnl_prim *p, const dnnl_memory_desc_t *user,
                              const void *w) {
  if (het_dnnl_weights_prepare_preset(p))
    return true;
  p->w = het_dnnl_alloc(&p->w_md);
  return p->w && het_dnnl_reorder(user, w, &p->w_md, p->w);
}

void het_dnnl_weights_free(het_dnnl_prim *p) {
  if (!p->w_borrowed)
    free(p->w);
  p->w = NULL;
  p->w_borrowed = false;
}

void het_dnnl_prim_weights(const het_dnnl_prim *p, het_kernel_weight_fn fn,
                           void *ctx) {
  if (p->prim && p->w)
    fn(ctx, &p->w_md, sizeof p->w_md, p->w, dnnl_memory_desc_get_size(&p->w_md));
}
