#!/usr/bin/python3
"""gen_linalg.py - writes backend-test-layout cases for the linalg operator
group under tests/data/kernels/linalg/ (model.onnx + test_data_set_0/
input_N.pb, output_N.pb), with torch / numpy references.  They cover what
the ONNX node suite does not: grouped and depthwise Conv with bias,
asymmetric pads, 1-D and 3-D Conv, SAME_LOWER, weights as initializers,
float16/float64 Conv, ConvTranspose with output_padding / groups /
dilations, batched MatMul broadcast with 1-D operands and integer types,
Gemm with broadcast C and the opset-6 broadcast attribute, BatchNorm opset
6 and 7, pools with ceil_mode / count_include_pad, GlobalLpPool, and a
bidirectional LSTM with sequence_lens, LpPool with pads.  Cases named err_* are invalid
models the errors suite expects to fail with a message naming the node.
Run: /usr/bin/python3 tests/data/kernels/gen_linalg.py
"""
import os
import shutil

import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg")
RNG = np.random.default_rng(4321)
NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
           np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64,
           np.int32: TensorProto.INT32, np.uint8: TensorProto.UINT8,
           np.int8: TensorProto.INT8}


def vinfo(name, arr):
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype.type],
                                         list(arr.shape))


def case(name, op, inputs, outputs, opset, inits=(), **attrs):
    """inputs/outputs: lists of (name, array); an input named '' is omitted;
    inputs whose names are in inits become initializers."""
    node = helper.make_node(op, [n for n, _ in inputs],
                            [n for n, _ in outputs], name=name + "_node",
                            **attrs)
    outputs = [(n, a) for n, a in outputs if n]
    feeds = [(n, a) for n, a in inputs if n and n not in inits]
    graph = helper.make_graph(
        [node], name, [vinfo(n, a) for n, a in feeds],
        [vinfo(n, a) for n, a in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inputs
                     if n in inits])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", feeds), ("output", outputs)):
        for i, (n, a) in enumerate(items):
            t = numpy_helper.from_array(a, n)
            with open(os.path.join(d, "test_data_set_0",
                                   "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def conv_ref(x, w, b, stride, pads, dil, group):
    """pads in ONNX order [b1, b2, ..., e1, e2, ...]."""
    n = x.ndim - 2
    tp = []
    for i in reversed(range(n)):
        tp += [pads[i], pads[n + i]]
    xp = F.pad(t(x).double(), tp)
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    y = fn(xp, t(w).double(), None if b is None else t(b).double(),
           stride=stride, dilation=dil, groups=group)
    return y.numpy()


def conv_cases():
    x, w, b = rand(1, 4, 5, 5), rand(4, 2, 3, 3), rand(4)
    case("conv2d_group2_bias", "Conv", [("x", x), ("w", w), ("b", b)],
         [("y", conv_ref(x, w, b, 1, [1, 1, 1, 1], 1, 2).astype(np.float32))],
         13, group=2, pads=[1, 1, 1, 1])
    x, w, b = rand(2, 3, 7, 6), rand(3, 1, 3, 3), rand(3)
    case("conv2d_depthwise_bias_strided_init", "Conv",
         [("x", x), ("w", w), ("b", b)],
         [("y", conv_ref(x, w, b, 2, [1, 0, 1, 1], 1, 3).astype(np.float32))],
         11, inits=("w", "b"), group=3, strides=[2, 2], pads=[1, 0, 1, 1],
         kernel_shape=[3, 3])
    x, w = rand(1, 2, 6, 5), rand(3, 2, 2, 3)
    case("conv2d_asymmetric_pads_dilated", "Conv", [("x", x), ("w", w)],
         [("y", conv_ref(x, w, None, 1, [0, 2, 3, 1], [2, 1], 1)
           .astype(np.float32))], 13, pads=[0, 2, 3, 1], dilations=[2, 1])
    x, w, b = rand(2, 2, 9), rand(3, 2, 3), rand(3)
    case("conv1d_strided_bias", "Conv", [("x", x), ("w", w), ("b", b)],
         [("y", conv_ref(x, w, b, 2, [1, 2], 1, 1).astype(np.float32))], 13,
         strides=[2], pads=[1, 2])
    x, w = rand(1, 2, 4, 5, 3), rand(2, 2, 2, 3, 2)
    case("conv3d_pads", "Conv", [("x", x), ("w", w)],
         [("y", conv_ref(x, w, None, 1, [1, 0, 1, 0, 1, 1], 1, 1)
           .astype(np.float32))], 13, pads=[1, 0, 1, 0, 1, 1])
    # SAME_LOWER, stride 2, in 7, k 4: out 4, total pad 3 -> begin 2, end 1
    x, w = rand(1, 1, 7, 7), rand(2, 1, 4, 4)
    case("conv2d_same_lower_stride2", "Conv", [("x", x), ("w", w)],
         [("y", conv_ref(x, w, None, 2, [2, 2, 1, 1], 1, 1)
           .astype(np.float32))], 13, auto_pad="SAME_LOWER", strides=[2, 2])
    x, w, b = rand(1, 3, 5, 4), rand(4, 3, 1, 1), rand(4)
    case("conv2d_pointwise_f64", "Conv",
         [("x", x.astype(np.float64)), ("w", w.astype(np.float64)),
          ("b", b.astype(np.float64))],
         [("y", conv_ref(x, w, b, 1, [0] * 4, 1, 1))], 13)
    x, w = rand(1, 2, 5, 5, dtype=np.float16), rand(2, 2, 3, 3,
                                                     dtype=np.float16)
    case("conv2d_float16", "Conv", [("x", x), ("w", w)],
         [("y", conv_ref(x.astype(np.float32), w.astype(np.float32), None, 1,
                         [1] * 4, 1, 1).astype(np.float16))], 13,
         pads=[1, 1, 1, 1])


def convtranspose_cases():
    x, w, b = rand(1, 2, 3, 3), rand(2, 3, 3, 3), rand(3)
    y = F.conv_transpose2d(t(x), t(w), t(b), stride=2, padding=1,
                           output_padding=1).numpy()
    case("convtranspose_output_padding_bias", "ConvTranspose",
         [("x", x), ("w", w), ("b", b)], [("y", y)], 13, strides=[2, 2],
         pads=[1, 1, 1, 1], output_padding=[1, 1])
    x, w = rand(2, 4, 3, 4), rand(4, 1, 2, 3)
    y = F.conv_transpose2d(t(x), t(w), stride=[1, 2], groups=2,
                           dilation=[2, 1]).numpy()
    case("convtranspose_group2_dilated", "ConvTranspose",
         [("x", x), ("w", w)], [("y", y)], 13, strides=[1, 2], group=2,
         dilations=[2, 1])
    x, w = rand(1, 1, 5), rand(1, 2, 3)
    y = F.conv_transpose1d(t(x), t(w), stride=3, padding=1).numpy()
    case("convtranspose1d_pads", "ConvTranspose", [("x", x), ("w", w)],
         [("y", y)], 13, strides=[3], pads=[1, 1])


def matmul_cases():
    a, b = rand(2, 1, 3, 4), rand(3, 4, 5)
    case("matmul_batch_broadcast", "MatMul", [("a", a), ("b", b)],
         [("y", np.matmul(a, b))], 13)
    a, b = rand(4), rand(2, 4, 3)
    case("matmul_1d_left", "MatMul", [("a", a), ("b", b)],
         [("y", np.matmul(a, b))], 13)
    a, b = rand(2, 3, 4), rand(4)
    case("matmul_1d_right", "MatMul", [("a", a), ("b", b)],
         [("y", np.matmul(a, b))], 13)
    a, b = rand(4), rand(4)
    case("matmul_1d_both", "MatMul", [("a", a), ("b", b)],
         [("y", np.array(np.dot(a, b), np.float32))], 13)
    a = RNG.integers(-9, 9, (2, 3, 4)).astype(np.int32)
    b = RNG.integers(-9, 9, (4, 2)).astype(np.int32)
    case("matmul_int32_broadcast", "MatMul", [("a", a), ("b", b)],
         [("y", np.matmul(a, b))], 13)
    a, b = rand(3, 5, dtype=np.float64), rand(5, 2, dtype=np.float64)
    case("matmul_f64_init", "MatMul", [("a", a), ("b", b)],
         [("y", np.matmul(a, b))], 13, inits=("b",))
    a = RNG.integers(0, 255, (2, 3, 4)).astype(np.uint8)
    b = RNG.integers(-128, 127, (4, 5)).astype(np.int8)
    azp = np.array([3, 100, 7], np.uint8)
    bzp = np.array(-2, np.int8)
    ref = np.matmul(a.astype(np.int32) - azp.astype(np.int32)[:, None],
                    b.astype(np.int32) - np.int32(bzp))
    case("matmulinteger_per_row_zp", "MatMulInteger",
         [("a", a), ("b", b), ("azp", azp), ("bzp", bzp)],
         [("y", ref.astype(np.int32))], 10)


def gemm_cases():
    a, b, c = rand(4, 3), rand(5, 4), rand(5)
    y = 0.5 * a.T @ b.T + 2.0 * c
    case("gemm_trans_broadcast_row_c", "Gemm", [("a", a), ("b", b), ("c", c)],
         [("y", y.astype(np.float32))], 13, transA=1, transB=1, alpha=0.5,
         beta=2.0)
    a, b, c = rand(3, 4), rand(4, 5), rand(3, 1)
    case("gemm_column_c", "Gemm", [("a", a), ("b", b), ("c", c)],
         [("y", (a @ b + c).astype(np.float32))], 13)
    a, b, c = rand(3, 4), rand(4, 5), rand(5)
    case("gemm_opset6_broadcast_attr", "Gemm", [("a", a), ("b", b),
                                                 ("c", c)],
         [("y", (a @ b + 3.0 * c).astype(np.float32))], 6, broadcast=1,
         beta=3.0)
    a, b = rand(3, 4), rand(4, 5)
    case("gemm_no_c_opset11_init", "Gemm", [("a", a), ("b", b)],
         [("y", (2.0 * a @ b).astype(np.float32))], 11, inits=("b",),
         alpha=2.0)


def bn_ref(x, s, bias, mean, var, eps):
    sh = (1, -1) + (1,) * (x.ndim - 2)
    return (s.reshape(sh) * (x - mean.reshape(sh)) /
            np.sqrt(var.reshape(sh) + eps) + bias.reshape(sh))


def norm_pool_cases():
    x, s, bias, mean = rand(2, 3, 4, 2), rand(3), rand(3), rand(3)
    var = RNG.random(3).astype(np.float32) + 0.1
    ins = [("x", x), ("s", s), ("bias", bias), ("mean", mean), ("var", var)]
    case("batchnorm_opset6_is_test", "BatchNormalization", ins,
         [("y", bn_ref(x, s, bias, mean, var, 1e-3).astype(np.float32))], 6,
         is_test=1, epsilon=1e-3, spatial=1)
    case("batchnorm_opset7_3d_init", "BatchNormalization", ins,
         [("y", bn_ref(x, s, bias, mean, var, 1e-5).astype(np.float32))], 7,
         inits=("s", "bias", "mean", "var"))
    x = rand(1, 2, 6, 7)
    y = F.avg_pool2d(t(x), 3, stride=2, padding=1, ceil_mode=True,
                     count_include_pad=True).numpy()
    case("averagepool_ceil_include_pad", "AveragePool", [("x", x)],
         [("y", y)], 11, kernel_shape=[3, 3], strides=[2, 2],
         pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=1)
    y, idx = F.max_pool2d(t(x), 3, stride=2, padding=1, ceil_mode=True,
                          return_indices=True)
    # ONNX indices are flat over the whole tensor, torch's per plane.
    plane = (np.arange(2) * x.shape[2] * x.shape[3]).reshape(1, 2, 1, 1)
    case("maxpool_ceil_indices", "MaxPool", [("x", x)],
         [("y", y.numpy()), ("i", idx.numpy().astype(np.int64) + plane)], 12,
         kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    x = rand(1, 2, 5, 5)
    xp = np.pad(np.abs(x), ((0, 0), (0, 0), (0, 1), (0, 1))) ** 3
    y = np.zeros((1, 2, 3, 3))
    for i in range(3):
        for j in range(3):
            y[:, :, i, j] = xp[:, :, 2 * i:2 * i + 2,
                               2 * j:2 * j + 2].sum(axis=(2, 3)) ** (1 / 3)
    case("lppool_p3_pads", "LpPool", [("x", x)], [("y", y.astype(np.float32))],
         11, kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], p=3)
    x = rand(2, 3, 4, 5)
    y = (np.abs(x) ** 3).sum(axis=(2, 3), keepdims=True) ** (1.0 / 3)
    case("globallppool_p3", "GlobalLpPool", [("x", x)],
         [("y", y.astype(np.float32))], 2, p=3)


def lstm_ref(x, w, r, b, lens, hid):
    """Bidirectional ONNX LSTM (gates i, o, f, c) with sequence_lens."""
    seq, batch, _ = x.shape
    y = np.zeros((seq, 2, batch, hid), np.float64)
    yh = np.zeros((2, batch, hid), np.float64)
    sig = lambda v: 1 / (1 + np.exp(-v))
    for d in range(2):
        for bi in range(batch):
            h, c = np.zeros(hid), np.zeros(hid)
            steps = range(lens[bi]) if d == 0 else reversed(range(lens[bi]))
            for ti in steps:
                g = (w[d] @ x[ti, bi] + r[d] @ h + b[d, :4 * hid] +
                     b[d, 4 * hid:])
                i, o, f, cc = np.split(g, 4)
                c = sig(f) * c + sig(i) * np.tanh(cc)
                h = sig(o) * np.tanh(c)
                y[ti, d, bi] = h
            yh[d, bi] = h
    return y.astype(np.float32), yh.astype(np.float32)


def rnn_cases():
    hid, seq, batch, inp = 3, 4, 3, 2
    x, w, r = rand(seq, batch, inp), rand(2, 4 * hid, inp), rand(2, 4 * hid,
                                                                  hid)
    b = rand(2, 8 * hid)
    lens = np.array([4, 2, 3], np.int32)
    y, yh = lstm_ref(x, w, r, b, lens, hid)
    case("lstm_bidirectional_seq_lens", "LSTM",
         [("x", x), ("w", w), ("r", r), ("b", b), ("lens", lens)],
         [("y", y), ("yh", yh)], 7, direction="bidirectional",
         hidden_size=hid)


def error_cases():
    x, w = rand(1, 3, 5, 5), rand(2, 2, 3, 3)
    case("err_conv_channel_mismatch", "Conv", [("x", x), ("w", w)],
         [("y", rand(1, 2, 3, 3))], 13)
    a, b = rand(3, 4), rand(5, 2)
    case("err_gemm_inner_dims", "Gemm", [("a", a), ("b", b)],
         [("y", rand(3, 2))], 13)
    a, b = rand(2, 3, 4), rand(3, 5)
    case("err_matmul_inner_dims", "MatMul", [("a", a), ("b", b)],
         [("y", rand(2, 3, 5))], 13)
    x = rand(1, 1, 2, 2)
    case("err_maxpool_kernel_too_big", "MaxPool", [("x", x)],
         [("y", rand(1, 1, 1, 1))], 12, kernel_shape=[3, 3])


# Depthwise / grouped conv fast paths; a separate RNG keeps the fixtures
# above byte-identical.
RNG_DW = np.random.default_rng(8765)


def rand_dw(*shape):
    return RNG_DW.standard_normal(shape).astype(np.float32)


def conv_dw_cases():
    for name, xs, stride in (("conv_dw3x3_s1_pads_bias", (2, 6, 9, 13), 1),
                             ("conv_dw3x3_s2_pads_bias", (1, 5, 10, 17), 2)):
        c = xs[1]
        x, w, b = rand_dw(*xs), rand_dw(c, 1, 3, 3), rand_dw(c)
        case(name, "Conv", [("x", x), ("w", w), ("b", b)],
             [("y", conv_ref(x, w, b, stride, [1] * 4, 1, c)
               .astype(np.float32))], 13, inits=("w", "b"), group=c,
             strides=[stride] * 2, pads=[1] * 4, kernel_shape=[3, 3])
    x, w = rand_dw(1, 3, 12, 14), rand_dw(6, 1, 5, 3)
    case("conv_dw5x3_mult2_dilated", "Conv", [("x", x), ("w", w)],
         [("y", conv_ref(x, w, None, [1, 2], [2, 1, 2, 3], [1, 2], 3)
           .astype(np.float32))], 13, inits=("w",), group=3,
         strides=[1, 2], pads=[2, 1, 2, 3], dilations=[1, 2])
    x, w, b = rand_dw(1, 8, 7, 9), rand_dw(12, 2, 3, 3), rand_dw(12)
    case("conv_group4_bias_init", "Conv", [("x", x), ("w", w), ("b", b)],
         [("y", conv_ref(x, w, b, 1, [1, 0, 1, 2], 1, 4)
           .astype(np.float32))], 13, inits=("w", "b"), group=4,
         pads=[1, 0, 1, 2])


# LSTM's float32 path (linalg_lstm_f32.c): full-length sequences, default
# activations; its own RNG keeps the fixtures above byte-identical.
RNG_LSTM = np.random.default_rng(4321)


def rand_lstm(*shape):
    return (RNG_LSTM.standard_normal(shape) * 0.5).astype(np.float32)


def lstm_full_ref(x, w, r, b, h0, c0, dirs):
    """ONNX LSTM over full sequences; dirs: per direction True = forward.
    Returns Y [seq, nd, batch, hid], Y_h and Y_c [nd, batch, hid]."""
    seq, batch, _ = x.shape
    nd, hid = len(dirs), r.shape[2]
    y = np.zeros((seq, nd, batch, hid))
    yh, yc = np.zeros((nd, batch, hid)), np.zeros((nd, batch, hid))
    sig = lambda v: 1 / (1 + np.exp(-v))
    for d, fwd in enumerate(dirs):
        for bi in range(batch):
            h = h0[d, bi].astype(np.float64) if h0 is not None else np.zeros(hid)
            c = c0[d, bi].astype(np.float64) if c0 is not None else np.zeros(hid)
            for ti in (range(seq) if fwd else reversed(range(seq))):
                g = w[d].astype(np.float64) @ x[ti, bi] + r[d] @ h
                if b is not None:
                    g = g + b[d, :4 * hid] + b[d, 4 * hid:]
                i, o, f, cc = np.split(g, 4)
                c = sig(f) * c + sig(i) * np.tanh(cc)
                h = sig(o) * np.tanh(c)
                y[ti, d, bi] = h
            yh[d, bi], yc[d, bi] = h, c
    f32 = lambda a: a.astype(np.float32)
    return f32(y), f32(yh), f32(yc)


def lstm_f32_cases():
    seq, batch, inp, hid = 7, 3, 8, 16
    x, w, r = rand_lstm(seq, batch, inp), rand_lstm(2, 4 * hid, inp), \
        rand_lstm(2, 4 * hid, hid)
    b, h0, c0 = rand_lstm(2, 8 * hid), rand_lstm(2, batch, hid), \
        rand_lstm(2, batch, hid)
    y, yh, yc = lstm_full_ref(x, w, r, b, h0, c0, [True, False])
    case("lstm_f32_bidirectional_initial", "LSTM",
         [("x", x), ("w", w), ("r", r), ("b", b), ("", None), ("h0", h0),
          ("c0", c0)],
         [("y", y), ("yh", yh), ("yc", yc)], 14, inits=("w", "r", "b"),
         direction="bidirectional", hidden_size=hid)
    seq, batch, inp, hid = 5, 2, 3, 20  # 4H = 80: vector tails
    x, w, r = rand_lstm(seq, batch, inp), rand_lstm(1, 4 * hid, inp), \
        rand_lstm(1, 4 * hid, hid)
    _, yh, _ = lstm_full_ref(x, w, r, None, None, None, [False])
    case("lstm_f32_reverse_yh_only", "LSTM", [("x", x), ("w", w), ("r", r)],
         [("", None), ("yh", yh)], 13, direction="reverse", hidden_size=hid)
    # H a multiple of 32: R in unit blocks (lstm_step_blocked), packed at
    # prepare (an initializer) and per run (an input)
    seq, batch, inp, hid = 6, 2, 5, 32
    x, w, r = rand_lstm(seq, batch, inp), rand_lstm(2, 4 * hid, inp), \
        rand_lstm(2, 4 * hid, hid)
    b, h0, c0 = rand_lstm(2, 8 * hid), rand_lstm(2, batch, hid), \
        rand_lstm(2, batch, hid)
    y, yh, yc = lstm_full_ref(x, w, r, b, h0, c0, [True, False])
    case("lstm_f32_blocked_h32", "LSTM",
         [("x", x), ("w", w), ("r", r), ("b", b), ("", None), ("h0", h0),
          ("c0", c0)],
         [("y", y), ("yh", yh), ("yc", yc)], 14, inits=("w", "r", "b"),
         direction="bidirectional", hidden_size=hid)
    seq, batch, inp, hid = 4, 1, 3, 64
    x, w, r = rand_lstm(seq, batch, inp), rand_lstm(1, 4 * hid, inp), \
        rand_lstm(1, 4 * hid, hid) * 0.25
    y, yh, _ = lstm_full_ref(x, w, r, None, None, None, [True])
    case("lstm_f32_blocked_h64_r_input", "LSTM",
         [("x", x), ("w", w), ("r", r)], [("y", y), ("yh", yh)], 14,
         inits=("w",), hidden_size=hid)


# float16 Convs with constant weights run on oneDNN's float32 primitive
# (weights widened once, X/Y converted per call); own RNG as above.
RNG_F16 = np.random.default_rng(2468)


def conv_f16_cases():
    r = lambda *shape: (RNG_F16.standard_normal(shape) * 0.5).astype(np.float16)
    x, w, b = r(1, 8, 9, 9), r(16, 8, 3, 3), r(16)
    y = conv_ref(x.astype(np.float32), w.astype(np.float32),
                 b.astype(np.float32), 2, [1] * 4, 1, 1).astype(np.float16)
    case("conv2d_float16_init_strided", "Conv", [("x", x), ("w", w), ("b", b)],
         [("y", y)], 13, inits=("w", "b"), strides=[2, 2], pads=[1] * 4)
    a, bm = r(2, 3, 8), r(8, 5)
    case("matmul_float16_init", "MatMul", [("a", a), ("b", bm)],
         [("y", (a.astype(np.float64) @ bm.astype(np.float64))
           .astype(np.float16))], 13, inits=("b",))


def convtranspose_tile_cases():
    """ConvTranspose with stride == kernel, no pads (the tiled kernel,
    linalg_convt_tiles.c): 2x2 with 64- and 16-column runs and a ragged
    rest, a 3x2 tile over 200 columns (two blocks), 1x1 and 4x4 tiles
    (one tile column at a time), batches and odd channel counts."""
    specs = [  # name, x shape, w shape, stride, bias, w an initializer
        ("convtranspose_tiles_2x2_bias", (2, 5, 3, 70), (5, 3, 2, 2),
         [2, 2], True, False),
        ("convtranspose_tiles_3x2_init", (1, 4, 2, 200), (4, 6, 3, 2),
         [3, 2], True, True),
        ("convtranspose_tiles_1x1", (1, 3, 4, 5), (3, 2, 1, 1), [1, 1],
         False, False),
        ("convtranspose_tiles_4x4_bias", (1, 2, 2, 3), (2, 2, 4, 4), [4, 4],
         True, True),
    ]
    for name, xs, ws, stride, bias, init in specs:
        x, w = rand(*xs), rand(*ws)
        b = rand(ws[1]) if bias else None
        y = F.conv_transpose2d(t(x), t(w), t(b) if bias else None,
                               stride=stride).numpy()
        inputs = [("x", x), ("w", w)] + ([("b", b)] if bias else [])
        case(name, "ConvTranspose", inputs, [("y", y)], 13,
             inits=("w", "b") if init else (), strides=stride,
             kernel_shape=list(ws[2:]))


def maxpool_i8_ref(x, k, s, pads, dil, ceil):
    """2-D max pooling over the valid taps only (pads are no value)."""
    n, c, h, w = x.shape
    out = []
    for d, size in enumerate((h, w)):
        span = (k[d] - 1) * dil[d] + 1
        num = size + pads[d] + pads[d + 2] - span
        o = (-(-num // s[d]) if ceil else num // s[d]) + 1
        if ceil and (o - 1) * s[d] >= size + pads[d]:
            o -= 1
        out.append(o)
    y = np.zeros((n, c, out[0], out[1]), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            rows = [i * s[0] - pads[0] + a * dil[0] for a in range(k[0])]
            cols = [j * s[1] - pads[1] + b * dil[1] for b in range(k[1])]
            rows = [r for r in rows if 0 <= r < h]
            cols = [q for q in cols if 0 <= q < w]
            y[:, :, i, j] = x[:, :, rows][:, :, :, cols].max(axis=(2, 3))
    return y


def maxpool_i8_cases():
    """8-bit MaxPool (opset 12): the 2-D kernel of linalg_pool_i8.c, NCHW."""
    x = RNG.integers(0, 256, (2, 3, 7, 9), dtype=np.uint8)
    case("maxpool_u8_pads_ceil", "MaxPool", [("x", x)],
         [("y", maxpool_i8_ref(x, [3, 3], [2, 2], [1, 1, 1, 1], [1, 1], True))],
         12, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    x = RNG.integers(-128, 128, (1, 4, 8, 10), dtype=np.int8)
    case("maxpool_s8_dilated", "MaxPool", [("x", x)],
         [("y", maxpool_i8_ref(x, [2, 3], [1, 2], [0, 1, 0, 0], [2, 1], False))],
         12, kernel_shape=[2, 3], strides=[1, 2], pads=[0, 1, 0, 0], dilations=[2, 1])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    conv_cases()
    convtranspose_cases()
    matmul_cases()
    gemm_cases()
    norm_pool_cases()
    rnn_cases()
    error_cases()
    conv_dw_cases()
    lstm_f32_cases()
    conv_f16_cases()
    convtranspose_tile_cases()
    maxpool_i8_cases()


if __name__ == "__main__":
    main()
