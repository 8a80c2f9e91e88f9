/* hetpy.h — what the files of the extension module hetrt._hetrt share:
 * the exception classes (one per het_status), the dtype mapping between
 * het_dtype and numpy, input binding (numpy arrays lent to het_tensors)
 * and output wrapping (het_tensors owned by numpy arrays), and the types
 * Env, Session and Quantizer.  Only the public C API is used.
 *
 * Invariant: every hetrt call's failure is turned into a Python exception
 * from het_last_error() read on the failing thread before any other hetrt
 * call; calls made without the GIL copy the message first.
 */
#ifndef HETPY_H
#define HETPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define PY_ARRAY_UNIQUE_SYMBOL hetpy_ARRAY_API
#ifndef HETPY_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include <hetrt/hetrt.h>
#include <hetrt/quantize.h>

/* ---- errors (module.c) ---------------------------------------------------- */

/* Creates hetrt.Error and its subclasses and adds them to module. */
int hetpy_errors_init(PyObject *module);

/* The class raised for status (hetrt.Error for unknown ones).  Borrowed. */
PyObject *hetpy_error_class(het_status status);

/* Raises the class of status with message (het_status_str(status) when
 * message is NULL or empty).  Returns NULL. */
PyObject *hetpy_raise(het_status status, const char *message);

/* Raises the class of status with this thread's het_last_error(): call it
 * right after the failing hetrt call, with the GIL held.  Returns NULL. */
PyObject *hetpy_raise_last(het_status status);

/* For calls made without the GIL: a copy of het_last_error() (PyMem_Raw,
 * may be NULL when out of memory), taken on the failing thread; then
 * hetpy_raise_copied raises it with the GIL held and frees it. */
char *hetpy_error_copy(void);
PyObject *hetpy_raise_copied(het_status status, char *message);

/* ---- dtypes (tensors.c) --------------------------------------------------- */

/* The numpy type number holding dtype's elements: bfloat16 as uint16 (its
 * raw bits).  -1 for UNDEFINED, STRING and unknown values. */
int hetpy_npy_type(het_dtype dtype);

/* The het_dtype of numpy type number typenum, or HET_DTYPE_UNDEFINED. */
het_dtype hetpy_het_dtype(int typenum);

/* ---- inputs and outputs (tensors.c) --------------------------------------- */

/* A run's named inputs: each a het_tensor over the memory of a numpy
 * array held here (the value given when it is C-contiguous, aligned,
 * native and of a hetrt dtype, else a converted copy).  names[i] is the
 * UTF-8 of name_objs[i], valid while it is held. */
typedef struct hetpy_feeds {
  size_t count;
  const char **names;
  het_tensor **tensors;
  PyObject **name_objs; /* strong references */
  PyObject **arrays;    /* strong references */
} hetpy_feeds;

/* Binds every item of mapping (str -> array-like).  session (may be NULL)
 * is asked for the declared dtype of a uint16 input, so that a uint16
 * array feeds a bfloat16 input.  0, or -1 with an exception set and
 * nothing left to deinit. */
int hetpy_feeds_init(hetpy_feeds *feeds, PyObject *mapping,
                     const het_session *session);
/* Destroys the tensors and drops the references.  Accepts a zeroed f. */
void hetpy_feeds_deinit(hetpy_feeds *feeds);

/* A numpy array that owns tensor (destroyed with the array's last
 * reference).  Takes tensor in every case: on failure it is destroyed and
 * NULL returned with an exception set. */
PyObject *hetpy_array_from_tensor(het_tensor *tensor);

/* ---- session options (options.c) ------------------------------------------ */

/* Session options from providers (None or a sequence of str), threads
 * (None or int) and options (a sequence of (str, str) pairs, applied in
 * order).  0 with *out (caller owns), or -1 with an exception set. */
int hetpy_options_build(PyObject *providers, PyObject *threads,
                        PyObject *options, het_session_options **out);

/* ---- types ----------------------------------------------------------------- */

/* An het_env; sessions and quantizers hold a reference to theirs, so it is
 * destroyed after them. */
typedef struct hetpy_env {
  PyObject_HEAD
  het_env *env;
} hetpy_env;

extern PyTypeObject hetpy_env_type;
extern PyTypeObject hetpy_session_type;
extern PyTypeObject hetpy_quantizer_type;

/* _hetrt.session_create(env, model, providers, threads, options) */
PyObject *hetpy_session_create(PyObject *module, PyObject *args);
/* _hetrt.quantizer_create(env, model_path, providers, threads, options) */
PyObject *hetpy_quantizer_create(PyObject *module, PyObject *args);

#endif /* HETPY_H */
