/* quantizer.c — the Quantizer type over het_quantizer (hetrt/quantize.h):
 * options, calibration and evaluation inputs, calibrate, save, evaluate and
 * what was decided.  It owns the session options its calibration sessions
 * use and holds its Env, both outliving the het_quantizer as the C API
 * requires.  calibrate and evaluate run without the GIL; a progress
 * callable is called with it (the first exception it raises is re-raised
 * when the call returns).
 */
#include "hetpy.h"

typedef struct hetpy_quantizer {
  PyObject_HEAD
  het_quantizer *q;
  het_session_options *options; /* borrowed by q */
  PyObject *env;                /* hetpy_env, strong; borrowed by q */
  PyObject *progress;           /* callable or NULL */
  PyObject *progress_error;     /* first exception the callable raised */
} hetpy_quantizer;

PyObject *hetpy_quantizer_create(PyObject *module, PyObject *args)
{
  (void)module;
  PyObject *env, *path, *providers, *threads, *options;
  if (!PyArg_ParseTuple(args, "O!O&OOO", &hetpy_env_type, &env, PyUnicode_FSConverter,
                        &path, &providers, &threads, &options))
    return NULL;
  hetpy_quantizer *self = PyObject_New(hetpy_quantizer, &hetpy_quantizer_type);
  if (!self) {
    Py_DECREF(path);
    return NULL;
  }
  self->q = NULL;
  self->options = NULL;
  self->env = Py_NewRef(env);
  self->progress = NULL;
  self->progress_error = NULL;
  if (hetpy_options_build(providers, threads, options, &self->options) < 0)
    goto fail;
  het_status st = het_quantizer_create(((hetpy_env *)env)->env, PyBytes_AS_STRING(path),
                                       self->options, &self->q);
  if (st != HET_OK) {
    hetpy_raise_last(st);
    goto fail;
  }
  Py_DECREF(path);
  return (PyObject *)self;
fail:
  Py_DECREF(path);
  Py_DECREF(self);
  return NULL;
}

static void quantizer_dealloc(hetpy_quantizer *self)
{
  het_quantizer_destroy(self->q);
  het_session_options_destroy(self->options);
  Py_XDECREF(self->env);
  Py_XDECREF(self->progress);
  Py_XDECREF(self->progress_error);
  PyObject_Free(self);
}

static PyObject *quantizer_set(hetpy_quantizer *self, PyObject *args)
{
  const char *key, *value;
  if (!PyArg_ParseTuple(args, "ss", &key, &value))
    return NULL;
  het_status st = het_quantizer_set(self->q, key, value);
  if (st != HET_OK)
    return hetpy_raise_last(st);
  Py_RETURN_NONE;
}

static PyObject *quantizer_add_input(hetpy_quantizer *self, PyObject *args)
{
  int evaluation;
  PyObject *mapping;
  if (!PyArg_ParseTuple(args, "pO", &evaluation, &mapping))
    return NULL;
  hetpy_feeds feeds;
  if (hetpy_feeds_init(&feeds, mapping, NULL) < 0)
    return NULL;
  het_status st = het_quantizer_add_input(self->q, evaluation != 0, feeds.names,
                                          feeds.tensors, feeds.count);
  PyObject *r = st == HET_OK ? Py_NewRef(Py_None) : hetpy_raise_last(st);
  hetpy_feeds_deinit(&feeds); /* the quantizer copied the tensors */
  return r;
}

/* ---- progress ---------------------------------------------------------------- */

static void hetpy_quantizer_progress(void *ctx, const char *phase, size_t done,
                                     size_t total)
{
  hetpy_quantizer *self = ctx;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject *fn = self->progress_error ? NULL : self->progress;
  if (fn) {
    Py_INCREF(fn); /* set_progress on another thread may drop it meanwhile */
    PyObject *r = PyObject_CallFunction(fn, "snn", phase, (Py_ssize_t)done,
                                        (Py_ssize_t)total);
    Py_DECREF(fn);
    if (r) {
      Py_DECREF(r);
    } else {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyErr_NormalizeException(&type, &value, &tb);
      if (tb && value)
        PyException_SetTraceback(value, tb);
      Py_XDECREF(type);
      Py_XDECREF(tb);
      self->progress_error = value; /* NULL only when fetch found none */
    }
  }
  PyGILState_Release(gil);
}

static PyObject *quantizer_set_progress(hetpy_quantizer *self, PyObject *fn)
{
  if (fn != Py_None && !PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
    return NULL;
  }
  Py_CLEAR(self->progress);
  if (fn != Py_None) {
    self->progress = Py_NewRef(fn);
    het_quantizer_set_progress(self->q, hetpy_quantizer_progress, self);
  } else {
    het_quantizer_set_progress(self->q, NULL, NULL);
  }
  Py_RETURN_NONE;
}

/* Re-raises what the progress callable raised during the last call. */
static int hetpy_progress_reraise(hetpy_quantizer *self)
{
  if (!self->progress_error)
    return 0;
  PyObject *value = self->progress_error;
  self->progress_error = NULL;
  PyErr_SetObject((PyObject *)Py_TYPE(value), value);
  Py_DECREF(value);
  return -1;
}

/* ---- calibrate, save, evaluate ----------------------------------------------- */

static PyObject *quantizer_calibrate(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  het_status st;
  char *message = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = het_quantizer_calibrate(self->q);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  if (st != HET_OK) {
    if (self->progress_error)
      Py_CLEAR(self->progress_error);
    return hetpy_raise_copied(st, message);
  }
  if (hetpy_progress_reraise(self) < 0)
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *quantizer_save(hetpy_quantizer *self, PyObject *args)
{
  PyObject *path;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
    return NULL;
  het_status st = het_quantizer_save(self->q, PyBytes_AS_STRING(path));
  Py_DECREF(path);
  if (st != HET_OK)
    return hetpy_raise_last(st);
  Py_RETURN_NONE;
}

static PyObject *quantizer_evaluate(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  het_status st;
  char *message = NULL, *report = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = het_quantizer_evaluate(self->q, &report);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  if (st != HET_OK) {
    Py_CLEAR(self->progress_error);
    return hetpy_raise_copied(st, message);
  }
  PyObject *r = PyUnicode_FromString(report ? report : "");
  het_string_destroy(report);
  if (!r || hetpy_progress_reraise(self) < 0) {
    Py_XDECREF(r);
    return NULL;
  }
  return r;
}

/* ---- what was decided -------------------------------------------------------- */

static PyObject *quantizer_node_count(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  return PyLong_FromSize_t(het_quantizer_get_node_count(self->q));
}

/* [(name, lo, hi, scale, zero_point)] */
static PyObject *quantizer_tensors(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_quantizer_get_tensor_count(self->q);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const char *name;
    float lo, hi, scale;
    int32_t zp;
    het_status st = het_quantizer_get_tensor(self->q, i, &name, &lo, &hi, &scale, &zp);
    PyObject *t = st != HET_OK ? hetpy_raise_last(st)
        : Py_BuildValue("(sdddi)", name, (double)lo, (double)hi, (double)scale, (int)zp);
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

/* [SQNR dB] by tensor index, after evaluate. */
static PyObject *quantizer_sqnr(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_quantizer_get_tensor_count(self->q);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    double db;
    het_status st = het_quantizer_get_sqnr(self->q, i, &db);
    PyObject *v = st != HET_OK ? hetpy_raise_last(st) : PyFloat_FromDouble(db);
    if (!v) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, v);
  }
  return list;
}

/* [{name, max_abs_error, ...}] by output, after evaluate. */
static PyObject *quantizer_accuracy(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_quantizer_get_output_count(self->q);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    het_quant_accuracy a;
    het_status st = het_quantizer_get_accuracy(self->q, i, &a);
    PyObject *d = st != HET_OK ? hetpy_raise_last(st)
        : Py_BuildValue("{s:s,s:d,s:d,s:d,s:d,s:n,s:n}", "name", a.name,
                        "max_abs_error", a.max_abs_error, "max_rel_error", a.max_rel_error,
                        "cosine", a.cosine, "min_cosine", a.min_cosine,
                        "top1_total", (Py_ssize_t)a.top1_total,
                        "top1_agree", (Py_ssize_t)a.top1_agree);
    if (!d) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  return list;
}

static PyObject *quantizer_warnings(hetpy_quantizer *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_quantizer_get_warning_count(self->q);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const char *w = het_quantizer_get_warning(self->q, i);
    PyObject *s = PyUnicode_FromString(w ? w : "");
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  return list;
}

static PyMethodDef quantizer_methods[] = {
  {"set", (PyCFunction)quantizer_set, METH_VARARGS, "set(key, value)"},
  {"add_input", (PyCFunction)quantizer_add_input, METH_VARARGS,
   "add_input(evaluation, feeds): one set of model inputs (copied)"},
  {"set_progress", (PyCFunction)quantizer_set_progress, METH_O,
   "set_progress(fn(phase, done, total) or None)"},
  {"calibrate", (PyCFunction)quantizer_calibrate, METH_NOARGS, "calibrate()"},
  {"save", (PyCFunction)quantizer_save, METH_VARARGS, "save(path)"},
  {"evaluate", (PyCFunction)quantizer_evaluate, METH_NOARGS, "evaluate() -> report text"},
  {"node_count", (PyCFunction)quantizer_node_count, METH_NOARGS, "node_count() -> int"},
  {"tensors", (PyCFunction)quantizer_tensors, METH_NOARGS,
   "tensors() -> [(name, lo, hi, scale, zero_point)]"},
  {"sqnr", (PyCFunction)quantizer_sqnr, METH_NOARGS, "sqnr() -> [dB] (after evaluate)"},
  {"accuracy", (PyCFunction)quantizer_accuracy, METH_NOARGS,
   "accuracy() -> [dict] per output (after evaluate)"},
  {"warnings", (PyCFunction)quantizer_warnings, METH_NOARGS, "warnings() -> [str]"},
  {NULL, NULL, 0, NULL},
};

PyTypeObject hetpy_quantizer_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "hetrt._hetrt.Quantizer",
  .tp_basicsize = sizeof(hetpy_quantizer),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Static post-training quantization (het_quantizer); made by quantizer_create.",
  .tp_dealloc = (destructor)quantizer_dealloc,
  .tp_methods = quantizer_methods,
};
