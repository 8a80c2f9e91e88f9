/* emu_internal.h — the parts of the emulated accelerator: device profile
 * (profile.c), its own memory space (memory.c), streams and engines
 * (stream.c), capability and cost (capability.c), compile and run
 * (kernels.c), the vtable, devices, instances and copies (provider.c).
 * The device level (het_emu_device: profile, memory, engines) is shared by
 * the sessions of an env; an instance (het_emu_state) holds one session's
 * options and fault counters.
 * Only files under src/providers/emu (and its tests) include this header.
 */
#ifndef HET_EMU_INTERNAL_H
#define HET_EMU_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/hostq.h"
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

/* A separate memory space: allocations are named by device addresses that
 * are not host addresses (tagged, non-canonical values); base + k inside a
 * block is an address too.  Resolved to host storage under a mutex.
 * Thread-safe. */
typedef struct het_emu_memory het_emu_memory;

het_status het_emu_memory_create(const char *device, size_t capacity,
                                 het_emu_memory **out);
/* Frees every block still allocated.  Accepts NULL. */
void het_emu_memory_destroy(het_emu_memory *m);
/* ERR_CAPACITY naming the device and the bytes when the device is full. */
het_status het_emu_memory_alloc(het_emu_memory *m, size_t nbytes,
                                void **handle);
/* Frees the block starting at addr; ignores addresses that are not the
 * start of a live block (there is no status to return). */
void het_emu_memory_free(het_emu_memory *m, const void *handle);
/* The storage behind [addr, addr + nbytes), which must lie in one live
 * block.  Borrowed: valid until the block is freed. */
het_status het_emu_memory_resolve(het_emu_memory *m, const void *handle,
                                  size_t nbytes, void **ptr);
/* Bytes currently charged and the high-water mark. */
void het_emu_memory_usage(het_emu_memory *m, size_t *used, size_t *peak);
/* Whether the value carries the emu handle tag (a cheap shape check). */
bool het_emu_handle_is_tagged(const void *handle);

/* ---- devices, engines and streams (stream.c) ------------------------------ */

/* The engines of a device: one runs kernels, one copies host to device
 * (and device to device), one copies device to host.  Work from every
 * stream of the device takes its engine for as long as it runs (and, in
 * timed mode, for its modelled time), so streams overlap only across
 * engines, as on a GPU with two copy engines. */
enum { HET_EMU_ENGINE_COMPUTE, HET_EMU_ENGINE_IN, HET_EMU_ENGINE_OUT,
       HET_EMU_ENGINES };

typedef struct het_emu_device {
  het_emu_profile profile;
  het_emu_memory *mem;
  pthread_mutex_t engine[HET_EMU_ENGINES];
  /* Fault injection of allocations (memory is the device's): the
   * allocation numbered fail_alloc_at (counted from 1 over the device's
   * life) fails; 0 = none.  A session's emu.fail_alloc=N sets it N
   * allocations ahead of the count when the session is created. */
  atomic_long n_alloc, fail_alloc_at;
} het_emu_device;

typedef enum het_emu_mode { HET_EMU_FAST = 0, HET_EMU_TIMED = 1 } het_emu_mode;

enum { HET_EMU_FAULT_ALLOC, HET_EMU_FAULT_KERNEL, HET_EMU_FAULT_COPY,
       HET_EMU_FAULT_EVENT, HET_EMU_FAULT_KINDS };

/* One session's instance. */
typedef struct het_emu_state {
  het_emu_device *dev;
  const het_device *self;              /* the core's object for dev */
  het_emu_mode mode;
  int threads;                         /* passed to the kernels */
  unsigned jitter_us;
  long fail_at[HET_EMU_FAULT_KINDS];   /* 1-based op number, 0 = never */
  atomic_long op_count[HET_EMU_FAULT_KINDS];
} het_emu_state;

/* A stream: a host queue (inline or served by its own thread) whose jobs
 * take the device's engines; seed drives its jitter. */
typedef struct het_emu_stream {
  het_hostq *q;
  het_emu_state *s;
  unsigned seed;
} het_emu_stream;

/* Runs work(arg) on engine e of s's device, holding it; in timed mode the
 * engine stays held until pace_s (+ up to jitter_us of jitter) after it was
 * taken, modelling the device time.  t0/t1 (may be NULL) receive when the
 * engine was taken and given back (monotonic seconds). */
het_status het_emu_engine_run(het_emu_stream *st, int engine, double pace_s,
                              het_status (*work)(void *arg), void *arg,
                              double *t0, double *t1);

het_status het_emu_stream_create(void *state, unsigned flags, void **stream);
void het_emu_stream_destroy(void *state, void *stream);
het_status het_emu_stream_synchronize(void *state, void *stream);
het_status het_emu_event_create(void *state, void **event);
void het_emu_event_destroy(void *state, void *event);
het_status het_emu_event_record(void *state, void *event, void *stream);
het_status het_emu_stream_wait(void *state, void *stream,
                               const het_event_ref *event);
het_status het_emu_event_synchronize(void *state, void *event);
het_status het_emu_event_query(void *state, void *event, bool *done);
het_status het_emu_host_func(void *state, void *stream, void (*fn)(void *),
                             void *arg);

/* Counts one operation of kind; returns its 1-based number in *nth and
 * true when it is the one to fail (fault injection). */
bool het_emu_fault_hit(het_emu_state *s, int kind, long *nth);

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
het_status het_emu_run_async(void *state, void *compiled, void *stream,
                             const het_kernel_io *io);
het_status het_emu_compiled_scratch(void *state, void *compiled,
                                    const het_kernel_io *io, size_t *bytes);
void het_emu_destroy_compiled(void *state, void *compiled);

#endif
