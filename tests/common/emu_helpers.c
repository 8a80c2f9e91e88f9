/* emu_helpers.c — the helpers declared in emu_helpers.h. */
#include "common/emu_helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "providers/emu/emu.h"

/* Writes text to a fresh temporary file; path receives its name. */
void write_profile(const char *text, char *path, size_t cap) {
  snprintf(path, cap, "/tmp/hetrt_emu_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  size_t n = strlen(text);
  ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
  close(fd);
}

/* Creates an emu with profile_path and "k=v" options (NULL-terminated). */
het_status emu_create(const char *profile_path, const char *const *opts,
                      void **state) {
  const char *keys[8], *vals[8];
  char buf[8][64];
  int n = 0;
  for (; opts && opts[n]; n++) {
    snprintf(buf[n], sizeof buf[n], "%s", opts[n]);
    char *eq = strchr(buf[n], '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    keys[n] = buf[n];
    vals[n] = eq + 1;
  }
  het_provider_config cfg = {.threads = 1, .profile_path = profile_path,
                             .n_options = n, .option_keys = keys,
                             .option_values = vals};
  return het_emu_provider.create(&cfg, state);
}

double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
