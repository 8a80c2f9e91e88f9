#!/usr/bin/python3
"""gen_overlap_model.py OUT.onnx [MICROBATCHES] — the overlap benchmark's
model: per micro-batch, one 64-channel 3x3 convolution and a Relu on a
1x64x112x112 float32 input (3.2 MB in, 3.2 MB out; inputs x0.., outputs
y0..), so that with the emu profile bench/overlap.yaml the copies to and
from the device take a good part of the compute's time, and with several
micro-batches one's copies can overlap another's compute."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32) * 0.05
b = rng.standard_normal(64).astype(np.float32) * 0.1
k = int(sys.argv[2]) if len(sys.argv) > 2 else 1
nodes, ins, outs = [], [], []
for i in range(k):
    nodes += [helper.make_node("Conv", [f"x{i}", "w", "b"], [f"c{i}"],
                               name=f"conv{i}", pads=[1, 1, 1, 1]),
              helper.make_node("Relu", [f"c{i}"], [f"y{i}"], name=f"relu{i}")]
    ins.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT,
                                             [1, 64, 112, 112]))
    outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT,
                                              [1, 64, 112, 112]))
graph = helper.make_graph(
    nodes, "overlap", ins, outs,
    [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
