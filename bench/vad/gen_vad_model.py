#!/usr/bin/python3
"""gen_vad_model.py OUT.onnx — a small recurrent voice-activity detector in
the shape of the ones applications ship (Silero-style): per 512-sample
frame, two strided 1-D Convs, an LSTM (hidden 64) over the 128 frames they
leave, a Linear and a Sigmoid, all inside an If whose condition is "the
frame is not silent" (else: probability 0, state passed through).  Inputs
x [1,1,512], h [1,1,64], c [1,1,64]; outputs prob [1,1], hn, cn.  Opset
13, random weights (seed 5).  bench/vad/run.sh times it against ONNX
Runtime."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(5)
F = TensorProto.FLOAT
H = 64


def init(name, shape, scale=0.2):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


then_nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], strides=[2], pads=[2, 2], name="conv1"),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], strides=[2], pads=[1, 1], name="conv2"),
    helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
    helper.make_node("Transpose", ["r2"], ["seq"], perm=[2, 0, 1], name="to_seq"),
    helper.make_node("LSTM", ["seq", "W", "R", "B", "", "h", "c"], ["", "yh", "yc"],
                     hidden_size=H, name="lstm"),
    helper.make_node("Squeeze", ["yh", "ax0"], ["last"], name="squeeze"),
    helper.make_node("Gemm", ["last", "wo", "bo"], ["logit"], name="head"),
    helper.make_node("Sigmoid", ["logit"], ["p"], name="sigmoid"),
]
then_graph = helper.make_graph(
    then_nodes, "speech", [],
    [helper.make_tensor_value_info("p", F, [1, 1]),
     helper.make_tensor_value_info("yh", F, [1, 1, H]),
     helper.make_tensor_value_info("yc", F, [1, 1, H])],
    [init("w1", (16, 1, 5)), init("b1", (16,), 0.05), init("w2", (32, 16, 3)),
     init("b2", (32,), 0.05), init("W", (1, 4 * H, 32)), init("R", (1, 4 * H, H)),
     init("B", (1, 8 * H), 0.05), init("wo", (H, 1)), init("bo", (1,), 0.05),
     numpy_helper.from_array(np.array([0], np.int64), "ax0")])
else_graph = helper.make_graph(
    [helper.make_node("Identity", ["zero_p"], ["p0"], name="silent"),
     helper.make_node("Identity", ["h"], ["h_same"], name="keep_h"),
     helper.make_node("Identity", ["c"], ["c_same"], name="keep_c")],
    "silence", [],
    [helper.make_tensor_value_info("p0", F, [1, 1]),
     helper.make_tensor_value_info("h_same", F, [1, 1, H]),
     helper.make_tensor_value_info("c_same", F, [1, 1, H])],
    [numpy_helper.from_array(np.zeros((1, 1), np.float32), "zero_p")])
main = helper.make_graph(
    [helper.make_node("Abs", ["x"], ["ax"], name="abs"),
     helper.make_node("ReduceSum", ["ax"], ["energy"], keepdims=0, name="energy"),
     helper.make_node("Greater", ["energy", "floor"], ["voiced"], name="voiced"),
     helper.make_node("If", ["voiced"], ["prob", "hn", "cn"], then_branch=then_graph,
                      else_branch=else_graph, name="if_voiced")],
    "vad",
    [helper.make_tensor_value_info("x", F, [1, 1, 512]),
     helper.make_tensor_value_info("h", F, [1, 1, H]),
     helper.make_tensor_value_info("c", F, [1, 1, H])],
    [helper.make_tensor_value_info("prob", F, [1, 1]),
     helper.make_tensor_value_info("hn", F, [1, 1, H]),
     helper.make_tensor_value_info("cn", F, [1, 1, H])],
    [numpy_helper.from_array(np.array(1e-3, np.float32), "floor")])
model = helper.make_model(main, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
