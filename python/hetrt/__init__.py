"""hetrt — a heterogeneous ONNX inference runtime, from Python.

The package wraps hetrt's C API (libhetrt.so) in an API shaped like ONNX
Runtime's::

    import numpy as np, hetrt
    sess = hetrt.InferenceSession("model.onnx", providers=["emu", "cpu"],
                                  devices=["configs/devices/npu.yaml"])
    y = sess.run(None, {"x": np.zeros((1, 3, 8, 8), np.float32)})[0]

Every error the library reports is raised as ``hetrt.Error`` (a
RuntimeError) or one of its subclasses, one per status, with the library's
message.  See docs/python.md.
"""

from ._hetrt import (  # noqa: F401  (re-exported)
    Error,
    InvalidArgument,
    OutOfMemory,
    IOFailure,
    InvalidModel,
    Unsupported,
    NotFound,
    NotBuilt,
    NoDevice,
    ShapeMismatch,
    TypeMismatch,
    KernelFailed,
    CapacityExceeded,
    InternalError,
    __version__,
)
from .session import InferenceSession, NodeArg, default_env  # noqa: F401
from .quantize import quantize, QuantizationResult  # noqa: F401


def get_built_providers():
    """The names of the execution providers built into libhetrt, in the
    library's order (e.g. ``['cpu', 'int8', 'emu']``; ``'cuda'`` when the plugin
    was built; it still needs a GPU to be used)."""
    names = default_env().built_providers()
    return [n for n in names.split(",") if n]


__all__ = [
    "InferenceSession", "NodeArg", "quantize", "QuantizationResult",
    "get_built_providers", "__version__",
    "Error", "InvalidArgument", "OutOfMemory", "IOFailure", "InvalidModel",
    "Unsupported", "NotFound", "NotBuilt", "NoDevice", "ShapeMismatch",
    "TypeMismatch", "KernelFailed", "CapacityExceeded", "InternalError",
]
