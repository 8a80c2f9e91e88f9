#!/usr/bin/python3
"""gen_max_acts.py — the max_acts optimizer case: leaky ReLU and ReLU as
tf2onnx and Keras write them, Max(x, x * 0.1) and Max(0, x), become
LeakyRelu and Relu (opt_hard.c), which their Convs then take over; the
near misses Max(x, x * 2) (not a leaky ReLU) and Max(x, 0.5) (not a
ReLU) stay."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(11)
F = TensorProto.FLOAT
x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
w = [(rng.standard_normal((2, 2, 3, 3)) * 0.4).astype(np.float32) for _ in range(3)]
c = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
nodes = [
    helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0", pads=[1] * 4),
    helper.make_node("Mul", ["c0", "k01"], ["m0"], name="mul0"),
    helper.make_node("Max", ["c0", "m0"], ["l0"], name="leaky0"),
    helper.make_node("Conv", ["l0", "w1"], ["c1"], name="conv1", pads=[1] * 4),
    helper.make_node("Max", ["zero", "c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1] * 4),
    helper.make_node("Mul", ["two", "c2"], ["m2"], name="mul2"),
    helper.make_node("Max", ["m2", "c2"], ["n2"], name="not_leaky"),
    helper.make_node("Max", ["n2", "half"], ["y"], name="not_relu"),
]
inits = [numpy_helper.from_array(w[i], "w%d" % i) for i in range(3)] + [
    c("k01", 0.1), c("zero", 0.0), c("two", 2.0), c("half", 0.5)]
graph = helper.make_graph(
    nodes, "max_acts", [helper.make_tensor_value_info("x", F, [1, 2, 5, 5])],
    [helper.make_tensor_value_info("y", F, [1, 2, 5, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)


def conv(a, k):
    ap = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((1, k.shape[0], 5, 5))
    for i in range(5):
        for j in range(5):
            out[:, :, i, j] = np.tensordot(ap[:, :, i:i + 3, j:j + 3], k, axes=([1, 2, 3], [1, 2, 3]))
    return out


f = x.astype(np.float64)
c0 = conv(f, w[0].astype(np.float64))
c1 = conv(np.maximum(c0, c0 * np.float32(0.1)), w[1].astype(np.float64))
c2 = conv(np.maximum(c1, 0), w[2].astype(np.float64))
y = np.maximum(np.maximum(c2 * 2, c2), 0.5).astype(np.float32)
save_case("max_acts", model, [("x", x)], [("y", y)])
