#!/usr/bin/python3
"""to_fp16.py IN.onnx OUT.onnx — a float32 model as float16 converters
write it (weights and compute in float16, the first input and the first
output kept float32 with a Cast each), for timing hetrt's float16 path
against the float32 original and against ONNX Runtime on the same file.
Shape-like inputs (Resize's roi and scales, the second and later inputs of
Reshape, Expand, Tile, Slice, Pad, ConstantOfShape, Upsample) stay
float32.  A single-input, single-output model is assumed."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPE_LIKE = ("Reshape", "Expand", "Tile", "Slice", "Pad", "ConstantOfShape", "Upsample")

src, dst = sys.argv[1], sys.argv[2]
m = onnx.load(src)
g = m.graph
keep = set()
for n in g.node:
    if n.op_type == "Resize":
        keep.update(n.input[1:3])
    elif n.op_type in SHAPE_LIKE:
        keep.update(n.input[1:])
for i, t in enumerate(g.initializer):
    if t.data_type == TensorProto.FLOAT and t.name not in keep:
        g.initializer[i].CopyFrom(numpy_helper.from_array(
            numpy_helper.to_array(t).astype(np.float16), t.name))
for n in g.node:
    for a in n.attribute:
        if (n.op_type == "Constant" and a.name == "value" and
                a.t.data_type == TensorProto.FLOAT and n.output[0] not in keep):
            a.t.CopyFrom(numpy_helper.from_array(
                numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
del g.value_info[:]
x, y = g.input[0].name, g.output[0].name
for n in g.node:
    n.input[:] = [x + "_f16" if v == x else v for v in n.input]
    n.output[:] = [y + "_f16" if v == y else v for v in n.output]
g.node.insert(0, helper.make_node("Cast", [x], [x + "_f16"], to=TensorProto.FLOAT16, name="input_to_f16"))
g.node.append(helper.make_node("Cast", [y + "_f16"], [y], to=TensorProto.FLOAT, name="output_to_f32"))
onnx.checker.check_model(m)
onnx.save(m, dst)
