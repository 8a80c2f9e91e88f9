#!/usr/bin/python3
"""gen_conv_clip.py — the conv_clip optimizer case: Conv -> Clip(0, 6)
(opset 13, bounds as constant inputs) -> Conv -> Relu, with a torch
reference; the optimizer fuses both activations into their Convs."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(1234)
x = (rng.standard_normal((1, 3, 8, 8)) * 3).astype(np.float32)
w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
w2 = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
b2 = rng.standard_normal(4).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1] * 4),
    helper.make_node("Clip", ["c1", "lo", "hi"], ["r1"], name="clip1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2"),
    helper.make_node("Relu", ["c2"], ["y"], name="relu2"),
]
inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (w2, "w2"), (b2, "b2"),
          (np.array(0, np.float32), "lo"), (np.array(6, np.float32), "hi")]]
graph = helper.make_graph(
    nodes, "conv_clip",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
t = torch.nn.functional
with torch.no_grad():
    r1 = t.conv2d(torch.from_numpy(x), torch.from_numpy(w1), padding=1).clamp(0, 6)
    y = t.conv2d(r1, torch.from_numpy(w2), torch.from_numpy(b2)).clamp(min=0)
save_case("conv_clip", model, [("x", x)], [("y", y.numpy())])
