#!/usr/bin/python3
"""gen_models.py OUTDIR — single-purpose models for the kernel changes of
2026-12-03 (random weights, opset 13), timed by bench/micro/run.sh:
  resize_linear, resize_nearest: Resize of [1,64,80,80] by 2x2 (linear
    half_pixel; nearest asymmetric floor);
  f16_cnn: Cast to fp16, four 3x3 64-channel fp16 Conv + Relu on 56x56,
    Cast back;
  f16_elementwise: fp16 Sigmoid, Mul, Add over [1,64,112,112];
  f16_mlp: four fp16 1024x1024 MatMul + Relu on a [64,1024] input;
and of 2026-12-05:
  convt_16x16, convt_16x1: ConvTranspose 2x2 stride 2 with bias, 16 -> 16
    channels on 160x160 and 16 -> 1 on 320x320 (the DBNet detector head's
    up-sampling, tests/models/gen_detector.py);
  qop_conv: QuantizeLinear, QLinearConv, ConvInteger, Cast (int8 rows of
    the estimate table)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, H = TensorProto.FLOAT, TensorProto.FLOAT16
rng = np.random.default_rng(0)


def save(name, nodes, x_shape, y_shape, inits=()):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, x_shape)],
                          [helper.make_tensor_value_info("y", F, y_shape)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
save("resize_linear", [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                                        coordinate_transformation_mode="half_pixel")],
     [1, 64, 80, 80], [1, 64, 160, 160], [scales])
save("resize_nearest", [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest",
                                         coordinate_transformation_mode="asymmetric",
                                         nearest_mode="floor")],
     [1, 64, 80, 80], [1, 64, 160, 160], [scales])

nodes, inits, prev = [helper.make_node("Cast", ["x"], ["h0"], to=H)], [], "h0"
for i in range(4):
    inits += [numpy_helper.from_array((rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float16), "w%d" % i),
              numpy_helper.from_array((rng.standard_normal(64) * 0.1).astype(np.float16), "b%d" % i)]
    nodes += [helper.make_node("Conv", [prev, "w%d" % i, "b%d" % i], ["c%d" % i], pads=[1] * 4),
              helper.make_node("Relu", ["c%d" % i], ["h%d" % (i + 1)])]
    prev = "h%d" % (i + 1)
nodes.append(helper.make_node("Cast", [prev], ["y"], to=F))
save("f16_cnn", nodes, [1, 64, 56, 56], [1, 64, 56, 56], inits)

save("f16_elementwise", [helper.make_node("Cast", ["x"], ["xh"], to=H),
                         helper.make_node("Sigmoid", ["xh"], ["s"]),
                         helper.make_node("Mul", ["s", "xh"], ["m"]),
                         helper.make_node("Add", ["m", "xh"], ["a"]),
                         helper.make_node("Cast", ["a"], ["y"], to=F)],
     [1, 64, 112, 112], [1, 64, 112, 112])

nodes, inits = [helper.make_node("Cast", ["x"], ["h0"], to=H)], []
for i in range(4):
    inits.append(numpy_helper.from_array((rng.standard_normal((1024, 1024)) * 0.03).astype(np.float16), "w%d" % i))
    nodes += [helper.make_node("MatMul", ["h%d" % i, "w%d" % i], ["m%d" % i]),
              helper.make_node("Relu", ["m%d" % i], ["h%d" % (i + 1)])]
nodes.append(helper.make_node("Cast", ["h4"], ["y"], to=F))
save("f16_mlp", nodes, [64, 1024], [64, 1024], inits)

for name, cout, hw in (("convt_16x16", 16, 160), ("convt_16x1", 1, 320)):
    inits = [numpy_helper.from_array(rng.standard_normal((16, cout, 2, 2)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32), "b")]
    save(name, [helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[2, 2],
                                 strides=[2, 2])],
         [1, 16, hw, hw], [1, cout, 2 * hw, 2 * hw], inits)

# qop_conv: the quantized operators as written (not QDQ): QuantizeLinear,
# QLinearConv 64 -> 64 3x3 on 28x28, ConvInteger 64 -> 64 3x3, Cast; for
# the estimate table's int8 rows (bench/estimates.py runs it with and
# without VNNI kernels).
u8, s8 = np.uint8, np.int8
inits = [numpy_helper.from_array(np.array(0.05, np.float32), "xs"),
         numpy_helper.from_array(np.array(128, u8), "xz"),
         numpy_helper.from_array(rng.integers(-60, 60, (64, 64, 3, 3)).astype(s8), "w"),
         numpy_helper.from_array(np.full(64, 0.002, np.float32), "ws"),
         numpy_helper.from_array(np.zeros(64, s8), "wz"),
         numpy_helper.from_array(np.array(0.1, np.float32), "ys"),
         numpy_helper.from_array(np.array(128, u8), "yz"),
         numpy_helper.from_array(rng.integers(-60, 60, (64, 64, 3, 3)).astype(s8), "w2")]
save("qop_conv", [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
                  helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                                   ["c"], pads=[1] * 4, name="qlinear_conv"),
                  helper.make_node("ConvInteger", ["c", "w2", "yz"], ["ci"], pads=[1] * 4,
                                   name="conv_integer"),
                  helper.make_node("Cast", ["ci"], ["y"], to=F)],
     [1, 64, 28, 28], [1, 64, 28, 28], inits)
