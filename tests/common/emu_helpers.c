/* emu_helpers.c — the helpers declared in emu_helpers.h. */
#include "common/emu_helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/ep.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"

void write_profile(const char *text, char *path, size_t cap) {
  snprintf(path, cap, "/tmp/hetrt_emu_XXXXXX");
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  size_t n = strlen(text);
  ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
  close(fd);
}

static het_status emu_instance(emu_ctx *e, const char *const *opts,
                               het_ep *out) {
  const char *keys[8], *vals[8];
  char buf[8][64];
  int n = 0;
  for (; opts && opts[n]; n++) {
    ck_assert_int_lt(n, 8);
    snprintf(buf[n], sizeof buf[n], "%s", opts[n]);
    char *eq = strchr(buf[n], '=');
    ck_assert_ptr_nonnull(eq);
    *eq = '\0';
    keys[n] = buf[n];
    vals[n] = eq + 1;
  }
  het_provider_config cfg = {.threads = 1, .n_options = n,
                             .option_keys = keys, .option_values = vals,
                             .device = &e->dev};
  *out = (het_ep){.vt = &het_emu_provider, .device = &e->dev};
  het_status st = het_emu_provider.create(&cfg, &out->state);
  if (st != HET_OK)
    out->state = NULL;
  return st;
}

het_status emu_open(const char *profile_path, const char *const *opts,
                    emu_ctx *e) {
  memset(e, 0, sizeof *e);
  e->dev.vt = &het_emu_provider;
  e->dev.kind = HET_DEVICE_EMU;
  het_status st = het_emu_provider.device_open(0, profile_path, &e->dev.state,
                                               &e->dev.info, e->dev.name,
                                               sizeof e->dev.name);
  if (st != HET_OK) {
    e->dev.state = NULL;
    return st;
  }
  st = emu_instance(e, opts, &e->ep);
  if (st != HET_OK) {
    het_emu_provider.device_close(e->dev.state);
    e->dev.state = NULL;
  }
  return st;
}

het_status emu_add_instance(emu_ctx *e, const char *const *opts,
                            het_ep *out) {
  return emu_instance(e, opts, out);
}

void emu_close(emu_ctx *e) {
  if (e->ep.state)
    het_emu_provider.destroy(e->ep.state);
  if (e->dev.state)
    het_emu_provider.device_close(e->dev.state);
  memset(e, 0, sizeof *e);
}

het_status emu_put(emu_ctx *e, void *dev_addr, const void *host, size_t n) {
  return het_ep_copy_now(&e->ep, dev_addr, &e->dev, host, NULL, n);
}

het_status emu_get(emu_ctx *e, void *host, const void *dev_addr, size_t n) {
  return het_ep_copy_now(&e->ep, host, NULL, dev_addr, &e->dev, n);
}

size_t emu_used(emu_ctx *e) {
  size_t used;
  het_emu_memory_usage(((het_emu_device *)e->dev.state)->mem, &used, NULL);
  return used;
}

double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
