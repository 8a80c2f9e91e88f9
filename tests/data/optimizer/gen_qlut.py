#!/usr/bin/python3
"""gen_qlut.py — qdq_lut, the 8-bit activation chains that opt_qlut.c turns
into hetrt.QLinearLut tables (opset 13, x [1, 8, 6, 6] float32), with a
numpy reference of the float32 QDQ graph:
  q0 = Q(x) uint8, a = DQ(q0):
  A: hard-swish as quantizers write it: HardSigmoid(a) -> Q -> DQ -> Mul
     with a -> Q -> DQ -> y1 (a Q/DQ pair inside the chain)
  C: LeakyRelu(a, 0.1) -> Add 0.25 -> Q -> DQ -> y3
  E: Tanh(a) -> Q -> DQ -> y5, Tanh's output also the graph output y6:
     stays (a value read outside the chain)
  F: DQ(q0) of its own -> MaxPool 2x2 -> Q of another scale -> DQ -> y7:
     the DQ moves below the pool, and DQ -> Q (a requantization) becomes
     a table
  q1 = Q(x) int8, b = DQ(q1):
  B: Sigmoid(b) -> Q (int8, zero point -128) -> DQ -> y2
  D: Mul(b, per-channel [1, 8, 1, 1] constant) -> Q -> DQ -> y4: stays
     (a constant of more than one value broadcasts)
a and b stay (read by chains of their own and by the ones that stay).
Inputs are drawn until no quantized value lies within 1e-3 steps of a
rounding tie, so any float32 evaluation of the chain gives the same bytes."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

F32 = np.float32


def quant(v, s, zp, lo, hi):
    r = v / F32(s)
    return np.clip(np.round(r) + zp, lo, hi), np.abs(r - np.floor(r) - 0.5)


def deq(q, s, zp):
    return ((q - zp) * F32(s)).astype(F32)


U8, S8 = (0, 255), (-128, 127)
P = {"q0": (0.0513, 128, U8), "qp": (0.0371, 7, U8), "qh": (1 / 255, 0, U8), "qm": (0.0297, 20, U8),
     "qc": (0.0411, 10, U8), "qe": (0.00791, 128, U8), "q1": (0.0427, 0, S8),
     "qs": (1 / 251, -128, S8), "qd": (0.0519, 3, S8)}
cd = np.linspace(-1.53, 2.07, 8, dtype=F32).reshape(1, 8, 1, 1)


def reference(x):
    ties = []

    def q(v, k):
        s, z, (lo, hi) = P[k]
        out, tie = quant(v, s, z, lo, hi)
        ties.append(tie.min())
        return out

    def qdq(v, k):
        return deq(q(v, k), P[k][0], P[k][1])

    a = qdq(x, "q0")
    h = np.clip(F32(1 / 6) * a + F32(0.5), 0, 1).astype(F32)
    y1 = qdq((a * qdq(h, "qh")).astype(F32), "qm")
    y3 = qdq((np.where(a > 0, a, F32(0.1) * a) + F32(0.25)).astype(F32), "qc")
    e = np.tanh(a).astype(F32)
    y5 = qdq(e, "qe")
    b = qdq(x, "q1")
    y2 = qdq((1 / (1 + np.exp(-b))).astype(F32), "qs")
    y4 = qdq((b * cd).astype(F32), "qd")
    pool = a.reshape(1, 8, 3, 2, 3, 2).max(axis=(3, 5))
    y7 = qdq(pool, "qp")
    return [y1, y2, y3, y4, y5, e, y7], min(ties[1:])  # all but x's first Q


rng = np.random.default_rng(11)
for _ in range(10000):
    x = (rng.standard_normal((1, 8, 6, 6)) * 2).astype(F32)
    outs, tie = reference(x)
    if tie > 1e-3:
        break
else:
    raise SystemExit("gen_qlut.py: no input set without rounding ties")

inits = []
for k, (s, z, (lo, hi)) in P.items():
    inits.append(numpy_helper.from_array(np.array(s, F32), k + "_s"))
    inits.append(numpy_helper.from_array(
        np.array(z, np.uint8 if lo == 0 else np.int8), k + "_z"))
inits += [numpy_helper.from_array(np.array(0.25, F32), "quarter"),
          numpy_helper.from_array(cd, "cd")]


def Q(i, k, o, name):
    return helper.make_node("QuantizeLinear", [i, k + "_s", k + "_z"], [o],
                            name=name)


def DQ(i, k, o, name):
    return helper.make_node("DequantizeLinear", [i, k + "_s", k + "_z"], [o],
                            name=name)


nodes = [
    Q("x", "q0", "xq0", "q0"), DQ("xq0", "q0", "a", "dq_a"),
    helper.make_node("HardSigmoid", ["a"], ["h"], name="A_hsig",
                     alpha=1 / 6, beta=0.5),
    Q("h", "qh", "hq", "A_qh"), DQ("hq", "qh", "hd", "A_dqh"),
    helper.make_node("Mul", ["a", "hd"], ["m"], name="A_mul"),
    Q("m", "qm", "mq", "A_qm"), DQ("mq", "qm", "y1", "A_dq"),
    helper.make_node("LeakyRelu", ["a"], ["c"], name="C_leaky", alpha=0.1),
    helper.make_node("Add", ["c", "quarter"], ["c2"], name="C_add"),
    Q("c2", "qc", "cq", "C_q"), DQ("cq", "qc", "y3", "C_dq"),
    helper.make_node("Tanh", ["a"], ["y6"], name="E_tanh"),
    Q("y6", "qe", "eq", "E_q"), DQ("eq", "qe", "y5", "E_dq"),
    Q("x", "q1", "xq1", "q1"), DQ("xq1", "q1", "b", "dq_b"),
    helper.make_node("Sigmoid", ["b"], ["sg"], name="B_sigmoid"),
    Q("sg", "qs", "sq", "B_q"), DQ("sq", "qs", "y2", "B_dq"),
    helper.make_node("Mul", ["b", "cd"], ["d"], name="D_mul"),
    Q("d", "qd", "dq", "D_q"), DQ("dq", "qd", "y4", "D_dq"),
    DQ("xq0", "q0", "f", "F_dq"),
    helper.make_node("MaxPool", ["f"], ["fp"], name="F_pool",
                     kernel_shape=[2, 2], strides=[2, 2]),
    Q("fp", "qp", "fq", "F_q"), DQ("fq", "qp", "y7", "F_dq2"),
]
shape = [1, 8, 6, 6]
vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
pooled = helper.make_tensor_value_info("y7", TensorProto.FLOAT, [1, 8, 3, 3])
graph = helper.make_graph(nodes, "qdq_lut", [vi("x")],
                          [vi("y%d" % i) for i in range(1, 7)] + [pooled],
                          inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
save_case("qdq_lut", model, [("x", x)],
          [("y%d" % i, o) for i, o in enumerate(outs, 1)])
