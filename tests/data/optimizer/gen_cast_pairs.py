#!/usr/bin/python3
"""gen_cast_pairs.py — the cast_pairs optimizer case: Casts that change
nothing go (opt_f16.c, from the basic level): float16 -> float32 ->
float16 reads the float16 source (x), a Cast of s to its own type becomes
an Identity; float32 -> float16 -> float32 (of s, whose values float16
cannot hold) rounds and stays."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

H, F = TensorProto.FLOAT16, TensorProto.FLOAT
x = (np.arange(6).reshape(2, 3) * 0.5 - 1).astype(np.float16)
s = (np.arange(6).reshape(2, 3) * 0.1 + 0.05).astype(np.float32)
nodes = [
    helper.make_node("Cast", ["x"], ["a"], to=F, name="x_to_f32"),
    helper.make_node("Cast", ["a"], ["b"], to=H, name="back_to_f16"),
    helper.make_node("CumSum", ["b", "axis"], ["c"], name="cumsum_x"),
    helper.make_node("Cast", ["s"], ["d"], to=H, name="s_to_f16"),
    helper.make_node("Cast", ["d"], ["e"], to=F, name="rounded_s"),
    helper.make_node("Cast", ["s"], ["f"], to=F, name="s_to_f32"),
    helper.make_node("CumSum", ["f", "axis"], ["g"], name="cumsum_s"),
]
graph = helper.make_graph(
    nodes, "cast_pairs",
    [helper.make_tensor_value_info("x", H, [2, 3]),
     helper.make_tensor_value_info("s", F, [2, 3])],
    [helper.make_tensor_value_info("c", H, [2, 3]),
     helper.make_tensor_value_info("e", F, [2, 3]),
     helper.make_tensor_value_info("g", F, [2, 3])],
    [numpy_helper.from_array(np.array(0, np.int64), "axis")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
save_case("cast_pairs", model, [("x", x), ("s", s)],
          [("c", np.cumsum(x.astype(np.float64), axis=0).astype(np.float16)),
           ("e", s.astype(np.float16).astype(np.float32)),
           ("g", np.cumsum(s.astype(np.float64), axis=0).astype(np.float32))])
