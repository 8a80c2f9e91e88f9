/* plan_file.c — the .hplan container (plan_file.h, docs/plan-format.md):
 * writing sections behind a header and a table, and opening a file with
 * every structural check done before anything reads a section.  Little-
 * endian fields; a header of 64 bytes:
 *   0 magic "HETRTPLN"   8 u32 format   12 u32 sections   16 u64 file size
 *   24 u64 hash of the table   32 u64 hash of the header (these 64 bytes,
 *   this field 0)   40 reserved (0)
 * then the table, 32 bytes a section: u32 id, u32 flags (0), u64 offset,
 * u64 size, u64 hash of the section's bytes.
 */
#include "executor/plan_file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/file.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "plan files are little-endian: this build would need byte swaps"
#endif

#define HET_PLAN_HEADER 64
#define HET_PLAN_ENTRY 32
/* Largest plan file accepted (weights included). */
#define HET_PLAN_MAX_BYTES ((uint64_t)64 << 30)

/* ---- XXH64 ---- */

static const uint64_t het_p1 = 0x9E3779B185EBCA87ULL,
                      het_p2 = 0xC2B2AE3D27D4EB4FULL,
                      het_p3 = 0x165667B19E3779F9ULL,
                      het_p4 = 0x85EBCA77C2B2AE63ULL,
                      het_p5 = 0x27D4EB2F165667C5ULL;

static uint64_t het_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

static uint64_t het_rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static uint32_t het_rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

static uint64_t het_xround(uint64_t acc, uint64_t in) {
  acc += in * het_p2;
  return het_rotl(acc, 31) * het_p1;
}

static uint64_t het_xmerge(uint64_t h, uint64_t v) {
  h ^= het_xround(0, v);
  return h * het_p1 + het_p4;
}

uint64_t het_hash64(const void *data, size_t n, uint64_t seed) {
  const uint8_t *p = data, *end = p + n;
  uint64_t h;
  if (n >= 32) {
    uint64_t v1 = seed + het_p1 + het_p2, v2 = seed + het_p2, v3 = seed,
             v4 = seed - het_p1;
    for (; p + 32 <= end; p += 32) {
      v1 = het_xround(v1, het_rd64(p));
      v2 = het_xround(v2, het_rd64(p + 8));
      v3 = het_xround(v3, het_rd64(p + 16));
      v4 = het_xround(v4, het_rd64(p + 24));
    }
    h = het_rotl(v1, 1) + het_rotl(v2, 7) + het_rotl(v3, 12) +
        het_rotl(v4, 18);
    h = het_xmerge(h, v1);
    h = het_xmerge(h, v2);
    h = het_xmerge(h, v3);
    h = het_xmerge(h, v4);
  } else {
    h = seed + het_p5;
  }
  h += (uint64_t)n;
  for (; p + 8 <= end; p += 8)
    h = het_rotl(h ^ het_xround(0, het_rd64(p)), 27) * het_p1 + het_p4;
  if (p + 4 <= end) {
    h = het_rotl(h ^ ((uint64_t)het_rd32(p) * het_p1), 23) * het_p2 + het_p3;
    p += 4;
  }
  for (; p < end; p++)
    h = het_rotl(h ^ (*p * het_p5), 11) * het_p1;
  h ^= h >> 33;
  h *= het_p2;
  h ^= h >> 29;
  h *= het_p3;
  return h ^ (h >> 32);
}

/* The header's hash: its 64 bytes with the hash field (32..39) zero. */
static uint64_t het_header_hash(const uint8_t *head) {
  uint8_t h[HET_PLAN_HEADER];
  memcpy(h, head, sizeof h);
  memset(h + 32, 0, 8);
  return het_hash64(h, sizeof h, 0);
}

/* ---- writing ---- */

static void het_put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void het_put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static uint64_t het_align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

static bool het_write_all(FILE *f, const void *data, size_t n) {
  return n == 0 || fwrite(data, 1, n, f) == n;
}

static bool het_write_zeros(FILE *f, uint64_t n) {
  static const uint8_t zeros[256];
  while (n) {
    size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
    if (fwrite(zeros, 1, k, f) != k)
      return false;
    n -= k;
  }
  return true;
}

het_status het_plan_file_write(const char *path, const het_plan_section *s,
                               int n) {
  if (n < 1 || n > HET_PLAN_MAX_SECTIONS)
    return het_error(HET_ERR_INVALID_ARGUMENT, "plan: %d sections", n);
  uint8_t head[HET_PLAN_HEADER + HET_PLAN_MAX_SECTIONS * HET_PLAN_ENTRY];
  memset(head, 0, sizeof head);
  uint64_t at = het_align_up(HET_PLAN_HEADER + (uint64_t)n * HET_PLAN_ENTRY,
                             HET_PLAN_ALIGN);
  uint64_t offset[HET_PLAN_MAX_SECTIONS];
  for (int i = 0; i < n; i++) {
    at = het_align_up(at, s[i].id == HET_PSEC_WEIGHTS ? HET_PLAN_WEIGHTS_ALIGN
                                                      : HET_PLAN_ALIGN);
    offset[i] = at;
    uint8_t *e = head + HET_PLAN_HEADER + i * HET_PLAN_ENTRY;
    het_put32(e, s[i].id);
    het_put64(e + 8, at);
    het_put64(e + 16, s[i].size);
    het_put64(e + 24, het_hash64(s[i].data, (size_t)s[i].size, 0));
    at += s[i].size;
  }
  memcpy(head, HET_PLAN_MAGIC, 8);
  het_put32(head + 8, HET_PLAN_FORMAT);
  het_put32(head + 12, (uint32_t)n);
  het_put64(head + 16, at);
  het_put64(head + 24, het_hash64(head + HET_PLAN_HEADER,
                                  (size_t)n * HET_PLAN_ENTRY, 0));
  het_put64(head + 32, het_header_hash(head));
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp)
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  snprintf(tmp, plen + 16, "%s.tmp%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    het_status st = het_error(HET_ERR_IO, "plan '%s': cannot create: %s",
                              path, strerror(errno));
    free(tmp);
    return st;
  }
  uint64_t pos = HET_PLAN_HEADER + (uint64_t)n * HET_PLAN_ENTRY;
  bool ok = het_write_all(f, head, (size_t)pos);
  for (int i = 0; ok && i < n; i++) {
    ok = het_write_zeros(f, offset[i] - pos) &&
         het_write_all(f, s[i].data, (size_t)s[i].size);
    pos = offset[i] + s[i].size;
  }
  int err = ok ? 0 : errno;
  if (fclose(f) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    err = errno;
  }
  het_status st = HET_OK;
  if (!ok) {
    remove(tmp);
    st = het_error(HET_ERR_IO, "plan '%s': cannot write: %s", path,
                   strerror(err ? err : EIO));
  }
  free(tmp);
  return st;
}

/* ---- reading ---- */

bool het_plan_file_sniff(const void *head, size_t n) {
  return n >= 8 && memcmp(head, HET_PLAN_MAGIC, 8) == 0;
}

/* ERR_INVALID_MODEL: "plan 'what': <fmt ...>". */
static het_status het_plan_bad(const char *what, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static het_status het_plan_bad(const char *what, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return het_error(HET_ERR_INVALID_MODEL, "plan '%s': %s", what, msg);
}

/* The checks of plan_file.h over f->base / f->size (section later's
 * hash left for het_plan_file_verify). */
static het_status het_plan_check(het_plan_file *f, const char *what,
                                 unsigned later) {
  const uint8_t *b = f->base;
  if (f->size < HET_PLAN_HEADER || !het_plan_file_sniff(b, f->size))
    return het_plan_bad(what, "not a plan file (no HETRTPLN header)");
  if (het_rd64(b + 32) != het_header_hash(b))
    return het_plan_bad(what, "the header is damaged (hash mismatch)");
  uint32_t format = het_rd32(b + 8), n = het_rd32(b + 12);
  if (format != HET_PLAN_FORMAT)
    return het_plan_bad(what, "plan format %u; this hetrt reads format %d "
                              "(compile the model again with this hetrt)",
                        format, HET_PLAN_FORMAT);
  if (het_rd64(b + 16) != f->size)
    return het_plan_bad(what, "the file is %zu bytes, its header says %llu "
                              "(truncated or extended)",
                        f->size, (unsigned long long)het_rd64(b + 16));
  if (n < 1 || n > HET_PLAN_MAX_SECTIONS ||
      HET_PLAN_HEADER + (uint64_t)n * HET_PLAN_ENTRY > f->size)
    return het_plan_bad(what, "%u sections (1 to %d)", n, HET_PLAN_MAX_SECTIONS);
  const uint8_t *table = b + HET_PLAN_HEADER;
  if (het_rd64(b + 24) != het_hash64(table, (size_t)n * HET_PLAN_ENTRY, 0))
    return het_plan_bad(what, "the section table is damaged (hash mismatch)");
  /* sections follow the table in order; the bytes between are zero */
  uint64_t at = HET_PLAN_HEADER + (uint64_t)n * HET_PLAN_ENTRY;
  for (uint32_t i = 0; i < n; i++) {
    const uint8_t *e = table + i * HET_PLAN_ENTRY;
    uint32_t id = het_rd32(e);
    uint64_t off = het_rd64(e + 8), size = het_rd64(e + 16);
    if (off < at || off > f->size || size > f->size - off ||
        het_rd32(e + 4) != 0)
      return het_plan_bad(what, "section %u lies outside the file", id);
    for (uint64_t k = at; k < off; k++)
      if (b[k])
        return het_plan_bad(what, "the padding before section %u is not "
                                  "zero (damaged)",
                            id);
    at = off + size;
    for (uint32_t k = 0; k < i; k++)
      if (f->sections[k].id == id)
        return het_plan_bad(what, "section %u appears twice", id);
    if (id <= HET_PLAN_MAX_SECTIONS && (later >> id & 1u)) {
      f->unverified |= 1u << id;
      f->unverified_hash[id] = het_rd64(e + 24);
    } else if (het_rd64(e + 24) != het_hash64(b + off, (size_t)size, 0)) {
      return het_plan_bad(what, "section %u is damaged (hash mismatch)", id);
    }
    f->sections[i] = (het_plan_section){id, b + off, size};
    f->n_sections = (int)i + 1;
  }
  if (at != f->size)
    return het_plan_bad(what, "bytes after the last section");
  for (int k = 40; k < HET_PLAN_HEADER; k++)
    if (b[k])
      return het_plan_bad(what, "the header's reserved bytes are not zero");
  return HET_OK;
}

static het_status het_plan_finish(het_plan_file *f, const char *what,
                                  unsigned later, het_plan_file **out) {
  f->what = strdup(what);
  het_status st = f->what ? het_plan_check(f, what, later)
                          : het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  if (st != HET_OK) {
    het_plan_file_close(f);
    return st;
  }
  *out = f;
  return HET_OK;
}

het_status het_plan_file_open(const char *path, unsigned later,
                              het_plan_file **out) {
  int fd;
  uint64_t size;
  HET_TRY(het_open_regular(path, path, &fd, &size));
  if (size > HET_PLAN_MAX_BYTES || size < HET_PLAN_HEADER) {
    close(fd);
    return het_plan_bad(path, "%llu bytes is not a plan file's size",
                        (unsigned long long)size);
  }
  char what[300];
  snprintf(what, sizeof what, "plan '%.280s'", path);
  void *base;
  HET_TRY(het_map_fd(fd, (size_t)size, false, what, &base));
  het_plan_file *f = calloc(1, sizeof *f);
  if (!f) {
    munmap(base, (size_t)size);
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan: out of memory");
  }
  f->base = base;
  f->size = (size_t)size;
  f->mapped = true;
  return het_plan_finish(f, path, later, out);
}

het_status het_plan_file_open_memory(const void *data, size_t size,
                                     const char *what, unsigned later,
                                     het_plan_file **out) {
  if (size > HET_PLAN_MAX_BYTES)
    return het_plan_bad(what, "%zu bytes is too large", size);
  het_plan_file *f = calloc(1, sizeof *f);
  void *copy = NULL;
  if (!f || posix_memalign(&copy, HET_PLAN_WEIGHTS_ALIGN, size ? size : 1)) {
    free(f);
    return het_error(HET_ERR_OUT_OF_MEMORY, "plan '%s': cannot copy %zu "
                                            "bytes",
                     what, size);
  }
  memcpy(copy, data, size);
  f->base = copy;
  f->size = size;
  return het_plan_finish(f, what, later, out);
}

het_status het_plan_file_verify(het_plan_file *f) {
  for (uint32_t id = 1; f->unverified && id <= HET_PLAN_MAX_SECTIONS; id++) {
    if (!(f->unverified >> id & 1u))
      continue;
    const het_plan_section *sec = het_plan_file_find(f, id);
    if (het_hash64(sec->data, (size_t)sec->size, 0) != f->unverified_hash[id])
      return het_plan_bad(f->what, "section %u is damaged (hash mismatch)",
                          id);
    f->unverified &= ~(1u << id);
  }
  return HET_OK;
}

void het_plan_file_close(het_plan_file *f) {
  if (!f)
    return;
  free(f->what);
  if (f->mapped)
    munmap(f->base, f->size);
  else
    free(f->base);
  free(f);
}

const het_plan_section *het_plan_file_find(const het_plan_file *f,
                                           uint32_t id) {
  for (int i = 0; i < f->n_sections; i++)
    if (f->sections[i].id == id)
      return &f->sections[i];
  return NULL;
}
