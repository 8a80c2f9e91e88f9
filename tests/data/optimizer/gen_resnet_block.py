#!/usr/bin/python3
"""gen_resnet_block.py — the resnet_block case: a residual CNN with the
shapes the CPU layout pass and the Conv+Add fusion care about, with a
torch reference.

  x -> conv1 3x3 -> Relu -> conv2 3x3 --+--> Add -> Relu -> r2
  x -> skip 1x1 ------------------------+
  r2 -> MaxPool 3x3/2 -> conv3 1x1 -> Clip(0,6) -> c3
  c3 -> Mul by a per-channel [1,C,1,1] scale -> m
  c3 -> conv4 3x3 -> Add(m) -> y1 (graph output)
  y1 -> GlobalAveragePool -> Flatten -> Gemm -> y2 (graph output)
Channel counts (12, 20, 24) are not multiples of 16, H = W = 13 is odd.
Also writes resnet_block_dyn: the same model with a symbolic batch N.
conv4's bias (+5), small weights and a positive scale keep y1 and y2 away
from cancellation, so float32 rounding stays inside rtol 1e-3."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(4321)


def rnd(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


x = rnd(1, 12, 13, 13, scale=1.0)
w = {
    "w1": rnd(20, 12, 3, 3), "b1": rnd(20),
    "w2": rnd(20, 20, 3, 3), "b2": rnd(20),
    "ws": rnd(20, 12, 1, 1),
    "w3": rnd(24, 20, 1, 1), "b3": rnd(24),
    "w4": rnd(24, 24, 3, 3, scale=0.01), "b4": rnd(24) + 5,
    "scale": np.abs(rnd(1, 24, 1, 1, scale=1.0)),
    "wg": rnd(5, 24), "bg": rnd(5) + 3,
}
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                     pads=[1] * 4),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                     pads=[1] * 4),
    helper.make_node("Conv", ["x", "ws"], ["s"], name="skip"),
    helper.make_node("Add", ["c2", "s"], ["a2"], name="add2"),
    helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1] * 4),
    helper.make_node("Conv", ["p", "w3", "b3"], ["c3r"], name="conv3"),
    helper.make_node("Clip", ["c3r", "lo", "hi"], ["c3"], name="clip3"),
    helper.make_node("Mul", ["c3", "scale"], ["m"], name="mul"),
    helper.make_node("Conv", ["c3", "w4", "b4"], ["c4"], name="conv4",
                     pads=[1] * 4),
    helper.make_node("Add", ["c4", "m"], ["y1"], name="add4"),
    helper.make_node("GlobalAveragePool", ["y1"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "wg", "bg"], ["y2"], name="fc", transB=1),
]
inits = [numpy_helper.from_array(a, n) for n, a in w.items()]
inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
          numpy_helper.from_array(np.array(6, np.float32), "hi")]
graph = helper.make_graph(
    nodes, "resnet_block",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12, 13, 13])],
    [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 24, 7, 7]),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 5])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

t = torch.nn.functional
T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    X = torch.from_numpy(x)
    r1 = t.conv2d(X, T["w1"], T["b1"], padding=1).relu()
    r2 = (t.conv2d(r1, T["w2"], T["b2"], padding=1) + t.conv2d(X, T["ws"])).relu()
    p = t.max_pool2d(r2, 3, 2, 1)
    c3 = t.conv2d(p, T["w3"], T["b3"]).clamp(0, 6)
    y1 = t.conv2d(c3, T["w4"], T["b4"], padding=1) + c3 * T["scale"]
    y2 = t.linear(y1.mean(dim=(2, 3)), T["wg"], T["bg"])
outputs = [("y1", y1.numpy()), ("y2", y2.numpy())]
save_case("resnet_block", model, [("x", x)], outputs)

# resnet_block_dyn: the same graph with a symbolic batch "N" (the layout
# pass and the Conv+Add fusion must work with it too); same test data.
for vi in list(model.graph.input) + list(model.graph.output):
    vi.type.tensor_type.shape.dim[0].dim_param = "N"
onnx.checker.check_model(model)
save_case("resnet_block_dyn", model, [("x", x)], outputs)
