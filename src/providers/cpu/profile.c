/* profile.c — the CPU's device facts (het_cpu_device_info): peak FLOP/s
 * from a ~20 ms SGEMM through cblas (on OpenBLAS's threads), one thread's
 * rates of the kernels' float32 GEMMs (het_cpu_thread_flops) and memory
 * bandwidth from a memcpy probe, measured once and cached on disk (so
 * placements computed from it are the same in every process on this
 * machine) and per process (pthread_once); a YAML device profile may
 * override any field (het_cpu_device_info_load).
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <yaml.h>

#include "core/cache.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "kernels/sgemm.h"
#include "providers/cpu/profile.h"

#define HET_CPU_GEMM_N 256
#define HET_CPU_GEMM_SECONDS 0.02
#define HET_CPU_COPY_BYTES ((size_t)8 << 20)
#define HET_CPU_COPY_SECONDS 0.01
#define HET_CPU_LAUNCH 1e-6

static pthread_once_t het_cpu_once = PTHREAD_ONCE_INIT;
static het_device_info het_cpu_measured;
static het_cpu_thread_rates het_cpu_measured_thread;

static double het_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* FLOP/s of a square SGEMM repeated for about HET_CPU_GEMM_SECONDS. */
static double het_cpu_bench_gemm(void) {
  const int n = HET_CPU_GEMM_N;
  size_t count = (size_t)n * n;
  float *a = malloc(3 * count * sizeof(float));
  if (!a)
    return 0;
  float *b = a + count, *c = b + count;
  for (size_t i = 0; i < count; i++) {
    a[i] = (float)(i % 7) * 0.25f;
    b[i] = (float)(i % 5) * 0.5f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n,
              b, n, 0.0f, c, n); /* warm-up: thread pool, caches */
  double start = het_cpu_now(), elapsed = 0;
  long reps = 0;
  do {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a,
                n, b, n, 0.0f, c, n);
    reps++;
    elapsed = het_cpu_now() - start;
  } while (elapsed < HET_CPU_GEMM_SECONDS);
  free(a);
  return elapsed > 0 ? 2.0 * n * n * (double)n * (double)reps / elapsed : 0;
}

/* Bytes/s moved by memcpy (read + write) for about HET_CPU_COPY_SECONDS. */
static double het_cpu_bench_copy(void) {
  char *src = malloc(2 * HET_CPU_COPY_BYTES);
  if (!src)
    return 0;
  char *dst = src + HET_CPU_COPY_BYTES;
  memset(src, 1, 2 * HET_CPU_COPY_BYTES);
  double start = het_cpu_now(), elapsed = 0;
  long reps = 0;
  do {
    memcpy(dst, src, HET_CPU_COPY_BYTES);
    src[reps % HET_CPU_COPY_BYTES] = (char)reps; /* keep the copy alive */
    reps++;
    elapsed = het_cpu_now() - start;
  } while (elapsed < HET_CPU_COPY_SECONDS);
  volatile char sink = dst[reps % HET_CPU_COPY_BYTES];
  (void)sink;
  free(src);
  return elapsed > 0 ? 2.0 * (double)HET_CPU_COPY_BYTES * (double)reps / elapsed
                     : 0;
}

/* The cache file: cpu-profile.txt in the cache folder (core/cache.h). */
static bool het_cpu_cache_path(char *path, size_t cap, bool make_dirs) {
  return het_cache_path("cpu-profile.txt", path, cap, make_dirs);
}

/* The cached device rates into m and the one-thread rates into *thread
 * (zero when the file predates their lines: such a cache stays valid, and
 * only the one-thread probes run). */
static bool het_cpu_cache_load(het_device_info *m,
                               het_cpu_thread_rates *thread) {
  char path[4096];
  if (!het_cpu_cache_path(path, sizeof path, false))
    return false;
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  double flops = 0, bw = 0, own = 0, blas = 0;
  int n = fscanf(f, "peak_flops_f32 %lf memory_bandwidth %lf", &flops, &bw);
  if (n == 2 &&
      fscanf(f, " gemm_flops_f32_thread %lf blas_flops_f32_thread %lf", &own,
             &blas) != 2)
    own = blas = 0;
  fclose(f);
  if (n != 2 || !(flops > 0) || !(bw > 0) || !isfinite(flops) || !isfinite(bw))
    return false;
  m->peak_flops_f32 = flops;
  m->memory_bandwidth = bw;
  bool ok = own > 0 && isfinite(own) && blas > 0 && isfinite(blas);
  thread->gemm = ok ? own : 0;
  thread->blas = ok ? blas : 0;
  return true;
}

/* Best effort: a machine without a writable cache measures every time. */
static void het_cpu_cache_store(const het_device_info *m,
                                const het_cpu_thread_rates *thread) {
  char path[4096], tmp[4200];
  if (!het_cpu_cache_path(path, sizeof path, true))
    return;
  snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f)
    return;
  fprintf(f, "peak_flops_f32 %.6g\nmemory_bandwidth %.6g\n",
          m->peak_flops_f32, m->memory_bandwidth);
  fprintf(f, "gemm_flops_f32_thread %.6g\nblas_flops_f32_thread %.6g\n",
          thread->gemm, thread->blas);
  if (fclose(f) == 0)
    rename(tmp, path);
  else
    remove(tmp);
}

/* int8 peak per float32 peak: 4 where the int8 products run on VNNI
 * (vpdpbusd adds four u8 x s8 products per 32-bit lane where an FMA adds
 * one float product; het_kernels_int8_fast), else 1 (the reference int8
 * loops are no faster than float; estimate.c's int8_reference row says
 * how much slower they are). */
static double het_cpu_i8_per_f32(void) {
  return het_kernels_int8_fast() ? 4.0 : 1.0;
}

static void het_cpu_measure(void) {
  het_device_info *m = &het_cpu_measured;
  het_cpu_thread_rates *thread = &het_cpu_measured_thread;
  memset(m, 0, sizeof *m);
  m->host_memory = true;
  bool cached = het_cpu_cache_load(m, thread);
  if (!cached) {
    m->peak_flops_f32 = het_cpu_bench_gemm();
    m->memory_bandwidth = het_cpu_bench_copy();
  }
  if (!cached || !(thread->gemm > 0)) {
    thread->gemm = het_kernel_sgemm_rate(HET_KERNEL_GEMM_OWN);
    thread->blas = het_kernel_sgemm_rate(HET_KERNEL_GEMM_BLAS);
    if (m->peak_flops_f32 > 0 && m->memory_bandwidth > 0 && thread->gemm > 0 &&
        thread->blas > 0)
      het_cpu_cache_store(m, thread);
  }
  if (!(m->peak_flops_f32 > 0))
    m->peak_flops_f32 = 1e10; /* out of memory: a modest default */
  if (!(m->memory_bandwidth > 0))
    m->memory_bandwidth = 1e10;
  m->peak_flops_f16 = m->peak_flops_f32;
  m->peak_flops_i8 = m->peak_flops_f32 * het_cpu_i8_per_f32();
  m->launch_overhead = HET_CPU_LAUNCH;
  m->preferred_layout = HET_LAYOUT_NCHW;
}

het_status het_cpu_device_info(het_device_info *out) {
  pthread_once(&het_cpu_once, het_cpu_measure);
  *out = het_cpu_measured;
  return HET_OK;
}

het_cpu_thread_rates het_cpu_thread_flops(void) {
  pthread_once(&het_cpu_once, het_cpu_measure);
  return het_cpu_measured_thread;
}

/* ---- profile file (the format of configs/devices/README.md) ---- */

typedef enum het_cpu_unit {
  HET_UNIT_BYTES,   /* 512MiB, 60GB/s, 8e9 */
  HET_UNIT_FLOPS,   /* 4T, 4TFLOPS, 4 TFLOP/s, 16TOPS */
  HET_UNIT_SECONDS, /* 20us, 1e-6, 2ms */
} het_cpu_unit;

/* Multiplier of a decimal (K M G T P) or binary (Ki Mi Gi Ti) prefix at
 * *s, advancing past it; 1 when there is none. */
static double het_cpu_prefix(const char **s) {
  static const char prefixes[] = "KMGTP";
  char c = **s == 'k' ? 'K' : **s;
  const char *at = c ? strchr(prefixes, c) : NULL;
  if (!at)
    return 1;
  bool binary = (*s)[1] == 'i' && at - prefixes < 4;
  double m = 1;
  for (long k = 0; k <= at - prefixes; k++)
    m *= binary ? 1024.0 : 1000.0;
  *s += binary ? 2 : 1;
  return m;
}

static bool het_cpu_parse_quantity(const char *s, het_cpu_unit unit,
                                   double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || errno || !isfinite(v) || v < 0)
    return false;
  const char *r = end;
  while (*r == ' ')
    r++;
  if (unit == HET_UNIT_SECONDS) {
    static const char *const names[] = {"", "s", "ms", "us", "ns"};
    static const double scale[] = {1, 1, 1e-3, 1e-6, 1e-9};
    for (int k = 0; k < 5; k++)
      if (strcmp(r, names[k]) == 0) {
        *out = v * scale[k];
        return true;
      }
    return false;
  }
  v *= het_cpu_prefix(&r);
  static const char *const bytes[] = {"", "B", "B/s", NULL};
  static const char *const flops[] = {"", "FLOPS", "FLOP/s", "OPS", NULL};
  for (const char *const *k = unit == HET_UNIT_BYTES ? bytes : flops; *k; k++)
    if (strcmp(r, *k) == 0) {
      *out = v;
      return true;
    }
  return false;
}

/* Fields a profile may set; bit i of het_cpu_profile.set. */
enum {
  HET_CPU_CAPACITY, HET_CPU_F32, HET_CPU_F16, HET_CPU_I8, HET_CPU_MEMBW,
  HET_CPU_LINKBW, HET_CPU_LATENCY, HET_CPU_LAUNCH_KEY, HET_CPU_LAYOUT,
  HET_CPU_NAME, HET_CPU_PROVIDER, HET_CPU_FIELDS
};

typedef struct het_cpu_profile {
  const char *path;
  het_device_info info;
  unsigned set;
} het_cpu_profile;

static const struct {
  const char *key;
  het_cpu_unit unit;
} het_cpu_keys[] = {
    [HET_CPU_CAPACITY] = {"memory_capacity", HET_UNIT_BYTES},
    [HET_CPU_F32] = {"float32", HET_UNIT_FLOPS},
    [HET_CPU_F16] = {"float16", HET_UNIT_FLOPS},
    [HET_CPU_I8] = {"int8", HET_UNIT_FLOPS},
    [HET_CPU_MEMBW] = {"memory_bandwidth", HET_UNIT_BYTES},
    [HET_CPU_LINKBW] = {"link_bandwidth", HET_UNIT_BYTES},
    [HET_CPU_LATENCY] = {"link_latency", HET_UNIT_SECONDS},
    [HET_CPU_LAUNCH_KEY] = {"launch_overhead", HET_UNIT_SECONDS},
    [HET_CPU_LAYOUT] = {"preferred_layout", HET_UNIT_BYTES},
    [HET_CPU_NAME] = {"name", HET_UNIT_BYTES},
    [HET_CPU_PROVIDER] = {"provider", HET_UNIT_BYTES},
};

static void het_cpu_apply(het_device_info *i, int k, double v) {
  switch (k) {
  case HET_CPU_CAPACITY:
    i->memory_capacity = v >= 1.8e19 ? SIZE_MAX : (size_t)v;
    break;
  case HET_CPU_F32: i->peak_flops_f32 = v; break;
  case HET_CPU_F16: i->peak_flops_f16 = v; break;
  case HET_CPU_I8: i->peak_flops_i8 = v; break;
  case HET_CPU_MEMBW: i->memory_bandwidth = v; break;
  case HET_CPU_LINKBW: i->link_bandwidth = v; break;
  case HET_CPU_LATENCY: i->link_latency = v; break;
  default: i->launch_overhead = v; break;
  }
}

/* Field k (a key at top level, or a dtype under peak_flops) = value. */
static het_status het_cpu_profile_set(het_cpu_profile *p, int k,
                                      const char *key, const char *value,
                                      size_t line) {
  if (p->set & (1u << k))
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: repeated key '%s'",
                     p->path, line, key);
  p->set |= 1u << k;
  if (k == HET_CPU_NAME)
    return HET_OK;
  if (k == HET_CPU_PROVIDER)
    return strcmp(value, "cpu") == 0
               ? HET_OK
               : het_error(HET_ERR_INVALID_ARGUMENT,
                           "%s:%zu: profile for provider '%s', not 'cpu'",
                           p->path, line, value);
  if (k == HET_CPU_LAYOUT) {
    if (strcmp(value, "NCHW") != 0 && strcmp(value, "NHWC") != 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%zu: preferred_layout '%s' (NCHW or NHWC)",
                       p->path, line, value);
    p->info.preferred_layout =
        strcmp(value, "NHWC") == 0 ? HET_LAYOUT_NHWC : HET_LAYOUT_NCHW;
    return HET_OK;
  }
  double v;
  if (!het_cpu_parse_quantity(value, het_cpu_keys[k].unit, &v))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s:%zu: %s: '%s' is not a valid quantity", p->path,
                     line, key, value);
  het_cpu_apply(&p->info, k, v);
  return HET_OK;
}

/* One key: value pair; section is "peak_flops" inside its mapping. */
static het_status het_cpu_profile_pair(het_cpu_profile *p, bool in_flops,
                                       const char *key, const char *value,
                                       size_t line) {
  if (!in_flops && strcmp(key, "peak_flops") == 0) {
    for (int k = HET_CPU_F32; k <= HET_CPU_I8; k++)
      HET_TRY(het_cpu_profile_set(p, k, key, value, line));
    return HET_OK;
  }
  for (int k = 0; k < HET_CPU_FIELDS; k++) {
    bool dtype = k >= HET_CPU_F32 && k <= HET_CPU_I8;
    if (dtype == in_flops && strcmp(key, het_cpu_keys[k].key) == 0)
      return het_cpu_profile_set(p, k, key, value, line);
  }
  return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: unknown key '%s%s'",
                   p->path, line, in_flops ? "peak_flops." : "", key);
}

/* Reads a top-level mapping of scalars, where peak_flops may also be a
 * mapping of dtype: scalar. */
static het_status het_cpu_profile_parse(yaml_parser_t *y,
                                        het_cpu_profile *p) {
  char key[64] = "";
  bool have_key = false, in_flops = false;
  int depth = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(y, &ev))
      return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: %s", p->path,
                       y->problem_mark.line + 1,
                       y->problem ? y->problem : "YAML syntax error");
    het_status st = HET_OK;
    yaml_event_type_t type = ev.type;
    size_t line = ev.start_mark.line + 1;
    if (type == YAML_MAPPING_START_EVENT) {
      in_flops = depth == 1 && have_key && strcmp(key, "peak_flops") == 0;
      if (depth == 1 && !in_flops)
        st = het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%zu: '%s' takes a single value", p->path, line,
                       key);
      have_key = false;
      depth++;
    } else if (type == YAML_MAPPING_END_EVENT) {
      depth--;
      in_flops = false;
    } else if (type == YAML_SEQUENCE_START_EVENT) {
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s:%zu: '%s': lists are not CPU profile keys", p->path,
                     line, key);
    } else if (type == YAML_SCALAR_EVENT) {
      const char *s = (const char *)ev.data.scalar.value;
      if (!have_key) {
        snprintf(key, sizeof key, "%s", s);
        have_key = true;
      } else {
        st = het_cpu_profile_pair(p, in_flops, key, s, line);
        have_key = false;
      }
    }
    yaml_event_delete(&ev);
    if (st != HET_OK)
      return st;
    if (type == YAML_STREAM_END_EVENT)
      return HET_OK;
  }
}

het_status het_cpu_device_info_load(const char *path, het_device_info *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return het_error(HET_ERR_IO, "device profile '%s': cannot open", path);
  yaml_parser_t y;
  if (!yaml_parser_initialize(&y)) {
    fclose(f);
    return het_error(HET_ERR_OUT_OF_MEMORY, "device profile: out of memory");
  }
  yaml_parser_set_input_file(&y, f);
  het_cpu_profile p;
  memset(&p, 0, sizeof p);
  p.path = path;
  het_status st = het_cpu_profile_parse(&y, &p);
  yaml_parser_delete(&y);
  fclose(f);
  if (st != HET_OK)
    return st;
  het_device_info info = {.host_memory = true,
                          .launch_overhead = HET_CPU_LAUNCH};
  if (!(p.set & (1u << HET_CPU_F32)) || !(p.set & (1u << HET_CPU_MEMBW)))
    het_cpu_device_info(&info); /* a rate is missing: measure */
  for (int k = 0; k <= HET_CPU_LAUNCH_KEY; k++)
    if (p.set & (1u << k)) {
      het_device_info *from = &p.info;
      double v = k == HET_CPU_CAPACITY ? (double)from->memory_capacity
                 : k == HET_CPU_F32    ? from->peak_flops_f32
                 : k == HET_CPU_F16    ? from->peak_flops_f16
                 : k == HET_CPU_I8     ? from->peak_flops_i8
                 : k == HET_CPU_MEMBW  ? from->memory_bandwidth
                 : k == HET_CPU_LINKBW ? from->link_bandwidth
                 : k == HET_CPU_LATENCY ? from->link_latency
                                         : from->launch_overhead;
      het_cpu_apply(&info, k, v);
    }
  if (p.set & (1u << HET_CPU_LAYOUT))
    info.preferred_layout = p.info.preferred_layout;
  if (!(p.set & (1u << HET_CPU_F16)))
    info.peak_flops_f16 = info.peak_flops_f32;
  if (!(p.set & (1u << HET_CPU_I8)))
    info.peak_flops_i8 = info.peak_flops_f32 * het_cpu_i8_per_f32();
  info.host_memory = true;
  *out = info;
  return HET_OK;
}
