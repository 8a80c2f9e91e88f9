"""test_ort.py — hetrt's Python outputs against ONNX Runtime's.  Debian's
python3 has no onnxruntime, so ORT runs in node (onnxruntime-node, as
bench/perf installs it under bench/perf/node_modules) through ort_run.js,
with inputs and outputs passed as raw float32 files.  Skipped, with the
reason, when node or the module is missing; a bench model is compared too
when bench/perf/models has it (bench/perf/gen_models.py writes them)."""

import json
import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest

import hetrt
import models

HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def ort_node(source_dir):
    node = shutil.which("node")
    if not node:
        pytest.skip("node is not installed (ONNX Runtime runs through onnxruntime-node)")
    modules = source_dir / "bench" / "perf" / "node_modules"
    if not (modules / "onnxruntime-node").is_dir():
        pytest.skip("onnxruntime-node is not installed under %s (npm install in bench/perf)"
                    % modules)
    return node, modules


def run_ort(ort_node, model_path, feeds, tmp_path):
    node, modules = ort_node
    specs = []
    for name, x in feeds.items():
        f = tmp_path / ("in_%s.f32" % name)
        np.ascontiguousarray(x, "<f4").tofile(f)
        specs.append("%s=%s:%s" % (name, f, "x".join(str(d) for d in x.shape)))
    env = dict(os.environ, NODE_PATH=str(modules))
    proc = subprocess.run([node, str(HERE / "ort_run.js"), str(model_path), str(tmp_path)]
                          + specs, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    shapes = json.loads(proc.stdout.strip().splitlines()[-1])
    return {name: np.fromfile(tmp_path / ("%s.f32" % name), "<f4").reshape(dims)
            for name, dims in shapes.items()}


def compare(model_path, feeds, ort_node, tmp_path, rel=1e-4):
    sess = hetrt.InferenceSession(str(model_path))
    got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
    want = run_ort(ort_node, model_path, feeds, tmp_path)
    assert set(got) == set(want)
    for name in want:
        assert got[name].shape == want[name].shape, name
        scale = max(np.abs(want[name]).max(), 1e-6)
        assert np.abs(got[name] - want[name]).max() <= rel * scale, name


def test_generated_models_match_ort(ort_node, cnn_model, conv_model, tmp_path):
    rng = np.random.default_rng(11)
    compare(cnn_model, {"x": rng.standard_normal((4, 3, 16, 16)).astype(np.float32)},
            ort_node, tmp_path)
    compare(conv_model, {"x": rng.standard_normal((2, 3, 9, 7)).astype(np.float32)},
            ort_node, tmp_path)


def test_quantized_model_matches_ort(ort_node, cnn_model, tmp_path):
    """The QDQ model hetrt.quantize writes runs in ORT too, close to
    hetrt's run of it (both compute int8 with float rounding of their
    own: compare in output units, not bit for bit)."""
    rng = np.random.default_rng(12)
    sets = [{"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)} for _ in range(4)]
    out = tmp_path / "cnn_qdq.onnx"
    hetrt.quantize(cnn_model, out, sets, method="minmax")
    x = {"x": rng.standard_normal((2, 3, 16, 16)).astype(np.float32)}
    got = hetrt.InferenceSession(str(out)).run(None, x)[0]
    want = run_ort(ort_node, out, x, tmp_path)["probs"]
    assert np.abs(got - want).max() < 0.02


@pytest.mark.parametrize("name", ["mobilenet_v2"])
def test_bench_model_matches_ort(ort_node, source_dir, tmp_path, name):
    path = source_dir / "bench" / "perf" / "models" / ("%s.onnx" % name)
    if not path.is_file():
        pytest.skip("%s not generated (bench/perf/gen_models.py)" % path)
    x = np.random.default_rng(13).standard_normal((1, 3, 224, 224)).astype(np.float32)
    sess = hetrt.InferenceSession(str(path))
    feeds = {sess.get_inputs()[0].name: x}
    compare(path, feeds, ort_node, tmp_path)
