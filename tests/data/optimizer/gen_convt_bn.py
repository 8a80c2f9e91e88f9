#!/usr/bin/python3
"""gen_convt_bn.py — the convt_bn optimizer case (a detection head's
up-sampling): ConvTranspose 2x2 stride 2 (8 -> 4 channels, bias) ->
BatchNormalization -> Relu -> ConvTranspose 2x2 stride 2 (4 -> 4, no bias,
so the tiled kernel runs both) -> BatchNormalization -> LeakyRelu 0.1 ->
ConvTranspose of 2 groups (4 -> 2, 3x3 stride 1, pads 1: the GEMM +
col2im path) -> BatchNormalization -> Tanh.  At level extended the first
two BatchNormalizations fold into their ConvTransposes and the Relu and
LeakyRelu go into them (opt_batchnorm.c, opt_activation.c); the grouped
one keeps its BatchNormalization, and its Tanh stays.  Torch reference."""

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

rng = np.random.default_rng(4242)
x = rng.standard_normal((1, 8, 5, 6)).astype(np.float32)


def bn_params(c, i):
    return [(rng.uniform(0.5, 1.5, c)).astype(np.float32),
            (rng.standard_normal(c) * 0.3).astype(np.float32),
            (rng.standard_normal(c) * 0.3).astype(np.float32),
            (rng.uniform(0.4, 1.6, c)).astype(np.float32)]


w0 = (rng.standard_normal((8, 4, 2, 2)) * 0.3).astype(np.float32)
b0 = (rng.standard_normal(4) * 0.3).astype(np.float32)
w1 = (rng.standard_normal((4, 4, 2, 2)) * 0.3).astype(np.float32)
w2 = (rng.standard_normal((4, 1, 3, 3)) * 0.3).astype(np.float32)  # 2 groups
bns = [bn_params(4, 0), bn_params(4, 1), bn_params(2, 2)]
inits = [numpy_helper.from_array(w0, "w0"), numpy_helper.from_array(b0, "b0"),
         numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")]
for i, ps in enumerate(bns):
    for n, a in zip(("scale", "bias", "mean", "var"), ps):
        inits.append(numpy_helper.from_array(a, f"bn{i}_{n}"))


def bn(i, src, dst):
    return helper.make_node("BatchNormalization",
                            [src] + [f"bn{i}_{n}" for n in ("scale", "bias", "mean", "var")],
                            [dst], name=f"bn{i}", epsilon=1e-5)


nodes = [
    helper.make_node("ConvTranspose", ["x", "w0", "b0"], ["t0"], name="up0",
                     kernel_shape=[2, 2], strides=[2, 2]),
    bn(0, "t0", "n0"),
    helper.make_node("Relu", ["n0"], ["r0"], name="relu0"),
    helper.make_node("ConvTranspose", ["r0", "w1"], ["t1"], name="up1",
                     kernel_shape=[2, 2], strides=[2, 2]),
    bn(1, "t1", "n1"),
    helper.make_node("LeakyRelu", ["n1"], ["r1"], name="lrelu1", alpha=0.1),
    helper.make_node("ConvTranspose", ["r1", "w2"], ["t2"], name="grouped",
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=2),
    bn(2, "t2", "n2"),
    helper.make_node("Tanh", ["n2"], ["y"], name="tanh2"),
]
graph = helper.make_graph(
    nodes, "convt_bn",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 5, 6])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 20, 24])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
F = torch.nn.functional


def tbn(v, ps):
    g, b, m, var = (torch.from_numpy(p) for p in ps)
    return F.batch_norm(v, m, var, g, b, training=False, eps=1e-5)


with torch.no_grad():
    v = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w0),
                           torch.from_numpy(b0), stride=2)
    v = tbn(v, bns[0]).relu()
    v = F.conv_transpose2d(v, torch.from_numpy(w1), stride=2)
    v = F.leaky_relu(tbn(v, bns[1]), 0.1)
    v = F.conv_transpose2d(v, torch.from_numpy(w2), padding=1, groups=2)
    y = torch.tanh(tbn(v, bns[2]))
save_case("convt_bn", model, [("x", x)], [("y", y.numpy())])
