/* signal_ops.h — infer functions of the signal/vision group shared between
 * signal.c (the table, NMS, GridSample, RoiAlign) and signal_spectral.c
 * (DFT, STFT, windows, MelWeightMatrix), plus the scalar-input reader.
 */
#ifndef HET_CORE_OPS_SIGNAL_OPS_H
#define HET_CORE_OPS_SIGNAL_OPS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/infer.h"

/* Reads input i as a one-element integer tensor.  *known is false (and
 * HET_OK returned) when the input is absent or its value is not known yet;
 * a value with more than one element or a non-integer type is an error
 * naming the node and what (the input's name in the spec). */
het_status het_signal_scalar_i64(const het_infer_ctx *ctx, int i,
                                 const char *what, bool *known, int64_t *v);

het_status het_infer_dft(het_infer_ctx *ctx);
het_status het_infer_stft(het_infer_ctx *ctx);
het_status het_infer_window(het_infer_ctx *ctx);
het_status het_infer_mel_weight_matrix(het_infer_ctx *ctx);

#endif
