#!/usr/bin/env python3
"""gen_soak.py — writes model.onnx of the soak test (tests/soak/soak.c):
a small residual CNN whose input x is [N, 3, H, W] with N, H and W
symbolic, so one session sees mixed shapes: Conv+Relu, Conv, Add (the
residual), MaxPool, GlobalAveragePool, Flatten, Gemm, Softmax.  Weights
from a fixed seed.  Run with Debian's python3 from anywhere."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    rng = np.random.default_rng(7)

    def init(name, *shape):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * 0.2).astype(np.float32), name)

    inits = [init('w1', 8, 3, 3, 3), init('b1', 8), init('w2', 8, 8, 3, 3),
             init('b2', 8), init('w3', 8, 8, 1, 1), init('fc_w', 10, 8),
             init('fc_b', 10)]
    nodes = [
        helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], name='conv1',
                         pads=[1, 1, 1, 1]),
        helper.make_node('Relu', ['c1'], ['r1'], name='relu1'),
        helper.make_node('Conv', ['r1', 'w2', 'b2'], ['c2'], name='conv2',
                         pads=[1, 1, 1, 1]),
        helper.make_node('Conv', ['r1', 'w3'], ['c3'], name='shortcut'),
        helper.make_node('Add', ['c2', 'c3'], ['s'], name='residual'),
        helper.make_node('Relu', ['s'], ['r2'], name='relu2'),
        helper.make_node('MaxPool', ['r2'], ['p'], name='pool',
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node('GlobalAveragePool', ['p'], ['g'], name='gap'),
        helper.make_node('Flatten', ['g'], ['f'], name='flatten'),
        helper.make_node('Gemm', ['f', 'fc_w', 'fc_b'], ['logits'], name='fc',
                         transB=1),
        helper.make_node('Softmax', ['logits'], ['y'], name='softmax', axis=1),
    ]
    graph = helper.make_graph(
        nodes, 'soak',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                       ['N', 3, 'H', 'W'])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 10])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)],
                              producer_name='gen_soak.py')
    onnx.checker.check_model(model, full_check=True)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'model.onnx')
    onnx.save(model, out)
    print(out)


if __name__ == '__main__':
    main()
