#!/usr/bin/python3
"""gen_hard_acts.py — the hard_acts optimizer cases, with torch references:
hard_acts: four Convs, each followed by one written-out form of a hard
activation (opset 13): paddle2onnx's hard-swish (x * Clip(x + 3, 0, 6) / 6),
a hard-sigmoid as Clip(x + 3, 0, 6) * (1/6), torch's x * HardSigmoid(x;
1/6, 1/2), and paddle's hard_sigmoid Clip(x * 0.2 + 0.5, 0, 1); the
optimizer turns each into the op and its Conv takes it over.
hard_acts_near_miss: the paddle hard-swish dividing by 5, and a
hard-sigmoid whose Clip output is also read by a second node: neither is
rewritten."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(77)
F = TensorProto.FLOAT


def w(*shape):
    return (rng.standard_normal(shape) * 0.6).astype(np.float32)


def c(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


x = (rng.standard_normal((1, 3, 8, 8)) * 3).astype(np.float32)
ws = [w(6, 3, 3, 3), w(6, 6, 1, 1), w(6, 6, 3, 3), w(4, 6, 1, 1)]
nodes = [
    helper.make_node("Conv", ["x", "w0"], ["c0"], name="conv0", pads=[1] * 4),
    helper.make_node("Add", ["c0", "three"], ["a0"], name="hs_add"),
    helper.make_node("Clip", ["a0", "zero", "six"], ["k0"], name="hs_clip"),
    helper.make_node("Mul", ["c0", "k0"], ["m0"], name="hs_mul"),
    helper.make_node("Div", ["m0", "six"], ["y0"], name="hs_div"),
    helper.make_node("Conv", ["y0", "w1"], ["c1"], name="conv1"),
    helper.make_node("Add", ["three", "c1"], ["a1"], name="hsig_add"),
    helper.make_node("Clip", ["a1", "zero", "six"], ["k1"], name="hsig_clip"),
    helper.make_node("Mul", ["k1", "sixth"], ["y1"], name="hsig_scale"),
    helper.make_node("Conv", ["y1", "w2"], ["c2"], name="conv2", pads=[1] * 4),
    helper.make_node("HardSigmoid", ["c2"], ["h2"], name="torch_hsig",
                     alpha=1.0 / 6, beta=0.5),
    helper.make_node("Mul", ["h2", "c2"], ["y2"], name="torch_hswish"),
    helper.make_node("Conv", ["y2", "w3"], ["c3"], name="conv3"),
    helper.make_node("Mul", ["c3", "slope"], ["m3"], name="p_mul"),
    helper.make_node("Add", ["m3", "offset"], ["a3"], name="p_add"),
    helper.make_node("Clip", ["a3", "zero", "one"], ["y"], name="p_clip"),
]
consts = [c("three", 3), c("zero", 0), c("six", 6), c("one", 1),
          c("sixth", 1 / 6), c("slope", 0.2), c("offset", 0.5)]
inits = [numpy_helper.from_array(a, "w%d" % i) for i, a in enumerate(ws)]
graph = helper.make_graph(nodes, "hard_acts", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", F, [1, 4, 8, 8])], inits + consts)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
t = torch.nn.functional
with torch.no_grad():
    d = lambda a: torch.from_numpy(a).double()
    h = t.conv2d(d(x), d(ws[0]), padding=1)
    h = h * (h + 3).clamp(0, 6) / 6
    h = t.conv2d(h, d(ws[1]))
    h = (h + 3).clamp(0, 6) / 6
    h = t.conv2d(h, d(ws[2]), padding=1)
    h = h * (h / 6 + 0.5).clamp(0, 1)
    h = t.conv2d(h, d(ws[3]))
    y = (h * 0.2 + 0.5).clamp(0, 1)
save_case("hard_acts", model, [("x", x)], [("y", y.float().numpy())])

wa, wb = w(4, 3, 3, 3), w(4, 4, 1, 1)
nodes = [
    helper.make_node("Conv", ["x", "wa"], ["c0"], name="conv0", pads=[1] * 4),
    helper.make_node("Add", ["c0", "three"], ["a0"], name="add0"),
    helper.make_node("Clip", ["a0", "zero", "six"], ["k0"], name="clip0"),
    helper.make_node("Mul", ["c0", "k0"], ["m0"], name="mul0"),
    helper.make_node("Div", ["m0", "five"], ["y0"], name="div_by_5"),
    helper.make_node("Conv", ["y0", "wb"], ["c1"], name="conv1"),
    helper.make_node("Add", ["c1", "three"], ["a1"], name="add1"),
    helper.make_node("Clip", ["a1", "zero", "six"], ["k1"], name="clip1"),
    helper.make_node("Div", ["k1", "six"], ["s1"], name="div1"),
    helper.make_node("Add", ["s1", "k1"], ["y"], name="reads_clip_too"),
]
graph = helper.make_graph(
    nodes, "hard_acts_near_miss", [helper.make_tensor_value_info("x", F, [1, 3, 8, 8])],
    [helper.make_tensor_value_info("y", F, [1, 4, 8, 8])],
    [numpy_helper.from_array(wa, "wa"), numpy_helper.from_array(wb, "wb"),
     c("three", 3), c("zero", 0), c("six", 6), c("five", 5)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
with torch.no_grad():
    h = t.conv2d(d(x), d(wa), padding=1)
    h = h * (h + 3).clamp(0, 6) / 5
    h = t.conv2d(h, d(wb))
    k = (h + 3).clamp(0, 6)
    y = k / 6 + k
save_case("hard_acts_near_miss", model, [("x", x)], [("y", y.float().numpy())])
