/* blob.c — the CPU provider's compiled-subgraph blob in an ahead-of-time
 * plan (docs/plan-format.md), little-endian:
 *   "HETCPU1\n"; u32 length and the kernel choices' text (tuning.h);
 *   u32 count, then per prepared weight (kernel.h state_weights): u32
 *   node position, u32 layout size, the layout's bytes, u64 size, zeros up
 *   to a 64-byte boundary of the blob, the weight's bytes.
 * A plan keeps each blob on a 64-byte boundary of its file, so the weights
 * are used in place (presets.h).  Invariant: parsing checks every length
 * against the blob before anything is read.
 */
#include "providers/cpu/blob.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HET_CPU_BLOB_MAGIC "HETCPU1\n"

typedef struct het_blob_buf {
  uint8_t *data;
  size_t len, cap;
  bool failed;
} het_blob_buf;

static void het_blob_put(het_blob_buf *b, const void *p, size_t n) {
  if (b->failed)
    return;
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n)
      cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  if (n)
    memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void het_blob_u32(het_blob_buf *b, uint32_t v) { het_blob_put(b, &v, 4); }

typedef struct het_blob_weights {
  het_blob_buf *buf;
  int node;
  uint32_t count;
} het_blob_weights;

static void het_blob_weight(void *ctx, const void *layout, size_t layout_size,
                            const void *data, size_t size) {
  het_blob_weights *w = ctx;
  static const uint8_t zeros[64];
  uint64_t sz = size;
  het_blob_u32(w->buf, (uint32_t)w->node);
  het_blob_u32(w->buf, (uint32_t)layout_size);
  het_blob_put(w->buf, layout, layout_size);
  het_blob_put(w->buf, &sz, 8);
  het_blob_put(w->buf, zeros, (64 - w->buf->len % 64) % 64);
  het_blob_put(w->buf, data, size);
  w->count++;
}

het_status het_cpu_blob_write(const char *choices, int n_nodes,
                              const het_kernel *const *kernels,
                              void *const *states, void **data, size_t *size) {
  het_blob_buf b = {0};
  size_t clen = strlen(choices);
  het_blob_put(&b, HET_CPU_BLOB_MAGIC, 8);
  het_blob_u32(&b, (uint32_t)clen);
  het_blob_put(&b, choices, clen);
  size_t count_at = b.len;
  het_blob_u32(&b, 0);
  het_blob_weights w = {.buf = &b};
  for (int i = 0; i < n_nodes; i++)
    if (states[i] && kernels[i]->state_weights) {
      w.node = i;
      kernels[i]->state_weights(states[i], het_blob_weight, &w);
    }
  if (b.failed) {
    free(b.data);
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  }
  memcpy(b.data + count_at, &w.count, 4);
  *data = b.data;
  *size = b.len;
  return HET_OK;
}

static het_status het_blob_bad(const char *what) {
  return het_error(HET_ERR_INVALID_MODEL, "cpu provider: a plan's blob %s",
                   what);
}

static bool het_blob_take(const uint8_t **p, const uint8_t *end, void *out,
                          size_t n) {
  if ((size_t)(end - *p) < n)
    return false;
  memcpy(out, *p, n);
  *p += n;
  return true;
}

het_status het_cpu_blob_parse(const void *data, size_t size,
                              het_cpu_blob *out) {
  memset(out, 0, sizeof *out);
  const uint8_t *base = data, *p = base, *end = base + size;
  uint32_t clen, n;
  if (size < 8 || memcmp(p, HET_CPU_BLOB_MAGIC, 8) != 0)
    return het_blob_bad("is not the CPU's (no HETCPU1 header)");
  p += 8;
  if (!het_blob_take(&p, end, &clen, 4) || clen > (size_t)(end - p) ||
      memchr(p, '\0', clen))
    return het_blob_bad("has malformed kernel choices");
  out->choices = (const char *)p;
  out->choices_len = clen;
  p += clen;
  if (!het_blob_take(&p, end, &n, 4) || n > size / 16)
    return het_blob_bad("has a malformed weight count");
  out->weights = calloc((size_t)n + 1, sizeof *out->weights);
  if (!out->weights)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cpu provider: out of memory");
  for (uint32_t i = 0; i < n; i++) {
    uint32_t node, lsize;
    uint64_t wsize;
    if (!het_blob_take(&p, end, &node, 4) || !het_blob_take(&p, end, &lsize, 4) ||
        node > (1u << 28) || lsize > 4096 || lsize > (size_t)(end - p)) {
      het_cpu_blob_free(out);
      return het_blob_bad("has a malformed weight header");
    }
    het_kernel_preset *w = &out->weights[i];
    w->node = (int)node;
    w->layout = p;
    w->layout_size = lsize;
    p += lsize;
    size_t pad;
    if (!het_blob_take(&p, end, &wsize, 8) ||
        (pad = (64 - (size_t)(p - base) % 64) % 64) > (size_t)(end - p) ||
        wsize > (uint64_t)(end - p - pad)) {
      het_cpu_blob_free(out);
      return het_blob_bad("has a weight past its end");
    }
    p += pad;
    w->data = p;
    w->size = (size_t)wsize;
    p += wsize;
    out->n_weights = (int)i + 1;
  }
  if (p != end) {
    het_cpu_blob_free(out);
    return het_blob_bad("has bytes after its last weight");
  }
  return HET_OK;
}

void het_cpu_blob_free(het_cpu_blob *b) {
  free(b->weights);
  b->weights = NULL;
  b->n_weights = 0;
}
