#!/usr/bin/python3
"""make_model.py — the small CNN the partview tests run on, built with
onnx.helper (no torch, about a second): Conv/Relu/MaxPool, an Erf that the
npu profile does not support (so emu,cpu splits the graph), a second conv
block, global average pool, Gemm, Softmax.  The first node's name holds
quotes, a backslash, '<' and '&' so every format's escaping is exercised
(with --plain it is "stem_conv": the model behind docs/partview.png).

Usage: /usr/bin/python3 tests/partview/make_model.py [--plain] OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WEIRD = 'conv "stem" <a&b>\\x'


def main():
    args = sys.argv[1:]
    plain = "--plain" in args
    args = [a for a in args if a != "--plain"]
    if len(args) != 1:
        sys.exit(__doc__)
    rng = np.random.default_rng(7)

    def init(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)

    inits = [init("W1", 32, 3, 3, 3), init("B1", 32), init("W2", 64, 32, 3, 3),
             init("B2", 64), init("Wfc", 10, 64), init("Bfc", 10)]
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="stem_conv" if plain else WEIRD, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Erf", ["p1"], ["e1"], name="erf1"),
        helper.make_node("Conv", ["e1", "W2", "B2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "Wfc", "Bfc"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "partview_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 128, 128])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, args[0])


if __name__ == "__main__":
    main()
