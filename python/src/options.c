/* options.c — het_session_options from Python values: the provider list,
 * the thread count and (key, value) string pairs applied in order, each
 * refused by the library with its own message (an unknown key names it).
 */
#include "hetpy.h"

#include <limits.h>

/* Sets providers (a sequence of str). */
static int hetpy_options_providers(het_session_options *opt, PyObject *providers)
{
  PyObject *seq = PySequence_Fast(providers, "providers must be a list of str");
  if (!seq)
    return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  const char **names = PyMem_Calloc(n ? (size_t)n : 1, sizeof *names);
  int rc = -1;
  if (!names) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyUnicode_Check(item)) {
      PyErr_SetString(PyExc_TypeError, "providers must be a list of str");
      goto done;
    }
    names[i] = PyUnicode_AsUTF8(item); /* held by seq */
    if (!names[i])
      goto done;
  }
  het_status st = het_session_options_set_providers(opt, names, (size_t)n);
  if (st != HET_OK) {
    hetpy_raise_last(st);
    goto done;
  }
  rc = 0;
done:
  PyMem_Free(names);
  Py_DECREF(seq);
  return rc;
}

/* Applies the (key, value) pairs of options in order. */
static int hetpy_options_pairs(het_session_options *opt, PyObject *options)
{
  PyObject *seq = PySequence_Fast(options, "options must be (key, value) pairs");
  if (!seq)
    return -1;
  int rc = -1;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); i++) {
    PyObject *pair = PySequence_Fast_GET_ITEM(seq, i);
    const char *key, *value;
    if (!PyTuple_Check(pair) || !PyArg_ParseTuple(pair, "ss", &key, &value)) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "options must be (str, str) pairs");
      goto done;
    }
    het_status st = het_session_options_set(opt, key, value);
    if (st != HET_OK) {
      hetpy_raise_last(st);
      goto done;
    }
  }
  rc = 0;
done:
  Py_DECREF(seq);
  return rc;
}

int hetpy_options_build(PyObject *providers, PyObject *threads, PyObject *options,
                        het_session_options **out)
{
  het_session_options *opt = NULL;
  het_status st = het_session_options_create(&opt);
  if (st != HET_OK) {
    hetpy_raise_last(st);
    return -1;
  }
  if (providers != Py_None && hetpy_options_providers(opt, providers) < 0)
    goto fail;
  if (threads != Py_None) {
    long n = PyLong_AsLong(threads);
    if (n == -1 && PyErr_Occurred())
      goto fail;
    if (n < INT_MIN || n > INT_MAX) {
      PyErr_SetString(PyExc_OverflowError, "threads out of range");
      goto fail;
    }
    st = het_session_options_set_threads(opt, (int)n);
    if (st != HET_OK) {
      hetpy_raise_last(st);
      goto fail;
    }
  }
  if (options != Py_None && hetpy_options_pairs(opt, options) < 0)
    goto fail;
  *out = opt;
  return 0;
fail:
  het_session_options_destroy(opt);
  return -1;
}
