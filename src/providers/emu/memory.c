/* memory.c — the emu's separate memory space.  A handle is a tagged value
 * (tag in bits 63..48, a generation in bits 47..32, a slot index below) that
 * is a non-canonical address on x86-64 and AArch64, so dereferencing one by
 * accident faults; only het_emu_memory_resolve turns it into storage.
 * Invariants: used = sum of charged sizes of live blocks <= capacity (when
 * capacity > 0); a freed slot's generation changes, so stale handles fail.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/emu/emu_internal.h"

#define HET_EMU_TAG 0xE4D0u
#define HET_EMU_NO_SLOT UINT32_MAX
#define HET_EMU_GRAIN 256 /* allocation granularity charged to capacity */

typedef struct het_emu_block {
  void *data;      /* NULL when the slot is free */
  size_t nbytes;   /* requested size */
  size_t charged;  /* nbytes rounded up to the grain */
  uint16_t gen;
  uint32_t next_free;
} het_emu_block;

struct het_emu_memory {
  pthread_mutex_t lock;
  char device[HET_EMU_NAME_CAP];
  size_t capacity, used, peak;
  het_emu_block *blocks;
  uint32_t n_blocks, cap_blocks;
  uint32_t free_head;
};

_Static_assert(sizeof(uintptr_t) >= 8, "emu handles need 64-bit pointers");

static void *het_emu_handle_make(uint32_t index, uint16_t gen) {
  uint64_t h = ((uint64_t)HET_EMU_TAG << 48) | ((uint64_t)gen << 32) | index;
  return (void *)(uintptr_t)h;
}

bool het_emu_handle_is_tagged(const void *handle) {
  return ((uint64_t)(uintptr_t)handle >> 48) == HET_EMU_TAG;
}

het_status het_emu_memory_create(const char *device, size_t capacity,
                                 het_emu_memory **out) {
  het_emu_memory *m = calloc(1, sizeof *m);
  if (!m)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  if (pthread_mutex_init(&m->lock, NULL) != 0) {
    free(m);
    return het_error(HET_ERR_INTERNAL, "emu: cannot create a mutex");
  }
  snprintf(m->device, sizeof m->device, "%s", device);
  m->capacity = capacity;
  m->free_head = HET_EMU_NO_SLOT;
  *out = m;
  return HET_OK;
}

void het_emu_memory_destroy(het_emu_memory *m) {
  if (!m)
    return;
  for (uint32_t i = 0; i < m->n_blocks; i++)
    free(m->blocks[i].data);
  free(m->blocks);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

/* A free slot index (lock held); HET_EMU_NO_SLOT when out of memory. */
static uint32_t het_emu_slot_take(het_emu_memory *m) {
  if (m->free_head != HET_EMU_NO_SLOT) {
    uint32_t i = m->free_head;
    m->free_head = m->blocks[i].next_free;
    return i;
  }
  if (m->n_blocks == m->cap_blocks) {
    uint32_t cap = m->cap_blocks ? m->cap_blocks * 2 : 64;
    if (cap >= HET_EMU_NO_SLOT)
      return HET_EMU_NO_SLOT;
    het_emu_block *b = realloc(m->blocks, cap * sizeof *b);
    if (!b)
      return HET_EMU_NO_SLOT;
    memset(b + m->cap_blocks, 0, (cap - m->cap_blocks) * sizeof *b);
    m->blocks = b;
    m->cap_blocks = cap;
  }
  return m->n_blocks++;
}

static void het_emu_slot_put(het_emu_memory *m, uint32_t i) {
  m->blocks[i].data = NULL;
  m->blocks[i].gen++;
  m->blocks[i].next_free = m->free_head;
  m->free_head = i;
}

het_status het_emu_memory_alloc(het_emu_memory *m, size_t nbytes,
                                void **handle) {
  if (nbytes > SIZE_MAX - 2 * HET_EMU_GRAIN)
    return het_error(HET_ERR_CAPACITY,
                     "emu device '%s': cannot allocate %zu bytes", m->device,
                     nbytes);
  size_t charged = (nbytes + HET_EMU_GRAIN - 1) / HET_EMU_GRAIN * HET_EMU_GRAIN;
  if (charged == 0)
    charged = HET_EMU_GRAIN;
  pthread_mutex_lock(&m->lock);
  if (m->capacity && charged > m->capacity - m->used) {
    size_t used = m->used;
    pthread_mutex_unlock(&m->lock);
    return het_error(HET_ERR_CAPACITY,
                     "emu device '%s': cannot allocate %zu bytes: %zu of %zu "
                     "bytes in use",
                     m->device, nbytes, used, m->capacity);
  }
  uint32_t i = het_emu_slot_take(m);
  void *data = i == HET_EMU_NO_SLOT ? NULL : aligned_alloc(64, charged);
  if (!data) {
    if (i != HET_EMU_NO_SLOT)
      het_emu_slot_put(m, i);
    pthread_mutex_unlock(&m->lock);
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "emu device '%s': host memory for %zu bytes exhausted",
                     m->device, nbytes);
  }
  het_emu_block *b = &m->blocks[i];
  b->data = data;
  b->nbytes = nbytes;
  b->charged = charged;
  m->used += charged;
  if (m->used > m->peak)
    m->peak = m->used;
  *handle = het_emu_handle_make(i, b->gen);
  pthread_mutex_unlock(&m->lock);
  return HET_OK;
}

/* The live block behind handle (lock held), or NULL. */
static het_emu_block *het_emu_block_find(het_emu_memory *m,
                                         const void *handle) {
  uint64_t h = (uint64_t)(uintptr_t)handle;
  if (!het_emu_handle_is_tagged(handle))
    return NULL;
  uint32_t i = (uint32_t)h;
  uint16_t gen = (uint16_t)(h >> 32);
  if (i >= m->n_blocks || !m->blocks[i].data || m->blocks[i].gen != gen)
    return NULL;
  return &m->blocks[i];
}

void het_emu_memory_free(het_emu_memory *m, const void *handle) {
  pthread_mutex_lock(&m->lock);
  het_emu_block *b = het_emu_block_find(m, handle);
  if (b) {
    free(b->data);
    m->used -= b->charged;
    het_emu_slot_put(m, (uint32_t)(b - m->blocks));
  }
  pthread_mutex_unlock(&m->lock);
}

het_status het_emu_memory_resolve(het_emu_memory *m, const void *handle,
                                  size_t nbytes, void **ptr) {
  pthread_mutex_lock(&m->lock);
  het_emu_block *b = het_emu_block_find(m, handle);
  void *data = b ? b->data : NULL;
  size_t size = b ? b->nbytes : 0;
  pthread_mutex_unlock(&m->lock);
  if (!data)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu device '%s': %p is not a live handle of this "
                     "device%s",
                     m->device, handle,
                     het_emu_handle_is_tagged(handle) ? ""
                                                      : " (a host pointer?)");
  if (nbytes > size)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu device '%s': access of %zu bytes to a block of %zu",
                     m->device, nbytes, size);
  *ptr = data;
  return HET_OK;
}

void het_emu_memory_usage(het_emu_memory *m, size_t *used, size_t *peak) {
  pthread_mutex_lock(&m->lock);
  if (used)
    *used = m->used;
  if (peak)
    *peak = m->peak;
  pthread_mutex_unlock(&m->lock);
}
