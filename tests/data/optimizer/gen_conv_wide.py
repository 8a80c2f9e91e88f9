#!/usr/bin/python3
"""gen_conv_wide.py — two cases of a 3x3 stride-1 Conv, then Relu, then
GlobalAveragePool (torch references):
  conv_wide: a 55x55 image, 16 -> 64 channels (SqueezeNet's first
    expand3x3), where cpu.conv_algo=auto builds and times both of oneDNN's
    Winograd kernels (F(2,3), F(4,3)) against direct;
  conv_short: a 4x40 image, 32 -> 32 channels (a text recogniser's late
    layers), whose output is one F(4,3) tile high
    (HET_WINOGRAD_F43_MIN_OUT, kernels/kernel.h): auto never tries
    F(4,3) there, winograd still forces oneDNN's first Winograd kernel."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case


def conv_case(name, seed, cin, cout, h, w):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1, cin, h, w)).astype(np.float32)
    wt = (rng.standard_normal((cout, cin, 3, 3)) * 0.2).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.2).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1] * 4),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["y"], name="gap"),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, 1, 1])],
        [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    F = torch.nn.functional
    with torch.no_grad():
        y = F.conv2d(torch.from_numpy(x), torch.from_numpy(wt), torch.from_numpy(b),
                     padding=1).relu().mean(dim=(2, 3), keepdim=True)
    save_case(name, model, [("x", x)], [("y", y.numpy())])


conv_case("conv_wide", 1357, 16, 64, 55, 55)
conv_case("conv_short", 2468, 32, 32, 4, 40)
