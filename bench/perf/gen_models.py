#!/usr/bin/python3
"""gen_models.py — exports the perf-benchmark models (random weights) as ONNX.

Usage: /usr/bin/python3 bench/perf/gen_models.py OUTDIR [--models a,b,...]
Writes OUTDIR/<name>.onnx (opset 13, constant folding on) for: resnet18,
resnet50, mobilenet_v2, squeezenet1_1, mobilenet_v3_large (1x3x224x224;
opset 13 has no HardSwish, so its hard-swish is written out as
x * HardSigmoid(x), and its squeeze-excitation blocks end in a broadcasting
Mul), bert4 (4-layer
BERT-base-sized nn.TransformerEncoder, 1x128x768) and mlp4 (4 x Linear(1024)
+ ReLU, 64x1024).  The models are not committed; run.py calls this.
"""
import argparse
import os
import sys

# torch is imported lazily so that run.py can use MODELS without loading it
# (its peak-RSS figures would otherwise include the driver's torch pages).


def _mlp():
    import torch
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers)


def _bert4():
    import torch
    layer = torch.nn.TransformerEncoderLayer(d_model=768, nhead=12, dim_feedforward=3072,
                                             dropout=0.0, activation="gelu", batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4)
    # The layers are deep copies of one layer: give each its own random weights
    # (identical initializers would be deduplicated by the exporter).
    for p in model.parameters():
        if p.dim() > 1:
            torch.nn.init.normal_(p, std=0.02)
        else:
            torch.nn.init.normal_(p, std=0.01)
    return model


def _tv(name):
    def make():
        import torchvision
        return getattr(torchvision.models, name)(weights=None)
    return make


# name -> (constructor, input shape)
MODELS = {
    "resnet18": (_tv("resnet18"), (1, 3, 224, 224)),
    "resnet50": (_tv("resnet50"), (1, 3, 224, 224)),
    "mobilenet_v2": (_tv("mobilenet_v2"), (1, 3, 224, 224)),
    "squeezenet1_1": (_tv("squeezenet1_1"), (1, 3, 224, 224)),
    "mobilenet_v3_large": (_tv("mobilenet_v3_large"), (1, 3, 224, 224)),
    "bert4": (_bert4, (1, 128, 768)),
    "mlp4": (_mlp, (64, 1024)),
}


def build(name):
    """Returns (module in eval mode, example input) with a fixed seed."""
    import torch
    torch.manual_seed(0)
    ctor, shape = MODELS[name]
    return ctor().eval(), torch.randn(*shape)


def export(name, outdir):
    path = os.path.join(outdir, name + ".onnx")
    if os.path.exists(path):
        return path
    import torch
    model, x = build(name)
    tmp = path + ".tmp"
    # Not under no_grad: with grad disabled nn.TransformerEncoderLayer takes its
    # fused fast path (aten::_transformer_encoder_layer_fwd), which cannot be exported.
    torch.onnx.export(model, (x,), tmp, opset_version=13, do_constant_folding=True,
                      input_names=["input"], output_names=["output"])
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
            sys.exit("unknown model %r (known: %s)" % (name, ", ".join(MODELS)))
        print(export(name, args.outdir))


if __name__ == "__main__":
    main()
