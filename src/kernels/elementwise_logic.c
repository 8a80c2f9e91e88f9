/* elementwise_logic.c — broadcasting comparison, boolean and bit kernels:
 * Equal Less LessOrEqual Greater GreaterOrEqual (bool output), And Or Xor,
 * BitShift, and Where (selects by element size, so every dtype works).
 */
#include <string.h>

#include "kernels/elementwise_internal.h"

#define EQ_OP(T, U, x, y) ((x) == (y))
#define LT_OP(T, U, x, y) ((x) < (y))
#define LE_OP(T, U, x, y) ((x) <= (y))
#define GT_OP(T, U, x, y) ((x) > (y))
#define GE_OP(T, U, x, y) ((x) >= (y))
#define AND_OP(T, U, x, y) (((x) != 0) & ((y) != 0))
#define OR_OP(T, U, x, y) (((x) != 0) | ((y) != 0))
#define XOR_OP(T, U, x, y) (((x) != 0) ^ ((y) != 0))
#define SHL_OP(T, U, x, y) \
  ((y) >= sizeof(T) * 8 ? (T)0 : (T)((x) << (y)))
#define SHR_OP(T, U, x, y) \
  ((y) >= sizeof(T) * 8 ? (T)0 : (T)((x) >> (y)))

#define DEF_CMP(name, OPM)                   \
  HET_EW_FLOATS(HET_EW_BIN_BOOL, name, OPM) \
  HET_EW_SINTS(HET_EW_BIN_BOOL, name, OPM)  \
  HET_EW_UINTS(HET_EW_BIN_BOOL, name, OPM)  \
  HET_EW_BOOLS(HET_EW_BIN_BOOL, name, OPM)
#define ENT_CMP(name)                                                    \
  {HET_EW_FLOATS(HET_EW_ENTRY, name, 0) HET_EW_SINTS(HET_EW_ENTRY, name, 0) \
       HET_EW_UINTS(HET_EW_ENTRY, name, 0)                                  \
           HET_EW_BOOLS(HET_EW_ENTRY, name, 0)}

DEF_CMP(eq, EQ_OP)
DEF_CMP(lt, LT_OP)
DEF_CMP(le, LE_OP)
DEF_CMP(gt, GT_OP)
DEF_CMP(ge, GE_OP)
HET_EW_BOOLS(HET_EW_BIN_BOOL, and, AND_OP)
HET_EW_BOOLS(HET_EW_BIN_BOOL, or, OR_OP)
HET_EW_BOOLS(HET_EW_BIN_BOOL, xor, XOR_OP)
HET_EW_UINTS(HET_EW_BIN_SAME, shl, SHL_OP)
HET_EW_UINTS(HET_EW_BIN_SAME, shr, SHR_OP)

static const het_ew_fn_table eq_fns = ENT_CMP(eq);
static const het_ew_fn_table lt_fns = ENT_CMP(lt);
static const het_ew_fn_table le_fns = ENT_CMP(le);
static const het_ew_fn_table gt_fns = ENT_CMP(gt);
static const het_ew_fn_table ge_fns = ENT_CMP(ge);
static const het_ew_fn_table and_fns = {HET_EW_BOOLS(HET_EW_ENTRY, and, 0)};
static const het_ew_fn_table or_fns = {HET_EW_BOOLS(HET_EW_ENTRY, or, 0)};
static const het_ew_fn_table xor_fns = {HET_EW_BOOLS(HET_EW_ENTRY, xor, 0)};
static const het_ew_fn_table shl_fns = {HET_EW_UINTS(HET_EW_ENTRY, shl, 0)};
static const het_ew_fn_table shr_fns = {HET_EW_UINTS(HET_EW_ENTRY, shr, 0)};

static het_status het_ew_logic_body(het_kernel_ctx *ctx,
                                    const void *arg) {
  const het_bcast_row_fn *fns = arg;
  const het_tensor *a = ctx->inputs[0], *b = ctx->inputs[1];
  if (a->dtype != b->dtype)
    return het_error(HET_ERR_TYPE, "node '%s' (%s): input types %s and %s "
                     "differ", ctx->node->name, ctx->node->op_type,
                     het_dtype_str(a->dtype), het_dtype_str(b->dtype));
  het_bcast_row_fn fn = (unsigned)a->dtype < HET_EW_NDT ? fns[a->dtype]
                                                        : NULL;
  if (!fn)
    return het_ew_unsupported(ctx, a->dtype);
  return het_ew_binary(ctx, a, b, ctx->outputs[0], fn, NULL);
}

#define RUN_LOGIC_(op, table)                                  \
  het_status het_kernel_ew_run_##op(het_kernel_ctx *ctx) {    \
    return het_ew_via_f32(ctx, het_ew_logic_body, table);      \
  }
RUN_LOGIC_(Equal, eq_fns)
RUN_LOGIC_(Less, lt_fns)
RUN_LOGIC_(LessOrEqual, le_fns)
RUN_LOGIC_(Greater, gt_fns)
RUN_LOGIC_(GreaterOrEqual, ge_fns)
RUN_LOGIC_(And, and_fns)
RUN_LOGIC_(Or, or_fns)
RUN_LOGIC_(Xor, xor_fns)
#undef RUN_LOGIC_

het_status het_kernel_ew_run_BitShift(het_kernel_ctx *ctx) {
  const char *dir = het_node_attr_string(ctx->node, "direction");
  bool left = dir && strcmp(dir, "LEFT") == 0;
  if (!dir || (!left && strcmp(dir, "RIGHT") != 0))
    return het_error(HET_ERR_INVALID_MODEL, "node '%s' (BitShift): "
                     "direction must be LEFT or RIGHT", ctx->node->name);
  return het_ew_logic_body(ctx, left ? shl_fns : shr_fns);
}

/* ---- Where: cond ? x : y, by element size ---- */

#define WHERE_ROW(NAME, T)                                               \
  static void NAME(void *const *pp, const int64_t *st, int64_t n,        \
                   const void *user) {                                   \
    (void)user;                                                          \
    T *restrict o = pp[0];                                               \
    const uint8_t *restrict c = pp[1];                                   \
    const T *restrict x = pp[2], *restrict y = pp[3];                    \
    int64_t sc = st[1], sx = st[2], sy = st[3];                          \
    for (int64_t i = 0; i < n; i++)                                      \
      o[i] = c[i * sc] ? x[i * sx] : y[i * sy];                          \
  }
WHERE_ROW(het_ew_where8, uint8_t)
WHERE_ROW(het_ew_where16, uint16_t)
WHERE_ROW(het_ew_where32, uint32_t)
WHERE_ROW(het_ew_where64, uint64_t)

het_status het_kernel_ew_run_Where(het_kernel_ctx *ctx) {
  const het_tensor *in[3] = {ctx->inputs[0], ctx->inputs[1], ctx->inputs[2]};
  het_tensor *out = ctx->outputs[0];
  if (in[0]->dtype != HET_DTYPE_BOOL || in[1]->dtype != in[2]->dtype ||
      out->dtype != in[1]->dtype)
    return het_error(HET_ERR_TYPE, "node '%s' (Where): needs a bool "
                     "condition and X, Y of one type (got %s, %s, %s)",
                     ctx->node->name, het_dtype_str(in[0]->dtype),
                     het_dtype_str(in[1]->dtype), het_dtype_str(in[2]->dtype));
  het_bcast_row_fn fn;
  switch (het_dtype_size(out->dtype)) {
  case 1: fn = het_ew_where8; break;
  case 2: fn = het_ew_where16; break;
  case 4: fn = het_ew_where32; break;
  case 8: fn = het_ew_where64; break;
  default: return het_ew_unsupported(ctx, out->dtype);
  }
  het_status st = het_bcast_run_tensors(ctx->par, out, 3, in, fn, NULL);
  if (st != HET_OK)
    return het_error_wrap(st, "node '%s' (Where)", ctx->node->name);
  return HET_OK;
}
