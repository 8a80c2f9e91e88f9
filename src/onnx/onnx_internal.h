/* onnx_internal.h — shared state of the ONNX loader's and writer's
 * translation units: the load context (file name for messages,
 * external-data folder), the protobuf → IR conversion entry points and the
 * tensor → TensorProto filler they share.  Internal to src/onnx/.
 */
#ifndef HET_ONNX_INTERNAL_H
#define HET_ONNX_INTERNAL_H

#include "core/arena.h"
#include "core/ir.h"
#include "onnx.pb-c.h"

/* Deepest subgraph nesting accepted (If inside Loop inside ...). */
#define HET_ONNX_MAX_GRAPH_DEPTH 32
/* Newest ONNX (default-domain) opset a model may import; an absurd one
 * (10000) is refused before any operator is read as if it were older.
 * The backend suite checks 1..17; later opsets' new operators and types
 * are refused per node as unsupported. */
#define HET_ONNX_MAX_OPSET 25

/* External data with this location lies in the weights section of the
 * plan file being loaded (het_onnx_load_plan_graph). */
#define HET_ONNX_PLAN_WEIGHTS "hetrt-plan:weights"

typedef struct het_onnx_ctx {
  const char *what;      /* names the model in messages */
  const char *base_dir;  /* external data folder, NULL = refuse */
  const het_graph *root; /* opset imports every subgraph copies */
  bool has_weights;      /* a plan's graph: external data is read from */
  const uint8_t *weights; /* ... these bytes (and never from files) */
  size_t weights_size;
  bool adopt; /* the TensorProtos belong to a message unpacked with
                 het_onnx_pb_allocator and freed after the conversion:
                 a tensor takes a large raw_data buffer instead of
                 copying it (the message's field is emptied) */
} het_onnx_ctx;

/* Allocator for unpacking ONNX messages (and freeing them): blocks of
 * HET_ONNX_ADOPT_BYTES or more are 64-byte aligned, so a tensor can take
 * a raw_data buffer as its own (het_tensor_reset frees it with free). */
#define HET_ONNX_ADOPT_BYTES 4096
extern ProtobufCAllocator het_onnx_pb_allocator;
/* Whether an allocation of het_onnx_pb_allocator failed on this thread
 * since the last call (an unpack that returns NULL then ran out of
 * memory; it did not meet a malformed message). */
bool het_onnx_pb_oom_take(void);

/* Converts TensorProto tp into a new owned tensor.  label names it in
 * messages when tp has no name.  External data is read relative to
 * ctx->base_dir.  Errors: INVALID_MODEL, UNSUPPORTED, IO. */
het_status het_onnx_tensor_from_proto(const het_onnx_ctx *ctx,
                                      const Onnx__TensorProto *tp,
                                      const char *label, het_tensor **out);

/* Fills tp (set to ONNX__TENSOR_PROTO__INIT by the caller) from host
 * tensor t: name ("" for NULL), dims, data_type and little-endian
 * raw_data.  tp borrows t->data on a little-endian host (a byte-swapped
 * copy in ar otherwise); name and dims are copied into ar.  Valid while t
 * and ar are.  Errors: INVALID_ARGUMENT (data size does not match the
 * shape, data not in host memory), UNSUPPORTED (string and complex
 * tensors, which the IR does not hold), OUT_OF_MEMORY. */
het_status het_onnx_tensor_to_proto(het_arena *ar, const het_tensor *t,
                                    const char *name, Onnx__TensorProto *tp);

/* Fills g (created, empty) from gp: inputs, initializers, nodes with
 * attributes and subgraphs (adopted by g), outputs, value_info.  depth is
 * 0 for the main graph.  Does not validate. */
het_status het_onnx_graph_convert(const het_onnx_ctx *ctx,
                                  const Onnx__GraphProto *gp, het_graph *g,
                                  int depth);

#endif
