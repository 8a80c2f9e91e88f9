"""hetrt.dask — one model mapped over Dask collections.

``map_model(model, collection, ...)`` runs an ONNX model (or any file
het_session_create loads, such as a saved plan) over

- a ``dask.array.Array``: one run per block along axis 0 (the batch axis;
  the other axes are made single chunks first), the outputs forming a
  dask array with the same chunks along axis 0;
- a ``dask.bag.Bag`` whose items are input files (ONNX TensorProto
  ``.pb`` or numpy ``.npy``), arrays, or dicts of them by input name: one
  run per item, the bag of outputs.

Each worker process creates the session once per (model, settings) and
keeps it for its lifetime in a module-level cache (``get_session``), so a
thousand blocks on two workers load the model twice; ``clear_sessions``
(e.g. ``client.run(hetrt.dask.clear_sessions)``) drops them.  A hetrt
error on a worker is raised there as a hetrt.Error subclass with the
library's message and comes back to the client as that exception.

Nothing here is tied to a local cluster: with
``distributed.Client("tcp://scheduler:8786")`` the same code runs on a
cluster whose workers have hetrt installed and see the model's path.
"""

import os
import threading

import numpy as np

from .session import InferenceSession, _option_text, _paths

_sessions = {}
_sessions_lock = threading.Lock()


class ModelSpec:
    """What a worker needs to create a session: the model's path and the
    session settings, as plain (picklable, hashable) values."""

    __slots__ = ("path", "providers", "devices", "options", "threads")

    def __init__(self, path, providers=None, devices=None, options=None, threads=None):
        self.path = os.fsdecode(os.fspath(path))
        self.providers = None if providers is None else tuple(
            [providers] if isinstance(providers, str) else providers)
        self.devices = None if devices is None else tuple(_paths(devices, "devices"))
        self.options = tuple(sorted((str(k), _option_text(k, v))
                                    for k, v in (options or {}).items()))
        self.threads = threads

    def key(self):
        return (self.path, self.providers, self.devices, self.options, self.threads)

    def __getstate__(self):
        return self.key()

    def __setstate__(self, state):
        self.path, self.providers, self.devices, self.options, self.threads = state

    def __dask_tokenize__(self):
        return ("hetrt.dask.ModelSpec",) + self.key()

    def create(self):
        return InferenceSession(self.path, providers=list(self.providers or ()) or None,
                                devices=list(self.devices) if self.devices else None,
                                options=dict(self.options), threads=self.threads)


def get_session(spec):
    """This process's session for spec, created on first use and cached
    (sessions are thread-safe, so a worker's threads share it)."""
    key = spec.key()
    with _sessions_lock:
        sess = _sessions.get(key)
        if sess is None:
            sess = spec.create()
            _sessions[key] = sess
        return sess


def cached_session_count():
    """How many sessions this process holds (for tests and monitoring)."""
    with _sessions_lock:
        return len(_sessions)


def clear_sessions():
    """Drops this process's cached sessions."""
    with _sessions_lock:
        _sessions.clear()


def load_tensor(path):
    """A numpy array from an ONNX TensorProto file (``.pb``, read with the
    onnx package) or a numpy ``.npy`` file."""
    path = os.fspath(path)
    if str(path).endswith(".npy"):
        return np.load(path, allow_pickle=False)
    if str(path).endswith(".pb"):
        import onnx
        from onnx import numpy_helper
        tensor = onnx.TensorProto()
        with open(path, "rb") as f:
            tensor.ParseFromString(f.read())
        return numpy_helper.to_array(tensor)
    raise ValueError("%s: expected a .pb (TensorProto) or .npy file" % path)


def _as_input(value):
    if isinstance(value, (str, os.PathLike)):
        return load_tensor(value)
    return value


def _names(sess, input_name, output, need_input=True):
    """The input fed and the output kept, checked against the model.
    need_input false: a model of several inputs may leave input_name None
    (bag items are then dicts by input name)."""
    inputs = sess.get_inputs()
    if input_name is None:
        if len(inputs) == 1:
            input_name = inputs[0].name
        elif need_input:
            raise ValueError("the model has %d inputs: give input_name" % len(inputs))
    outputs = sess.get_outputs()
    if isinstance(output, int):
        output = outputs[output].name
    elif output not in [o.name for o in outputs]:
        raise ValueError("the model has no output %r" % (output,))
    return input_name, output


def _run_block(block, spec, input_name, output):
    y = get_session(spec).run([output], {input_name: block})[0]
    if y.ndim == 0 or y.shape[0] != block.shape[0]:
        raise ValueError("output %r of shape %s does not keep the batch axis of a block of "
                         "%d rows" % (output, y.shape, block.shape[0]))
    return y


def _run_item(item, spec, input_name, output):
    feeds = ({k: _as_input(v) for k, v in item.items()} if isinstance(item, dict)
             else {input_name: _as_input(item)})
    return get_session(spec).run([output], feeds)[0]


def _output_layout(sess, spec, arr, input_name, output):
    """The dtype and the shape past axis 0 of output for blocks of arr:
    from the model's description when static, else from one run here on
    a single row of zeros."""
    desc = next(o for o in sess.get_outputs() if o.name == output)
    if desc.shape and all(isinstance(d, int) for d in desc.shape[1:]) and desc.dtype:
        return desc.dtype, tuple(desc.shape[1:])
    row = np.zeros((1,) + tuple(arr.shape[1:]), arr.dtype)
    y = _run_block(row, spec, input_name, output)
    return y.dtype, y.shape[1:]


def _map_array(spec, arr, input_name, output):
    if arr.ndim == 0 or any(np.isnan(d) for d in arr.shape[1:]):
        raise ValueError("the array needs a batch axis 0 and known sizes past it")
    if any(n != 1 for n in arr.numblocks[1:]):
        arr = arr.rechunk({axis: -1 for axis in range(1, arr.ndim)})
    sess = get_session(spec)  # here, on the client: names and output layout
    input_name, output = _names(sess, input_name, output)
    dtype, tail = _output_layout(sess, spec, arr, input_name, output)
    out_rank = 1 + len(tail)
    extra = {}
    if out_rank < arr.ndim:
        extra["drop_axis"] = list(range(out_rank, arr.ndim))
    elif out_rank > arr.ndim:
        extra["new_axis"] = list(range(arr.ndim, out_rank))
    chunks = (arr.chunks[0],) + tuple((d,) for d in tail)
    meta = np.empty((0,) * out_rank, dtype)
    return arr.map_blocks(_run_block, spec, input_name, output, dtype=dtype, meta=meta,
                          chunks=chunks, **extra)


def _map_bag(spec, bag, input_name, output):
    input_name, output = _names(get_session(spec), input_name, output, need_input=False)
    return bag.map(_run_item, spec, input_name, output)


def map_model(model, collection, input_name=None, output=0, providers=None,
              devices=None, options=None, threads=None):
    """Maps the model at path ``model`` over a dask array (runs per block
    along axis 0; returns a dask array) or a dask bag (runs per item: a
    .pb/.npy path, an array, or a dict of them by input name; returns a
    bag of arrays).

    ``input_name``: the input fed (default: the model's only input).
    ``output``: the output kept, by name or index (default 0).
    ``providers``, ``devices``, ``options``, ``threads``: as for
    InferenceSession; every worker creates its session with them, once.
    The model is also opened here, in the calling process, to learn its
    inputs and outputs (and, for arrays with symbolic output dims, the
    output shape from a one-row run)."""
    import dask.array as da
    import dask.bag as db

    spec = ModelSpec(model, providers, devices, options, threads)
    if isinstance(collection, da.Array):
        return _map_array(spec, collection, input_name, output)
    if isinstance(collection, db.Bag):
        return _map_bag(spec, collection, input_name, output)
    raise TypeError("map_model takes a dask.array.Array or a dask.bag.Bag, not %s"
                    % type(collection).__name__)
