/* linalg_conv_tmpl.h — N-D im2col, col2im and the grouped convolution /
 * transposed convolution cores for one element type.  Included by
 * linalg_conv.c once per type with LK_T (element), LK_SFX (name suffix)
 * and LK_GEMM(ta, m, n, k, a, lda, b, ldb, c, ldc) (c = op(a) b) defined.
 */
#define LK_CAT_(a, b) a##b
#define LK_CAT(a, b) LK_CAT_(a, b)
#define LK_FN(name) LK_CAT(name, LK_SFX)

static void kidx_decompose(const het_conv_geom *g, int64_t kk, int64_t *k);
static bool geom_pointwise(const het_conv_geom *g);

/* col[(c*ksz + kk) * osz + o] = x[c, o*stride - pad_b + k*dil] or 0. */
static __attribute__((unused)) void LK_FN(im2col_)(const het_conv_geom *g, const LK_T *x, int64_t cg,
                           LK_T *col) {
  int last = g->nsp - 1;
  int64_t isz = het_conv_geom_count(g->in, g->nsp);
  int64_t osz = het_conv_geom_count(g->out, g->nsp);
  int64_t ksz = het_conv_geom_count(g->kernel, g->nsp);
  int64_t inner = g->out[last], in_last = g->in[last];
  if (inner == 0)
    return;
  int64_t outer = osz / inner, s = g->stride[last];
  for (int64_t c = 0; c < cg; c++)
    for (int64_t kk = 0; kk < ksz; kk++) {
      int64_t k[HET_GEOM_MAX_SP];
      kidx_decompose(g, kk, k);
      LK_T *dst = col + (c * ksz + kk) * osz;
      const LK_T *src = x + c * isz;
      int64_t base = k[last] * g->dil[last] - g->pad_b[last];
      for (int64_t o = 0; o < outer; o++) {
        int64_t rem = o, off = 0, mul = 1;
        bool ok = true;
        for (int d = last - 1; d >= 0; d--) {
          int64_t od = rem % g->out[d];
          rem /= g->out[d];
          int64_t id = od * g->stride[d] - g->pad_b[d] + k[d] * g->dil[d];
          ok = ok && id >= 0 && id < g->in[d];
          off += id * mul;
          mul *= g->in[d];
        }
        LK_T *row = dst + o * inner;
        if (!ok) {
          memset(row, 0, sizeof(LK_T) * (size_t)inner);
          continue;
        }
        const LK_T *srow = src + off * in_last;
        for (int64_t ow = 0; ow < inner; ow++) {
          int64_t iw = ow * s + base;
          row[ow] = (iw >= 0 && iw < in_last) ? srow[iw] : (LK_T)0;
        }
      }
    }
}

/* y[m, i*stride - pad_b + k*dil] += col[(m*ksz + kk) * isz + i]. */
static __attribute__((unused)) void LK_FN(col2im_)(const het_conv_geom *g, const LK_T *col,
                           int64_t mg, LK_T *y) {
  int last = g->nsp - 1;
  int64_t isz = het_conv_geom_count(g->in, g->nsp);
  int64_t osz = het_conv_geom_count(g->out, g->nsp);
  int64_t ksz = het_conv_geom_count(g->kernel, g->nsp);
  int64_t inner = g->in[last], out_last = g->out[last];
  if (inner == 0)
    return;
  int64_t outer = isz / inner, s = g->stride[last];
  for (int64_t m = 0; m < mg; m++)
    for (int64_t kk = 0; kk < ksz; kk++) {
      int64_t k[HET_GEOM_MAX_SP];
      kidx_decompose(g, kk, k);
      const LK_T *src = col + (m * ksz + kk) * isz;
      LK_T *dst = y + m * osz;
      int64_t base = k[last] * g->dil[last] - g->pad_b[last];
      for (int64_t o = 0; o < outer; o++) {
        int64_t rem = o, off = 0, mul = 1;
        bool ok = true;
        for (int d = last - 1; d >= 0; d--) {
          int64_t id = rem % g->in[d];
          rem /= g->in[d];
          int64_t od = id * g->stride[d] - g->pad_b[d] + k[d] * g->dil[d];
          ok = ok && od >= 0 && od < g->out[d];
          off += od * mul;
          mul *= g->out[d];
        }
        if (!ok)
          continue;
        LK_T *drow = dst + off * out_last;
        const LK_T *srow = src + o * inner;
        for (int64_t iw = 0; iw < inner; iw++) {
          int64_t ow = iw * s + base;
          if (ow >= 0 && ow < out_last)
            drow[ow] += srow[iw];
        }
      }
    }
}

static __attribute__((unused)) void LK_FN(add_bias_)(LK_T *y, const LK_T *b, int64_t n, int64_t m,
                             int64_t sz) {
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++) {
      LK_T *p = y + (i * m + j) * sz;
      for (int64_t e = 0; e < sz; e++)
        p[e] += b[j];
    }
}

/* y[n, m, out] = sum W[m, c, k] x[n, c, ...]; col holds cg*ksz*osz. */
static __attribute__((unused)) void LK_FN(conv_core_)(const het_conv_geom *g, int64_t nb, int64_t c,
                              int64_t m, int64_t group, const LK_T *x,
                              const LK_T *w, const LK_T *b, LK_T *y,
                              LK_T *col) {
  int64_t cg = c / group, mg = m / group;
  int64_t isz = het_conv_geom_count(g->in, g->nsp);
  int64_t osz = het_conv_geom_count(g->out, g->nsp);
  int64_t kdim = cg * het_conv_geom_count(g->kernel, g->nsp);
  bool direct = geom_pointwise(g);
  for (int64_t n = 0; n < nb; n++)
    for (int64_t gi = 0; gi < group; gi++) {
      const LK_T *src = x + (n * c + gi * cg) * isz;
      if (!direct) {
        LK_FN(im2col_)(g, src, cg, col);
        src = col;
      }
      LK_GEMM(false, mg, osz, kdim, w + gi * mg * kdim, kdim, src, osz,
              y + (n * m + gi * mg) * osz, osz);
    }
  if (b)
    LK_FN(add_bias_)(y, b, nb, m, osz);
}

/* Transposed: W is [c, m/group, k...]; col holds (m/group)*ksz*isz. */
static __attribute__((unused)) void LK_FN(convt_core_)(const het_conv_geom *g, int64_t nb, int64_t c,
                               int64_t m, int64_t group, const LK_T *x,
                               const LK_T *w, const LK_T *b, LK_T *y,
                               LK_T *col) {
  int64_t cg = c / group, mg = m / group;
  int64_t isz = het_conv_geom_count(g->in, g->nsp);
  int64_t osz = het_conv_geom_count(g->out, g->nsp);
  int64_t rows = mg * het_conv_geom_count(g->kernel, g->nsp);
  memset(y, 0, sizeof(LK_T) * (size_t)(nb * m * osz));
  for (int64_t n = 0; n < nb; n++)
    for (int64_t gi = 0; gi < group; gi++) {
      const LK_T *xg = x + (n * c + gi * cg) * isz;
      LK_GEMM(true, rows, isz, cg, w + gi * cg * rows, rows, xg, isz, col,
              isz);
      LK_FN(col2im_)(g, col, mg, y + (n * m + gi * mg) * osz);
    }
  if (b)
    LK_FN(add_bias_)(y, b, nb, m, osz);
}

#undef LK_FN
#undef LK_CAT
#undef LK_CAT_
