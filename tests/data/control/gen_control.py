#!/usr/bin/python3
"""gen_control.py — models whose Convs, MatMuls and activations sit inside
If, Loop and Scan bodies, for test_control.c (bodies partitioned onto emu).

  if_conv.onnx    x[1,4,8,8], c (bool) -> If(c): then Relu(Conv(x, W1) + b1),
                  else Sigmoid(Conv(x, W2)); both branches read x and their
                  weights from the outer graph; y = If(...) + x_skip, where
                  x_skip = Conv1x1(x) is computed outside.
  loop_conv.onnx  x[1,4,8,8], n (int64) -> Loop(n): s' = Relu(Conv(s, W) + s),
                  scan output Tanh(s'); outputs the final s and the stacked
                  scan [n,1,4,8,8].  The body reads W from the outer graph.
  scan_rnn.onnx   xs[5,1,6] (sequence), h0[1,6] -> Scan: h' = Tanh(MatMul(x_t,
                  Wx) + MatMul(h, Wh)); outputs the last h and every h
                  stacked [5,1,6].
  nested_if.onnx  x[1,4,8,8], a, b (bool) -> If(a): [If(b): Relu(Conv(x, W)),
                  else Conv(x, W)], else x * 2: the inner branches read x
                  and W two scopes up.

Each model gets test_data_set_0 (and _1 where the condition or trip count
changes) with a numpy reference computed here in float64.  Weights come
from a fixed seed.  Run: /usr/bin/python3 tests/data/control/gen_control.py
(writes beside itself).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

rng = np.random.default_rng(20261202)
F = TensorProto.FLOAT


def w(shape, scale=0.3):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def conv(x, wt, b=None):
    """NCHW 3x3 (or 1x1) convolution, stride 1, 'same' padding, float64."""
    n, c, h, wd = x.shape
    k = wt.shape[2]
    p = k // 2
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    out = np.zeros((n, wt.shape[0], h, wd))
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + h, j:j + wd]
            out += np.einsum("nchw,oc->nohw", patch, wt[:, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def model(graph):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return m


def if_conv():
    w1, b1, w2, ws = w((4, 4, 3, 3)), w((4,)), w((4, 4, 3, 3)), w((4, 4, 1, 1))
    then_g = helper.make_graph(
        [helper.make_node("Conv", ["x", "W1", "B1"], ["t0"], name="then_conv",
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["t0"], ["t_out"], name="then_relu")],
        "then", [], [vi("t_out", [1, 4, 8, 8])])
    else_g = helper.make_graph(
        [helper.make_node("Conv", ["x", "W2"], ["e0"], name="else_conv",
                          pads=[1, 1, 1, 1]),
         helper.make_node("Sigmoid", ["e0"], ["e_out"], name="else_sigmoid")],
        "else", [], [vi("e_out", [1, 4, 8, 8])])
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "WS"], ["skip"], name="skip_conv"),
         helper.make_node("If", ["c"], ["branch"], name="If_0",
                          then_branch=then_g, else_branch=else_g),
         helper.make_node("Add", ["branch", "skip"], ["y"], name="join")],
        "if_conv", [vi("x", [1, 4, 8, 8]), vi("c", [], TensorProto.BOOL)],
        [vi("y", [1, 4, 8, 8])],
        [numpy_helper.from_array(a, n) for a, n in
         ((w1, "W1"), (b1, "B1"), (w2, "W2"), (ws, "WS"))])
    sets = []
    for c in (True, False):
        x = w((1, 4, 8, 8), 1.0)
        br = (np.maximum(conv(x, w1, b1), 0) if c
              else 1 / (1 + np.exp(-conv(x, w2))))
        y = br + conv(x, ws)
        sets.append(([x, np.array(c)], [y.astype(np.float32)]))
    return model(g), sets


def loop_conv():
    wt = w((4, 4, 3, 3), 0.2)
    body = helper.make_graph(
        [helper.make_node("Conv", ["s_in", "W"], ["b0"], name="body_conv",
                          pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["b0", "s_in"], ["b1"], name="body_add"),
         helper.make_node("Relu", ["b1"], ["s_out"], name="body_relu"),
         helper.make_node("Tanh", ["s_out"], ["scan_out"], name="body_tanh"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"],
                          name="body_cond")],
        "body", [vi("i", [], TensorProto.INT64),
                 vi("cond_in", [], TensorProto.BOOL), vi("s_in", [1, 4, 8, 8])],
        [vi("cond_out", [], TensorProto.BOOL), vi("s_out", [1, 4, 8, 8]),
         vi("scan_out", [1, 4, 8, 8])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["s_final", "scans"],
                          name="Loop_0", body=body)],
        "loop_conv", [vi("x", [1, 4, 8, 8]), vi("n", [], TensorProto.INT64)],
        [vi("s_final", [1, 4, 8, 8]), vi("scans", [None, 1, 4, 8, 8])],
        [numpy_helper.from_array(wt, "W")])
    sets = []
    for n in (3, 1):
        x = w((1, 4, 8, 8), 1.0)
        s, scans = x.astype(np.float64), []
        for _ in range(n):
            s = np.maximum(conv(s, wt) + s, 0)
            scans.append(np.tanh(s))
        sets.append(([x, np.array(n, dtype=np.int64)],
                     [s.astype(np.float32),
                      np.stack(scans).astype(np.float32)]))
    return model(g), sets


def scan_rnn():
    wx, wh = w((6, 6), 0.4), w((6, 6), 0.4)
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "Wx"], ["a"], name="scan_mx"),
         helper.make_node("MatMul", ["h_in", "Wh"], ["b"], name="scan_mh"),
         helper.make_node("Add", ["a", "b"], ["c"], name="scan_add"),
         helper.make_node("Tanh", ["c"], ["h_out"], name="scan_tanh"),
         helper.make_node("Identity", ["h_out"], ["h_seq"], name="scan_copy")],
        "body", [vi("h_in", [1, 6]), vi("x_t", [1, 6])],
        [vi("h_out", [1, 6]), vi("h_seq", [1, 6])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["h0", "xs"], ["h_last", "hs"],
                          name="Scan_0", body=body, num_scan_inputs=1)],
        "scan_rnn", [vi("h0", [1, 6]), vi("xs", [5, 1, 6])],
        [vi("h_last", [1, 6]), vi("hs", [5, 1, 6])],
        [numpy_helper.from_array(wx, "Wx"), numpy_helper.from_array(wh, "Wh")])
    h0, xs = w((1, 6), 1.0), w((5, 1, 6), 1.0)
    h, hs = h0.astype(np.float64), []
    for t in range(5):
        h = np.tanh(xs[t] @ wx + h @ wh)
        hs.append(h)
    return model(g), [([h0, xs], [h.astype(np.float32),
                                  np.stack(hs).astype(np.float32)])]


def nested_if():
    wt = w((4, 4, 3, 3))
    inner_then = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["it0"], name="inner_conv_a",
                          pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["it0"], ["it_out"], name="inner_relu")],
        "inner_then", [], [vi("it_out", [1, 4, 8, 8])])
    inner_else = helper.make_graph(
        [helper.make_node("Conv", ["x", "W"], ["ie_out"], name="inner_conv_b",
                          pads=[1, 1, 1, 1])],
        "inner_else", [], [vi("ie_out", [1, 4, 8, 8])])
    outer_then = helper.make_graph(
        [helper.make_node("If", ["b"], ["ot_out"], name="If_inner",
                          then_branch=inner_then, else_branch=inner_else)],
        "outer_then", [], [vi("ot_out", [1, 4, 8, 8])])
    outer_else = helper.make_graph(
        [helper.make_node("Add", ["x", "x"], ["oe_out"], name="outer_double")],
        "outer_else", [], [vi("oe_out", [1, 4, 8, 8])])
    g = helper.make_graph(
        [helper.make_node("If", ["a"], ["y"], name="If_outer",
                          then_branch=outer_then, else_branch=outer_else)],
        "nested_if", [vi("x", [1, 4, 8, 8]), vi("a", [], TensorProto.BOOL),
                      vi("b", [], TensorProto.BOOL)],
        [vi("y", [1, 4, 8, 8])], [numpy_helper.from_array(wt, "W")])
    sets = []
    for a, b in ((True, True), (True, False), (False, True)):
        x = w((1, 4, 8, 8), 1.0)
        if a:
            y = np.maximum(conv(x, wt), 0) if b else conv(x, wt)
        else:
            y = 2 * x.astype(np.float64)
        sets.append(([x, np.array(a), np.array(b)], [y.astype(np.float32)]))
    return model(g), sets


def save(name, m, sets):
    """NAME/model.onnx and NAME/test_data_set_<k>/{input,output}_<i>.pb."""
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    onnx.save(m, os.path.join(out, "model.onnx"))
    ins = [v.name for v in m.graph.input]
    outs = [v.name for v in m.graph.output]
    for k, (xs, ys) in enumerate(sets):
        data = os.path.join(out, f"test_data_set_{k}")
        os.makedirs(data, exist_ok=True)
        for kind, names, arrs in (("input", ins, xs), ("output", outs, ys)):
            for i, (vname, arr) in enumerate(zip(names, arrs)):
                onnx.save_tensor(numpy_helper.from_array(arr, vname),
                                 os.path.join(data, f"{kind}_{i}.pb"))


for name, make in (("if_conv", if_conv), ("loop_conv", loop_conv),
                   ("scan_rnn", scan_rnn), ("nested_if", nested_if)):
    m, sets = make()
    save(name, m, sets)
