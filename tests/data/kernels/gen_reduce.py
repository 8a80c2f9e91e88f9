#!/usr/bin/python3
"""gen_reduce.py - writes backend-test-layout cases for the reduce operator
group under tests/data/kernels/reduce/ (model.onnx + test_data_set_0/
input_N.pb, output_N.pb), with numpy references.  They cover what the ONNX
node suite does not: Softmax opset 11 vs 13 on 3-D input, Reduce* axes as
attribute vs input, keepdims=0 over all axes, empty tensors, non-adjacent
axes, integer reductions, TopK ties, LayerNorm over the last two axes,
batched and diagonal Einsum.  Cases named err_* are invalid models the
errors suite expects to fail with a message naming the node.
Run: /usr/bin/python3 tests/data/kernels/gen_reduce.py
"""
import os
import shutil

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reduce")
RNG = np.random.default_rng(1234)
NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
           np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64,
           np.int32: TensorProto.INT32, np.uint8: TensorProto.UINT8}


def vinfo(name, arr):
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype.type],
                                         list(arr.shape))


def case(name, op, inputs, outputs, opset, **attrs):
    """inputs/outputs: lists of (name, array); an input named '' is omitted."""
    node = helper.make_node(op, [n for n, _ in inputs],
                            [n for n, _ in outputs], name=name + "_node",
                            **attrs)
    graph = helper.make_graph(
        [node], name, [vinfo(n, a) for n, a in inputs if n],
        [vinfo(n, a) for n, a in outputs])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", [x for x in inputs if x[0]]),
                        ("output", outputs)):
        for i, (n, a) in enumerate(items):
            t = numpy_helper.from_array(a, n)
            with open(os.path.join(d, "test_data_set_0",
                                   "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(t.SerializeToString())


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def softmax_cases():
    x = rand(2, 3, 4)
    flat = softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)
    case("softmax_opset11_3d", "Softmax", [("x", x)], [("y", flat)], 11,
         axis=1)
    case("softmax_opset13_3d", "Softmax", [("x", x)],
         [("y", softmax(x, 1))], 13, axis=1)
    case("logsoftmax_opset11_default_axis", "LogSoftmax", [("x", x)],
         [("y", np.log(flat))], 11)
    h = np.zeros(24, np.float32)
    h[np.arange(2) * 12 + x.reshape(2, 12).argmax(1)] = 1
    case("hardmax_opset11_3d", "Hardmax", [("x", x)],
         [("y", h.reshape(2, 3, 4))], 11)
    x16 = rand(3, 5).astype(np.float16)
    case("softmax_float16", "Softmax", [("x", x16)],
         [("y", softmax(x16.astype(np.float32), -1).astype(np.float16))], 13)


def reduce_cases():
    x = rand(2, 3, 4, 5)
    axes = np.array([0, 2], np.int64)
    m = x.mean(axis=(0, 2), keepdims=True)
    case("reduce_mean_opset13_axes_attr", "ReduceMean", [("x", x)],
         [("y", m)], 13, axes=[0, 2])
    case("reduce_mean_opset18_axes_input", "ReduceMean",
         [("x", x), ("axes", axes)], [("y", m)], 18)
    case("reduce_sum_all_keepdims0", "ReduceSum", [("x", x)],
         [("y", np.array(x.sum(), np.float32))], 13, keepdims=0)
    case("reduce_logsumexp_nonadjacent", "ReduceLogSumExp", [("x", x)],
         [("y", np.log(np.exp(x).sum(axis=(1, 3))).astype(np.float32))],
         13, axes=[1, 3], keepdims=0)
    case("reduce_l2_inner_axis", "ReduceL2", [("x", x)],
         [("y", np.sqrt((x * x).sum(axis=3, keepdims=True)))], 13, axes=[-1])
    e = np.zeros((2, 0, 3), np.float32)
    case("reduce_sum_empty_axis", "ReduceSum",
         [("x", e), ("axes", np.array([1], np.int64))],
         [("y", np.zeros((2, 1, 3), np.float32))], 13)
    case("reduce_prod_empty_axis", "ReduceProd", [("x", e)],
         [("y", np.ones((2, 3), np.float32))], 13, axes=[1], keepdims=0)
    case("reduce_max_empty_kept", "ReduceMax", [("x", np.zeros((0, 3),
                                                               np.float32))],
         [("y", np.zeros((0, 1), np.float32))], 13, axes=[1])
    xi = np.array([[2**40 + 1, 5, -7], [3, 2**40, 9]], np.int64)
    case("reduce_sum_int64_exact", "ReduceSum",
         [("x", xi), ("axes", np.array([0], np.int64))],
         [("y", xi.sum(axis=0, keepdims=True))], 13)
    xs = RNG.integers(-100, 100, (3, 4), dtype=np.int32)
    case("reduce_max_int32", "ReduceMax", [("x", xs)],
         [("y", xs.max(axis=1))], 13, axes=[1], keepdims=0)
    case("reduce_sum_noop_empty_axes", "ReduceSum",
         [("x", x), ("axes", np.array([], np.int64))], [("y", x)], 13,
         noop_with_empty_axes=1)


def misc_cases():
    x = np.array([[1, 3, 3, 2, 3], [5, 5, 1, 1, 0]], np.float32)
    case("topk_ties_largest", "TopK", [("x", x), ("k", np.array([3], np.int64))],
         [("values", np.array([[3, 3, 3], [5, 5, 1]], np.float32)),
          ("indices", np.array([[1, 2, 4], [0, 1, 2]], np.int64))], 11)
    case("topk_ties_opset1_attr_k", "TopK", [("x", x)],
         [("values", np.array([[3, 3], [5, 5]], np.float32)),
          ("indices", np.array([[1, 2], [0, 1]], np.int64))], 1, k=2)
    case("topk_ties_smallest", "TopK", [("x", x), ("k", np.array([2], np.int64))],
         [("values", np.array([[1, 2], [0, 1]], np.float32)),
          ("indices", np.array([[0, 3], [4, 2]], np.int64))], 11, largest=0)
    case("argmax_ties_last", "ArgMax", [("x", x)],
         [("y", np.array([4, 1], np.int64))], 13, axis=1, keepdims=0,
         select_last_index=1)
    xl = rand(2, 3, 4)
    sc, bi = rand(3, 4), rand(3, 4)
    mu = xl.mean(axis=(1, 2), keepdims=True)
    inv = 1 / np.sqrt(((xl - mu) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5)
    case("layernorm_last_two_axes", "LayerNormalization",
         [("x", xl), ("scale", sc), ("b", bi)],
         [("y", ((xl - mu) * inv * sc + bi).astype(np.float32)),
          ("mean", mu.astype(np.float32)), ("invstd", inv.astype(np.float32))],
         17, axis=-2)
    ci = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    case("cumsum_int32_exclusive_reverse", "CumSum",
         [("x", ci), ("axis", np.array(1, np.int32))],
         [("y", np.array([[5, 3, 0], [11, 6, 0]], np.int32))], 14,
         exclusive=1, reverse=1)
    lp = np.log(softmax(rand(3, 4, 2), 1)).astype(np.float32)
    t = np.array([[0, 3], [1, -1], [-1, 2]], np.int64)
    keep = t != -1
    tt = np.where(keep, t, 0)
    picked = -np.take_along_axis(lp, tt[:, None, :], 1)[:, 0, :] * keep
    case("nllloss_ignore_index_mean", "NegativeLogLikelihoodLoss",
         [("x", lp), ("t", t)],
         [("loss", np.array(picked.sum() / keep.sum(), np.float32))], 13,
         ignore_index=-1)


def einsum_cases():
    a, b = rand(2, 3, 4, dtype=np.float64), rand(2, 4, 5, dtype=np.float64)
    case("einsum_batched_matmul", "Einsum", [("a", a), ("b", b)],
         [("y", np.einsum("bij,bjk->bik", a, b))], 12,
         equation="bij,bjk->bik")
    s = rand(4, 4, dtype=np.float64)
    case("einsum_diagonal", "Einsum", [("s", s)],
         [("y", np.einsum("ii->i", s))], 12, equation="ii->i")
    case("einsum_implicit_trace", "Einsum", [("s", s)],
         [("y", np.array(np.einsum("ii", s)))], 12, equation="ii")
    e = rand(2, 3, 4, 5, dtype=np.float64)
    case("einsum_ellipsis_transpose", "Einsum", [("e", e)],
         [("y", np.einsum("...ij->...ji", e))], 12, equation="...ij->...ji")
    f = rand(3, 4, dtype=np.float32)
    g = rand(4, 5, dtype=np.float32)
    case("einsum_implicit_matmul_f32", "Einsum", [("f", f), ("g", g)],
         [("y", np.einsum("ij,jk", f, g))], 12, equation="ij,jk")


def error_cases():
    x = rand(2, 3, 4)
    case("err_reduce_axis_out_of_range", "ReduceSum", [("x", x)],
         [("y", x)], 11, axes=[5])
    case("err_softmax_axis_out_of_range", "Softmax", [("x", x)],
         [("y", x)], 13, axis=3)
    case("err_argmax_axis_out_of_range", "ArgMax", [("x", x)],
         [("y", np.zeros((2, 3), np.int64))], 13, axis=-4)
    case("err_einsum_bad_equation", "Einsum", [("x", x)],
         [("y", x)], 12, equation="ij->ij")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    softmax_cases()
    reduce_cases()
    misc_cases()
    einsum_cases()
    error_cases()


if __name__ == "__main__":
    main()
