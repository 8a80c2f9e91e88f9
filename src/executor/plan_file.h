/* plan_file.h — the container of an ahead-of-time plan (.hplan,
 * docs/plan-format.md): a 64-byte header, a table of sections and the
 * sections, each section checked by its XXH64 hash.  A file is read
 * through one read-only mapping, so a section (the weights) can be used in
 * place for as long as the file stays open.
 * Invariant: an opened plan file has passed every check (magic, format,
 * sizes, bounds, one section per id, hashes); readers of its sections need
 * only check their own contents.
 */
#ifndef HET_EXECUTOR_PLAN_FILE_H
#define HET_EXECUTOR_PLAN_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define HET_PLAN_MAGIC "HETRTPLN"
#define HET_PLAN_FORMAT 1
#define HET_PLAN_MAX_SECTIONS 16
/* Sections start on this boundary; the weights on a page. */
#define HET_PLAN_ALIGN 64
#define HET_PLAN_WEIGHTS_ALIGN 4096

typedef enum het_plan_section_id {
  HET_PSEC_META = 1,        /* text: what made the plan, the options */
  HET_PSEC_FINGERPRINT = 2, /* text: the machine and provider versions */
  HET_PSEC_GRAPH = 3,       /* ONNX ModelProto of the optimized graph */
  HET_PSEC_PARTITION = 4,   /* text: every model node's provider and why */
  HET_PSEC_KERNELS = 5,     /* the providers' compiled blobs */
  HET_PSEC_WEIGHTS = 6,     /* raw initializer data, 64-byte aligned */
} het_plan_section_id;

typedef struct het_plan_section {
  uint32_t id;
  const void *data;
  uint64_t size;
} het_plan_section;

/* Writes sections (n <= HET_PLAN_MAX_SECTIONS, distinct ids) to path
 * through a temporary file renamed into place, so a reader never sees a
 * partial plan.  ERR_IO naming path and the system's reason. */
het_status het_plan_file_write(const char *path, const het_plan_section *s,
                               int n);

typedef struct het_plan_file {
  void *base;        /* the mapping (or a private copy) of the whole file */
  size_t size;
  bool mapped;       /* base came from mmap (else malloc) */
  int n_sections;
  het_plan_section sections[HET_PLAN_MAX_SECTIONS];
  unsigned unverified; /* bit id: a section whose hash
                          het_plan_file_verify has still to check */
  uint64_t unverified_hash[HET_PLAN_MAX_SECTIONS + 1]; /* by id */
  char *what;        /* names the file in messages */
} het_plan_file;

/* Opens and checks the plan file at path (caller owns *out:
 * het_plan_file_close).  ERR_INVALID_MODEL naming path and what is wrong
 * (not a plan file, another format version, truncated, a section out of
 * bounds, a hash mismatch); ERR_IO when it cannot be read.  The hashes
 * of the sections whose bit (1u << id) is in later are left for
 * het_plan_file_verify, so large sections can be checked off the caller's
 * path before they are used. */
het_status het_plan_file_open(const char *path, unsigned later,
                              het_plan_file **out);
/* The same over a copy of size bytes at data (what names it). */
het_status het_plan_file_open_memory(const void *data, size_t size,
                                     const char *what, unsigned later,
                                     het_plan_file **out);
/* Checks the hashes left for later (at most once; HET_OK after that). */
het_status het_plan_file_verify(het_plan_file *f);
void het_plan_file_close(het_plan_file *f);

/* Section id of f, or NULL when f has none. */
const het_plan_section *het_plan_file_find(const het_plan_file *f,
                                           uint32_t id);

/* Whether the n bytes at head start like a plan file. */
bool het_plan_file_sniff(const void *head, size_t n);

/* XXH64 of n bytes at data with seed. */
uint64_t het_hash64(const void *data, size_t n, uint64_t seed);

#endif
