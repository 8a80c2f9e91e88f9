/* devprofile.c — het_device_profile_load: a YAML device profile read
 * event by event (libyaml): a top-level mapping of scalars, where
 * peak_flops may also be a mapping of dtype: scalar; quantities as
 * core/quantity.h reads them.  Every error names the file and the line.
 */
#include "core/devprofile.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/quantity.h"
#include "core/status.h"

/* The profile being read: p's facts and key bits, the file for messages,
 * the provider it must be for. */
typedef struct het_profile_reader {
  const char *path, *provider;
  het_device_profile *p;
} het_profile_reader;

static const struct {
  const char *key;
  het_quantity_kind unit;
} het_profile_keys[] = {
    [HET_PROFILE_CAPACITY] = {"memory_capacity", HET_QUANTITY_BYTES},
    [HET_PROFILE_F32] = {"float32", HET_QUANTITY_FLOPS},
    [HET_PROFILE_F16] = {"float16", HET_QUANTITY_FLOPS},
    [HET_PROFILE_I8] = {"int8", HET_QUANTITY_FLOPS},
    [HET_PROFILE_MEMBW] = {"memory_bandwidth", HET_QUANTITY_BYTE_RATE},
    [HET_PROFILE_LINKBW] = {"link_bandwidth", HET_QUANTITY_BYTE_RATE},
    [HET_PROFILE_LATENCY] = {"link_latency", HET_QUANTITY_SECONDS},
    [HET_PROFILE_LAUNCH] = {"launch_overhead", HET_QUANTITY_SECONDS},
    [HET_PROFILE_LAYOUT] = {"preferred_layout", HET_QUANTITY_BYTES},
    [HET_PROFILE_NAME] = {"name", HET_QUANTITY_BYTES},
    [HET_PROFILE_PROVIDER] = {"provider", HET_QUANTITY_BYTES},
};

static void het_profile_apply_one(het_device_info *i, int k, double v) {
  switch (k) {
  case HET_PROFILE_CAPACITY:
    i->memory_capacity = v >= 1.8e19 ? SIZE_MAX : (size_t)v;
    break;
  case HET_PROFILE_F32: i->peak_flops_f32 = v; break;
  case HET_PROFILE_F16: i->peak_flops_f16 = v; break;
  case HET_PROFILE_I8: i->peak_flops_i8 = v; break;
  case HET_PROFILE_MEMBW: i->memory_bandwidth = v; break;
  case HET_PROFILE_LINKBW: i->link_bandwidth = v; break;
  case HET_PROFILE_LATENCY: i->link_latency = v; break;
  default: i->launch_overhead = v; break;
  }
}

/* Field k (a key at top level, or a dtype under peak_flops) = value. */
static het_status het_profile_set(het_profile_reader *r, int k,
                                  const char *key, const char *value,
                                  size_t line) {
  het_device_profile *p = r->p;
  if (p->set & (1u << k))
    return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: repeated key '%s'",
                     r->path, line, key);
  p->set |= 1u << k;
  if (k == HET_PROFILE_NAME) {
    snprintf(p->name, sizeof p->name, "%s", value);
    return HET_OK;
  }
  if (k == HET_PROFILE_PROVIDER)
    return strcmp(value, r->provider) == 0
               ? HET_OK
               : het_error(HET_ERR_INVALID_ARGUMENT,
                           "%s:%zu: profile for provider '%s', not '%s'",
                           r->path, line, value, r->provider);
  if (k == HET_PROFILE_LAYOUT) {
    if (strcmp(value, "NCHW") != 0 && strcmp(value, "NHWC") != 0)
      return het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%zu: preferred_layout '%s' (NCHW or NHWC)",
                       r->path, line, value);
    p->info.preferred_layout =
        strcmp(value, "NHWC") == 0 ? HET_LAYOUT_NHWC : HET_LAYOUT_NCHW;
    return HET_OK;
  }
  double v;
  if (!het_quantity_parse(value, het_profile_keys[k].unit, &v))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s:%zu: %s: '%s' is not a valid quantity", r->path,
                     line, key, value);
  het_profile_apply_one(&p->info, k, v);
  return HET_OK;
}

/* One key: value pair; section is "peak_flops" inside its mapping. */
static het_status het_profile_pair(het_profile_reader *r, bool in_flops,
                                   const char *key, const char *value,
                                   size_t line) {
  if (!in_flops && strcmp(key, "peak_flops") == 0) {
    for (int k = HET_PROFILE_F32; k <= HET_PROFILE_I8; k++)
      HET_TRY(het_profile_set(r, k, key, value, line));
    return HET_OK;
  }
  for (int k = 0; k < HET_PROFILE_KEYS; k++) {
    bool dtype = k >= HET_PROFILE_F32 && k <= HET_PROFILE_I8;
    if (dtype == in_flops && strcmp(key, het_profile_keys[k].key) == 0)
      return het_profile_set(r, k, key, value, line);
  }
  return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: unknown key '%s%s'",
                   r->path, line, in_flops ? "peak_flops." : "", key);
}

/* Reads a top-level mapping of scalars, where peak_flops may also be a
 * mapping of dtype: scalar. */
static het_status het_profile_parse(yaml_parser_t *y,
                                    het_profile_reader *r) {
  char key[64] = "";
  bool have_key = false, in_flops = false;
  int depth = 0;
  for (;;) {
    yaml_event_t ev;
    if (!yaml_parser_parse(y, &ev))
      return het_error(HET_ERR_INVALID_ARGUMENT, "%s:%zu: %s", r->path,
                       y->problem_mark.line + 1,
                       y->problem ? y->problem : "YAML syntax error");
    het_status st = HET_OK;
    yaml_event_type_t type = ev.type;
    size_t line = ev.start_mark.line + 1;
    if (type == YAML_MAPPING_START_EVENT) {
      in_flops = depth == 1 && have_key && strcmp(key, "peak_flops") == 0;
      if (depth == 1 && !in_flops)
        st = het_error(HET_ERR_INVALID_ARGUMENT,
                       "%s:%zu: '%s' takes a single value", r->path, line,
                       key);
      have_key = false;
      depth++;
    } else if (type == YAML_MAPPING_END_EVENT) {
      depth--;
      in_flops = false;
    } else if (type == YAML_SEQUENCE_START_EVENT) {
      st = het_error(HET_ERR_INVALID_ARGUMENT,
                     "%s:%zu: '%s': lists are not keys of a %s profile",
                     r->path, line, key, r->provider);
    } else if (type == YAML_SCALAR_EVENT) {
      const char *s = (const char *)ev.data.scalar.value;
      if (!have_key) {
        snprintf(key, sizeof key, "%s", s);
        have_key = true;
      } else {
        st = het_profile_pair(r, in_flops, key, s, line);
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

het_status het_device_profile_load(const char *path, const char *provider,
                                   het_device_profile *out) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return het_error(HET_ERR_IO, "device profile '%s': cannot open", path);
  yaml_parser_t y;
  if (!yaml_parser_initialize(&y)) {
    fclose(f);
    return het_error(HET_ERR_OUT_OF_MEMORY, "device profile: out of memory");
  }
  yaml_parser_set_input_file(&y, f);
  het_device_profile p;
  memset(&p, 0, sizeof p);
  het_profile_reader r = {.path = path, .provider = provider, .p = &p};
  het_status st = het_profile_parse(&y, &r);
  yaml_parser_delete(&y);
  fclose(f);
  if (st == HET_OK)
    *out = p;
  return st;
}

void het_device_profile_apply(const het_device_profile *p,
                              het_device_info *into) {
  const het_device_info *from = &p->info;
#define HET_PROFILE_TAKE(key, field)   \
  if (p->set & (1u << (key)))          \
    into->field = from->field;
  HET_PROFILE_TAKE(HET_PROFILE_CAPACITY, memory_capacity)
  HET_PROFILE_TAKE(HET_PROFILE_F32, peak_flops_f32)
  HET_PROFILE_TAKE(HET_PROFILE_F16, peak_flops_f16)
  HET_PROFILE_TAKE(HET_PROFILE_I8, peak_flops_i8)
  HET_PROFILE_TAKE(HET_PROFILE_MEMBW, memory_bandwidth)
  HET_PROFILE_TAKE(HET_PROFILE_LINKBW, link_bandwidth)
  HET_PROFILE_TAKE(HET_PROFILE_LATENCY, link_latency)
  HET_PROFILE_TAKE(HET_PROFILE_LAUNCH, launch_overhead)
  HET_PROFILE_TAKE(HET_PROFILE_LAYOUT, preferred_layout)
#undef HET_PROFILE_TAKE
}
