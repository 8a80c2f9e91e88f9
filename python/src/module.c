/* module.c — the extension module hetrt._hetrt: its init, the exception
 * classes (hetrt.Error and one subclass per het_status, each with class
 * attributes `status` (het_status_str) and `code`), the Env type and the
 * module-level functions.  The classes are named hetrt.<Name> so that
 * pickled exceptions (a Dask worker's) unpickle to the same class.
 */
#define HETPY_IMPORT_ARRAY
#include "hetpy.h"

#include <string.h>

/* ---- errors ------------------------------------------------------------------ */

/* The Python name and docstring of each status's class. */
static const struct {
  het_status status;
  const char *name;
  const char *doc;
} hetpy_error_table[] = {
  {HET_ERR_INVALID_ARGUMENT, "InvalidArgument", "An argument or option is invalid."},
  {HET_ERR_OUT_OF_MEMORY, "OutOfMemory", "Memory ran out."},
  {HET_ERR_IO, "IOFailure", "A file could not be read or written."},
  {HET_ERR_INVALID_MODEL, "InvalidModel", "The model is malformed or invalid."},
  {HET_ERR_UNSUPPORTED, "Unsupported", "The model or request uses something hetrt lacks."},
  {HET_ERR_NOT_FOUND, "NotFound", "A named thing (input, output, provider) is unknown."},
  {HET_ERR_NOT_BUILT, "NotBuilt", "A provider is not built into this library."},
  {HET_ERR_NO_DEVICE, "NoDevice", "A provider found no device."},
  {HET_ERR_SHAPE, "ShapeMismatch", "A tensor has the wrong shape."},
  {HET_ERR_TYPE, "TypeMismatch", "A tensor has the wrong element type."},
  {HET_ERR_KERNEL, "KernelFailed", "A kernel failed while running."},
  {HET_ERR_CAPACITY, "CapacityExceeded", "A device's memory capacity is exceeded."},
  {HET_ERR_INTERNAL, "InternalError", "hetrt hit an internal error."},
};

static PyObject *hetpy_error_base;                      /* hetrt.Error */
static PyObject *hetpy_error_classes[HET_STATUS_COUNT_]; /* by status */

/* The builtin exception a status's class also derives from (besides
 * hetrt.Error), so that callers may catch e.g. ValueError; NULL for none. */
static PyObject *hetpy_builtin_base(het_status status)
{
  switch (status) {
  case HET_ERR_INVALID_ARGUMENT: return PyExc_ValueError;
  case HET_ERR_OUT_OF_MEMORY: return PyExc_MemoryError;
  case HET_ERR_UNSUPPORTED: return PyExc_NotImplementedError;
  case HET_ERR_NOT_FOUND: return PyExc_LookupError;
  case HET_ERR_SHAPE: return PyExc_ValueError;
  case HET_ERR_TYPE: return PyExc_TypeError;
  default: return NULL;
  }
}

/* A new exception class hetrt.<name> with bases and class attributes
 * status and code. */
static PyObject *hetpy_error_class_create(const char *name, const char *doc,
                                          PyObject *bases, const char *status,
                                          int code)
{
  char qualified[64];
  PyObject *dict = NULL, *cls = NULL, *value = NULL;

  snprintf(qualified, sizeof qualified, "hetrt.%s", name);
  dict = PyDict_New();
  if (!dict)
    goto fail;
  value = PyUnicode_FromString(status);
  if (!value || PyDict_SetItemString(dict, "status", value) < 0)
    goto fail;
  Py_DECREF(value);
  value = code < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(code);
  if (!value || PyDict_SetItemString(dict, "code", value) < 0)
    goto fail;
  Py_CLEAR(value);
  cls = PyErr_NewExceptionWithDoc(qualified, doc, bases, dict);
fail:
  Py_XDECREF(value);
  Py_XDECREF(dict);
  return cls;
}

int hetpy_errors_init(PyObject *module)
{
  hetpy_error_base = hetpy_error_class_create("Error",
      "Base class of every error hetrt reports; the message is the library's.",
      PyExc_RuntimeError, "error", -1);
  if (!hetpy_error_base || PyModule_AddObjectRef(module, "Error", hetpy_error_base) < 0)
    return -1;
  for (size_t i = 0; i < sizeof hetpy_error_table / sizeof hetpy_error_table[0]; i++) {
    het_status st = hetpy_error_table[i].status;
    PyObject *extra = hetpy_builtin_base(st);
    PyObject *bases = extra ? PyTuple_Pack(2, hetpy_error_base, extra)
                            : PyTuple_Pack(1, hetpy_error_base);
    if (!bases)
      return -1;
    PyObject *cls = hetpy_error_class_create(hetpy_error_table[i].name,
        hetpy_error_table[i].doc, bases, het_status_str(st), (int)st);
    Py_DECREF(bases);
    if (!cls || PyModule_AddObjectRef(module, hetpy_error_table[i].name, cls) < 0) {
      Py_XDECREF(cls);
      return -1;
    }
    hetpy_error_classes[st] = cls;
  }
  return 0;
}

PyObject *hetpy_error_class(het_status status)
{
  if ((int)status > 0 && status < HET_STATUS_COUNT_ && hetpy_error_classes[status])
    return hetpy_error_classes[status];
  return hetpy_error_base;
}

PyObject *hetpy_raise(het_status status, const char *message)
{
  if (!message || !message[0])
    message = het_status_str(status);
  PyErr_SetString(hetpy_error_class(status), message);
  return NULL;
}

PyObject *hetpy_raise_last(het_status status)
{
  return hetpy_raise(status, het_last_error());
}

char *hetpy_error_copy(void)
{
  const char *msg = het_last_error();
  size_t n = strlen(msg) + 1;
  char *copy = PyMem_RawMalloc(n);
  if (copy)
    memcpy(copy, msg, n);
  return copy;
}

PyObject *hetpy_raise_copied(het_status status, char *message)
{
  hetpy_raise(status, message);
  PyMem_RawFree(message);
  return NULL;
}

/* ---- Env ------------------------------------------------------------------- */

static PyObject *env_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
  if (PyTuple_GET_SIZE(args) > 0 || (kwargs && PyDict_GET_SIZE(kwargs) > 0)) {
    PyErr_SetString(PyExc_TypeError, "Env() takes no arguments");
    return NULL;
  }
  hetpy_env *self = (hetpy_env *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  het_status st = het_env_create(&self->env);
  if (st != HET_OK) {
    hetpy_raise_last(st);
    Py_DECREF(self);
    return NULL;
  }
  return (PyObject *)self;
}

static void env_dealloc(hetpy_env *self)
{
  het_env_destroy(self->env);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *env_built_providers(hetpy_env *self, PyObject *unused)
{
  (void)unused;
  return PyUnicode_FromString(het_env_get_built_providers(self->env));
}

static PyMethodDef env_methods[] = {
  {"built_providers", (PyCFunction)env_built_providers, METH_NOARGS,
   "Comma-separated names of the providers compiled into the library."},
  {NULL, NULL, 0, NULL},
};

PyTypeObject hetpy_env_type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "hetrt._hetrt.Env",
  .tp_basicsize = sizeof(hetpy_env),
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "What sessions share: providers and opened devices (het_env).",
  .tp_new = env_new,
  .tp_dealloc = (destructor)env_dealloc,
  .tp_methods = env_methods,
};

/* ---- module ---------------------------------------------------------------- */

static PyObject *module_numpy_dtype(PyObject *module, PyObject *arg)
{
  (void)module;
  long value = PyLong_AsLong(arg);
  if (value == -1 && PyErr_Occurred())
    return NULL;
  int typenum = hetpy_npy_type((het_dtype)value);
  if (typenum < 0)
    Py_RETURN_NONE;
  return (PyObject *)PyArray_DescrFromType(typenum);
}

static PyObject *module_dtype_name(PyObject *module, PyObject *arg)
{
  (void)module;
  long value = PyLong_AsLong(arg);
  if (value == -1 && PyErr_Occurred())
    return NULL;
  return PyUnicode_FromString(het_dtype_str((het_dtype)value));
}

static PyMethodDef module_methods[] = {
  {"session_create", hetpy_session_create, METH_VARARGS,
   "session_create(env, model, providers, threads, options) -> Session"},
  {"quantizer_create", hetpy_quantizer_create, METH_VARARGS,
   "quantizer_create(env, model_path, providers, threads, options) -> Quantizer"},
  {"numpy_dtype", module_numpy_dtype, METH_O,
   "numpy_dtype(het_dtype) -> numpy.dtype or None (bfloat16 as uint16)"},
  {"dtype_name", module_dtype_name, METH_O,
   "dtype_name(het_dtype) -> hetrt's name of the element type"},
  {NULL, NULL, 0, NULL},
};

static struct PyModuleDef hetpy_module = {
  PyModuleDef_HEAD_INIT,
  .m_name = "hetrt._hetrt",
  .m_doc = "C extension over hetrt's C API; use the package hetrt.",
  .m_size = -1,
  .m_methods = module_methods,
};

static int hetpy_add_type(PyObject *module, PyTypeObject *type, const char *name)
{
  if (PyType_Ready(type) < 0)
    return -1;
  return PyModule_AddObjectRef(module, name, (PyObject *)type);
}

PyMODINIT_FUNC PyInit__hetrt(void)
{
  import_array();
  PyObject *m = PyModule_Create(&hetpy_module);
  if (!m)
    return NULL;
  if (hetpy_errors_init(m) < 0 ||
      hetpy_add_type(m, &hetpy_env_type, "Env") < 0 ||
      hetpy_add_type(m, &hetpy_session_type, "Session") < 0 ||
      hetpy_add_type(m, &hetpy_quantizer_type, "Quantizer") < 0 ||
      PyModule_AddStringConstant(m, "__version__", HETRT_PY_VERSION) < 0 ||
      PyModule_AddIntConstant(m, "MAX_RANK", HET_MAX_RANK) < 0)
    goto fail;
  char version[32];
  snprintf(version, sizeof version, "%d.%d.%d", HET_VERSION_MAJOR,
           HET_VERSION_MINOR, HET_VERSION_PATCH);
  if (PyModule_AddStringConstant(m, "header_version", version) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}
