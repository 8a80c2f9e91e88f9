/* emu_helpers.h — helpers shared by the emu provider's test suites
 * (test_emu.c, test_emu_run.c): temporary profiles, creating an emu
 * directly through its vtable, and a monotonic clock.
 */
#ifndef HET_TESTS_EMU_HELPERS_H
#define HET_TESTS_EMU_HELPERS_H

#include <stddef.h>

#include "hetrt/hetrt.h"

/* Writes text to a fresh temporary file; path receives its name. */
void write_profile(const char *text, char *path, size_t cap);

/* Creates an emu with profile_path and "k=v" options (NULL-terminated). */
het_status emu_create(const char *profile_path, const char *const *opts,
                      void **state);

/* Monotonic seconds. */
double now_s(void);

#endif
