#!/usr/bin/python3
"""gen_detector.py — dynamic-shape models for the cost-estimate checks
(docs/estimates.md, bench/estimates.py), random weights, exported by
torch.onnx.export at opset 17 with symbolic axes.

  detector   DBNet-like OCR text detector: a 4-stage conv backbone
             (strides 4, 8, 16, 32; 3x3 convs, BatchNorm folded, ReLU, one
             depthwise-separable block per stage), an FPN (1x1 laterals,
             nearest Resize x2 top-down, Adds, 3x3 smoothing, Resize of each
             level to 1/4, Concat) and a DB head (3x3 conv, two stride-2
             ConvTranspose back to full resolution, Sigmoid; probability
             and threshold maps concatenated).  Input `x` is ?x3x?x?
             (batch, height, width symbolic; height and width multiples of
             32), output `maps` is ?x2x?x?.
  segmenter  U-Net-like segmenter: three stride-2 conv stages (32, 64, 128
             channels), a decoder of 2x2 stride-2 ConvTransposes (128->64,
             64->32, 32->16) with skip Concats and 3x3 convs, and a 1x1
             conv to 4 classes.  Input `x` is ?x3x?x? (height and width
             multiples of 8), output `masks` is ?x4x?x?.
  recognizer CRNN-like text-line recogniser: a conv stack that pools the
             height 32 to 1 and the width by 4, a 2-layer bidirectional
             LSTM over the width and a Linear + LogSoftmax over 97 classes.
             Input `x` is ?x1x32x? (batch and width symbolic), output
             `logits` is ?x(width/4)x97.

Usage: /usr/bin/python3 tests/models/gen_detector.py OUT_DIR [--models a,b]
Writes OUT_DIR/<name>.onnx for each model (default: all three).
"""
import argparse
import os
import sys

import onnx
import torch
from torch import nn

OPSET = 17


def conv_bn(cin, cout, k=3, stride=1, groups=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class Stage(nn.Module):
    """Downsample by 2 (3x3 stride 2), then a depthwise-separable block
    with a residual Add."""

    def __init__(self, cin, cout):
        super().__init__()
        self.down = conv_bn(cin, cout, 3, 2)
        self.dw = conv_bn(cout, cout, 3, 1, groups=cout)
        self.pw = conv_bn(cout, cout, 1)

    def forward(self, x):
        x = self.down(x)
        return x + self.pw(self.dw(x))


class Detector(nn.Module):
    def __init__(self, width=(32, 64, 128, 256), inner=64):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 16, 3, 2), conv_bn(16, 16, 3, 1))
        chans = (16,) + tuple(width)
        self.stages = nn.ModuleList(Stage(chans[i], chans[i + 1]) for i in range(4))
        self.lateral = nn.ModuleList(nn.Conv2d(c, inner, 1) for c in width)
        self.smooth = nn.ModuleList(nn.Conv2d(inner, inner // 4, 3, padding=1)
                                    for _ in width)
        self.head = nn.ModuleList(nn.Sequential(
            conv_bn(inner, inner // 4, 3),
            nn.ConvTranspose2d(inner // 4, inner // 4, 2, 2),
            nn.BatchNorm2d(inner // 4), nn.ReLU(inplace=True),
            nn.ConvTranspose2d(inner // 4, 1, 2, 2), nn.Sigmoid()) for _ in range(2))

    def forward(self, x):
        x = self.stem(x)  # 1/2
        feats = []
        for stage in self.stages:  # 1/4, 1/8, 1/16, 1/32
            x = stage(x)
            feats.append(x)
        lat = [l(f) for l, f in zip(self.lateral, feats)]
        for i in range(3, 0, -1):
            lat[i - 1] = lat[i - 1] + nn.functional.interpolate(
                lat[i], scale_factor=2.0, mode="nearest")
        outs = []
        for i, (s, p) in enumerate(zip(self.smooth, lat)):
            p = s(p)
            if i:
                p = nn.functional.interpolate(p, scale_factor=float(2 ** i),
                                              mode="nearest")
            outs.append(p)
        fuse = torch.cat(outs, 1)  # 1/4, inner channels
        return torch.cat([h(fuse) for h in self.head], 1)


class Segmenter(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.enc = nn.ModuleList(nn.Sequential(conv_bn(cin, cout, 3, 2), conv_bn(cout, cout))
                                 for cin, cout in ((3, 32), (32, 64), (64, 128)))
        self.up = nn.ModuleList(nn.ConvTranspose2d(cin, cout, 2, 2)
                                for cin, cout in ((128, 64), (64, 32), (32, 16)))
        self.dec = nn.ModuleList(conv_bn(2 * c, c) for c in (64, 32))
        self.out = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        skips = []
        for stage in self.enc:  # 1/2, 1/4, 1/8
            x = stage(x)
            skips.append(x)
        x = skips.pop()
        for up, dec in zip(self.up, self.dec):  # 1/4, 1/2
            x = dec(torch.cat([up(x), skips.pop()], 1))
        return self.out(self.up[-1](x))  # full resolution


class Recognizer(nn.Module):
    def __init__(self, classes=97, hidden=128):
        super().__init__()
        self.cnn = nn.Sequential(
            conv_bn(1, 32), nn.MaxPool2d(2, 2),             # 16 x W/2
            conv_bn(32, 64), nn.MaxPool2d(2, 2),            # 8 x W/4
            conv_bn(64, 128), conv_bn(128, 128),
            nn.MaxPool2d((2, 1), (2, 1)),                   # 4 x W/4
            conv_bn(128, 256), nn.MaxPool2d((2, 1), (2, 1)),  # 2 x W/4
            conv_bn(256, 256), nn.MaxPool2d((2, 1), (2, 1)))  # 1 x W/4
        self.rnn = nn.LSTM(256, hidden, num_layers=2, bidirectional=True,
                           batch_first=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        f = self.cnn(x).squeeze(2).permute(0, 2, 1)  # N x W/4 x 256
        y, _ = self.rnn(f)
        return torch.log_softmax(self.fc(y), -1)


def _randomize_bn(model):
    """Random BatchNorm statistics, so folding them is not the identity."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.uniform_(m.weight, 0.5, 1.5)
            nn.init.normal_(m.bias, std=0.1)
            m.running_mean.normal_(std=0.1)
            m.running_var.uniform_(0.5, 1.5)


# name -> (constructor, example input, input name, output name, dynamic axes)
MODELS = {
    "detector": (Detector, (1, 3, 640, 640), "x", "maps",
                 {"x": {0: "batch", 2: "height", 3: "width"},
                  "maps": {0: "batch", 2: "height", 3: "width"}}),
    "segmenter": (Segmenter, (1, 3, 512, 512), "x", "masks",
                  {"x": {0: "batch", 2: "height", 3: "width"},
                   "masks": {0: "batch", 2: "height", 3: "width"}}),
    "recognizer": (Recognizer, (1, 1, 32, 320), "x", "logits",
                   {"x": {0: "batch", 3: "width"},
                    "logits": {0: "batch", 1: "steps"}}),
}


def export(name, outdir):
    ctor, shape, iname, oname, axes = MODELS[name]
    torch.manual_seed(0)
    model = ctor()
    _randomize_bn(model)
    model.eval()
    x = torch.randn(*shape)
    path = os.path.join(outdir, name + ".onnx")
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, (x,), tmp, opset_version=OPSET,
                          do_constant_folding=True, input_names=[iname],
                          output_names=[oname], dynamic_axes=axes)
    m = onnx.load(tmp)
    onnx.checker.check_model(m)
    os.replace(tmp, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit("unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))
        print(export(name, args.outdir))


if __name__ == "__main__":
    main()
