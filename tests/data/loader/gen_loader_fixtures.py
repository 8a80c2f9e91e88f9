#!/usr/bin/python3
"""Generates the tiny ONNX models tests/test_loader.c loads.

Run from anywhere:  /usr/bin/python3 tests/data/loader/gen_loader_fixtures.py
Every file is written next to this script.  Values here are mirrored by the
expectations in tests/test_loader.c: change both together.
"""
import os
import struct

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))

# name, TensorProto type, numpy type (None: bits given as uint16), values
F_VALUES = [0.5, -1.25, 2.0, 3.75, -4.5, 100.0]
DTYPES = [
    ("float32", TensorProto.FLOAT, np.float32, F_VALUES),
    ("uint8", TensorProto.UINT8, np.uint8, [0, 1, 2, 200, 254, 255]),
    ("int8", TensorProto.INT8, np.int8, [-128, -1, 0, 1, 2, 127]),
    ("uint16", TensorProto.UINT16, np.uint16, [0, 1, 2, 40000, 65534, 65535]),
    ("int16", TensorProto.INT16, np.int16, [-32768, -1, 0, 1, 2, 32767]),
    ("int32", TensorProto.INT32, np.int32,
     [-2147483648, -1, 0, 1, 2, 2147483647]),
    ("int64", TensorProto.INT64, np.int64,
     [-9223372036854775808, -1, 0, 1, 2, 9223372036854775807]),
    ("bool", TensorProto.BOOL, np.bool_, [True, False, True, True, False, False]),
    ("float16", TensorProto.FLOAT16, np.float16, F_VALUES),
    ("float64", TensorProto.DOUBLE, np.float64,
     [0.5, -1.25, 2.0, 3.75, -4.5, 1e300]),
    ("uint32", TensorProto.UINT32, np.uint32,
     [0, 1, 2, 3000000000, 4294967294, 4294967295]),
    ("uint64", TensorProto.UINT64, np.uint64,
     [0, 1, 2, 10000000000000000000, 18446744073709551614,
      18446744073709551615]),
    ("bfloat16", TensorProto.BFLOAT16, None, F_VALUES),
]


def bf16_bits(values):
    return [struct.unpack("<I", struct.pack("<f", v))[0] >> 16 for v in values]


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    path = os.path.join(HERE, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def model_of(graph, opset=13, **kw):
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], **kw)


def init_model(tensors, name):
    outs = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            for t in tensors]
    return model_of(helper.make_graph([], name, [], outs, initializer=tensors))


def gen_dtypes():
    typed, raw = [], []
    for name, tp, npt, vals in DTYPES:
        tname = "t_" + name
        typed.append(helper.make_tensor(tname, tp, [2, 3], vals))
        if npt is None:
            data = np.array(bf16_bits(vals), dtype="<u2").tobytes()
        else:
            data = np.array(vals, dtype=npt).astype(
                np.dtype(npt).newbyteorder("<")).tobytes()
        raw.append(helper.make_tensor(tname, tp, [2, 3], data, raw=True))
    save(init_model(typed, "typed"), "typed.onnx")
    save(init_model(raw, "raw"), "raw.onnx")


def ext_tensor(name, tp, dims, entries):
    t = TensorProto()
    t.name = name
    t.data_type = tp
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in entries:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def gen_external():
    junk = bytes(range(16))
    w = np.array(F_VALUES, dtype="<f4").tobytes()
    with open(os.path.join(HERE, "ext_weights.bin"), "wb") as f:
        f.write(junk + w + bytes(24))  # 64 bytes, w at offset 16
    with open(os.path.join(HERE, "ext_whole.bin"), "wb") as f:
        f.write(np.array([42], dtype="<i8").tobytes())
    good = [
        ext_tensor("w", TensorProto.FLOAT, [2, 3],
                   [("location", "ext_weights.bin"), ("offset", "16"),
                    ("length", "24")]),
        ext_tensor("v", TensorProto.INT64, [1],
                   [("location", "./ext_whole.bin")]),
    ]
    save(init_model(good, "ext"), "ext_valid.onnx", check=False)
    bad = {
        "ext_dotdot.onnx": [("location", "../loader/ext_weights.bin"),
                            ("offset", "16"), ("length", "24")],
        "ext_absolute.onnx": [("location", "/etc/passwd"), ("length", "24")],
        "ext_offset.onnx": [("location", "ext_weights.bin"),
                            ("offset", "4096"), ("length", "24")],
        "ext_length.onnx": [("location", "ext_weights.bin"),
                            ("offset", "48"), ("length", "24")],
        "ext_missing.onnx": [("location", "no_such_file.bin")],
        "ext_badoffset.onnx": [("location", "ext_weights.bin"),
                               ("offset", "-16"), ("length", "24")],
    }
    for fname, entries in bad.items():
        t = ext_tensor("w", TensorProto.FLOAT, [2, 3], entries)
        save(init_model([t], "ext"), fname, check=False)


def gen_shapes():
    """Symbolic dims, unknown dims, missing shape, value_info, an
    initializer that is also an input, unnamed nodes, metadata."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 3, None])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    b = helper.make_tensor_value_info("B", TensorProto.FLOAT, [3, 1])
    out = helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N", 3, None])
    mid = helper.make_tensor_value_info("M", TensorProto.FLOAT, ["N", 3, 7])
    binit = helper.make_tensor("B", TensorProto.FLOAT, [3, 1], [1, 2, 3])
    nodes = [helper.make_node("Add", ["X", "B"], ["M"]),
             helper.make_node("Mul", ["M", "Y"], ["Z"], name="mul")]
    g = helper.make_graph(nodes, "shapes", [x, y, b], [out],
                          initializer=[binit], value_info=[mid])
    m = model_of(g, producer_name="hetrt-test")
    helper.set_model_props(m, {"author": "loader", "purpose": "test"})
    save(m, "shapes.onnx", check=False)


def gen_subgraph():
    """If whose branches read an outer value, with a Loop nested in the
    then-branch whose body reads a top-level value (two scopes up)."""
    f = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["x_in", "A"], ["x_out"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "loop_body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", f, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", f, [2])])
    then_g = helper.make_graph(
        [helper.make_node("Loop", ["trip", "", "A"], ["then_out"], body=body)],
        "then_branch", [], [helper.make_tensor_value_info("then_out", f, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["A"], ["else_out"])],
        "else_branch", [], [helper.make_tensor_value_info("else_out", f, [2])])
    nodes = [helper.make_node("If", ["C"], ["R"], then_branch=then_g,
                              else_branch=else_g)]
    g = helper.make_graph(
        nodes, "subgraph",
        [helper.make_tensor_value_info("C", TensorProto.BOOL, []),
         helper.make_tensor_value_info("A", f, [2])],
        [helper.make_tensor_value_info("R", f, [2])],
        initializer=[helper.make_tensor("trip", TensorProto.INT64, [], [3])])
    save(model_of(g, opset=13), "subgraph.onnx")


def gen_opset6():
    """Opset 6 Add with the old broadcast attribute, plus an op of a custom
    domain the runtime does not know (still loads)."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Add", ["A", "B"], ["C"], broadcast=1),
             helper.make_node("Frobnicate", ["C"], ["D"], domain="com.example")]
    g = helper.make_graph(
        nodes, "old",
        [helper.make_tensor_value_info("A", f, [2, 3]),
         helper.make_tensor_value_info("B", f, [3])],
        [helper.make_tensor_value_info("D", f, None)])
    m = helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 6), helper.make_opsetid("com.example", 2)])
    m.ir_version = 3
    save(m, "opset6.onnx", check=False)


def gen_attrs():
    """One node carrying an attribute of every type (also the robustness
    test's seed)."""
    f = TensorProto.FLOAT
    sub = lambda n: helper.make_graph(
        [helper.make_node("Identity", ["X"], [n])], "g_" + n, [],
        [helper.make_tensor_value_info(n, f, [2])])
    t1 = helper.make_tensor("t_attr", TensorProto.INT32, [2], [7, -7])
    t2 = helper.make_tensor("t_list", f, [1], [1.5])
    node = helper.make_node(
        "Everything", ["X"], ["Y"], domain="test.attrs",
        f=0.25, i=-3, s=b"hello", t=t1, g=sub("g_out"),
        floats=[1.0, 2.5], ints=[4, 5, 6], strings=[b"a", b"bc"],
        tensors=[t2, t1], graphs=[sub("g0"), sub("g1")])
    g = helper.make_graph(
        [node], "attrs", [helper.make_tensor_value_info("X", f, [2])],
        [helper.make_tensor_value_info("Y", f, [2])],
        initializer=[helper.make_tensor("W", f, [2, 2], [1, 2, 3, 4],
                                        raw=False)])
    m = helper.make_model(g, opset_imports=[
        helper.make_opsetid("", 13), helper.make_opsetid("test.attrs", 1)])
    save(m, "attrs.onnx", check=False)


def plain_tensor(name, tp, dims, raw=None):
    """A TensorProto built field by field (helper.make_tensor would refuse
    the inconsistent ones the error tests need)."""
    t = TensorProto()
    t.name = name
    t.data_type = tp
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    return t


def bad_init(name, tensor):
    save(init_model([tensor], "bad"), name, check=False)


def gen_errors():
    f = TensorProto.FLOAT
    raw = np.zeros(5, dtype="<f4").tobytes()  # 5 floats for a [2,3] tensor
    bad_init("bad_rawsize.onnx", plain_tensor("w", f, [2, 3], raw))
    t = helper.make_tensor("w", f, [2, 3], [1.0] * 6)
    del t.float_data[5:]
    bad_init("bad_typedcount.onnx", t)
    t = helper.make_tensor("w", f, [2, 3], [1.0] * 6)
    t.dims[0] = -2
    bad_init("bad_negdim.onnx", t)
    t = helper.make_tensor("w", f, [1] * 9, [1.0])
    bad_init("bad_rank9.onnx", t)
    t = helper.make_tensor("w", TensorProto.STRING, [1], [b"x"])
    bad_init("bad_string.onnx", t)
    t = helper.make_tensor("w", f, [2], [1.0, 2.0])
    t.int64_data.extend([1, 2])
    bad_init("bad_field.onnx", t)
    t = plain_tensor("w", f, [2**32, 2**32], b"")
    bad_init("bad_huge.onnx", t)
    g = helper.make_graph(
        [helper.make_node("Relu", ["nowhere"], ["Y"])], "dangling", [],
        [helper.make_tensor_value_info("Y", f, [1])])
    save(model_of(g), "bad_dangling.onnx", check=False)
    g = helper.make_graph(
        [helper.make_node("Relu", ["B"], ["A"], name="first"),
         helper.make_node("Relu", ["A"], ["B"], name="second")], "cycle", [],
        [helper.make_tensor_value_info("B", f, [1])])
    save(model_of(g), "bad_cycle.onnx", check=False)
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("vals", f, [1], [1.0]),
        helper.make_tensor("idx", TensorProto.INT64, [1], [0]), [3])
    g = helper.make_graph(
        [helper.make_node("Constant", [], ["Y"], name="sp",
                          sparse_value=sparse)], "sparse", [],
        [helper.make_tensor_value_info("Y", f, [3])])
    save(model_of(g), "bad_sparse.onnx", check=False)


def main():
    gen_dtypes()
    gen_external()
    gen_shapes()
    gen_subgraph()
    gen_opset6()
    gen_attrs()
    gen_errors()


if __name__ == "__main__":
    main()
