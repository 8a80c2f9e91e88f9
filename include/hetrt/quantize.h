/* hetrt/quantize.h — static post-training quantization of an ONNX model
 * into a standard QDQ model (QuantizeLinear/DequantizeLinear pairs around
 * float operators, opset >= 10), which hetrt and other runtimes run.
 *
 * Use: het_quantizer_create on a float model; het_quantizer_set options;
 * add calibration inputs (and, for the accuracy report, inputs held apart
 * from calibration); het_quantizer_calibrate; het_quantizer_save; then
 * het_quantizer_evaluate for the float-vs-quantized comparison.  A
 * quantizer is used from one thread at a time.
 */
#ifndef HETRT_QUANTIZE_H
#define HETRT_QUANTIZE_H

#include <stdbool.h>

#include "hetrt/hetrt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct het_quantizer het_quantizer;

/* Loads the float model at model_path (external data resolved next to it)
 * and infers its types.  session_options (may be NULL) configure the
 * sessions that run calibration and evaluation; they and env are
 * borrowed and must stay valid until het_quantizer_destroy.  Errors: IO, INVALID_MODEL, UNSUPPORTED (a default-domain
 * opset below 10, which has no QuantizeLinear).  Caller owns *out. */
HET_API het_status het_quantizer_create(het_env *env, const char *model_path,
                                        const het_session_options *session_options,
                                        het_quantizer **out);
/* Accepts NULL. */
HET_API void het_quantizer_destroy(het_quantizer *q);

/* Options, before het_quantizer_calibrate:
 *   "mode"             static (default) | dynamic: MatMuls with a constant
 *                      weight become DynamicQuantizeLinear + MatMulInteger
 *                      (int8 weights, activations quantized at run time;
 *                      opset 11), and calibration needs no inputs
 *   "method"           minmax | percentile | entropy (default percentile)
 *   "percentile"       kept share of values in percent, (50, 100]
 *                      (default 99.999); percentile only
 *   "per_channel"      true | false: symmetric int8 weights with one scale
 *                      per output channel (default true; needs opset 13,
 *                      per tensor below it, with a warning)
 *   "activation_type"  uint8 | int8 (default uint8), asymmetric
 *   "exclude_op_types" comma-separated op types left in float
 *   "exclude_nodes"    comma-separated node-name globs (fnmatch) left in
 *                      float
 * An unknown key or a malformed value is ERR_INVALID_ARGUMENT naming it. */
HET_API het_status het_quantizer_set(het_quantizer *q, const char *key,
                                     const char *value);

/* Adds one set of model inputs (every graph input without an initializer,
 * by name) to the calibration inputs (evaluation false) or to the inputs
 * held apart for het_quantizer_evaluate (evaluation true).  The tensors
 * are copied.  A missing, unknown or ill-typed input is an error naming
 * it. */
HET_API het_status het_quantizer_add_input(het_quantizer *q, bool evaluation,
                                           const char *const *names,
                                           het_tensor *const *tensors,
                                           size_t n);

/* Called after each model run of calibration and evaluation: phase names
 * the pass ("calibrate: ranges", "calibrate: histograms", "evaluate"),
 * done of total runs made. */
typedef void (*het_quantizer_progress_fn)(void *ctx, const char *phase,
                                          size_t done, size_t total);
HET_API void het_quantizer_set_progress(het_quantizer *q,
                                        het_quantizer_progress_fn fn,
                                        void *ctx);

/* Runs the model on every calibration input (twice for the histogram
 * methods) and fixes each quantized tensor's scale and zero point.
 * Needs at least one calibration input (none in dynamic mode, where it
 * only chooses the nodes). */
HET_API het_status het_quantizer_calibrate(het_quantizer *q);

/* Writes the QDQ model (after het_quantizer_calibrate). */
HET_API het_status het_quantizer_save(het_quantizer *q, const char *path);

/* What was decided, after het_quantizer_calibrate. */
HET_API size_t het_quantizer_get_node_count(const het_quantizer *q);
HET_API size_t het_quantizer_get_tensor_count(const het_quantizer *q);
/* Activation tensor index: its name (borrowed, valid for q's lifetime),
 * the calibrated range [lo, hi] and the scale and zero point written. */
HET_API het_status het_quantizer_get_tensor(const het_quantizer *q,
                                            size_t index, const char **name,
                                            float *lo, float *hi,
                                            float *scale, int32_t *zero_point);

/* One model output compared between the float and the quantized model
 * over the evaluation inputs. */
typedef struct het_quant_accuracy {
  const char *name;     /* output name (borrowed, valid for q's lifetime) */
  double max_abs_error; /* max |quantized - float| */
  double max_rel_error; /* max_abs_error / max |float| */
  double cosine;        /* cosine similarity over all evaluation inputs */
  double min_cosine;    /* the worst single input's cosine similarity */
  size_t top1_total;    /* rows compared when the output is [N, C >= 2] */
  size_t top1_agree;    /* rows whose argmax agrees */
} het_quant_accuracy;

/* Runs the float and the quantized model (simulated: hetrt runs the QDQ
 * graph) on every evaluation input and compares them: per output the
 * het_quant_accuracy figures, per quantized tensor the SQNR of its
 * dequantized value against the float one.  *report (may be NULL) gets a
 * text report with the ten worst tensors, caller owns
 * (het_string_destroy).  Needs het_quantizer_calibrate and at least one
 * evaluation input. */
HET_API het_status het_quantizer_evaluate(het_quantizer *q, char **report);
/* Model outputs compared (all of the model's outputs; figures of an
 * output that is not float32 stay zero). */
HET_API size_t het_quantizer_get_output_count(const het_quantizer *q);
/* After het_quantizer_evaluate: output index's figures. */
HET_API het_status het_quantizer_get_accuracy(const het_quantizer *q,
                                              size_t index,
                                              het_quant_accuracy *out);
/* After het_quantizer_evaluate: tensor index's SQNR in dB (+inf when the
 * dequantized value is exact). */
HET_API het_status het_quantizer_get_sqnr(const het_quantizer *q,
                                          size_t index, double *db);

/* Warnings collected so far (opset below 13, ...): index < count;
 * borrowed, valid for q's lifetime. */
HET_API size_t het_quantizer_get_warning_count(const het_quantizer *q);
HET_API const char *het_quantizer_get_warning(const het_quantizer *q,
                                              size_t index);

#ifdef __cplusplus
}
#endif

#endif /* HETRT_QUANTIZE_H */
