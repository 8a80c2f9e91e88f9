#!/usr/bin/python3
"""Writes parallel_ops.onnx: one graph over a 2x16x64x64 float32 input whose
nodes hit every CPU kernel loop that runs on the thread pool (elementwise
maps, broadcasts with many and with few rows, Where, pooling, global
pooling, Transpose, Concat, Slice, Softmax (contiguous rows and strided),
LayerNormalization, ReduceMean/ReduceSum/ReduceMax).  test_threadpool.c
runs it with 1, 2 and 3 threads and requires bit-identical outputs.
Weights are tiny, so the file stays a few KB.  Run: /usr/bin/python3 THIS"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

N, C, H, W = 2, 16, 64, 64


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def main():
    rng = np.random.default_rng(7)
    inits = [
        const("bias", rng.standard_normal((1, C, 1, 1)).astype(np.float32)),
        const("scale16", rng.standard_normal(C).astype(np.float32)),
        const("beta16", rng.standard_normal(C).astype(np.float32)),
        const("zero", np.array(0.0, np.float32)),
        const("tenth", np.array(0.1, np.float32)),
        const("flat", np.array([1, -1], np.int64)),
        const("starts", np.array([3], np.int64)),
        const("ends", np.array([61], np.int64)),
        const("axes3", np.array([3], np.int64)),
        const("axes1", np.array([1], np.int64)),
    ]
    mk = helper.make_node
    nodes = [
        mk("Relu", ["x"], ["relu"]),
        mk("Add", ["relu", "bias"], ["add"]),
        mk("Exp", ["x"], ["exp"]),
        mk("Tanh", ["add"], ["tanh"]),
        mk("Greater", ["x", "zero"], ["pos"]),
        mk("Mul", ["x", "tenth"], ["leak"]),
        mk("Where", ["pos", "x", "leak"], ["where"]),
        mk("Reshape", ["x", "flat"], ["row"]),
        mk("Sub", ["row", "tenth"], ["row_sub"]),
        mk("MaxPool", ["add"], ["maxpool"], kernel_shape=[3, 3],
           pads=[1, 1, 1, 1]),
        mk("AveragePool", ["x"], ["avgpool"], kernel_shape=[2, 2],
           strides=[2, 2]),
        mk("GlobalAveragePool", ["x"], ["gap"]),
        mk("Transpose", ["x"], ["nhwc"], perm=[0, 2, 3, 1]),
        mk("LayerNormalization", ["nhwc", "scale16", "beta16"], ["ln"],
           axis=-1),
        mk("Softmax", ["x"], ["softmax_last"], axis=-1),
        mk("Softmax", ["x"], ["softmax_c"], axis=1),
        mk("ReduceMean", ["x"], ["mean_hw"], axes=[2, 3], keepdims=0),
        mk("ReduceSum", ["x", "axes1"], ["sum_c"], keepdims=0),
        mk("ReduceMax", ["x"], ["max_n"], axes=[0], keepdims=0),
        mk("Concat", ["x", "relu"], ["concat"], axis=1),
        mk("Slice", ["x", "starts", "ends", "axes3"], ["slice"]),
    ]
    outs = ["relu", "add", "exp", "tanh", "where", "row_sub", "maxpool",
            "avgpool", "gap", "nhwc", "ln", "softmax_last", "softmax_c",
            "mean_hw", "sum_c", "max_n", "concat", "slice"]
    graph = helper.make_graph(
        nodes, "parallel_ops",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, C, H, W])],
        [helper.make_empty_tensor_value_info(o)
         for o in outs],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    # Output types come from ONNX's own shape inference.
    inferred = onnx.shape_inference.infer_shapes(model)
    vi = {v.name: v for v in inferred.graph.value_info}
    del model.graph.output[:]
    model.graph.output.extend(vi[o] for o in outs)
    onnx.checker.check_model(model)
    here = os.path.dirname(os.path.abspath(__file__))
    onnx.save(model, os.path.join(here, "parallel_ops.onnx"))


if __name__ == "__main__":
    main()
