#!/usr/bin/python3
"""gen_conv_short.py — the conv_short case: a 3x3 stride-1 Conv, 32 -> 32
channels, on a 4x40 image (a text recogniser's late layers), whose output
is too short for Winograd to pay (HET_WINOGRAD_MIN_OUT, kernels/kernel.h):
cpu.conv_algo=auto builds direct only, winograd still forces it.  Relu,
then GlobalAveragePool.  Torch reference."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(2468)
x = rng.standard_normal((1, 32, 4, 40)).astype(np.float32)
w = (rng.standard_normal((32, 32, 3, 3)) * 0.2).astype(np.float32)
b = (rng.standard_normal(32) * 0.2).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1] * 4),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("GlobalAveragePool", ["r"], ["y"], name="gap"),
]
graph = helper.make_graph(
    nodes, "conv_short",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 4, 40])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 1, 1])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
F = torch.nn.functional
with torch.no_grad():
    y = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b),
                 padding=1).relu().mean(dim=(2, 3), keepdim=True)
save_case("conv_short", model, [("x", x)], [("y", y.numpy())])
