/* loader.h — ONNX ModelProto/TensorProto decoding into the IR, and
 * TensorProto encoding (for the CLI's .pb outputs).
 * Invariant: every size read from a file is validated before allocation;
 * malformed, truncated or hostile input returns ERR_INVALID_MODEL (or
 * ERR_IO) with a message naming the file, tensor or node at fault.
 */
#ifndef HET_ONNX_LOADER_H
#define HET_ONNX_LOADER_H

#include <stddef.h>
#include <stdint.h>

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

/* Reads a whole file into malloc'd memory, refusing files over max_bytes.
 * Caller frees *data. */
het_status het_read_file(const char *path, size_t max_bytes, uint8_t **data,
                         size_t *size);

#endif
