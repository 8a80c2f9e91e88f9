#!/usr/bin/python3
"""Generates backend-test-layout cases for the tensor operator group under
tests/data/kernels/tensor/<case>/ (model.onnx + test_data_set_0/*.pb).
References come from numpy or torch.nn.functional.interpolate, covering
what the ONNX node suite leaves out (old opsets, negative steps on ints,
the Resize variants torch exports).  Run: /usr/bin/python3 gen_tensor.py
"""
import os
import shutil

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tensor")
RNG = np.random.default_rng(7)
I64_MAX = np.iinfo(np.int64).max
I64_MIN = np.iinfo(np.int64).min


def save(name, nodes, inputs, outputs, opset, inits=(), shapes=None, data=True):
    """inputs/outputs: list of (name, ndarray); inits: list of (name, ndarray);
    shapes: declared shapes by value name (symbolic dims as strings);
    data=False writes the model only (error cases)."""
    shapes = shapes or {}

    def vi(n, a):
        t = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]
        return helper.make_tensor_value_info(n, t, shapes.get(n, a.shape))
    graph = helper.make_graph(
        nodes, name, [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
        initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(model, os.path.join(d, "model.onnx"))
    if not data:
        shutil.rmtree(os.path.join(d, "test_data_set_0"))
        return
    for kind, vals in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(vals):
            with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def one(op, name, inputs, outputs, opset, inits=(), **attrs):
    node = helper.make_node(op, [n for n, _ in inputs] + [n for n, _ in inits],
                            [n for n, _ in outputs], **attrs)
    save(name, [node], inputs, outputs, opset, inits)


def gen_reshape():
    x = f32(0, 3, 4)
    one("Reshape", "reshape_allowzero", [("x", x)], [("y", x.reshape(3, 0, 4))],
        14, inits=[("s", np.array([3, 0, 4], np.int64))], allowzero=1)
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    one("Reshape", "reshape_zero_neg_int", [("x", x)], [("y", x.reshape(2, 12))],
        14, inits=[("s", np.array([0, -1], np.int64))])
    one("Reshape", "reshape_opset1_attr", [("x", x)], [("y", x.reshape(4, 6))],
        1, shape=[4, 6])
    # shape computed torch-style: Shape -> Gather -> Unsqueeze -> Concat
    x = f32(2, 3, 4)
    nodes = [
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]),
        helper.make_node("Concat", ["n1", "m1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    consts = [("zero", np.array(0, np.int64)), ("ax0", np.array([0], np.int64)),
              ("m1", np.array([-1], np.int64))]
    save("reshape_shape_chain", nodes, [("x", x)], [("y", x.reshape(2, 12))], 13,
         inits=consts)
    save("reshape_symbolic_chain", nodes, [("x", x)], [("y", x.reshape(2, 12))], 13,
         inits=consts, shapes={"x": ["N", 3, 4], "y": ["N", "M"]})


def gen_errors():
    """Models for tests/test_kernels_tensor.c's errors suite (no data)."""
    x = f32(2, 3, 4)
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_bad")
    save("err_reshape_count_load", [node], [("x", x)], [("y", x.reshape(24))], 13,
         inits=[("s", np.array([5, 5], np.int64))], data=False)
    save("err_reshape_count_run", [node], [("x", x), ("s", np.array([5, 5], np.int64))],
         [("y", x.reshape(24))], 13, shapes={"y": None}, data=False)
    node = helper.make_node("Gather", ["x", "i"], ["y"], name="gather_oob", axis=0)
    save("err_gather_oob", [node], [("x", f32(3, 2)), ("i", np.array([1, 7], np.int64))],
         [("y", f32(2, 2))], 13, data=False)
    node = helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_dyn")
    save("reshape_unknown_target", [node], [("x", x), ("s", np.array([4, 6], np.int64))],
         [("y", x.reshape(4, 6))], 13, shapes={"y": None})


def gen_slice():
    x = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    starts = np.array([I64_MAX, -1], np.int64)
    ends = np.array([I64_MIN, 0], np.int64)
    axes = np.array([2, 1], np.int64)
    steps = np.array([-2, -1], np.int64)
    one("Slice", "slice_neg_step_int", [("x", x)], [("y", x[:, :0:-1, ::-2])], 13,
        inits=[("st", starts), ("en", ends), ("ax", axes), ("sp", steps)])
    x = np.arange(24, dtype=np.int64).reshape(4, 6)
    one("Slice", "slice_opset1", [("x", x)], [("y", x[1:100, -4:-1])], 1,
        starts=[1, -4], ends=[100, -1], axes=[0, 1])
    b = RNG.integers(0, 2, (5, 4)).astype(bool)
    one("Slice", "slice_bool_step3", [("x", b)], [("y", b[::3, 1:])], 13,
        inits=[("st", np.array([0, 1], np.int64)), ("en", np.array([I64_MAX, I64_MAX], np.int64)),
               ("ax", np.array([0, -1], np.int64)), ("sp", np.array([3, 1], np.int64))])


def gen_gather():
    x = np.arange(20, dtype=np.int64).reshape(4, 5)
    idx = np.array([[-1, 0], [2, -4]], np.int64)
    one("Gather", "gather_neg_indices_axis1", [("x", x), ("i", idx)],
        [("y", np.take(x, np.where(idx < 0, idx + 5, idx), axis=1))], 13, axis=1)
    x = f32(2, 3, 4)
    idx = np.array([[[0, 1], [1, 0]], [[1, 1], [0, 2]]], np.int64)
    res = np.stack([x[0][tuple(idx[0].T)], x[1][tuple(idx[1].T)]])
    one("GatherND", "gathernd_batch1_float", [("x", x), ("i", idx)], [("y", res)], 13,
        batch_dims=1)
    x = f32(3, 4)
    idx = np.array([[2, -1], [0, 1], [1, 2]], np.int64)
    one("GatherElements", "gather_elements_neg_axis1", [("x", x), ("i", idx)],
        [("y", np.take_along_axis(x, np.where(idx < 0, idx + 4, idx), 1))], 13, axis=1)


def interp(x, **kw):
    return torch.nn.functional.interpolate(torch.from_numpy(x), **kw).numpy()


def gen_resize():
    roi = np.array([], np.float32)
    x = f32(1, 2, 3, 4)
    sc = np.array([1, 1, 2, 2], np.float32)
    one("Resize", "resize_torch_bilinear_scales", [("x", x)],
        [("y", interp(x, scale_factor=2, mode="bilinear", align_corners=False))], 13,
        inits=[("roi", roi), ("sc", sc)], mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel")
    one("Resize", "resize_torch_bilinear_align", [("x", x)],
        [("y", interp(x, size=(5, 7), mode="bilinear", align_corners=True))], 13,
        inits=[("roi", roi), ("sc", np.array([], np.float32)),
               ("sz", np.array([1, 2, 5, 7], np.int64))], mode="linear",
        coordinate_transformation_mode="align_corners")
    one("Resize", "resize_torch_nearest_sizes", [("x", x)],
        [("y", interp(x, size=(5, 7), mode="nearest"))], 13,
        inits=[("roi", roi), ("sc", np.array([], np.float32)),
               ("sz", np.array([1, 2, 5, 7], np.int64))], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    one("Resize", "resize_torch_bicubic", [("x", x)],
        [("y", interp(x, scale_factor=2, mode="bicubic", align_corners=False))], 13,
        inits=[("roi", roi), ("sc", sc)], mode="cubic", cubic_coeff_a=-0.75,
        coordinate_transformation_mode="pytorch_half_pixel")
    x5 = f32(1, 1, 2, 3, 2)
    one("Resize", "resize_torch_trilinear", [("x", x5)],
        [("y", interp(x5, scale_factor=2, mode="trilinear", align_corners=False))], 13,
        inits=[("roi", roi), ("sc", np.array([1, 1, 2, 2, 2], np.float32))],
        mode="linear", coordinate_transformation_mode="pytorch_half_pixel")
    xi = np.arange(12, dtype=np.int64).reshape(1, 1, 3, 4)
    one("Resize", "resize_nearest_int64_opset11", [("x", xi)],
        [("y", xi.repeat(2, axis=2).repeat(2, axis=3))], 11,
        inits=[("roi", roi), ("sc", sc)], mode="nearest",
        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    x = f32(1, 1, 2, 2)
    ref = x.repeat(2, axis=2).repeat(3, axis=3)
    one("Upsample", "upsample_opset7_attr", [("x", x)], [("y", ref)], 7,
        mode="nearest", scales=[1.0, 1.0, 2.0, 3.0])
    one("Resize", "resize_opset10_nearest", [("x", x)], [("y", ref)], 10,
        inits=[("sc", np.array([1, 1, 2, 3], np.float32))], mode="nearest")


def gen_pad_split_squeeze():
    x = f32(3, 4)
    pads = np.array([1, 2, 1, 2], np.int64)
    one("Pad", "pad_reflect", [("x", x)], [("y", np.pad(x, [(1, 1), (2, 2)], "reflect"))],
        13, inits=[("p", pads)], mode="reflect")
    xi = np.arange(6, dtype=np.int32).reshape(2, 3)
    one("Pad", "pad_opset2_edge_int", [("x", xi)],
        [("y", np.pad(xi, [(0, 1), (2, 0)], "edge"))], 2, mode="edge", pads=[0, 2, 1, 0])
    one("Pad", "pad_constant_neg", [("x", xi)],
        [("y", np.pad(xi, [(1, 0), (0, 0)], constant_values=7)[:, 1:])], 11,
        inits=[("p", np.array([1, -1, 0, 0], np.int64)), ("v", np.array(7, np.int32))])
    x = f32(2, 7)
    one("Split", "split_opset11_attr", [("x", x)],
        [("a", x[:, :2]), ("b", x[:, 2:7])], 11, axis=1, split=[2, 5])
    one("Split", "split_opset13_input", [("x", x)],
        [("a", x[:, :4]), ("b", x[:, 4:])], 13, inits=[("s", np.array([4, 3], np.int64))],
        axis=-1)
    x = f32(3, 4)
    one("Unsqueeze", "unsqueeze_opset11_attr", [("x", x)], [("y", x.reshape(1, 3, 1, 4))],
        11, axes=[0, -2])
    one("Unsqueeze", "unsqueeze_opset13_input", [("x", x)], [("y", x.reshape(3, 4, 1))],
        13, inits=[("a", np.array([-1], np.int64))])
    x = f32(1, 3, 1)
    one("Squeeze", "squeeze_opset11_attr", [("x", x)], [("y", x.reshape(3, 1))], 11,
        axes=[0])
    one("Squeeze", "squeeze_opset13_all", [("x", x)], [("y", x.reshape(3))], 13)


def gen_misc():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    idx = np.array([[1], [0]], np.int64)
    upd = np.array([[10, 10, 10, 10], [1, 2, 3, 4]], np.int64)
    ref = x.copy(); ref[1] += 10; ref[0] += upd[1]
    one("ScatterND", "scatternd_add_int", [("x", x), ("i", idx), ("u", upd)], [("y", ref)],
        16, reduction="add")
    idx = np.array([[0, 0], [2, 1]], np.int64)
    upd = np.array([[2, 3], [4, 5]], np.int64)
    ref = x.copy(); ref[0, 0] *= 2 * 3; ref[1, 2] *= 4; ref[1, 1] *= 5
    one("ScatterElements", "scatter_elements_mul", [("x", x), ("i", idx), ("u", upd)],
        [("y", ref)], 16, axis=1, reduction="mul")
    b = np.array([[True, False, True]])
    one("Tile", "tile_bool", [("x", b)], [("y", np.tile(b, (2, 2)))], 13,
        inits=[("r", np.array([2, 2], np.int64))])
    xi = np.array([[1], [2], [3]], np.int16)
    one("Expand", "expand_int16", [("x", xi)], [("y", np.broadcast_to(xi, (2, 3, 4)).copy())],
        13, inits=[("s", np.array([2, 1, 4], np.int64))])
    h = f32(2, 3, 4).astype(np.float16)
    one("Transpose", "transpose_f16", [("x", h)], [("y", h.transpose(1, 2, 0))], 13,
        perm=[1, 2, 0])
    c1, c2 = np.array([[True]]), np.array([[False, True]])
    one("Concat", "concat_bool", [("a", c1), ("b", c2)],
        [("y", np.concatenate([c1, c2], 1))], 13, axis=1)
    nz = np.array([[0, 3], [-2, 0], [0, 1]], np.int32)
    one("NonZero", "nonzero_int", [("x", nz)], [("y", np.array(np.nonzero(nz), np.int64))], 13)
    u = np.array([[1, 2], [3, 4], [1, 2], [0, 9]], np.float32)
    y, i, inv, cnt = np.array([[1, 2], [3, 4], [0, 9]], np.float32), np.array([0, 1, 3]), \
        np.array([0, 1, 0, 2]), np.array([2, 1, 1])
    one("Unique", "unique_unsorted_axis0", [("x", u)],
        [("y", y), ("i", i.astype(np.int64)), ("inv", inv.astype(np.int64)),
         ("c", cnt.astype(np.int64))], 11, axis=0, sorted=0)
    one("Range", "range_int64_neg", [], [("y", np.arange(10, -3, -4, dtype=np.int64))], 11,
        inits=[("s", np.array(10, np.int64)), ("l", np.array(-3, np.int64)),
               ("d", np.array(-4, np.int64))])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    gen_reshape()
    gen_slice()
    gen_gather()
    gen_resize()
    gen_pad_split_squeeze()
    gen_misc()
    gen_errors()


if __name__ == "__main__":
    main()
