/* profile.c — the emu device profile: built-in defaults and the YAML loader
 * (libyaml document API, so every error names the file, line and key).
 *
 * Keys (a top-level mapping; every key optional, missing ones keep the
 * built-in defaults; unknown or repeated keys are errors):
 *   name: npu                          device name used in messages/reports
 *   provider: emu                      must be emu when present
 *   memory_capacity: 512MiB            bytes; B, KB/MB/GB/TB (10^3k),
 *                                      KiB/MiB/GiB/TiB (2^10k); 0 = unlimited
 *   peak_flops: {float32: 4T, float16: 8T, int8: 16T}
 *                                      FLOP/s; K/M/G/T/P suffix, optional
 *                                      FLOPS / FLOP/s / OPS; a scalar sets all
 *   memory_bandwidth: 100GB/s          bytes/s inside the device (byte
 *   link_bandwidth: 8 GB/s             suffixes above, optional "/s")
 *   link_latency: 20us                 seconds; s, ms, us, ns suffixes
 *                                      (quantities: core/quantity.h)
 *   launch_overhead: 10us              seconds per kernel launch
 *   supported_ops: [Conv, Relu, ...]   "Op" or "domain.Op"; empty or missing
 *                                      = every op that has a CPU kernel
 *   unsupported_dtypes: [int16, float64]  dtype names as het_dtype_str
 *   preferred_layout: NCHW             NCHW or NHWC: how rank-4 tensors
 *                                      are kept in device memory
 *   float32_as: float16                float16 or bfloat16: float32 tensors
 *                                      are kept and computed in that type
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "core/quantity.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "providers/emu/emu_internal.h"

void het_emu_profile_default(het_emu_profile *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "emu");
  p->memory_capacity = (size_t)1 << 30;
  p->peak_flops_f32 = 1e12;
  p->peak_flops_f16 = 2e12;
  p->peak_flops_i8 = 4e12;
  p->memory_bandwidth = 100e9;
  p->link_bandwidth = 16e9;
  p->link_latency = 10e-6;
  p->launch_overhead = 5e-6;
  p->preferred_layout = HET_LAYOUT_NCHW;
}

void het_emu_profile_deinit(het_emu_profile *p) {
  for (int i = 0; i < p->n_supported_ops; i++)
    free(p->supported_ops[i]);
  free(p->supported_ops);
  p->supported_ops = NULL;
  p->n_supported_ops = 0;
}

/* ---- YAML walking ------------------------------------------------------- */

typedef struct het_emu_loader {
  const char *path;
  yaml_document_t *doc;
  het_emu_profile *p;
} het_emu_loader;

static het_status het_emu_fail(const het_emu_loader *L, const yaml_node_t *n,
                               const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static het_status het_emu_fail(const het_emu_loader *L, const yaml_node_t *n,
                               const char *key, const char *fmt, ...) {
  char msg[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return het_error(HET_ERR_INVALID_ARGUMENT,
                   "device profile '%s' line %zu: key '%s': %s", L->path,
                   n ? (size_t)n->start_mark.line + 1 : (size_t)0, key, msg);
}

static const char *het_emu_scalar(const yaml_node_t *n) {
  return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                          : NULL;
}

/* Reads a scalar with parse(); pos requires the value to be > 0. */
static het_status het_emu_number(const het_emu_loader *L, yaml_node_t *n,
                                 const char *key, int kind, bool pos,
                                 double *out) {
  static const char *const what[] = {"a byte count (e.g. 512MiB)",
                                     "a rate in bytes/s (e.g. 8GB/s)",
                                     "a time (e.g. 20us)",
                                     "a FLOP/s rate (e.g. 4T)"};
  static const het_quantity_kind kinds[] = {
      HET_QUANTITY_BYTES, HET_QUANTITY_BYTE_RATE, HET_QUANTITY_SECONDS,
      HET_QUANTITY_FLOPS};
  const char *s = het_emu_scalar(n);
  if (!het_quantity_parse(s, kinds[kind], out))
    return het_emu_fail(L, n, key, "cannot read '%s' as %s", s ? s : "(not a scalar)",
                        what[kind]);
  if (pos && !(*out > 0))
    return het_emu_fail(L, n, key, "must be greater than 0, got '%s'", s);
  return HET_OK;
}

static het_status het_emu_peak_flops(const het_emu_loader *L, yaml_node_t *n,
                                     const char *key) {
  het_emu_profile *p = L->p;
  if (n->type == YAML_SCALAR_NODE) {
    HET_TRY(het_emu_number(L, n, key, 3, true, &p->peak_flops_f32));
    p->peak_flops_f16 = p->peak_flops_i8 = p->peak_flops_f32;
    return HET_OK;
  }
  if (n->type != YAML_MAPPING_NODE)
    return het_emu_fail(L, n, key, "expected a mapping {float32, float16, int8}");
  for (yaml_node_pair_t *pr = n->data.mapping.pairs.start;
       pr < n->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(L->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(L->doc, pr->value);
    const char *ks = het_emu_scalar(k);
    double *dst = NULL;
    if (ks && strcmp(ks, "float32") == 0)
      dst = &p->peak_flops_f32;
    else if (ks && strcmp(ks, "float16") == 0)
      dst = &p->peak_flops_f16;
    else if (ks && strcmp(ks, "int8") == 0)
      dst = &p->peak_flops_i8;
    if (!dst)
      return het_emu_fail(L, k, key, "unknown dtype '%s' (float32, float16, int8)",
                          ks ? ks : "?");
    char sub[64];
    snprintf(sub, sizeof sub, "%s.%s", key, ks);
    HET_TRY(het_emu_number(L, v, sub, 3, true, dst));
  }
  return HET_OK;
}

static het_status het_emu_add_op(const het_emu_loader *L, yaml_node_t *item,
                                  const char *key) {
  het_emu_profile *p = L->p;
  const char *op = het_emu_scalar(item);
  if (!op || !*op)
    return het_emu_fail(L, item, key, "each entry must be an op type");
  char domain[128] = "";
  const char *type = op, *dot = strrchr(op, '.');
  if (dot && (size_t)(dot - op) < sizeof domain) {
    memcpy(domain, op, (size_t)(dot - op));
    domain[dot - op] = '\0';
    type = dot + 1;
  }
  if (!het_kernel_find(domain, type))
    return het_emu_fail(L, item, key, "op '%s' has no kernel in this build", op);
  char *copy = strdup(op);
  char **grown = realloc(p->supported_ops,
                         ((size_t)p->n_supported_ops + 1) * sizeof *grown);
  if (!copy || !grown) {
    free(copy);
    if (grown)
      p->supported_ops = grown;
    return het_error(HET_ERR_OUT_OF_MEMORY, "device profile '%s': out of memory",
                     L->path);
  }
  p->supported_ops = grown;
  p->supported_ops[p->n_supported_ops++] = copy;
  return HET_OK;
}

static het_status het_emu_list(const het_emu_loader *L, yaml_node_t *n,
                               const char *key, bool ops) {
  if (n->type == YAML_SCALAR_NODE && !*het_emu_scalar(n))
    return HET_OK; /* "supported_ops:" with nothing = empty */
  if (n->type != YAML_SEQUENCE_NODE)
    return het_emu_fail(L, n, key, "expected a list");
  for (yaml_node_item_t *it = n->data.sequence.items.start;
       it < n->data.sequence.items.top; it++) {
    yaml_node_t *item = yaml_document_get_node(L->doc, *it);
    if (ops) {
      HET_TRY(het_emu_add_op(L, item, key));
      continue;
    }
    const char *name = het_emu_scalar(item);
    int found = -1;
    for (int d = 1; name && d < 64; d++)
      if (strcmp(het_dtype_str((het_dtype)d), name) == 0)
        found = d;
    if (found < 0)
      return het_emu_fail(L, item, key, "unknown dtype '%s'", name ? name : "?");
    L->p->unsupported_dtypes |= (uint64_t)1 << found;
  }
  return HET_OK;
}

static het_status het_emu_text(const het_emu_loader *L, yaml_node_t *n,
                               const char *key) {
  const char *s = het_emu_scalar(n);
  if (!s || !*s)
    return het_emu_fail(L, n, key, "expected a non-empty string");
  if (strcmp(key, "name") == 0) {
    if (strlen(s) >= sizeof L->p->name)
      return het_emu_fail(L, n, key, "longer than %zu characters",
                          sizeof L->p->name - 1);
    snprintf(L->p->name, sizeof L->p->name, "%s", s);
  } else if (strcmp(key, "provider") == 0) {
    if (strcmp(s, "emu") != 0)
      return het_emu_fail(L, n, key, "this profile is for provider '%s', not emu", s);
  } else if (strcmp(key, "float32_as") == 0) {
    if (strcmp(s, "float16") == 0)
      L->p->float32_as = HET_DTYPE_FLOAT16;
    else if (strcmp(s, "bfloat16") == 0)
      L->p->float32_as = HET_DTYPE_BFLOAT16;
    else
      return het_emu_fail(L, n, key, "expected float16 or bfloat16, got '%s'", s);
  } else if (strcmp(s, "NCHW") == 0) {
    L->p->preferred_layout = HET_LAYOUT_NCHW;
  } else if (strcmp(s, "NHWC") == 0) {
    L->p->preferred_layout = HET_LAYOUT_NHWC;
  } else {
    return het_emu_fail(L, n, key, "expected NCHW or NHWC, got '%s'", s);
  }
  return HET_OK;
}

static const char *const het_emu_keys[] = {
    "name", "provider", "memory_capacity", "peak_flops", "memory_bandwidth",
    "link_bandwidth", "link_latency", "launch_overhead", "supported_ops",
    "unsupported_dtypes", "preferred_layout", "float32_as", NULL};

static het_status het_emu_key(const het_emu_loader *L, int k, yaml_node_t *v) {
  const char *key = het_emu_keys[k];
  het_emu_profile *p = L->p;
  double d;
  switch (k) {
  case 0: case 1: case 10: case 11:
    return het_emu_text(L, v, key);
  case 2:
    HET_TRY(het_emu_number(L, v, key, 0, false, &d));
    if (d > (double)SIZE_MAX)
      return het_emu_fail(L, v, key, "too large");
    p->memory_capacity = (size_t)d;
    return HET_OK;
  case 3:
    return het_emu_peak_flops(L, v, key);
  case 4:
    return het_emu_number(L, v, key, 1, true, &p->memory_bandwidth);
  case 5:
    return het_emu_number(L, v, key, 1, true, &p->link_bandwidth);
  case 6:
    return het_emu_number(L, v, key, 2, false, &p->link_latency);
  case 7:
    return het_emu_number(L, v, key, 2, false, &p->launch_overhead);
  case 8:
    return het_emu_list(L, v, key, true);
  default:
    return het_emu_list(L, v, key, false);
  }
}

static het_status het_emu_walk(const het_emu_loader *L, yaml_node_t *root) {
  if (!root)
    return het_error(HET_ERR_INVALID_ARGUMENT, "device profile '%s': empty file",
                     L->path);
  if (root->type != YAML_MAPPING_NODE)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "device profile '%s' line %zu: expected a mapping of keys",
                     L->path, (size_t)root->start_mark.line + 1);
  unsigned seen = 0;
  for (yaml_node_pair_t *pr = root->data.mapping.pairs.start;
       pr < root->data.mapping.pairs.top; pr++) {
    yaml_node_t *k = yaml_document_get_node(L->doc, pr->key);
    yaml_node_t *v = yaml_document_get_node(L->doc, pr->value);
    const char *ks = het_emu_scalar(k);
    int idx = -1;
    for (int i = 0; ks && het_emu_keys[i]; i++)
      if (strcmp(ks, het_emu_keys[i]) == 0)
        idx = i;
    if (idx < 0)
      return het_emu_fail(L, k, ks ? ks : "?", "unknown key");
    if (seen & (1u << idx))
      return het_emu_fail(L, k, ks, "given twice");
    seen |= 1u << idx;
    HET_TRY(het_emu_key(L, idx, v));
  }
  return HET_OK;
}

het_status het_emu_profile_load(const char *path, het_emu_profile *p) {
  het_emu_profile_default(p);
  FILE *f = fopen(path, "rb");
  if (!f)
    return het_error(HET_ERR_IO, "device profile '%s': %s", path,
                     strerror(errno));
  yaml_parser_t parser;
  yaml_document_t doc;
  het_status st = HET_OK;
  if (!yaml_parser_initialize(&parser)) {
    fclose(f);
    return het_error(HET_ERR_OUT_OF_MEMORY, "device profile '%s': out of memory",
                     path);
  }
  yaml_parser_set_input_file(&parser, f);
  if (!yaml_parser_load(&parser, &doc)) {
    st = het_error(HET_ERR_INVALID_ARGUMENT,
                   "device profile '%s' line %zu: YAML error: %s%s%s", path,
                   (size_t)parser.problem_mark.line + 1,
                   parser.problem ? parser.problem : "malformed",
                   parser.context ? " " : "",
                   parser.context ? parser.context : "");
    goto out;
  }
  het_emu_loader L = {.path = path, .doc = &doc, .p = p};
  st = het_emu_walk(&L, yaml_document_get_root_node(&doc));
  yaml_document_delete(&doc);
out:
  yaml_parser_delete(&parser);
  fclose(f);
  if (st != HET_OK)
    het_emu_profile_deinit(p);
  return st;
}

/* ---- queries ------------------------------------------------------------ */

bool het_emu_profile_has_op(const het_emu_profile *p, const char *domain,
                            const char *op_type) {
  if (!p->supported_ops)
    return true;
  bool onnx = !domain || !*domain || strcmp(domain, "ai.onnx") == 0;
  size_t dl = onnx ? 0 : strlen(domain);
  for (int i = 0; i < p->n_supported_ops; i++) {
    const char *e = p->supported_ops[i];
    if (onnx && strcmp(e, op_type) == 0)
      return true;
    if (onnx && strncmp(e, "ai.onnx.", 8) == 0 && strcmp(e + 8, op_type) == 0)
      return true;
    if (!onnx && strncmp(e, domain, dl) == 0 && e[dl] == '.' &&
        strcmp(e + dl + 1, op_type) == 0)
      return true;
  }
  return false;
}

bool het_emu_profile_dtype_ok(const het_emu_profile *p, het_dtype t) {
  return (unsigned)t >= 64 || !(p->unsupported_dtypes & ((uint64_t)1 << t));
}

void het_emu_profile_device_info(const het_emu_profile *p,
                                 het_device_info *out) {
  memset(out, 0, sizeof *out);
  out->host_memory = false;
  out->memory_capacity = p->memory_capacity;
  out->peak_flops_f32 = p->peak_flops_f32;
  out->peak_flops_f16 = p->peak_flops_f16;
  out->peak_flops_i8 = p->peak_flops_i8;
  out->memory_bandwidth = p->memory_bandwidth;
  out->link_bandwidth = p->link_bandwidth;
  out->link_latency = p->link_latency;
  out->launch_overhead = p->launch_overhead;
  out->preferred_layout = p->preferred_layout;
  out->float32_as = p->float32_as;
}
