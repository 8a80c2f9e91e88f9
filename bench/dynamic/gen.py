#!/usr/bin/python3
"""gen.py OUT_DIR — the models of bench/dynamic/run.sh, each twice: as
exported with open dims and with its input dims fixed, plus one input
file per model (seeded normal) that both runtimes read.

  bert4       bench/perf's 4-layer BERT-base encoder exported by torch
              with dynamic axes (batch, seq): its head Reshapes' targets
              are computed from Shape(input) in the graph; run at 1x128.
  detector, segmenter, recognizer
              tests/models/gen_detector.py's models (batch, height and
              width open), run at 1x3x640x640, 1x3x512x512, 1x1x32x320.

Writes OUT_DIR/<name>_dyn.onnx, OUT_DIR/<name>_fixed.onnx and
OUT_DIR/data/<name>/test_data_set_0/input_0.pb, and prints one line per
model: NAME INPUT_NAME.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHAPES = {"bert4": (1, 128, 768), "detector": (1, 3, 640, 640),
          "segmenter": (1, 3, 512, 512), "recognizer": (1, 1, 32, 320)}


def export_bert4(path):
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "perf"))
    import gen_models
    model, x = gen_models.build("bert4")
    axes = {0: "batch", 1: "seq"}
    # Not under no_grad (see bench/perf/gen_models.py).
    torch.onnx.export(model, (x,), path, opset_version=13, do_constant_folding=True,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": axes, "output": axes})


def fix_dims(src, dst, dims):
    m = onnx.load(src)
    shape = m.graph.input[0].type.tensor_type.shape
    for d, v in zip(shape.dim, dims):
        d.Clear()
        d.dim_value = v
    onnx.save(m, dst)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, shape in SHAPES.items():
        dyn = os.path.join(out, name + "_dyn.onnx")
        if not os.path.exists(dyn):
            if name == "bert4":
                export_bert4(dyn)
            else:
                subprocess.run([sys.executable, os.path.join(ROOT, "tests", "models",
                                                             "gen_detector.py"),
                                out, "--models", name], check=True, stdout=subprocess.DEVNULL)
                os.replace(os.path.join(out, name + ".onnx"), dyn)
        fixed = os.path.join(out, name + "_fixed.onnx")
        if not os.path.exists(fixed):
            fix_dims(dyn, fixed, shape)
        x_name = onnx.load(dyn, load_external_data=False).graph.input[0].name
        d = os.path.join(out, "data", name, "test_data_set_0")
        os.makedirs(d, exist_ok=True)
        x = rng.standard_normal(shape).astype(np.float32)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, x_name).SerializeToString())
        print(name, x_name)


if __name__ == "__main__":
    main()
