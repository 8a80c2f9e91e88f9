#!/usr/bin/python3
"""gen_rgb_input.py — the rgb_input case: a 3-channel NCHW graph input
(batch 2, 13x13 = 169 pixels: ten 16-pixel vectors and a 9-pixel tail)
into a stride-2 3x3 Conv whose primitive reads NHWC, so the CPU provider
interleaves the three planes itself (linalg_dnnl.c rgb_to_nhwc); then a
1x1 Conv and Relu.  Torch reference."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(2468)
x = rng.standard_normal((2, 3, 13, 13)).astype(np.float32)
w1 = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
b1 = (rng.standard_normal(8) * 0.3).astype(np.float32)
w2 = (rng.standard_normal((4, 8, 1, 1)) * 0.3).astype(np.float32)
b2 = (rng.standard_normal(4) * 0.3 + 1).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                     pads=[1] * 4, strides=[2, 2]),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
    helper.make_node("Relu", ["c2"], ["y"], name="relu2"),
]
inits = [numpy_helper.from_array(a, n)
         for n, a in [("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2)]]
graph = helper.make_graph(
    nodes, "rgb_input",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 13, 13])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 7, 7])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
F = torch.nn.functional
with torch.no_grad():
    r1 = F.conv2d(torch.from_numpy(x), torch.from_numpy(w1),
                  torch.from_numpy(b1), stride=2, padding=1).relu()
    y = F.conv2d(r1, torch.from_numpy(w2), torch.from_numpy(b2)).relu()
save_case("rgb_input", model, [("x", x)], [("y", y.numpy())])
