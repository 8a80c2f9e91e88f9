/* provider.c — the CUDA provider plugin (libhetrt_cuda.so): its entry
 * point (hetrt_plugin_init: version checks, then the vtable), the device
 * level (discovery, facts from cudaDeviceGetAttribute, memory), streams,
 * events and copies.  Every call sets its device first (cudaSetDevice is
 * per host thread).  A device profile (provider: cuda, core/devprofile.h)
 * overrides a present GPU's facts, or stands for a GPU that is not
 * present: that device only plans (device_plans_only): sessions place and
 * plan on it (partview, het_session_explain), and every slot that needs
 * the GPU refuses with NO_DEVICE naming the profile.  The plugin links a
 * private copy of the core; its error messages reach the loading core
 * through the plugin host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/devprofile.h"
#include "providers/cuda/cuda_internal.h"
#include "providers/cuda/versions.h"

#define HET_CUDA_EXPORT __attribute__((visibility("default")))

het_status het_cuda_absent(const het_cuda_device *d, const char *what) {
  return het_error(HET_ERR_NO_DEVICE,
                   "cuda:%d ('%s', device profile '%s') is not present: %s "
                   "needs the GPU (a profile only places and plans)",
                   d->index, d->name, d->profile, what);
}

het_status het_cuda_fail(cudaError_t e, int device, const char *what) {
  het_status st = e == cudaErrorMemoryAllocation ? HET_ERR_CAPACITY
                  : e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver
                      ? HET_ERR_NO_DEVICE
                      : HET_ERR_KERNEL;
  cudaGetLastError(); /* clear a non-sticky error */
  return het_error(st, "cuda:%d: %s: %s (%s)", device, what,
                   cudaGetErrorString(e), cudaGetErrorName(e));
}

static het_cuda_versions het_cuda_versions_now(void) {
  het_cuda_versions v = {.runtime_built = CUDART_VERSION,
                         .cublaslt_built = CUBLAS_VERSION};
  cudaRuntimeGetVersion(&v.runtime_found);
  cudaDriverGetVersion(&v.driver);
  v.cublaslt_found = (long)cublasLtGetVersion();
  return v;
}

/* ---- device level ---------------------------------------------------------- */

/* The GPUs present (NO_DEVICE when none). */
static het_status het_cuda_present(int *count) {
  *count = 0;
  het_cuda_versions v = het_cuda_versions_now();
  char why[256];
  if (!het_cuda_driver_ok(&v, why, sizeof why))
    return het_error(HET_ERR_NO_DEVICE, "no CUDA device: %s", why);
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return het_error(HET_ERR_NO_DEVICE, "no CUDA device: %s (%s)",
                     cudaGetErrorString(e), cudaGetErrorName(e));
  }
  if (n == 0)
    return het_error(HET_ERR_NO_DEVICE, "no CUDA device: the driver sees none");
  *count = n;
  return HET_OK;
}

/* With a profile and no GPU: one device, the profile's. */
static het_status het_cuda_device_count(const char *profile, int *count) {
  het_status st = het_cuda_present(count);
  if (st != HET_OK && profile) {
    het_error_clear();
    *count = 1;
    return HET_OK;
  }
  return st;
}

static int het_cuda_attr(enum cudaDeviceAttr a, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

/* Facts from the device's attributes (no calibration yet): fp32 peak is
 * SMs x lanes x 2 FLOP x clock (128 fp32 lanes per SM on compute
 * capability 8.6 and later and on 9.x; 64 on 8.0 (A100) and before),
 * tensor-core fp16 16x that from compute capability 8.0; memory bandwidth
 * 2 x memory clock x bus width; the link a PCIe 4/5 x16 guess. */
static void het_cuda_facts(het_cuda_device *d) {
  int i = d->index;
  d->sm_count = het_cuda_attr(cudaDevAttrMultiProcessorCount, i);
  d->cc_major = het_cuda_attr(cudaDevAttrComputeCapabilityMajor, i);
  d->cc_minor = het_cuda_attr(cudaDevAttrComputeCapabilityMinor, i);
  double clock_hz = het_cuda_attr(cudaDevAttrClockRate, i) * 1e3;
  double mem_hz = het_cuda_attr(cudaDevAttrMemoryClockRate, i) * 1e3;
  double bus_bits = het_cuda_attr(cudaDevAttrGlobalMemoryBusWidth, i);
  double lanes =
      d->cc_major >= 9 || (d->cc_major == 8 && d->cc_minor > 0) ? 128 : 64;
  double f32 = d->sm_count * lanes * 2 * clock_hz;
  d->info = (het_device_info){
      .host_memory = false,
      .memory_capacity = d->total_memory,
      .peak_flops_f32 = f32,
      .peak_flops_f16 = d->cc_major >= 8 ? 16 * f32 : 2 * f32,
      .peak_flops_i8 = d->cc_major >= 8 ? 32 * f32 : 4 * f32,
      .memory_bandwidth = 2 * mem_hz * bus_bits / 8,
      .link_bandwidth = d->cc_major >= 9 ? 50e9 : 25e9,
      .link_latency = 10e-6,
      .launch_overhead = 5e-6,
      .preferred_layout = HET_LAYOUT_NCHW,
  };
}

/* d: the absent device profile p (at path) describes: its facts, and
 * for those it leaves out float16 and int8 at the float32 rate, a PCIe 4
 * x16 link, unlimited memory; float32 FLOP/s and memory bandwidth it must
 * give. */
static het_status het_cuda_absent_open(int index, const char *path,
                                       const het_device_profile *p,
                                       het_cuda_device *d) {
  unsigned need = 1u << HET_PROFILE_F32 | 1u << HET_PROFILE_MEMBW;
  if ((p->set & need) != need)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "device profile '%s' stands for a GPU that is not "
                     "present: it needs peak_flops (float32) and "
                     "memory_bandwidth",
                     path);
  d->index = index;
  d->absent = true;
  snprintf(d->name, sizeof d->name, "%s", p->name[0] ? p->name : "gpu");
  d->info = (het_device_info){.link_bandwidth = 25e9,
                              .link_latency = 10e-6,
                              .launch_overhead = 5e-6,
                              .preferred_layout = HET_LAYOUT_NCHW};
  het_device_profile_apply(p, &d->info);
  if (!(p->set & 1u << HET_PROFILE_F16))
    d->info.peak_flops_f16 = d->info.peak_flops_f32;
  if (!(p->set & 1u << HET_PROFILE_I8))
    d->info.peak_flops_i8 = d->info.peak_flops_f32;
  d->info.host_memory = false;
  return HET_OK;
}

static het_status het_cuda_device_open(int index, const char *profile,
                                       void **state, het_device_info *info,
                                       char *name, size_t cap) {
  het_device_profile prof;
  if (profile)
    HET_TRY(het_device_profile_load(profile, "cuda", &prof));
  int count;
  het_status st = het_cuda_present(&count);
  if (st != HET_OK && !profile)
    return st;
  if (st == HET_OK && (index < 0 || index >= count))
    return het_error(HET_ERR_NO_DEVICE, "cuda: no device %d (%d present)",
                     index, count);
  het_cuda_device *d = calloc(1, sizeof *d);
  if (!d)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  if (profile)
    snprintf(d->profile, sizeof d->profile, "%s", profile);
  if (st != HET_OK) { /* no GPU: the profile's */
    het_error_clear();
    st = het_cuda_absent_open(index, profile, &prof, d);
    if (st != HET_OK) {
      free(d);
      return st;
    }
    *info = d->info;
    snprintf(name, cap, "cuda:%d", index);
    *state = d;
    return HET_OK;
  }
  d->index = index;
  struct cudaDeviceProp p;
  cudaError_t e = cudaSetDevice(index);
  if (e == cudaSuccess)
    e = cudaGetDeviceProperties(&p, index);
  if (e != cudaSuccess) {
    free(d);
    return het_cuda_fail(e, index, "opening the device");
  }
  snprintf(d->name, sizeof d->name, "%.*s", (int)sizeof d->name - 1, p.name);
  d->total_memory = p.totalGlobalMem;
  het_cuda_facts(d);
  if (profile)
    het_device_profile_apply(&prof, &d->info);
  *info = d->info;
  snprintf(name, cap, "cuda:%d", index);
  *state = d;
  return HET_OK;
}

static void het_cuda_device_close(void *state) { free(state); }

static bool het_cuda_device_plans_only(void *state) {
  return ((het_cuda_device *)state)->absent;
}

static het_status het_cuda_device_alloc(void *state, size_t n, void **ptr) {
  het_cuda_device *d = state;
  if (d->absent)
    return het_cuda_absent(d, "allocating device memory");
  HET_CUDA_TRY(cudaSetDevice(d->index), d->index, "selecting the device");
  cudaError_t e = cudaMalloc(ptr, n ? n : 1);
  if (e != cudaSuccess) {
    size_t free_b = 0, total = 0;
    cudaGetLastError();
    cudaMemGetInfo(&free_b, &total);
    return het_error(HET_ERR_CAPACITY,
                     "cuda:%d: cannot allocate %zu bytes (%zu of %zu free): "
                     "%s",
                     d->index, n, free_b, total, cudaGetErrorString(e));
  }
  return HET_OK;
}

static void het_cuda_device_free(void *state, void *ptr) {
  het_cuda_device *d = state;
  if (ptr && cudaSetDevice(d->index) == cudaSuccess)
    cudaFree(ptr);
}

static het_status het_cuda_host_alloc(void *state, size_t n, void **ptr) {
  het_cuda_device *d = state;
  if (d->absent)
    return het_cuda_absent(d, "allocating pinned host memory");
  HET_CUDA_TRY(cudaSetDevice(d->index), d->index, "selecting the device");
  HET_CUDA_TRY(cudaHostAlloc(ptr, n ? n : 1, cudaHostAllocPortable), d->index,
               "allocating pinned host memory");
  return HET_OK;
}

static void het_cuda_host_free(void *state, void *ptr) {
  (void)state;
  if (ptr)
    cudaFreeHost(ptr);
}

/* ---- instance ---------------------------------------------------------------- */

static het_status het_cuda_create(const het_provider_config *cfg,
                                  void **out) {
  if (!cfg || !cfg->device || !cfg->device->state)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "cuda: an instance needs its device (ABI 3 core)");
  if (cfg->n_options > 0)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "cuda: unknown option '%s' (this build takes none yet)",
                     cfg->option_keys[0]);
  het_cuda_state *s = calloc(1, sizeof *s);
  if (!s)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  s->dev = cfg->device->state;
  s->self = cfg->device;
  if (s->dev->absent) { /* places and plans: no handle */
    *out = s;
    return HET_OK;
  }
  cudaError_t e = cudaSetDevice(s->dev->index);
  cublasStatus_t b = e == cudaSuccess ? cublasLtCreate(&s->lt)
                                      : CUBLAS_STATUS_NOT_INITIALIZED;
  if (e != cudaSuccess || b != CUBLAS_STATUS_SUCCESS) {
    int idx = s->dev->index;
    free(s);
    return e != cudaSuccess
               ? het_cuda_fail(e, idx, "selecting the device")
               : het_error(HET_ERR_NO_DEVICE,
                           "cuda:%d: cuBLASLt cannot start (status %d)", idx,
                           (int)b);
  }
  *out = s;
  return HET_OK;
}

static void het_cuda_destroy(void *state) {
  het_cuda_state *s = state;
  if (!s)
    return;
  if (s->lt)
    cublasLtDestroy(s->lt);
  free(s);
}

static het_status het_cuda_device_info(void *state, het_device_info *out) {
  *out = ((het_cuda_state *)state)->dev->info;
  return HET_OK;
}

/* ---- streams and events ------------------------------------------------------- */

static het_status het_cuda_stream_create(void *state, unsigned flags,
                                         void **stream) {
  (void)flags; /* a GPU stream is never the host thread */
  het_cuda_state *s = state;
  if (s->dev->absent)
    return het_cuda_absent(s->dev, "a stream");
  cudaStream_t st;
  HET_CUDA_TRY(cudaSetDevice(s->dev->index), s->dev->index,
               "selecting the device");
  HET_CUDA_TRY(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking),
               s->dev->index, "creating a stream");
  *stream = st;
  return HET_OK;
}

static void het_cuda_stream_destroy(void *state, void *stream) {
  (void)state;
  if (stream)
    cudaStreamDestroy(stream);
}

static het_status het_cuda_stream_synchronize(void *state, void *stream) {
  het_cuda_state *s = state;
  HET_CUDA_TRY(cudaStreamSynchronize(stream), s->dev->index,
               "work on a stream");
  return HET_OK;
}

static het_status het_cuda_event_create(void *state, void **event) {
  het_cuda_state *s = state;
  if (s->dev->absent)
    return het_cuda_absent(s->dev, "an event");
  cudaEvent_t e;
  HET_CUDA_TRY(cudaSetDevice(s->dev->index), s->dev->index,
               "selecting the device");
  HET_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
               s->dev->index, "creating an event");
  *event = e;
  return HET_OK;
}

static void het_cuda_event_destroy(void *state, void *event) {
  (void)state;
  if (event)
    cudaEventDestroy(event);
}

static het_status het_cuda_event_record(void *state, void *event,
                                        void *stream) {
  het_cuda_state *s = state;
  HET_CUDA_TRY(cudaEventRecord(event, stream), s->dev->index,
               "recording an event");
  return HET_OK;
}

/* Another provider's event, waited for on the host in stream order. */
typedef struct het_cuda_foreign_wait {
  het_event_ref ref;
} het_cuda_foreign_wait;

static void CUDART_CB het_cuda_wait_foreign(void *arg) {
  het_cuda_foreign_wait *w = arg;
  /* A failure of the other provider's work shows on its own streams. */
  w->ref.vt->event_synchronize(w->ref.instance, w->ref.event);
  free(w);
}

static het_status het_cuda_stream_wait(void *state, void *stream,
                                       const het_event_ref *ev) {
  het_cuda_state *s = state;
  if (ev->vt == s->self->vt && ev->device && ev->device->vt == s->self->vt) {
    HET_CUDA_TRY(cudaStreamWaitEvent(stream, ev->event, 0), s->dev->index,
                 "waiting for an event");
    return HET_OK;
  }
  het_cuda_foreign_wait *w = malloc(sizeof *w);
  if (!w)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cuda: out of memory");
  w->ref = *ev;
  cudaError_t e = cudaLaunchHostFunc(stream, het_cuda_wait_foreign, w);
  if (e != cudaSuccess) {
    free(w);
    return het_cuda_fail(e, s->dev->index, "waiting for another provider");
  }
  return HET_OK;
}

static het_status het_cuda_event_synchronize(void *state, void *event) {
  het_cuda_state *s = state;
  HET_CUDA_TRY(cudaEventSynchronize(event), s->dev->index,
               "waiting for an event");
  return HET_OK;
}

static het_status het_cuda_event_query(void *state, void *event,
                                       bool *done) {
  het_cuda_state *s = state;
  cudaError_t e = cudaEventQuery(event);
  if (e == cudaErrorNotReady) {
    cudaGetLastError();
    *done = false;
    return HET_OK;
  }
  HET_CUDA_TRY(e, s->dev->index, "querying an event");
  *done = true;
  return HET_OK;
}

static het_status het_cuda_host_func(void *state, void *stream,
                                     void (*fn)(void *), void *arg) {
  het_cuda_state *s = state;
  HET_CUDA_TRY(cudaLaunchHostFunc(stream, fn, arg), s->dev->index,
               "enqueueing a host function");
  return HET_OK;
}

/* ---- copies -------------------------------------------------------------------- */

static bool het_cuda_is_mine(const het_cuda_state *s, const het_device *d) {
  return d && d->vt == s->self->vt;
}

static bool het_cuda_can_copy(void *state, const het_device *src,
                              const het_device *dst) {
  het_cuda_state *s = state;
  /* host memory, this device, or another CUDA device (peer copies) */
  return (!src || het_cuda_is_mine(s, src)) && (!dst || het_cuda_is_mine(s, dst)) &&
         (src || dst);
}

static het_status het_cuda_copy_async(void *state, void *dst,
                                      const het_device *dst_dev,
                                      const void *src,
                                      const het_device *src_dev, size_t n,
                                      void *stream) {
  het_cuda_state *s = state;
  if (s->dev->absent)
    return het_cuda_absent(s->dev, "a copy");
  if (n == 0)
    return HET_OK;
  if (src_dev && dst_dev && src_dev != dst_dev) {
    const het_cuda_device *a = src_dev->state, *b = dst_dev->state;
    HET_CUDA_TRY(cudaMemcpyPeerAsync(dst, b->index, src, a->index, n, stream),
                 s->dev->index, "a peer copy");
    return HET_OK;
  }
  /* Unified addressing: the runtime knows which side each pointer is. */
  HET_CUDA_TRY(cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream),
               s->dev->index, "a copy");
  return HET_OK;
}

/* ---- the vtable and the plugin entry ------------------------------------------ */

static const het_provider_vtable het_cuda_provider = {
    .abi_version = HET_PROVIDER_ABI_VERSION,
    .name = "cuda",
    .device_kind = HET_DEVICE_CUDA,
    .create = het_cuda_create,
    .destroy = het_cuda_destroy,
    .get_capability = het_cuda_get_capability,
    .estimate_cost = het_cuda_estimate_cost,
    .compile = het_cuda_compile,
    .destroy_compiled = het_cuda_destroy_compiled,
    .get_device_info = het_cuda_device_info,
    .device_count = het_cuda_device_count,
    .device_open = het_cuda_device_open,
    .device_close = het_cuda_device_close,
    .device_alloc = het_cuda_device_alloc,
    .device_free = het_cuda_device_free,
    .host_alloc = het_cuda_host_alloc,
    .host_free = het_cuda_host_free,
    .stream_create = het_cuda_stream_create,
    .stream_destroy = het_cuda_stream_destroy,
    .stream_synchronize = het_cuda_stream_synchronize,
    .event_create = het_cuda_event_create,
    .event_destroy = het_cuda_event_destroy,
    .event_record = het_cuda_event_record,
    .stream_wait = het_cuda_stream_wait,
    .event_synchronize = het_cuda_event_synchronize,
    .event_query = het_cuda_event_query,
    .host_func = het_cuda_host_func,
    .can_copy = het_cuda_can_copy,
    .copy_async = het_cuda_copy_async,
    .run_async = het_cuda_run_async,
    .compiled_scratch = het_cuda_compiled_scratch,
    .device_plans_only = het_cuda_device_plans_only,
};

HET_CUDA_EXPORT het_status hetrt_plugin_init(const het_plugin_host *host,
                                             const het_provider_vtable **vt,
                                             char *why, size_t cap);

het_status hetrt_plugin_init(const het_plugin_host *host,
                             const het_provider_vtable **vt, char *why,
                             size_t cap) {
  if (!host || host->version != HET_PLUGIN_HOST_VERSION ||
      host->provider_abi != HET_PROVIDER_ABI_VERSION) {
    snprintf(why, cap,
             "libhetrt_cuda.so was built for plugin host %u / provider ABI "
             "%u, the loading hetrt has %u / %u",
             HET_PLUGIN_HOST_VERSION, HET_PROVIDER_ABI_VERSION,
             host ? host->version : 0, host ? host->provider_abi : 0);
    return HET_ERR_NOT_BUILT;
  }
  het_cuda_versions v = het_cuda_versions_now();
  if (!het_cuda_libraries_ok(&v, why, cap))
    return HET_ERR_NOT_BUILT;
  het_error_set_sink(host->set_error);
  *vt = &het_cuda_provider;
  return HET_OK;
}
