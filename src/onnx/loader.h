/* loader.h — ONNX ModelProto/TensorProto decoding into the IR, the IR
 * written back as a ModelProto, and TensorProto encoding (for the CLI's
 * .pb outputs).
 * Invariant: every size read from a file is validated before allocation;
 * malformed, truncated or hostile input returns ERR_INVALID_MODEL (or
 * ERR_IO) with a message naming the file, tensor or node at fault.
 */
#ifndef HET_ONNX_LOADER_H
#define HET_ONNX_LOADER_H

#include <stddef.h>
#include <stdint.h>

#include "core/file.h"
#include "core/ir.h"

/* Loads a model file.  External data is resolved relative to the model's
 * folder; paths that leave that folder are refused.  The result is
 * validated (het_graph_validate) but not shape-inferred.  Caller owns *out. */
het_status het_onnx_load_file(const char *path, het_graph **out);

/* Loads a serialized model from memory.  base_dir is the folder external
 * data is resolved against, or NULL to refuse external data.  what names
 * the model in messages.  Caller owns *out. */
het_status het_onnx_load_memory(const void *data, size_t size,
                                 const char *base_dir, const char *what,
                                 het_graph **out);

/* Loads the graph of an ahead-of-time plan (docs/plan-format.md): a
 * ModelProto whose external data all lies in weights (location
 * "hetrt-plan:weights", 64-byte aligned offsets).  Those initializers
 * borrow weights' bytes (which must outlive the graph); external data
 * anywhere else is refused.  what names the plan in messages. */
het_status het_onnx_load_plan_graph(const void *data, size_t size,
                                    const void *weights, size_t weights_size,
                                    const char *what, het_graph **out);

/* Serializes g as a ModelProto, the inverse of het_onnx_load_memory: a
 * model loaded from what this writes compares equal to g node by node.
 * Written: ir_version (8 when g has none), producer_name ("hetrt" when
 * empty), every opset import and metadata entry; per graph (subgraphs
 * recursively) its name, its inputs and outputs in declared order as
 * tensor ValueInfoProtos (elem_type when the dtype is known; a shape when
 * the rank is, each dim a dim_value, a dim_param or left empty; no type
 * when neither is known), every HET_VALUE_INITIALIZER value as a raw_data
 * TensorProto, the nodes in g->order (which must be current:
 * het_graph_validate after adding nodes; node array order when g has no
 * order) with name, op_type, domain, inputs and outputs by value name
 * (an omitted one as "", trailing omitted ones dropped) and attributes of
 * every type, and value_info for every other value a node reads or writes
 * whose dtype is known.  Not written: attributes the IR holds without a
 * value (TYPE_PROTO), doc strings, training info, functions, external
 * data.  Reads g only; g must not change during the call.  *buf is
 * malloc'd (caller frees); *buf and *len are written only on success.
 * Errors: INVALID_ARGUMENT (NULL argument, a tensor whose data does not
 * match its shape), UNSUPPORTED (serialized size over protobuf's 2 GiB
 * limit, subgraphs nested too deep), INTERNAL (a graph breaking the IR's
 * invariants), OUT_OF_MEMORY. */
het_status het_onnx_save_memory(const het_graph *g, uint8_t **buf,
                                size_t *len);

/* g as het_onnx_save_memory writes it, except that the nodes of every
 * graph are in node array order (so a graph loaded from it numbers its
 * nodes as g does) and initializers of
 * min_bytes or more (in every graph) are external data in *weights
 * (64-byte aligned, zero-padded; location "hetrt-plan:weights"), the
 * form het_onnx_load_plan_graph reads.  *buf and *weights are malloc'd
 * (caller frees; *weights is NULL when nothing moved). */
het_status het_onnx_save_plan_graph(const het_graph *g, size_t min_bytes,
                                    uint8_t **buf, size_t *len,
                                    uint8_t **weights, size_t *weights_len);

/* het_onnx_save_memory written to path (created or truncated, mode 0644
 * before the umask).  Errors as het_onnx_save_memory, and IO naming path
 * with the system's reason when it cannot be created or written (a
 * partly written file is removed). */
het_status het_onnx_save_file(const het_graph *g, const char *path);

/* Decodes a serialized TensorProto (the backend-test .pb files).  *name
 * receives a malloc'd copy of its name (may be ""), caller frees; name may
 * be NULL.  Caller owns *out. */
het_status het_onnx_tensor_decode(const void *data, size_t size,
                                  const char *what, het_tensor **out,
                                  char **name);

/* Encodes a tensor as a serialized TensorProto (raw_data).  *buf is
 * malloc'd, caller frees. */
het_status het_onnx_tensor_encode(const het_tensor *t, const char *name,
                                  uint8_t **buf, size_t *len);

#endif
