#!/usr/bin/python3
"""gen_data.py — calibration and evaluation input sets for the quantization benchmark.

Usage: /usr/bin/python3 bench/quant/gen_data.py OUTDIR [--models a,b] [--models-dir DIR]
       [--calib N] [--eval M]

Writes OUTDIR/<model>/calib/test_data_set_K/input_0.pb (N sets, default 32) and
OUTDIR/<model>/eval/test_data_set_K/input_0.pb (M sets, default 16), ONNX
TensorProto files named after the model's input, for the models of
bench/perf/gen_models.py that run.sh quantizes:
- resnet18, resnet50, mobilenet_v2, mobilenet_v3_large (input float32
  [1,3,224,224]): synthetic
  "natural-looking" RGB images, not white noise: a 1/f-weighted sum of smooth
  random fields (octaves 4..112 px, bilinearly upsampled), shared luminance plus
  weaker chroma, a few flat-coloured discs/rectangles (sharp edges, occlusion),
  a soft illumination gradient and a little sensor noise; clipped to [0,1], then
  normalised with the ImageNet mean/std as torchvision models expect.
- bert4 (input float32 [1,128,768]): the model is a bare nn.TransformerEncoder,
  so it takes embeddings, not token ids, and has no attention-mask input.  Each
  set is what a BERT embedding layer would feed it: [CLS] + random token ids in
  [1000, 30522) (Zipf-like) + [SEP], a random length in [16,128], padded with id 0,
  looked up in a fixed random token table (std 0.02) plus position and token-type
  tables, then LayerNorm'd (per token mean 0, variance 1).
Every set has its own seed (calib and eval seeds never overlap), so the
output is the same on every run.  Existing folders are overwritten.
"""
import argparse
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "bert4")
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(3, 1, 1)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(3, 1, 1)
SEED_CALIB, SEED_EVAL = 1_000_000, 2_000_000
VOCAB, CLS, SEP, PAD = 30522, 101, 102, 0


def upsample(field, h, w):
    """Bilinear upsampling of a [C, h0, w0] field to [C, h, w] (align_corners)."""
    c, h0, w0 = field.shape
    ys = np.linspace(0, h0 - 1, h)
    xs = np.linspace(0, w0 - 1, w)
    y0 = np.floor(ys).astype(int).clip(0, h0 - 2) if h0 > 1 else np.zeros(h, int)
    x0 = np.floor(xs).astype(int).clip(0, w0 - 2) if w0 > 1 else np.zeros(w, int)
    fy = (ys - y0)[None, :, None]
    fx = (xs - x0)[None, None, :]
    a = field[:, y0][:, :, x0]
    b = field[:, y0][:, :, x0 + 1]
    cc = field[:, y0 + 1][:, :, x0]
    d = field[:, y0 + 1][:, :, x0 + 1]
    return (a * (1 - fy) * (1 - fx) + b * (1 - fy) * fx + cc * fy * (1 - fx) + d * fy * fx)


def smooth_field(rng, c, h, w):
    """Sum of random fields at octaves 2x2 .. 56x56 cells, amplitude ~ 1/f."""
    out = np.zeros((c, h, w))
    for cells in (2, 4, 7, 14, 28, 56):
        out += upsample(rng.standard_normal((c, cells + 1, cells + 1)), h, w) / cells
    return out / np.abs(out).max()


def synthetic_image(rng, h=224, w=224):
    """One [3, h, w] RGB image in [0, 1]."""
    lum = smooth_field(rng, 1, h, w)
    chroma = smooth_field(rng, 3, h, w)
    base = rng.uniform(0.25, 0.75, (3, 1, 1))
    img = base + 0.35 * lum + 0.12 * chroma
    yy, xx = np.mgrid[0:h, 0:w]
    for _ in range(rng.integers(2, 7)):  # flat objects: sharp edges, occlusion
        colour = rng.uniform(0, 1, (3, 1, 1))
        if rng.random() < 0.5:
            cy, cx, r = rng.uniform(0, h), rng.uniform(0, w), rng.uniform(10, 70)
            mask = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
        else:
            y0, x0 = rng.integers(0, h - 20), rng.integers(0, w - 20)
            y1, x1 = y0 + rng.integers(15, 120), x0 + rng.integers(15, 120)
            mask = (yy >= y0) & (yy < y1) & (xx >= x0) & (xx < x1)
        texture = 0.15 * smooth_field(rng, 1, h, w)
        img = np.where(mask[None], colour + texture, img)
    gy, gx = rng.uniform(-0.25, 0.25, 2)  # illumination gradient
    img = img * (1 + gy * (yy / h - 0.5) + gx * (xx / w - 0.5))[None]
    img += rng.normal(0, 0.01, img.shape)  # sensor noise
    return np.clip(img, 0, 1).astype(np.float32)


def image_input(seed, shape):
    n, c, h, w = shape
    rng = np.random.default_rng(seed)
    x = np.stack([synthetic_image(rng, h, w) for _ in range(n)])
    return ((x - IMAGENET_MEAN) / IMAGENET_STD).astype(np.float32)


class Embeddings:
    """Fixed random BERT-style embedding tables (seed 0)."""

    def __init__(self, hidden, max_len):
        rng = np.random.default_rng(0)
        self.tok = (rng.standard_normal((VOCAB, hidden), np.float32) * 0.02)
        self.pos = (rng.standard_normal((max_len, hidden), np.float32) * 0.02)
        self.typ = (rng.standard_normal((2, hidden), np.float32) * 0.02)

    def __call__(self, seed, shape):
        n, seq, hidden = shape
        rng = np.random.default_rng(seed)
        out = np.empty(shape, np.float32)
        for b in range(n):
            length = int(rng.integers(16, seq + 1))
            ids = np.full(seq, PAD, np.int64)
            body = 1000 + (rng.zipf(1.3, length - 2) - 1) % (VOCAB - 1000)
            ids[:length] = np.concatenate([[CLS], body, [SEP]])
            types = np.zeros(seq, np.int64)
            types[rng.integers(1, length):length] = 1  # a second "sentence"
            e = self.tok[ids] + self.pos[:seq] + self.typ[types]
            e = (e - e.mean(-1, keepdims=True)) / np.sqrt(e.var(-1, keepdims=True) + 1e-12)
            out[b] = e
        return out


def model_inputs(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    res = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in t.shape.dim]
        res.append((i.name, t.elem_type, tuple(dims)))
    return res


def write_sets(folder, count, seed0, name, shape, make):
    shutil.rmtree(folder, ignore_errors=True)
    for k in range(count):
        d = os.path.join(folder, "test_data_set_%d" % k)
        os.makedirs(d)
        t = numpy_helper.from_array(make(seed0 + k, shape), name)
        with open(os.path.join(d, "input_0.pb"), "wb") as f:
            f.write(t.SerializeToString())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--models-dir", default=os.path.join(ROOT, "bench", "perf", "models"))
    ap.add_argument("--calib", type=int, default=32, help="calibration sets per model")
    ap.add_argument("--eval", type=int, default=16, help="evaluation sets per model")
    args = ap.parse_args()
    for m in args.models.split(","):
        if m not in MODELS:
            sys.exit("unknown model %r (known: %s)" % (m, ", ".join(MODELS)))
        inputs = model_inputs(os.path.join(args.models_dir, m + ".onnx"))
        if len(inputs) != 1 or inputs[0][1] != onnx.TensorProto.FLOAT:
            sys.exit("%s: expected one float input, found %r" % (m, inputs))
        name, _, shape = inputs[0]
        if len(shape) == 4:
            make = image_input
        elif len(shape) == 3:
            make = Embeddings(shape[2], shape[1])
        else:
            sys.exit("%s: no generator for input shape %r" % (m, shape))
        base = os.path.join(args.outdir, m)
        write_sets(os.path.join(base, "calib"), args.calib, SEED_CALIB, name, shape, make)
        write_sets(os.path.join(base, "eval"), args.eval, SEED_EVAL, name, shape, make)
        print("%s: %s %s, %d calib + %d eval sets in %s" % (m, name, shape, args.calib,
                                                          args.eval, base))


if __name__ == "__main__":
    main()
