/* linalg_geom.c — spatial geometry of Conv, ConvTranspose and pooling:
 * reads kernel_shape/strides/dilations/pads/auto_pad/ceil_mode and
 * output_padding/output_shape and computes pads and output sizes exactly as
 * the ONNX spec states (floor division for ConvTranspose's derived pads).
 */
#include <string.h>

#include "core/ops/linalg_geom.h"
#include "core/status.h"

typedef enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID } pad_mode;

static het_status geom_fail(const het_node *node, het_status st,
                            const char *what) {
  return het_error(st, "node '%s' (%s): %s", node->name, node->op_type, what);
}

static het_status read_list(const het_node *node, const char *name, int want,
                            int64_t dflt, int64_t min, int64_t *out) {
  size_t n = 0;
  const int64_t *v = het_node_attr_ints(node, name, &n);
  for (int i = 0; i < want; i++)
    out[i] = dflt;
  if (!v)
    return HET_OK;
  if ((int)n != want)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): attribute %s has %zu values, expected %d",
                     node->name, node->op_type, name, n, want);
  for (int i = 0; i < want; i++) {
    if (v[i] < min)
      return het_error(HET_ERR_INVALID_MODEL,
                       "node '%s' (%s): attribute %s value %lld below %lld",
                       node->name, node->op_type, name, (long long)v[i],
                       (long long)min);
    out[i] = v[i];
  }
  return HET_OK;
}

static het_status read_pad_mode(const het_node *node, pad_mode *m) {
  const char *s = het_node_attr_string(node, "auto_pad");
  *m = PAD_NOTSET;
  if (!s || !*s || strcmp(s, "NOTSET") == 0)
    return HET_OK;
  if (strcmp(s, "SAME_UPPER") == 0)
    *m = PAD_SAME_UPPER;
  else if (strcmp(s, "SAME_LOWER") == 0)
    *m = PAD_SAME_LOWER;
  else if (strcmp(s, "VALID") == 0)
    *m = PAD_VALID;
  else
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): unknown auto_pad '%s'", node->name,
                     node->op_type, s);
  return HET_OK;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* Conv / pool output size for dim i (in and kernel known). */
static het_status forward_dim(const het_node *node, het_conv_geom *g, int i,
                              pad_mode m, bool ceil_mode) {
  int64_t in = g->in[i], s = g->stride[i];
  int64_t dk = (g->kernel[i] - 1) * g->dil[i] + 1;
  if (m == PAD_SAME_UPPER || m == PAD_SAME_LOWER) {
    int64_t out = ceil_div(in, s);
    int64_t total = (out - 1) * s + dk - in;
    if (total < 0)
      total = 0;
    g->pad_b[i] = m == PAD_SAME_UPPER ? total / 2 : total - total / 2;
    g->pad_e[i] = total - g->pad_b[i];
    g->out[i] = out;
    return HET_OK;
  }
  if (m == PAD_VALID)
    g->pad_b[i] = g->pad_e[i] = 0;
  int64_t span = in + g->pad_b[i] + g->pad_e[i] - dk;
  if (span < 0)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): spatial dim %d of size %lld (padded "
                     "%lld) is smaller than the dilated kernel %lld",
                     node->name, node->op_type, i, (long long)in,
                     (long long)(in + g->pad_b[i] + g->pad_e[i]),
                     (long long)dk);
  int64_t out = (ceil_mode ? ceil_div(span, s) : span / s) + 1;
  /* The last window must start inside the input or its leading pad. */
  if (ceil_mode && (out - 1) * s >= in + g->pad_b[i])
    out--;
  g->out[i] = out;
  return HET_OK;
}

/* ConvTranspose output size for dim i (in and kernel known). */
static void transpose_dim(het_conv_geom *g, int i, pad_mode m,
                          const int64_t *out_pad, const int64_t *target) {
  int64_t in = g->in[i], s = g->stride[i];
  int64_t dk = (g->kernel[i] - 1) * g->dil[i] + 1;
  int64_t full = s * (in - 1) + out_pad[i] + dk;
  if (target || m == PAD_SAME_UPPER || m == PAD_SAME_LOWER) {
    int64_t want = target ? target[i] : in * s;
    int64_t total = full - want;
    if (m == PAD_SAME_UPPER) {
      g->pad_b[i] = floor_div(total, 2);
      g->pad_e[i] = total - g->pad_b[i];
    } else {
      g->pad_e[i] = floor_div(total, 2);
      g->pad_b[i] = total - g->pad_e[i];
    }
    g->out[i] = want;
    return;
  }
  if (m == PAD_VALID)
    g->pad_b[i] = g->pad_e[i] = 0;
  g->out[i] = full - g->pad_b[i] - g->pad_e[i];
}

static het_status read_kernel(const het_node *node, het_geom_kind kind,
                              int nsp, const int64_t *kernel,
                              het_conv_geom *g) {
  size_t n = 0;
  const int64_t *ks = het_node_attr_ints(node, "kernel_shape", &n);
  if (!ks) {
    if (kind == HET_GEOM_POOL || !kernel)
      return geom_fail(node, HET_ERR_INVALID_MODEL,
                       "attribute kernel_shape is required");
    memcpy(g->kernel, kernel, sizeof(int64_t) * (size_t)nsp);
    return HET_OK;
  }
  return read_list(node, "kernel_shape", nsp, 1, 1, g->kernel);
}

static het_status read_output_shape(const het_node *node, int nsp,
                                    int64_t *target, bool *has) {
  size_t n = 0;
  const int64_t *v = het_node_attr_ints(node, "output_shape", &n);
  *has = v != NULL && n > 0;
  if (!*has)
    return HET_OK;
  if ((int)n != nsp && (int)n != nsp + 2)
    return het_error(HET_ERR_INVALID_MODEL,
                     "node '%s' (%s): output_shape has %zu values for %d "
                     "spatial dims",
                     node->name, node->op_type, n, nsp);
  memcpy(target, v + (n - (size_t)nsp), sizeof(int64_t) * (size_t)nsp);
  return HET_OK;
}

het_status het_conv_geom_init(const het_node *node, het_geom_kind kind,
                              int nsp, const int64_t *in,
                              const int64_t *kernel, het_conv_geom *g) {
  if (nsp < 1 || nsp > HET_GEOM_MAX_SP)
    return het_error(HET_ERR_SHAPE,
                     "node '%s' (%s): %d spatial dims (input rank %d) not in "
                     "1..%d",
                     node->name, node->op_type, nsp, nsp + 2, HET_GEOM_MAX_SP);
  memset(g, 0, sizeof *g);
  g->nsp = nsp;
  memcpy(g->in, in, sizeof(int64_t) * (size_t)nsp);
  int64_t pads[2 * HET_GEOM_MAX_SP], out_pad[HET_GEOM_MAX_SP];
  int64_t target[HET_GEOM_MAX_SP];
  bool has_target = false;
  pad_mode m;
  HET_TRY(read_kernel(node, kind, nsp, kernel, g));
  HET_TRY(read_list(node, "strides", nsp, 1, 1, g->stride));
  HET_TRY(read_list(node, "dilations", nsp, 1, 1, g->dil));
  HET_TRY(read_list(node, "pads", 2 * nsp, 0, 0, pads));
  HET_TRY(read_pad_mode(node, &m));
  bool ceil_mode = kind == HET_GEOM_POOL &&
                   het_node_attr_int(node, "ceil_mode", 0) != 0;
  if (kind == HET_GEOM_CONVT) {
    HET_TRY(read_list(node, "output_padding", nsp, 0, 0, out_pad));
    HET_TRY(read_output_shape(node, nsp, target, &has_target));
  }
  for (int i = 0; i < nsp; i++) {
    g->pad_b[i] = pads[i];
    g->pad_e[i] = pads[nsp + i];
    if (g->in[i] < 0 || g->kernel[i] < 0) {
      g->out[i] = (kind == HET_GEOM_CONVT && has_target) ? target[i] : -1;
      continue;
    }
    if (kind == HET_GEOM_CONVT)
      transpose_dim(g, i, m, out_pad, has_target ? target : NULL);
    else
      HET_TRY(forward_dim(node, g, i, m, ceil_mode));
  }
  return HET_OK;
}

int64_t het_conv_geom_count(const int64_t *dims, int nsp) {
  int64_t n = 1;
  for (int i = 0; i < nsp; i++)
    n *= dims[i];
  return n;
}
