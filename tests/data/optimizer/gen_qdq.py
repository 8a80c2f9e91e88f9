#!/usr/bin/python3
"""gen_qdq.py — the QDQ optimizer cases (opset 13), with numpy references
computed the integer way (what QLinearConv/QLinearMatMul define); inputs are
drawn until no output lies within 1e-3 of a rounding tie, so the float QDQ
graph and the fused one must agree exactly.
qdq_conv: Q -> DQ -> Conv(DQ int8 per-channel weight, DQ int32 bias) ->
  Relu -> Q (zero point 0) -> DQ: becomes one QLinearConv.
qdq_conv_const: qdq_conv with its weight and bias in Constant nodes.
qdq_matmul: Q -> DQ -> MatMul(DQ int8 weight, one scale per column) -> Q
  -> DQ: becomes one QLinearMatMul.
qdq_gemm: two Gemm islands, transB=1 with per-row int8 weights and an int32
  bias, transB=0 with one weight scale and a float32 bias, each Q -> DQ ->
  Gemm -> Q -> DQ: each becomes Reshape -> QLinearConv 1x1 -> Reshape.
qdq_moves: data-movement ops inside islands: Q -> DQ -> Flatten -> Gemm -> Q
  and Q -> DQ -> Transpose -> MatMul -> Q (the DQ moves below the Flatten /
  Transpose, then the islands fuse), and Q -> DQ -> Reshape -> Q of the same
  scale and zero point (the DQ moves down, and DQ -> Q is then nothing).
qdq_near_miss: three islands that must stay float: a Relu before a Q
  whose zero point is not 0 (the Relu clamps), a bias whose scale is not
  x_scale * w_scale, and a Conv output read by a second node."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from case_io import save_case

F = TensorProto.FLOAT


def t(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def quant(x, s, zp, lo=0, hi=255):
    return np.clip(np.round(x / s) + zp, lo, hi)


def conv2d(x, w, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y


def far_from_ties(v):
    f = np.abs(v - np.floor(v) - 0.5)
    return f.min() > 1e-3


def conv_island(prefix, x_name, out_name, ys, yzp, relu, bias_scale_ok, seed):
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    ws = (rng.uniform(0.5, 1.5, 4) * 0.01).astype(np.float32)
    xs, xzp = np.float32(0.05), np.uint8(128)
    bq = rng.integers(-500, 500, 4).astype(np.int32)
    bs = (xs * ws).astype(np.float32) * (1 if bias_scale_ok else np.float32(1.5))
    p = prefix
    nodes = [
        helper.make_node("QuantizeLinear", [x_name, p + "xs", p + "xzp"], [p + "xq"]),
        helper.make_node("DequantizeLinear", [p + "xq", p + "xs", p + "xzp"], [p + "xd"]),
        helper.make_node("DequantizeLinear", [p + "wq", p + "ws", p + "wzp"], [p + "wd"], axis=0),
        helper.make_node("DequantizeLinear", [p + "bq", p + "bs", p + "bzp"], [p + "bd"], axis=0),
        helper.make_node("Conv", [p + "xd", p + "wd", p + "bd"], [p + "c"], name=p + "conv",
                         pads=[1] * 4),
    ]
    last = p + "c"
    if relu:
        nodes.append(helper.make_node("Relu", [last], [p + "r"]))
        last = p + "r"
    nodes += [
        helper.make_node("QuantizeLinear", [last, p + "ys", p + "yzp"], [p + "yq"]),
        helper.make_node("DequantizeLinear", [p + "yq", p + "ys", p + "yzp"], [out_name]),
    ]
    inits = [t(p + "xs", xs), t(p + "xzp", xzp), t(p + "wq", w), t(p + "ws", ws),
             t(p + "wzp", np.zeros(4, np.int8)), t(p + "bq", bq), t(p + "bs", bs),
             t(p + "bzp", np.zeros(4, np.int32)), t(p + "ys", np.float32(ys)),
             t(p + "yzp", np.uint8(yzp))]

    def ref(x):
        """(the float value before rounding in steps of ys, the output, the
        Conv's float output)"""
        xq = quant(x, xs, xzp)
        c = (conv2d(xq - float(xzp), w.astype(np.float64), 1) * (float(xs) * ws[None, :, None, None])
             + (bq * bs.astype(np.float64))[None, :, None, None])
        pre = (np.maximum(c, 0) if relu else c) / ys
        return pre, (quant(pre * ys, ys, yzp) - yzp) * np.float32(ys), c

    return nodes, inits, ref


def save(name, nodes, inits, xshape, outputs, refs, seed):
    """outputs: (name, shape, which) with which 1 for a ref's quantized
    output, 2 for its Conv's float output."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", F, xshape)],
                              [helper.make_tensor_value_info(y, F, s) for y, s, _, _ in outputs],
                              inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    rng = np.random.default_rng(seed)
    for _ in range(1000):
        x = rng.uniform(-6, 6, xshape).astype(np.float32)
        outs = [r(x) for r in refs]
        if all(far_from_ties(o[0]) for o in outs):
            break
    else:
        raise SystemExit(name + ": no input far from ties")
    save_case(name, model, [("x", x)],
              [(y, outs[r][k].astype(np.float32)) for y, _, r, k in outputs])


nodes, inits, ref = conv_island("", "x", "y", 0.08, 0, True, True, 1)
save("qdq_conv", nodes, inits, [1, 3, 6, 6], [("y", [1, 4, 6, 6], 0, 1)], [ref], 2)

# qdq_conv_const: the same island with its int8 weight and int32 bias in
# Constant nodes, as tf2onnx writes them, not initializers (the fusion
# read the bias's channel count from the weight's initializer: a NULL
# dereference).
nodes, inits, ref = conv_island("", "x", "y", 0.08, 0, True, True, 1)
consts = [helper.make_node("Constant", [], [i.name], value=i) for i in inits
          if i.name in ("wq", "bq")]
inits = [i for i in inits if i.name not in ("wq", "bq")]
save("qdq_conv_const", consts + nodes, inits, [1, 3, 6, 6], [("y", [1, 4, 6, 6], 0, 1)],
     [ref], 2)

# MatMul: x [4, 16] @ W [16, 8], per-column scales
rng = np.random.default_rng(3)
W = rng.integers(-127, 128, (16, 8)).astype(np.int8)
Ws = (rng.uniform(0.5, 1.5, 8) * 0.02).astype(np.float32)
xs, xzp, ys, yzp = np.float32(0.04), np.uint8(120), np.float32(0.1), np.uint8(128)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
    helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
    helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["wd"], axis=1),
    helper.make_node("MatMul", ["xd", "wd"], ["m"], name="mm"),
    helper.make_node("QuantizeLinear", ["m", "ys", "yzp"], ["yq"]),
    helper.make_node("DequantizeLinear", ["yq", "ys", "yzp"], ["y"]),
]
inits = [t("xs", xs), t("xzp", xzp), t("wq", W), t("ws", Ws), t("wzp", np.zeros(8, np.int8)),
         t("ys", ys), t("yzp", yzp)]


def mm_ref(x):
    xq = quant(x, xs, xzp)
    pre = ((xq - float(xzp)) @ W.astype(np.float64)) * (float(xs) * Ws.astype(np.float64) / float(ys))
    return pre, (quant(pre * ys, ys, yzp) - float(yzp)) * ys


save("qdq_matmul", nodes, inits, [4, 16], [("y", [4, 8], 0, 1)], [mm_ref], 4)

# Near misses: each island stays float.
n1, i1, r1 = conv_island("a_", "x", "ya", 0.08, 20, True, True, 5)   # Relu clamps
n2, i2, r2 = conv_island("b_", "x", "yb", 0.08, 0, True, False, 6)   # bias scale off
n3, i3, r3 = conv_island("c_", "x", "yc", 0.08, 128, False, True, 7)  # Conv output read twice
save("qdq_near_miss", n1 + n2 + n3, i1 + i2 + i3, [1, 3, 6, 6],
     [("ya", [1, 4, 6, 6], 0, 1), ("yb", [1, 4, 6, 6], 1, 1), ("yc", [1, 4, 6, 6], 2, 1),
      ("c_c", [1, 4, 6, 6], 2, 2)],
     [r1, r2, r3], 8)

# qdq_add: Q(x), Q(z) -> DQ each -> Add -> Relu -> Q (zero point 0) -> DQ:
# one hetrt.QLinearAdd.  The reference follows the float32 definitions
# step by step; the fused loop multiplies by the scale ratios instead
# (src/kernels/quant_vec.h), which may round a sum lying within a float
# rounding of a half-step the other way.  The scales are not multiples of
# one another's fractions, so no sum here is that close to a tie, and
# the two agree exactly.
f32 = np.float32
sx, zx, sz, zz, sy = f32(0.0517), np.uint8(100), f32(0.0311), np.uint8(140), f32(0.0613)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
    helper.make_node("QuantizeLinear", ["z", "sz", "zz"], ["zq"]),
    helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
    helper.make_node("DequantizeLinear", ["zq", "sz", "zz"], ["zd"]),
    helper.make_node("Add", ["xd", "zd"], ["s"], name="add"),
    helper.make_node("Relu", ["s"], ["r"]),
    helper.make_node("QuantizeLinear", ["r", "sy", "zy"], ["yq"]),
    helper.make_node("DequantizeLinear", ["yq", "sy", "zy"], ["y"]),
]
inits = [t("sx", sx), t("zx", zx), t("sz", sz), t("zz", zz), t("sy", sy), t("zy", np.uint8(0))]
shape = [1, 4, 5, 5]
vi = lambda n: helper.make_tensor_value_info(n, F, shape)
graph = helper.make_graph(nodes, "qdq_add", [vi("x"), vi("z")], [vi("y")], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
rng = np.random.default_rng(9)
x = rng.uniform(-5, 5, shape).astype(f32)
z = rng.uniform(-3, 3, shape).astype(f32)
q = lambda v, s, zp: np.clip(np.round(v / s) + f32(zp), 0, 255).astype(f32)
xd = (q(x, sx, zx) - f32(zx)) * sx
zd = (q(z, sz, zz) - f32(zz)) * sz
y = q(np.maximum(xd + zd, f32(0)), sy, 0) * sy
save_case("qdq_add", model, [("x", x), ("z", z)], [("y", y.astype(f32))])


# qdq_gemm: x [3, 20] -> two Gemm islands (outputs ya [3, 6], yb [3, 5]).
rng = np.random.default_rng(13)
K = 20
xs, xzp = np.float32(0.03), np.uint8(125)
nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"])]
inits = [t("xs", xs), t("xzp", xzp)]
refs = []
for tag, n_out, trans_b, per_row, int_bias in (("a", 6, 1, True, True), ("b", 5, 0, False, False)):
    w = rng.integers(-127, 128, (n_out, K) if trans_b else (K, n_out)).astype(np.int8)
    ws = ((rng.uniform(0.5, 1.5, n_out) if per_row else np.float32(1.0)) * 0.02).astype(np.float32)
    ys, yzp = np.float32(0.07), np.uint8(110)
    acc_s = (xs * ws).astype(np.float32)
    p = tag + "_"
    inits += [t(p + "w", w), t(p + "ws", ws),
              t(p + "wz", np.zeros(n_out, np.int8) if per_row else np.int8(0)),
              t(p + "ys", ys), t(p + "yz", yzp)]
    nodes.append(helper.make_node("DequantizeLinear", [p + "w", p + "ws", p + "wz"], [p + "wd"],
                                  axis=0))
    if int_bias:
        bq = rng.integers(-400, 400, n_out).astype(np.int32)
        inits += [t(p + "b", bq), t(p + "bs", acc_s), t(p + "bz", np.zeros(n_out, np.int32))]
        nodes.append(helper.make_node("DequantizeLinear", [p + "b", p + "bs", p + "bz"],
                                      [p + "bd"], axis=0))
        bias_acc = bq.astype(np.float64)
    else:
        # a float bias on whole accumulator steps, so quantizing it is exact
        bq = rng.integers(-400, 400, n_out)
        bf = (bq * acc_s.astype(np.float64)).astype(np.float32)
        inits.append(t(p + "bd", bf))
        bias_acc = np.round(bf.astype(np.float64) / acc_s.astype(np.float64))
    nodes += [helper.make_node("Gemm", ["xd", p + "wd", p + "bd"], [p + "g"], name=p + "gemm",
                               transB=trans_b),
              helper.make_node("QuantizeLinear", [p + "g", p + "ys", p + "yz"], [p + "q"]),
              helper.make_node("DequantizeLinear", [p + "q", p + "ys", p + "yz"], ["y" + tag])]

    def ref(x, w=w, trans_b=trans_b, acc_s=acc_s, bias_acc=bias_acc, ys=ys, yzp=yzp):
        xq = quant(x, xs, xzp) - float(xzp)
        wt = (w.T if trans_b else w).astype(np.float64)
        pre = (xq @ wt + bias_acc) * acc_s.astype(np.float64) / float(ys)
        return pre, (quant(pre * ys, ys, yzp) - float(yzp)) * ys
    refs.append(ref)
graph = helper.make_graph(nodes, "qdq_gemm", [helper.make_tensor_value_info("x", F, [3, K])],
                          [helper.make_tensor_value_info("ya", F, [3, 6]),
                           helper.make_tensor_value_info("yb", F, [3, 5])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
rng = np.random.default_rng(14)
for _ in range(1000):
    x = rng.uniform(-3, 3, (3, K)).astype(np.float32)
    outs = [r(x) for r in refs]
    if all(far_from_ties(o[0]) for o in outs):
        break
else:
    raise SystemExit("qdq_gemm: no input far from ties")
save_case("qdq_gemm", model, [("x", x)],
          [("ya", outs[0][1].astype(np.float32)), ("yb", outs[1][1].astype(np.float32))])


# qdq_moves: x [2, 3, 4, 4].
rng = np.random.default_rng(15)
xs, xzp = np.float32(0.04), np.uint8(130)
W1 = rng.integers(-127, 128, (5, 48)).astype(np.int8)     # Gemm, transB
W1s = (rng.uniform(0.5, 1.5, 5) * 0.01).astype(np.float32)
B1 = rng.integers(-300, 300, 5).astype(np.int32)
W2 = rng.integers(-127, 128, (3, 6)).astype(np.int8)      # MatMul on NHWC
W2s = (rng.uniform(0.5, 1.5, 6) * 0.02).astype(np.float32)
ys1, yz1, ys2, yz2 = np.float32(0.09), np.uint8(120), np.float32(0.05), np.uint8(128)
nodes = [
    helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq"]),
    helper.make_node("DequantizeLinear", ["xq", "xs", "xzp"], ["xd"]),
    helper.make_node("Flatten", ["xd"], ["flat"], axis=1),
    helper.make_node("DequantizeLinear", ["w1", "w1s", "w1z"], ["w1d"], axis=0),
    helper.make_node("DequantizeLinear", ["b1", "b1s", "b1z"], ["b1d"], axis=0),
    helper.make_node("Gemm", ["flat", "w1d", "b1d"], ["g"], transB=1),
    helper.make_node("QuantizeLinear", ["g", "ys1", "yz1"], ["gq"]),
    helper.make_node("DequantizeLinear", ["gq", "ys1", "yz1"], ["ya"]),
    helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq2"]),
    helper.make_node("DequantizeLinear", ["xq2", "xs", "xzp"], ["xd2"]),
    helper.make_node("Transpose", ["xd2"], ["nhwc"], perm=[0, 2, 3, 1]),
    helper.make_node("DequantizeLinear", ["w2", "w2s", "w2z"], ["w2d"], axis=1),
    helper.make_node("MatMul", ["nhwc", "w2d"], ["mm"]),
    helper.make_node("QuantizeLinear", ["mm", "ys2", "yz2"], ["mq"]),
    helper.make_node("DequantizeLinear", ["mq", "ys2", "yz2"], ["yb"]),
    helper.make_node("QuantizeLinear", ["x", "xs", "xzp"], ["xq3"]),
    helper.make_node("DequantizeLinear", ["xq3", "xs", "xzp"], ["xd3"]),
    helper.make_node("Reshape", ["xd3", "shape"], ["r"]),
    helper.make_node("QuantizeLinear", ["r", "xs", "xzp"], ["rq"]),
    helper.make_node("DequantizeLinear", ["rq", "xs", "xzp"], ["yc"]),
]
inits = [t("xs", xs), t("xzp", xzp), t("w1", W1), t("w1s", W1s), t("w1z", np.zeros(5, np.int8)),
         t("b1", B1), t("b1s", (xs * W1s).astype(np.float32)), t("b1z", np.zeros(5, np.int32)),
         t("ys1", ys1), t("yz1", yz1), t("w2", W2), t("w2s", W2s), t("w2z", np.zeros(6, np.int8)),
         t("ys2", ys2), t("yz2", yz2), t("shape", np.array([2, 48], np.int64))]
graph = helper.make_graph(
    nodes, "qdq_moves", [helper.make_tensor_value_info("x", F, [2, 3, 4, 4])],
    [helper.make_tensor_value_info("ya", F, [2, 5]),
     helper.make_tensor_value_info("yb", F, [2, 4, 4, 6]),
     helper.make_tensor_value_info("yc", F, [2, 48])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)


def moves_ref(x):
    xq = quant(x, xs, xzp) - float(xzp)
    pa = (xq.reshape(2, 48) @ W1.T.astype(np.float64) + B1) * (float(xs) * W1s.astype(np.float64)) / float(ys1)
    pb = (xq.transpose(0, 2, 3, 1) @ W2.astype(np.float64)) * (float(xs) * W2s.astype(np.float64)) / float(ys2)
    ya = (quant(pa * ys1, ys1, yz1) - float(yz1)) * ys1
    yb = (quant(pb * ys2, ys2, yz2) - float(yz2)) * ys2
    yc = (xq * xs).reshape(2, 48)
    return pa, pb, ya, yb, yc


rng = np.random.default_rng(16)
for _ in range(1000):
    x = rng.uniform(-4, 4, (2, 3, 4, 4)).astype(np.float32)
    pa, pb, ya, yb, yc = moves_ref(x)
    if far_from_ties(pa) and far_from_ties(pb):
        break
else:
    raise SystemExit("qdq_moves: no input far from ties")
save_case("qdq_moves", model, [("x", x)],
          [("ya", ya.astype(np.float32)), ("yb", yb.astype(np.float32)),
           ("yc", yc.astype(np.float32))])


def qdq_chain(name, act, seed):
    """A residual int8 block with a symbolic batch for the CPU layout pass:
    Q -> [Conv 3x3] -> Q -> [Conv 3x3] -> Q, Q -> [Conv 1x1] -> Q,
    DQ + DQ -> Add -> Relu -> Q -> DQ -> MaxPool -> Q -> [Conv 1x1] -> Q -> DQ,
    each [..] between a DQ and a Q; activations of type act (uint8 or int8)
    with nonzero zero points, so padded QLinearConvs pad with them.  The
    expected output is the float QDQ graph's (numpy, float32 steps)."""
    rng = np.random.default_rng(seed)
    lo, hi, npt = (0, 255, np.uint8) if act == "uint8" else (-128, 127, np.int8)
    mid = (lo + hi + 1) // 2
    nodes, inits = [], []
    qp, done_dq = {}, set()

    def qparams(tag, zp):
        s = np.float32(rng.uniform(0.02, 0.06))
        inits.extend([t(tag + "_s", s), t(tag + "_z", npt(zp))])
        qp[tag] = (s, zp)
        return [tag + "_s", tag + "_z"]

    def q(src, tag, zp):
        nodes.append(helper.make_node("QuantizeLinear", [src] + qparams(tag, zp), [tag + "_q"]))
        return tag + "_q"

    def dq(tag):
        if tag in done_dq:
            return tag + "_d"
        done_dq.add(tag)
        nodes.append(helper.make_node("DequantizeLinear", [tag + "_q", tag + "_s", tag + "_z"],
                                      [tag + "_d"]))
        return tag + "_d"

    def conv(src_tag, tag, cin, cout, k, relu, zp):
        w = rng.integers(-127, 128, (cout, cin, k, k)).astype(np.int8)
        ws = (rng.uniform(0.5, 1.5, cout) * 0.01).astype(np.float32)
        xs = qp[src_tag][0]
        b = rng.integers(-300, 300, cout).astype(np.int32)
        inits.extend([t(tag + "_w", w), t(tag + "_ws", ws), t(tag + "_wz", np.zeros(cout, np.int8)),
                      t(tag + "_b", b), t(tag + "_bs", (xs * ws).astype(np.float32)),
                      t(tag + "_bz", np.zeros(cout, np.int32))])
        nodes.extend([
            helper.make_node("DequantizeLinear", [tag + "_w", tag + "_ws", tag + "_wz"],
                             [tag + "_wd"], axis=0),
            helper.make_node("DequantizeLinear", [tag + "_b", tag + "_bs", tag + "_bz"],
                             [tag + "_bd"], axis=0),
            helper.make_node("Conv", [dq(src_tag), tag + "_wd", tag + "_bd"], [tag + "_c"],
                             name=tag, pads=[k // 2] * 4)])
        out = tag + "_c"
        if relu:
            nodes.append(helper.make_node("Relu", [out], [tag + "_r"]))
            out = tag + "_r"
        return q(out, tag, lo if relu else zp)

    q("x", "in", mid - 10)
    conv("in", "c1", 8, 16, 3, False, mid + 7)  # c2 pads c1's NHWC output with it
    conv("c1", "c2", 16, 16, 3, False, mid + 5)
    conv("in", "c3", 8, 16, 1, False, mid - 3)
    nodes.append(helper.make_node("Add", [dq("c2"), dq("c3")], ["sum"]))
    nodes.append(helper.make_node("Relu", ["sum"], ["sum_r"]))
    q("sum_r", "add", lo)
    nodes.append(helper.make_node("MaxPool", [dq("add")], ["pool"], kernel_shape=[2, 2],
                                  strides=[2, 2]))
    q("pool", "pool", lo)
    conv("pool", "c4", 16, 4, 1, False, mid)
    nodes.append(helper.make_node("DequantizeLinear", ["c4_q", "c4_s", "c4_z"], ["y"]))
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, ["N", 8, 10, 10])],
        [helper.make_tensor_value_info("y", F, ["N", 4, 5, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    x = rng.uniform(-3, 3, (2, 8, 10, 10)).astype(np.float32)
    save_case(name, model, [("x", x)], [])  # outputs: the float session's


qdq_chain("qdq_chain", "uint8", 11)
qdq_chain("qdq_chain_s8", "int8", 12)
