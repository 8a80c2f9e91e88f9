/* devprofile.h — device facts from a YAML device profile in the format of
 * configs/devices/README.md (its scalar keys: the facts of
 * het_device_info), the parser shared by the providers whose devices a
 * profile describes by facts alone: the CPU (instead of its start-up
 * measurement) and CUDA (a GPU's facts, or a GPU that is not present).
 */
#ifndef HET_CORE_DEVPROFILE_H
#define HET_CORE_DEVPROFILE_H

#include "hetrt/provider.h"

/* The keys; bit k of het_device_profile.set says key k was given. */
typedef enum het_profile_key {
  HET_PROFILE_CAPACITY, /* memory_capacity */
  HET_PROFILE_F32,      /* peak_flops: float32 (or the scalar for all) */
  HET_PROFILE_F16,      /* peak_flops: float16 */
  HET_PROFILE_I8,       /* peak_flops: int8 */
  HET_PROFILE_MEMBW,    /* memory_bandwidth */
  HET_PROFILE_LINKBW,   /* link_bandwidth */
  HET_PROFILE_LATENCY,  /* link_latency */
  HET_PROFILE_LAUNCH,   /* launch_overhead */
  HET_PROFILE_LAYOUT,   /* preferred_layout */
  HET_PROFILE_NAME,     /* name */
  HET_PROFILE_PROVIDER, /* provider */
  HET_PROFILE_KEYS
} het_profile_key;

typedef struct het_device_profile {
  het_device_info info; /* the facts given; the others zero */
  unsigned set;         /* bit k: key k was given */
  char name[64];        /* the name given, or "" */
} het_device_profile;

/* Reads the profile at path for provider: every key optional; provider,
 * when given, must equal provider; memory_capacity (512MiB, 16GB, 0 =
 * unlimited), peak_flops (a scalar such as 200G or 1.5TFLOPS, or a
 * mapping {float32, float16, int8}), memory_bandwidth and link_bandwidth
 * (20GB/s, 8e9), link_latency and launch_overhead (1us, 2ms, 1e-6),
 * preferred_layout (NCHW or NHWC), name.  Errors: IO (cannot open),
 * INVALID_ARGUMENT (syntax, unknown or repeated key, bad quantity, a list,
 * another provider), naming the file, line and key. */
het_status het_device_profile_load(const char *path, const char *provider,
                                   het_device_profile *out);

/* Every fact p gives replaces into's (capacity, the three peaks, the
 * bandwidths, latency, launch overhead, layout). */
void het_device_profile_apply(const het_device_profile *p,
                              het_device_info *into);

#endif
