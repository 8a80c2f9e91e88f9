/* elementwise_unary.c — same-shape unary math and activation kernels
 * (Abs ... Shrink, Not, IsNaN, IsInf).  Float loops are written once with
 * <tgmath.h> and instantiated for float and double; float32 exp, tanh, erf
 * and sigmoid use the vectorisable simd.h versions; half precision goes
 * through float32 (het_ew_map).  Attribute defaults follow the ONNX spec.
 */
#include <math.h>
#include <string.h>
#include <tgmath.h>

#include "kernels/elementwise_internal.h"

/* Float32 goes through the vectorisable versions, double through libm. */
static inline double het_ew_sigmoid(double x) { return 1 / (1 + exp(-x)); }
#define FEXP(x) _Generic((x), float: het_simd_expf, default: exp)(x)
#define FTANH(x) _Generic((x), float: het_simd_tanhf, default: tanh)(x)
#define FERF(x) _Generic((x), float: het_simd_erff, default: erf)(x)
#define FSIGMOID(x) \
  _Generic((x), float: het_simd_sigmoidf, default: het_ew_sigmoid)(x)

/* ---- float expressions: OPM(T, U, x, P) ---- */
#define ABS_F(T, U, x, P) fabs(x)
#define NEG_F(T, U, x, P) (-(x))
#define RECIP_F(T, U, x, P) ((T)1 / (x))
#define SQRT_F(T, U, x, P) sqrt(x)
#define EXP_F(T, U, x, P) FEXP(x)
#define LOG_F(T, U, x, P) log(x)
#define ERF_F(T, U, x, P) FERF(x)
#define SIN_F(T, U, x, P) sin(x)
#define COS_F(T, U, x, P) cos(x)
#define TAN_F(T, U, x, P) tan(x)
#define ASIN_F(T, U, x, P) asin(x)
#define ACOS_F(T, U, x, P) acos(x)
#define ATAN_F(T, U, x, P) atan(x)
#define SINH_F(T, U, x, P) sinh(x)
#define COSH_F(T, U, x, P) cosh(x)
#define ASINH_F(T, U, x, P) asinh(x)
#define ACOSH_F(T, U, x, P) acosh(x)
#define ATANH_F(T, U, x, P) atanh(x)
#define CEIL_F(T, U, x, P) ceil(x)
#define FLOOR_F(T, U, x, P) floor(x)
#define ROUND_F(T, U, x, P) nearbyint(x) /* default mode: half to even */
#define SIGN_F(T, U, x, P) ((x) > 0 ? (T)1 : (x) < 0 ? (T)-1 : (x))
#define RELU_F(T, U, x, P) ((x) < 0 ? (T)0 : (x))
#define LRELU_F(T, U, x, P) ((x) < 0 ? (T)(P).alpha * (x) : (x))
#define ELU_F(T, U, x, P) ((x) < 0 ? (T)(P).alpha * expm1(x) : (x))
#define SELU_F(T, U, x, P)                                         \
  ((x) <= 0 ? (T)(P).gamma * (T)(P).alpha * expm1(x) \
            : (T)(P).gamma * (x))
#define CELU_F(T, U, x, P) \
  ((x) < 0 ? (T)(P).alpha * expm1((x) / (T)(P).alpha) : (x))
#define SIGMOID_F(T, U, x, P) FSIGMOID(x)
#define CLAMP01(T, v) ((v) < 0 ? (T)0 : (v) > 1 ? (T)1 : (v))
#define HSIG_F(T, U, x, P) CLAMP01(T, (T)(P).alpha * (x) + (T)(P).beta)
#define HSWISH_F(T, U, x, P) \
  ((x) * CLAMP01(T, (x) * ((T)1 / (T)6) + (T)0.5))
#define TANH_F(T, U, x, P) FTANH(x)
#define SOFTPLUS_F(T, U, x, P) \
  ((x) > 0 ? (x) + log1p(exp(-(x))) : log1p(exp(x)))
#define SOFTSIGN_F(T, U, x, P) ((x) / ((T)1 + fabs(x)))
#define TRELU_F(T, U, x, P) ((x) > (T)(P).alpha ? (x) : (T)0)
#define SHRINK_F(T, U, x, P)                       \
  ((x) < -(T)(P).alpha  ? (x) + (T)(P).beta  \
   : (x) > (T)(P).alpha ? (x) - (T)(P).beta \
                        : (T)0)
#define ISNAN_F(T, U, x, P) ((x) != (x))
#define ISINF_F(T, U, x, P) \
  (isinf(x) && ((x) > 0 ? (P).detect_pos : (P).detect_neg))

/* ---- integer expressions ---- */
#define ABS_S(T, U, x, P) ((x) < 0 ? (T)(0 - (U)(x)) : (x))
#define ABS_U(T, U, x, P) (x)
#define NEG_S(T, U, x, P) ((T)(0 - (U)(x)))
#define SIGN_I(T, U, x, P) ((T)(((x) > 0) - ((x) < 0)))
#define SIGN_U(T, U, x, P) ((T)((x) != 0))
#define RELU_S(T, U, x, P) ((x) < 0 ? (T)0 : (x))
#define NOT_B(T, U, x, P) (!(x))

/* Instantiates OP over float types (suffix FOPM) and integer types. */
#define DEF_F(name, FOPM) HET_EW_FLOATS(HET_EW_UN_SAME, name, FOPM)
#define ENT_F(name) HET_EW_FLOATS(HET_EW_ENTRY, name, 0)
#define DEF_S(name, IOPM) HET_EW_SINTS(HET_EW_UN_SAME, name, IOPM)
#define ENT_S(name) HET_EW_SINTS(HET_EW_ENTRY, name, 0)
#define DEF_U(name, IOPM) HET_EW_UINTS(HET_EW_UN_SAME, name, IOPM)
#define ENT_U(name) HET_EW_UINTS(HET_EW_ENTRY, name, 0)

/* Float-only ops: one loop pair and a table each. */
#define FLOAT_OPS(X)                                                         \
  X(Reciprocal, RECIP_F) X(Sqrt, SQRT_F) X(Exp, EXP_F) X(Log, LOG_F)         \
  X(Erf, ERF_F) X(Sin, SIN_F) X(Cos, COS_F) X(Tan, TAN_F) X(Asin, ASIN_F)    \
  X(Acos, ACOS_F) X(Atan, ATAN_F) X(Sinh, SINH_F) X(Cosh, COSH_F)            \
  X(Asinh, ASINH_F) X(Acosh, ACOSH_F) X(Atanh, ATANH_F) X(Ceil, CEIL_F)      \
  X(Floor, FLOOR_F) X(Round, ROUND_F) X(LeakyRelu, LRELU_F) X(Elu, ELU_F)    \
  X(Selu, SELU_F) X(Celu, CELU_F) X(Sigmoid, SIGMOID_F)                     \
  X(HardSigmoid, HSIG_F) X(HardSwish, HSWISH_F) X(Tanh, TANH_F)              \
  X(Softplus, SOFTPLUS_F) X(Softsign, SOFTSIGN_F)                            \
  X(ThresholdedRelu, TRELU_F) X(Shrink, SHRINK_F)

#define DEF_FLOAT_OP_(op, FOPM) DEF_F(op, FOPM)
FLOAT_OPS(DEF_FLOAT_OP_)
#undef DEF_FLOAT_OP_

DEF_F(Abs, ABS_F)
DEF_S(Abs, ABS_S)
DEF_U(Abs, ABS_U)
DEF_F(Neg, NEG_F)
DEF_S(Neg, NEG_S)
DEF_F(Sign, SIGN_F)
DEF_S(Sign, SIGN_I)
DEF_U(Sign, SIGN_U)
DEF_F(Relu, RELU_F)
DEF_S(Relu, RELU_S)
HET_EW_BOOLS(HET_EW_UN_SAME, Not, NOT_B)
HET_EW_FLOATS(HET_EW_UN_BOOL, IsNaN, ISNAN_F)
HET_EW_FLOATS(HET_EW_UN_BOOL, IsInf, ISINF_F)

/* Attribute values with the op's defaults. */
static het_ew_params het_ew_unary_params(const het_node *n) {
  het_ew_params p = {0};
  het_node_act_params(n, &p.alpha, &p.beta);
  p.gamma = het_node_attr_float(n, "gamma", 1.05070102214813232421875f);
  p.detect_pos = het_node_attr_int(n, "detect_positive", 1) != 0;
  p.detect_neg = het_node_attr_int(n, "detect_negative", 1) != 0;
  return p;
}

static het_status het_ew_unary(het_kernel_ctx *ctx,
                               const het_ew_fn_table fns) {
  het_ew_params p = het_ew_unary_params(ctx->node);
  return het_ew_map(ctx, fns, &p);
}

#define RUN_FLOAT_OP_(op, FOPM)                                \
  het_status het_kernel_ew_run_##op(het_kernel_ctx *ctx) {    \
    static const het_ew_fn_table fns = {ENT_F(op)};            \
    return het_ew_unary(ctx, fns);                             \
  }
FLOAT_OPS(RUN_FLOAT_OP_)
#undef RUN_FLOAT_OP_

het_status het_kernel_ew_run_Abs(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(Abs) ENT_S(Abs) ENT_U(Abs)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_Neg(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(Neg) ENT_S(Neg)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_Sign(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(Sign) ENT_S(Sign) ENT_U(Sign)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_Relu(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(Relu) ENT_S(Relu)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_Not(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {HET_EW_BOOLS(HET_EW_ENTRY, Not, 0)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_IsNaN(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(IsNaN)};
  return het_ew_unary(ctx, fns);
}

het_status het_kernel_ew_run_IsInf(het_kernel_ctx *ctx) {
  static const het_ew_fn_table fns = {ENT_F(IsInf)};
  return het_ew_unary(ctx, fns);
}
