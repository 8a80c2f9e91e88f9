/* elementwise_internal.h — shared pieces of the elementwise CPU kernels:
 * the list of kernels (one X-macro drives declarations and the table), the
 * per-dtype loop generators, and the runners every elementwise kernel uses
 * (float16/bfloat16 via float32, same-shape maps, broadcast binaries).
 */
#ifndef HET_CPU_ELEMENTWISE_INTERNAL_H
#define HET_CPU_ELEMENTWISE_INTERNAL_H

#include <stdint.h>

/* The loops below are written to vectorise; -O2's "very cheap" cost model
 * refuses any loop that needs a scalar epilogue, and trapping math keeps
 * float selects as branches, so the files including this header ask for
 * the dynamic cost model and no FP-exception preservation.  Float loops
 * are built per ISA (HET_SIMD_CLONES).  (sqrt stays a scalar call: errno
 * can only be switched off on the command line, -fno-math-errno.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", \
                     "no-trapping-math")
#endif

#include "core/dtype.h"
#include "core/status.h"
#include "kernels/kernel.h"
#include "kernels/broadcast.h"
#include "kernels/simd.h"

#define HET_EW_TRAINING "ai.onnx.preview.training"

/* X(op_type, domain): every kernel of the group. */
#define HET_EW_KERNELS(X)                                                    \
  X(Abs, "") X(Neg, "") X(Reciprocal, "") X(Sqrt, "") X(Exp, "") X(Log, "") \
  X(Erf, "") X(Sin, "") X(Cos, "") X(Tan, "") X(Asin, "") X(Acos, "")       \
  X(Atan, "") X(Sinh, "") X(Cosh, "") X(Asinh, "") X(Acosh, "")             \
  X(Atanh, "") X(Ceil, "") X(Floor, "") X(Round, "") X(Sign, "")            \
  X(Relu, "") X(LeakyRelu, "") X(Elu, "") X(Selu, "") X(Celu, "")           \
  X(Sigmoid, "") X(HardSigmoid, "") X(HardSwish, "") X(Tanh, "")            \
  X(Softplus, "") X(Softsign, "") X(ThresholdedRelu, "") X(Shrink, "")      \
  X(Not, "") X(IsNaN, "") X(IsInf, "")                                      \
  X(Add, "") X(Sub, "") X(Mul, "") X(Div, "") X(Pow, "") X(Mod, "")         \
  X(PRelu, "") X(Max, "") X(Min, "") X(Sum, "") X(Mean, "")                 \
  X(Equal, "") X(Less, "") X(LessOrEqual, "") X(Greater, "")                \
  X(GreaterOrEqual, "") X(And, "") X(Or, "") X(Xor, "") X(BitShift, "")     \
  X(Where, "") X(Cast, "") X(CastLike, "") X(Clip, "") X(Dropout, "")       \
  X(QuantizeLinear, "") X(DequantizeLinear, "")                             \
  X(DynamicQuantizeLinear, "") X(QLinearAdd, "hetrt")                      \
  X(QLinearLut, "hetrt")                                                    \
  X(Adagrad, HET_EW_TRAINING)                                               \
  X(Adam, HET_EW_TRAINING) X(Momentum, HET_EW_TRAINING)

#define HET_EW_DECLARE_(op, domain) \
  het_status het_kernel_ew_run_##op(het_kernel_ctx *ctx);
HET_EW_KERNELS(HET_EW_DECLARE_)
#undef HET_EW_DECLARE_

/* Attribute values a loop may read (copied to a local before the loop). */
typedef struct het_ew_params {
  float alpha, beta, gamma;
  int detect_pos, detect_neg;
} het_ew_params;

/* Per-dtype row functions, indexed by het_dtype (NULL = unsupported). */
#define HET_EW_NDT 17
typedef het_bcast_row_fn het_ew_fn_table[HET_EW_NDT];

/* ---- type lists: X(suffix, T, unsigned T, dtype, ...) ---- */
#define HET_EW_FLOATS(X, ...)                          \
  X(f32, float, float, HET_DTYPE_FLOAT32, __VA_ARGS__) \
  X(f64, double, double, HET_DTYPE_FLOAT64, __VA_ARGS__)
#define HET_EW_SINTS(X, ...)                             \
  X(i8, int8_t, uint8_t, HET_DTYPE_INT8, __VA_ARGS__)    \
  X(i16, int16_t, uint16_t, HET_DTYPE_INT16, __VA_ARGS__) \
  X(i32, int32_t, uint32_t, HET_DTYPE_INT32, __VA_ARGS__) \
  X(i64, int64_t, uint64_t, HET_DTYPE_INT64, __VA_ARGS__)
#define HET_EW_UINTS(X, ...)                                 \
  X(u8, uint8_t, uint8_t, HET_DTYPE_UINT8, __VA_ARGS__)       \
  X(u16, uint16_t, uint16_t, HET_DTYPE_UINT16, __VA_ARGS__)   \
  X(u32, uint32_t, uint32_t, HET_DTYPE_UINT32, __VA_ARGS__)   \
  X(u64, uint64_t, uint64_t, HET_DTYPE_UINT64, __VA_ARGS__)
#define HET_EW_BOOLS(X, ...) X(b8, uint8_t, uint8_t, HET_DTYPE_BOOL, __VA_ARGS__)

/* Table entry for one type: [dtype] = name_suffix. */
#define HET_EW_ENTRY(sfx, T, U, DT, name, ...) [DT] = name##_##sfx,

/* A binary row loop: o = OPM(T, U, x, y) with steps 0/1 per operand,
 * split so each branch is a simple loop the compiler vectorises. */
#define HET_EW_BIN_LOOP(NAME, T, U, TO, OPM)                                 \
  static void NAME(void *const *pp, const int64_t *st, int64_t n,            \
                   const void *user) {                                       \
    (void)user;                                                              \
    TO *restrict o = pp[0];                                                  \
    const T *restrict a = pp[1];                                             \
    const T *restrict b = pp[2];                                             \
    if (st[1] && st[2]) {                                                    \
      for (int64_t i = 0; i < n; i++) {                                      \
        T x = a[i], y = b[i];                                                \
        o[i] = (TO)(OPM(T, U, x, y));                                        \
      }                                                                      \
    } else if (st[1]) {                                                      \
      const T y = b[0];                                                      \
      for (int64_t i = 0; i < n; i++) {                                      \
        T x = a[i];                                                          \
        o[i] = (TO)(OPM(T, U, x, y));                                        \
      }                                                                      \
    } else if (st[2]) {                                                      \
      const T x = a[0];                                                      \
      for (int64_t i = 0; i < n; i++) {                                      \
        T y = b[i];                                                          \
        o[i] = (TO)(OPM(T, U, x, y));                                        \
      }                                                                      \
    } else {                                                                 \
      const T x = a[0], y = b[0];                                            \
      const TO r = (TO)(OPM(T, U, x, y));                                    \
      for (int64_t i = 0; i < n; i++)                                        \
        o[i] = r;                                                            \
    }                                                                        \
  }
/* Per-suffix function attributes: the float loops are cloned per ISA. */
#define HET_EW_CLONES_f32 HET_SIMD_CLONES
#define HET_EW_CLONES_f64 HET_SIMD_CLONES
#define HET_EW_CLONES_i8
#define HET_EW_CLONES_i16
#define HET_EW_CLONES_i32
#define HET_EW_CLONES_i64
#define HET_EW_CLONES_u8
#define HET_EW_CLONES_u16
#define HET_EW_CLONES_u32
#define HET_EW_CLONES_u64
#define HET_EW_CLONES_b8

#define HET_EW_BIN_SAME(sfx, T, U, DT, name, OPM) \
  HET_EW_CLONES_##sfx HET_EW_BIN_LOOP(name##_##sfx, T, U, T, OPM)
#define HET_EW_BIN_BOOL(sfx, T, U, DT, name, OPM) \
  HET_EW_CLONES_##sfx HET_EW_BIN_LOOP(name##_##sfx, T, U, uint8_t, OPM)

/* A same-shape unary loop: y = OPM(T, U, x, P) with P the params. */
#define HET_EW_UN_LOOP(NAME, T, U, TO, OPM)                      \
  static void NAME(void *const *pp, const int64_t *st, int64_t n, \
                   const void *user) {                           \
    (void)st;                                                    \
    const het_ew_params P = *(const het_ew_params *)user;        \
    (void)P;                                                     \
    TO *restrict o = pp[0];                                      \
    const T *restrict a = pp[1];                                 \
    for (int64_t i = 0; i < n; i++) {                            \
      T x = a[i];                                                \
      o[i] = (TO)(OPM(T, U, x, P));                              \
    }                                                            \
  }
#define HET_EW_UN_SAME(sfx, T, U, DT, name, OPM) \
  HET_EW_CLONES_##sfx HET_EW_UN_LOOP(name##_##sfx, T, U, T, OPM)
#define HET_EW_UN_BOOL(sfx, T, U, DT, name, OPM) \
  HET_EW_CLONES_##sfx HET_EW_UN_LOOP(name##_##sfx, T, U, uint8_t, OPM)

/* ---- runners ---- */

/* Calls fn(ctx, arg) with every float16/bfloat16 input and output replaced
 * by a float32 copy (outputs converted back after success); calls fn
 * directly when no operand is half precision. */
typedef het_status (*het_ew_body_fn)(het_kernel_ctx *ctx,
                                     const void *arg);
het_status het_ew_via_f32(het_kernel_ctx *ctx, het_ew_body_fn fn,
                          const void *arg);

/* ERR_UNSUPPORTED naming the node and the dtype. */
het_status het_ew_unsupported(const het_kernel_ctx *ctx, het_dtype t);

/* Same-shape map of input 0 into output 0 with fns[input dtype]; half
 * precision goes through float32. */
het_status het_ew_map(het_kernel_ctx *ctx, const het_ew_fn_table fns,
                      const het_ew_params *params);

/* out = fns[a dtype](a, b) with numpy broadcasting, or the opset < 7
 * `broadcast`/`axis` rule when the node is that old.  Errors name the
 * node.  Half precision must already be converted by the caller. */
het_status het_ew_binary(const het_kernel_ctx *ctx, const het_tensor *a,
                         const het_tensor *b, het_tensor *out,
                         het_bcast_row_fn fn, const void *user);

/* Converts element i of tensor t to double (any numeric dtype). */
double het_ew_load(const het_tensor *t, int64_t i);

#endif
