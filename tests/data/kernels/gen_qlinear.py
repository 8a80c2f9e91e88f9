#!/usr/bin/python3
"""gen_qlinear.py - writes backend-test-layout cases for QLinearConv (and
MatMulInteger, below) under
tests/data/kernels/qlinear/ (model.onnx + test_data_set_0/input_0.pb,
output_0.pb) with everything but X an initializer, the shape of node that
the oneDNN int8 path (src/kernels/dnnl/qlinear_dnnl.c) takes: uint8 and
int8 activations, nonzero zero points, pads, stride 2, depthwise and
grouped, per-tensor and per-channel weight scales, with and without bias.
The ONNX node suite's QLinearConv feeds every input at run time, which that
path leaves to the reference kernel.  Expected Y: the int32 accumulator
exactly (torch, float64 on integers), then the requantization in float32
as ONNX specifies it: (acc + bias) * (x_scale * w_scale / y_scale),
round half to even, add y_zero_point, saturate.
MatMulInteger cases (the dynamic-quantization MatMul, kernels/dnnl/
qlinear_matmul_dnnl.c): a constant int8 B with zero or absent zero points,
A's zero point a graph input (known only at run time), a constant, or one
per row (which the reference kernel runs); expected Y = (A - a_zp) @ B in
int64, which fits int32 here.
Run: /usr/bin/python3 tests/data/kernels/gen_qlinear.py
"""
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qlinear")
RNG = np.random.default_rng(2024)
NP2ONNX = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}


def requant(acc, mult, yzp, ydt):
    info = np.iinfo(ydt)
    r = np.rint(acc.astype(np.float32) * mult) + np.float32(yzp)
    return np.clip(r, info.min, info.max).astype(ydt)


def save_case(name, graph, inputs, y):
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for i, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i),
                  "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def qconv_case(name, x, xzp, w, ws, b, ys, yzp, ydt, stride, pads, group):
    """pads: [top, left, bottom, right]; ws: scalar or per output channel."""
    xs = np.float32(0.02)
    ws = np.asarray(ws, dtype=np.float32)
    ys = np.float32(ys)
    xi = torch.from_numpy(x.astype(np.float64) - float(xzp))
    xi = F.pad(xi, [pads[1], pads[3], pads[0], pads[2]])
    acc = F.conv2d(xi, torch.from_numpy(w.astype(np.float64)),
                   stride=stride, groups=group).numpy()
    if b is not None:
        acc = acc + b.astype(np.float64)[None, :, None, None]
    assert np.abs(acc).max() < 2 ** 24
    mult = (xs * ws / ys).astype(np.float32)
    mult = mult[None, :, None, None] if mult.ndim else mult
    y = requant(acc.astype(np.int64), mult, yzp, ydt)
    inits = [
        numpy_helper.from_array(np.array(xs), "x_scale"),
        numpy_helper.from_array(np.array(xzp, dtype=x.dtype), "x_zero_point"),
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(ws, "w_scale"),
        numpy_helper.from_array(np.zeros(ws.shape, np.int8), "w_zero_point"),
        numpy_helper.from_array(np.array(ys), "y_scale"),
        numpy_helper.from_array(np.array(yzp, dtype=ydt), "y_zero_point"),
    ]
    ins = ["x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point",
           "y_scale", "y_zero_point"]
    if b is not None:
        inits.append(numpy_helper.from_array(b, "B"))
        ins.append("B")
    node = helper.make_node("QLinearConv", ins, ["y"], name=name + "_node",
                            strides=[stride, stride], pads=pads, group=group,
                            kernel_shape=list(w.shape[2:]))
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("x", NP2ONNX[x.dtype.type],
                                       list(x.shape))],
        [helper.make_tensor_value_info("y", NP2ONNX[ydt], list(y.shape))],
        initializer=inits)
    save_case(name, graph, [("x", x)], y)
    clipped = np.mean((y == np.iinfo(ydt).min) | (y == np.iinfo(ydt).max))
    assert clipped < 0.5 and len(np.unique(y)) > 30, (name, clipped)


def qconv_chain_case(name, x, xzp, layers):
    """QLinearConvs one after another, each layer (w, per-channel ws, bias,
    yzp, pad) reading the previous one's uint8 Y; y_scale picked from the
    accumulators' spread so that Y covers its range.  A 3x3 -> 1x1 -> 3x3
    chain puts a 1x1 (hetrt's VNNI kernel once channels-last) before a 3x3
    on oneDNN, whose weights it prefetches (het_kernel.state_prefetch)."""
    nodes, inits = [], []
    xs, src, cur = np.float32(0.02), "x", x
    inits += [numpy_helper.from_array(np.array(xs), "x_scale"),
              numpy_helper.from_array(np.array(xzp, dtype=x.dtype),
                                      "x_zero_point")]
    sname, zname, czp = "x_scale", "x_zero_point", xzp
    for i, (w, ws, b, yzp, pad) in enumerate(layers):
        ws = np.asarray(ws, dtype=np.float32)
        xi = torch.from_numpy(cur.astype(np.float64) - float(czp))
        acc = F.conv2d(F.pad(xi, [pad] * 4),
                       torch.from_numpy(w.astype(np.float64))).numpy()
        acc = acc + b.astype(np.float64)[None, :, None, None]
        assert np.abs(acc).max() < 2 ** 24
        ys = np.float32(xs * float(ws.mean()) * acc.std() / 40.0)
        mult = (xs * ws / ys).astype(np.float32)[None, :, None, None]
        cur = requant(acc.astype(np.int64), mult, yzp, np.uint8)
        t = "l%d_" % i
        inits += [numpy_helper.from_array(w, t + "w"),
                  numpy_helper.from_array(ws, t + "w_scale"),
                  numpy_helper.from_array(np.zeros(ws.shape, np.int8),
                                          t + "w_zero_point"),
                  numpy_helper.from_array(np.array(ys), t + "y_scale"),
                  numpy_helper.from_array(np.array(yzp, dtype=np.uint8),
                                          t + "y_zero_point"),
                  numpy_helper.from_array(b, t + "B")]
        out = "y" if i == len(layers) - 1 else t + "y"
        nodes.append(helper.make_node(
            "QLinearConv", [src, sname, zname, t + "w", t + "w_scale",
                            t + "w_zero_point", t + "y_scale",
                            t + "y_zero_point", t + "B"], [out],
            name=name + "_" + t + "node", pads=[pad] * 4,
            kernel_shape=list(w.shape[2:])))
        src, sname, zname, xs, czp = out, t + "y_scale", t + "y_zero_point", ys, yzp
        clipped = np.mean((cur == 0) | (cur == 255))
        assert clipped < 0.5 and len(np.unique(cur)) > 30, (name, i, clipped)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.UINT8,
                                       list(cur.shape))],
        initializer=inits)
    save_case(name, graph, [("x", x)], cur)


def mmint_case(name, a, azp, azp_input, b, bzp):
    """azp: None, a scalar or one per row (a numpy array of a's type);
    azp_input: feed it as a graph input; bzp: None or zeros."""
    ins, inits = ["a", "b"], [numpy_helper.from_array(b, "b")]
    inputs = [helper.make_tensor_value_info("a", NP2ONNX[a.dtype.type],
                                            list(a.shape))]
    feeds = [("a", a)]
    if azp is not None:
        ins.append("azp")
        if azp_input:
            inputs.append(helper.make_tensor_value_info(
                "azp", NP2ONNX[a.dtype.type], list(azp.shape)))
            feeds.append(("azp", azp))
        else:
            inits.append(numpy_helper.from_array(azp, "azp"))
    if bzp is not None:
        if azp is None:
            ins.append("")  # no a_zero_point
        ins.append("bzp")
        inits.append(numpy_helper.from_array(bzp, "bzp"))
    zp = np.zeros(1, np.int64) if azp is None else azp.astype(np.int64)
    if zp.ndim == 1 and zp.size > 1:
        zp = zp.reshape(-1, 1)
    y = ((a.astype(np.int64) - zp) @ b.astype(np.int64)).astype(np.int32)
    node = helper.make_node("MatMulInteger", ins, ["y"], name=name + "_node")
    graph = helper.make_graph(
        [node], name, inputs,
        [helper.make_tensor_value_info("y", TensorProto.INT32, list(y.shape))],
        initializer=inits)
    save_case(name, graph, feeds, y)


def q8(dt, shape):
    info = np.iinfo(dt)
    return RNG.integers(info.min, info.max + 1, size=shape).astype(dt)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    m = 32
    qconv_case("qlinearconv_u8_3x3_pads_bias", q8(np.uint8, (1, 16, 10, 10)),
               120, q8(np.int8, (m, 16, 3, 3)), 0.004,
               RNG.integers(-20000, 20000, m).astype(np.int32), 0.13, 130,
               np.uint8, 1, [1, 1, 1, 1], 1)
    qconv_case("qlinearconv_s8_dw_s2_per_channel",
               q8(np.int8, (1, 32, 12, 12)), -3, q8(np.int8, (32, 1, 3, 3)),
               0.002 + 0.001 * (np.arange(32) % 5),
               RNG.integers(-3000, 3000, 32).astype(np.int32), 0.032, 5,
               np.int8, 2, [1, 1, 1, 1], 32)
    qconv_case("qlinearconv_u8_1x1_group2_no_bias",
               q8(np.uint8, (2, 8, 6, 6)), 7, q8(np.int8, (12, 4, 1, 1)),
               0.003 + 0.0005 * (np.arange(12) % 3), None, 0.02, 128, np.uint8,
               1, [0, 0, 0, 0], 2)
    mmint_case("matmulinteger_u8_runtime_zp", q8(np.uint8, (2, 5, 64)),
               np.array(117, np.uint8), True, q8(np.int8, (64, 48)),
               np.zeros(48, np.int8))
    mmint_case("matmulinteger_s8_const_zp", q8(np.int8, (7, 40)),
               np.array(-5, np.int8), False, q8(np.int8, (40, 17)), None)
    mmint_case("matmulinteger_u8_no_zp", q8(np.uint8, (3, 24)), None, False,
               q8(np.int8, (24, 9)), None)
    mmint_case("matmulinteger_u8_row_zp", q8(np.uint8, (4, 32)),
               q8(np.uint8, (4,)), False, q8(np.int8, (32, 8)), None)
    chain = []
    for c_in, k, yzp in ((16, 3, 110), (64, 1, 90), (64, 3, 128)):
        chain.append((q8(np.int8, (64, c_in, k, k)),
                      0.003 + 0.001 * (np.arange(64) % 4),
                      RNG.integers(-5000, 5000, 64).astype(np.int32), yzp,
                      k // 2))
    qconv_chain_case("qlinearconv_u8_chain_1x1_ahead",
                     q8(np.uint8, (1, 16, 9, 11)), 120, chain)


if __name__ == "__main__":
    main()
