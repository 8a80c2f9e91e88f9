"""hetrt.session — InferenceSession and NodeArg over the C extension.

A session is created once (model loaded, shapes inferred, nodes placed on
providers, plans made) and run many times, from several threads at once
if wanted: the GIL is released while hetrt runs.  Option values are turned
into the strings the C API takes here; the library checks them and its
message is what an error carries.
"""

import os
import threading

from . import _hetrt

# ONNX's element type names, as ONNX Runtime writes them in "tensor(...)".
_ONNX_TYPE_NAMES = {
    0: "undefined", 1: "float", 2: "uint8", 3: "int8", 4: "uint16",
    5: "int16", 6: "int32", 7: "int64", 8: "string", 9: "bool",
    10: "float16", 11: "double", 12: "uint32", 13: "uint64",
    14: "complex64", 15: "complex128", 16: "bfloat16",
}

_env = None
_env_lock = threading.Lock()


def default_env():
    """The process's hetrt environment (providers and opened devices),
    shared by every session and made on first use."""
    global _env
    with _env_lock:
        if _env is None:
            _env = _hetrt.Env()
        return _env


class NodeArg:
    """A graph input or output: ``name``, ``type`` (ONNX Runtime's form,
    ``"tensor(float)"``), ``dtype`` (the numpy dtype its arrays have;
    bfloat16 as uint16, string as None) and ``shape`` (a list of ints, of
    symbolic dimension names as str, and of None for unnamed unknown
    dimensions; None when the rank is unknown)."""

    __slots__ = ("name", "type", "dtype", "shape", "elem_type")

    def __init__(self, name, elem_type, shape):
        self.name = name
        self.elem_type = elem_type
        self.type = "tensor(%s)" % _ONNX_TYPE_NAMES.get(elem_type, "undefined")
        self.dtype = _hetrt.numpy_dtype(elem_type)
        self.shape = shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


def _option_text(key, value):
    """The string the C API takes for an option value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fsdecode(os.fspath(value))
    raise TypeError("option %r: value %r is not a str, bool, int, float or path"
                    % (key, value))


def _paths(value, what):
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    try:
        return [os.fsdecode(os.fspath(p)) for p in value]
    except TypeError:
        raise TypeError("%s must be a path or a list of paths" % what) from None


def _split_providers(providers):
    """Provider names, and the (key, value) options of ("name", {opts})
    entries as ONNX Runtime accepts them ({"mode": "timed"} for "emu"
    becomes emu.mode=timed)."""
    if providers is None:
        return None, []
    if isinstance(providers, str):
        providers = [providers]
    names, pairs = [], []
    for p in providers:
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[1], dict):
            names.append(p[0])
            for k, v in p[1].items():
                key = "%s.%s" % (p[0], k)
                pairs.append((key, _option_text(key, v)))
        elif isinstance(p, str):
            names.append(p)
        else:
            raise TypeError("providers must be names (str) or (name, options) pairs")
    return names, pairs


class InferenceSession:
    """A model loaded by hetrt.

    ``path_or_bytes``: the model's path (str or path-like; a plan file
    such as ``.hplan`` is passed to the library as it is) or a serialized
    ModelProto (bytes).  ``providers``: names in priority order (default
    ``["cpu"]``); an entry may be ``(name, {key: value})`` for provider
    options.  ``devices``: YAML device profiles (``configs/devices/``).
    ``policy``: a YAML placement policy file (docs/policy.md), passed
    as the session option ``policy``; a malformed one raises
    InvalidArgument naming its line and column.
    ``options``: other session options (see hetrt.h), values str, bool,
    int or float.  ``threads``: CPU kernel threads.

    Raises hetrt.Error (a subclass per status) with the library's message.
    """

    def __init__(self, path_or_bytes, providers=None, devices=None, policy=None,
                 options=None, threads=None):
        model = path_or_bytes
        if isinstance(model, os.PathLike):
            model = os.fsdecode(os.fspath(model))
        elif not isinstance(model, (str, bytes, bytearray, memoryview)):
            raise TypeError("path_or_bytes must be a path or the model's bytes")
        names, pairs = _split_providers(providers)
        if devices is not None:
            pairs.append(("devices", ",".join(_paths(devices, "devices"))))
        if policy is not None:
            pairs.append(("policy", _option_text("policy", policy)))
        for key, value in (options or {}).items():
            pairs.append((str(key), _option_text(key, value)))
        self._model_path = model if isinstance(model, str) else None
        self._sess = _hetrt.session_create(default_env(), model, names, threads, pairs)
        self._inputs = [NodeArg(*v) for v in self._sess.inputs()]
        self._outputs = [NodeArg(*v) for v in self._sess.outputs()]

    @property
    def model_path(self):
        """The path the session was created from (None for bytes)."""
        return self._model_path

    def get_inputs(self):
        """The graph inputs to feed (NodeArg list, graph order)."""
        return list(self._inputs)

    def get_outputs(self):
        """The graph outputs (NodeArg list, graph order)."""
        return list(self._outputs)

    def get_providers(self):
        """The providers that run at least one node, in order of first use."""
        seen = []
        for p in self.placement():
            if p["provider"] not in seen:
                seen.append(p["provider"])
        return seen

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model: ``output_names`` (a list, or None for all in
        graph order) from ``input_feed`` ({name: numpy array}).  Returns a
        list of numpy arrays that own their memory.

        An input that is C-contiguous, aligned, in native byte order and
        of a hetrt dtype is read in place (no copy); any other array-like
        is converted first.  Element types are not converted: an array of
        the wrong dtype is refused by the library (TypeMismatch).  A uint16
        array feeds a bfloat16 input (raw bits).  The GIL is released
        during the run."""
        if run_options is not None:
            raise NotImplementedError("run_options are not supported")
        if isinstance(output_names, str):
            raise TypeError("output_names must be a list of names or None")
        return self._sess.run(output_names, input_feed)

    def explain(self, format="text"):
        """The placement report as "text", "json", "dot", "html" or "rules"
        (the policy's rules and the nodes each matched)."""
        return self._sess.explain(format)

    def placement(self):
        """Where each node runs: a list of dicts {name, op_type, provider,
        reason} (subgraph body nodes by their path)."""
        return self._sess.placement()

    def warnings(self):
        """What session creation warned about (skipped providers with
        strict=False)."""
        return self._sess.warnings()

    def profile(self):
        """The traced runs' time per op type and provider as a text table.
        Needs ``options={"trace": True}``."""
        return self._sess.profile()

    def save_trace(self, path):
        """Writes the traced runs as a Chrome trace (JSON).  Needs
        ``options={"trace": True}``."""
        self._sess.save_trace(os.fspath(path))

    def clear_trace(self):
        """Forgets the runs traced and the node times measured so far
        (e.g. warm-up runs)."""
        self._sess.clear_trace()

    def save_node_times(self, path):
        """Writes each node's mean measured time, for a later session's
        ``node_times`` option.  Needs ``options={"measure": True}``."""
        self._sess.save_node_times(os.fspath(path))

    def save_plan(self, path):
        """Writes the session as an ahead-of-time plan file
        (docs/plan-format.md): ``InferenceSession(path)`` then loads it
        without rewriting, partitioning or timing anything, with outputs
        bitwise those of this session on the same machine."""
        self._sess.save_plan(os.fspath(path))

    def plan_shapes(self, shapes):
        """Plans the session for input shapes, as a run of them would,
        without running, and returns the shape regime they use (0 when
        the session keeps one placement for every shape).  ``shapes``:
        ``{"x": (1, 3, 1280, 1280)}`` or ``"x=1x3x1280x1280"``; inputs
        whose dims the model fixes may be left out.  ``save_plan`` then
        stores every regime."""
        if isinstance(shapes, dict):
            shapes = ",".join("%s=%s" % (name, "x".join(str(int(d)) for d in dims))
                              for name, dims in shapes.items())
        return self._sess.plan_shapes(shapes)

    def planned_peak(self, provider="host"):
        """Planned peak bytes of a memory space ("host" or a provider)."""
        return self._sess.planned_peak(provider)
