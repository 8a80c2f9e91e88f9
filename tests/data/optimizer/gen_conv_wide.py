#!/usr/bin/python3
"""gen_conv_wide.py — the conv_wide case: a 3x3 stride-1 Conv on a 55x55
image, 16 -> 64 channels (SqueezeNet's first expand3x3), where
cpu.conv_algo=auto builds and times both of oneDNN's Winograd kernels
(F(2,3), F(4,3)) against direct; Relu, then GlobalAveragePool.  Torch
reference."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(1357)
x = rng.standard_normal((1, 16, 55, 55)).astype(np.float32)
w = (rng.standard_normal((64, 16, 3, 3)) * 0.2).astype(np.float32)
b = (rng.standard_normal(64) * 0.2).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1] * 4),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["y"], name="gap"),
]
graph = helper.make_graph(
    nodes, "conv_wide",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 55, 55])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 1, 1])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
F = torch.nn.functional
with torch.no_grad():
    y = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                 padding=1).relu().mean(dim=(2, 3), keepdim=True)
save_case("conv_wide", model, [("x", x)], [("y", y.numpy())])
