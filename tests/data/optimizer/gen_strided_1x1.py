#!/usr/bin/python3
"""gen_strided_1x1.py — the strided_1x1 case: 1x1 Convs with strides
above 1 on a channels-last activation, which the CPU provider runs at unit
stride on the gathered pixels (kernels/dnnl/linalg_dnnl.c), with a torch
reference.  Odd sizes, so the last row and column are sampled too.

  x [N, 6, 13, 11] -> c0 3x3 pad 1 -> Relu -> c             (NHWC from here)
  c -> down 1x1 stride 2 (+ bias) -> d                        [N, 10, 7, 6]
  c -> main 3x3 stride 2 pad 1 -> m;  Relu(d + m) -> y1       (d + m fuses:
       FusedConv 1x1 stride 2 with a residual)
  c -> odd 1x1 strides (3, 2), no bias -> Relu -> y2          [N, 5, 5, 6]
Written with a symbolic batch N; the data set has N = 2.  Inputs and
weights lie on coarse binary grids (rnd), so the outputs are exact."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(1213)


def rnd(*shape, scale=0.3, step=1 / 16):
    """Normal values rounded to multiples of step, clipped to [-1, 1]:
    every sum of the case is then exact in float32 (at most 23 bits), so
    no kernel's order of additions can part from the reference, even
    where a residual sum nearly cancels."""
    v = np.clip(rng.standard_normal(shape) * scale, -1, 1)
    return (np.round(v / step) * step).astype(np.float32)


x = rnd(2, 6, 13, 11, scale=0.5, step=1 / 8)
w = {"w0": rnd(8, 6, 3, 3), "b0": rnd(8),
     "wd": rnd(10, 8, 1, 1), "bd": rnd(10),
     "wm": rnd(10, 8, 3, 3), "bm": rnd(10),
     "wo": rnd(5, 8, 1, 1)}
nodes = [
    helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="c0", pads=[1] * 4),
    helper.make_node("Relu", ["c0"], ["c"], name="relu0"),
    helper.make_node("Conv", ["c", "wd", "bd"], ["d"], name="down", strides=[2, 2]),
    helper.make_node("Conv", ["c", "wm", "bm"], ["m"], name="main", strides=[2, 2],
                     pads=[1] * 4),
    helper.make_node("Add", ["d", "m"], ["s"], name="add"),
    helper.make_node("Relu", ["s"], ["y1"], name="relu1"),
    helper.make_node("Conv", ["c", "wo"], ["o"], name="odd", strides=[3, 2]),
    helper.make_node("Relu", ["o"], ["y2"], name="relu2"),
]
vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
graph = helper.make_graph(
    nodes, "strided_1x1", [vi("x", ["N", 6, 13, 11])],
    [vi("y1", ["N", 10, 7, 6]), vi("y2", ["N", 5, 5, 6])],
    [numpy_helper.from_array(a, n) for n, a in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

F = torch.nn.functional
T = {k: torch.from_numpy(v) for k, v in w.items()}
with torch.no_grad():
    c = F.conv2d(torch.from_numpy(x), T["w0"], T["b0"], padding=1).relu()
    y1 = (F.conv2d(c, T["wd"], T["bd"], stride=2) +
          F.conv2d(c, T["wm"], T["bm"], stride=2, padding=1)).relu()
    y2 = F.conv2d(c, T["wo"], stride=(3, 2)).relu()
save_case("strided_1x1", model, [("x", x)], [("y1", y1.numpy()), ("y2", y2.numpy())])
