#!/usr/bin/python3
"""ort_qsoftmax_repro.py — ONNX Runtime's fused uint8 Softmax returns 0 for small output scales.

Usage: /usr/bin/python3 bench/quant/ort_qsoftmax_repro.py [WORKDIR]

Builds x -> QuantizeLinear -> DequantizeLinear -> Softmax(axis -1, 128 wide)
-> QuantizeLinear (uint8, zero point 0, scale Y) for several Y, on one
near-uniform input row (as bert4's random-weight attention scores are; input
scale 3.266e-6, bert4's layers.1 value), and runs each in ORT with graph
optimizations on (the QDQ group fused into com.microsoft QLinearSoftmax) and
off (the nodes as written, the ONNX reference).  In ORT 1.30 the fused kernel
gives 0 for every element once 1/Y > 128 * e^5 (Y < about 5.26e-5): its
lookup table is scaled so that 128 entries sum to FLT_MAX / e^5, and the
product table[x] * floor(1/Y) overflows float before the division by the sum
(qlinear_softmax.cc, QlinearSoftmaxCPU<uint8_t>), the inf then converts to 0.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
D = 128
X_SCALE = 3.266e-6
Y_SCALES = (1e-4, 6e-5, 5.3e-5, 5.25e-5, 5e-5, 1 / (D * 255))


def softmax_model(path, y_scale):
    inits = [numpy_helper.from_array(np.array(X_SCALE, np.float32), "xs"),
             numpy_helper.from_array(np.array(128, np.uint8), "xz"),
             numpy_helper.from_array(np.array(y_scale, np.float32), "ys"),
             numpy_helper.from_array(np.array(0, np.uint8), "yz")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("Softmax", ["xd"], ["s"], axis=-1),
             helper.make_node("QuantizeLinear", ["s", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "qdq_softmax",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, D])],
                          [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, D])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="qsoftmax.")
    data = os.path.join(work, "data", "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    x = (np.random.default_rng(0).standard_normal((1, D)) * 3e-4).astype(np.float32)
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
    print("%-12s %-10s %-28s %-28s" % ("y_scale", "1/y_scale", "ORT fused (first 4)",
                                       "ORT unfused (first 4)"))
    for ys in Y_SCALES:
        model = os.path.join(work, "softmax_%g.onnx" % ys)
        softmax_model(model, ys)
        got = {}
        for opt in ("all", "disabled"):
            out = os.path.join(work, "out_%g_%s" % (ys, opt))
            subprocess.run(["node", os.path.join(HERE, "compare_ort.js"), model,
                            os.path.dirname(data), "--out", out, "--opt", opt], check=True)
            got[opt] = numpy_helper.to_array(onnx.load_tensor(
                os.path.join(out, "test_data_set_0", "output_0.pb"))).ravel()[:4]
        print("%-12.4g %-10.0f %-28s %-28s%s" % (ys, 1 / ys, got["all"], got["disabled"],
                                                "" if np.array_equal(got["all"], got["disabled"])
                                                else "  <- differs"))
    print("threshold predicted: 1/y_scale > %d * e^5 = %.0f" % (D, D * np.exp(5)))


if __name__ == "__main__":
    main()
