#!/usr/bin/python3
"""gen_se_gates.py — broadcasting Add/Sub/Mul/Div after a Conv, for the CPU
layout pass (providers/cpu/layout.c, per_channel) and the NHWC broadcast of
het_ew_binary (kernels/elementwise.c).  Writes se_gates:

  x [N, 8, 9, 7] -> stem 3x3 Conv (pad 1) + Relu -> t (channels-last)
  g1: t * sigmoid(GlobalAveragePool(t))  [N, 8, 1, 1] gate -> k1 -> y1
  g2: t + constant [8, 1, 1] (rank 3)                      -> k2 -> y2
  g3: t - constant [1, 8, 1, 1]                            -> k3 -> y3
  g4: t + constant [8, 9, 7] (rank 3, a value per pixel and
      channel, as a positional table: NCHW only)           -> k4 -> y4
  g5: t * constant [8, 1, 7] (channels and W: NCHW only)   -> k5 -> y5

k_i are 1x1 Convs to 4 channels, so each gate's input and output lie
between Convs: g1-g3 go channels-last and broadcast over the stored
N, H, W, C order; g4 and g5 stay NCHW (and with them t, the stem's
output, so the session test runs each layout): their constants are stored
C, H, W, which an N, H, W, C broadcast would misread.  A second model,
se_gates_nhwc, drops g4 and g5: there t and g1-g3 are channels-last.
Reference: torch."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(7)
F = torch.nn.functional


def rnd(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
x = rnd(2, 8, 9, 7, scale=1.0)
w = {"ws": rnd(8, 8, 3, 3), "c2": rnd(8, 1, 1), "c3": rnd(1, 8, 1, 1),
     "c4": rnd(8, 9, 7), "c5": rnd(8, 1, 7)}
for i in range(1, 6):
    w[f"k{i}"] = rnd(4, 8, 1, 1)
T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    t = F.conv2d(torch.from_numpy(x), T["ws"], padding=1).relu()
    gates = {1: t * t.mean(dim=(2, 3), keepdim=True).sigmoid(),
             2: t + T["c2"], 3: t - T["c3"], 4: t + T["c4"], 5: t * T["c5"]}
    ys = {i: F.conv2d(z, T[f"k{i}"]) for i, z in gates.items()}


def build(name, cases):
    nodes = [helper.make_node("Conv", ["x", "ws"], ["ts"], name="stem",
                              pads=[1] * 4),
             helper.make_node("Relu", ["ts"], ["t"], name="stem_relu")]
    for i in cases:
        if i == 1:
            nodes += [helper.make_node("GlobalAveragePool", ["t"], ["q1"],
                                       name="g1_pool"),
                      helper.make_node("Sigmoid", ["q1"], ["s1"],
                                       name="g1_sigmoid"),
                      helper.make_node("Mul", ["t", "s1"], ["z1"], name="g1")]
        else:
            op = {2: "Add", 3: "Sub", 4: "Add", 5: "Mul"}[i]
            nodes.append(helper.make_node(op, ["t", f"c{i}"], [f"z{i}"],
                                          name=f"g{i}"))
        nodes.append(helper.make_node("Conv", [f"z{i}", f"k{i}"], [f"y{i}"],
                                      name=f"k{i}"))
    used = {"ws"} | {f"k{i}" for i in cases} | {f"c{i}" for i in cases}
    graph = helper.make_graph(
        nodes, name, [vi("x", ["N", 8, 9, 7])],
        [vi(f"y{i}", ["N", 4, 9, 7]) for i in cases],
        [numpy_helper.from_array(a, n) for n, a in w.items() if n in used])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    save_case(name, model, [("x", x)],
              [(f"y{i}", ys[i].numpy()) for i in cases])


build("se_gates", [1, 2, 3, 4, 5])
build("se_gates_nhwc", [1, 2, 3])
