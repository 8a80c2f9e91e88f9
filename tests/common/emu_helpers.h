/* emu_helpers.h — helpers shared by the emu provider's test suites
 * (test_emu.c, test_emu_run.c): temporary profiles, an emu device and one
 * instance on it opened directly through the vtable (as an env and a
 * session would), copies through the core's stream wrappers, and a
 * monotonic clock.
 */
#ifndef HET_TESTS_EMU_HELPERS_H
#define HET_TESTS_EMU_HELPERS_H

#include <stddef.h>

#include "hetrt/provider.h"

/* Writes text to a fresh temporary file; path receives its name. */
void write_profile(const char *text, char *path, size_t cap);

/* An emu device (device_open) and one instance on it (create). */
typedef struct emu_ctx {
  het_device dev;
  het_ep ep;
} emu_ctx;

/* Opens device 0 of profile_path (NULL: the built-in profile) and creates
 * an instance with "k=v" options (NULL-terminated list or NULL).  On
 * failure nothing is left open and e->ep.state is NULL. */
het_status emu_open(const char *profile_path, const char *const *opts,
                    emu_ctx *e);
/* Another instance on e's device (a second session), into out. */
het_status emu_add_instance(emu_ctx *e, const char *const *opts, het_ep *out);
void emu_close(emu_ctx *e);

/* Synchronous copies host <-> e's device memory (through a stream). */
het_status emu_put(emu_ctx *e, void *dev_addr, const void *host, size_t n);
het_status emu_get(emu_ctx *e, void *host, const void *dev_addr, size_t n);
/* Bytes of e's device memory in use now. */
size_t emu_used(emu_ctx *e);

/* Monotonic seconds. */
double now_s(void);

#endif
