#!/usr/bin/python3
"""gen_memplan.py — fixtures for tests/test_memplan.c (the memory planner).

  cnn/                  a small residual CNN exported from torch with a
                        symbolic batch: x[N,3,12,12] -> Conv/Relu stem, a
                        residual block (Conv, Relu, Conv, Add, Relu),
                        MaxPool, a 1x1 Conv, GlobalAveragePool, Flatten,
                        Gemm -> y[N,5]; test_data_set_0 has batch 2,
                        test_data_set_1 batch 3 (outputs computed by torch),
                        so one session re-plans memory between the sets
  relu_chain.onnx       x[N,256] -> Relu x4 -> y: every intermediate can take
                        over its input's block (planned host peak = one
                        tensor)
  relu_lives_on.onnx    x[N,256] -> r1 = Relu(x), r2 = Relu(r1),
                        r3 = Relu(r2), y = Add(r3, r1): r1 is read again at
                        the end, so r2 cannot reuse it (peak = two tensors)
  wide.onnx             x[1,8192] -> Relu -> Sigmoid -> Tanh -> y, no
                        weights: 32 KiB tensors overflow
                        configs/devices/tiny.yaml (16 KiB) at plan time
  expand_relu.onnx      x[1,4], shape[2] (int64, values given per run) ->
                        e = Expand(x, shape), r = Relu(e), y = Add(r, e):
                        e and r are shaped at run time, within one plan,
                        and their storage is reused from run to run
Run: /usr/bin/python3 tests/data/memplan/gen_memplan.py  (writes beside itself)
"""
import os

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c1 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.proj = torch.nn.Conv2d(8, 12, 1)
        self.fc = torch.nn.Linear(12, 5)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        y = self.c2(torch.relu(self.c1(x)))
        x = torch.relu(x + y)
        x = torch.nn.functional.max_pool2d(x, 2)
        x = self.proj(x)
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


def write_pb(path, arr):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(arr).SerializeToString())


def gen_cnn():
    torch.manual_seed(7)
    net = SmallCNN().eval()
    d = os.path.join(HERE, "cnn")
    os.makedirs(d, exist_ok=True)
    torch.onnx.export(net, torch.zeros(2, 3, 12, 12), os.path.join(d, "model.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=13,
                      dynamic_axes={"x": {0: "N"}, "y": {0: "N"}})
    rng = np.random.default_rng(11)
    for k, batch in enumerate((2, 3)):
        sd = os.path.join(d, f"test_data_set_{k}")
        os.makedirs(sd, exist_ok=True)
        x = rng.standard_normal((batch, 3, 12, 12)).astype(np.float32)
        with torch.no_grad():
            y = net(torch.from_numpy(x)).numpy()
        write_pb(os.path.join(sd, "input_0.pb"), x)
        write_pb(os.path.join(sd, "output_0.pb"), y)


def save(nodes, x_shape, y_shape, name):
    g = helper.make_graph(
        nodes, name.split(".")[0],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_memplan.py")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, name))


def gen_relu_models():
    chain = [helper.make_node("Relu", ["x"], ["r1"], name="relu1"),
             helper.make_node("Relu", ["r1"], ["r2"], name="relu2"),
             helper.make_node("Relu", ["r2"], ["r3"], name="relu3"),
             helper.make_node("Relu", ["r3"], ["y"], name="relu4")]
    save(chain, ["N", 256], ["N", 256], "relu_chain.onnx")
    lives = chain[:3] + [helper.make_node("Add", ["r3", "r1"], ["y"], name="add")]
    save(lives, ["N", 256], ["N", 256], "relu_lives_on.onnx")
    wide = [helper.make_node("Relu", ["x"], ["a"], name="relu"),
            helper.make_node("Sigmoid", ["a"], ["b"], name="sigmoid"),
            helper.make_node("Tanh", ["b"], ["y"], name="tanh")]
    save(wide, [1, 8192], [1, 8192], "wide.onnx")


def gen_expand_model():
    nodes = [helper.make_node("Expand", ["x", "shape"], ["e"], name="expand"),
             helper.make_node("Relu", ["e"], ["r"], name="relu"),
             helper.make_node("Add", ["r", "e"], ["y"], name="add")]
    g = helper.make_graph(
        nodes, "expand_relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["A", "B"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="gen_memplan.py")
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(HERE, "expand_relu.onnx"))


if __name__ == "__main__":
    gen_cnn()
    gen_relu_models()
    gen_expand_model()
