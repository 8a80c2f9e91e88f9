#!/usr/bin/python3
"""gen_models.py — the CUDA provider's test models (tests/gpu/): every op
the provider claims, in shapes that take each path of its kernels.
  ops_matmul.onnx: batched MatMul (same batch dims), a 2-D weight MatMul
    (broadcast over the batch), Add of a bias, Relu, last-axis Softmax.
  ops_elementwise.onnx: Sub/Mul/Div with broadcasting in both directions,
    Sigmoid, Tanh, Exp, Neg, Abs, Sqrt, Erf.
  plan_mlp.onnx: MatMul, Erf, MatMul, Softmax on [256, 256] with 1 MB of
    weights, large enough that the cost partitioner puts it on a GPU
    (test_cuda_plugin plans it for configs/devices/h200.yaml).
Run: /usr/bin/python3 tests/data/cuda/gen_models.py tests/data/cuda"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
rng = np.random.default_rng(11)
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


bias = numpy_helper.from_array(rng.standard_normal(6).astype(np.float32), "bias")
save("ops_matmul", [
    helper.make_node("MatMul", ["a", "b"], ["ab"], name="mm_batched"),
    helper.make_node("MatMul", ["ab", "w6"], ["abw"], name="mm_weight"),
    helper.make_node("Add", ["abw", "bias"], ["abwb"], name="add_bias"),
    helper.make_node("Relu", ["abwb"], ["r"], name="relu"),
    helper.make_node("Softmax", ["r"], ["y"], name="softmax"),
], [helper.make_tensor_value_info("a", F, [2, 3, 4, 5]),
    helper.make_tensor_value_info("b", F, [2, 3, 5, 6])],
   [helper.make_tensor_value_info("y", F, [2, 3, 4, 6])],
   [numpy_helper.from_array(rng.standard_normal((6, 6)).astype(np.float32), "w6"),
    bias])

save("ops_elementwise", [
    helper.make_node("Sub", ["x", "col"], ["s"], name="sub_col"),
    helper.make_node("Mul", ["row", "s"], ["m"], name="mul_row"),
    helper.make_node("Sigmoid", ["m"], ["sg"], name="sigmoid"),
    helper.make_node("Div", ["sg", "col"], ["d"], name="div_col"),
    helper.make_node("Tanh", ["d"], ["t"], name="tanh"),
    helper.make_node("Exp", ["t"], ["e"], name="exp"),
    helper.make_node("Neg", ["e"], ["n"], name="neg"),
    helper.make_node("Abs", ["n"], ["ab"], name="abs"),
    helper.make_node("Sqrt", ["ab"], ["sq"], name="sqrt"),
    helper.make_node("Erf", ["sq"], ["y"], name="erf"),
], [helper.make_tensor_value_info("x", F, [2, 7, 9]),
    helper.make_tensor_value_info("col", F, [2, 7, 1]),
    helper.make_tensor_value_info("row", F, [9])],
   [helper.make_tensor_value_info("y", F, [2, 7, 9])], [])

save("plan_mlp", [
    helper.make_node("MatMul", ["x", "w1"], ["h"], name="mm1"),
    helper.make_node("Erf", ["h"], ["e"], name="erf"),
    helper.make_node("MatMul", ["e", "w2"], ["o"], name="mm2"),
    helper.make_node("Softmax", ["o"], ["y"], name="softmax", axis=-1),
], [helper.make_tensor_value_info("x", F, [256, 256])],
   [helper.make_tensor_value_info("y", F, [256, 256])],
   [numpy_helper.from_array(rng.standard_normal((256, 512)).astype(np.float32) * 0.05, "w1"),
    numpy_helper.from_array(rng.standard_normal((512, 256)).astype(np.float32) * 0.05, "w2")])
