#!/usr/bin/python3
"""make_model.py — model.onnx, the toy provider's example model (179
bytes, checked in next to this script): y = Sigmoid(Add(Relu(x), b))
on float32 [4, 64] inputs x and b.  The toy claims Relu and Add; Sigmoid
is left to the CPU provider.

Usage: /usr/bin/python3 make_model.py [OUT.onnx]   (default: model.onnx here)
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "model.onnx")
    shape = [4, 64]
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "b"], ["s"], name="add"),
        helper.make_node("Sigmoid", ["s"], ["y"], name="sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "toy_example",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="hetrt examples/provider")
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main()
