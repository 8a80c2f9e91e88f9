#!/usr/bin/python3
"""gen_f16_region.py — the f16_region optimizer case: float16 values the
optimizer gives float32 storage (opt_f16.c), with every kind of region
edge: a float16 graph input (x) and a float16 weight read inside; a node
outside the list (CumSum) reading a value computed inside and feeding one
back; float16 graph outputs (y16, u) computed inside; a Cast to float32 of
a value computed inside (y32, which becomes an Identity); the model's own
Cast to float16 (of s) read inside.  Values are small multiples of 1/2,
so float16 and float32 arithmetic agree exactly and so does the numpy
reference."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(7)
H, F = TensorProto.FLOAT16, TensorProto.FLOAT
x = (rng.integers(-2, 3, (1, 2, 4, 4)) * 0.5).astype(np.float16)
s = (rng.integers(-4, 5, (1, 3, 4, 4)) * 0.5).astype(np.float32)
w = (rng.integers(-1, 2, (3, 2, 1, 1)) * 0.5).astype(np.float16)
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("CumSum", ["r", "axis"], ["k"], name="cumsum"),
    helper.make_node("Add", ["k", "r"], ["a"], name="add"),
    helper.make_node("Mul", ["a", "half"], ["y16"], name="mul"),
    helper.make_node("Cast", ["a"], ["y32"], to=F, name="a_to_f32"),
    helper.make_node("Cast", ["s"], ["t"], to=H, name="s_to_f16"),
    helper.make_node("Sub", ["t", "a"], ["u"], name="sub"),
]
inits = [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array(2, np.int64), "axis"),
         numpy_helper.from_array(np.array(0.5, np.float16), "half")]
graph = helper.make_graph(
    nodes, "f16_region",
    [helper.make_tensor_value_info("x", H, [1, 2, 4, 4]),
     helper.make_tensor_value_info("s", F, [1, 3, 4, 4])],
    [helper.make_tensor_value_info("y16", H, [1, 3, 4, 4]),
     helper.make_tensor_value_info("y32", F, [1, 3, 4, 4]),
     helper.make_tensor_value_info("u", H, [1, 3, 4, 4])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)

f64 = lambda arr: arr.astype(np.float64)
r = np.maximum(np.einsum("nchw,mc->nmhw", f64(x), f64(w)[:, :, 0, 0]), 0)
a = np.cumsum(r, axis=2) + r
save_case("f16_region", model, [("x", x), ("s", s)],
          [("y16", (a * 0.5).astype(np.float16)), ("y32", a.astype(np.float32)),
           ("u", (f64(s) - a).astype(np.float16))])
