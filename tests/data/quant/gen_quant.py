#!/usr/bin/python3
"""gen_quant.py — the float models test_quant quantizes (committed; rerun
with Debian's /usr/bin/python3 to regenerate them deterministically):
  cnn.onnx     Conv+Relu, MaxPool, Conv, residual Add, Relu, GlobalAveragePool,
               Flatten, Gemm (transB=1): every kind of quantized node, opset 13
  cnn11.onnx   the same at opset 11 (per-tensor weights, with a warning)
  cnn9.onnx    the same at opset 9 (no QuantizeLinear: refused)
  add.onnx     z = a + b, y = z * z (hand-computed activation scales)
  matmul.onnx  y = x @ W, W [32, 16] (per-channel scales along axis 1)
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(graph, name, opset):
    model = helper.make_model(graph, producer_name="gen_quant",
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))


def cnn(opset):
    rng = np.random.default_rng(7)
    w = lambda *s: numpy_helper.from_array(
        (rng.standard_normal(s) * 0.3).astype(np.float32))
    inits = []
    for name, arr in [("w1", w(8, 3, 3, 3)), ("b1", w(8)), ("w2", w(8, 8, 3, 3)),
                      ("b2", w(8)), ("wf", w(10, 8)), ("bf", w(10))]:
        arr.name = name
        inits.append(arr)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "p1"], ["s"], name="add"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    return graph


def add():
    nodes = [helper.make_node("Add", ["a", "b"], ["z"], name="add"),
             helper.make_node("Mul", ["z", "z"], ["y"], name="square")]
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 64])
    return helper.make_graph(nodes, "add", [vi("a"), vi("b")], [vi("y")])


def matmul():
    rng = np.random.default_rng(11)
    wm = rng.standard_normal((32, 16)).astype(np.float32)
    wm[:, 3] *= 10  # one column with a much wider range
    init = numpy_helper.from_array(wm, "W")
    nodes = [helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")]
    return helper.make_graph(
        nodes, "matmul", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])], [init])


if __name__ == "__main__":
    save(cnn(13), "cnn.onnx", 13)
    save(cnn(11), "cnn11.onnx", 11)
    save(cnn(9), "cnn9.onnx", 9)
    save(add(), "add.onnx", 13)
    save(matmul(), "matmul.onnx", 13)
