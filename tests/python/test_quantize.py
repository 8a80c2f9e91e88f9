"""test_quantize.py — hetrt.quantize on a small CNN: static QDQ
quantization calibrated on random inputs with each method, the accuracy
report over held-apart inputs, the QDQ model running in hetrt close to
the float one, exclusions, dynamic mode, and the library's errors."""

import numpy as np
import onnx
import pytest

import hetrt
import models


def input_sets(n, seed):
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)} for _ in range(n)]


def op_types(path):
    return [n.op_type for n in onnx.load(str(path)).graph.node]


@pytest.mark.parametrize("method", ["minmax", "percentile", "entropy"])
def test_static_quantization(cnn_model, tmp_path, method):
    out = tmp_path / ("cnn_%s.onnx" % method)
    progress = []
    result = hetrt.quantize(cnn_model, out, input_sets(8, 1), evaluation=input_sets(3, 2),
                            method=method, progress=lambda *a: progress.append(a))
    assert result.output_path == str(out) and out.is_file()
    ops = op_types(out)
    assert ops.count("QuantizeLinear") >= 3 and "DequantizeLinear" in ops
    assert result.node_count >= 4  # two Convs, the Gemm, the pools
    assert result.tensors and all(t["scale"] > 0 and t["lo"] <= t["hi"]
                                  for t in result.tensors)
    assert all("sqnr_db" in t for t in result.tensors)
    (acc,) = result.accuracy
    assert acc["name"] == "probs" and acc["cosine"] > 0.99
    assert acc["top1_total"] == 6  # 3 sets of batch 2
    assert "probs" in result.report
    assert progress and {p[0] for p in progress} >= {"evaluate"}
    assert all(p[1] <= p[2] for p in progress)
    # The QDQ model runs and stays near the float model.
    x = input_sets(1, 3)[0]
    ref = hetrt.InferenceSession(cnn_model).run(None, x)[0]
    got = hetrt.InferenceSession(str(out)).run(None, x)[0]
    assert got.shape == ref.shape and np.abs(got - ref).max() < 0.05


def test_options_are_the_quantizers_keys(cnn_model, tmp_path):
    out = tmp_path / "cnn_excl.onnx"
    result = hetrt.quantize(cnn_model, out, input_sets(4, 4), method="minmax",
                            per_channel=False, activation_type="int8",
                            exclude_op_types=["Gemm"], exclude_nodes="conv2*")
    ops = op_types(out)
    assert "Gemm" in ops  # left in float, weights untouched
    model = onnx.load(str(out))
    fc = next(n for n in model.graph.node if n.op_type == "Gemm")
    weights = {i.name: i for i in model.graph.initializer}
    assert weights[fc.input[1]].data_type == onnx.TensorProto.FLOAT
    assert result.accuracy == [] and result.report is None


def test_dynamic_mode(tmp_path):
    src = models.write(tmp_path / "chain.onnx", models.matmul_chain(64, 2))
    out = tmp_path / "chain_dyn.onnx"
    result = hetrt.quantize(src, out, mode="dynamic")
    ops = op_types(out)
    assert "DynamicQuantizeLinear" in ops and "MatMulInteger" in ops
    assert result.node_count == 2
    x = {"x": np.random.default_rng(5).standard_normal((4, 64)).astype(np.float32)}
    ref = hetrt.InferenceSession(str(src)).run(None, x)[0]
    got = hetrt.InferenceSession(str(out)).run(None, x)[0]
    assert np.abs(got - ref).max() < 0.1 * np.abs(ref).max()


def test_errors(cnn_model, tmp_path):
    out = tmp_path / "never.onnx"
    with pytest.raises(hetrt.InvalidArgument, match="method"):
        hetrt.quantize(cnn_model, out, input_sets(1, 0), method="median")
    with pytest.raises(hetrt.InvalidArgument, match="colour"):
        hetrt.quantize(cnn_model, out, input_sets(1, 0), options={"colour": "red"})
    with pytest.raises(hetrt.Error, match="calibration"):
        hetrt.quantize(cnn_model, out)  # static mode needs inputs
    with pytest.raises(hetrt.Error, match="'y'"):
        hetrt.quantize(cnn_model, out, [{"y": np.zeros((1, 3, 16, 16), np.float32)}])
    with pytest.raises(hetrt.Error, match="missing.onnx"):
        hetrt.quantize(tmp_path / "missing.onnx", out, input_sets(1, 0))
    assert not out.exists()


def test_progress_exception_propagates(cnn_model, tmp_path):
    def boom(phase, done, total):
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        hetrt.quantize(cnn_model, tmp_path / "q.onnx", input_sets(2, 0), progress=boom)
