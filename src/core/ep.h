/* ep.h — the core's side of the provider ABI: every call the executor, the
 * transfer layer and the session make into a provider goes through these
 * wrappers, which supply the defaults for NULL slots and for providers
 * built against ABI 1-2.
 * Defaults: a stream of an ABI 1-2 provider (or the host, ep == NULL) is a
 * core host queue (hostq.h) whose jobs run the provider's synchronous run
 * and copy slots; its events are host-queue events; its device memory is
 * one allocation per tensor (alloc/free: no offsets inside a block).  An
 * ABI 3 provider without stream_wait makes the host wait for the event
 * before enqueueing more (a documented sync point).
 */
#ifndef HET_CORE_EP_H
#define HET_CORE_EP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/hostq.h"
#include "core/ir.h"
#include "core/status.h"
#include "hetrt/provider.h"

/* Whether memory of d (NULL = host) is plain host memory. */
static inline bool het_device_is_host(const het_device *d) {
  return !d || d->info.host_memory;
}

/* Whether ep implements the ABI 3 run path (streams it owns). */
bool het_ep_is_native(const het_ep *ep);
/* Whether addresses inside a device block of d are valid device
 * addresses (ABI 3 device_alloc), so tensors can share one arena block. */
bool het_device_has_offsets(const het_device *d);

/* Device memory of d (ABI 3 device_alloc, or ABI 1-2 alloc). */
het_status het_device_alloc(const het_device *d, size_t nbytes, void **ptr);
void het_device_free(const het_device *d, void *ptr);
/* Host memory the device copies at full speed (host_alloc), else plain
 * 64-byte aligned host memory; *pinned says which. */
het_status het_device_host_alloc(const het_device *d, size_t nbytes,
                                 void **ptr, bool *pinned);
void het_device_host_free(const het_device *d, void *ptr, bool pinned);

/* A stream of ep (NULL: the core's host stream). */
typedef struct het_stream {
  const het_ep *ep;
  void *handle;     /* provider stream (ABI 3 ep) */
  het_hostq *q;     /* core host queue (host or ABI 1-2 ep) */
  bool inline_run;
} het_stream;

/* An event, recorded on streams of the one ep it was created for. */
typedef struct het_event {
  const het_ep *ep;
  void *handle;       /* provider event (ABI 3 ep) */
  het_hostq_event qe; /* core event (host or ABI 1-2 ep) */
} het_event;

/* flags: HET_STREAM_* (inline: the enqueuing thread runs the work). */
het_status het_stream_init(het_stream *s, const het_ep *ep, unsigned flags,
                           const char *name);
void het_stream_deinit(het_stream *s);
/* Waits for everything enqueued on s; its first failure, cleared. */
het_status het_stream_synchronize(het_stream *s);

het_status het_event_init(het_event *e, const het_ep *ep);
void het_event_deinit(het_event *e);
/* e must belong to s's ep. */
het_status het_event_record(het_event *e, het_stream *s);
/* Later work on s waits for e (of any ep). */
het_status het_stream_wait(het_stream *s, het_event *e);
/* Host waits for e; the failure of its work, if any. */
het_status het_event_synchronize(het_event *e);
/* fn(arg) on the host when s reaches this point. */
het_status het_stream_host_func(het_stream *s, void (*fn)(void *arg),
                                void *arg);

/* Enqueues a run of compiled (a subgraph of graph, compiled by s's ep)
 * over io on s. */
het_status het_stream_run(het_stream *s, const het_graph *graph,
                          void *compiled, const het_kernel_io *io);

/* Whether ep (NULL: none) can copy between src and dst devices itself. */
bool het_ep_can_copy(const het_ep *ep, const het_device *src,
                     const het_device *dst);
/* Enqueues a copy of n bytes on s (whose ep can copy between the two
 * devices; host memory is NULL).  For ABI 1-2 eps device addresses must be
 * whole blocks. */
het_status het_stream_copy(het_stream *s, void *dst, const het_device *dst_dev,
                           const void *src, const het_device *src_dev,
                           size_t n);

/* Synchronous copy of n bytes between two memories through ep (which can
 * copy them): a stream used once, then synchronized. */
het_status het_ep_copy_now(const het_ep *ep, void *dst,
                           const het_device *dst_dev, const void *src,
                           const het_device *src_dev, size_t n);

/* The legacy (ABI 2) staged copy, for tests: n bytes between host memory
 * and the start of ep's device block in chunks of `chunk` through two
 * staging buffers from alloc_host (double-buffered).  ep must have the
 * four ABI 2 staging slots. */
het_status het_ep_staged_copy(const het_ep *ep, het_copy_direction direction,
                              void *handle, void *host, size_t n,
                              size_t chunk);
/* Copies larger than this go staged on an ABI 2 provider. */
#define HET_STAGED_CHUNK ((size_t)4 << 20)
/* Whether ep has all four ABI 2 staging slots. */
bool het_ep_has_staging(const het_ep *ep);

#endif
