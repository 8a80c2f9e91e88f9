/* matmul_fused_dnnl.c — oneDNN matmul primitive for hetrt.FusedMatMul with
 * a static A shape: Y = A @ B + bias (+ gelu_erf as an eltwise post-op),
 * B reordered once into oneDNN's preferred layout, so bias and Gelu are
 * applied while the GEMM writes Y.  Built only with oneDNN; the kernel
 * (kernels/nlp_matmul.c) falls back to MatMul + its own row pass.  The
 * primitive is read-only after creation; scratchpads are per call.
 */
#include <stdlib.h>

#include <dnnl.h>

#include "core/infer.h"
#include "core/status.h"
#include "kernels/dnnl/dnnl_common.h"
#include "kernels/nlp_kernels.h"

typedef struct het_fmm_dnnl {
  het_dnnl_prim p; /* p.w owned, or a plan's (borrowed) */
  int64_t m, k, n;
  /* bfloat16 A (cpu.precision=bf16): A's float32 layout and the reorder
   * converting it per call into this thread's staging; NULL for float32 */
  dnnl_memory_desc_t a_user;
  dnnl_primitive_t a_r;
} het_fmm_dnnl;

static bool md_typed(dnnl_memory_desc_t *md, int64_t r, int64_t c, bool any,
                     dnnl_data_type_t dt) {
  dnnl_dims_t d = {r, c};
  return dnnl_memory_desc_init_by_tag(md, 2, d, dt,
                                      any ? dnnl_format_tag_any : dnnl_ab) ==
         dnnl_success;
}

static bool md_plain(dnnl_memory_desc_t *md, int64_t r, int64_t c,
                     bool any) {
  return md_typed(md, r, c, any, dnnl_f32);
}

static bool fmm_attr_gelu(dnnl_primitive_attr_t attr) {
  dnnl_post_ops_t po;
  if (dnnl_post_ops_create(&po) != dnnl_success)
    return false;
  bool ok = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_gelu_erf,
                                         0.0f, 0.0f) == dnnl_success &&
            dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  dnnl_post_ops_destroy(po);
  return ok;
}

static bool fmm_build(het_fmm_dnnl *f, const het_tensor *w, bool gelu,
                      bool bf16) {
  dnnl_data_type_t in = bf16 ? dnnl_bf16 : dnnl_f32;
  dnnl_memory_desc_t src, wany, wuser, b, dst;
  dnnl_matmul_desc_t md;
  dnnl_primitive_desc_t pd = NULL;
  dnnl_primitive_attr_t attr = het_dnnl_scratch_attr();
  bool ok = attr && (!gelu || fmm_attr_gelu(attr)) &&
            md_typed(&src, f->m, f->k, false, in) &&
            md_typed(&wany, f->k, f->n, true, in) &&
            md_plain(&wuser, f->k, f->n, false) &&
            md_plain(&b, 1, f->n, false) && md_plain(&dst, f->m, f->n, false) &&
            dnnl_matmul_desc_init(&md, &src, &wany, &b, &dst) == dnnl_success &&
            dnnl_primitive_desc_create(&pd, &md, attr, het_dnnl_engine(),
                                       NULL) == dnnl_success;
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  if (!ok || !het_dnnl_prim_init(&f->p, pd))
    return false;
  /* A's float32 layout into the primitive's (bfloat16 under bf16) */
  return het_dnnl_weights_prepare(&f->p, &wuser, w->data) &&
         md_plain(&f->a_user, f->m, f->k, false) &&
         het_dnnl_reorder_create(&f->a_user, &f->p.src_md, &f->a_r);
}

void het_fmm_dnnl_destroy(void *state) {
  het_fmm_dnnl *f = state;
  if (!f)
    return;
  dnnl_primitive_destroy(f->p.prim);
  dnnl_primitive_destroy(f->a_r);
  het_dnnl_weights_free(&f->p);
  free(f);
}

void het_fmm_dnnl_weights(const void *state, het_kernel_weight_fn fn,
                          void *ctx) {
  const het_fmm_dnnl *f = state;
  if (f)
    het_dnnl_prim_weights(&f->p, fn, ctx);
}

/* *out = NULL (and OK) when the node does not fit: A's shape not static,
 * B not a constant 2-D float32, no constant bias, or oneDNN refuses;
 * OUT_OF_MEMORY when the build ran out of memory. */
het_status het_fmm_dnnl_create(const het_graph *g, const het_node *node,
                               bool bf16, void **out) {
  *out = NULL;
  int a = het_node_input(node, 0), b = het_node_input(node, 1),
      c = het_node_input(node, 2);
  if (a < 0 || b < 0 || c < 0 || !het_dnnl_engine() ||
      !g->values[b].initializer || !g->values[c].initializer)
    return HET_OK;
  const het_shape *as = &g->values[a].shape;
  const het_tensor *w = g->values[b].initializer;
  if (!het_shape_is_concrete(as) || as->rank < 2 ||
      w->dtype != HET_DTYPE_FLOAT32 || w->rank != 2 ||
      as->dims[as->rank - 1].value != w->dims[0])
    return HET_OK;
  het_fmm_dnnl *f = calloc(1, sizeof *f);
  if (!f)
    return het_node_error(node, HET_ERR_OUT_OF_MEMORY, "out of memory");
  f->k = w->dims[0];
  f->n = w->dims[1];
  f->m = het_shape_count(as) / f->k;
  het_dnnl_oom_take();
  if (f->m < 1 || f->n < 1 ||
      !fmm_build(f, w, het_node_attr_int(node, "gelu", 0) != 0, bf16)) {
    het_fmm_dnnl_destroy(f);
    return het_dnnl_oom_take()
               ? het_node_error(node, HET_ERR_OUT_OF_MEMORY,
                                "oneDNN matmul: out of memory building the "
                                "primitive")
               : HET_OK;
  }
  *out = f;
  return HET_OK;
}

/* Runs when A has the prepared shape; *done = false: the caller falls
 * back. */
het_status het_fmm_dnnl_run(const void *state, const het_tensor *a,
                            const het_tensor *bias, het_tensor *y, bool *done) {
  const het_fmm_dnnl *f = state;
  *done = false;
  if (!f || !bias || a->rank < 2 || a->dims[a->rank - 1] != f->k ||
      het_tensor_count(a) != f->m * f->k || het_tensor_count(bias) != f->n ||
      bias->dtype != HET_DTYPE_FLOAT32)
    return HET_OK;
  void *as; /* bfloat16 A: in this thread's staging */
  HET_TRY(het_dnnl_stage_src(f->a_r, &f->a_user, a->data, &f->p.src_md, &as));
  if (!het_dnnl_prim_execute(&f->p, as, bias->data, y->data))
    return het_error(HET_ERR_KERNEL, "oneDNN matmul failed");
  *done = true;
  return HET_OK;
}
