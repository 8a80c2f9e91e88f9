#!/usr/bin/python3
"""gen_conv_pool.py — Conv + MaxPool pairs, which the optimizer fuses into
hetrt.FusedConvPool (opt_conv_pool.c) and the CPU provider runs band by
band (kernels/dnnl/linalg_dnnl.c), and 1x1 Convs with a residual, which
it runs in residual bands.  Three cases:

conv_pool: a torch reference (x [N, 3, 95, 97], an image input: NCHW, 3
  channels; data set N = 1); the fused Convs' outputs take 512 KiB or
  more an image (opt_conv_pool.c fuses no smaller ones):
  q1: Conv 3->64 7x7 stride 2 pad 3 (+ bias) -> Relu -> MaxPool 3x3
      stride 2 pad 1 (ResNet's stem) -> 1x1 Conv to 4 channels -> y1
                                                            [N, 4, 24, 25]
  q2: Conv 3->64 3x3 stride 2 (no bias) -> Relu -> MaxPool 3x3 stride 2
      ceil_mode (SqueezeNet's stem) -> 1x1 Conv to 4 channels -> y2
                                                            [N, 4, 23, 24]
  (the 1x1 Convs after the pools keep their outputs channels-last inside,
  so the pairs run in bands on one thread where the L2 is smaller than
  their Conv outputs: 1 MiB here against 602 and 564 KiB, so whole)
  q3: a 1x1 stem Conv 3->8 makes t (channels-last inside), then Conv
      8->16 3x3 pad 1 in 2 groups -> Clip(0, 6) -> MaxPool 2x2 stride 2
      (VGG) -> 1x1 Conv to 4 channels -> y3                 [N, 4, 47, 48]
  q4: Conv 8->16 1x1 on t -> MaxPool 3x3 stride 1, pads begin (1, 0) end
      (2, 1) (asymmetric) -> 1x1 Conv to 2 channels -> y4  [N, 2, 96, 97]
  q5: Conv 8->6 3x3 pad 1 in 2 groups on t read by a MaxPool 2x2 and by
      a GlobalAveragePool (two readers: not fused) -> y5, y6
  q6: Conv 8->2 1x1 on t -> MaxPool 2x2 with its Indices output read
      (not fused) -> y7, y8 (Indices, int64)
  q7: Conv 8->4 3x3 stride 4 on t (2400 values: too small to fuse) ->
      MaxPool 2x2 -> y9                                     [N, 4, 12, 12]
  Inputs and weights lie on binary grids (rnd): every sum is exact in
  float32, so any order of additions matches the reference; no Conv is
  3x3 stride 1 in one group, which cpu.conv_algo=auto could time into
  Winograd (not exact: y4 once came out 5e-7 off a -3e-5 value).

conv_pool_bands: no stored outputs; x [N, 3, 99, 115] (an image input)
  and x2 [N, 16, 45, 71] (read channels-last through a 1x1 Conv):
  b1: Conv 3->64 7x7 stride 2 pad 3 -> Relu -> MaxPool 3x3 stride 2
      pad 1 -> y1                                           [N, 64, 25, 29]
  b2: Conv 3->64 3x3 stride 2 -> Relu -> MaxPool 3x3 stride 2 ceil_mode
      -> y2                                                 [N, 64, 24, 28]
  b3: 1x1 Conv 16->16 on x2 (t), then Conv 16->64 3x3 pad 1 in 2 groups
      -> Relu -> MaxPool 3x3 stride 2 pads (1, 1, 2, 0) -> y3
                                                            [N, 64, 23, 35]
  whose Conv outputs (715 to 818 KiB an image) make bands of one or two
  rows when the L2 is taken as 64 KiB; test_cpu_layout.c compares them
  with the generic plain path on batch 2.

conv_add_bands: no stored outputs; x [N, 16, 37, 97] through a 1x1 Conv
  to 64 channels (t), then Relu(1x1 Conv 64->64 (t) + 1x1 Conv 64->64
  (t)) -> y: the first Conv becomes a hetrt.FusedConv whose residual
  (64-channel rows of 97 pixels, 24.8 KB) the CPU provider reads in bands
  of 10 rows and a last one of 7 when the L2 is taken as 64 KiB;
  test_cpu_layout.c compares them with the generic plain path."""

import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import HERE, save_case

rng = np.random.default_rng(2027)


def rnd(*shape, scale=0.3, step=1 / 16):
    v = np.clip(rng.standard_normal(shape) * scale, -1, 1)
    return (np.round(v / step) * step).astype(np.float32)


vi = lambda n, s, t=TensorProto.FLOAT: helper.make_tensor_value_info(n, t, s)
F = torch.nn.functional
node = helper.make_node

# ---- conv_pool ----
x = rnd(1, 3, 95, 97, scale=0.5, step=1 / 8)
w = {"w1": rnd(64, 3, 7, 7), "b1": rnd(64), "w2": rnd(64, 3, 3, 3),
     "k1": rnd(4, 64, 1, 1), "k2": rnd(4, 64, 1, 1), "ws": rnd(8, 3, 1, 1), "bs": rnd(8), "w3": rnd(16, 4, 3, 3),
     "b3": rnd(16), "k3": rnd(4, 16, 1, 1), "w4": rnd(16, 8, 1, 1),
     "b4": rnd(16), "k4": rnd(2, 16, 1, 1), "w5": rnd(6, 4, 3, 3),
     "w6": rnd(2, 8, 1, 1), "w7": rnd(4, 8, 3, 3)}
lo = numpy_helper.from_array(np.array(0, np.float32), "lo")
hi = numpy_helper.from_array(np.array(6, np.float32), "hi")
nodes = [
    node("Conv", ["x", "w1", "b1"], ["a1"], name="q1_conv", strides=[2, 2],
         pads=[3] * 4),
    node("Relu", ["a1"], ["r1"], name="q1_relu"),
    node("MaxPool", ["r1"], ["p1"], name="q1_pool", kernel_shape=[3, 3],
         strides=[2, 2], pads=[1] * 4),
    node("Conv", ["p1", "k1"], ["y1"], name="k1"),
    node("Conv", ["x", "w2"], ["a2"], name="q2_conv", strides=[2, 2]),
    node("Relu", ["a2"], ["r2"], name="q2_relu"),
    node("MaxPool", ["r2"], ["p2"], name="q2_pool", kernel_shape=[3, 3],
         strides=[2, 2], ceil_mode=1),
    node("Conv", ["p2", "k2"], ["y2"], name="k2"),
    node("Conv", ["x", "ws", "bs"], ["t"], name="stem"),
    node("Conv", ["t", "w3", "b3"], ["a3"], name="q3_conv", pads=[1] * 4,
         group=2),
    node("Clip", ["a3", "lo", "hi"], ["r3"], name="q3_clip"),
    node("MaxPool", ["r3"], ["p3"], name="q3_pool", kernel_shape=[2, 2],
         strides=[2, 2]),
    node("Conv", ["p3", "k3"], ["y3"], name="k3"),
    node("Conv", ["t", "w4", "b4"], ["a4"], name="q4_conv"),
    node("MaxPool", ["a4"], ["p4"], name="q4_pool", kernel_shape=[3, 3],
         pads=[1, 0, 2, 1]),
    node("Conv", ["p4", "k4"], ["y4"], name="k4"),
    node("Conv", ["t", "w5"], ["a5"], name="q5_conv", pads=[1] * 4,
         group=2),
    node("MaxPool", ["a5"], ["y5"], name="q5_pool", kernel_shape=[2, 2],
         strides=[2, 2]),
    node("GlobalAveragePool", ["a5"], ["y6"], name="q5_gap"),
    node("Conv", ["t", "w6"], ["a6"], name="q6_conv"),
    node("MaxPool", ["a6"], ["y7", "y8"], name="q6_pool",
         kernel_shape=[2, 2], strides=[2, 2]),
    node("Conv", ["t", "w7"], ["a7"], name="q7_conv", strides=[4, 4],
         pads=[1] * 4),
    node("MaxPool", ["a7"], ["y9"], name="q7_pool", kernel_shape=[2, 2],
         strides=[2, 2]),
]
graph = helper.make_graph(
    nodes, "conv_pool", [vi("x", ["N", 3, 95, 97])],
    [vi("y1", ["N", 4, 24, 25]), vi("y2", ["N", 4, 23, 24]),
     vi("y3", ["N", 4, 47, 48]), vi("y4", ["N", 2, 96, 97]),
     vi("y5", ["N", 6, 47, 48]), vi("y6", ["N", 6, 1, 1]),
     vi("y7", ["N", 2, 47, 48]), vi("y8", ["N", 2, 47, 48], TensorProto.INT64),
     vi("y9", ["N", 4, 12, 12])],
    [numpy_helper.from_array(a, n) for n, a in w.items()] + [lo, hi])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    X = torch.from_numpy(x)
    y1 = F.max_pool2d(F.conv2d(X, T["w1"], T["b1"], stride=2, padding=3).relu(),
                      3, 2, 1)
    y2 = F.max_pool2d(F.conv2d(X, T["w2"], stride=2).relu(), 3, 2,
                      ceil_mode=True)
    y1, y2 = F.conv2d(y1, T["k1"]), F.conv2d(y2, T["k2"])
    t = F.conv2d(X, T["ws"], T["bs"])
    r3 = F.conv2d(t, T["w3"], T["b3"], padding=1, groups=2).clamp(0, 6)
    y3 = F.conv2d(F.max_pool2d(r3, 2, 2), T["k3"])
    a4 = F.pad(F.conv2d(t, T["w4"], T["b4"]), (0, 1, 1, 2),
               value=float("-inf"))  # left, right, top, bottom
    y4 = F.conv2d(F.max_pool2d(a4, 3, 1), T["k4"])
    a5 = F.conv2d(t, T["w5"], padding=1, groups=2)
    y5, y6 = F.max_pool2d(a5, 2, 2), a5.mean(dim=(2, 3), keepdim=True)
    a6 = F.conv2d(t, T["w6"])
    y7, y8 = F.max_pool2d(a6, 2, 2, return_indices=True)
    # ONNX counts Indices over the whole tensor, torch within each plane
    y8 = y8 + (torch.arange(2).reshape(1, 2, 1, 1) * 95 * 97)
    y9 = F.max_pool2d(F.conv2d(t, T["w7"], stride=4, padding=1), 2, 2)
save_case("conv_pool", model, [("x", x)],
          [(n, t.numpy()) for n, t in
           [("y1", y1), ("y2", y2), ("y3", y3), ("y4", y4), ("y5", y5),
            ("y6", y6), ("y7", y7), ("y8", y8), ("y9", y9)]])

# ---- conv_pool_bands ----
w = {"w1": rnd(64, 3, 7, 7), "b1": rnd(64), "w2": rnd(64, 3, 3, 3),
     "wt": rnd(16, 16, 1, 1), "w3": rnd(64, 8, 3, 3), "b3": rnd(64)}
nodes = [
    node("Conv", ["x", "w1", "b1"], ["a1"], name="b1_conv", strides=[2, 2],
         pads=[3] * 4),
    node("Relu", ["a1"], ["r1"], name="b1_relu"),
    node("MaxPool", ["r1"], ["y1"], name="b1_pool", kernel_shape=[3, 3],
         strides=[2, 2], pads=[1] * 4),
    node("Conv", ["x", "w2"], ["a2"], name="b2_conv", strides=[2, 2]),
    node("Relu", ["a2"], ["r2"], name="b2_relu"),
    node("MaxPool", ["r2"], ["y2"], name="b2_pool", kernel_shape=[3, 3],
         strides=[2, 2], ceil_mode=1),
    node("Conv", ["x2", "wt"], ["t"], name="b3_in"),
    node("Conv", ["t", "w3", "b3"], ["a3"], name="b3_conv", pads=[1] * 4,
         group=2),
    node("Relu", ["a3"], ["r3"], name="b3_relu"),
    node("MaxPool", ["r3"], ["y3"], name="b3_pool", kernel_shape=[3, 3],
         strides=[2, 2], pads=[1, 1, 2, 0]),
]
graph = helper.make_graph(
    nodes, "conv_pool_bands",
    [vi("x", ["N", 3, 99, 115]), vi("x2", ["N", 16, 45, 71])],
    [vi("y1", ["N", 64, 25, 29]), vi("y2", ["N", 64, 24, 28]),
     vi("y3", ["N", 64, 23, 35])],
    [numpy_helper.from_array(a, n) for n, a in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
os.makedirs(os.path.join(HERE, "conv_pool_bands"), exist_ok=True)
onnx.save(model, os.path.join(HERE, "conv_pool_bands", "model.onnx"))

# ---- conv_add_bands ----
w = {"wt": rnd(64, 16, 1, 1), "bt": rnd(64), "wa": rnd(64, 64, 1, 1),
     "wb": rnd(64, 64, 1, 1), "bb": rnd(64)}
nodes = [
    node("Conv", ["x", "wt", "bt"], ["t"], name="stem"),
    node("Conv", ["t", "wa"], ["z"], name="side"),
    node("Conv", ["t", "wb", "bb"], ["c"], name="main"),
    node("Add", ["c", "z"], ["s"], name="add"),
    node("Relu", ["s"], ["y"], name="relu"),
]
graph = helper.make_graph(
    nodes, "conv_add_bands", [vi("x", ["N", 16, 37, 97])],
    [vi("y", ["N", 64, 37, 97])],
    [numpy_helper.from_array(a, n) for n, a in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
os.makedirs(os.path.join(HERE, "conv_add_bands"), exist_ok=True)
onnx.save(model, os.path.join(HERE, "conv_add_bands", "model.onnx"))
