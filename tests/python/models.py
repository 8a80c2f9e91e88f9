"""models.py — the small ONNX models the Python tests run, made with
onnx.helper at test time, and numpy references for them.  Every builder
returns the model's bytes; weights come from a seeded generator so a
model and its reference agree.
"""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


def _model(nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="hetrt-tests")
    m.ir_version = 7
    return m.SerializeToString()


def conv_weights(seed=0, cin=3, cout=4):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    c = rng.standard_normal((1, cout, 1, 1)).astype(np.float32)
    return w, b, c


def conv_relu_add(seed=0, tanh=False):
    """x [N, 3, H, W] -> Conv 3x3 pad 1 (4 channels) -> Relu [-> Tanh]
    -> Add a per-channel constant -> y [N, 4, H, W]; N, H, W symbolic."""
    w, b, c = conv_weights(seed)
    nodes = [helper.make_node("Conv", ["x", "W", "B"], ["conv"], pads=[1, 1, 1, 1],
                              name="conv"),
             helper.make_node("Relu", ["conv"], ["relu"], name="relu")]
    last = "relu"
    if tanh:
        nodes.append(helper.make_node("Tanh", ["relu"], ["tanh"], name="tanh"))
        last = "tanh"
    nodes.append(helper.make_node("Add", [last, "C"], ["y"], name="add"))
    return _model(nodes,
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H", "W"])],
                  [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
                   numpy_helper.from_array(c, "C")])


def conv2d_ref(x, w, b):
    """float64 reference of a 3x3, pad 1, stride 1 Conv."""
    n, cin, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd],
                             w[:, :, i, j].astype(np.float64))
    return out + b.reshape(1, -1, 1, 1)


def conv_relu_add_ref(x, seed=0, tanh=False):
    w, b, c = conv_weights(seed)
    y = np.maximum(conv2d_ref(x, w, b), 0)
    if tanh:
        y = np.tanh(y)
    return y + c


def several_outputs():
    """a, b [2, 3] float -> sum = a + b, prod = a * b, diff = a - b."""
    vi = helper.make_tensor_value_info
    return _model(
        [helper.make_node("Add", ["a", "b"], ["sum"]),
         helper.make_node("Mul", ["a", "b"], ["prod"]),
         helper.make_node("Sub", ["a", "b"], ["diff"])],
        [vi("a", TensorProto.FLOAT, [2, 3]), vi("b", TensorProto.FLOAT, [2, 3])],
        [vi("sum", TensorProto.FLOAT, [2, 3]), vi("prod", TensorProto.FLOAT, [2, 3]),
         vi("diff", TensorProto.FLOAT, [2, 3])])


# ONNX element type -> numpy dtype, for the dtype round-trip models.
NUMERIC_TYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT16: np.float16, TensorProto.INT8: np.int8,
    TensorProto.UINT8: np.uint8, TensorProto.INT16: np.int16,
    TensorProto.UINT16: np.uint16, TensorProto.INT32: np.int32,
    TensorProto.UINT32: np.uint32, TensorProto.INT64: np.int64,
    TensorProto.UINT64: np.uint64,
}


def add_model(elem_type, shape=(2, 3)):
    """y = a + b of one element type."""
    vi = helper.make_tensor_value_info
    return _model([helper.make_node("Add", ["a", "b"], ["y"])],
                  [vi("a", elem_type, list(shape)), vi("b", elem_type, list(shape))],
                  [vi("y", elem_type, list(shape))])


def bool_model():
    """x bool [4] -> not_x = Not(x), eq = Equal(i, j) for int64 i, j [4]."""
    vi = helper.make_tensor_value_info
    return _model([helper.make_node("Not", ["x"], ["not_x"]),
                   helper.make_node("Equal", ["i", "j"], ["eq"])],
                  [vi("x", TensorProto.BOOL, [4]), vi("i", TensorProto.INT64, [4]),
                   vi("j", TensorProto.INT64, [4])],
                  [vi("not_x", TensorProto.BOOL, [4]), vi("eq", TensorProto.BOOL, [4])])


def cast_model(src, dst, shape=(2, 3)):
    vi = helper.make_tensor_value_info
    return _model([helper.make_node("Cast", ["x"], ["y"], to=dst)],
                  [vi("x", src, list(shape))], [vi("y", dst, list(shape))])


def matmul_chain(size=512, depth=6, seed=1):
    """x [size, size] -> depth MatMuls with constant weights (a run long
    enough to watch the GIL) -> y."""
    rng = np.random.default_rng(seed)
    vi = helper.make_tensor_value_info
    nodes, inits, prev = [], [], "x"
    for i in range(depth):
        w = (rng.standard_normal((size, size)) / np.sqrt(size)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, "w%d" % i))
        out = "y" if i == depth - 1 else "h%d" % i
        nodes.append(helper.make_node("MatMul", [prev, "w%d" % i], [out], name="mm%d" % i))
        prev = out
    return _model(nodes, [vi("x", TensorProto.FLOAT, ["N", size])],
                  [vi("y", TensorProto.FLOAT, ["N", size])], inits)


def small_cnn(seed=2):
    """x [N, 3, 16, 16] -> Conv(8) Relu MaxPool Conv(8) Relu
    GlobalAveragePool Flatten Gemm(10) Softmax -> probs [N, 10]: the model
    compared against ONNX Runtime and quantized."""
    rng = np.random.default_rng(seed)
    vi = helper.make_tensor_value_info

    def arr(name, *shape, scale=0.3):
        return numpy_helper.from_array(
            (rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [arr("w1", 8, 3, 3, 3), arr("b1", 8), arr("w2", 8, 8, 3, 3), arr("b2", 8),
             arr("wf", 10, 8), arr("bf", 10)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2],
                         name="pool1"),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], transB=1, name="fc"),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1, name="softmax"),
    ]
    return _model(nodes, [vi("x", TensorProto.FLOAT, ["N", 3, 16, 16])],
                  [vi("probs", TensorProto.FLOAT, ["N", 10])], inits)


def write(path, data):
    path.write_bytes(data)
    return path
