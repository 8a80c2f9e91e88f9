/* dnnl_dw_fusion.c — does oneDNN's depthwise post-op fuse a 1x1 Conv and
 * the 3x3 depthwise Conv after it correctly, and how fast?  Builds the
 * 1x1 Conv C -> M on an H x H image (clip 0..6, then the depthwise post-op
 * of stride S, pads 1, then clip 0..6) with src/dst channels-last (nhwc)
 * or in oneDNN's blocked nChw16c layout (blocked), user scratchpad mode as
 * hetrt uses, runs it on random data and compares with a plain loop
 * computation of the two Convs; prints oneDNN's implementation, the
 * largest error and the best of 5 x 20 timed calls.  Not built by CMake:
 *   gcc -O2 bench/micro/dnnl_dw_fusion.c -o /tmp/dwf -ldnnl -lm
 *   taskset -c 0 /tmp/dwf 16 96 112 2 nhwc
 * oneDNN 2.6 (Debian), 2026-12-06: nhwc 16 96 112 2 runs jit_1x1 with an
 * error of 2.27; blocked runs it right; smaller images get
 * ref_fused_convolution (the two Convs through a buffer).
 */
#include <dnnl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x)                                                              \
  do {                                                                        \
    if ((x) != dnnl_success) {                                                \
      fprintf(stderr, "failed: %s\n", #x);                                    \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

static float clip6(float v) { return v < 0 ? 0 : v > 6 ? 6 : v; }
static float noise(void) { return (float)rand() / RAND_MAX - 0.5f; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A memory of md holding a copy of the plain (tag) data at p. */
static dnnl_memory_t from_plain(dnnl_engine_t eng, dnnl_stream_t st,
                                const dnnl_memory_desc_t *md, int nd,
                                const dnnl_dims_t dims, dnnl_format_tag_t tag,
                                void *p) {
  dnnl_memory_desc_t pmd;
  dnnl_memory_t pm, m;
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  CHECK(dnnl_memory_desc_init_by_tag(&pmd, nd, dims, dnnl_f32, tag));
  CHECK(dnnl_memory_create(&pm, &pmd, eng, p));
  CHECK(dnnl_memory_create(&m, md, eng, DNNL_MEMORY_ALLOCATE));
  CHECK(dnnl_reorder_primitive_desc_create(&rpd, &pmd, eng, md, eng, NULL));
  CHECK(dnnl_primitive_create(&r, rpd));
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, pm}, {DNNL_ARG_TO, m}};
  CHECK(dnnl_primitive_execute(r, st, 2, args));
  CHECK(dnnl_stream_wait(st));
  dnnl_primitive_destroy(r);
  dnnl_primitive_desc_destroy(rpd);
  dnnl_memory_destroy(pm);
  return m;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s C M H S nhwc|blocked\n", argv[0]);
    return 2;
  }
  int c = atoi(argv[1]), m = atoi(argv[2]), h = atoi(argv[3]), s = atoi(argv[4]);
  dnnl_format_tag_t tag =
      strcmp(argv[5], "blocked") == 0 ? dnnl_aBcd16b : dnnl_acdb;
  int oh = (h - 1) / s + 1;
  float *x = malloc(sizeof(float) * c * h * h), *w = malloc(sizeof(float) * m * c);
  float *b = malloc(sizeof(float) * m), *wd = malloc(sizeof(float) * m * 9);
  float *bd = malloc(sizeof(float) * m), *mid = malloc(sizeof(float) * m * h * h);
  float *ref = malloc(sizeof(float) * m * oh * oh), *y = malloc(sizeof(float) * m * oh * oh);
  for (int i = 0; i < c * h * h; i++) x[i] = noise();
  for (int i = 0; i < m * c; i++) w[i] = noise();
  for (int i = 0; i < m * 9; i++) wd[i] = noise();
  for (int i = 0; i < m; i++) b[i] = noise(), bd[i] = noise();
  /* the reference, channels-last: x[p][c], mid[p][m], ref[p][m] */
  for (int p = 0; p < h * h; p++)
    for (int k = 0; k < m; k++) {
      float a = b[k];
      for (int i = 0; i < c; i++) a += x[p * c + i] * w[k * c + i];
      mid[p * m + k] = clip6(a);
    }
  for (int r = 0; r < oh; r++)
    for (int q = 0; q < oh; q++)
      for (int k = 0; k < m; k++) {
        float a = bd[k];
        for (int i = 0; i < 3; i++)
          for (int j = 0; j < 3; j++) {
            int ir = r * s - 1 + i, iq = q * s - 1 + j;
            if (ir >= 0 && iq >= 0 && ir < h && iq < h)
              a += mid[(ir * h + iq) * m + k] * wd[k * 9 + i * 3 + j];
          }
        ref[(r * oh + q) * m + k] = clip6(a);
      }
  dnnl_engine_t eng;
  dnnl_stream_t st;
  CHECK(dnnl_engine_create(&eng, dnnl_cpu, 0));
  CHECK(dnnl_stream_create(&st, eng, dnnl_stream_default_flags));
  dnnl_dims_t sd = {1, c, h, h}, wdims = {m, c, 1, 1}, bdims = {m},
              dd = {1, m, h, h}, dwdims = {m, 1, 1, 3, 3}, od = {1, m, oh, oh};
  dnnl_dims_t one = {1, 1}, zero = {0, 0};
  dnnl_memory_desc_t smd, wmd, bmd, dmd;
  CHECK(dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag));
  CHECK(dnnl_memory_desc_init_by_tag(&wmd, 4, wdims, dnnl_f32, dnnl_format_tag_any));
  CHECK(dnnl_memory_desc_init_by_tag(&bmd, 1, bdims, dnnl_f32, dnnl_a));
  CHECK(dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag));
  dnnl_convolution_desc_t cd;
  CHECK(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                           dnnl_convolution_direct, &smd, &wmd,
                                           &bmd, &dmd, one, zero, zero));
  dnnl_post_ops_t po;
  dnnl_primitive_attr_t attr;
  CHECK(dnnl_post_ops_create(&po));
  CHECK(dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_clip, 0.f, 6.f));
  CHECK(dnnl_post_ops_append_dw(po, dnnl_f32, dnnl_f32, dnnl_f32, 3, s, 1, 0,
                                0, NULL));
  CHECK(dnnl_post_ops_append_eltwise(po, 1.f, dnnl_eltwise_clip, 0.f, 6.f));
  CHECK(dnnl_primitive_attr_create(&attr));
  CHECK(dnnl_primitive_attr_set_post_ops(attr, po));
  CHECK(dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user));
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  const char *impl = "";
  CHECK(dnnl_primitive_desc_create(&pd, &cd, attr, eng, NULL));
  CHECK(dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl));
  CHECK(dnnl_primitive_create(&prim, pd));
  const dnnl_memory_desc_t *q_w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
  const dnnl_memory_desc_t *q_d = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
  const dnnl_memory_desc_t *q_sp = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  const dnnl_memory_desc_t *q_dww = dnnl_primitive_desc_query_md(
      pd, dnnl_query_exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS);
  const dnnl_memory_desc_t *q_dwb = dnnl_primitive_desc_query_md(
      pd, dnnl_query_exec_arg_md, DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS);
  dnnl_memory_t ms = from_plain(eng, st, &smd, 4, sd, dnnl_acdb, x);
  dnnl_memory_t mw = from_plain(eng, st, q_w, 4, wdims, dnnl_abcd, w);
  dnnl_memory_t mdw = from_plain(eng, st, q_dww, 5, dwdims, dnnl_abcde, wd);
  dnnl_memory_t mb, mdb, md, msp;
  /* twice the scratchpad asked for: oneDNN 2.6's jit_1x1 reads past it */
  size_t nsp = dnnl_memory_desc_get_size(q_sp);
  void *sp = calloc(1, 2 * nsp + 64);
  CHECK(dnnl_memory_create(&mb, &bmd, eng, b));
  CHECK(dnnl_memory_create(&mdb, q_dwb, eng, bd));
  CHECK(dnnl_memory_create(&md, q_d, eng, DNNL_MEMORY_ALLOCATE));
  CHECK(dnnl_memory_create(&msp, q_sp, eng, sp));
  dnnl_exec_arg_t args[7] = {
      {DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb},
      {DNNL_ARG_DST, md}, {DNNL_ARG_SCRATCHPAD, msp},
      {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_WEIGHTS, mdw},
      {DNNL_ARG_ATTR_POST_OP_DW | DNNL_ARG_BIAS, mdb}};
  CHECK(dnnl_primitive_execute(prim, st, 7, args));
  CHECK(dnnl_stream_wait(st));
  /* dst back to channels-last, then the error */
  dnnl_memory_desc_t ymd;
  dnnl_memory_t ym;
  dnnl_primitive_desc_t rpd;
  dnnl_primitive_t r;
  CHECK(dnnl_memory_desc_init_by_tag(&ymd, 4, od, dnnl_f32, dnnl_acdb));
  CHECK(dnnl_memory_create(&ym, &ymd, eng, y));
  CHECK(dnnl_reorder_primitive_desc_create(&rpd, q_d, eng, &ymd, eng, NULL));
  CHECK(dnnl_primitive_create(&r, rpd));
  dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, md}, {DNNL_ARG_TO, ym}};
  CHECK(dnnl_primitive_execute(r, st, 2, rargs));
  CHECK(dnnl_stream_wait(st));
  double err = 0;
  for (int i = 0; i < m * oh * oh; i++)
    err = fmax(err, fabs(y[i] - ref[i]));
  double best = 1e30;
  for (int round = 0; round < 5; round++) {
    double t0 = now_ms();
    for (int i = 0; i < 20; i++)
      CHECK(dnnl_primitive_execute(prim, st, 7, args));
    CHECK(dnnl_stream_wait(st));
    best = fmin(best, (now_ms() - t0) / 20);
  }
  printf("%s, C %d M %d H %d S %d %s: max error %g, %.1f us a call\n", impl, c,
         m, h, s, argv[5], err, best * 1e3);
  return 0;
}
