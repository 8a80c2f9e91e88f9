#!/usr/bin/python3
"""gen_models.py — the small models test_emu_e2e.c (and test_regime.c) split
across cpu + emu.

  resnet_small.onnx       x[1,3,16,16] -> Conv/BN/Relu stem, MaxPool, a basic
                          residual block, a downsampling block (1x1 Conv
                          shortcut) whose first activation is LeakyRelu,
                          GlobalAveragePool, Flatten, Gemm, Softmax -> y[1,10]
  transformer_small.onnx  x[1,8,16] -> one pre-norm encoder layer: LayerNorm
                          written out (ReduceMean, Sub, Pow, Sqrt, Div),
                          2-head self-attention (MatMul, Reshape, Transpose,
                          Softmax), GELU via Erf, residual Adds -> y[1,8,16]
  transformer_dyn.onnx    the same layer (other weights) over x[N,S,16], its
                          Reshape targets made from Shape(x) as torch
                          writes dynamic axes: values shaped at run time
                          (test_steady.c)

  regime_convs.onnx       x[N,3,H,W] -> five 3x3 Convs with Relus (16
                          channels) and a 1x1 head -> y[N,4,H,W]: on the
                          NPU only when the images are large (test_regime.c)
  tapped_convs.onnx       x[1,3,8,8] -> Conv, Relu -> "tap" (a graph output
                          that the next Conv reads too) -> Conv -> y: a
                          graph output made on the NPU and read there in
                          the same run (test_emu_e2e.c)

configs/devices/npu.yaml lists Conv, Relu, MatMul, Softmax... but not
LeakyRelu, ReduceMean, Sub, Pow, Sqrt, Div or Erf, so both models split
into several cpu and emu parts.  Weights come from a fixed seed.
Run: /usr/bin/python3 tests/data/emu/gen_models.py  (writes beside itself)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240603)


class Builder:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, name, arr):
        self.inits.append(numpy_helper.from_array(
            np.asarray(arr, dtype=np.float32 if np.asarray(arr).dtype.kind == "f"
                       else np.asarray(arr).dtype), name))
        return name

    def weight(self, name, shape, scale):
        return self.const(name, rng.standard_normal(shape).astype(np.float32) * scale)

    def op(self, op_type, inputs, name=None, **attrs):
        self.n += 1
        name = name or f"{op_type.lower()}_{self.n}"
        out = name + "_out"
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=name, **attrs))
        return out

    def save(self, graph_name, x_shape, y_shape, y, fname):
        self.nodes[-1].output[0] = "y"
        for node in self.nodes:  # rename uses of the last output
            for i, v in enumerate(node.input):
                if v == y:
                    node.input[i] = "y"
        g = helper.make_graph(
            self.nodes, graph_name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
            self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="gen_models.py")
        m.ir_version = 7
        onnx.checker.check_model(m)
        path = os.path.join(HERE, fname)
        onnx.save(m, path)
        print(fname, os.path.getsize(path), "bytes,", len(self.nodes), "nodes")


def conv_bn(b, x, cin, cout, k, stride, tag):
    w = b.weight(f"{tag}_w", (cout, cin, k, k), (2.0 / (cin * k * k)) ** 0.5)
    c = b.op("Conv", [x, w], name=f"{tag}_conv", kernel_shape=[k, k],
             strides=[stride, stride], pads=[k // 2] * 4)
    scale = b.const(f"{tag}_g", rng.uniform(0.5, 1.5, cout))
    bias = b.const(f"{tag}_b", rng.uniform(-0.2, 0.2, cout))
    mean = b.const(f"{tag}_m", rng.uniform(-0.1, 0.1, cout))
    var = b.const(f"{tag}_v", rng.uniform(0.5, 1.5, cout))
    return b.op("BatchNormalization", [c, scale, bias, mean, var],
                name=f"{tag}_bn", epsilon=1e-5)


def resnet():
    b = Builder()
    h = b.op("Relu", [conv_bn(b, "x", 3, 8, 3, 1, "stem")], name="stem_relu")
    h = b.op("MaxPool", [h], name="pool", kernel_shape=[2, 2], strides=[2, 2])
    # basic block 8 -> 8
    t = b.op("Relu", [conv_bn(b, h, 8, 8, 3, 1, "b1c1")], name="b1_relu1")
    t = conv_bn(b, t, 8, 8, 3, 1, "b1c2")
    h = b.op("Relu", [b.op("Add", [t, h], name="b1_add")], name="b1_relu2")
    # downsampling block 8 -> 16, LeakyRelu (not on the npu) inside
    t = b.op("LeakyRelu", [conv_bn(b, h, 8, 16, 3, 2, "b2c1")], name="b2_leaky",
             alpha=0.1)
    t = conv_bn(b, t, 16, 16, 3, 1, "b2c2")
    s = conv_bn(b, h, 8, 16, 1, 2, "b2sc")
    h = b.op("Relu", [b.op("Add", [t, s], name="b2_add")], name="b2_relu2")
    h = b.op("GlobalAveragePool", [h], name="gap")
    h = b.op("Flatten", [h], name="flatten", axis=1)
    w = b.weight("fc_w", (10, 16), 0.3)
    bias = b.weight("fc_b", (10,), 0.1)
    h = b.op("Gemm", [h, w, bias], name="fc", transB=1)
    y = b.op("Softmax", [h], name="softmax", axis=-1)
    b.save("resnet_small", [1, 3, 16, 16], [1, 10], y, "resnet_small.onnx")


def layer_norm(b, x, d, tag):
    mean = b.op("ReduceMean", [x], name=f"{tag}_mean", axes=[-1])
    xc = b.op("Sub", [x, mean], name=f"{tag}_sub")
    sq = b.op("Pow", [xc, b.const(f"{tag}_two", np.float32(2))], name=f"{tag}_pow")
    var = b.op("ReduceMean", [sq], name=f"{tag}_var", axes=[-1])
    std = b.op("Sqrt", [b.op("Add", [var, b.const(f"{tag}_eps", np.float32(1e-5))],
                             name=f"{tag}_addeps")], name=f"{tag}_sqrt")
    n = b.op("Div", [xc, std], name=f"{tag}_div")
    n = b.op("Mul", [n, b.const(f"{tag}_gamma", rng.uniform(0.8, 1.2, d))],
             name=f"{tag}_scale")
    return b.op("Add", [n, b.const(f"{tag}_beta", rng.uniform(-0.1, 0.1, d))],
                name=f"{tag}_shift")


def linear(b, x, din, dout, tag):
    w = b.weight(f"{tag}_w", (din, dout), (1.0 / din) ** 0.5)
    m = b.op("MatMul", [x, w], name=f"{tag}_mm")
    return b.op("Add", [m, b.weight(f"{tag}_bias", (dout,), 0.05)], name=f"{tag}_add")


def transformer(dynamic=False):
    b = Builder()
    seq, d, heads = 8, 16, 2
    hd = d // heads
    if dynamic:  # as torch exports dynamic axes: targets made from Shape(x)
        dims = [b.op("Unsqueeze", [b.op("Gather", [b.op("Shape", ["x"], name=f"shape{i}"),
                                                   b.const(f"dim{i}", np.int64(i))],
                                        name=f"gather{i}", axis=0),
                                   b.const(f"axes{i}", np.array([0], np.int64))],
                     name=f"unsqueeze{i}") for i in (0, 1)]
        split = b.op("Concat", dims + [b.const("heads_hd", np.array([heads, hd], np.int64))],
                     name="heads_shape", axis=0)
        merge = b.op("Concat", dims + [b.const("width", np.array([d], np.int64))],
                     name="model_shape", axis=0)
    else:
        split = b.const("heads_shape", np.array([1, seq, heads, hd], dtype=np.int64))
        merge = b.const("model_shape", np.array([1, seq, d], dtype=np.int64))
    n = layer_norm(b, "x", d, "ln1")
    q, k, v = (linear(b, n, d, d, t) for t in ("q", "k", "v"))
    q = b.op("Transpose", [b.op("Reshape", [q, split], name="q_split")],
             name="q_heads", perm=[0, 2, 1, 3])
    k = b.op("Transpose", [b.op("Reshape", [k, split], name="k_split")],
             name="k_heads", perm=[0, 2, 3, 1])
    v = b.op("Transpose", [b.op("Reshape", [v, split], name="v_split")],
             name="v_heads", perm=[0, 2, 1, 3])
    s = b.op("MatMul", [q, k], name="scores")
    s = b.op("Mul", [s, b.const("inv_sqrt_hd", np.float32(hd ** -0.5))], name="scale")
    p = b.op("Softmax", [s], name="attn_softmax", axis=-1)
    a = b.op("MatMul", [p, v], name="attn_mm")
    a = b.op("Reshape", [b.op("Transpose", [a], name="attn_merge", perm=[0, 2, 1, 3]),
                         merge], name="attn_reshape")
    h = b.op("Add", ["x", linear(b, a, d, d, "o")], name="res1")
    n = layer_norm(b, h, d, "ln2")
    f = linear(b, n, d, 2 * d, "ff1")
    # GELU: 0.5 * f * (1 + erf(f / sqrt(2)))
    e = b.op("Erf", [b.op("Div", [f, b.const("sqrt2", np.float32(2 ** 0.5))],
                          name="gelu_div")], name="gelu_erf")
    e = b.op("Add", [e, b.const("one", np.float32(1))], name="gelu_add")
    f = b.op("Mul", [b.op("Mul", [f, e], name="gelu_mul"),
                     b.const("half", np.float32(0.5))], name="gelu_half")
    f = linear(b, f, 2 * d, d, "ff2")
    y = b.op("Add", [h, f], name="res2")
    if dynamic:
        b.save("transformer_dyn", ["N", "S", d], ["N", "S", d], y, "transformer_dyn.onnx")
    else:
        b.save("transformer_small", [1, seq, d], [1, seq, d], y, "transformer_small.onnx")


def regime_convs():
    """Dims open but channels: small images stay on the CPU (the NPU's
    launch and link latency cost more than its speed saves), large ones
    pay for the copies (test_regime.c)."""
    b = Builder()
    h = b.op("Relu", [b.op("Conv", ["x", b.weight("c0_w", (16, 3, 3, 3), 0.27)],
                           name="c0", pads=[1] * 4)], name="r0")
    for i in range(1, 5):
        w = b.weight(f"c{i}_w", (16, 16, 3, 3), (2.0 / 144) ** 0.5)
        h = b.op("Relu", [b.op("Conv", [h, w], name=f"c{i}", pads=[1] * 4)],
                 name=f"r{i}")
    y = b.op("Conv", [h, b.weight("head_w", (4, 16, 1, 1), 0.35)], name="head")
    b.save("regime_convs", ["N", 3, "H", "W"], ["N", 4, "H", "W"], y,
           "regime_convs.onnx")


def tapped_convs():
    b = Builder()
    tap = b.op("Relu", [b.op("Conv", ["x", b.weight("t0_w", (8, 3, 3, 3), 0.27)],
                             name="t0", pads=[1] * 4)], name="tap")
    y = b.op("Conv", [tap, b.weight("t1_w", (4, 8, 3, 3), 0.17)], name="t1",
             pads=[1] * 4)
    b.nodes[-2].output[0] = "tap"
    b.nodes[-1].input[0] = "tap"
    b.nodes[-1].output[0] = "y"
    g = helper.make_graph(
        b.nodes, "tapped_convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("tap", TensorProto.FLOAT, [1, 8, 8, 8]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        b.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_models.py")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "tapped_convs.onnx"))
    print("tapped_convs.onnx", len(b.nodes), "nodes")


if __name__ == "__main__":
    resnet()
    transformer()
    regime_convs()
    tapped_convs()
    transformer(dynamic=True)
