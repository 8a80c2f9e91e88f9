/* dnnl_common.c — the oneDNN helpers declared in dnnl_common.h. */
#include "providers/cpu/dnnl/dnnl_common.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

/* Per thread, made on first use and freed at thread exit: a stream
 * (creating one per primitive call cost a few microseconds each), the
 * scratchpad and the staging buffers (a malloc and free per call showed
 * up in profiles). */
typedef struct het_dnnl_tls {
  dnnl_stream_t stream;
  het_dnnl_buf scratch;
  het_dnnl_buf stage[HET_DNNL_STAGE_SLOTS];
} het_dnnl_tls;

static pthread_key_t g_tls_key;
static pthread_once_t g_tls_once = PTHREAD_ONCE_INIT;
static bool g_tls_key_ok;

static void het_dnnl_tls_free(void *p) {
  het_dnnl_tls *t = p;
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
  b->p = aligned_alloc(64, (n + 63) / 64 * 64);
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

bool het_dnnl_prim_init(het_dnnl_prim *p, dnnl_primitive_desc_t pd) {
  het_dnnl_query_md(pd, dnnl_query_src_md, 0, &p->src_md);
  het_dnnl_query_md(pd, dnnl_query_dst_md, 0, &p->dst_md);
  het_dnnl_query_md(pd, dnnl_query_weights_md, 0, &p->w_md);
  het_dnnl_query_md(pd, dnnl_query_weights_md, 1, &p->b_md);
  het_dnnl_query_md(pd, dnnl_query_scratchpad_md, 0, &p->scratch_md);
  bool ok = dnnl_primitive_create(&p->prim, pd) == dnnl_success;
  dnnl_primitive_desc_destroy(pd);
  return ok;
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
  return aligned_alloc(64, (dnnl_memory_desc_get_size(md) + 63) / 64 * 64);
}

bool het_dnnl_prim_execute(const het_dnnl_prim *p, void *src, void *bias,
                           void *dst) {
  dnnl_engine_t eng = het_dnnl_engine();
  dnnl_memory_t m[5] = {NULL};
  het_dnnl_tls *t = het_dnnl_tls_get();
  dnnl_stream_t s = t ? t->stream : NULL;
  size_t scratch_size = dnnl_memory_desc_get_size(&p->scratch_md);
  void *scratch =
      scratch_size && t ? het_dnnl_buf_get(&t->scratch, scratch_size) : NULL;
  int n = 3;
  bool ok = (scratch || !scratch_size) &&
            dnnl_memory_create(&m[0], &p->src_md, eng, src) == dnnl_success &&
            dnnl_memory_create(&m[1], &p->w_md, eng, p->w) == dnnl_success &&
            dnnl_memory_create(&m[2], &p->dst_md, eng, dst) == dnnl_success &&
            s;
  dnnl_exec_arg_t args[5] = {
      {DNNL_ARG_SRC, m[0]}, {DNNL_ARG_WEIGHTS, m[1]}, {DNNL_ARG_DST, m[2]}};
  if (ok && bias) {
    ok = dnnl_memory_create(&m[3], &p->b_md, eng, bias) == dnnl_success;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, m[3]};
  }
  if (ok && scratch_size) {
    ok =
        dnnl_memory_create(&m[4], &p->scratch_md, eng, scratch) == dnnl_success;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, m[4]};
  }
  ok = ok && dnnl_primitive_execute(p->prim, s, n, args) == dnnl_success &&
       dnnl_stream_wait(s) == dnnl_success;
  for (int i = 0; i < 5; i++)
    dnnl_memory_destroy(m[i]);
  return ok;
}

bool het_dnnl_reorder_run(dnnl_primitive_t r, const dnnl_memory_desc_t *fmd,
                          const void *from, const dnnl_memory_desc_t *tmd,
                          void *to) {
  dnnl_engine_t eng = het_dnnl_engine();
  dnnl_memory_t a = NULL, b = NULL;
  het_dnnl_tls *t = het_dnnl_tls_get();
  dnnl_stream_t s = t ? t->stream : NULL;
  bool ok = s &&
            dnnl_memory_create(&a, fmd, eng, (void *)from) == dnnl_success &&
            dnnl_memory_create(&b, tmd, eng, to) == dnnl_success;
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, a}, {DNNL_ARG_TO, b}};
  ok = ok && dnnl_primitive_execute(r, s, 2, args) == dnnl_success &&
       dnnl_stream_wait(s) == dnnl_success;
  dnnl_memory_destroy(a);
  dnnl_memory_destroy(b);
  return ok;
}

bool het_dnnl_reorder(const dnnl_memory_desc_t *fmd, const void *from,
                      const dnnl_memory_desc_t *tmd, void *to) {
  dnnl_engine_t eng = het_dnnl_engine();
  dnnl_primitive_desc_t rpd = NULL;
  dnnl_primitive_t r = NULL;
  bool ok = dnnl_reorder_primitive_desc_create(&rpd, fmd, eng, tmd, eng,
                                               NULL) == dnnl_success &&
            dnnl_primitive_create(&r, rpd) == dnnl_success &&
            het_dnnl_reorder_run(r, fmd, from, tmd, to);
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  return ok;
}
