#!/usr/bin/python3
"""gen_fire.py — the fire case: SqueezeNet-style Concats along channels
for opt_concat.c, with a torch reference.

  x -> sq1 1x1 -> Relu -> s1
  s1 -> e1 1x1 -> Relu -> a;  s1 -> e3 3x3 -> Relu -> b
  Concat(a, b) -> MaxPool 3x3/2 (ceil) -> sq2 1x1 -> Relu -> s2
      (the MaxPool moves above the Concat, then sq2 splits in two)
  s2 -> t1 1x1 -> Relu;  s2 -> t2 3x3 -> Relu
  Concat(t1, t2, s2) -> sq3 3x3 -> Clip(0, 6) -> y1   (three-way split)
  Concat(t1, t2) -> wide 1x1 (40 channels: output too large, kept) -> y2
  Concat(s2, t1) -> GlobalAveragePool -> y3    (pool moves, Concat stays)
Also writes fire_dyn: the same model with a symbolic batch N."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(777)


def rnd(*shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


x = rnd(1, 8, 15, 15, scale=1.0)
w = {
    "wsq1": rnd(6, 8, 1, 1), "bsq1": rnd(6),
    "we1": rnd(10, 6, 1, 1), "be1": rnd(10),
    "we3": rnd(12, 6, 3, 3), "be3": rnd(12),
    "wsq2": rnd(5, 22, 1, 1), "bsq2": rnd(5),
    "wt1": rnd(7, 5, 1, 1), "bt1": rnd(7),
    "wt2": rnd(9, 5, 3, 3), "bt2": rnd(9),
    "wsq3": rnd(4, 21, 3, 3), "bsq3": rnd(4) + 1,
    "wwide": rnd(40, 16, 1, 1), "bwide": rnd(40),
}


def conv(name, x, wn, bn, out, **kw):
    return helper.make_node("Conv", [x, wn, bn], [out], name=name, **kw)


nodes = [
    conv("sq1", "x", "wsq1", "bsq1", "c_sq1"),
    helper.make_node("Relu", ["c_sq1"], ["s1"], name="relu_sq1"),
    conv("e1", "s1", "we1", "be1", "c_e1"),
    helper.make_node("Relu", ["c_e1"], ["a"], name="relu_e1"),
    conv("e3", "s1", "we3", "be3", "c_e3", pads=[1] * 4),
    helper.make_node("Relu", ["c_e3"], ["b"], name="relu_e3"),
    helper.make_node("Concat", ["a", "b"], ["ab"], name="cat1", axis=1),
    helper.make_node("MaxPool", ["ab"], ["p"], name="pool", kernel_shape=[3, 3],
                     strides=[2, 2], ceil_mode=1),
    conv("sq2", "p", "wsq2", "bsq2", "c_sq2"),
    helper.make_node("Relu", ["c_sq2"], ["s2"], name="relu_sq2"),
    conv("t1", "s2", "wt1", "bt1", "c_t1"),
    helper.make_node("Relu", ["c_t1"], ["t1r"], name="relu_t1"),
    conv("t2", "s2", "wt2", "bt2", "c_t2", pads=[1] * 4),
    helper.make_node("Relu", ["c_t2"], ["t2r"], name="relu_t2"),
    helper.make_node("Concat", ["t1r", "t2r", "s2"], ["cat3"], name="cat3",
                     axis=1),
    conv("sq3", "cat3", "wsq3", "bsq3", "c_sq3", pads=[1] * 4),
    helper.make_node("Clip", ["c_sq3", "lo", "hi"], ["y1"], name="clip_sq3"),
    helper.make_node("Concat", ["t1r", "t2r"], ["cat_wide"], name="cat_wide",
                     axis=-3),
    conv("wide", "cat_wide", "wwide", "bwide", "y2"),
    helper.make_node("Concat", ["s2", "t1r"], ["cat_gap"], name="cat_gap",
                     axis=1),
    helper.make_node("GlobalAveragePool", ["cat_gap"], ["y3"], name="gap"),
]
inits = [numpy_helper.from_array(a, n) for n, a in w.items()]
inits += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
          numpy_helper.from_array(np.array(6, np.float32), "hi")]
graph = helper.make_graph(
    nodes, "fire",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 15, 15])],
    [helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 4, 7, 7]),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, [1, 40, 7, 7]),
     helper.make_tensor_value_info("y3", TensorProto.FLOAT, [1, 12, 1, 1])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

F = torch.nn.functional
T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    X = torch.from_numpy(x)
    s1 = F.conv2d(X, T["wsq1"], T["bsq1"]).relu()
    a = F.conv2d(s1, T["we1"], T["be1"]).relu()
    b = F.conv2d(s1, T["we3"], T["be3"], padding=1).relu()
    p = F.max_pool2d(torch.cat([a, b], 1), 3, 2, ceil_mode=True)
    s2 = F.conv2d(p, T["wsq2"], T["bsq2"]).relu()
    t1 = F.conv2d(s2, T["wt1"], T["bt1"]).relu()
    t2 = F.conv2d(s2, T["wt2"], T["bt2"], padding=1).relu()
    y1 = F.conv2d(torch.cat([t1, t2, s2], 1), T["wsq3"], T["bsq3"],
                  padding=1).clamp(0, 6)
    y2 = F.conv2d(torch.cat([t1, t2], 1), T["wwide"], T["bwide"])
    y3 = torch.cat([s2, t1], 1).mean(dim=(2, 3), keepdim=True)


outputs = [("y1", y1.numpy()), ("y2", y2.numpy()), ("y3", y3.numpy())]
save_case("fire", model, [("x", x)], outputs)
for vi in list(model.graph.input) + list(model.graph.output):
    vi.type.tensor_type.shape.dim[0].dim_param = "N"
onnx.checker.check_model(model)
save_case("fire_dyn", model, [("x", x)], outputs)
