#!/usr/bin/python3
"""gen_policy_models.py — small models for test_policy.c (placement
policies).  Weights from a fixed seed; run with /usr/bin/python3 (writes
beside itself).

  blocks.onnx     x[N,8,16,16] (N symbolic) -> stem Conv -> four repeated
                  blocks named layer.0/ .. layer.3/ (Conv, Relu, Add with the
                  block's input), a float16 island (Cast to float16, Mul,
                  Cast back), head GlobalAveragePool -> Flatten -> Gemm ->
                  output "logits".  Names, outputs, dtypes and the symbolic
                  batch cover every match kind.
  dynamic_det.onnx  images[?,3,?,?] -> a tiny detector: two strided Convs,
                  a Resize x2 back up, Concat with the stride-2 features, a
                  1x1 Conv and Sigmoid -> "prob".  Every dim but channels is
                  symbolic, as torch exports with dynamic axes.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261204)
F = TensorProto.FLOAT


def w(name, shape, scale=0.2):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * scale).astype(np.float32), name)


def blocks():
    nodes, inits = [], []
    inits += [w("stem_w", [16, 8, 3, 3]), w("stem_b", [16])]
    nodes.append(helper.make_node("Conv", ["x", "stem_w", "stem_b"], ["s0"],
                                  name="stem/conv", pads=[1, 1, 1, 1]))
    prev = "s0"
    for i in range(4):
        p = f"layer.{i}/"
        inits += [w(f"l{i}_w", [16, 16, 3, 3]), w(f"l{i}_b", [16])]
        nodes.append(helper.make_node("Conv", [prev, f"l{i}_w", f"l{i}_b"],
                                      [f"l{i}_c"], name=p + "conv",
                                      pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"l{i}_c"], [f"l{i}_r"],
                                      name=p + "relu"))
        nodes.append(helper.make_node("Add", [f"l{i}_r", prev], [f"l{i}_o"],
                                      name=p + "add"))
        prev = f"l{i}_o"
    inits.append(numpy_helper.from_array(np.full([1], 0.5, np.float16), "half"))
    nodes.append(helper.make_node("Cast", [prev], ["h0"], name="half/cast_in",
                                  to=TensorProto.FLOAT16))
    nodes.append(helper.make_node("Mul", ["h0", "half"], ["h1"], name="half/mul"))
    nodes.append(helper.make_node("Cast", ["h1"], ["h2"], name="half/cast_out",
                                  to=F))
    inits += [w("fc_w", [10, 16]), w("fc_b", [10])]
    nodes.append(helper.make_node("GlobalAveragePool", ["h2"], ["g"], name="head/gap"))
    nodes.append(helper.make_node("Flatten", ["g"], ["f"], name="head/flatten"))
    nodes.append(helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"],
                                  name="head/fc", transB=1))
    graph = helper.make_graph(
        nodes, "blocks",
        [helper.make_tensor_value_info("x", F, ["N", 8, 16, 16])],
        [helper.make_tensor_value_info("logits", F, ["N", 10])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def dynamic_det():
    inits = [w("c1_w", [8, 3, 3, 3]), w("c1_b", [8]),
             w("c2_w", [16, 8, 3, 3]), w("c2_b", [16]),
             w("c3_w", [1, 24, 1, 1]), w("c3_b", [1]),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [
        helper.make_node("Conv", ["images", "c1_w", "c1_b"], ["f1"], name="down1",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["f1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "c2_w", "c2_b"], ["f2"], name="down2",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["f2"], ["r2"], name="relu2"),
        helper.make_node("Resize", ["r2", "", "scales"], ["u2"], name="up",
                         mode="nearest"),
        helper.make_node("Concat", ["u2", "r1"], ["cat"], name="fuse", axis=1),
        helper.make_node("Conv", ["cat", "c3_w", "c3_b"], ["logit"], name="head"),
        helper.make_node("Sigmoid", ["logit"], ["prob"], name="prob"),
    ]
    graph = helper.make_graph(
        nodes, "dynamic_det",
        [helper.make_tensor_value_info("images", F, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("prob", F, ["batch", 1, "h4", "w4"])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    for name, fn in [("blocks", blocks), ("dynamic_det", dynamic_det)]:
        m = fn()
        m.ir_version = 8
        onnx.checker.check_model(m)
        onnx.save(m, os.path.join(HERE, name + ".onnx"))
