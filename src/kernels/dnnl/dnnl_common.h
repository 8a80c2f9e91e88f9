/* dnnl_common.h — what the oneDNN-backed kernels (linalg_dnnl.c for Conv
 * and MatMul, gemm_dnnl.c for Gemm) share: the process's CPU engine, a
 * built primitive with the memory descriptors it was created for, buffers
 * in a descriptor's layout, reorders, and execution with a per-thread stream
 * and scratchpad (so one primitive serves several threads at once).
 */
#ifndef HET_CPU_DNNL_COMMON_H
#define HET_CPU_DNNL_COMMON_H

#include <stdbool.h>
#include <stdint.h>

#include <dnnl.h>

#include "kernels/kernel.h"

/* The CPU engine, created on first use; NULL when oneDNN cannot start. */
dnnl_engine_t het_dnnl_engine(void);

/* A primitive and the layouts it expects.  w holds the weights in w_md's
 * layout (who owns it is the caller's business). */
typedef struct het_dnnl_prim {
  dnnl_primitive_t prim;
  dnnl_memory_desc_t src_md, dst_md, w_md, b_md, scratch_md;
  void *w;
  bool w_borrowed; /* w is a plan's preset (presets.h): not freed here */
  uint64_t id; /* unique per het_dnnl_prim_init: keys per-thread memories */
} het_dnnl_prim;

/* Fills p's descriptors from pd and creates the primitive; destroys pd. */
bool het_dnnl_prim_init(het_dnnl_prim *p, dnnl_primitive_desc_t pd);

/* Runs p on src/bias/dst (bias may be NULL) and p->w. */
bool het_dnnl_prim_execute(const het_dnnl_prim *p, void *src, void *bias,
                           void *dst);

/* p->w for p->w_md from user weights w (laid out as user): a plan's
 * preset when the compile has one for this layout (presets.h; p->w
 * borrowed, nothing reordered), else a new buffer w is reordered into. */
bool het_dnnl_weights_prepare(het_dnnl_prim *p, const dnnl_memory_desc_t *user,
                              const void *w);
/* Only the preset half: true (p->w borrowed) when the compile has one. */
bool het_dnnl_weights_prepare_preset(het_dnnl_prim *p);
/* Frees p->w unless it is borrowed. */
void het_dnnl_weights_free(het_dnnl_prim *p);
/* p's weights for a plan (kernel.h state_weights), when it has any. */
void het_dnnl_prim_weights(const het_dnnl_prim *p, het_kernel_weight_fn fn,
                           void *ctx);

/* An attribute with user-provided scratchpad; NULL on failure. */
dnnl_primitive_attr_t het_dnnl_scratch_attr(void);

/* Ends building attr with post-ops po (destroyed, may be NULL): attr, or
 * NULL (attr destroyed) when ok is false. */
dnnl_primitive_attr_t het_dnnl_attr_finish(dnnl_primitive_attr_t attr,
                                           dnnl_post_ops_t po, bool ok);

/* A 64-byte aligned buffer of md's size (free with free); NULL on failure. */
void *het_dnnl_alloc(const dnnl_memory_desc_t *md);
/* malloc for what a primitive's build needs. */
void *het_dnnl_malloc(size_t n);

/* Builders return false both when oneDNN refuses a shape (the kernel then
 * falls back to the reference code, which is right) and when memory runs
 * out (which must be an error: falling back would change the results and
 * hide the fault).  het_dnnl_alloc, het_dnnl_malloc and a primitive whose
 * creation oneDNN fails for want of memory note the second case on the
 * calling thread; het_dnnl_oom_take says whether it happened since the
 * last call and forgets it.  Call it before a build (to start clean) and
 * after one that failed. */
bool het_dnnl_oom_take(void);
/* Notes the second case for a build's own allocation. */
void het_dnnl_oom_note(void);

/* This thread's staging buffer number slot (0 .. HET_DNNL_STAGE_SLOTS-1),
 * 64-byte aligned, of at least n bytes: valid until the next call for that
 * slot on this thread.  NULL when out of memory. */
#define HET_DNNL_STAGE_SLOTS 3
void *het_dnnl_stage(int slot, size_t n);

/* Runs the reorder primitive r from (fmd, from) to (tmd, to); one made
 * in user scratchpad mode gets the thread's scratchpad. */
bool het_dnnl_reorder_run(dnnl_primitive_t r, const dnnl_memory_desc_t *fmd,
                          const void *from, const dnnl_memory_desc_t *tmd,
                          void *to);

/* *r = a reorder primitive from -> to (caller destroys), or NULL when the
 * layouts already agree. */
bool het_dnnl_reorder_create(const dnnl_memory_desc_t *from,
                             const dnnl_memory_desc_t *to,
                             dnnl_primitive_t *r);

/* *out = x (laid out as user) in the layout a primitive wants (to): x
 * itself when r is NULL, else x reordered by r into this thread's staging
 * slot 0.  OUT_OF_MEMORY without the staging, ERR_KERNEL when the reorder
 * fails (messages set). */
het_status het_dnnl_stage_src(dnnl_primitive_t r,
                              const dnnl_memory_desc_t *user, void *x,
                              const dnnl_memory_desc_t *to, void **out);

/* Reorders once from (fmd, from) to (tmd, to) with a temporary primitive. */
bool het_dnnl_reorder(const dnnl_memory_desc_t *fmd, const void *from,
                      const dnnl_memory_desc_t *tmd, void *to);

#endif
