/* provider.c — the emulated accelerator's vtable: creation from a device
 * profile and options (mode, fault injection, jitter), device facts, and the
 * memory and copy slots (copies run on the copy-engine thread, paced to the
 * link in timed mode; staging memory and asynchronous copies in staging.c).  Capability/cost live in capability.c, compile/run
 * in kernels.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "providers/emu/emu.h"
#include "providers/emu/emu_internal.h"

/* ---- options ------------------------------------------------------------ */

static het_status het_emu_option_count(const char *key, const char *value,
                                       long max, long *out) {
  char *end;
  long v = value ? strtol(value, &end, 10) : -1;
  if (!value || end == value || *end != '\0' || v < 0 || v > max)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: option %s=%s: expected an integer in [0, %ld]", key,
                     value ? value : "(null)", max);
  *out = v;
  return HET_OK;
}

static het_status het_emu_option(het_emu_state *s, const char *key,
                                 const char *value) {
  static const char *const fault_keys[HET_EMU_FAULT_KINDS] = {
      "fail_alloc", "fail_kernel", "fail_copy"};
  for (int k = 0; k < HET_EMU_FAULT_KINDS; k++)
    if (strcmp(key, fault_keys[k]) == 0)
      return het_emu_option_count(key, value, 1000000000L, &s->fail_at[k]);
  if (strcmp(key, "jitter_us") == 0) {
    long v = 0;
    HET_TRY(het_emu_option_count(key, value, 10000000L, &v));
    s->jitter_us = (unsigned)v;
    return HET_OK;
  }
  if (strcmp(key, "mode") == 0) {
    if (value && strcmp(value, "fast") == 0)
      s->mode = HET_EMU_FAST;
    else if (value && strcmp(value, "timed") == 0)
      s->mode = HET_EMU_TIMED;
    else
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "emu: option mode=%s: expected fast or timed",
                       value ? value : "(null)");
    return HET_OK;
  }
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "emu: unknown option '%s' (known: mode, fail_alloc, "
                   "fail_kernel, fail_copy, jitter_us)",
                   key ? key : "(null)");
}

/* ---- create / destroy ---------------------------------------------------- */

static void het_emu_destroy(void *state) {
  het_emu_state *s = state;
  if (!s)
    return;
  het_emu_stream_destroy(s->compute);
  het_emu_stream_destroy(s->copy);
  het_emu_staging_deinit(s);
  pthread_mutex_destroy(&s->staging_lock);
  het_emu_memory_destroy(s->mem);
  het_emu_profile_deinit(&s->profile);
  free(s);
}

static het_status het_emu_create(const het_provider_config *config,
                                 void **state) {
  het_emu_state *s = calloc(1, sizeof *s);
  het_status st = HET_OK;
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  if (pthread_mutex_init(&s->staging_lock, NULL) != 0) {
    free(s);
    return het_error(HET_ERR_INTERNAL, "emu: cannot create a mutex");
  }
  s->own_device = (het_device){&het_emu_provider, s, -1};
  atomic_init(&s->self, NULL);
  for (int k = 0; k < HET_EMU_FAULT_KINDS; k++)
    atomic_init(&s->op_count[k], 0);
  s->threads = config && config->threads > 0 ? config->threads : 1;
  if (config && config->profile_path)
    st = het_emu_profile_load(config->profile_path, &s->profile);
  else
    het_emu_profile_default(&s->profile);
  for (int i = 0; st == HET_OK && config && i < config->n_options; i++)
    st = het_emu_option(s, config->option_keys[i], config->option_values[i]);
  if (st == HET_OK)
    st = het_emu_memory_create(s->profile.name, s->profile.memory_capacity,
                               &s->mem);
  if (st == HET_OK)
    st = het_emu_stream_create("emu-compute", s->jitter_us, &s->compute);
  if (st == HET_OK)
    st = het_emu_stream_create("emu-copy", s->jitter_us, &s->copy);
  if (st != HET_OK) {
    het_emu_destroy(s);
    return st;
  }
  *state = s;
  return HET_OK;
}

/* ---- shared helpers ------------------------------------------------------ */

bool het_emu_fault_hit(het_emu_state *s, int kind, long *nth) {
  long n = atomic_fetch_add(&s->op_count[kind], 1) + 1;
  if (nth)
    *nth = n;
  return s->fail_at[kind] > 0 && n == s->fail_at[kind];
}

bool het_emu_tensor_is_here(const het_emu_state *s, const het_tensor *t) {
  return t && t->device && t->device->state == (const void *)s &&
         t->device->vt == &het_emu_provider;
}

static het_status het_emu_get_device_info(void *state, het_device_info *out) {
  het_emu_state *s = state;
  het_emu_profile_device_info(&s->profile, out);
  return HET_OK;
}

/* ---- memory and copies --------------------------------------------------- */

static het_status het_emu_alloc(void *state, size_t nbytes, void **handle) {
  het_emu_state *s = state;
  long nth;
  if (het_emu_fault_hit(s, HET_EMU_FAULT_ALLOC, &nth))
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "emu: injected fault: allocation #%ld (%zu bytes) on "
                     "device '%s'",
                     nth, nbytes, s->profile.name);
  return het_emu_memory_alloc(s->mem, nbytes, handle);
}

static void het_emu_free(void *state, void *handle) {
  het_emu_state *s = state;
  het_emu_memory_free(s->mem, handle);
}

typedef struct het_emu_copy_job {
  het_emu_state *s;
  void *dst;
  const void *src;
  size_t nbytes;
  const char *direction;
} het_emu_copy_job;

static het_status het_emu_copy_exec(void *arg) {
  het_emu_copy_job *c = arg;
  long nth;
  if (het_emu_fault_hit(c->s, HET_EMU_FAULT_COPY, &nth))
    return het_error(HET_ERR_IO,
                     "emu: injected fault: copy #%ld (%s, %zu bytes) on "
                     "device '%s'",
                     nth, c->direction, c->nbytes, c->s->profile.name);
  if (c->nbytes)
    memcpy(c->dst, c->src, c->nbytes);
  return HET_OK;
}

/* Runs one copy on the copy engine and waits for it. */
static het_status het_emu_copy_run(het_emu_state *s, void *dst,
                                   const void *src, size_t nbytes,
                                   const char *direction) {
  het_emu_copy_job c = {s, dst, src, nbytes, direction};
  het_emu_job job = {.fn = het_emu_copy_exec, .arg = &c};
  if (s->mode == HET_EMU_TIMED)
    job.pace_s = s->profile.link_latency +
                 (double)nbytes / s->profile.link_bandwidth;
  het_emu_stream_submit(s->copy, &job);
  return het_emu_stream_wait(s->copy, &job);
}

static het_status het_emu_copy_from_host(void *state, void *dst_handle,
                                         const void *src, size_t nbytes) {
  het_emu_state *s = state;
  void *dst;
  if (!src && nbytes)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: copy to device '%s' from NULL", s->profile.name);
  HET_TRY(het_emu_memory_resolve(s->mem, dst_handle, nbytes, &dst));
  return het_emu_copy_run(s, dst, src, nbytes, "host to device");
}

static het_status het_emu_copy_to_host(void *state, void *dst,
                                       const void *src_handle, size_t nbytes) {
  het_emu_state *s = state;
  void *src;
  if (!dst && nbytes)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu: copy from device '%s' to NULL", s->profile.name);
  HET_TRY(het_emu_memory_resolve(s->mem, src_handle, nbytes, &src));
  return het_emu_copy_run(s, dst, src, nbytes, "device to host");
}

const het_provider_vtable het_emu_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "emu",
    .device_kind = HET_DEVICE_EMU,
    .create = het_emu_create,
    .destroy = het_emu_destroy,
    .get_capability = het_emu_get_capability,
    .estimate_cost = het_emu_estimate_cost,
    .compile = het_emu_compile,
    .run = het_emu_run,
    .destroy_compiled = het_emu_destroy_compiled,
    .get_device_info = het_emu_get_device_info,
    .alloc = het_emu_alloc,
    .free = het_emu_free,
    .copy_from_host = het_emu_copy_from_host,
    .copy_to_host = het_emu_copy_to_host,
    .alloc_host = het_emu_alloc_host,
    .free_host = het_emu_free_host,
    .copy_submit = het_emu_copy_submit,
    .copy_wait = het_emu_copy_wait,
};
