/* arena.h — bump allocator for graph and plan memory.
 * Invariant: everything allocated from an arena lives until het_arena_deinit
 * and is 16-byte aligned; there is no per-object free.
 */
#ifndef HET_CORE_ARENA_H
#define HET_CORE_ARENA_H

#include <stddef.h>

typedef struct het_arena_block het_arena_block;

typedef struct het_arena {
  het_arena_block *head;
} het_arena;

void het_arena_init(het_arena *arena);
void het_arena_deinit(het_arena *arena);
/* Zeroed memory, or NULL when out of memory (or size overflows). */
void *het_arena_alloc(het_arena *arena, size_t size);
/* n * size bytes with overflow check; NULL on overflow. */
void *het_arena_calloc(het_arena *arena, size_t n, size_t size);
/* Copy of a string (len bytes, NUL-terminated); NULL when out of memory. */
char *het_arena_strndup(het_arena *arena, const char *s, size_t len);
char *het_arena_strdup(het_arena *arena, const char *s);

#endif
