#!/usr/bin/python3
"""gen_dw_chain.py — the dw_chain case: 1x1 Conv -> depthwise 3x3 Conv ->
1x1 Conv (a MobileNet block, 16 channels at 10x10), with a torch
reference; test_cpu_layout.c plans its layouts."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(5)
x = rng.standard_normal((1, 8, 10, 10)).astype(np.float32)
w1 = (rng.standard_normal((16, 8, 1, 1)) * 0.3).astype(np.float32)
wd = (rng.standard_normal((16, 1, 3, 3)) * 0.3).astype(np.float32)
w2 = (rng.standard_normal((8, 16, 1, 1)) * 0.3).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w1"], ["a"], name="expand"),
    helper.make_node("Conv", ["a", "wd"], ["d"], name="dw", group=16,
                     pads=[1] * 4),
    helper.make_node("Conv", ["d", "w2"], ["y"], name="project"),
]
inits = [numpy_helper.from_array(a, n) for a, n in
         [(w1, "w1"), (wd, "wd"), (w2, "w2")]]
graph = helper.make_graph(
    nodes, "dw_chain",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 10, 10])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
t = torch.nn.functional
with torch.no_grad():
    a = t.conv2d(torch.from_numpy(x), torch.from_numpy(w1))
    d = t.conv2d(a, torch.from_numpy(wd), padding=1, groups=16)
    y = t.conv2d(d, torch.from_numpy(w2))
save_case("dw_chain", model, [("x", x)], [("y", y.numpy())])
