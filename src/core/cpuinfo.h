/* cpuinfo.h — what a plan file records of the host CPU and checks on
 * load: vendor, family/model/stepping and brand (CPUID), the instruction
 * set extensions hetrt's kernels and libraries choose between, cache sizes
 * and the logical CPU count.  Invariant: het_cpuinfo_get describes the
 * machine the process runs on and is the same on every call.
 */
#ifndef HET_CORE_CPUINFO_H
#define HET_CORE_CPUINFO_H

#include <stdbool.h>
#include <stddef.h>

#define HET_CPU_ISA_CAP 256

typedef struct het_cpuinfo {
  char vendor[16];      /* "GenuineIntel", "AuthenticAMD", "" elsewhere */
  int family, model, stepping;
  char brand[64];       /* "AMD EPYC 9R14 96-Core Processor" */
  char isa[HET_CPU_ISA_CAP]; /* space-separated, a fixed order: "sse4.2 avx
                                avx2 fma f16c avx512f ..." */
  long cache_l1d, cache_l2, cache_l3; /* bytes, 0 when unknown */
  int cpus;             /* logical CPUs online */
} het_cpuinfo;

/* This machine's CPU (measured once per process; thread-safe). */
const het_cpuinfo *het_cpuinfo_get(void);

/* Whether every extension named in isa (space-separated, as in
 * het_cpuinfo.isa) is one this CPU has; *missing gets the first one it
 * lacks (cap bytes) when not. */
bool het_cpuinfo_has_isa(const char *isa, char *missing, size_t cap);

#endif
