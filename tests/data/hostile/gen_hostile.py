#!/usr/bin/python3
"""gen_hostile.py — small models that ask for absurd tensors (tests/
test_hostile.c): ConstantOfShape of 2^40 elements, Expand and Tile of a
[1,4] input to 2^42 and 2^64 elements, an empty Expand whose other dims
multiply past int64 (its strides would overflow), an Expand to a negative
dim, Range of 1e30 elements.  Each must
fail with a status whose message names the node or output, never crash.
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
