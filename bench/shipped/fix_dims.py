#!/usr/bin/python3
"""fix_dims.py IN.onnx OUT.onnx D0xD1x... — IN with its first input's
dims fixed (ONNX Runtime's bench gives symbolic dims the value 1)."""
import sys

import onnx

m = onnx.load(sys.argv[1])
dims = [int(d) for d in sys.argv[3].split("x")]
shape = m.graph.input[0].type.tensor_type.shape
if len(shape.dim) != len(dims):
    sys.exit("fix_dims.py: %s has rank %d, not %d" % (sys.argv[1], len(shape.dim), len(dims)))
for d, v in zip(shape.dim, dims):
    d.Clear()
    d.dim_value = v
onnx.save(m, sys.argv[2])
