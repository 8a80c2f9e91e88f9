#!/usr/bin/python3
"""gen_overlap_model.py OUT.onnx — the overlap benchmark's model: one
64-channel 3x3 convolution and a Relu on a 1x64x112x112 float32 input
(3.2 MB in, 3.2 MB out), so that with the emu profile bench/overlap.yaml
the copies to and from the device take about as long as the compute."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05
b = rng.standard_normal(64).astype(np.float32) * 0.1
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                      pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"], name="relu")],
    "overlap",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 112, 112])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 112, 112])],
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
