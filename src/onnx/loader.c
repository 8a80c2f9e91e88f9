/* loader.c — ONNX model loading: the file mapped read-only, a
 * nesting-depth pre-scan of the protobuf wire format (bounds protobuf-c's
 * recursion), ModelProto decoding (weights adopted, not copied), model-level fields (opsets, metadata) and validation of the
 * graph and every subgraph against its enclosing scopes.
 */
#include "onnx/loader.h"

#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/status.h"
#include "onnx/onnx_internal.h"

/* Largest model file accepted (protobuf's own limit is 2 GiB). */
#define HET_ONNX_MAX_MODEL_BYTES ((size_t)2 << 30)
/* Deepest message nesting accepted by the pre-scan. */
#define HET_ONNX_MAX_WIRE_DEPTH (4 * HET_ONNX_MAX_GRAPH_DEPTH + 16)

static bool het_wire_varint(const uint8_t **p, const uint8_t *end,
                            uint64_t *v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    r |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *v = r;
      return true;
    }
  }
  return false;
}

/* Walks the wire format of a message of type d, recursing into known
 * message fields, and fails when nesting exceeds HET_ONNX_MAX_WIRE_DEPTH
 * or the encoding is broken.  Iterative per level, recursive per depth. */
static het_status het_onnx_wire_scan(const ProtobufCMessageDescriptor *d,
                                     const uint8_t *p, size_t len, int depth,
                                     const char *what) {
  const uint8_t *end = p + len;
  if (depth > HET_ONNX_MAX_WIRE_DEPTH)
    return het_error(HET_ERR_INVALID_MODEL,
                     "%s: protobuf messages nested more than %d deep", what,
                     HET_ONNX_MAX_WIRE_DEPTH);
  while (p < end) {
    uint64_t tag, v;
    if (!het_wire_varint(&p, end, &tag))
      goto broken;
    switch (tag & 7) {
    case 0:
      if (!het_wire_varint(&p, end, &v))
        goto broken;
      break;
    case 1:
    case 5: {
      size_t w = (tag & 7) == 1 ? 8 : 4;
      if ((size_t)(end - p) < w)
        goto broken;
      p += w;
      break;
    }
    case 2: {
      if (!het_wire_varint(&p, end, &v) || v > (uint64_t)(end - p))
        goto broken;
      const ProtobufCFieldDescriptor *f =
          tag >> 3 <= UINT_MAX
              ? protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3))
              : NULL;
      if (f && f->type == PROTOBUF_C_TYPE_MESSAGE)
        HET_TRY(het_onnx_wire_scan(f->descriptor, p, (size_t)v, depth + 1,
                                   what));
      p += v;
      break;
    }
    default:
      goto broken;
    }
  }
  return HET_OK;
broken:
  return het_error(HET_ERR_INVALID_MODEL,
                   "%s: not a valid ONNX model (malformed or truncated "
                   "protobuf)",
                   what);
}

static het_status het_onnx_model_header(het_graph *g,
                                        const Onnx__ModelProto *mp) {
  g->ir_version = mp->ir_version;
  g->producer_name = het_arena_strdup(&g->arena, mp->producer_name ? mp->producer_name : "");
  size_t nop = mp->n_opset_import;
  bool implicit = nop == 0 && mp->ir_version < 3; /* IR v1/v2: opset 1 */
  g->opsets = het_arena_calloc(&g->arena, nop + 1, sizeof *g->opsets);
  if (!g->producer_name || !g->opsets || nop > INT_MAX / 2)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate model header");
  for (size_t i = 0; i < nop; i++) {
    const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
    const char *dom = op->domain ? op->domain : "";
    if (op->version < 1 || op->version > INT_MAX)
      return het_error(HET_ERR_INVALID_MODEL,
                       "opset import for domain '%s' has version %lld "
                       "(versions start at 1)",
                       dom, (long long)op->version);
    bool onnx = !*dom || strcmp(dom, "ai.onnx") == 0;
    if (onnx && op->version > HET_ONNX_MAX_OPSET)
      return het_error(HET_ERR_UNSUPPORTED,
                       "the model imports ONNX opset %lld; hetrt reads opsets "
                       "1 to %d (an operator's meaning may change in a newer "
                       "one)",
                       (long long)op->version, HET_ONNX_MAX_OPSET);
    g->opsets[i].domain = het_arena_strdup(&g->arena, dom);
    if (!g->opsets[i].domain)
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot copy opset domain");
    g->opsets[i].version = op->version;
  }
  g->n_opsets = (int)nop;
  if (implicit) {
    g->opsets[0].domain = "";
    g->opsets[0].version = 1;
    g->n_opsets = 1;
  }
  size_t nm = mp->n_metadata_props;
  if (nm > INT_MAX / 2)
    return het_error(HET_ERR_INVALID_MODEL, "too many metadata entries");
  g->metadata_keys = het_arena_calloc(&g->arena, nm + 1, sizeof(char *));
  g->metadata_values = het_arena_calloc(&g->arena, nm + 1, sizeof(char *));
  if (!g->metadata_keys || !g->metadata_values)
    return het_error(HET_ERR_OUT_OF_MEMORY, "cannot allocate metadata");
  for (size_t i = 0; i < nm; i++) {
    const Onnx__StringStringEntryProto *e = mp->metadata_props[i];
    g->metadata_keys[i] = het_arena_strdup(&g->arena, e->key ? e->key : "");
    g->metadata_values[i] =
        het_arena_strdup(&g->arena, e->value ? e->value : "");
    if (!g->metadata_keys[i] || !g->metadata_values[i])
      return het_error(HET_ERR_OUT_OF_MEMORY, "cannot copy metadata");
  }
  g->n_metadata = (int)nm;
  return HET_OK;
}

/* Validates g, then its subgraphs, each against every enclosing graph.
 * chain[0..depth-1] are the ancestors of g.  A subgraph nested deeper than
 * one level sees the union of its ancestors' names through a scratch
 * scope graph (het_graph_validate takes a single outer graph). */
static het_status het_onnx_validate_tree(het_graph *g, het_graph **chain,
                                         int depth) {
  het_graph *scope = NULL;
  const het_graph *outer = depth > 0 ? chain[depth - 1] : NULL;
  het_status st = HET_OK;
  if (depth >= 2) {
    st = het_graph_create(&scope);
    for (int a = 0; st == HET_OK && a < depth; a++)
      for (int v = 0; st == HET_OK && v < chain[a]->n_values; v++) {
        int id;
        st = het_graph_intern_value(scope, chain[a]->values[v].name, &id);
      }
    outer = scope;
  }
  if (st == HET_OK)
    st = het_graph_validate(g, outer);
  het_graph_destroy(scope);
  if (st != HET_OK)
    return depth ? het_error_wrap(st, "subgraph '%s'", g->name) : st;
  if (!g->n_subgraphs)
    return HET_OK;
  if (depth + 1 > HET_ONNX_MAX_GRAPH_DEPTH)
    return het_error(HET_ERR_INVALID_MODEL, "subgraphs nested too deep");
  chain[depth] = g;
  for (int i = 0; i < g->n_subgraphs; i++)
    HET_TRY(het_onnx_validate_tree(g->subgraphs[i], chain, depth + 1));
  return HET_OK;
}

/* Decodes data and builds the validated graph.  base_dir may be NULL.
 * mapped, when non-zero, is the length of data's read-only mapping of the
 * model file: it is unmapped as soon as it is decoded, so a large model is
 * not held twice during conversion.  The message is unpacked with
 * het_onnx_pb_allocator and its large raw_data buffers become the
 * initializers' own (no second copy of the weights). */
static het_status het_onnx_model_load(const void *data, size_t size,
                                      const het_onnx_ctx *base, size_t mapped,
                                      het_graph **out) {
  const char *what = base->what;
  static const uint8_t empty[1];
  const uint8_t *bytes = size ? data : empty;
  het_status st = het_onnx_wire_scan(&onnx__model_proto__descriptor, bytes,
                                     size, 0, what);
  het_onnx_pb_oom_take();
  Onnx__ModelProto *mp =
      st == HET_OK ? onnx__model_proto__unpack(&het_onnx_pb_allocator, size,
                                               bytes)
                   : NULL;
  if (mapped)
    munmap((void *)(uintptr_t)data, mapped);
  if (st != HET_OK)
    return st;
  if (!mp && het_onnx_pb_oom_take())
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s: out of memory decoding the "
                                            "model", what);
  if (!mp)
    return het_error(HET_ERR_INVALID_MODEL,
                     "%s: not a valid ONNX model (protobuf decoding failed)",
                     what);
  het_graph *g = NULL;
  if (!mp->graph) {
    st = het_error(HET_ERR_INVALID_MODEL, "model has no graph");
    goto fail;
  }
  st = het_graph_create(&g);
  if (st == HET_OK)
    st = het_onnx_model_header(g, mp);
  if (st != HET_OK)
    goto fail;
  het_onnx_ctx ctx = *base;
  ctx.root = g;
  ctx.adopt = true;
  st = het_onnx_graph_convert(&ctx, mp->graph, g, 0);
  if (st == HET_OK) {
    het_graph *chain[HET_ONNX_MAX_GRAPH_DEPTH + 1];
    st = het_onnx_validate_tree(g, chain, 0);
  }
  if (st != HET_OK)
    goto fail;
  onnx__model_proto__free_unpacked(mp, &het_onnx_pb_allocator);
  *out = g;
  return HET_OK;
fail:
  if (mp)
    onnx__model_proto__free_unpacked(mp, &het_onnx_pb_allocator);
  het_graph_destroy(g);
  return het_error_wrap(st, "%s", what);
}

het_status het_onnx_load_memory(const void *data, size_t size,
                                const char *base_dir, const char *what,
                                het_graph **out) {
  if (!out || (!data && size))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_load_memory: NULL argument");
  het_onnx_ctx ctx = {.what = what ? what : "<memory>", .base_dir = base_dir};
  return het_onnx_model_load(data, size, &ctx, 0, out);
}

het_status het_onnx_load_plan_graph(const void *data, size_t size,
                                    const void *weights, size_t weights_size,
                                    const char *what, het_graph **out) {
  if (!out || (!data && size) || (!weights && weights_size))
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_load_plan_graph: NULL argument");
  het_onnx_ctx ctx = {.what = what ? what : "<plan>",
                      .weights = weights,
                      .weights_size = weights_size,
                      .has_weights = true};
  return het_onnx_model_load(data, size, &ctx, 0, out);
}

/* The model file at path mapped read-only (*map, *size; *map NULL for an
 * empty file), refusing files over HET_ONNX_MAX_MODEL_BYTES.  Mapping
 * instead of reading saves a copy of every weight and the zeroing of as
 * many fresh pages; the pages are populated at once (one trap, not one a
 * page). */
static het_status het_onnx_map_file(const char *path, void **map,
                                    size_t *size) {
  int fd;
  uint64_t fsize;
  HET_TRY(het_open_regular(path, path, &fd, &fsize));
  *map = NULL;
  *size = 0;
  if (!fsize) {
    close(fd);
    return HET_OK;
  }
  if (fsize > (uint64_t)HET_ONNX_MAX_MODEL_BYTES) {
    close(fd);
    return het_error(HET_ERR_IO,
                     "%s: file is %llu bytes, more than the %zu accepted",
                     path, (unsigned long long)fsize,
                     (size_t)HET_ONNX_MAX_MODEL_BYTES);
  }
  HET_TRY(het_map_fd(fd, (size_t)fsize, true, path, map));
  *size = (size_t)fsize;
  return HET_OK;
}

het_status het_onnx_load_file(const char *path, het_graph **out) {
  if (!path || !out)
    return het_error(HET_ERR_INVALID_ARGUMENT,
                     "het_onnx_load_file: NULL argument");
  void *data;
  size_t size;
  HET_TRY(het_onnx_map_file(path, &data, &size));
  const char *slash = strrchr(path, '/');
  char *dir;
  if (!slash)
    dir = strdup(".");
  else if (slash == path)
    dir = strdup("/");
  else
    dir = strndup(path, (size_t)(slash - path));
  if (!dir) {
    if (size)
      munmap(data, size);
    return het_error(HET_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  het_onnx_ctx ctx = {.what = path, .base_dir = dir};
  het_status st = het_onnx_model_load(data, size, &ctx, size, out);
  free(dir);
  return st;
}
