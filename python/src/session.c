/* session.c — the Session type: one het_session and a reference to its Env
 * (destroyed after it).  Creation and runs release the GIL, so several
 * Python threads run one session at once (het_session_run is
 * thread-safe); a run holds references to its input arrays until it
 * returns, and every output is a numpy array owning its het_tensor.
 */
#include "hetpy.h"

#include <string.h>

typedef struct hetpy_session {
  PyObject_HEAD
  het_session *session;
  PyObject *env; /* hetpy_env, strong */
} hetpy_session;

/* ---- creation ---------------------------------------------------------------- */

/* Creates the session of model: a str path, or a bytes-like serialized
 * ModelProto.  Runs without the GIL. */
static het_status hetpy_session_open(het_env *env, PyObject *model,
                                     const het_session_options *opt,
                                     het_session **out, char **message)
{
  het_status st;
  *message = NULL;
  if (PyUnicode_Check(model)) {
    PyObject *path = NULL;
    if (!PyUnicode_FSConverter(model, &path))
      return HET_ERR_INTERNAL; /* exception set, message NULL */
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    st = het_session_create(env, p, opt, out);
    if (st != HET_OK)
      *message = hetpy_error_copy();
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return st;
  }
  Py_buffer view;
  if (PyObject_GetBuffer(model, &view, PyBUF_SIMPLE) < 0)
    return HET_ERR_INTERNAL;
  Py_BEGIN_ALLOW_THREADS
  st = het_session_create_from_memory(env, view.buf, (size_t)view.len, opt, out);
  if (st != HET_OK)
    *message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&view);
  return st;
}

PyObject *hetpy_session_create(PyObject *module, PyObject *args)
{
  (void)module;
  PyObject *env, *model, *providers, *threads, *options;
  if (!PyArg_ParseTuple(args, "O!OOOO", &hetpy_env_type, &env, &model, &providers,
                        &threads, &options))
    return NULL;
  if (!PyUnicode_Check(model) && !PyObject_CheckBuffer(model)) {
    PyErr_SetString(PyExc_TypeError, "model must be a path (str) or bytes");
    return NULL;
  }
  het_session_options *opt = NULL;
  if (hetpy_options_build(providers, threads, options, &opt) < 0)
    return NULL;
  hetpy_session *self = PyObject_New(hetpy_session, &hetpy_session_type);
  if (!self) {
    het_session_options_destroy(opt);
    return NULL;
  }
  self->session = NULL;
  self->env = Py_NewRef(env);
  char *message;
  het_status st = hetpy_session_open(((hetpy_env *)env)->env, model, opt,
                                     &self->session, &message);
  het_session_options_destroy(opt);
  if (st != HET_OK) {
    if (!PyErr_Occurred())
      hetpy_raise_copied(st, message);
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void session_dealloc(hetpy_session *self)
{
  het_session_destroy(self->session);
  Py_XDECREF(self->env);
  PyObject_Free(self);
}

/* ---- run --------------------------------------------------------------------- */

/* Output names from None (all, graph order: *names NULL) or a sequence of
 * str.  *seq holds the strings. */
static int hetpy_output_names(const het_session *s, PyObject *arg, PyObject **seq,
                              const char ***names, size_t *count)
{
  *seq = NULL;
  *names = NULL;
  if (arg == Py_None) {
    *count = het_session_get_output_count(s);
    return 0;
  }
  if (PyUnicode_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "output names must be a list of str or None");
    return -1;
  }
  /* A tuple of its own: the strings must outlive the run, which another
   * thread could otherwise shorten by changing the caller's list. */
  *seq = PySequence_Tuple(arg);
  if (!*seq)
    return -1;
  size_t n = (size_t)PyTuple_GET_SIZE(*seq);
  *names = PyMem_Calloc(n ? n : 1, sizeof **names);
  if (!*names)
    goto fail_nomem;
  for (size_t i = 0; i < n; i++) {
    PyObject *item = PyTuple_GET_ITEM(*seq, (Py_ssize_t)i);
    if (!PyUnicode_Check(item)) {
      PyErr_SetString(PyExc_TypeError, "output names must be str");
      goto fail;
    }
    if (!((*names)[i] = PyUnicode_AsUTF8(item)))
      goto fail;
  }
  *count = n;
  return 0;
fail_nomem:
  PyErr_NoMemory();
fail:
  PyMem_Free(*names);
  *names = NULL;
  Py_CLEAR(*seq);
  return -1;
}

/* A list of arrays owning outputs[0..n) (taken in every case). */
static PyObject *hetpy_output_list(het_tensor **outputs, size_t n)
{
  PyObject *list = PyList_New((Py_ssize_t)n);
  size_t i = 0;
  if (!list)
    goto fail;
  for (; i < n; i++) {
    PyObject *arr = hetpy_array_from_tensor(outputs[i]); /* takes it */
    outputs[i] = NULL;
    if (!arr)
      goto fail;
    PyList_SET_ITEM(list, (Py_ssize_t)i, arr);
  }
  return list;
fail:
  for (size_t j = list ? i + 1 : 0; j < n; j++)
    het_tensor_destroy(outputs[j]);
  Py_XDECREF(list);
  return NULL;
}

static PyObject *session_run(hetpy_session *self, PyObject *args)
{
  PyObject *names_arg, *feeds_arg, *names_seq = NULL, *result = NULL;
  const char **out_names = NULL;
  het_tensor **outputs = NULL;
  size_t n_out = 0;
  hetpy_feeds feeds;
  if (!PyArg_ParseTuple(args, "OO", &names_arg, &feeds_arg))
    return NULL;
  if (hetpy_feeds_init(&feeds, feeds_arg, self->session) < 0)
    return NULL;
  if (hetpy_output_names(self->session, names_arg, &names_seq, &out_names, &n_out) < 0)
    goto done;
  outputs = PyMem_Calloc(n_out ? n_out : 1, sizeof *outputs);
  if (!outputs) {
    PyErr_NoMemory();
    goto done;
  }
  het_status st;
  char *message = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = het_session_run(self->session, feeds.names, feeds.tensors, feeds.count,
                       out_names, n_out, outputs);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  if (st != HET_OK) {
    hetpy_raise_copied(st, message);
    goto done;
  }
  result = hetpy_output_list(outputs, n_out);
done:
  PyMem_Free(outputs);
  PyMem_Free(out_names);
  Py_XDECREF(names_seq);
  hetpy_feeds_deinit(&feeds);
  return result;
}

/* ---- descriptions ------------------------------------------------------------ */

/* (name, het_dtype, shape): shape None when the rank is unknown, else a
 * list of ints, symbolic names (str) and None for unnamed unknown dims. */
static PyObject *hetpy_value_tuple(const het_value_desc *d)
{
  PyObject *shape;
  if (d->rank < 0) {
    shape = Py_NewRef(Py_None);
  } else {
    shape = PyList_New(d->rank);
    if (!shape)
      return NULL;
    for (int i = 0; i < d->rank; i++) {
      PyObject *dim;
      if (d->dims[i] >= 0)
        dim = PyLong_FromLongLong(d->dims[i]);
      else if (d->dim_names[i])
        dim = PyUnicode_FromString(d->dim_names[i]);
      else
        dim = Py_NewRef(Py_None);
      if (!dim) {
        Py_DECREF(shape);
        return NULL;
      }
      PyList_SET_ITEM(shape, i, dim);
    }
  }
  return Py_BuildValue("(siN)", d->name, (int)d->dtype, shape);
}

static PyObject *hetpy_values(const het_session *s, size_t n,
                              het_status (*get)(const het_session *, size_t,
                                                het_value_desc *))
{
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    het_value_desc d;
    het_status st = get(s, i, &d);
    PyObject *t = st == HET_OK ? hetpy_value_tuple(&d) : hetpy_raise_last(st);
    if (!t) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, t);
  }
  return list;
}

static PyObject *session_inputs(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  return hetpy_values(self->session, het_session_get_input_count(self->session),
                      het_session_get_input);
}

static PyObject *session_outputs(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  return hetpy_values(self->session, het_session_get_output_count(self->session),
                      het_session_get_output);
}

static PyObject *session_placement(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_session_get_node_count(self->session);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    het_node_placement p;
    het_status st = het_session_get_placement(self->session, i, &p);
    PyObject *d = st != HET_OK ? hetpy_raise_last(st)
        : Py_BuildValue("{s:s,s:s,s:s,s:s}", "name", p.name, "op_type", p.op_type,
                        "provider", p.provider, "reason", p.reason ? p.reason : "");
    if (!d) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, d);
  }
  return list;
}

static PyObject *session_warnings(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  size_t n = het_session_get_warning_count(self->session);
  PyObject *list = PyList_New((Py_ssize_t)n);
  if (!list)
    return NULL;
  for (size_t i = 0; i < n; i++) {
    const char *w = het_session_get_warning(self->session, i);
    PyObject *s = PyUnicode_FromString(w ? w : "");
    if (!s) {
      Py_DECREF(list);
      return NULL;
    }
    PyList_SET_ITEM(list, (Py_ssize_t)i, s);
  }
  return list;
}

/* ---- reports and profiling --------------------------------------------------- */

/* A str from a caller-owned hetrt string (destroyed). */
static PyObject *hetpy_take_string(char *s)
{
  PyObject *r = PyUnicode_FromString(s);
  het_string_destroy(s);
  return r;
}

static PyObject *session_explain(hetpy_session *self, PyObject *args)
{
  const char *format = "text";
  char *out = NULL;
  if (!PyArg_ParseTuple(args, "|s", &format))
    return NULL;
  het_status st = het_session_explain(self->session, format, &out);
  if (st != HET_OK)
    return hetpy_raise_last(st);
  return hetpy_take_string(out);
}

static PyObject *session_profile(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  char *out = NULL;
  het_status st = het_session_get_profile_summary(self->session, &out);
  if (st != HET_OK)
    return hetpy_raise_last(st);
  return hetpy_take_string(out);
}

/* save_trace / save_node_times / save_plan: (session, path) calls made
 * without the GIL. */
static PyObject *hetpy_session_save(hetpy_session *self, PyObject *args,
                                    het_status (*save)(het_session *, const char *))
{
  PyObject *path = NULL;
  if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path))
    return NULL;
  het_status st;
  char *message = NULL;
  const char *p = PyBytes_AS_STRING(path);
  Py_BEGIN_ALLOW_THREADS
  st = save(self->session, p);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (st != HET_OK)
    return hetpy_raise_copied(st, message);
  Py_RETURN_NONE;
}

static PyObject *session_save_trace(hetpy_session *self, PyObject *args)
{
  return hetpy_session_save(self, args, het_session_save_trace);
}

static PyObject *session_save_node_times(hetpy_session *self, PyObject *args)
{
  return hetpy_session_save(self, args, het_session_save_node_times);
}

static PyObject *session_save_plan(hetpy_session *self, PyObject *args)
{
  return hetpy_session_save(self, args, het_session_save_plan);
}

static PyObject *session_plan_shapes(hetpy_session *self, PyObject *args)
{
  const char *shapes = NULL;
  if (!PyArg_ParseTuple(args, "s", &shapes))
    return NULL;
  int regime = 0;
  het_status st;
  char *message = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = het_session_plan_shapes(self->session, shapes, &regime);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  if (st != HET_OK)
    return hetpy_raise_copied(st, message);
  return PyLong_FromLong(regime);
}

static PyObject *session_clear_trace(hetpy_session *self, PyObject *unused)
{
  (void)unused;
  het_session_clear_trace(self->session);
  Py_RETURN_NONE;
}

static PyObject *session_planned_peak(hetpy_session *self, PyObject *args)
{
  const char *provider = "host";
  if (!PyArg_ParseTuple(args, "|s", &provider))
    return NULL;
  size_t bytes = 0;
  het_status st;
  char *message = NULL;
  Py_BEGIN_ALLOW_THREADS
  st = het_session_get_planned_peak(self->session, provider, &bytes);
  if (st != HET_OK)
    message = hetpy_error_copy();
  Py_END_ALLOW_THREADS
  if (st != HET_OK)
    return hetpy_raise_copied(st, message);
  return PyLong_FromSize_t(bytes);
}

static PyMethodDef session_methods[] = {
  {"run", (PyCFunction)session_run, METH_VARARGS,
   "run(output_names or None, feeds) -> list of arrays (GIL released)"},
  {"inputs", (PyCFunction)session_inputs, METH_NOARGS,
   "inputs() -> [(name, het_dtype, shape)]"},
  {"outputs", (PyCFunction)session_outputs, METH_NOARGS,
   "outputs() -> [(name, het_dtype, shape)]"},
  {"placement", (PyCFunction)session_placement, METH_NOARGS,
   "placement() -> [{name, op_type, provider, reason}]"},
  {"warnings", (PyCFunction)session_warnings, METH_NOARGS,
   "warnings() -> [str]"},
  {"explain", (PyCFunction)session_explain, METH_VARARGS,
   "explain(format='text') -> str (text, json, dot or html)"},
  {"profile", (PyCFunction)session_profile, METH_NOARGS,
   "profile() -> str (needs trace=true)"},
  {"save_trace", (PyCFunction)session_save_trace, METH_VARARGS,
   "save_trace(path) (needs trace=true)"},
  {"save_node_times", (PyCFunction)session_save_node_times, METH_VARARGS,
   "save_node_times(path) (needs measure=true)"},
  {"save_plan", (PyCFunction)session_save_plan, METH_VARARGS,
   "save_plan(path): an ahead-of-time plan file (docs/plan-format.md)"},
  {"plan_shapes", (PyCFunction)session_plan_shapes, METH_VARARGS,
   "plan_shapes('x=1x3x640x640,...') -> the shape regime they use"},
  {"clear_trace", (PyCFunction)session_clear_trace, METH_NOARGS,
   "clear_trace()"},
  {"planned_peak", (PyCFunction)session_planned_peak, METH_VARARGS,
   "planned_peak(provider='host') -> bytes"},
  {NULL, NULL, 0, NULL},
};

PyTypeObject hetpy_session_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "hetrt._hetrt.Session",
  .tp_basicsize = sizeof(hetpy_session),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "A loaded, partitioned model (het_session); made by session_create.",
  .tp_dealloc = (destructor)session_dealloc,
  .tp_methods = session_methods,
};
