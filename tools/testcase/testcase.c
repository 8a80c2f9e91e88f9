/* testcase.c — runs one ONNX backend-test case directory (model.onnx +
 * test_data_set_N/{input,output}_K.pb) through the public API and compares
 * the outputs with onnx's tolerances.  A case is SKIPped only when it
 * cannot be compared by design (random ops, string/complex data); every
 * other problem (load, unsupported op, run error, mismatch) is a FAIL.
 */
#include "testcase/testcase.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/tensor.h"
#include "onnx.pb-c.h"
#include "onnx/loader.h"

#define TC_MAX_FILE ((size_t)1 << 31)
#define TC_MAX_IO 64
#define TC_MAX_SETS 64

static void tc_msg(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void tc_msg(char *msg, size_t cap, const char *fmt, ...) {
  if (!msg || cap == 0)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, cap, fmt, ap);
  va_end(ap);
}

static bool tc_file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* ---- pass 1: model scan (random ops, data types that cannot compare) ---- */

static const char *const tc_random_ops[] = {
    "Bernoulli",    "RandomUniform",    "RandomUniformLike",
    "RandomNormal", "RandomNormalLike", "Multinomial",
};

static const char *tc_graph_random_op(const Onnx__GraphProto *g, int depth) {
  if (!g || depth > 16)
    return NULL;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; n->op_type && k < sizeof tc_random_ops / sizeof *tc_random_ops; k++)
      if (strcmp(n->op_type, tc_random_ops[k]) == 0)
        return tc_random_ops[k];
    for (size_t a = 0; a < n->n_attribute; a++) {
      const Onnx__AttributeProto *at = n->attribute[a];
      const char *r = tc_graph_random_op(at->g, depth + 1);
      for (size_t s = 0; !r && s < at->n_graphs; s++)
        r = tc_graph_random_op(at->graphs[s], depth + 1);
      if (r)
        return r;
    }
  }
  return NULL;
}

static bool tc_dtype_uncomparable(int dt) {
  return dt == HET_DTYPE_STRING || dt == HET_DTYPE_COMPLEX64 ||
         dt == HET_DTYPE_COMPLEX128;
}

/* Element type of a (possibly nested sequence/optional) type; 0 if none. */
static int tc_type_elem(const Onnx__TypeProto *t, int depth) {
  if (!t || depth > 8)
    return 0;
  switch (t->value_case) {
  case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
    return t->tensor_type ? t->tensor_type->elem_type : 0;
  case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
    return t->sequence_type ? tc_type_elem(t->sequence_type->elem_type, depth + 1) : 0;
  case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
    return t->optional_type ? tc_type_elem(t->optional_type->elem_type, depth + 1) : 0;
  default:
    return 0;
  }
}

static bool tc_is_plain_tensor(const Onnx__TypeProto *t) {
  return !t || t->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
         t->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET;
}

/* Checks graph inputs/outputs: string/complex → SKIP; sequence, optional
 * or map values → FAIL (the runtime's API carries tensors only). */
static bool tc_scan_values(Onnx__ValueInfoProto **v, size_t n, const char *kind,
                           het_testcase_verdict *verdict, char *msg, size_t cap) {
  for (size_t i = 0; i < n; i++) {
    const char *name = v[i]->name ? v[i]->name : "";
    int et = tc_type_elem(v[i]->type, 0);
    if (tc_dtype_uncomparable(et)) {
      *verdict = HET_TESTCASE_SKIP;
      tc_msg(msg, cap, "%s '%s' has element type %s", kind, name,
             het_dtype_str((het_dtype)et));
      return false;
    }
    if (!tc_is_plain_tensor(v[i]->type)) {
      *verdict = HET_TESTCASE_FAIL;
      tc_msg(msg, cap, "%s '%s' is not a tensor (sequence/optional/map values are not supported)",
             kind, name);
      return false;
    }
  }
  return true;
}

/* Returns false (with verdict and msg set) when the case must not run. */
static bool tc_scan_model(const uint8_t *data, size_t size,
                          het_testcase_verdict *verdict, char *msg, size_t cap) {
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
  if (!m || !m->graph) {
    if (m)
      onnx__model_proto__free_unpacked(m, NULL);
    *verdict = HET_TESTCASE_FAIL;
    tc_msg(msg, cap, "model.onnx: not a valid ModelProto");
    return false;
  }
  bool ok = true;
  const char *rnd = tc_graph_random_op(m->graph, 0);
  if (rnd) {
    *verdict = HET_TESTCASE_SKIP;
    tc_msg(msg, cap, "uses random op %s", rnd);
    ok = false;
  }
  if (ok)
    ok = tc_scan_values(m->graph->input, m->graph->n_input, "input", verdict, msg, cap);
  if (ok)
    ok = tc_scan_values(m->graph->output, m->graph->n_output, "output", verdict, msg, cap);
  onnx__model_proto__free_unpacked(m, NULL);
  return ok;
}

/* ---- pass 2: test data ---- */

typedef struct tc_tensors {
  size_t n;
  het_tensor *t[TC_MAX_IO];
  char *name[TC_MAX_IO];
} tc_tensors;

static void tc_tensors_clear(tc_tensors *ts) {
  for (size_t i = 0; i < ts->n; i++) {
    het_tensor_destroy(ts->t[i]);
    free(ts->name[i]);
  }
  ts->n = 0;
}

/* Loads prefix_K.pb for K = 0.. from set.  Returns false with verdict/msg
 * on error or uncomparable data. */
static bool tc_load_pbs(const char *set, const char *prefix, tc_tensors *ts,
                        het_testcase_verdict *verdict, char *msg, size_t cap) {
  char path[4096];
  for (size_t k = 0; k < TC_MAX_IO; k++) {
    snprintf(path, sizeof path, "%s/%s_%zu.pb", set, prefix, k);
    if (!tc_file_exists(path))
      return true;
    uint8_t *buf = NULL;
    size_t len = 0;
    het_status st = het_read_file(path, TC_MAX_FILE, &buf, &len);
    Onnx__TensorProto *tp = st == HET_OK ? onnx__tensor_proto__unpack(NULL, len, buf) : NULL;
    int dt = tp ? tp->data_type : 0;
    if (tp)
      onnx__tensor_proto__free_unpacked(tp, NULL);
    if (st == HET_OK && tc_dtype_uncomparable(dt)) {
      free(buf);
      *verdict = HET_TESTCASE_SKIP;
      tc_msg(msg, cap, "%s_%zu.pb holds %s data", prefix, k, het_dtype_str((het_dtype)dt));
      return false;
    }
    if (st == HET_OK)
      st = het_onnx_tensor_decode(buf, len, path, &ts->t[k], &ts->name[k]);
    free(buf);
    if (st != HET_OK) {
      *verdict = HET_TESTCASE_FAIL;
      tc_msg(msg, cap, "%s_%zu.pb: %s", prefix, k, het_last_error());
      return false;
    }
    ts->n = k + 1;
  }
  return true;
}

/* Chooses the session input each file feeds: by the tensor's name when it
 * names a session input, otherwise by position. */
static bool tc_bind_inputs(het_session *s, const tc_tensors *in, const char **names,
                           het_testcase_verdict *verdict, char *msg, size_t cap) {
  size_t n_in = het_session_get_input_count(s);
  for (size_t k = 0; k < in->n; k++) {
    names[k] = NULL;
    for (size_t j = 0; j < n_in && in->name[k] && in->name[k][0]; j++) {
      het_value_desc d;
      if (het_session_get_input(s, j, &d) == HET_OK && strcmp(d.name, in->name[k]) == 0)
        names[k] = d.name;
    }
    het_value_desc d;
    if (!names[k] && k < n_in && het_session_get_input(s, k, &d) == HET_OK)
      names[k] = d.name;
    if (!names[k]) {
      *verdict = HET_TESTCASE_FAIL;
      tc_msg(msg, cap, "input_%zu.pb ('%s') matches no model input (model has %zu)", k,
             in->name[k] ? in->name[k] : "", n_in);
      return false;
    }
  }
  return true;
}

/* onnx 1.12 wrote bfloat16 test data as UINT16 TensorProtos: where the
 * model declares bfloat16, read those bits as bfloat16. */
static void tc_retag_bfloat16(het_session *s, const tc_tensors *in,
                              const char **in_names, const tc_tensors *exp) {
  size_t n_in = het_session_get_input_count(s);
  for (size_t k = 0; k < in->n; k++)
    for (size_t j = 0; j < n_in; j++) {
      het_value_desc d;
      if (het_session_get_input(s, j, &d) == HET_OK &&
          strcmp(d.name, in_names[k]) == 0 && d.dtype == HET_DTYPE_BFLOAT16 &&
          in->t[k]->dtype == HET_DTYPE_UINT16)
        in->t[k]->dtype = HET_DTYPE_BFLOAT16;
    }
  for (size_t k = 0; k < exp->n; k++) {
    het_value_desc d;
    if (het_session_get_output(s, k, &d) == HET_OK &&
        d.dtype == HET_DTYPE_BFLOAT16 && exp->t[k]->dtype == HET_DTYPE_UINT16)
      exp->t[k]->dtype = HET_DTYPE_BFLOAT16;
  }
}

static bool tc_run_set(het_session *s, const char *set, het_testcase_verdict *verdict,
                       char *msg, size_t cap) {
  tc_tensors in = {0}, exp = {0};
  het_tensor *got[TC_MAX_IO] = {0};
  const char *in_names[TC_MAX_IO];
  size_t n_out = het_session_get_output_count(s);
  bool ok = tc_load_pbs(set, "input", &in, verdict, msg, cap) &&
            tc_load_pbs(set, "output", &exp, verdict, msg, cap) &&
            tc_bind_inputs(s, &in, in_names, verdict, msg, cap);
  if (ok)
    tc_retag_bfloat16(s, &in, in_names, &exp);
  if (ok && (exp.n != n_out || n_out > TC_MAX_IO)) {
    *verdict = HET_TESTCASE_FAIL;
    tc_msg(msg, cap, "model has %zu outputs, test data has %zu", n_out, exp.n);
    ok = false;
  }
  if (ok && het_session_run(s, in_names, in.t, in.n, NULL, n_out, got) != HET_OK) {
    *verdict = HET_TESTCASE_FAIL;
    tc_msg(msg, cap, "run: %s", het_last_error());
    ok = false;
  }
  for (size_t k = 0; ok && k < n_out; k++) {
    char why[384];
    if (!het_testcase_compare(exp.t[k], got[k], 1e-3, 1e-7, why, sizeof why)) {
      het_value_desc d;
      const char *oname = het_session_get_output(s, k, &d) == HET_OK ? d.name : "?";
      *verdict = HET_TESTCASE_FAIL;
      tc_msg(msg, cap, "output %zu '%s': %s", k, oname, why);
      ok = false;
    }
  }
  for (size_t k = 0; k < TC_MAX_IO; k++)
    het_tensor_destroy(got[k]);
  tc_tensors_clear(&in);
  tc_tensors_clear(&exp);
  return ok;
}

static int tc_cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of dir's test_data_set_* folders.  Returns the count. */
static size_t tc_list_sets(const char *dir, char **sets, size_t max) {
  DIR *d = opendir(dir);
  size_t n = 0;
  if (!d)
    return 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < max)
    if (strncmp(e->d_name, "test_data_set_", 14) == 0)
      sets[n++] = strdup(e->d_name);
  closedir(d);
  size_t ok = 0;
  for (size_t i = 0; i < n; i++)
    if (sets[i])
      sets[ok++] = sets[i];
  qsort(sets, ok, sizeof *sets, tc_cmp_str);
  return ok;
}

static void tc_run_sets(het_session *s, const char *dir, het_testcase_verdict *verdict,
                        char *msg, size_t cap) {
  char *sets[TC_MAX_SETS];
  size_t n = tc_list_sets(dir, sets, TC_MAX_SETS);
  *verdict = HET_TESTCASE_PASS;
  tc_msg(msg, cap, "%s", "");
  if (n == 0) {
    *verdict = HET_TESTCASE_FAIL;
    tc_msg(msg, cap, "no test_data_set_* folder");
  }
  for (size_t i = 0; i < n; i++) {
    char path[4096], why[448];
    snprintf(path, sizeof path, "%s/%s", dir, sets[i]);
    if (*verdict == HET_TESTCASE_PASS && !tc_run_set(s, path, verdict, why, sizeof why))
      tc_msg(msg, cap, "%s: %s", sets[i], why);
    free(sets[i]);
  }
}

het_status het_testcase_run(het_env *env, const char *dir,
                            const het_session_options *options,
                            het_testcase_verdict *verdict, char *msg,
                            size_t cap) {
  if (!env || !dir || !verdict)
    return het_error(HET_ERR_INVALID_ARGUMENT, "het_testcase_run: env, dir and verdict are required");
  char model[4096];
  snprintf(model, sizeof model, "%s/model.onnx", dir);
  uint8_t *data = NULL;
  size_t size = 0;
  if (!tc_file_exists(model))
    return het_error(HET_ERR_NOT_FOUND, "%s: no model.onnx (not a backend-test case)", dir);
  HET_TRY(het_read_file(model, TC_MAX_FILE, &data, &size));
  het_testcase_verdict v = HET_TESTCASE_PASS;
  char why[512] = "";
  bool runnable = tc_scan_model(data, size, &v, why, sizeof why);
  free(data);
  het_session *s = NULL;
  if (runnable && het_session_create(env, model, options, &s) != HET_OK) {
    const char *e = het_last_error();
    size_t ml = strlen(model);
    if (strncmp(e, model, ml) == 0 && e[ml] == ':') /* the dir is in the test's name */
      e += ml + 1 + (e[ml + 1] == ' ');
    v = HET_TESTCASE_FAIL;
    snprintf(why, sizeof why, "load: %s", e);
    runnable = false;
  }
  if (runnable)
    tc_run_sets(s, dir, &v, why, sizeof why);
  het_session_destroy(s);
  *verdict = v;
  tc_msg(msg, cap, "%s", why);
  return HET_OK;
}

/* ---- comparison ---- */

static void tc_format_index(const het_tensor *t, int64_t flat, char *buf, size_t cap) {
  int64_t idx[HET_MAX_RANK];
  for (int d = t->rank - 1; d >= 0; d--) {
    idx[d] = t->dims[d] ? flat % t->dims[d] : 0;
    flat = t->dims[d] ? flat / t->dims[d] : 0;
  }
  size_t off = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < t->rank && off < cap; d++)
    off += (size_t)snprintf(buf + off, cap - off, "%s%lld", d ? "," : "", (long long)idx[d]);
  if (off < cap)
    snprintf(buf + off, cap - off, "]");
}

static void tc_format_shape(const het_tensor *t, char *buf, size_t cap) {
  size_t off = (size_t)snprintf(buf, cap, "[");
  for (int d = 0; d < t->rank && off < cap; d++)
    off += (size_t)snprintf(buf + off, cap - off, "%s%lld", d ? "," : "", (long long)t->dims[d]);
  if (off < cap)
    snprintf(buf + off, cap - off, "]");
}

static bool tc_float_close(double e, double g, double rtol, double atol) {
  if (isnan(e) || isnan(g))
    return isnan(e) && isnan(g);
  if (e == g)
    return true; /* also equal infinities */
  return fabs(g - e) <= atol + rtol * fabs(e);
}

bool het_testcase_compare(const het_tensor *expected, const het_tensor *got,
                          double rtol, double atol, char *msg, size_t cap) {
  char a[160], b[160];
  if (!expected || !got) {
    tc_msg(msg, cap, "missing tensor");
    return false;
  }
  if (expected->dtype != got->dtype) {
    tc_msg(msg, cap, "dtype %s, expected %s", het_dtype_str(got->dtype),
           het_dtype_str(expected->dtype));
    return false;
  }
  bool same_shape = expected->rank == got->rank;
  for (int d = 0; same_shape && d < got->rank; d++)
    same_shape = expected->dims[d] == got->dims[d];
  if (!same_shape) {
    tc_format_shape(got, a, sizeof a);
    tc_format_shape(expected, b, sizeof b);
    tc_msg(msg, cap, "shape %s, expected %s", a, b);
    return false;
  }
  het_dtype dt = got->dtype;
  if (tc_dtype_uncomparable(dt) || het_dtype_size(dt) == 0) {
    tc_msg(msg, cap, "cannot compare %s tensors", het_dtype_str(dt));
    return false;
  }
  int64_t n = het_tensor_count(got), bad = 0, first = -1;
  if (n > 0 && (!got->data || !expected->data)) {
    tc_msg(msg, cap, "tensor has no data");
    return false;
  }
  bool is_float = het_dtype_is_float(dt);
  double max_err = 0;
  for (int64_t i = 0; i < n; i++) {
    bool ok;
    if (is_float) {
      double e = het_dtype_load_f64(dt, expected->data, i);
      double g = het_dtype_load_f64(dt, got->data, i);
      ok = tc_float_close(e, g, rtol, atol);
      if (!ok && isfinite(e) && isfinite(g) && fabs(g - e) > max_err)
        max_err = fabs(g - e);
    } else {
      ok = het_dtype_load_i64(dt, expected->data, i) == het_dtype_load_i64(dt, got->data, i);
    }
    if (!ok && bad++ == 0)
      first = i;
  }
  if (bad == 0)
    return true;
  tc_format_index(got, first, a, sizeof a);
  if (is_float)
    tc_msg(msg, cap, "%lld of %lld elements differ; at %s got %.9g expected %.9g (max abs err %.3g)",
           (long long)bad, (long long)n, a, het_dtype_load_f64(dt, got->data, first),
           het_dtype_load_f64(dt, expected->data, first), max_err);
  else
    tc_msg(msg, cap, "%lld of %lld elements differ; at %s got %lld expected %lld", (long long)bad,
           (long long)n, a, (long long)het_dtype_load_i64(dt, got->data, first),
           (long long)het_dtype_load_i64(dt, expected->data, first));
  return false;
}
