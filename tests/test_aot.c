/* test_aot.c — ahead-of-time plans (docs/plan-format.md): a session saved
 * as a plan and loaded again (from the file, from memory, compiled in the
 * background or eagerly) places every node where the original did and
 * gives bitwise its outputs, on the CPU (fp32 and int8 oneDNN kernels
 * taking the plan's prepared weights), split across emu and cpu, with
 * control flow and with shapes to plan for; the report says where the
 * placement came from; fingerprints faked into a plan grade it unusable
 * (an instruction set this CPU lacks, a provider's required entry) or
 * suboptimal (another CPU, another library version), and rebuild on
 * request; deterministic=true gives the same bytes for any thread count
 * and in another process, a plan's being those of the session that wrote
 * it; a session's shape regimes (planned ahead with
 * het_session_plan_shapes) are stored and restored, a run's shapes taking
 * the nearest stored one; truncated, bit-flipped and semantically broken
 * plans fail with a clear status and never crash; het_plan_get_info
 * describes and grades.
 */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cases.h"
#include "core/status.h"
#include "executor/plan_file.h"
#include "kernels/kernel.h"
#include "kernels/presets.h"
#include "hetrt/hetrt.h"
#include "onnx/loader.h"

#define DATA HETRT_TEST_DATA
#define NPU "devices=" HETRT_SOURCE_DIR "/configs/devices/npu.yaml"

static het_env *env;
static char plan_path[256];

static void setup(void) {
  ck_assert_int_eq(het_env_create(&env), HET_OK);
  snprintf(plan_path, sizeof plan_path, "/tmp/hetrt_test_aot_%d.hplan",
           (int)getpid());
}

static void teardown(void) {
  unlink(plan_path);
  het_env_destroy(env);
}

/* The inputs of a case folder's test_data_set_0 (input_K.pb), or, for a
 * model without one, a pattern for the first input with open dims 1 (or
 * the dims of shape, "x=1x3x8x8"-like, when given). */
typedef struct inputs {
  int n;
  const char *names[8]; /* owned copies */
  het_tensor *t[8];
} inputs;

/* x[dims] of the session's first input, filled with a fixed pattern. */
static het_tensor *pattern(const int64_t *dims, int rank) {
  het_tensor *t;
  ck_assert_int_eq(het_tensor_create(HET_DTYPE_FLOAT32, dims, rank, &t), HET_OK);
  float *p = het_tensor_get_data(t);
  for (int64_t i = 0; i < het_tensor_get_count(t); i++)
    p[i] = (float)(1.5 * sin(0.37 * (double)i));
  return t;
}

static void inputs_load(het_session *s, const char *dir, inputs *in) {
  memset(in, 0, sizeof *in);
  for (int k = 0; k < 8; k++) {
    char path[512];
    snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, k);
    FILE *f = fopen(path, "rb");
    if (!f)
      break;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert_int_eq(het_onnx_tensor_decode(buf, n, path, &in->t[k], NULL),
                     HET_OK);
    het_value_desc d;
    ck_assert_int_eq(het_session_get_input(s, (size_t)k, &d), HET_OK);
    in->names[k] = strdup(d.name);
    in->n = k + 1;
  }
  if (in->n)
    return;
  het_value_desc d;
  ck_assert_int_eq(het_session_get_input(s, 0, &d), HET_OK);
  int64_t dims[HET_MAX_RANK];
  for (int k = 0; k < d.rank; k++) /* open dims 64 (an image) */
    dims[k] = d.dims[k] >= 0 ? d.dims[k] : k ? 64 : 1;
  in->t[0] = pattern(dims, d.rank);
  in->names[0] = strdup(d.name);
  in->n = 1;
}

static void inputs_free(inputs *in) {
  for (int k = 0; k < in->n; k++) {
    het_tensor_destroy(in->t[k]);
    free((char *)in->names[k]);
  }
}

/* Every output of a run, in order. */
typedef struct outputs {
  size_t n;
  het_tensor *t[8];
} outputs;

static outputs run(het_session *s, const inputs *in) {
  outputs y = {.n = het_session_get_output_count(s)};
  ck_assert_uint_le(y.n, 8);
  het_status st = het_session_run(s, in->names, in->t, (size_t)in->n, NULL,
                                  y.n, y.t);
  ck_assert_msg(st == HET_OK, "run: %s", het_last_error());
  return y;
}

static void outputs_free(outputs *y) {
  for (size_t k = 0; k < y->n; k++)
    het_tensor_destroy(y->t[k]);
}

static void assert_same(const outputs *a, const outputs *b, const char *what) {
  ck_assert_uint_eq(a->n, b->n);
  for (size_t k = 0; k < a->n; k++)
    ck_assert_msg(het_tensor_get_nbytes(a->t[k]) == het_tensor_get_nbytes(b->t[k]) &&
                      memcmp(het_tensor_get_data(a->t[k]),
                             het_tensor_get_data(b->t[k]),
                             het_tensor_get_nbytes(a->t[k])) == 0,
                  "%s: output %zu differs", what, k);
}

static het_session *open_with(const char *path, const char *const *kv) {
  het_session *s = NULL;
  het_status st = case_open_session(env, path, kv, &s);
  ck_assert_msg(st == HET_OK, "%s: %s", path, het_last_error());
  return s;
}

static void assert_same_placement(het_session *a, het_session *b) {
  ck_assert_uint_eq(het_session_get_node_count(a),
                    het_session_get_node_count(b));
  for (size_t i = 0; i < het_session_get_node_count(a); i++) {
    het_node_placement x, y;
    ck_assert_int_eq(het_session_get_placement(a, i, &x), HET_OK);
    ck_assert_int_eq(het_session_get_placement(b, i, &y), HET_OK);
    ck_assert_str_eq(x.name, y.name);
    ck_assert_str_eq(x.provider, y.provider);
  }
}

static char *explain(het_session *s) {
  char *text = NULL;
  ck_assert_msg(het_session_explain(s, "text", &text) == HET_OK, "%s",
                het_last_error());
  return text;
}

static const struct {
  const char *model, *dir; /* dir: a case folder with test data, or NULL */
  const char *kv[4];
} cases[] = {
    {DATA "/emu/resnet_small.onnx", NULL, {"providers=cpu"}},
    {DATA "/emu/resnet_small.onnx", NULL, {"providers=emu,cpu", NPU}},
    {DATA "/emu/transformer_small.onnx", NULL, {"providers=emu,cpu", NPU}},
    {DATA "/control/if_conv/model.onnx", DATA "/control/if_conv",
     {"providers=emu,cpu", NPU}},
    {DATA "/control/loop_conv/model.onnx", DATA "/control/loop_conv",
     {"providers=cpu"}},
    {DATA "/nlp/encoder/model.onnx", DATA "/nlp/encoder", {"providers=cpu"}},
    {DATA "/emu/regime_convs.onnx", NULL,
     {"providers=emu,cpu", NPU, "shape=x=1x3x64x64"}},
    /* QDQ islands fused into oneDNN int8 QLinearConvs / a QLinearMatMul
     * (on a VNNI CPU) */
    {DATA "/optimizer/qdq_chain/model.onnx", DATA "/optimizer/qdq_chain",
     {"providers=cpu"}},
    {DATA "/optimizer/qdq_matmul/model.onnx", DATA "/optimizer/qdq_matmul",
     {"providers=cpu"}},
};

/* Saved and loaded three ways, the same placement and the same bytes;
 * the CPU's convolutions take the plan's prepared weights (no reorder). */
START_TEST(test_round_trip) {
  long taken = het_kernel_presets_taken();
  het_session *s = open_with(cases[_i].model, cases[_i].kv);
  inputs in;
  inputs_load(s, cases[_i].dir ? cases[_i].dir : "/nonexistent", &in);
  outputs want = run(s, &in);
  ck_assert_msg(het_session_save_plan(s, plan_path) == HET_OK, "%s",
                het_last_error());
  static const char *const eager[] = {"plan_load=eager", NULL};
  for (int how = 0; how < 3; how++) {
    het_session *p = NULL;
    if (how < 2) {
      p = open_with(plan_path, how ? eager : NULL);
    } else {
      FILE *f = fopen(plan_path, "rb");
      ck_assert_ptr_nonnull(f);
      fseek(f, 0, SEEK_END);
      long n = ftell(f);
      fseek(f, 0, SEEK_SET);
      void *buf = malloc((size_t)n);
      ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
      fclose(f);
      ck_assert_msg(het_session_create_from_memory(env, buf, (size_t)n, NULL,
                                                   &p) == HET_OK,
                    "%s", het_last_error());
      free(buf); /* the session keeps its own copy */
    }
    outputs got = run(p, &in);
    assert_same(&got, &want, cases[_i].model);
    outputs_free(&got);
    assert_same_placement(s, p);
    char *text = explain(p);
    ck_assert_msg(strstr(text, "optimal here") && strstr(text, "(plan)"),
                  "%s", text);
    free(text);
    het_session_destroy(p);
  }
  bool convs_on_cpu = strstr(cases[_i].model, "resnet_small") &&
                      strcmp(cases[_i].kv[0], "providers=cpu") == 0;
  bool int8 = strstr(cases[_i].model, "/qdq_") && het_kernels_int8_fast();
  if (convs_on_cpu || int8) /* three loads, each of them taking presets */
    ck_assert_int_ge(het_kernel_presets_taken(), taken + 3);
  outputs_free(&want);
  inputs_free(&in);
  het_session_destroy(s);
}
END_TEST

/* Reads plan_path, lets edit change one section's bytes, writes it back
 * (hashes made anew: the file is intact, its contents say otherwise). */
static void rewrite_section(uint32_t id,
                            char *(*edit)(const char *text, size_t n,
                                          size_t *out_n)) {
  het_plan_file *f = NULL;
  ck_assert_msg(het_plan_file_open(plan_path, 0u, &f) == HET_OK, "%s",
                het_last_error());
  het_plan_section sec[HET_PLAN_MAX_SECTIONS];
  char *edited = NULL;
  for (int i = 0; i < f->n_sections; i++) {
    sec[i] = f->sections[i];
    if (sec[i].id == id) {
      size_t n = 0;
      edited = edit(sec[i].data, (size_t)sec[i].size, &n);
      sec[i].data = edited;
      sec[i].size = n;
    }
  }
  char tmp[300];
  snprintf(tmp, sizeof tmp, "%s.edit", plan_path);
  ck_assert_int_eq(het_plan_file_write(tmp, sec, f->n_sections), HET_OK);
  het_plan_file_close(f);
  free(edited);
  ck_assert_int_eq(rename(tmp, plan_path), 0);
}

/* text with line "key=..." replaced by line (appended when absent). */
static char *replace_line(const char *text, size_t n, const char *key,
                          const char *line, size_t *out_n) {
  char *out = malloc(n + strlen(line) + 2);
  size_t o = 0, klen = strlen(key);
  bool done = false;
  for (size_t i = 0; i < n;) {
    const char *nl = memchr(text + i, '\n', n - i);
    size_t len = nl ? (size_t)(nl - (text + i)) + 1 : n - i;
    if (len > klen && strncmp(text + i, key, klen) == 0 && text[i + klen] == '=') {
      o += (size_t)sprintf(out + o, "%s\n", line);
      done = true;
    } else {
      memcpy(out + o, text + i, len);
      o += len;
    }
    i += len;
  }
  if (!done)
    o += (size_t)sprintf(out + o, "%s\n", line);
  *out_n = o;
  return out;
}

static const char *fake_line;
static char *edit_fake(const char *text, size_t n, size_t *out_n) {
  char key[64];
  snprintf(key, sizeof key, "%.*s", (int)strcspn(fake_line, "="), fake_line);
  return replace_line(text, n, key, fake_line, out_n);
}

static void save_resnet_plan(outputs *want, inputs *in) {
  static const char *const kv[] = {"providers=cpu", NULL};
  het_session *s = open_with(DATA "/emu/resnet_small.onnx", kv);
  inputs_load(s, "/nonexistent", in);
  *want = run(s, in);
  ck_assert_int_eq(het_session_save_plan(s, plan_path), HET_OK);
  het_session_destroy(s);
}

/* Fingerprints faked into the plan: what the grade says, whether it
 * loads, and what the report and warnings name. */
START_TEST(test_fingerprint_grades) {
  static const struct {
    const char *line;
    bool usable;
    const char *word; /* in the message or warning */
  } fakes[] = {
      {"cpu.isa=avx2 avx512f avx10", false, "avx10, which this CPU lacks"},
      {"cpu.brand=Imaginary CPU 9000", true, "made on 'Imaginary CPU 9000'"},
      {"cpu.cpus=512", true, "made on 512 logical CPUs"},
      {"provider.cpu=onednn=9.9.9;blas=OpenBLAS 0.3.21", true,
       "provider 'cpu': made with onednn=9.9.9"},
      {"provider.cpu=!abi=7", false, "provider 'cpu': made with !abi=7"},
  };
  for (size_t i = 0; i < sizeof fakes / sizeof *fakes; i++) {
    outputs want;
    inputs in;
    save_resnet_plan(&want, &in);
    fake_line = fakes[i].line;
    rewrite_section(HET_PSEC_FINGERPRINT, edit_fake);
    het_session *p = NULL;
    het_status st = het_session_create(env, plan_path, NULL, &p);
    char why[1024];
    snprintf(why, sizeof why, "%s", het_last_error());
    char *info = NULL;
    ck_assert_int_eq(het_plan_get_info(env, plan_path, &info), HET_OK);
    if (fakes[i].usable) {
      ck_assert_msg(st == HET_OK, "%s: %s", fakes[i].line, het_last_error());
      ck_assert_uint_ge(het_session_get_warning_count(p), 1);
      const char *w = het_session_get_warning(p, 0);
      ck_assert_msg(strstr(w, "suboptimal here") && strstr(w, fakes[i].word),
                    "%s", w);
      outputs got = run(p, &in);
      assert_same(&got, &want, fakes[i].line); /* the plan's own choices */
      outputs_free(&got);
      ck_assert_msg(strstr(info, "on this machine: suboptimal"), "%s", info);
      het_session_destroy(p);
    } else {
      ck_assert_int_eq(st, HET_ERR_UNSUPPORTED);
      ck_assert_msg(strstr(why, "unusable here") &&
                        strstr(why, fakes[i].word),
                    "%s", why);
      ck_assert_msg(strstr(info, "on this machine: unusable") &&
                        strstr(info, fakes[i].word),
                    "%s", info);
      static const char *const rebuild[] = {"plan_mismatch=rebuild", NULL};
      p = open_with(plan_path, rebuild);
      ck_assert_msg(strstr(het_session_get_warning(p, 0),
                           "partitioned and compiled afresh"),
                    "%s", het_session_get_warning(p, 0));
      outputs got = run(p, &in);
      case_assert_close(got.t[0], want.t[0], 1e-5, "rebuilt plan");
      outputs_free(&got);
      het_session_destroy(p);
    }
    free(info);
    outputs_free(&want);
    inputs_free(&in);
  }
}
END_TEST

/* Creation or, for the weights (checked after creation), the first run
 * fails with INVALID_MODEL or UNSUPPORTED and a message; never a crash. */
static void assert_refused(const char *what) {
  het_session *p = NULL;
  het_status st = het_session_create(env, plan_path, NULL, &p);
  if (st == HET_OK) {
    inputs in;
    inputs_load(p, "/nonexistent", &in);
    het_tensor *y = NULL;
    st = het_session_run(p, in.names, in.t, (size_t)in.n, NULL, 1, &y);
    het_tensor_destroy(y);
    inputs_free(&in);
    het_session_destroy(p);
  }
  ck_assert_msg(st == HET_ERR_INVALID_MODEL || st == HET_ERR_UNSUPPORTED ||
                    st == HET_ERR_IO,
                "%s: status %d (%s)", what, st, het_last_error());
  ck_assert_msg(strlen(het_last_error()) > 10, "%s: no message", what);
}

/* Every truncation and a bit flip in every 64-byte stretch of the file. */
START_TEST(test_damaged_files) {
  outputs want;
  inputs in;
  save_resnet_plan(&want, &in);
  FILE *f = fopen(plan_path, "rb");
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *orig = malloc((size_t)n);
  ck_assert_int_eq(fread(orig, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  int tried = 0;
  for (long cut = 0; cut < n; cut += cut < 256 ? 7 : 509, tried++) {
    f = fopen(plan_path, "wb");
    fwrite(orig, 1, (size_t)cut, f);
    fclose(f);
    char what[64];
    snprintf(what, sizeof what, "cut at %ld", cut);
    assert_refused(what);
  }
  for (long at = 0; at < n; at += 61, tried++) {
    orig[at] ^= (unsigned char)(1u << (at % 8));
    f = fopen(plan_path, "wb");
    fwrite(orig, 1, (size_t)n, f);
    fclose(f);
    orig[at] ^= (unsigned char)(1u << (at % 8));
    char what[64];
    snprintf(what, sizeof what, "bit flipped at %ld", at);
    assert_refused(what);
  }
  ck_assert_int_gt(tried, 100);
  free(orig);
  outputs_free(&want);
  inputs_free(&in);
}
END_TEST

static char *edit_partition(const char *text, size_t n, size_t *out_n) {
  /* the first node's provider becomes one no session has */
  char *out = malloc(n + 16);
  memcpy(out, text, n);
  *out_n = n;
  char *p = strstr(out, "\tcpu\t");
  memcpy(p, "\tgpu\t", 5);
  return out;
}

static char *edit_kernels(const char *text, size_t n, size_t *out_n) {
  char *out = malloc(n + 1);
  memcpy(out, text, n);
  out[0] = (char)0xff; /* a blob count past the section */
  *out_n = n;
  return out;
}

static char *edit_no_blobs(const char *text, size_t n, size_t *out_n) {
  (void)text;
  (void)n;
  char *out = calloc(1, 4); /* a count of 0 */
  *out_n = 4;
  return out;
}

static char *edit_truncate(const char *text, size_t n, size_t *out_n) {
  char *out = malloc(n + 1);
  memcpy(out, text, n);
  *out_n = n > 40 ? n - 40 : 0;
  return out;
}

/* Intact files whose contents are wrong: each a clear error. */
START_TEST(test_semantic_damage) {
  static const struct {
    uint32_t id;
    char *(*edit)(const char *, size_t, size_t *);
    const char *line, *word;
  } edits[] = {
      {HET_PSEC_PARTITION, edit_partition, NULL, "'gpu', which this session lacks"},
      {HET_PSEC_KERNELS, edit_kernels, NULL, "KERNELS"},
      {HET_PSEC_KERNELS, edit_no_blobs, NULL, "holds no compiled blob"},
      {HET_PSEC_GRAPH, edit_truncate, NULL, "plan"},
      {HET_PSEC_META, edit_fake, "option.threads=many", "threads"},
      {HET_PSEC_META, edit_fake, "option.providers=cpu,warp", "warp"},
  };
  for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
    outputs want;
    inputs in;
    save_resnet_plan(&want, &in);
    fake_line = edits[i].line;
    rewrite_section(edits[i].id, edits[i].edit);
    het_session *p = NULL; /* creation fails, or (compiled after it) the run */
    het_status st = het_session_create(env, plan_path, NULL, &p);
    if (st == HET_OK) {
      outputs y = {.n = 1};
      st = het_session_run(p, in.names, in.t, (size_t)in.n, NULL, 1, y.t);
      het_session_destroy(p);
    }
    ck_assert_msg(st != HET_OK && strstr(het_last_error(), edits[i].word),
                  "edit %zu: status %d: %s", i, st, het_last_error());
    outputs_free(&want);
    inputs_free(&in);
  }
}
END_TEST

/* x[1,3,side,side] with the fixed pattern, as inputs. */
static inputs image(int64_t side) {
  inputs in = {.n = 1};
  const int64_t dims[4] = {1, 3, side, side};
  in.t[0] = pattern(dims, 4);
  in.names[0] = strdup("x");
  return in;
}

static char *edit_regime_number(const char *text, size_t n, size_t *out_n) {
  char *out = malloc(n + 1);
  memcpy(out, text, n);
  out[n] = '\0';
  char *p = strstr(out, "regime\t1\t");
  ck_assert_ptr_nonnull(p);
  p[7] = '3'; /* regime 3 after regime 0: not the next one */
  *out_n = n;
  return out;
}

static char *edit_regime_shape(const char *text, size_t n, size_t *out_n) {
  char *out = malloc(n + 1);
  memcpy(out, text, n);
  out[n] = '\0';
  char *p = strstr(out, "x=1x3x128x128");
  ck_assert_ptr_nonnull(p);
  p[1] = 'y'; /* "xy1x3x...": no '=' */
  *out_n = n;
  return out;
}

/* Shape regimes in a plan: a session of regime_convs.onnx (emu+cpu,
 * planned for 16x16 images, which stay on the CPU) plans 128x128 ahead
 * (het_session_plan_shapes: a regime of its own, on the emu) and runs
 * both sizes; its plan, loaded in the background and eagerly, reports
 * both regimes as stored, places 128x128 on the emu again with nothing
 * re-planned, gives bitwise the writer's outputs at both sizes, and gives
 * 300x300 (a range never planned) the nearest stored regime.  Bad shapes
 * to plan for and damaged regime lines are clear errors. */
START_TEST(test_regimes) {
  static const char *const kv[] = {"providers=emu,cpu", NPU,
                                   "shape=x=1x3x16x16", NULL};
  het_session *s = open_with(DATA "/emu/regime_convs.onnx", kv);
  int regime = -1;
  ck_assert_msg(het_session_plan_shapes(s, "x=1x3x128x128", &regime) == HET_OK,
                "%s", het_last_error());
  ck_assert_int_eq(regime, 1);
  ck_assert_int_eq(het_session_plan_shapes(s, "x=1x3x16x16", &regime), HET_OK);
  ck_assert_int_eq(regime, 0);
  static const struct {
    const char *shapes, *word;
  } bad[] = {{"y=1x3x8x8", "no input 'y'"},
             {"x=1x4x8x8", "differs from the model's"},
             {"x=1x3x8", "rank"},
             {"", "is open: give a shape"},
             {"x=1x3xAx8", "x"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ck_assert_int_eq(het_session_plan_shapes(s, bad[i].shapes, NULL),
                     HET_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(het_last_error(), bad[i].word), "'%s': %s",
                  bad[i].shapes, het_last_error());
  }
  const int64_t sides[3] = {16, 128, 300};
  inputs in[3];
  outputs want[3];
  for (int k = 0; k < 2; k++) {
    in[k] = image(sides[k]);
    want[k] = run(s, &in[k]);
  }
  ck_assert_int_eq(het_session_save_plan(s, plan_path), HET_OK);
  char *wrote = explain(s);
  ck_assert_msg(strstr(wrote, "made before any run") &&
                    strstr(wrote, "cpu->emu"),
                "%s", wrote);
  in[2] = image(sides[2]);
  want[2] = run(s, &in[2]); /* after saving: the plan holds two regimes */
  for (int mode = 0; mode < 2; mode++) {
    const char *lkv[] = {mode ? "plan_load=eager" : "plan_load=background",
                         NULL};
    het_session *p = open_with(plan_path, lkv);
    for (int k = 0; k < 3; k++) {
      outputs y = run(p, &in[k]);
      if (k < 2)
        assert_same(&y, &want[k], "a stored regime vs the writer");
      else
        case_assert_close(y.t[0], want[2].t[0], 1e-4, "the nearest regime");
      outputs_free(&y);
    }
    char *text = explain(p);
    ck_assert_msg(strstr(text, "stored in the plan: a run's shapes") &&
                      strstr(text, "regime 1: x=1x3x128x128, stored in the "
                                   "plan") &&
                      strstr(text, "cpu->emu") &&
                      strstr(text, "x=1x3x300x300: regime 1 (kept: the "
                                   "plan's regime of the nearest shapes)") &&
                      !strstr(text, "new regime"),
                  "%s", text);
    het_string_destroy(text);
    het_session_destroy(p);
  }
  char *info = NULL;
  ck_assert_int_eq(het_plan_get_info(env, plan_path, &info), HET_OK);
  ck_assert_msg(strstr(info, "shape regime 1: 1 graph, 6 nodes, planned for "
                             "x=1x3x128x128"),
                "%s", info);
  het_string_destroy(info);
  char *(*const edits[2])(const char *, size_t, size_t *) = {
      edit_regime_number, edit_regime_shape};
  const char *words[2] = {"malformed regime line", "not NAME=DIMS"};
  for (int e = 0; e < 2; e++) {
    ck_assert_int_eq(het_session_save_plan(s, plan_path), HET_OK);
    rewrite_section(HET_PSEC_PARTITION, edits[e]);
    het_session *p = NULL;
    ck_assert_int_eq(het_session_create(env, plan_path, NULL, &p),
                     HET_ERR_INVALID_MODEL);
    ck_assert_msg(strstr(het_last_error(), words[e]), "%s", het_last_error());
  }
  het_string_destroy(wrote);
  for (int k = 0; k < 3; k++) {
    outputs_free(&want[k]);
    inputs_free(&in[k]);
  }
  het_session_destroy(s);
}
END_TEST

/* One output's bytes from a session on path (deterministic, threads
 * "threads=N") for the fixed pattern input, open dims 64; NULL on any
 * failure (no Check assertions: the other process of test_deterministic
 * runs this outside a test).  Caller frees. */
static void *plain_output_bytes(const char *path, const char *threads,
                                size_t *n) {
  het_session_options *o = NULL;
  het_session *s = NULL;
  het_tensor *x = NULL, *y = NULL;
  void *b = NULL;
  het_value_desc d;
  if (het_session_options_create(&o) != HET_OK ||
      het_session_options_set(o, "deterministic", "true") != HET_OK ||
      het_session_options_set(o, "threads", strchr(threads, '=') + 1) != HET_OK ||
      het_session_create(env, path, o, &s) != HET_OK ||
      het_session_get_input(s, 0, &d) != HET_OK)
    goto done;
  int64_t dims[HET_MAX_RANK];
  for (int k = 0; k < d.rank; k++)
    dims[k] = d.dims[k] >= 0 ? d.dims[k] : k ? 64 : 1;
  if (het_tensor_create(HET_DTYPE_FLOAT32, dims, d.rank, &x) != HET_OK)
    goto done;
  float *p = het_tensor_get_data(x);
  for (int64_t i = 0; i < het_tensor_get_count(x); i++)
    p[i] = (float)(1.5 * sin(0.37 * (double)i));
  const char *names[1] = {d.name};
  if (het_session_run(s, names, &x, 1, NULL, 1, &y) != HET_OK)
    goto done;
  *n = het_tensor_get_nbytes(y);
  if ((b = malloc(*n ? *n : 1)))
    memcpy(b, het_tensor_get_data(y), *n);
done:
  het_tensor_destroy(x);
  het_tensor_destroy(y);
  het_session_destroy(s);
  het_session_options_destroy(o);
  return b;
}

/* plain_output_bytes here, or in another process (this executable run
 * afresh with --output-bytes, which writes them to its stdout); caller
 * frees. */
static void *output_bytes(const char *path, const char *threads,
                          bool child, size_t *n) {
  if (!child) {
    void *b = plain_output_bytes(path, threads, n);
    ck_assert_msg(b, "%s, %s: %s", path, threads, het_last_error());
    return b;
  }
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  if (fork() == 0) { /* exec at once: the parent has threads */
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    execl("/proc/self/exe", "test_aot", "--output-bytes", path, threads,
          (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  ck_assert_int_eq(read(fds[0], n, sizeof *n), sizeof *n);
  void *b = malloc(*n);
  size_t got = 0;
  while (got < *n) {
    ssize_t r = read(fds[0], (char *)b + got, *n - got);
    ck_assert_int_gt(r, 0);
    got += (size_t)r;
  }
  close(fds[0]);
  return b;
}

/* deterministic=true: a model's sessions and a plan's sessions give the
 * same bytes for threads 1-4 and in another process; the plan's are
 * those of the session that wrote it (made with timing, auto). */
START_TEST(test_deterministic) {
  static const char *const models[] = {DATA "/emu/resnet_small.onnx",
                                       DATA "/emu/regime_convs.onnx"};
  static const char *const threads[] = {"threads=1", "threads=2",
                                        "threads=3", "threads=4"};
  for (int m = 0; m < 2; m++) {
    size_t n0, n;
    void *want = output_bytes(models[m], threads[0], false, &n0);
    for (int t = 1; t < 5; t++) {
      void *got = output_bytes(models[m], threads[t % 4], t == 4, &n);
      ck_assert_msg(n == n0 && memcmp(got, want, n) == 0,
                    "%s, %s%s: outputs differ", models[m], threads[t % 4],
                    t == 4 ? " in a child process" : "");
      free(got);
    }
    free(want);
    static const char *const kv[] = {"providers=cpu", "cpu.conv_algo=auto",
                                     NULL};
    het_session *s = open_with(models[m], kv);
    inputs in;
    inputs_load(s, "/nonexistent", &in);
    outputs y = run(s, &in);
    ck_assert_int_eq(het_session_save_plan(s, plan_path), HET_OK);
    for (int t = 0; t < 5; t++) {
      void *got = output_bytes(plan_path, threads[t % 4], t == 4, &n);
      ck_assert_msg(n == het_tensor_get_nbytes(y.t[0]) &&
                        memcmp(got, het_tensor_get_data(y.t[0]), n) == 0,
                    "plan of %s, %s%s: outputs differ", models[m],
                    threads[t % 4], t == 4 ? " in a child process" : "");
      free(got);
    }
    outputs_free(&y);
    inputs_free(&in);
    het_session_destroy(s);
  }
}
END_TEST

START_TEST(test_not_a_plan) {
  FILE *f = fopen(plan_path, "wb");
  fputs("HETRTPLN but nothing else", f);
  fclose(f);
  het_session *p = NULL;
  ck_assert_int_eq(het_session_create(env, plan_path, NULL, &p),
                   HET_ERR_INVALID_MODEL);
  ck_assert_msg(strstr(het_last_error(), plan_path), "%s", het_last_error());
  char *info = NULL;
  ck_assert_int_ne(het_plan_get_info(env, plan_path, &info), HET_OK);
  ck_assert_int_eq(het_plan_get_info(env, NULL, &info), HET_ERR_INVALID_ARGUMENT);
}
END_TEST

static Suite *aot_suite(void) {
  Suite *s = suite_create("aot");
  TCase *core = tcase_create("core");
  tcase_add_checked_fixture(core, setup, teardown);
  tcase_set_timeout(core, 300);
  tcase_add_loop_test(core, test_round_trip, 0,
                      (int)(sizeof cases / sizeof *cases));
  tcase_add_test(core, test_fingerprint_grades);
  tcase_add_test(core, test_deterministic);
  tcase_add_test(core, test_regimes);
  suite_add_tcase(s, core);
  TCase *errors = tcase_create("errors");
  tcase_add_checked_fixture(errors, setup, teardown);
  tcase_set_timeout(errors, 600);
  tcase_add_test(errors, test_damaged_files);
  tcase_add_test(errors, test_semantic_damage);
  tcase_add_test(errors, test_not_a_plan);
  suite_add_tcase(s, errors);
  return s;
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--output-bytes") == 0) {
    /* the other process of test_deterministic */
    if (het_env_create(&env) != HET_OK)
      return 1;
    size_t n = 0;
    void *b = plain_output_bytes(argv[2], argv[3], &n);
    bool ok = b && fwrite(&n, sizeof n, 1, stdout) == 1 &&
              fwrite(b, 1, n, stdout) == n && fflush(stdout) == 0;
    free(b);
    het_env_destroy(env);
    return ok ? 0 : 1;
  }
  return case_run_suite(aot_suite());
}
