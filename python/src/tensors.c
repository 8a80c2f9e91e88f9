/* tensors.c — numpy arrays and het_tensors: the dtype mapping, inputs lent
 * to a run (het_tensor_create_over on the array's own buffer when it is
 * C-contiguous, aligned, native and of a hetrt dtype, else on a converted
 * copy that the feeds hold), and outputs handed to numpy (the array's base
 * is a capsule that destroys the het_tensor, so the array owns it).
 */
#include "hetpy.h"

#include <string.h>

#define HETPY_TENSOR_CAPSULE "hetrt.tensor"

/* ---- dtypes ------------------------------------------------------------------ */

int hetpy_npy_type(het_dtype dtype)
{
  switch (dtype) {
  case HET_DTYPE_FLOAT32: return NPY_FLOAT32;
  case HET_DTYPE_UINT8: return NPY_UINT8;
  case HET_DTYPE_INT8: return NPY_INT8;
  case HET_DTYPE_UINT16: return NPY_UINT16;
  case HET_DTYPE_INT16: return NPY_INT16;
  case HET_DTYPE_INT32: return NPY_INT32;
  case HET_DTYPE_INT64: return NPY_INT64;
  case HET_DTYPE_BOOL: return NPY_BOOL;
  case HET_DTYPE_FLOAT16: return NPY_FLOAT16;
  case HET_DTYPE_FLOAT64: return NPY_FLOAT64;
  case HET_DTYPE_UINT32: return NPY_UINT32;
  case HET_DTYPE_UINT64: return NPY_UINT64;
  case HET_DTYPE_COMPLEX64: return NPY_COMPLEX64;
  case HET_DTYPE_COMPLEX128: return NPY_COMPLEX128;
  case HET_DTYPE_BFLOAT16: return NPY_UINT16; /* raw bits */
  default: return -1;                         /* UNDEFINED, STRING */
  }
}

het_dtype hetpy_het_dtype(int typenum)
{
  /* By kind and size, not type number: numpy's long and longlong are
   * distinct numbers for the same 64-bit integers. */
  PyArray_Descr *d = PyArray_DescrFromType(typenum);
  if (!d)
    return (PyErr_Clear(), HET_DTYPE_UNDEFINED);
  char kind = d->kind;
  int size = (int)d->elsize;
  Py_DECREF(d);
  switch (kind) {
  case 'b': return size == 1 ? HET_DTYPE_BOOL : HET_DTYPE_UNDEFINED;
  case 'i':
    switch (size) {
    case 1: return HET_DTYPE_INT8;
    case 2: return HET_DTYPE_INT16;
    case 4: return HET_DTYPE_INT32;
    case 8: return HET_DTYPE_INT64;
    default: return HET_DTYPE_UNDEFINED;
    }
  case 'u':
    switch (size) {
    case 1: return HET_DTYPE_UINT8;
    case 2: return HET_DTYPE_UINT16;
    case 4: return HET_DTYPE_UINT32;
    case 8: return HET_DTYPE_UINT64;
    default: return HET_DTYPE_UNDEFINED;
    }
  case 'f':
    switch (size) {
    case 2: return HET_DTYPE_FLOAT16;
    case 4: return HET_DTYPE_FLOAT32;
    case 8: return HET_DTYPE_FLOAT64;
    default: return HET_DTYPE_UNDEFINED;
    }
  case 'c':
    switch (size) {
    case 8: return HET_DTYPE_COMPLEX64;
    case 16: return HET_DTYPE_COMPLEX128;
    default: return HET_DTYPE_UNDEFINED;
    }
  default: return HET_DTYPE_UNDEFINED;
  }
}

/* ---- inputs ------------------------------------------------------------------ */

/* The dtype session declares for input name, or UNDEFINED. */
static het_dtype hetpy_declared_dtype(const het_session *session, const char *name)
{
  size_t n = het_session_get_input_count(session);
  for (size_t i = 0; i < n; i++) {
    het_value_desc d;
    if (het_session_get_input(session, i, &d) == HET_OK && strcmp(d.name, name) == 0)
      return d.dtype;
  }
  return HET_DTYPE_UNDEFINED;
}

/* A C-contiguous, aligned, native-order array of value with a hetrt dtype:
 * value itself when it already is one (a new reference), else a copy.
 * *dtype gets its het_dtype. */
static PyArrayObject *hetpy_input_array(PyObject *value, const char *name,
                                        het_dtype *dtype)
{
  PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_O(value);
  if (!arr)
    return NULL;
  het_dtype dt = hetpy_het_dtype(PyArray_TYPE(arr));
  char kind = PyArray_DESCR(arr)->kind;
  if (kind == 'U' || kind == 'S' || kind == 'O') {
    PyErr_Format(hetpy_error_class(HET_ERR_UNSUPPORTED),
                 "input '%s': string and object arrays are not supported "
                 "(hetrt has no string tensors)", name);
    Py_DECREF(arr);
    return NULL;
  }
  if (dt == HET_DTYPE_UNDEFINED) {
    PyObject *repr = PyObject_Str((PyObject *)PyArray_DESCR(arr));
    PyErr_Format(hetpy_error_class(HET_ERR_TYPE),
                 "input '%s': numpy dtype %s has no hetrt element type", name,
                 repr ? PyUnicode_AsUTF8(repr) : "?");
    Py_XDECREF(repr);
    Py_DECREF(arr);
    return NULL;
  }
  if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr) ||
      !PyArray_ISNOTSWAPPED(arr)) {
    PyArray_Descr *native = PyArray_DescrFromType(hetpy_npy_type(dt));
    /* Steals native. */
    PyObject *copy = PyArray_FromAny((PyObject *)arr, native, 0, 0,
                                     NPY_ARRAY_IN_ARRAY | NPY_ARRAY_ENSURECOPY, NULL);
    Py_DECREF(arr);
    if (!copy)
      return NULL;
    arr = (PyArrayObject *)copy;
  }
  *dtype = dt;
  return arr;
}

/* tensor over arr's buffer. */
static het_status hetpy_tensor_over(PyArrayObject *arr, het_dtype dtype,
                                    het_tensor **out)
{
  int rank = PyArray_NDIM(arr);
  int64_t dims[NPY_MAXDIMS];
  for (int i = 0; i < rank; i++)
    dims[i] = (int64_t)PyArray_DIM(arr, i);
  return het_tensor_create_over(dtype, dims, rank, PyArray_DATA(arr),
                                (size_t)PyArray_NBYTES(arr), out);
}

void hetpy_feeds_deinit(hetpy_feeds *f)
{
  for (size_t i = 0; i < f->count; i++) {
    if (f->tensors)
      het_tensor_destroy(f->tensors[i]);
    if (f->name_objs)
      Py_XDECREF(f->name_objs[i]);
    if (f->arrays)
      Py_XDECREF(f->arrays[i]);
  }
  PyMem_Free(f->names);
  PyMem_Free(f->tensors);
  PyMem_Free(f->name_objs);
  PyMem_Free(f->arrays);
  memset(f, 0, sizeof *f);
}

/* Binds item i (a (name, value) pair of the items list). */
static int hetpy_feed_bind(hetpy_feeds *f, size_t i, PyObject *item,
                           const het_session *session)
{
  if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
    PyErr_SetString(PyExc_TypeError, "input feeds must map names to arrays");
    return -1;
  }
  PyObject *name = PyTuple_GET_ITEM(item, 0);
  if (!PyUnicode_Check(name)) {
    PyErr_SetString(PyExc_TypeError, "input names must be str");
    return -1;
  }
  f->name_objs[i] = Py_NewRef(name);
  f->names[i] = PyUnicode_AsUTF8(name);
  if (!f->names[i])
    return -1;
  het_dtype dt;
  PyArrayObject *arr = hetpy_input_array(PyTuple_GET_ITEM(item, 1), f->names[i], &dt);
  if (!arr)
    return -1;
  f->arrays[i] = (PyObject *)arr;
  if (dt == HET_DTYPE_UINT16 && session &&
      hetpy_declared_dtype(session, f->names[i]) == HET_DTYPE_BFLOAT16)
    dt = HET_DTYPE_BFLOAT16;
  het_status st = hetpy_tensor_over(arr, dt, &f->tensors[i]);
  if (st != HET_OK) {
    hetpy_raise_last(st);
    return -1;
  }
  return 0;
}

int hetpy_feeds_init(hetpy_feeds *f, PyObject *mapping, const het_session *session)
{
  memset(f, 0, sizeof *f);
  if (!PyDict_Check(mapping) && !PyObject_HasAttrString(mapping, "items")) {
    PyErr_SetString(PyExc_TypeError, "input feeds must be a dict of name -> array");
    return -1;
  }
  /* A list of its own, so that conversions running Python code cannot
   * change what is iterated. */
  PyObject *items = PyMapping_Items(mapping);
  if (!items)
    return -1;
  size_t n = (size_t)PyList_GET_SIZE(items);
  size_t alloc = n ? n : 1;
  f->names = PyMem_Calloc(alloc, sizeof *f->names);
  f->tensors = PyMem_Calloc(alloc, sizeof *f->tensors);
  f->name_objs = PyMem_Calloc(alloc, sizeof *f->name_objs);
  f->arrays = PyMem_Calloc(alloc, sizeof *f->arrays);
  f->count = n;
  if (!f->names || !f->tensors || !f->name_objs || !f->arrays) {
    PyErr_NoMemory();
    goto fail;
  }
  for (size_t i = 0; i < n; i++)
    if (hetpy_feed_bind(f, i, PyList_GET_ITEM(items, i), session) < 0)
      goto fail;
  Py_DECREF(items);
  return 0;
fail:
  Py_DECREF(items);
  hetpy_feeds_deinit(f);
  return -1;
}

/* ---- outputs ----------------------------------------------------------------- */

static void hetpy_tensor_capsule_destroy(PyObject *capsule)
{
  het_tensor_destroy(PyCapsule_GetPointer(capsule, HETPY_TENSOR_CAPSULE));
}

PyObject *hetpy_array_from_tensor(het_tensor *tensor)
{
  het_dtype dt = het_tensor_get_dtype(tensor);
  int typenum = hetpy_npy_type(dt);
  if (typenum < 0) {
    PyErr_Format(hetpy_error_class(HET_ERR_UNSUPPORTED),
                 "an output is a %s tensor, which hetrt's Python API does not "
                 "return", het_dtype_str(dt));
    het_tensor_destroy(tensor);
    return NULL;
  }
  int64_t dims64[HET_MAX_RANK];
  int rank = het_tensor_get_dims(tensor, dims64, HET_MAX_RANK);
  npy_intp dims[HET_MAX_RANK];
  for (int i = 0; i < rank; i++)
    dims[i] = (npy_intp)dims64[i];
  void *data = het_tensor_get_data(tensor);
  if (het_tensor_get_count(tensor) == 0 || !data) {
    het_tensor_destroy(tensor);
    return PyArray_ZEROS(rank, dims, typenum, 0);
  }
  PyObject *capsule = PyCapsule_New(tensor, HETPY_TENSOR_CAPSULE,
                                    hetpy_tensor_capsule_destroy);
  if (!capsule) {
    het_tensor_destroy(tensor);
    return NULL;
  }
  PyObject *arr = PyArray_SimpleNewFromData(rank, dims, typenum, data);
  if (!arr) {
    Py_DECREF(capsule);
    return NULL;
  }
  /* Steals capsule, on failure too. */
  if (PyArray_SetBaseObject((PyArrayObject *)arr, capsule) < 0) {
    Py_DECREF(arr);
    return NULL;
  }
  return arr;
}
