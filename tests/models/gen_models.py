#!/usr/bin/python3
"""gen_models.py — whole-model fixtures for hetrt, in the ONNX backend-test
layout (OUT/<name>/model.onnx + test_data_set_0/{input,output}_K.pb).

Each model is a small torch module exported at opset 13; its reference
outputs come from the same module run in float64 and rounded to float32, so
the reference itself carries no float32 accumulation error.  The fixtures
are written into the build tree at test time (CTest `models_generate`), not
committed.

Usage: /usr/bin/python3 tests/models/gen_models.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn

OPSET = 13


class ResidualBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(ch)
        self.bn_out = nn.BatchNorm2d(ch)  # not after a conv: stays a BatchNormalization node

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return self.bn_out(torch.relu(x + y))


class SmallCNN(nn.Module):
    """conv/bn/relu, max pool, a residual block, a strided conv, global
    average pool, flatten, linear."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(2))
        self.block = ResidualBlock(8)
        self.down = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16),
                                  nn.ReLU())
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.down(self.block(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class SmallTransformer(nn.Module):
    """One TransformerEncoder layer (multi-head attention, layer norm,
    feed-forward) on token embeddings [N, S, E], mean-pooled into a
    classifier.  The layer is sequence-first (batch_first=False) because
    torch's batch-first inference fast path cannot be exported."""

    def __init__(self, d_model=32, nhead=4):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64, dropout=0.0,
                                           batch_first=False)
        self.encoder = nn.TransformerEncoder(layer, num_layers=1, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 4)

    def forward(self, x):
        y = self.encoder(x.transpose(0, 1)).transpose(0, 1)
        return self.head(y.mean(dim=1))


def randomize_batchnorm(module, gen):
    """Non-trivial running statistics so BatchNormalization is exercised."""
    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
                m.running_var.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.weight.copy_(torch.rand(m.num_features, generator=gen) + 0.5)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.1)


def write_case(out_dir, name, module, inputs, input_names, dynamic_axes=None):
    case = os.path.join(out_dir, name)
    data = os.path.join(case, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    module.eval()
    model_path = os.path.join(case, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(module, tuple(inputs), model_path, opset_version=OPSET,
                          input_names=input_names, output_names=["output"],
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
        ref = module.double()(*[t.double() for t in inputs]).float()
    onnx.checker.check_model(onnx.load(model_path))
    for k, (t, n) in enumerate(zip(inputs, input_names)):
        tp = numpy_helper.from_array(t.numpy(), n)
        with open(os.path.join(data, "input_%d.pb" % k), "wb") as f:
            f.write(tp.SerializeToString())
    tp = numpy_helper.from_array(ref.numpy(), "output")
    with open(os.path.join(data, "output_0.pb"), "wb") as f:
        f.write(tp.SerializeToString())
    print("wrote %s (%d bytes model)" % (case, os.path.getsize(model_path)))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    gen = torch.Generator().manual_seed(1234)
    torch.manual_seed(1234)

    cnn = SmallCNN()
    randomize_batchnorm(cnn, gen)
    x = torch.randn(2, 3, 32, 32, generator=gen)
    write_case(out_dir, "model_small_cnn", cnn, [x], ["input"],
               dynamic_axes={"input": {0: "N"}, "output": {0: "N"}})

    tr = SmallTransformer()
    tokens = torch.randn(2, 8, 32, generator=gen)
    write_case(out_dir, "model_small_transformer", tr, [tokens], ["tokens"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
