/* emu_internal.h — the parts of the emulated accelerator and the state that
 * ties them together: device profile (profile.c), handle-based memory space
 * (memory.c), FIFO streams served by threads (stream.c), capability and cost
 * (capability.c), compile/run (kernels.c), staging memory and asynchronous
 * copies (staging.c), vtable and options (provider.c).
 * Only files under src/providers/emu (and its tests) include this header.
 */
#ifndef HET_EMU_INTERNAL_H
#define HET_EMU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ir.h"
#include "hetrt/provider.h"

/* ---- device profile (profile.c) ---------------------------------------- */

#define HET_EMU_NAME_CAP 64

/* A device model.  Invariants: rates > 0; times >= 0; capacity 0 means
 * unlimited; supported_ops == NULL means every op with a CPU kernel. */
typedef struct het_emu_profile {
  char name[HET_EMU_NAME_CAP];
  size_t memory_capacity;
  double peak_flops_f32, peak_flops_f16, peak_flops_i8;
  double memory_bandwidth, link_bandwidth; /* bytes/s */
  double link_latency, launch_overhead;    /* seconds */
  char **supported_ops; /* "Op" or "domain.Op"; NULL = all */
  int n_supported_ops;
  uint64_t unsupported_dtypes; /* bit d for het_dtype d */
  het_layout preferred_layout; /* of rank-4 tensors in device memory */
  het_dtype float32_as;        /* float32 kept as this; UNDEFINED = as is */
} het_emu_profile;

/* The built-in profile used when no profile path is given. */
void het_emu_profile_default(het_emu_profile *p);
/* Loads path over the defaults.  ERR_IO when the file cannot be read,
 * ERR_INVALID_ARGUMENT naming the file, line and key when it is malformed.
 * On failure *p is left empty (deinit-safe). */
het_status het_emu_profile_load(const char *path, het_emu_profile *p);
void het_emu_profile_deinit(het_emu_profile *p);
/* Whether the profile lists the op (always true when it lists none). */
bool het_emu_profile_has_op(const het_emu_profile *p, const char *domain,
                            const char *op_type);
bool het_emu_profile_dtype_ok(const het_emu_profile *p, het_dtype t);
void het_emu_profile_device_info(const het_emu_profile *p,
                                 het_device_info *out);

/* ---- memory space (memory.c) -------------------------------------------- */

/* A separate memory space: allocations are named by handles that are not
 * host addresses (tagged, non-canonical values), resolved through a table
 * under a mutex.  Thread-safe. */
typedef struct het_emu_memory het_emu_memory;

het_status het_emu_memory_create(const char *device, size_t capacity,
                                 het_emu_memory **out);
/* Frees every block still allocated.  Accepts NULL. */
void het_emu_memory_destroy(het_emu_memory *m);
/* ERR_CAPACITY naming the device and the bytes when the device is full. */
het_status het_emu_memory_alloc(het_emu_memory *m, size_t nbytes,
                                void **handle);
/* Ignores handles that are not live (there is no status to return). */
void het_emu_memory_free(het_emu_memory *m, const void *handle);
/* The storage behind a live handle, checked to hold at least nbytes.
 * Borrowed: valid until the handle is freed. */
het_status het_emu_memory_resolve(het_emu_memory *m, const void *handle,
                                  size_t nbytes, void **ptr);
/* Bytes currently charged and the high-water mark. */
void het_emu_memory_usage(het_emu_memory *m, size_t *used, size_t *peak);
/* Whether the value carries the emu handle tag (a cheap shape check). */
bool het_emu_handle_is_tagged(const void *handle);

/* ---- streams (stream.c) -------------------------------------------------- */

typedef het_status (*het_emu_job_fn)(void *arg);

/* One unit of work on a stream.  The submitter fills fn, arg and pace_s and
 * keeps the job alive until het_emu_stream_wait returns for it. */
typedef struct het_emu_job {
  het_emu_job_fn fn;
  void *arg;
  double pace_s; /* > 0: the job takes at least this long (timed mode) */
  /* written by the stream */
  het_status status;
  bool done;
  char message[512];
  struct het_emu_job *next;
} het_emu_job;

/* A FIFO queue served by one thread, in submission order.  jitter_us > 0
 * adds a random delay in [0, jitter_us] microseconds to each paced job. */
typedef struct het_emu_stream het_emu_stream;

het_status het_emu_stream_create(const char *name, unsigned jitter_us,
                                 het_emu_stream **out);
/* Finishes the queued jobs, then stops the thread.  Accepts NULL. */
void het_emu_stream_destroy(het_emu_stream *s);
void het_emu_stream_submit(het_emu_stream *s, het_emu_job *job);
/* Blocks (no spinning) until job is done; returns its status and re-raises
 * its message on the calling thread. */
het_status het_emu_stream_wait(het_emu_stream *s, het_emu_job *job);

/* ---- provider state (provider.c) ----------------------------------------- */

typedef enum het_emu_mode { HET_EMU_FAST = 0, HET_EMU_TIMED = 1 } het_emu_mode;

enum { HET_EMU_FAULT_ALLOC, HET_EMU_FAULT_KERNEL, HET_EMU_FAULT_COPY,
       HET_EMU_FAULT_KINDS };

#define HET_EMU_STAGING_POOL 8 /* staging blocks kept for reuse */

typedef struct het_emu_state {
  het_emu_profile profile;
  het_emu_mode mode;
  int threads;                         /* passed to CPU kernels */
  unsigned jitter_us;
  long fail_at[HET_EMU_FAULT_KINDS];   /* 1-based op number, 0 = never */
  atomic_long op_count[HET_EMU_FAULT_KINDS];
  het_emu_memory *mem;
  het_emu_stream *compute;             /* kernel jobs */
  het_emu_stream *copy;                /* copy engine */
  pthread_mutex_t staging_lock;        /* guards staging_free */
  void *staging_free[HET_EMU_STAGING_POOL]; /* freed staging blocks */
  int n_staging_free;
  /* The session's het_device for this state, learned from the first input
   * tensor that lives here; own_device until then. */
  _Atomic(const het_device *) self;
  het_device own_device;
} het_emu_state;

/* Counts one operation of kind; returns its 1-based number in *nth and
 * true when it is the one to fail (fault injection). */
bool het_emu_fault_hit(het_emu_state *s, int kind, long *nth);
/* Whether t lives in this emu's memory. */
bool het_emu_tensor_is_here(const het_emu_state *s, const het_tensor *t);

/* ---- staging memory and asynchronous copies (staging.c, ABI 2) ----------- */

het_status het_emu_alloc_host(void *state, size_t nbytes, void **ptr);
void het_emu_free_host(void *state, void *ptr);
het_status het_emu_copy_submit(void *state, het_copy_direction direction,
                               void *handle, size_t offset, void *host,
                               size_t nbytes, void **ticket);
het_status het_emu_copy_wait(void *state, void *ticket);
/* Frees the pooled staging blocks (at destroy). */
void het_emu_staging_deinit(het_emu_state *s);

/* ---- capability and cost (capability.c) ---------------------------------- */

/* Whether the node may run on this emu; why gets the reason either way. */
bool het_emu_node_check(const het_emu_state *s, const het_graph *g,
                        const het_node *node, char *why, size_t why_cap);
het_status het_emu_get_capability(void *state, const het_graph *graph,
                                  het_claim *claims);
het_status het_emu_estimate_cost(void *state, const het_graph *graph,
                                 int node, double *seconds);

/* ---- kernels (kernels.c) ------------------------------------------------- */

het_status het_emu_compile(void *state, const het_graph *graph,
                           const int *nodes, int n_nodes, void **out);
het_status het_emu_run(void *state, void *compiled, het_run_ctx *ctx);
void het_emu_destroy_compiled(void *state, void *compiled);

#endif
