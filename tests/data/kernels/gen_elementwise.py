#!/usr/bin/python3
"""gen_elementwise.py - writes backend-test-layout cases for the elementwise
operator group under tests/data/kernels/elementwise/ (model.onnx +
test_data_set_0/input_N.pb, output_N.pb), with numpy references.  They cover
what the ONNX node suite does not: the opset < 7 broadcast/axis attributes,
mixed and middle-axis broadcasts, integer Mod sign rules, float16/bfloat16
Cast rounding, uint64 extremes, empty tensors, rank-0 scalars, variadic
broadcasts, int8 quantization with ties and saturation, and more.  Cases
named err_* are invalid models the errors suite expects to fail with a
message naming the node.
Run: /usr/bin/python3 tests/data/kernels/gen_elementwise.py
"""
import os
import shutil

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elementwise")
RNG = np.random.default_rng(4321)
NP2ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
           np.float16: TensorProto.FLOAT16, np.int64: TensorProto.INT64,
           np.int32: TensorProto.INT32, np.int16: TensorProto.INT16,
           np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
           np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32,
           np.uint64: TensorProto.UINT64, np.bool_: TensorProto.BOOL}


class BF16:
    """A bfloat16 tensor given by its uint16 bit patterns."""

    def __init__(self, bits):
        self.bits = np.asarray(bits, np.uint16)
        self.shape = self.bits.shape


def vinfo(name, arr, symbolic=False):
    if symbolic:
        return helper.make_tensor_value_info(
            name, NP2ONNX[arr.dtype.type],
            ["%s_d%d" % (name, i) for i in range(arr.ndim)])
    if isinstance(arr, BF16):
        return helper.make_tensor_value_info(name, TensorProto.BFLOAT16,
                                             list(arr.shape))
    return helper.make_tensor_value_info(name, NP2ONNX[arr.dtype.type],
                                         list(arr.shape))


def to_proto(arr, name):
    if isinstance(arr, BF16):
        t = TensorProto(name=name, data_type=TensorProto.BFLOAT16,
                        dims=list(arr.shape))
        t.raw_data = arr.bits.astype("<u2").tobytes()
        return t
    return numpy_helper.from_array(arr, name)


def case(name, op, inputs, outputs, opset, domain="", symbolic=False,
         **attrs):
    """inputs/outputs: lists of (name, array); an input named '' is omitted.
    symbolic: declare every input dim as a distinct named dim."""
    node = helper.make_node(op, [n for n, _ in inputs],
                            [n for n, _ in outputs], name=name + "_node",
                            domain=domain, **attrs)
    graph = helper.make_graph(
        [node], name, [vinfo(n, a, symbolic) for n, a in inputs if n],
        [vinfo(n, a, symbolic) for n, a in outputs])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid(domain, opset)])
    model.ir_version = 8 if opset >= 7 else 3
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for kind, items in (("input", [x for x in inputs if x[0]]),
                        ("output", outputs)):
        for i, (n, a) in enumerate(items):
            with open(os.path.join(d, "test_data_set_0",
                                   "%s_%d.pb" % (kind, i)), "wb") as f:
                f.write(to_proto(a, n).SerializeToString())


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def ints(lo, hi, *shape, dtype=np.int32):
    return RNG.integers(lo, hi, size=shape).astype(dtype)


def legacy_cases():
    a, b = rand(2, 3, 4, 5), rand(3, 4)
    case("legacy_add_axis1", "Add", [("a", a), ("b", b)],
         [("c", a + b.reshape(1, 3, 4, 1))], 6, broadcast=1, axis=1)
    a, b = rand(2, 3, 4), rand(4)
    case("legacy_mul_suffix", "Mul", [("a", a), ("b", b)], [("c", a * b)], 6,
         broadcast=1)
    a, b = rand(2, 3), rand(1)
    case("legacy_sub_opset1_scalar", "Sub", [("a", a), ("b", b)],
         [("c", a - b)], 1, broadcast=1, consumed_inputs=[0, 0])
    a, b = rand(2, 3), rand(2, 3)
    case("legacy_div_same_shape", "Div", [("a", a), ("b", b)],
         [("c", a / b)], 6)
    a, b = np.abs(rand(2, 3, 4)) + 0.5, rand(3)
    case("legacy_pow_axis1", "Pow", [("a", a), ("b", b)],
         [("c", np.power(a, b.reshape(1, 3, 1)))], 1, broadcast=1, axis=1)


def broadcast_cases():
    a, b = rand(2, 1, 4), rand(3, 1)
    case("add_mixed_bcast", "Add", [("a", a), ("b", b)], [("c", a + b)], 14)
    a, b = ints(-50, 50, 2, 3, 4, 5), ints(-50, 50, 3, 1, 1)
    case("mul_int32_channel_bcast", "Mul", [("a", a), ("b", b)],
         [("c", a * b)], 14)
    a, b = rand(1, 5), rand(4, 1)
    case("sub_outer_bcast", "Sub", [("a", a), ("b", b)], [("c", a - b)], 14)
    a, b = rand(3, 4).astype(np.float16), rand(4).astype(np.float16)
    case("add_float16_bias", "Add", [("a", a), ("b", b)], [("c", a + b)], 14)
    c = RNG.random((3, 1)) > 0.5
    x, y = rand(1, 4), np.array(7.0, np.float32)
    case("where_three_way_bcast", "Where", [("c", c), ("x", x), ("y", y)],
         [("o", np.where(c, x, y))], 16)
    x, s = rand(2, 3, 2, 2), rand(3, 1, 1)
    case("prelu_channel_slope", "PRelu", [("x", x), ("s", s)],
         [("y", np.where(x < 0, x * s, x))], 16)
    x, s = rand(2, 3, 4), rand(3)
    case("prelu_opset6_channel", "PRelu", [("x", x), ("s", s)],
         [("y", np.where(x < 0, x * s.reshape(3, 1), x))], 6)
    xs = [rand(2, 1, 3), rand(4, 1), rand(3)]
    case("sum_three_bcast", "Sum", [("x%d" % i, x) for i, x in enumerate(xs)],
         [("y", xs[0] + xs[1] + xs[2])], 13)
    case("mean_three_bcast", "Mean",
         [("x%d" % i, x) for i, x in enumerate(xs)],
         [("y", (xs[0] + xs[1] + xs[2]) / 3)], 13)
    xs = [ints(-9, 9, 2, 3), ints(-9, 9, 3), ints(-9, 9, 1, 1)]
    case("max_int32_bcast", "Max", [("x%d" % i, x) for i, x in enumerate(xs)],
         [("y", np.maximum(np.maximum(xs[0], xs[1]), xs[2]))], 13)


def integer_cases():
    a = np.array([-7, 7, -7, 7, 0, 5, -128, 127], np.int8)
    b = np.array([3, -3, -3, 3, 4, 5, 7, -2], np.int8)
    case("mod_int8_python_signs", "Mod", [("a", a), ("b", b)],
         [("c", np.mod(a, b))], 13)
    a64 = np.array([-7, 7, -7, 7, -(2**62), 2**62 + 1], np.int64)
    b64 = np.array([3, -3, -3, 3, 5, -7], np.int64)
    case("mod_int64_fmod_trunc", "Mod", [("a", a64), ("b", b64)],
         [("c", np.fmod(a64, b64))], 13, fmod=1)
    a = np.array([-7, 7, -7, 7, 9], np.int32)
    b = np.array([2, -2, -2, 2, 3], np.int32)
    case("div_int32_trunc", "Div", [("a", a), ("b", b)],
         [("c", (np.trunc(a / b)).astype(np.int32))], 14)
    big = np.array([2**64 - 1, 2**63, 12345678901234567890, 0], np.uint64)
    oth = np.array([1, 2**63 - 1, 12345678901234567891, 0], np.uint64)
    case("max_uint64_extremes", "Max", [("a", big), ("b", oth)],
         [("c", np.maximum(big, oth))], 13)
    case("less_uint64_extremes", "Less", [("a", big), ("b", oth)],
         [("c", big < oth)], 13)
    case("add_uint64_wraps", "Add", [("a", big), ("b", oth)],
         [("c", big + oth)], 14)
    u16 = np.array([65535, 65535, 300, 2], np.uint16)
    case("mul_uint16_wraps", "Mul", [("a", u16), ("b", u16[[0, 3, 2, 1]])],
         [("c", u16 * u16[[0, 3, 2, 1]])], 14)
    i16 = np.array([-32768, 32767, 200, -3], np.int16)
    case("mul_int16_wraps", "Mul", [("a", i16), ("b", i16[[0, 1, 2, 2]])],
         [("c", i16 * i16[[0, 1, 2, 2]])], 14)
    sh = np.array([1, 3, 63, 0], np.uint64)
    case("bitshift_uint64_left", "BitShift", [("a", big), ("b", sh)],
         [("c", big << sh)], 11, direction="LEFT")
    p, e = np.array([3, -2, 10, 7], np.int64), np.array([20, 5, 18, 0],
                                                         np.int64)
    case("pow_int64_exact", "Pow", [("a", p), ("b", e)],
         [("c", np.power(p, e))], 15)
    x = np.array([-5, 0, 3, 100, -100], np.int32)
    case("clip_int32_min_only", "Clip", [("x", x), ("lo", np.array(-1,
                                                             np.int32))],
         [("y", np.maximum(x, -1))], 13)
    x = np.array([-5, 0, 3, -128, 127], np.int8)
    case("abs_neg_int8", "Neg", [("x", x)], [("y", -x)], 13)


def cast_cases():
    # Ties at the float16 rounding point, overflow to inf, subnormals.
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, 65504, 65520, 1e-7, -2**-25,
                  -0.0, np.inf, np.nan, 3.14159], np.float32)
    case("cast_f32_to_f16_rounding", "Cast", [("x", x)],
         [("y", x.astype(np.float16))], 13, to=TensorProto.FLOAT16)
    x = np.array([-2.7, -0.5, 0.5, 2.9, 1e9], np.float64)
    case("cast_f64_to_int32_trunc", "Cast", [("x", x)],
         [("y", np.trunc(x).astype(np.int32))], 13, to=TensorProto.INT32)
    x = np.array([0, 1, 255, 7], np.uint8)
    case("cast_uint8_to_bool", "Cast", [("x", x)],
         [("y", x.astype(np.bool_))], 13, to=TensorProto.BOOL)
    x = np.array([2**64 - 1, 2**53 + 1, 3], np.uint64)
    case("cast_uint64_to_f64", "Cast", [("x", x)],
         [("y", x.astype(np.float64))], 13, to=TensorProto.DOUBLE)
    x = np.array([1.0, 1.00390625, 1.01171875, -3.5, 65536.5], np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    case("cast_f32_to_bf16_even", "Cast", [("x", x)], [("y", BF16(bits))],
         13, to=TensorProto.BFLOAT16)
    case("castlike_int64_to_f16", "CastLike",
         [("x", np.array([1, -2049, 70000], np.int64)),
          ("like", np.zeros(1, np.float16))],
         [("y", np.array([1, -2049, 70000]).astype(np.float16))], 15)


def shape_edge_cases():
    a, b = np.zeros((0, 3), np.float32), rand(3)
    case("add_empty_bcast", "Add", [("a", a), ("b", b)], [("c", a + b)], 14)
    x = np.zeros((0,), np.float32)
    case("relu_empty", "Relu", [("x", x)], [("y", x)], 14)
    a, b = np.array(2.5, np.float32), np.array(-1.25, np.float32)
    case("mul_rank0", "Mul", [("a", a), ("b", b)], [("c", a * b)], 14)
    x = np.array(0.3, np.float32)
    case("sigmoid_rank0", "Sigmoid", [("x", x)],
         [("y", (1 / (1 + np.exp(-x))).astype(np.float32))], 13)
    a, b = np.array(3.0, np.float32), rand(2, 3)
    case("greater_rank0_vs_matrix", "Greater", [("a", a), ("b", b)],
         [("c", a > b)], 13)


def misc_cases():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7], np.float32)
    case("round_half_even", "Round", [("x", x)], [("y", np.round(x))], 11)
    x = np.array([np.inf, -np.inf, 1.0, np.nan], np.float32)
    case("isinf_positive_only", "IsInf", [("x", x)],
         [("y", np.isposinf(x))], 10, detect_negative=0)
    x = rand(2, 3)
    case("clip_opset6_attrs", "Clip", [("x", x)],
         [("y", np.clip(x, -0.5, 0.25))], 6, min=-0.5, max=0.25)
    case("dropout_opset7_mask_float", "Dropout", [("x", x)],
         [("y", x), ("m", np.ones_like(x))], 7, ratio=0.3)
    x = np.array([0.0, 1.0, 3.0, -3.0, 300.0, -300.0, 5.0], np.float32)
    s, z = np.float32(2.0), np.int8(-1)
    y = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    case("quantize_int8_ties_saturate", "QuantizeLinear",
         [("x", x), ("s", np.array(s)), ("z", np.array(z))], [("y", y)], 13)
    x = rand(2, 3).astype(np.float16)
    case("softsign_float16", "Softsign", [("x", x)],
         [("y", (x / (1 + np.abs(x))).astype(np.float16))], 1)
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    case("equal_bool", "Equal", [("a", a), ("b", b)], [("c", a == b)], 13)


def error_cases():
    a, b = rand(2, 3), rand(4, 3)
    case("err_add_shape_mismatch", "Add", [("a", a), ("b", b)],
         [("c", a)], 14)
    a, b = rand(2, 3), ints(0, 3, 2, 3)
    case("err_mul_type_mismatch", "Mul", [("a", a), ("b", b)],
         [("c", a)], 14)
    x = ints(0, 3, 4)
    case("err_sqrt_int32", "Sqrt", [("x", x)], [("y", x)], 13)
    a = rand(3)
    case("err_and_float", "And", [("a", a), ("b", a)],
         [("c", a > 0)], 7)
    a, b = rand(2, 3), rand(3)
    case("err_legacy_no_broadcast_attr", "Add", [("a", a), ("b", b)],
         [("c", a)], 6)
    a, b = rand(2, 3), rand(4, 3)
    case("err_add_runtime_mismatch", "Add", [("a", a), ("b", b)],
         [("c", a)], 14, symbolic=True)
    x = rand(4)
    case("err_dropout_training", "Dropout",
         [("x", x), ("r", np.array(0.5, np.float32)),
          ("t", np.array(True))], [("y", x)], 13)
    case("err_cast_to_string", "Cast", [("x", x)], [("y", x)], 13,
         to=TensorProto.STRING)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    legacy_cases()
    broadcast_cases()
    integer_cases()
    cast_cases()
    shape_edge_cases()
    misc_cases()
    error_cases()


if __name__ == "__main__":
    main()
