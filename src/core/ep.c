/* ep.c — default slots of the provider ABI (ep.h): core host queues for
 * the streams of ABI 1-2 providers and of the host, host-queue events that
 * other providers can wait on through het_core_host_events, the legacy run
 * context, and ABI 1-2 copies (synchronous, or staged through two pinned
 * buffers for large ones).
 */
#include "core/ep.h"

#include <stdlib.h>
#include <string.h>

#include "core/hostmem.h"
#include "core/tensor.h"

bool het_ep_is_native(const het_ep *ep) {
  return ep && HET_PROVIDER_HAS(ep->vt, 3, run_async) &&
         HET_PROVIDER_HAS(ep->vt, 3, stream_create) &&
         HET_PROVIDER_HAS(ep->vt, 3, event_create) &&
         HET_PROVIDER_HAS(ep->vt, 3, event_record) &&
         HET_PROVIDER_HAS(ep->vt, 3, stream_synchronize);
}

bool het_device_has_offsets(const het_device *d) {
  return het_device_is_host(d) || HET_PROVIDER_HAS(d->vt, 3, device_alloc);
}

/* ---- memory -------------------------------------------------------------- */

het_status het_device_alloc(const het_device *d, size_t nbytes, void **ptr) {
  if (HET_PROVIDER_HAS(d->vt, 3, device_alloc))
    return d->vt->device_alloc(d->state, nbytes, ptr);
  if (d->vt->alloc)
    return d->vt->alloc(d->state, nbytes, ptr);
  return het_error(HET_ERR_INTERNAL, "device '%s' has no allocator", d->name);
}

void het_device_free(const het_device *d, void *ptr) {
  if (!ptr)
    return;
  if (HET_PROVIDER_HAS(d->vt, 3, device_free))
    d->vt->device_free(d->state, ptr);
  else if (d->vt->free)
    d->vt->free(d->state, ptr);
}

het_status het_device_host_alloc(const het_device *d, size_t nbytes,
                                 void **ptr, bool *pinned) {
  size_t size = (nbytes + 63) & ~(size_t)63;
  *pinned = false;
  if (d && HET_PROVIDER_HAS(d->vt, 3, host_alloc) &&
      HET_PROVIDER_HAS(d->vt, 3, host_free)) {
    HET_TRY(d->vt->host_alloc(d->state, size ? size : 64, ptr));
    *pinned = true;
    return HET_OK;
  }
  *ptr = het_host_alloc(size);
  if (!*ptr)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "cannot allocate %zu bytes of host memory", nbytes);
  return HET_OK;
}

void het_device_host_free(const het_device *d, void *ptr, bool pinned) {
  if (pinned)
    d->vt->host_free(d->state, ptr);
  else
    free(ptr);
}

/* ---- streams and events -------------------------------------------------- */

static het_status het_core_event_sync(void *instance, void *event) {
  (void)instance;
  return het_hostq_event_wait(event);
}

/* The event slots of core host queues, for providers that wait on them. */
static const het_provider_vtable het_core_host_events = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "host",
    .event_synchronize = het_core_event_sync,
};

het_status het_stream_init(het_stream *s, const het_ep *ep, unsigned flags,
                           const char *name) {
  memset(s, 0, sizeof *s);
  s->ep = ep;
  s->inline_run = (flags & HET_STREAM_INLINE) != 0;
  if (het_ep_is_native(ep))
    return ep->vt->stream_create(ep->state, flags, &s->handle);
  return het_hostq_create(name, s->inline_run, &s->q);
}

void het_stream_deinit(het_stream *s) {
  if (s->handle)
    s->ep->vt->stream_destroy(s->ep->state, s->handle);
  het_hostq_destroy(s->q);
  memset(s, 0, sizeof *s);
}

het_status het_stream_synchronize(het_stream *s) {
  if (s->handle)
    return s->ep->vt->stream_synchronize(s->ep->state, s->handle);
  return s->q ? het_hostq_synchronize(s->q) : HET_OK;
}

het_status het_event_init(het_event *e, const het_ep *ep) {
  memset(e, 0, sizeof *e);
  e->ep = ep;
  if (het_ep_is_native(ep))
    return ep->vt->event_create(ep->state, &e->handle);
  return HET_OK;
}

void het_event_deinit(het_event *e) {
  if (e->handle && e->ep->vt->event_destroy)
    e->ep->vt->event_destroy(e->ep->state, e->handle);
  memset(e, 0, sizeof *e);
}

het_status het_event_record(het_event *e, het_stream *s) {
  if (e->ep != s->ep || (e->handle != NULL) != (s->handle != NULL))
    return het_error(HET_ERR_INTERNAL,
                     "event of '%s' recorded on a stream of '%s'",
                     e->ep ? e->ep->vt->name : "host",
                     s->ep ? s->ep->vt->name : "host");
  if (s->handle)
    return s->ep->vt->event_record(s->ep->state, e->handle, s->handle);
  het_hostq_record(s->q, &e->qe);
  return HET_OK;
}

static het_event_ref het_event_ref_of(het_event *e) {
  if (e->handle)
    return (het_event_ref){e->ep->vt, e->ep->state, e->handle, e->ep->device};
  return (het_event_ref){&het_core_host_events, NULL, &e->qe, NULL};
}

het_status het_stream_wait(het_stream *s, het_event *e) {
  if (s->q)
    return e->handle ? het_hostq_wait_ref(s->q, &(het_event_ref){
                                                  e->ep->vt, e->ep->state,
                                                  e->handle, e->ep->device})
                     : het_hostq_wait_event(s->q, &e->qe);
  if (HET_PROVIDER_HAS(s->ep->vt, 3, stream_wait)) {
    het_event_ref ref = het_event_ref_of(e);
    return s->ep->vt->stream_wait(s->ep->state, s->handle, &ref);
  }
  return het_event_synchronize(e); /* no device-side wait: the host waits */
}

het_status het_event_synchronize(het_event *e) {
  if (e->handle)
    return e->ep->vt->event_synchronize(e->ep->state, e->handle);
  return het_hostq_event_wait(&e->qe);
}

het_status het_stream_host_func(het_stream *s, void (*fn)(void *arg),
                                void *arg) {
  if (s->q)
    return het_hostq_call(s->q, fn, arg);
  if (HET_PROVIDER_HAS(s->ep->vt, 3, host_func))
    return s->ep->vt->host_func(s->ep->state, s->handle, fn, arg);
  HET_TRY(het_stream_synchronize(s));
  fn(arg);
  return HET_OK;
}

/* ---- the legacy run context ---------------------------------------------- */

struct het_run_ctx {
  const het_graph *graph;
  const het_kernel_io *io;
};

het_tensor *het_run_input(het_run_ctx *ctx, int node, int i) {
  const het_node *n = &ctx->graph->nodes[node];
  int v = het_node_input(n, i);
  return v >= 0 ? ctx->io->values[v] : NULL;
}

het_status het_run_prepare_outputs(het_run_ctx *ctx, int node,
                                   het_tensor *const *inputs,
                                   het_tensor **outputs) {
  const het_kernel_io *io = ctx->io;
  const het_node *n = &ctx->graph->nodes[node];
  if (io->dynamic && io->dynamic[node])
    HET_TRY(io->prepare_node(io, node, inputs));
  for (int o = 0; o < n->n_outputs; o++)
    outputs[o] = n->outputs[o] >= 0 ? io->values[n->outputs[o]] : NULL;
  return HET_OK;
}

void het_run_release_inputs(het_run_ctx *ctx, int node) {
  (void)ctx;
  (void)node;
}

static het_status het_legacy_run_job(const het_hostq_job *job) {
  const het_ep *ep = job->p[0];
  het_run_ctx ctx = {job->p[1], job->p[3]};
  return ep->vt->run(ep->state, job->p[2], &ctx);
}

het_status het_stream_run(het_stream *s, const het_graph *graph,
                          void *compiled, const het_kernel_io *io) {
  if (s->handle)
    return s->ep->vt->run_async(s->ep->state, compiled, s->handle, io);
  if (!s->ep || !s->ep->vt->run)
    return het_error(HET_ERR_INTERNAL, "provider '%s' has no run slot",
                     s->ep ? s->ep->vt->name : "host");
  het_hostq_job job = {.fn = het_legacy_run_job,
                       .p = {(void *)s->ep, (void *)graph, compiled,
                             (void *)io}};
  return het_hostq_submit(s->q, &job);
}

/* ---- copies ---------------------------------------------------------------- */

bool het_ep_can_copy(const het_ep *ep, const het_device *src,
                     const het_device *dst) {
  bool hs = het_device_is_host(src), hd = het_device_is_host(dst);
  if (hs && hd)
    return true;
  if (!ep)
    return false;
  if (HET_PROVIDER_HAS(ep->vt, 3, can_copy))
    return ep->vt->can_copy(ep->state, hs ? NULL : src, hd ? NULL : dst);
  return (hs || src == ep->device) && (hd || dst == ep->device) &&
         (hs || hd);
}

bool het_ep_has_staging(const het_ep *ep) {
  const het_provider_vtable *vt = ep ? ep->vt : NULL;
  return vt && HET_PROVIDER_HAS(vt, 2, alloc_host) &&
         HET_PROVIDER_HAS(vt, 2, free_host) &&
         HET_PROVIDER_HAS(vt, 2, copy_submit) &&
         HET_PROVIDER_HAS(vt, 2, copy_wait);
}

static size_t het_chunk_len(size_t off, size_t n, size_t chunk) {
  return n - off < chunk ? n - off : chunk;
}

/* Waits for the outstanding tickets, older first; keeps the first error. */
static het_status het_staged_drain(const het_ep *ep, void **ticket, int older,
                                   het_status st) {
  for (int i = 0; i < 2; i++) {
    int b = (older + i) & 1;
    if (!ticket[b])
      continue;
    het_status w = ep->vt->copy_wait(ep->state, ticket[b]);
    ticket[b] = NULL;
    if (st == HET_OK)
      st = w;
  }
  return st;
}

/* To the device: the host fills buffer k % 2 while the device copies the
 * other one out. */
static het_status het_staged_in(const het_ep *ep, void **buf, void *handle,
                                const char *src, size_t n, size_t chunk) {
  void *ticket[2] = {NULL, NULL};
  het_status st = HET_OK;
  size_t k = 0;
  for (size_t off = 0; off < n && st == HET_OK; off += chunk, k++) {
    int b = (int)(k & 1);
    size_t len = het_chunk_len(off, n, chunk);
    if (ticket[b]) { /* buffer b is free once its last chunk is copied */
      st = ep->vt->copy_wait(ep->state, ticket[b]);
      ticket[b] = NULL;
      if (st != HET_OK)
        break;
    }
    memcpy(buf[b], src + off, len);
    st = ep->vt->copy_submit(ep->state, HET_COPY_TO_DEVICE, handle, off,
                             buf[b], len, &ticket[b]);
    if (st != HET_OK)
      ticket[b] = NULL;
  }
  return het_staged_drain(ep, ticket, (int)(k & 1), st);
}

/* To the host: the device fills one buffer while the host drains the
 * other. */
static het_status het_staged_out(const het_ep *ep, void **buf, void *handle,
                                 char *dst, size_t n, size_t chunk) {
  void *ticket[2] = {NULL, NULL};
  het_status st = HET_OK;
  size_t next = 0, k = 0; /* next chunk to submit; chunk to drain */
  for (int b = 0; b < 2 && next < n && st == HET_OK; b++, next += chunk)
    st = ep->vt->copy_submit(ep->state, HET_COPY_TO_HOST, handle, next,
                             buf[b], het_chunk_len(next, n, chunk),
                             &ticket[b]);
  for (size_t off = 0; off < n && st == HET_OK; off += chunk, k++) {
    int b = (int)(k & 1);
    st = ep->vt->copy_wait(ep->state, ticket[b]);
    ticket[b] = NULL;
    if (st != HET_OK)
      break;
    memcpy(dst + off, buf[b], het_chunk_len(off, n, chunk));
    if (next < n) {
      st = ep->vt->copy_submit(ep->state, HET_COPY_TO_HOST, handle, next,
                               buf[b], het_chunk_len(next, n, chunk),
                               &ticket[b]);
      if (st != HET_OK)
        ticket[b] = NULL;
      next += chunk;
    }
  }
  return het_staged_drain(ep, ticket, (int)((k + 1) & 1), st);
}

het_status het_ep_staged_copy(const het_ep *ep, het_copy_direction direction,
                              void *handle, void *host, size_t n,
                              size_t chunk) {
  if (!het_ep_has_staging(ep) || chunk == 0 ||
      (direction != HET_COPY_TO_DEVICE && direction != HET_COPY_TO_HOST))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "staged copy: %s has no staging slots, or chunk 0, or a "
                     "bad direction",
                     ep ? ep->vt->name : "(no provider)");
  if (n == 0)
    return HET_OK;
  size_t cap = n < chunk ? n : chunk;
  int n_buf = n > chunk ? 2 : 1;
  void *buf[2] = {NULL, NULL};
  het_status st = HET_OK;
  for (int b = 0; b < n_buf && st == HET_OK; b++)
    st = ep->vt->alloc_host(ep->state, cap, &buf[b]);
  if (st == HET_OK && n_buf == 1)
    buf[1] = buf[0]; /* one chunk: never two in flight */
  if (st == HET_OK)
    st = direction == HET_COPY_TO_DEVICE
             ? het_staged_in(ep, buf, handle, host, n, chunk)
             : het_staged_out(ep, buf, handle, host, n, chunk);
  for (int b = 0; b < n_buf; b++)
    if (buf[b])
      ep->vt->free_host(ep->state, buf[b]);
  return st;
}

/* ABI 1-2 copy: p = {ep, dst, src}, n = {bytes, 1 to the device / 2 to
 * the host / 0 host to host}. */
static het_status het_legacy_copy_job(const het_hostq_job *job) {
  const het_ep *ep = job->p[0];
  void *dst = job->p[1];
  void *src = job->p[2];
  size_t n = job->n[0];
  if (n == 0)
    return HET_OK;
  if (job->n[1] == 0) {
    memcpy(dst, src, n);
    return HET_OK;
  }
  bool to_dev = job->n[1] == 1;
  if (n > HET_STAGED_CHUNK && het_ep_has_staging(ep))
    return to_dev ? het_ep_staged_copy(ep, HET_COPY_TO_DEVICE, dst, src, n,
                                       HET_STAGED_CHUNK)
                  : het_ep_staged_copy(ep, HET_COPY_TO_HOST, src, dst, n,
                                       HET_STAGED_CHUNK);
  return to_dev ? ep->vt->copy_from_host(ep->state, dst, src, n)
                : ep->vt->copy_to_host(ep->state, dst, src, n);
}

het_status het_stream_copy(het_stream *s, void *dst, const het_device *dst_dev,
                           const void *src, const het_device *src_dev,
                           size_t n) {
  bool hs = het_device_is_host(src_dev), hd = het_device_is_host(dst_dev);
  if (s->handle)
    return s->ep->vt->copy_async(s->ep->state, dst, hd ? NULL : dst_dev, src,
                                 hs ? NULL : src_dev, n, s->handle);
  if (!hs && !hd)
    return het_error(HET_ERR_INTERNAL,
                     "copy %s -> %s: device to device needs an ABI 3 "
                     "provider",
                     src_dev->name, dst_dev->name);
  if ((!hs || !hd) && (!s->ep || !s->ep->vt->copy_from_host ||
                       !s->ep->vt->copy_to_host))
    return het_error(HET_ERR_INTERNAL, "provider '%s' has no copy slots",
                     s->ep ? s->ep->vt->name : "host");
  het_hostq_job job = {.fn = het_legacy_copy_job,
                       .p = {(void *)s->ep, dst, (void *)src},
                       .n = {n, hs && hd ? 0 : hs ? 1 : 2}};
  return het_hostq_submit(s->q, &job);
}

het_status het_ep_copy_now(const het_ep *ep, void *dst,
                           const het_device *dst_dev, const void *src,
                           const het_device *src_dev, size_t n) {
  het_stream s;
  HET_TRY(het_stream_init(&s, ep, HET_STREAM_INLINE, "copy"));
  het_status st = het_stream_copy(&s, dst, dst_dev, src, src_dev, n);
  het_status sy = het_stream_synchronize(&s);
  het_stream_deinit(&s);
  return st != HET_OK ? st : sy;
}
