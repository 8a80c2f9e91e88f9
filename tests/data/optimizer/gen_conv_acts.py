#!/usr/bin/python3
"""gen_conv_acts.py — the conv_acts optimizer case: five Convs, each
followed by one of the activations opt_activation.c fuses by name
(LeakyRelu alpha 0.1, HardSigmoid alpha 0.3 beta 0.4, HardSwish, Sigmoid,
Tanh), 16 channels at 9x9 (so the CPU layout pass runs them NHWC on
oneDNN), with a torch reference; at level extended every activation goes
into its Conv."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(77)
x = (rng.standard_normal((1, 16, 9, 9)) * 2).astype(np.float32)
ws = [(rng.standard_normal((16, 16, 3, 3)) * 0.15).astype(np.float32)
      for _ in range(5)]
bs = [(rng.standard_normal(16) * 0.5).astype(np.float32) for _ in range(5)]
acts = [("LeakyRelu", {"alpha": 0.1}), ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
        ("HardSwish", {}), ("Sigmoid", {}), ("Tanh", {})]
nodes, inits, cur = [], [], "x"
for i, (op, attrs) in enumerate(acts):
    nodes.append(helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"c{i}"],
                                  name=f"conv{i}", pads=[1] * 4))
    out = "y" if i == len(acts) - 1 else f"a{i}"
    nodes.append(helper.make_node(op, [f"c{i}"], [out], name=f"act{i}", **attrs))
    inits += [numpy_helper.from_array(ws[i], f"w{i}"),
              numpy_helper.from_array(bs[i], f"b{i}")]
    cur = out
graph = helper.make_graph(
    nodes, "conv_acts",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 9, 9])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 9, 9])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(model)
t = torch.nn.functional
with torch.no_grad():
    h = torch.from_numpy(x)
    fns = [lambda v: t.leaky_relu(v, 0.1),
           lambda v: torch.clamp(0.3 * v + 0.4, 0, 1),
           t.hardswish, torch.sigmoid, torch.tanh]
    for i, fn in enumerate(fns):
        h = fn(t.conv2d(h, torch.from_numpy(ws[i]), torch.from_numpy(bs[i]),
                        padding=1))
save_case("conv_acts", model, [("x", x)], [("y", h.numpy())])
