#!/usr/bin/python3
"""gen_conv_dw.py — 1x1 Conv + depthwise Conv pairs, which the optimizer
fuses into hetrt.FusedConvDw (opt_conv_dw.c) and the CPU provider runs
band by band (kernels/dnnl/linalg_dnnl.c).  Two cases:

conv_dw: small, with a torch reference (x [N, 8, 13, 11], data set N = 2);
  a 3x3 stem Conv (8 -> 8, pad 1, Relu) makes t, and a 1x1 Conv to 4
  channels (k_i) follows each pair, so the pairs' X and Y are inner values
  the layout pass stores channels-last (the banded path); each pair reads t:
  p1: 1x1 8->24 (+ bias) -> Clip(0, 6) -> dw 3x3 stride 2 pad 1 (+ bias)
      -> Clip(0, 6) -> k1 -> y1                              [N, 4, 7, 6]
  p2: 1x1 8->20 (no bias, no activation) -> dw 3x3 stride 1 pad 1
      (no bias) -> Relu -> k2 -> y2                          [N, 4, 13, 11]
  p3: 1x1 8->16 -> Relu -> dw 5x5 strides (2, 1), pads begin (2, 1) end
      (1, 2), asymmetric as tf2onnx writes SAME -> k3 -> y3  [N, 4, 6, 12]
  p4: 1x1 8->12 read by the dw 3x3 and by a Relu (two readers: not fused)
      -> k4 -> y4 (dw), y5 (Relu)
  p5: 1x1 8->16 -> LeakyRelu(0.125) -> dw 3x3 stride 1 pad 1 ->
      HardSigmoid(0.25, 0.5) -> k5 -> y6 (activations other than clamps,
      fused by name into each half)                          [N, 4, 13, 11]
  p6: 1x1 8->16 -> Relu -> dw 3x3 stride 1 pad 1 -> Relu, then a
      squeeze-excitation gate: GlobalAveragePool -> Sigmoid -> Mul with
      the pair's output -> k6 -> y7 (MobileNetV3's blocks; the Mul by a
      [N, C, 1, 1] gate keeps the pair's Y channels-last, layout.c's
      per_channel)                                           [N, 4, 13, 11]
  Inputs and weights lie on binary grids (rnd): every sum is exact in
  float32, so any order of additions matches the reference.

conv_dw_bands: no stored outputs; x [N, 8, 37, 97] through a 3x3 stem
  Conv, then 1x1 8->64 + Clip and dw 3x3 stride 1 (y1) or stride 2 (y2)
  + Clip, or 1x1 8->64 + Relu and dw 5x5 strides (2, 1), pads begin (2, 1)
  end (1, 2), no bias (y3), then a 1x1 Conv to 8 channels: its
  64-channel rows of 97 pixels (24.8 KB) make several bands of the 512 KB
  buffer (when the L2 is taken as 64 KiB) with a shorter last one, which
  test_cpu_layout.c compares with the generic plain path on batch 2."""

import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import HERE, save_case

rng = np.random.default_rng(2026)


def rnd(*shape, scale=0.3, step=1 / 16):
    v = np.clip(rng.standard_normal(shape) * scale, -1, 1)
    return (np.round(v / step) * step).astype(np.float32)


vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
F = torch.nn.functional

# ---- conv_dw ----
x = rnd(2, 8, 13, 11, scale=0.5, step=1 / 8)
w = {"w1": rnd(24, 8, 1, 1), "b1": rnd(24), "d1": rnd(24, 1, 3, 3),
     "e1": rnd(24), "w2": rnd(20, 8, 1, 1), "d2": rnd(20, 1, 3, 3),
     "w3": rnd(16, 8, 1, 1), "b3": rnd(16), "d3": rnd(16, 1, 5, 5),
     "e3": rnd(16), "w4": rnd(12, 8, 1, 1), "d4": rnd(12, 1, 3, 3),
     "ws": rnd(8, 8, 3, 3), "bs": rnd(8), "k1": rnd(4, 24, 1, 1),
     "k2": rnd(4, 20, 1, 1), "k3": rnd(4, 16, 1, 1), "k4": rnd(4, 12, 1, 1),
     "w5": rnd(16, 8, 1, 1), "b5": rnd(16), "d5": rnd(16, 1, 3, 3),
     "e5": rnd(16), "k5": rnd(4, 16, 1, 1), "w6": rnd(16, 8, 1, 1),
     "b6": rnd(16), "d6": rnd(16, 1, 3, 3), "e6": rnd(16),
     "k6": rnd(4, 16, 1, 1)}
lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
nodes = [
    helper.make_node("Conv", ["x", "ws", "bs"], ["ts"], name="stem",
                     pads=[1] * 4),
    helper.make_node("Relu", ["ts"], ["t"], name="stem_relu"),
    helper.make_node("Conv", ["t", "w1", "b1"], ["a1"], name="p1_expand"),
    helper.make_node("Clip", ["a1", "lo", "hi"], ["r1"], name="p1_clip0"),
    helper.make_node("Conv", ["r1", "d1", "e1"], ["s1"], name="p1_dw",
                     group=24, strides=[2, 2], pads=[1] * 4),
    helper.make_node("Clip", ["s1", "lo", "hi"], ["z1"], name="p1_clip1"),
    helper.make_node("Conv", ["t", "w2"], ["a2"], name="p2_expand"),
    helper.make_node("Conv", ["a2", "d2"], ["s2"], name="p2_dw", group=20,
                     pads=[1] * 4),
    helper.make_node("Relu", ["s2"], ["z2"], name="p2_relu"),
    helper.make_node("Conv", ["t", "w3", "b3"], ["a3"], name="p3_expand"),
    helper.make_node("Relu", ["a3"], ["r3"], name="p3_relu"),
    helper.make_node("Conv", ["r3", "d3", "e3"], ["z3"], name="p3_dw",
                     group=16, strides=[2, 1], pads=[2, 1, 1, 2]),
    helper.make_node("Conv", ["t", "w4"], ["a4"], name="p4_expand"),
    helper.make_node("Conv", ["a4", "d4"], ["z4"], name="p4_dw", group=12,
                     pads=[1] * 4),
    helper.make_node("Relu", ["a4"], ["y5"], name="p4_relu"),
    helper.make_node("Conv", ["t", "w5", "b5"], ["a5"], name="p5_expand"),
    helper.make_node("LeakyRelu", ["a5"], ["r5"], name="p5_leaky", alpha=0.125),
    helper.make_node("Conv", ["r5", "d5", "e5"], ["s5"], name="p5_dw",
                     group=16, pads=[1] * 4),
    helper.make_node("HardSigmoid", ["s5"], ["z5"], name="p5_hsig",
                     alpha=0.25, beta=0.5),
    helper.make_node("Conv", ["z5", "k5"], ["y6"], name="k5"),
    helper.make_node("Conv", ["t", "w6", "b6"], ["a6"], name="p6_expand"),
    helper.make_node("Relu", ["a6"], ["r6"], name="p6_relu0"),
    helper.make_node("Conv", ["r6", "d6", "e6"], ["s6"], name="p6_dw",
                     group=16, pads=[1] * 4),
    helper.make_node("Relu", ["s6"], ["z6"], name="p6_relu1"),
    helper.make_node("GlobalAveragePool", ["z6"], ["q6"], name="p6_pool"),
    helper.make_node("Sigmoid", ["q6"], ["g6"], name="p6_gate"),
    helper.make_node("Mul", ["z6", "g6"], ["m6"], name="p6_scale"),
    helper.make_node("Conv", ["m6", "k6"], ["y7"], name="k6"),
] + [helper.make_node("Conv", [f"z{i}", f"k{i}"], [f"y{i}"], name=f"k{i}")
     for i in range(1, 5)]
graph = helper.make_graph(
    nodes, "conv_dw", [vi("x", ["N", 8, 13, 11])],
    [vi("y1", ["N", 4, 7, 6]), vi("y2", ["N", 4, 13, 11]),
     vi("y3", ["N", 4, 6, 12]), vi("y4", ["N", 4, 13, 11]),
     vi("y5", ["N", 12, 13, 11]), vi("y6", ["N", 4, 13, 11]),
     vi("y7", ["N", 4, 13, 11])],
    [numpy_helper.from_array(a, n) for n, a in w.items()] + [lo, hi])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    X = F.conv2d(torch.from_numpy(x), T["ws"], T["bs"], padding=1).relu()
    r1 = F.conv2d(X, T["w1"], T["b1"]).clamp(0, 6)
    y1 = F.conv2d(r1, T["d1"], T["e1"], stride=2, padding=1, groups=24)
    y1 = y1.clamp(0, 6)
    a2 = F.conv2d(X, T["w2"])
    y2 = F.conv2d(a2, T["d2"], padding=1, groups=20).relu()
    r3 = F.conv2d(X, T["w3"], T["b3"]).relu()
    r3 = F.pad(r3, (1, 2, 2, 1))  # left, right, top, bottom
    y3 = F.conv2d(r3, T["d3"], T["e3"], stride=(2, 1), groups=16)
    a4 = F.conv2d(X, T["w4"])
    y4 = F.conv2d(a4, T["d4"], padding=1, groups=12)
    y5 = a4.relu()
    y1, y2, y3, y4 = (F.conv2d(z, T[f"k{i}"])
                      for i, z in enumerate((y1, y2, y3, y4), 1))
    r5 = F.leaky_relu(F.conv2d(X, T["w5"], T["b5"]), 0.125)
    s5 = F.conv2d(r5, T["d5"], T["e5"], padding=1, groups=16)
    y6 = F.conv2d((0.25 * s5 + 0.5).clamp(0, 1), T["k5"])
    r6 = F.conv2d(X, T["w6"], T["b6"]).relu()
    z6 = F.conv2d(r6, T["d6"], T["e6"], padding=1, groups=16).relu()
    g6 = z6.mean(dim=(2, 3), keepdim=True).sigmoid()
    y7 = F.conv2d(z6 * g6, T["k6"])
save_case("conv_dw", model, [("x", x)],
          [(n, t.numpy()) for n, t in
           [("y1", y1), ("y2", y2), ("y3", y3), ("y4", y4), ("y5", y5),
            ("y6", y6), ("y7", y7)]])

# ---- conv_dw_bands ----
w = {"w1": rnd(64, 8, 1, 1), "b1": rnd(64), "d1": rnd(64, 1, 3, 3),
     "e1": rnd(64), "w2": rnd(64, 8, 1, 1), "b2": rnd(64),
     "d2": rnd(64, 1, 3, 3), "e2": rnd(64), "ws": rnd(8, 8, 3, 3),
     "k1": rnd(8, 64, 1, 1), "k2": rnd(8, 64, 1, 1),
     "w3": rnd(64, 8, 1, 1), "d3": rnd(64, 1, 5, 5), "k3": rnd(8, 64, 1, 1)}
nodes = [helper.make_node("Conv", ["x", "ws"], ["t"], name="stem",
                          pads=[1] * 4)]
for i, s in ((1, 1), (2, 2)):
    nodes += [
        helper.make_node("Conv", ["t", f"w{i}", f"b{i}"], [f"a{i}"],
                         name=f"p{i}_expand"),
        helper.make_node("Clip", [f"a{i}", "lo", "hi"], [f"r{i}"],
                         name=f"p{i}_clip0"),
        helper.make_node("Conv", [f"r{i}", f"d{i}", f"e{i}"], [f"s{i}"],
                         name=f"p{i}_dw", group=64, strides=[s, s],
                         pads=[1] * 4),
        helper.make_node("Clip", [f"s{i}", "lo", "hi"], [f"z{i}"],
                         name=f"p{i}_clip1"),
        helper.make_node("Conv", [f"z{i}", f"k{i}"], [f"y{i}"], name=f"k{i}"),
    ]
nodes += [
    helper.make_node("Conv", ["t", "w3"], ["a3"], name="p3_expand"),
    helper.make_node("Relu", ["a3"], ["r3"], name="p3_relu"),
    helper.make_node("Conv", ["r3", "d3"], ["z3"], name="p3_dw", group=64,
                     strides=[2, 1], pads=[2, 1, 1, 2]),
    helper.make_node("Conv", ["z3", "k3"], ["y3"], name="k3"),
]
graph = helper.make_graph(
    nodes, "conv_dw_bands", [vi("x", ["N", 8, 37, 97])],
    [vi("y1", ["N", 8, 37, 97]), vi("y2", ["N", 8, 19, 49]),
     vi("y3", ["N", 8, 18, 96])],
    [numpy_helper.from_array(a, n) for n, a in w.items()] + [lo, hi])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
os.makedirs(os.path.join(HERE, "conv_dw_bands"), exist_ok=True)
onnx.save(model, os.path.join(HERE, "conv_dw_bands", "model.onnx"))
