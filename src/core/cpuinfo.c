/* cpuinfo.c — the host CPU as plan files record it (cpuinfo.h): CPUID for
 * the vendor, family, model, stepping and brand; the compiler's
 * __builtin_cpu_supports for the extensions (it checks that the OS saves
 * the wider registers too); sysconf for caches and CPUs.
 */
#include "core/cpuinfo.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

static pthread_once_t het_cpuinfo_once = PTHREAD_ONCE_INIT;
static het_cpuinfo het_cpu;

/* The extensions recorded, in this order. */
static int het_isa_has(const char *name) {
#if defined(__x86_64__) || defined(__i386__)
  /* __builtin_cpu_supports needs a literal */
#define HET_ISA(s)                                                             \
  if (strcmp(name, s) == 0)                                                    \
    return __builtin_cpu_supports(s);
  HET_ISA("sse4.2")
  HET_ISA("avx")
  HET_ISA("avx2")
  HET_ISA("fma")
  HET_ISA("avx512f")
  HET_ISA("avx512bw")
  HET_ISA("avx512vl")
  HET_ISA("avx512dq")
  HET_ISA("avx512vnni")
  HET_ISA("avx512bf16")
#undef HET_ISA
  /* not __builtin_cpu_supports names in every compiler: CPUID bits, with
   * the OS support their base extension's check covers */
  unsigned a, b, c, d;
  if (strcmp(name, "f16c") == 0)
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) &&
           (c & bit_F16C);
  if (strcmp(name, "avx512fp16") == 0)
    return __builtin_cpu_supports("avx512f") &&
           __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 23));
#endif
  (void)name;
  return 0;
}

static const char *const het_isa_names[] = {
    "sse4.2",   "avx",      "avx2",       "fma",        "f16c",
    "avx512f",  "avx512bw", "avx512vl",   "avx512dq",   "avx512vnni",
    "avx512bf16", "avx512fp16", NULL};

static void het_cpuinfo_read(void) {
  het_cpuinfo *c = &het_cpu;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, cx, d;
  if (__get_cpuid(0, &a, &b, &cx, &d)) {
    memcpy(c->vendor, &b, 4);
    memcpy(c->vendor + 4, &d, 4);
    memcpy(c->vendor + 8, &cx, 4);
  }
  if (__get_cpuid(1, &a, &b, &cx, &d)) {
    int base = (int)((a >> 8) & 0xf), ext = (int)((a >> 20) & 0xff);
    c->family = base == 0xf ? base + ext : base;
    c->model = (int)((a >> 4) & 0xf);
    if (base == 0x6 || base == 0xf)
      c->model |= (int)((a >> 16) & 0xf) << 4;
    c->stepping = (int)(a & 0xf);
  }
  unsigned words[12] = {0};
  if (__get_cpuid(0x80000000, &a, &b, &cx, &d) && a >= 0x80000004) {
    for (unsigned k = 0; k < 3; k++)
      __get_cpuid(0x80000002 + k, &words[4 * k], &words[4 * k + 1],
                  &words[4 * k + 2], &words[4 * k + 3]);
    memcpy(c->brand, words, sizeof words);
    c->brand[sizeof c->brand - 1] = '\0';
    /* trim the padding some CPUs put around the name */
    char *p = c->brand;
    while (*p == ' ')
      p++;
    memmove(c->brand, p, strlen(p) + 1);
    for (size_t n = strlen(c->brand); n && c->brand[n - 1] == ' '; n--)
      c->brand[n - 1] = '\0';
  }
#endif
  size_t used = 0;
  for (int k = 0; het_isa_names[k]; k++)
    if (het_isa_has(het_isa_names[k]) && used < sizeof c->isa)
      used += (size_t)snprintf(c->isa + used, sizeof c->isa - used, "%s%s",
                               used ? " " : "", het_isa_names[k]);
#ifdef _SC_LEVEL1_DCACHE_SIZE
  c->cache_l1d = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  c->cache_l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  c->cache_l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  c->cache_l1d = c->cache_l1d > 0 ? c->cache_l1d : 0;
  c->cache_l2 = c->cache_l2 > 0 ? c->cache_l2 : 0;
  c->cache_l3 = c->cache_l3 > 0 ? c->cache_l3 : 0;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  c->cpus = n > 0 ? (int)n : 1;
}

const het_cpuinfo *het_cpuinfo_get(void) {
  pthread_once(&het_cpuinfo_once, het_cpuinfo_read);
  return &het_cpu;
}

bool het_cpuinfo_has_isa(const char *isa, char *missing, size_t cap) {
  const het_cpuinfo *c = het_cpuinfo_get();
  const char *p = isa;
  while (*p) {
    while (*p == ' ')
      p++;
    size_t len = strcspn(p, " ");
    if (!len)
      break;
    bool found = false;
    for (const char *q = c->isa; *q && !found;) {
      size_t l2 = strcspn(q, " ");
      found = l2 == len && strncmp(p, q, len) == 0;
      q += l2;
      while (*q == ' ')
        q++;
    }
    if (!found) {
      if (missing && cap)
        snprintf(missing, cap, "%.*s", (int)len, p);
      return false;
    }
    p += len;
  }
  return true;
}
