/* quant_internal.h — the quantizer's state shared by its translation
 * units: what is quantized (nodes, weights, activation tensors), the
 * calibration statistics and the evaluation figures.
 * Invariants: tensors[] and nodes[] are filled by het_quant_select and
 * refer to value and node ids of q->g (the model as loaded and
 * type-inferred); every graph rebuilt from q->model has the same ids.
 */
#ifndef HET_QUANT_INTERNAL_H
#define HET_QUANT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/ir.h"
#include "hetrt/quantize.h"

typedef enum het_quant_method {
  HET_QUANT_MINMAX,
  HET_QUANT_PERCENTILE,
  HET_QUANT_ENTROPY,
} het_quant_method;

/* Histogram bins of the two histogram methods: percentile bins the values
 * over [min, max], entropy their magnitudes over [0, max |x|]. */
#define HET_QUANT_PERCENTILE_BINS 8192
#define HET_QUANT_ENTROPY_BINS 16384

/* Statistics of one tensor's values over the calibration inputs. */
typedef struct het_quant_stats {
  double min, max;     /* pass 1 */
  bool seen;           /* pass 1 saw at least one element */
  double *hist;        /* pass 2: bins counts (malloc'd) or NULL */
  int bins;
  double hist_lo, hist_hi; /* the range the bins split evenly */
} het_quant_stats;

/* An activation tensor that gets a QuantizeLinear/DequantizeLinear pair. */
typedef struct het_quant_tensor {
  int value;           /* id in q->g */
  const char *name;    /* borrowed from q->g */
  const char *reader;  /* a quantized node reading or making it (report) */
  het_quant_stats stats;
  float lo, hi;        /* calibrated range, 0 inside */
  float scale;
  int32_t zero_point;
  double sum_sq, sum_err_sq; /* evaluation: SQNR sums */
} het_quant_tensor;

/* A quantized node with a constant weight: its weight input (-1 when
 * none), the weight's channel axis (-1: one scale for the tensor) and its
 * bias input (-1 when it stays float or there is none). */
typedef struct het_quant_node {
  int node;            /* id in q->g */
  int weight, axis, bias;
  int act_tensor;      /* index in tensors[] of the input whose scale the
                          bias shares, -1 when none */
} het_quant_node;

struct het_quantizer {
  het_env *env;
  const het_session_options *session_options; /* borrowed, may be NULL */
  char *path;                  /* model file, for messages */
  char *base_dir;              /* its folder, for external data */
  uint8_t *model;              /* the model file's bytes */
  size_t model_size;
  het_graph *g;                /* loaded and type-inferred */
  int opset;                   /* default-domain opset */

  /* options */
  bool dynamic;                /* mode=dynamic: MatMulInteger, no calibration */
  het_quant_method method;
  double percentile;
  bool per_channel;
  het_dtype act_type;          /* UINT8 or INT8 */
  char *exclude_ops, *exclude_nodes; /* comma lists or NULL */

  /* model inputs fed by the caller: graph inputs without initializer */
  int n_inputs;
  const char **input_names;    /* borrowed from g */
  het_tensor **calib, **eval;  /* n_calib (n_eval) rows of n_inputs */
  size_t n_calib, n_eval, cap_calib, cap_eval;

  het_quantizer_progress_fn progress;
  void *progress_ctx;

  /* filled by calibration */
  bool calibrated;
  het_quant_node *nodes;
  int n_nodes;
  het_quant_tensor *tensors;
  int n_tensors;

  /* filled by evaluation */
  bool evaluated;
  het_quant_accuracy *accuracy; /* one per model output */
  int n_accuracy;

  char **warnings;
  int n_warnings;
};

/* quantizer.c: records a warning (formatted) on q. */
void het_quant_warn(het_quantizer *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* quant_select.c: fills q->nodes and q->tensors from q->g and the
 * options. */
het_status het_quant_select(het_quantizer *q);

/* quant_calib.c: statistics and range choice. */
/* Pass 1: widens st's min/max with n floats. */
void het_quant_stats_minmax(het_quant_stats *st, const float *x, int64_t n);
/* Pass 2: allocates st's histogram for method (after pass 1). */
het_status het_quant_stats_hist_init(het_quant_stats *st,
                                     het_quant_method method);
void het_quant_stats_hist_add(het_quant_stats *st, het_quant_method method,
                              const float *x, int64_t n);
/* The range [*lo, *hi] method keeps (percentile: share kept, in %). */
void het_quant_stats_range(const het_quant_stats *st, het_quant_method method,
                           double percentile, float *lo, float *hi);
/* Scale and zero point of an asymmetric type (UINT8/INT8) for [lo, hi]
 * (0 is made part of the range). */
void het_quant_params(float lo, float hi, het_dtype type, float *scale,
                      int32_t *zero_point);
void het_quant_stats_deinit(het_quant_stats *st);

/* quant_graph.c: the graphs the quantizer writes and runs. */
/* Loads a fresh copy of the model (ids as in q->g). */
het_status het_quant_load(const het_quantizer *q, het_graph **out);
/* Makes the given values extra graph outputs of g (float32). */
het_status het_quant_add_outputs(het_graph *g, const int *values, int n);
/* Rewrites g (a fresh load) into the QDQ model; when dq_values is not
 * NULL it receives, per tensors[i], the id of its dequantized value. */
het_status het_quant_rewrite(const het_quantizer *q, het_graph *g,
                             int *dq_values);
/* Serializes g and opens a session on it with q's options. */
het_status het_quant_open(const het_quantizer *q, const het_graph *g,
                          het_session **out);
/* Runs s on input row `row` (n_inputs tensors) asking for the named
 * outputs; outputs[] receive tensors the caller owns. */
het_status het_quant_run(const het_quantizer *q, het_session *s,
                         het_tensor *const *row, const char *const *names,
                         int n, het_tensor **outputs);

#endif
