"""test_dtypes.py — every hetrt element type to and from numpy: the
numeric types through Add, bool through Not and Equal, float16 and
bfloat16 (raw bits in uint16 arrays) through Cast, and the descriptions'
type names."""

import numpy as np
import pytest
from onnx import TensorProto

import hetrt
import models


@pytest.mark.parametrize("elem_type,dtype", sorted(models.NUMERIC_TYPES.items()),
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_numeric_round_trip(elem_type, dtype):
    sess = hetrt.InferenceSession(models.add_model(elem_type))
    (a_desc, _), (y_desc,) = sess.get_inputs(), sess.get_outputs()
    assert a_desc.dtype == np.dtype(dtype) and y_desc.dtype == np.dtype(dtype)
    rng = np.random.default_rng(elem_type)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        a = rng.integers(info.min // 2, info.max // 2, (2, 3), endpoint=True).astype(dtype)
        b = rng.integers(info.min // 2, info.max // 2, (2, 3), endpoint=True).astype(dtype)
    else:
        a = rng.standard_normal((2, 3)).astype(dtype)
        b = rng.standard_normal((2, 3)).astype(dtype)
    (y,) = sess.run(None, {"a": a, "b": b})
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(y, a + b)


def test_type_names_follow_onnxruntime():
    names = {TensorProto.FLOAT: "tensor(float)", TensorProto.DOUBLE: "tensor(double)",
             TensorProto.FLOAT16: "tensor(float16)", TensorProto.INT64: "tensor(int64)",
             TensorProto.UINT8: "tensor(uint8)"}
    for elem_type, name in names.items():
        sess = hetrt.InferenceSession(models.add_model(elem_type))
        assert sess.get_inputs()[0].type == name


def test_bool():
    sess = hetrt.InferenceSession(models.bool_model())
    x = np.array([True, False, False, True])
    i = np.array([1, 2, 3, 4], np.int64)
    j = np.array([1, 0, 3, 0], np.int64)
    not_x, eq = sess.run(None, {"x": x, "i": i, "j": j})
    assert not_x.dtype == np.bool_ and eq.dtype == np.bool_
    np.testing.assert_array_equal(not_x, ~x)
    np.testing.assert_array_equal(eq, i == j)
    assert sess.get_inputs()[0].type == "tensor(bool)"


def test_float16_cast():
    sess = hetrt.InferenceSession(models.cast_model(TensorProto.FLOAT, TensorProto.FLOAT16))
    x = np.array([[1.0, -2.5, 65504.0], [1e-4, 3.14159, 0.0]], np.float32)
    (y,) = sess.run(None, {"x": x})
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, x.astype(np.float16))


def bf16_bits(x):
    """float32 -> bfloat16 bits, round to nearest even (as ONNX's Cast)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_bfloat16_as_uint16_bits():
    to_bf16 = hetrt.InferenceSession(models.cast_model(TensorProto.FLOAT, TensorProto.BFLOAT16))
    (y_desc,) = to_bf16.get_outputs()
    assert y_desc.type == "tensor(bfloat16)" and y_desc.dtype == np.uint16
    x = np.array([[1.0, 2.0, -1.5], [0.5, 3.14159, 1e10]], np.float32)
    (bits,) = to_bf16.run(None, {"x": x})
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(bits, bf16_bits(x))
    # And back: a uint16 array feeds a bfloat16 input.
    from_bf16 = hetrt.InferenceSession(models.cast_model(TensorProto.BFLOAT16, TensorProto.FLOAT))
    (back,) = from_bf16.run(None, {"x": bits})
    expected = (bits.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_array_equal(back, expected)


def test_unsupported_numpy_dtypes_are_refused_clearly():
    sess = hetrt.InferenceSession(models.add_model(TensorProto.FLOAT))
    with pytest.raises(hetrt.TypeMismatch, match="numpy dtype datetime64"):
        sess.run(None, {"a": np.zeros((2, 3), "datetime64[s]"),
                        "b": np.zeros((2, 3), np.float32)})
    with pytest.raises(hetrt.Unsupported, match="string and object arrays"):
        sess.run(None, {"a": np.zeros((2, 3), object), "b": np.zeros((2, 3), np.float32)})
