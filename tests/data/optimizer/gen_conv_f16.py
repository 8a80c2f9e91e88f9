#!/usr/bin/python3
"""gen_conv_f16.py — the conv_f16_clamp optimizer case: a float16 model
(Cast in, Cast out) of Conv -> Relu -> Conv -> Clip(0, 6), whose Relu and
Clip the optimizer fuses into the float16 Convs.  Inputs and weights are
small multiples of 1/2, so every sum is exact in float16 and the
reference (numpy) is exact too."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(99)
x = (rng.integers(-4, 5, (1, 3, 6, 6)) * 0.5).astype(np.float32)
w1 = (rng.integers(-2, 3, (4, 3, 3, 3)) * 0.5).astype(np.float16)
b1 = (rng.integers(-2, 3, 4) * 0.5).astype(np.float16)
w2 = (rng.integers(-2, 3, (4, 4, 1, 1)) * 0.5).astype(np.float16)
H, F = TensorProto.FLOAT16, TensorProto.FLOAT
nodes = [
    helper.make_node("Cast", ["x"], ["xh"], to=H, name="to_f16"),
    helper.make_node("Conv", ["xh", "w1", "b1"], ["c1"], name="conv1", pads=[1] * 4),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2"),
    helper.make_node("Clip", ["c2", "lo", "hi"], ["k2"], name="clip2"),
    helper.make_node("Cast", ["k2"], ["y"], to=F, name="to_f32"),
]
inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (b1, "b1"), (w2, "w2"),
          (np.array(0, np.float16), "lo"), (np.array(6, np.float16), "hi")]]
graph = helper.make_graph(
    nodes, "conv_f16_clamp",
    [helper.make_tensor_value_info("x", F, [1, 3, 6, 6])],
    [helper.make_tensor_value_info("y", F, [1, 4, 6, 6])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)


def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i:i + kh, j:j + kw]
            y[:, :, i, j] = np.tensordot(patch, w, axes=([1, 2, 3], [1, 2, 3]))
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


f64 = lambda a: a.astype(np.float64)
r1 = np.maximum(conv(f64(x), f64(w1), f64(b1), 1), 0)
y = np.clip(conv(r1, f64(w2), None, 0), 0, 6).astype(np.float32)
save_case("conv_f16_clamp", model, [("x", x)], [("y", y)])
