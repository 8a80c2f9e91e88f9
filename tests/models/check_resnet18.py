#!/usr/bin/python3
"""check_resnet18.py — exports torchvision's resnet18 (random weights, no
download) at opset 13, runs it with `hetrt run`, and compares the output
with PyTorch's.  The error measure is max|hetrt - torch| / max|torch| over
the logits (an element-wise relative error is meaningless for logits near
zero); it must be <= 1e-4.  The torch reference is computed in float64.

Usage: /usr/bin/python3 tests/models/check_resnet18.py --hetrt BUILD/hetrt [--work DIR]
Exit status 0 on success, 1 on mismatch or failure.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper

TOLERANCE = 1e-4


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hetrt", required=True, help="path to the hetrt executable")
    ap.add_argument("--work", default="resnet18-check", help="folder for the model and data")
    ap.add_argument("--threads", default="2")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model_path = os.path.join(args.work, "resnet18.onnx")
    input_path = os.path.join(args.work, "input_0.pb")
    out_dir = os.path.join(args.work, "out")

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    t0 = time.time()
    with torch.no_grad():
        torch.onnx.export(model, (x,), model_path, opset_version=13, input_names=["input"],
                          output_names=["logits"])
        ref = model.double()(x.double()).numpy()
    with open(input_path, "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "input").SerializeToString())
    print("exported %s and computed the torch reference in %.1f s" % (model_path, time.time() - t0))

    t0 = time.time()
    cmd = [args.hetrt, "run", model_path, "--input", "input=" + input_path, "--output-dir", out_dir,
           "--threads", args.threads]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        print("FAIL: hetrt run exited with %d (%.1f s)" % (proc.returncode, time.time() - t0))
        return 1
    print("hetrt run took %.1f s (process, including load)" % (time.time() - t0))
    got = numpy_helper.to_array(onnx.load_tensor(os.path.join(out_dir, "output_0.pb")))
    if got.shape != ref.shape:
        print("FAIL: output shape %s, expected %s" % (got.shape, ref.shape))
        return 1
    err = float(np.max(np.abs(got.astype(np.float64) - ref)) / max(np.max(np.abs(ref)), 1e-30))
    verdict = "PASS" if err <= TOLERANCE else "FAIL"
    print("%s: resnet18 max relative error %.3g (tolerance %.0e)" % (verdict, err, TOLERANCE))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
