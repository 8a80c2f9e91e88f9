#!/usr/bin/env python3
"""gpu_models.py — the model part of the GPU check (scripts/gpu-check.sh),
run on the GPU machine with its own torch: exports ResNet-50 and a
BERT-base-sized encoder (12 layers, d=768, 12 heads, ff 3072, sequence
128) at fixed batch sizes (ResNet-50 1 and 32, the encoder 1 and 8; random
weights), checks hetrt's cuda,cpu outputs against torch float32 on the same
GPU, then times hetrt (`hetrt bench --providers cuda,cpu`) against torch
eager and torch.compile in fp32, tf32, fp16 and bf16, and prints one table
(median ms, hetrt/torch-best ratio, achieved TFLOP/s).  hetrt runs only the
precisions its CUDA provider implements (fp32 today); the others print n/a.

Usage: gpu_models.py --hetrt BIN/hetrt --work DIR [--quick]
Exit status 1 on any mismatch or failure."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx
import torch
from onnx import numpy_helper

TOL = 1e-3  # max|hetrt - torch| / max|torch|, float32 on two devices


def encoder():
    layer = torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0,
                                             batch_first=True)
    return torch.nn.TransformerEncoder(layer, 12, enable_nested_tensor=False)


def flops(name, batch):
    if name == "resnet50":
        return 8.18e9 * batch  # 2 x 4.09 GMAC at 224x224
    tokens, d, ff, seq = 128 * batch, 768, 3072, 128
    per_layer = 2 * tokens * (4 * d * d + 2 * d * ff) + 2 * 2 * batch * seq * seq * d
    return 12 * per_layer


def make(name, batch, work):
    import torchvision
    torch.manual_seed(0)
    if name == "resnet50":
        model = torchvision.models.resnet50(weights=None).eval()
        x = torch.randn(batch, 3, 224, 224)
    else:
        model = encoder().eval()
        x = torch.randn(batch, 128, 768)
    path = os.path.join(work, "%s_b%d" % (name, batch))
    os.makedirs(os.path.join(path, "test_data_set_0"), exist_ok=True)
    onnx_path = os.path.join(path, "model.onnx")
    # Exported with autograd on: the encoder's fused inference fast path
    # (taken under no_grad) is not exportable.
    torch.onnx.export(model, (x,), onnx_path, opset_version=17,
                      input_names=["input"], output_names=["output"],
                      dynamo=False)
    with torch.no_grad():
        ref = model.cuda()(x.cuda()).float().cpu().numpy()
    for kind, arr in (("input", x.numpy()), ("output", ref)):
        with open(os.path.join(path, "test_data_set_0", kind + "_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, kind).SerializeToString())
    return model.cuda(), x.cuda(), onnx_path, path


def torch_ms(model, x, precision, compiled, runs=20):
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    fn = torch.compile(model) if compiled else model
    with torch.no_grad(), torch.autocast("cuda", dtype=dtype or torch.float32,
                                         enabled=dtype is not None):
        for _ in range(3):
            fn(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            fn(x)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(times))


def hetrt_check(hetrt, case_dir, log):
    p = subprocess.run([hetrt, "test", case_dir, "--providers", "cuda,cpu"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(p.stdout)
    return p.returncode == 0, p.stdout.strip().splitlines()[-1:] or [""]


def hetrt_ms(hetrt, onnx_path, log):
    p = subprocess.run([hetrt, "bench", onnx_path, "--providers", "cuda,cpu",
                        "--warmup", "3", "--runs", "20", "--threads", "8"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(p.stdout)
    m = re.search(r"^median_ms=([0-9.]+)", p.stdout, re.M)
    return float(m.group(1)) if p.returncode == 0 and m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hetrt", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--quick", action="store_true", help="no torch.compile")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if not torch.cuda.is_available():
        print("gpu_models: torch sees no CUDA device")
        return 1
    print("gpu: %s, torch %s" % (torch.cuda.get_device_name(0), torch.__version__))
    failed = 0
    rows = []
    log = open(os.path.join(a.work, "gpu_models.log"), "w")
    for name, batch in (("resnet50", 1), ("resnet50", 32), ("encoder", 1), ("encoder", 8)):
        t0 = time.time()
        model, x, onnx_path, case = make(name, batch, a.work)
        ok, last = hetrt_check(a.hetrt, case, log)
        print("%s b%d: exported in %.0f s; hetrt cuda,cpu vs torch: %s (%s)" %
              (name, batch, time.time() - t0, "ok" if ok else "MISMATCH", last[0]))
        failed += not ok
        het = hetrt_ms(a.hetrt, onnx_path, log)
        for prec in ("fp32", "tf32", "fp16", "bf16"):
            eager = torch_ms(model, x, prec, False)
            comp = None if a.quick else torch_ms(model, x, prec, True)
            h = het if prec == "fp32" else None
            best = min(v for v in (eager, comp) if v)
            rows.append((name, batch, prec, h, eager, comp, best))
    print()
    print("| model | batch | precision | hetrt ms | eager ms | compile ms | hetrt/best | TFLOP/s hetrt / best |")
    print("|---|---|---|---|---|---|---|---|")
    fmt = lambda v: "%.2f" % v if v else "n/a"
    for name, batch, prec, h, eager, comp, best in rows:
        f = flops(name, batch)
        print("| %s | %d | %s | %s | %s | %s | %s | %s / %.1f |" % (
            name, batch, prec, fmt(h), fmt(eager), fmt(comp),
            "%.2f" % (h / best) if h else "n/a",
            "%.1f" % (f / h / 1e9) if h else "n/a", f / best / 1e9))
    json.dump(rows, open(os.path.join(a.work, "gpu_models.json"), "w"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
