/* arena.c — bump allocator: a list of blocks, large requests get their own. */
#include "core/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HET_ARENA_BLOCK 65536

struct het_arena_block {
  het_arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

void het_arena_init(het_arena *arena) { arena->head = NULL; }

void het_arena_deinit(het_arena *arena) {
  het_arena_block *b = arena->head;
  while (b) {
    het_arena_block *next = b->next;
    free(b);
    b = next;
  }
  arena->head = NULL;
}

void *het_arena_alloc(het_arena *arena, size_t size) {
  if (size > SIZE_MAX / 2)
    return NULL;
  size = (size + 15) & ~(size_t)15;
  if (size == 0)
    size = 16;
  het_arena_block *b = arena->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > HET_ARENA_BLOCK / 4 ? size : HET_ARENA_BLOCK;
    het_arena_block *nb = malloc(sizeof *nb + cap);
    if (!nb)
      return NULL;
    nb->used = 0;
    nb->cap = cap;
    if (b && size > HET_ARENA_BLOCK / 4) {
      /* Dedicated block: keep the current block at the head. */
      nb->next = b->next;
      b->next = nb;
    } else {
      nb->next = b;
      arena->head = nb;
    }
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

void *het_arena_calloc(het_arena *arena, size_t n, size_t size) {
  if (size && n > SIZE_MAX / 4 / size)
    return NULL;
  return het_arena_alloc(arena, n * size);
}

char *het_arena_strndup(het_arena *arena, const char *s, size_t len) {
  char *p = het_arena_alloc(arena, len + 1);
  if (!p)
    return NULL;
  if (len)
    memcpy(p, s, len);
  p[len] = '\0';
  return p;
}

char *het_arena_strdup(het_arena *arena, const char *s) {
  return het_arena_strndup(arena, s, strlen(s));
}
