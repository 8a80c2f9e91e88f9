"""case_io.py — writes one test case of tests/data/optimizer in the ONNX
backend-test layout the C tests read: NAME/model.onnx and
NAME/test_data_set_0/input_<i>.pb, output_<i>.pb."""
import os

import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save_case(name, model, inputs, outputs):
    """inputs, outputs: lists of (value name, numpy array)."""
    out = os.path.join(HERE, name)
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for kind, pairs in (("input", inputs), ("output", outputs)):
        for i, (vname, arr) in enumerate(pairs):
            onnx.save_tensor(numpy_helper.from_array(arr, vname),
                             os.path.join(data, f"{kind}_{i}.pb"))
