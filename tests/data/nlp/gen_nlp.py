#!/usr/bin/python3
"""gen_nlp.py - fixtures for tests/test_opt_nlp.c (the transformer fusions
of src/optimizer/opt_nlp*.c).  Each case is a directory in the ONNX
backend-test layout: model.onnx + test_data_set_0/{input,output}_N.pb, the
outputs computed by numpy in float64.  Positive cases must be fused at
optimization level all, negative ones (suffix _keep) must not.  Widths of
20 and 40 exercise both the 16-lane loops and their scalar tails.
Run with Debian's python: /usr/bin/python3 tests/data/nlp/gen_nlp.py
"""
import math
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.RandomState(7)
F = TensorProto.FLOAT


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)


def save(case, nodes, inputs, outputs, inits, feeds, refs, opset=13):
    graph = helper.make_graph(nodes, case, inputs, outputs, initializer=inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="gen_nlp.py")
    model.ir_version = 7
    onnx.checker.check_model(model)
    d = os.path.join(HERE, case)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, items in (("input", feeds), ("output", refs)):
        for i, (name, arr) in enumerate(items):
            t = numpy_helper.from_array(np.asarray(arr, dtype=np.float32), name)
            with open(os.path.join(d, "test_data_set_0", "%s_%d.pb" % (kind, i)),
                      "wb") as f:
                f.write(t.SerializeToString())


def vi(name, shape):
    return helper.make_tensor_value_info(name, F, shape)


def gelu_ref(x):
    x = x.astype(np.float64)
    return x * 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


# ---- Gelu ----

def gen_gelu_torch(case="gelu_torch", div=math.sqrt(2.0), extra_out=False):
    """torch: Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5)."""
    # |x| <= 3: further out 1 + erf(x / sqrt2) cancels below what the
    # backend runner's rtol 1e-3 allows the unfused float32 graph.
    x = np.clip(RNG.randn(2, 3, 40) * 3, -3, 3).astype(np.float32)
    nodes = [
        helper.make_node("Div", ["X", "c_div"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["e", "c_one"], ["a"]),
        helper.make_node("Mul", ["X", "a"], ["m"]),
        helper.make_node("Mul", ["m", "c_half"], ["Y"]),
    ]
    outs = [vi("Y", [2, 3, 40])]
    x64 = x.astype(np.float64)
    e = np.vectorize(math.erf)(x64 / np.float32(div))
    refs = [("Y", x64 * (1 + e) * 0.5)]
    if extra_out:
        outs.append(vi("e", [2, 3, 40]))
        refs.append(("e", e))
    inits = [const("c_div", div), const("c_one", 1.0), const("c_half", 0.5)]
    save(case, nodes, [vi("X", [2, 3, 40])], outs, inits, [("X", x)], refs)


def gen_gelu_hf():
    """HF: Mul(Mul(0.5, x), Add(1, Erf(Mul(x, 1/sqrt2))))."""
    x = np.clip(RNG.randn(4, 20) * 3, -3, 3).astype(np.float32)
    nodes = [
        helper.make_node("Mul", ["c_half", "X"], ["h"]),
        helper.make_node("Mul", ["X", "c_isq"], ["d"]),
        helper.make_node("Erf", ["d"], ["e"]),
        helper.make_node("Add", ["c_one", "e"], ["a"]),
        helper.make_node("Mul", ["h", "a"], ["Y"]),
    ]
    inits = [const("c_isq", 1 / math.sqrt(2.0)), const("c_one", 1.0),
             const("c_half", 0.5)]
    save("gelu_hf", nodes, [vi("X", [4, 20])], [vi("Y", [4, 20])], inits,
         [("X", x)], [("Y", gelu_ref(x))])


# ---- LayerNorm ----

def layernorm_ref(x, g, b, eps, axis=-1):
    x = x.astype(np.float64)
    m = x.mean(axis=axis, keepdims=True)
    v = ((x - m) ** 2).mean(axis=axis, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if g is not None:
        y = y * g
    if b is not None:
        y = y + b
    return y


def gen_layernorm(case="layernorm", axes=(-1,), power=2.0, affine=True):
    shape = [2, 5, 40]
    x = (RNG.randn(*shape) * 2 + 1).astype(np.float32)
    g = RNG.rand(40).astype(np.float32) + 0.5
    b = RNG.randn(40).astype(np.float32)
    eps = 1e-5
    nodes = [
        helper.make_node("ReduceMean", ["X"], ["m"], axes=list(axes)),
        helper.make_node("Sub", ["X", "m"], ["s"]),
        helper.make_node("Pow", ["s", "c_pow"], ["p"]),
        helper.make_node("ReduceMean", ["p"], ["v"], axes=list(axes)),
        helper.make_node("Add", ["v", "c_eps"], ["ve"]),
        helper.make_node("Sqrt", ["ve"], ["sd"]),
        helper.make_node("Div", ["s", "sd"], ["n" if affine else "Y"]),
    ]
    inits = [const("c_pow", power), const("c_eps", eps)]
    if affine:
        nodes += [helper.make_node("Mul", ["n", "gamma"], ["ng"]),
                  helper.make_node("Add", ["ng", "beta"], ["Y"])]
        inits += [const("gamma", g), const("beta", b)]
    x64 = x.astype(np.float64)
    ax = tuple(axes)
    m = x64.mean(axis=ax, keepdims=True)
    v = (np.abs(x64 - m) ** power).mean(axis=ax, keepdims=True)
    y = (x64 - m) / np.sqrt(v + eps)
    if affine:
        y = y * g + b
    save(case, nodes, [vi("X", shape)], [vi("Y", shape)], inits, [("X", x)],
         [("Y", y)])


# ---- Attention ----

def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def gen_attention(case="attention", mask=False, extra_out=False, names=None):
    """Div(Q, 4) @ KT [* 0.5] [+ mask] -> Softmax -> @ V; B=6, S=20, D=16.
    names: the declared dims b, s, t (and the mask's s, t) by these names
    instead of sizes (open dims, as a dynamic-axes export declares them);
    such a case draws from its own seed, so that it changes no other
    case's data."""
    global RNG
    saved = RNG
    if names:
        RNG = np.random.RandomState(8)
    b, s, d, t, e = 6, 20, 16, 20, 24
    nb, ns, nt, nms, nmt = names or (b, s, t, s, t)
    q = RNG.randn(b, s, d).astype(np.float32)
    k = RNG.randn(b, d, t).astype(np.float32)
    v = RNG.randn(b, t, e).astype(np.float32)
    nodes = [helper.make_node("Div", ["Q", "c_scale"], ["qs"]),
             helper.make_node("MatMul", ["qs", "KT"], ["sc"])]
    inits = [const("c_scale", 4.0)]
    src = "sc"
    sc = (q.astype(np.float64) / 4.0) @ k
    feeds = [("Q", q), ("KT", k), ("V", v)]
    ins = [vi("Q", [nb, ns, d]), vi("KT", [nb, d, nt]), vi("V", [nb, nt, e])]
    if mask:
        mk = np.where(RNG.rand(s, t) < 0.2, -1e4, 0).astype(np.float32)
        nodes += [helper.make_node("Mul", ["c_post", "sc"], ["sp"]),
                  helper.make_node("Add", ["sp", "M"], ["sm"])]
        inits.append(const("c_post", 0.5))
        feeds.append(("M", mk))
        ins.append(vi("M", [nms, nmt]))
        sc = sc * 0.5 + mk
        src = "sm"
    nodes += [helper.make_node("Softmax", [src], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "V"], ["Y"])]
    p = softmax(sc)
    outs, refs = [vi("Y", [nb, ns, e])], [("Y", p @ v)]
    if extra_out:
        outs.append(vi("p", [nb, ns, nt]))
        refs.append(("p", p))
    save(case, nodes, ins, outs, inits, feeds, refs)
    RNG = saved


def gen_attention_sbd():
    """torch's multi-head layout: Q0/K0/V0 [S,B,D] transposed in, Y out."""
    s, b, d, e = 20, 6, 16, 24
    q = RNG.randn(s, b, d).astype(np.float32)
    k = RNG.randn(s, b, d).astype(np.float32)
    v = RNG.randn(s, b, e).astype(np.float32)
    nodes = [helper.make_node("Transpose", ["Q0"], ["q"], perm=[1, 0, 2]),
             helper.make_node("Transpose", ["K0"], ["kt"], perm=[1, 2, 0]),
             helper.make_node("Transpose", ["V0"], ["v"], perm=[1, 0, 2]),
             helper.make_node("Div", ["q", "c_scale"], ["qs"]),
             helper.make_node("MatMul", ["qs", "kt"], ["sc"]),
             helper.make_node("Softmax", ["sc"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"]),
             helper.make_node("Transpose", ["y"], ["Y"], perm=[1, 0, 2])]
    q64, k64, v64 = (a.astype(np.float64).transpose(1, 0, 2) for a in (q, k, v))
    p = softmax((q64 / 8.0) @ k64.transpose(0, 2, 1))
    y = (p @ v64).transpose(1, 0, 2)
    save("attention_sbd", nodes,
         [vi("Q0", [s, b, d]), vi("K0", [s, b, d]), vi("V0", [s, b, e])],
         [vi("Y", [s, b, e])], [const("c_scale", 8.0)],
         [("Q0", q), ("K0", k), ("V0", v)], [("Y", y)])


# ---- MatMul + bias (+ Gelu) ----

def gen_matmul_add(case="matmul_add", gelu=False, const_bias=True):
    a = RNG.randn(2, 5, 24).astype(np.float32)
    # pre-activations within about +-3 (see gen_gelu_torch)
    w = (RNG.randn(24, 40) * 0.15).astype(np.float32)
    bias = (RNG.randn(40) * 0.5).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["A", "W"], ["mm"]),
             helper.make_node("Add", ["bias", "mm"], ["Y" if not gelu else "z"])]
    inits = [const("W", w)]
    ins, feeds = [vi("A", [2, 5, 24])], [("A", a)]
    if const_bias:
        inits.append(const("bias", bias))
    else:
        ins.append(vi("bias", [40]))
        feeds.append(("bias", bias))
    z = a.astype(np.float64) @ w + bias
    if gelu:
        nodes += [helper.make_node("Div", ["z", "c_div"], ["d"]),
                  helper.make_node("Erf", ["d"], ["e"]),
                  helper.make_node("Add", ["e", "c_one"], ["ea"]),
                  helper.make_node("Mul", ["z", "ea"], ["m"]),
                  helper.make_node("Mul", ["m", "c_half"], ["Y"])]
        inits += [const("c_div", math.sqrt(2.0)), const("c_one", 1.0),
                  const("c_half", 0.5)]
        z = gelu_ref(z)
    save(case, nodes, ins, [vi("Y", [2, 5, 40])], inits, feeds, [("Y", z)])


def gen_encoder(case="encoder", dynamic=False):
    """A torch TransformerEncoderLayer (GELU) exported like bench's bert4;
    dynamic: with dynamic axes (batch, seq), so the head Reshapes' targets
    are computed from Shape(input) in the graph."""
    import torch
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(
        d_model=32, nhead=4, dim_feedforward=64, dropout=0.0,
        activation="gelu", batch_first=True)
    layer.eval()
    x = torch.randn(1, 20, 32)
    d = os.path.join(HERE, case)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    path = os.path.join(d, "model.onnx")
    with torch.no_grad():
        y = layer(x)
    # Not under no_grad: the layer's fused fast path cannot be exported.
    torch.onnx.export(layer, (x,), path, opset_version=13,
                      do_constant_folding=True,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch", 1: "seq"},
                                    "output": {0: "batch", 1: "seq"}}
                      if dynamic else None)
    for kind, name, arr in (("input", "input", x), ("output", "output", y)):
        t = numpy_helper.from_array(arr.detach().numpy().astype(np.float32), name)
        with open(os.path.join(d, "test_data_set_0", "%s_0.pb" % kind),
                  "wb") as f:
            f.write(t.SerializeToString())


def main():
    gen_gelu_torch()
    gen_gelu_hf()
    gen_gelu_torch("gelu_shared_keep", extra_out=True)
    gen_gelu_torch("gelu_const_keep", div=1.5)
    gen_layernorm()
    gen_layernorm("layernorm_plain", affine=False)
    gen_layernorm("layernorm_axis_keep", axes=(1,))
    gen_layernorm("layernorm_pow_keep", power=4.0)
    gen_attention()
    gen_attention("attention_mask", mask=True)
    gen_attention("attention_shared_keep", extra_out=True)
    gen_attention_sbd()
    # open dims: the mask [S, T] fits the scores [B, S, T] by name; a mask
    # whose last dim has another name might not, and stays unfused
    gen_attention("attention_mask_dyn", mask=True,
                  names=("B", "S", "T", "S", "T"))
    gen_attention("attention_mask_dyn_keep", mask=True,
                  names=("B", "S", "T", "S", "U"))
    gen_matmul_add()
    gen_matmul_add("matmul_add_gelu", gelu=True)
    gen_matmul_add("matmul_add_input_keep", const_bias=False)
    gen_encoder()
    gen_encoder("encoder_dyn", dynamic=True)


if __name__ == "__main__":
    main()
