#!/usr/bin/python3
"""gen_hostile.py — small models that ask for absurd tensors (tests/
test_hostile.c): ConstantOfShape of 2^40 elements, Expand and Tile of a
[1,4] input to 2^42 and 2^64 elements, an empty Expand whose other dims
multiply past int64 (its strides would overflow), an Expand to a negative
dim, Range of 1e30 elements, and the semantic cases below (opsets, a
10,000-input node, cycles, duplicates, raw_data of the wrong size, a
1,000-deep If, a 2^62-trip Loop, required inputs omitted where shapes are
unknown, external data that is not a regular file inside the folder).
Each must fail with a status whose message names the node, tensor or
output, in bounded time and memory, never crash (the 10,000-input
Concat is legal and must run).
Run: /usr/bin/python3 tests/data/hostile/gen_hostile.py tests/data/hostile"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(__file__)
F = TensorProto.FLOAT


def save(name, nodes, inputs, inits):
    g = helper.make_graph(nodes, name, inputs,
                          [helper.make_tensor_value_info("y", F, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


x = [helper.make_tensor_value_info("x", F, [1, 4])]
i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
f32 = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)
save("constantofshape_2e40", [helper.make_node("ConstantOfShape", ["shape"], ["y"])], [],
     [i64("shape", [1 << 20, 1 << 20])])
save("expand_2e42", [helper.make_node("Expand", ["x", "shape"], ["y"])], x,
     [i64("shape", [1 << 20, 1 << 20, 4])])
save("expand_empty_2e64", [helper.make_node("Expand", ["x", "shape"], ["y"])],
     x, [i64("shape", [0, 1 << 62, 4])])
save("expand_negative", [helper.make_node("Expand", ["x", "shape"], ["y"])],
     x, [i64("shape", [2, -9, 4])])
save("tile_2e64", [helper.make_node("Tile", ["x", "reps"], ["y"])], x,
     [i64("reps", [1 << 31, 1 << 31])])
save("range_1e30", [helper.make_node("Range", ["s", "l", "d"], ["y"])], [],
     [f32("s", 0), f32("l", 1e30), f32("d", 1)])
# the optimizer's fused-activation attribute, written into a file, naming
# an op that is no activation (fuzz_plan found a stack overflow there)
save("conv_hetrt_act_maxunpool",
     [helper.make_node("Conv", ["x4d", "w"], ["y"], hetrt_act="MaxUnpool")],
     [helper.make_tensor_value_info("x4d", F, [1, 1, 4, 4])],
     [f32("w", np.ones((1, 1, 3, 3)))])

# ---- semantic hostility: well-formed protobuf, hostile meaning ----
B = TensorProto.BOOL
I64 = TensorProto.INT64
x4 = [helper.make_tensor_value_info("x", F, [4])]
y_out = [helper.make_tensor_value_info("y", F, None)]


def save_graph(name, g, opsets=(("", 13),)):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v)
                                            for d, v in opsets])
    # written directly: onnx.save walks subgraphs recursively, past
    # Python's recursion limit for the 1,000-deep If
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def add_graph(name, inits=()):
    return helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"])],
                             name, x4, y_out, list(inits))


save_graph("opset_0", add_graph("opset_0"), (("", 0),))
save_graph("opset_10000", add_graph("opset_10000"), (("", 10000),))
# one node with 10,000 inputs (all the same initializer): a legal model
save_graph("concat_10000_inputs", helper.make_graph(
    [helper.make_node("Concat", ["c"] * 10000, ["y"], axis=0)],
    "concat_10000_inputs", [], y_out, [f32("c", [1.0])]))
save_graph("cycle", helper.make_graph(
    [helper.make_node("Add", ["x", "b"], ["a"]),
     helper.make_node("Add", ["a", "x"], ["b"]),
     helper.make_node("Identity", ["b"], ["y"])], "cycle", x4, y_out))
save_graph("duplicate_output", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["t"]),
     helper.make_node("Neg", ["x"], ["t"]),
     helper.make_node("Identity", ["t"], ["y"])], "duplicate_output", x4,
    y_out))
save_graph("duplicate_initializer", helper.make_graph(
    [helper.make_node("Add", ["x", "w"], ["y"])], "duplicate_initializer",
    x4, y_out, [f32("w", [1, 2, 3, 4]), f32("w", [5, 6, 7, 8])]))
bad = f32("w", [0] * 16)
bad.raw_data = bytes(8)  # 16 floats declared, 2 stored
save_graph("raw_data_short", add_graph("raw_data_short", [bad]))
bad = f32("w", [0] * 16)
bad.raw_data = bytes(100)  # 16 floats declared, 25 stored
save_graph("raw_data_long", add_graph("raw_data_long", [bad]))
neg = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])],
                        "input_negative_dim",
                        [helper.make_tensor_value_info("x", F, [2, -3])],
                        y_out)
save_graph("input_negative_dim", neg)


def nested_if(depth):
    """If nested depth deep: each then-branch holds the next If, each
    else-branch one Identity (two copies per level would grow 2^depth)."""
    def leaf(d):
        return helper.make_graph(
            [helper.make_node("Identity", ["x"], ["r%d" % d])], "leaf%d" % d,
            [], [helper.make_tensor_value_info("r%d" % d, F, None)])
    inner = leaf(0)
    for d in range(1, depth + 1):
        node = helper.make_node("If", ["c"], ["r%d" % d], then_branch=inner,
                                else_branch=leaf(d))
        inner = helper.make_graph([node], "if%d" % d, [],
                                  [helper.make_tensor_value_info(
                                      "r%d" % d, F, None)])
    return inner


top = nested_if(1000)
save_graph("if_nested_1000", helper.make_graph(
    list(top.node) + [helper.make_node("Identity", ["r1000"], ["y"])],
    "if_nested_1000", x4 + [helper.make_tensor_value_info("c", B, [])],
    y_out))

# Loop with a trip count of 2^62 and a condition that stays true: the
# body is one Add, so only an iteration limit ends it.
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
    [helper.make_tensor_value_info("i", I64, []),
     helper.make_tensor_value_info("cond_in", B, []),
     helper.make_tensor_value_info("v_in", F, [4])],
    [helper.make_tensor_value_info("cond_out", B, []),
     helper.make_tensor_value_info("v_out", F, [4])], [f32("one", [1.0])])
save_graph("loop_2e62", helper.make_graph(
    [helper.make_node("Loop", ["M", "cond", "x"], ["y"], body=body)],
    "loop_2e62", x4, y_out,
    [i64("M", 1 << 62), numpy_helper.from_array(np.array(True), "cond")]))

# A Loop whose every iteration adds a 16 KiB scan output: 2^20 iterations
# would stack 16 GiB, and max_memory ends it.
body_scan = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Expand", ["one", "wide"], ["s_out"])], "body",
    [helper.make_tensor_value_info("i", I64, []),
     helper.make_tensor_value_info("cond_in", B, [])],
    [helper.make_tensor_value_info("cond_out", B, []),
     helper.make_tensor_value_info("s_out", F, [4096])],
    [f32("one", [1.0]), i64("wide", [4096])])
save_graph("loop_scan_16gib", helper.make_graph(
    [helper.make_node("Loop", ["M", ""], ["y"], body=body_scan)],
    "loop_scan_16gib", [], y_out, [i64("M", 1 << 20)]))

# External data: the test copies this model into a fresh folder and makes
# ext.bin there a FIFO, a directory or a link to /dev/zero; the others
# point outside the folder, at an absolute path, or past the end.
def ext_model(name, location, offset=None):
    w = f32("w", [0, 0, 0, 0])
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location)] + (
            [("offset", str(offset))] if offset is not None else []):
        e = w.external_data.add()
        e.key, e.value = k, v
    save_graph(name, add_graph(name, [w]))


ext_model("external_special", "ext.bin")
ext_model("external_outside", "../outside.bin")
ext_model("external_absolute", "/etc/passwd")
ext_model("external_past_end", "external_past_end.bin", offset=1 << 20)
with open(os.path.join(out, "external_past_end.bin"), "wb") as f:
    f.write(bytes(16))

# Expand to a shape given at run time: only the run knows the size.
save_graph("expand_runtime_shape", helper.make_graph(
    [helper.make_node("Expand", ["x", "shape"], ["y"])],
    "expand_runtime_shape",
    [helper.make_tensor_value_info("x", F, [1]),
     helper.make_tensor_value_info("shape", I64, [2])], y_out))

# A required input omitted while another input's shape is unknown (shape
# inference skips such nodes; the optimizer read the missing X of the
# DequantizeLinear: fuzz_model_emu found a heap overflow there), and the
# same for hetrt's own Attention written into a file.
U8 = TensorProto.UINT8
save_graph("dequantize_omitted_x", helper.make_graph(
    [helper.make_node("DequantizeLinear", ["", "s", "zp"], ["y"], name="dq")],
    "dequantize_omitted_x",
    [helper.make_tensor_value_info("zp", U8, None)], y_out, [f32("s", 0.5)]))
save_graph("attention_omitted_q", helper.make_graph(
    [helper.make_node("Attention", ["", "k", "v"], ["y"], name="attn",
                      domain="hetrt")],
    "attention_omitted_q",
    [helper.make_tensor_value_info("k", F, None),
     helper.make_tensor_value_info("v", F, None)], y_out),
    (("", 13), ("hetrt", 1)))
