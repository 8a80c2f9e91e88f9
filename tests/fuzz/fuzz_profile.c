/* fuzz_profile.c — libFuzzer target: bytes as a YAML device profile
 * (configs/devices/README.md) → each of its parsers: the `provider:`
 * scan (providers/profiles.c), the emulated device's profile
 * (providers/emu/profile.c) and the device facts (core/devprofile.c, read
 * for the CPU's profile and for a CUDA one).
 * They read files, so each input is written to a file in /dev/shm (or
 * $TMPDIR when /dev/shm is absent) first.
 * Invariant checked: no crash, hang, leak or sanitizer report on any
 * input; a clean error status is a pass.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/devprofile.h"
#include "hetrt/hetrt.h"
#include "providers/cpu/profile.h"
#include "providers/emu/emu_internal.h"
#include "providers/registry.h"

const char *__asan_default_options(void);
const char *__asan_default_options(void) {
  return "allocator_may_return_null=1:max_allocation_size_mb=128:"
         "detect_leaks=1";
}

static char g_path[256];

static int fuzz_write(const uint8_t *data, size_t size) {
  if (!g_path[0]) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                      : getenv("TMPDIR")             ? getenv("TMPDIR")
                                                     : "/tmp";
    snprintf(g_path, sizeof g_path, "%s/hetrt-fuzz-profile.%ld.yaml", dir,
             (long)getpid());
  }
  FILE *f = fopen(g_path, "wb");
  if (!f)
    return -1;
  size_t put = fwrite(data, 1, size, f);
  return fclose(f) == 0 && put == size ? 0 : -1;
}

static void fuzz_cleanup(void) {
  if (g_path[0])
    unlink(g_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int registered;
  if (!registered)
    registered = atexit(fuzz_cleanup) == 0;
  if (fuzz_write(data, size) != 0)
    __builtin_trap(); /* the harness itself is broken */
  char name[64];
  (void)het_profile_provider(g_path, name, sizeof name);
  het_emu_profile p;
  if (het_emu_profile_load(g_path, &p) == HET_OK)
    het_emu_profile_deinit(&p);
  het_device_info info;
  (void)het_cpu_device_info_load(g_path, &info);
  het_device_profile dp;
  (void)het_device_profile_load(g_path, "cuda", &dp);
  return 0;
}
