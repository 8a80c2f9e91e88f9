/* staging.c — the emu's ABI-2 slots: "pinned" staging memory (the emu's
 * own host allocations, kept in a small pool for reuse) and asynchronous
 * copies between staging memory and device blocks at an offset, queued on
 * the copy-engine stream and paced to the link in timed mode like the
 * synchronous copies.  A ticket is the queued job; copy_wait frees it.
 * Invariant: a pooled block is on s->staging_free only while no caller
 * holds it; its size sits in the 64-byte header before the pointer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/emu/emu_internal.h"

#define HET_EMU_STAGING_HEADER 64

static size_t *het_staging_size(void *ptr) {
  return (size_t *)((char *)ptr - HET_EMU_STAGING_HEADER);
}

het_status het_emu_alloc_host(void *state, size_t nbytes, void **ptr) {
  het_emu_state *s = state;
  if (nbytes > SIZE_MAX - 2 * HET_EMU_STAGING_HEADER)
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "emu device '%s': cannot stage %zu bytes",
                     s->profile.name, nbytes);
  void *found = NULL;
  pthread_mutex_lock(&s->staging_lock);
  for (int i = 0; i < s->n_staging_free && !found; i++)
    if (*het_staging_size(s->staging_free[i]) >= nbytes) {
      found = s->staging_free[i];
      s->staging_free[i] = s->staging_free[--s->n_staging_free];
    }
  pthread_mutex_unlock(&s->staging_lock);
  if (!found) {
    size_t total = (nbytes + HET_EMU_STAGING_HEADER + 63) / 64 * 64;
    char *base = aligned_alloc(64, total);
    if (!base)
      return het_error(HET_ERR_OUT_OF_MEMORY,
                       "emu device '%s': cannot stage %zu bytes",
                       s->profile.name, nbytes);
    found = base + HET_EMU_STAGING_HEADER;
    *het_staging_size(found) = nbytes;
  }
  *ptr = found;
  return HET_OK;
}

void het_emu_free_host(void *state, void *ptr) {
  het_emu_state *s = state;
  if (!ptr)
    return;
  pthread_mutex_lock(&s->staging_lock);
  if (s->n_staging_free < HET_EMU_STAGING_POOL) {
    s->staging_free[s->n_staging_free++] = ptr;
    ptr = NULL;
  }
  pthread_mutex_unlock(&s->staging_lock);
  if (ptr)
    free((char *)ptr - HET_EMU_STAGING_HEADER);
}

void het_emu_staging_deinit(het_emu_state *s) {
  for (int i = 0; i < s->n_staging_free; i++)
    free((char *)s->staging_free[i] - HET_EMU_STAGING_HEADER);
  s->n_staging_free = 0;
}

typedef struct het_emu_ticket {
  het_emu_job job;
  het_emu_state *s;
  void *dst;
  const void *src;
  size_t nbytes;
  het_copy_direction direction;
} het_emu_ticket;

static het_status het_emu_ticket_exec(void *arg) {
  het_emu_ticket *t = arg;
  long nth;
  if (het_emu_fault_hit(t->s, HET_EMU_FAULT_COPY, &nth))
    return het_error(HET_ERR_IO,
                     "emu: injected fault: copy #%ld (%s, %zu bytes, "
                     "asynchronous) on device '%s'",
                     nth,
                     t->direction == HET_COPY_TO_DEVICE ? "host to device"
                                                        : "device to host",
                     t->nbytes, t->s->profile.name);
  if (t->nbytes)
    memcpy(t->dst, t->src, t->nbytes);
  return HET_OK;
}

het_status het_emu_copy_submit(void *state, het_copy_direction direction,
                               void *handle, size_t offset, void *host,
                               size_t nbytes, void **ticket) {
  het_emu_state *s = state;
  void *block;
  if (direction != HET_COPY_TO_DEVICE && direction != HET_COPY_TO_HOST)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: copy_submit: bad direction %d", (int)direction);
  if ((!host && nbytes) || !ticket || offset > SIZE_MAX - nbytes)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: copy_submit on device '%s': NULL host memory or "
                     "ticket, or offset %zu + %zu bytes overflows",
                     s->profile.name, offset, nbytes);
  HET_TRY(het_emu_memory_resolve(s->mem, handle, offset + nbytes, &block));
  het_emu_ticket *t = calloc(1, sizeof *t);
  if (!t)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  char *dev = (char *)block + offset;
  t->s = s;
  t->nbytes = nbytes;
  t->direction = direction;
  t->dst = direction == HET_COPY_TO_DEVICE ? (void *)dev : host;
  t->src = direction == HET_COPY_TO_DEVICE ? (const void *)host : dev;
  t->job.fn = het_emu_ticket_exec;
  t->job.arg = t;
  if (s->mode == HET_EMU_TIMED)
    t->job.pace_s = s->profile.link_latency +
                    (double)nbytes / s->profile.link_bandwidth;
  het_emu_stream_submit(s->copy, &t->job);
  *ticket = t;
  return HET_OK;
}

het_status het_emu_copy_wait(void *state, void *ticket) {
  het_emu_state *s = state;
  het_emu_ticket *t = ticket;
  if (!t)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: copy_wait on device '%s': NULL ticket",
                     s->profile.name);
  het_status st = het_emu_stream_wait(s->copy, &t->job);
  free(t);
  return st;
}
