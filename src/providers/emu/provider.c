/* provider.c — the emulated accelerator's vtable (ABI 3): devices opened
 * from a device profile (memory space and engines, shared by the sessions
 * of an env), instances with their options (mode, fault injection, jitter),
 * device memory and copies.  A copy is a job on the stream that takes the
 * copy-in or copy-out engine, paced to the link in timed mode.  Capability
 * and cost live in capability.c, compile and run in kernels.c, streams and
 * events in stream.c.
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
      "fail_alloc", "fail_kernel", "fail_copy", "fail_event"};
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
                   "fail_kernel, fail_copy, fail_event, jitter_us)",
                   key ? key : "(null)");
}

/* ---- devices ------------------------------------------------------------ */

static het_status het_emu_device_count(const char *profile_path, int *count) {
  (void)profile_path;
  *count = 1;
  return HET_OK;
}

static void het_emu_device_close(void *device_state) {
  het_emu_device *d = device_state;
  if (!d)
    return;
  for (int e = 0; e < HET_EMU_ENGINES; e++)
    pthread_mutex_destroy(&d->engine[e]);
  het_emu_memory_destroy(d->mem);
  het_emu_profile_deinit(&d->profile);
  free(d);
}

static het_status het_emu_device_open(int index, const char *profile_path,
                                      void **device_state,
                                      het_device_info *info, char *name,
                                      size_t name_cap) {
  if (index != 0)
    return het_error(HET_ERR_NO_DEVICE, "emu: no device %d (a profile gives "
                                        "one)", index);
  het_emu_device *d = calloc(1, sizeof *d);
  if (!d)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  for (int e = 0; e < HET_EMU_ENGINES; e++)
    pthread_mutex_init(&d->engine[e], NULL);
  atomic_init(&d->n_alloc, 0);
  atomic_init(&d->fail_alloc_at, 0);
  het_status st = HET_OK;
  if (profile_path)
    st = het_emu_profile_load(profile_path, &d->profile);
  else
    het_emu_profile_default(&d->profile);
  if (st == HET_OK)
    st = het_emu_memory_create(d->profile.name, d->profile.memory_capacity,
                               &d->mem);
  if (st != HET_OK) {
    het_emu_device_close(d);
    return st;
  }
  het_emu_profile_device_info(&d->profile, info);
  snprintf(name, name_cap, "emu:%s", d->profile.name);
  *device_state = d;
  return HET_OK;
}

/* ---- instances ----------------------------------------------------------- */

static void het_emu_destroy(void *state) { free(state); }

static het_status het_emu_create(const het_provider_config *config,
                                 void **state) {
  if (!config || !config->device || !config->device->state)
    return het_error(HET_ERR_INTERNAL, "emu: created without its device");
  het_emu_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "emu: out of memory");
  s->dev = config->device->state;
  s->self = config->device;
  for (int k = 0; k < HET_EMU_FAULT_KINDS; k++)
    atomic_init(&s->op_count[k], 0);
  s->threads = config->threads > 0 ? config->threads : 1;
  het_status st = HET_OK;
  for (int i = 0; st == HET_OK && i < config->n_options; i++)
    st = het_emu_option(s, config->option_keys[i], config->option_values[i]);
  if (st != HET_OK) {
    free(s);
    return st;
  }
  if (s->fail_at[HET_EMU_FAULT_ALLOC] > 0)
    atomic_store(&s->dev->fail_alloc_at, atomic_load(&s->dev->n_alloc) +
                                             s->fail_at[HET_EMU_FAULT_ALLOC]);
  *state = s;
  return HET_OK;
}

bool het_emu_fault_hit(het_emu_state *s, int kind, long *nth) {
  long n = atomic_fetch_add(&s->op_count[kind], 1) + 1;
  if (nth)
    *nth = n;
  return s->fail_at[kind] > 0 && n == s->fail_at[kind];
}

/* ---- memory and copies --------------------------------------------------- */

static het_status het_emu_device_alloc(void *device_state, size_t nbytes,
                                       void **addr) {
  het_emu_device *d = device_state;
  long nth = atomic_fetch_add(&d->n_alloc, 1) + 1;
  if (nth == atomic_load(&d->fail_alloc_at))
    return het_error(HET_ERR_OUT_OF_MEMORY,
                     "emu: injected fault: allocation #%ld (%zu bytes) on "
                     "device '%s'",
                     nth, nbytes, d->profile.name);
  return het_emu_memory_alloc(d->mem, nbytes, addr);
}

static void het_emu_device_free(void *device_state, void *addr) {
  het_emu_device *d = device_state;
  het_emu_memory_free(d->mem, addr);
}

static bool het_emu_can_copy(void *state, const het_device *src,
                             const het_device *dst) {
  het_emu_state *s = state;
  bool src_ok = !src || src == s->self, dst_ok = !dst || dst == s->self;
  return src_ok && dst_ok;
}

typedef struct het_emu_copy {
  het_emu_state *s;
  void *dst;
  const void *src;
  size_t nbytes;
  const char *direction;
} het_emu_copy;

static het_status het_emu_copy_exec(void *arg) {
  het_emu_copy *c = arg;
  long nth;
  if (het_emu_fault_hit(c->s, HET_EMU_FAULT_COPY, &nth))
    return het_error(HET_ERR_IO,
                     "emu: injected fault: copy #%ld (%s, %zu bytes) on "
                     "device '%s'",
                     nth, c->direction, c->nbytes, c->s->dev->profile.name);
  if (c->nbytes)
    memmove(c->dst, c->src, c->nbytes);
  return HET_OK;
}

/* p = {stream, dst, src, direction text}, n = {bytes, engine}. */
static het_status het_emu_copy_job(const het_hostq_job *job) {
  het_emu_stream *st = job->p[0];
  het_emu_state *s = st->s;
  het_emu_copy c = {s, job->p[1], job->p[2], job->n[0], job->p[3]};
  double pace = s->dev->profile.link_latency +
                (double)c.nbytes / s->dev->profile.link_bandwidth;
  if (job->n[1] == HET_EMU_ENGINE_IN && strcmp(c.direction, "device to "
                                                            "device") == 0)
    pace = (double)c.nbytes / s->dev->profile.memory_bandwidth;
  return het_emu_engine_run(st, (int)job->n[1], pace, het_emu_copy_exec, &c,
                            NULL, NULL);
}

static het_status het_emu_copy_async(void *state, void *dst,
                                     const het_device *dst_dev,
                                     const void *src,
                                     const het_device *src_dev, size_t nbytes,
                                     void *stream) {
  het_emu_state *s = state;
  het_emu_stream *st = stream;
  if (!het_emu_can_copy(state, src_dev, dst_dev))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu '%s': cannot copy %s -> %s", s->dev->profile.name,
                     src_dev ? src_dev->name : "host",
                     dst_dev ? dst_dev->name : "host");
  if (nbytes && (!dst || !src))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "emu '%s': copy of %zu bytes with a NULL address",
                     s->dev->profile.name, nbytes);
  void *d = dst, *sp = (void *)src;
  if (dst_dev && nbytes)
    HET_TRY(het_emu_memory_resolve(s->dev->mem, dst, nbytes, &d));
  if (src_dev && nbytes)
    HET_TRY(het_emu_memory_resolve(s->dev->mem, src, nbytes, &sp));
  const char *dir = dst_dev && src_dev ? "device to device"
                    : dst_dev          ? "host to device"
                                       : "device to host";
  size_t engine = dst_dev || !src_dev ? HET_EMU_ENGINE_IN : HET_EMU_ENGINE_OUT;
  het_hostq_job job = {.fn = het_emu_copy_job,
                       .p = {st, d, sp, (void *)dir},
                       .n = {nbytes, engine}};
  return het_hostq_submit(st->q, &job);
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
    .destroy_compiled = het_emu_destroy_compiled,
    .device_count = het_emu_device_count,
    .device_open = het_emu_device_open,
    .device_close = het_emu_device_close,
    .device_alloc = het_emu_device_alloc,
    .device_free = het_emu_device_free,
    .stream_create = het_emu_stream_create,
    .stream_destroy = het_emu_stream_destroy,
    .stream_synchronize = het_emu_stream_synchronize,
    .event_create = het_emu_event_create,
    .event_destroy = het_emu_event_destroy,
    .event_record = het_emu_event_record,
    .stream_wait = het_emu_stream_wait,
    .event_synchronize = het_emu_event_synchronize,
    .event_query = het_emu_event_query,
    .host_func = het_emu_host_func,
    .can_copy = het_emu_can_copy,
    .copy_async = het_emu_copy_async,
    .run_async = het_emu_run_async,
    .compiled_scratch = het_emu_compiled_scratch,
};
