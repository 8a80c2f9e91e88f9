#!/usr/bin/python3
"""gen-default-model.py — the demo's bundled model: a small image classifier
CNN (conv/batch-norm/relu stem, two residual blocks, strided downsampling,
global average pooling, linear head; 3x64x64 input, 10 classes, symbolic
batch "N"), exported from torch with seeded random weights at opset 13,
plus a deterministic example input.

Usage: /usr/bin/python3 scripts/gen-default-model.py [OUT_DIR]
Writes OUT_DIR/default.onnx and OUT_DIR/default_input.pb (OUT_DIR defaults
to models/generated, which git ignores).
"""
import os
import sys

import torch
from onnx import numpy_helper
from torch import nn


def conv_bn(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU())


class Residual(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.a = conv_bn(ch, ch)
        self.b = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1, bias=False), nn.BatchNorm2d(ch))

    def forward(self, x):
        return torch.relu(x + self.b(self.a(x)))


class DefaultCNN(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(conv_bn(3, 16), nn.MaxPool2d(2), Residual(16),
                                      conv_bn(16, 32, stride=2), Residual(32),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return torch.softmax(self.head(self.features(x)), dim=1)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "models", "generated")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(2024)
    model = DefaultCNN().eval()
    x = torch.randn(1, 3, 64, 64)
    path = os.path.join(out_dir, "default.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), path, opset_version=13, input_names=["image"],
                          output_names=["probabilities"],
                          dynamic_axes={"image": {0: "N"}, "probabilities": {0: "N"}})
    with open(os.path.join(out_dir, "default_input.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x.numpy(), "image").SerializeToString())
    print("wrote %s (%d bytes) and default_input.pb" % (path, os.path.getsize(path)))


if __name__ == "__main__":
    main()
