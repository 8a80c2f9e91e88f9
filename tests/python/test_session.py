"""test_session.py — InferenceSession: results against numpy references,
inputs read in place or converted, outputs that own their memory,
descriptions with symbolic dims, placement across emu and CPU, and the
placement report in its four formats."""

import gc
import json
import os
import pathlib

import numpy as np
import pytest

import hetrt
import models


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_run_matches_numpy(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    for n, h, w in [(1, 8, 8), (3, 5, 7)]:  # symbolic N, H, W
        x = rand(n, 3, h, w, seed=n)
        (y,) = sess.run(None, {"x": x})
        assert y.dtype == np.float32 and y.shape == (n, 4, h, w)
        np.testing.assert_allclose(y, models.conv_relu_add_ref(x), rtol=1e-5, atol=1e-5)


def test_several_outputs_by_name_and_order(outputs_model):
    sess = hetrt.InferenceSession(outputs_model)
    a, b = rand(2, 3, seed=1), rand(2, 3, seed=2)
    s, p, d = sess.run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(s, a + b)
    np.testing.assert_array_equal(p, a * b)
    np.testing.assert_array_equal(d, a - b)
    diff, total = sess.run(["diff", "sum"], {"a": a, "b": b})
    np.testing.assert_array_equal(diff, a - b)
    np.testing.assert_array_equal(total, a + b)
    assert [o.name for o in sess.get_outputs()] == ["sum", "prod", "diff"]


def test_descriptions_keep_symbolic_dims(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    (x,) = sess.get_inputs()
    (y,) = sess.get_outputs()
    assert (x.name, x.type, x.dtype, x.shape) == ("x", "tensor(float)", np.float32,
                                                  ["N", 3, "H", "W"])
    assert (y.name, y.shape) == ("y", ["N", 4, "H", "W"])


def test_model_from_bytes_and_pathlike(conv_model):
    x = rand(1, 3, 6, 6)
    from_bytes = hetrt.InferenceSession(pathlib.Path(conv_model).read_bytes())
    from_path = hetrt.InferenceSession(pathlib.Path(conv_model))
    assert from_path.model_path == conv_model and from_bytes.model_path is None
    np.testing.assert_array_equal(from_bytes.run(None, {"x": x})[0],
                                  from_path.run(None, {"x": x})[0])


def test_inputs_converted_when_not_contiguous(outputs_model):
    sess = hetrt.InferenceSession(outputs_model)
    big = rand(4, 6, seed=3)
    a = big[::2, ::2]                       # strided view
    b = np.asfortranarray(rand(2, 3, seed=4))
    swapped = rand(2, 3, seed=5).astype(">f4")  # big-endian float32
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    s, _, _ = sess.run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(s, np.ascontiguousarray(a) + b)
    s, _, _ = sess.run(None, {"a": swapped, "b": b})
    np.testing.assert_array_equal(s, swapped.astype(np.float32) + b)


def test_inputs_of_another_dtype_are_refused_not_cast(outputs_model):
    sess = hetrt.InferenceSession(outputs_model)
    with pytest.raises(hetrt.TypeMismatch, match="input 'a': got float64, model expects float32"):
        sess.run(None, {"a": np.zeros((2, 3)), "b": np.zeros((2, 3), np.float32)})
    with pytest.raises(hetrt.Unsupported, match="no string tensors"):
        sess.run(None, {"a": np.array([["x"] * 3] * 2), "b": np.zeros((2, 3), np.float32)})


def test_read_only_input_is_left_alone(outputs_model):
    """A read-only input needs no writable copy and is not changed (that
    the buffer itself is lent is test_threads.py's zero-copy test)."""
    sess = hetrt.InferenceSession(outputs_model)
    a = rand(2, 3, seed=6)
    a.setflags(write=False)
    b = rand(2, 3, seed=7)
    before = a.copy()
    s, _, _ = sess.run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(a, before)
    np.testing.assert_array_equal(s, a + b)


def test_outputs_own_their_memory(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    x = rand(2, 3, 8, 8)
    outs = [sess.run(None, {"x": x})[0] for _ in range(3)]
    expected = models.conv_relu_add_ref(x)
    del sess, x
    gc.collect()
    for y in outs:  # valid after the session is gone
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
        assert y.flags.writeable and y.flags.c_contiguous
        y += 1  # and writable, each its own buffer
    assert not np.shares_memory(outs[0], outs[1])
    np.testing.assert_allclose(outs[2], expected + 1, rtol=1e-5, atol=1e-5)


def test_zero_sized_batch(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    (y,) = sess.run(None, {"x": np.zeros((0, 3, 4, 4), np.float32)})
    assert y.shape == (0, 4, 4, 4) and y.dtype == np.float32


def test_emu_and_cpu_placement(conv_tanh_model, npu_profile):
    """npu.yaml has Conv, Relu and Add but no Tanh: with the priority
    algorithm Conv runs on emu, Tanh on the CPU."""
    sess = hetrt.InferenceSession(conv_tanh_model, providers=["emu", "cpu"],
                                  devices=[npu_profile], options={"algorithm": "priority"})
    placed = {p["name"]: p for p in sess.placement()}
    assert placed["conv"]["provider"] == "emu"
    assert placed["tanh"]["provider"] == "cpu"
    assert "Tanh not in profile 'npu'" in placed["tanh"]["reason"]
    assert {"emu", "cpu"} <= set(sess.get_providers())
    assert all(set(p) == {"name", "op_type", "provider", "reason"} for p in placed.values())
    x = rand(2, 3, 8, 8)
    np.testing.assert_allclose(sess.run(None, {"x": x})[0],
                               models.conv_relu_add_ref(x, tanh=True), rtol=1e-5, atol=1e-5)


def test_readme_usage(conv_model, npu_profile, tmp_path, monkeypatch):
    """The README's one-liner, with a relative model and profile path."""
    (tmp_path / "m.onnx").write_bytes(pathlib.Path(conv_model).read_bytes())
    (tmp_path / "npu.yaml").write_text(pathlib.Path(npu_profile).read_text())
    monkeypatch.chdir(tmp_path)
    x = rand(1, 3, 8, 8)
    shape = hetrt.InferenceSession('m.onnx', providers=['emu', 'cpu'],
                                   devices=['npu.yaml']).run(None, {'x': x})[0].shape
    assert shape == (1, 4, 8, 8)


def test_provider_options_as_onnxruntime_pairs(conv_model, npu_profile):
    sess = hetrt.InferenceSession(conv_model, providers=[("emu", {"mode": "fast"}), "cpu"],
                                  devices=npu_profile)
    assert sess.run(None, {"x": rand(1, 3, 4, 4)})[0].shape == (1, 4, 4, 4)


def test_explain_in_four_formats(conv_tanh_model, npu_profile):
    sess = hetrt.InferenceSession(conv_tanh_model, providers=["emu", "cpu"],
                                  devices=[npu_profile], options={"algorithm": "priority"})
    text = sess.explain()
    assert "placement report" in text and "tanh" in text and "emu" in text
    assert text == sess.explain("text")
    data = json.loads(sess.explain("json"))
    assert "tanh" in json.dumps(data)
    dot = sess.explain("dot")
    assert dot.lstrip().startswith("digraph") and "tanh" in dot
    html = sess.explain("html")
    assert "<html" in html.lower() and "tanh" in html
    with pytest.raises(hetrt.InvalidArgument) as e:
        sess.explain("pdf")
    assert "pdf" in str(e.value)


def test_warnings_from_non_strict_session(conv_model):
    """A provider that is not there is skipped with strict=false, and the
    session says so."""
    sess = hetrt.InferenceSession(conv_model, providers=["cuda", "cpu"],
                                  options={"strict": False})
    if "cuda" in {p["provider"] for p in sess.placement()}:
        pytest.skip("this machine has a usable CUDA device")
    warnings = sess.warnings()
    assert len(warnings) == 1 and "provider 'cuda' skipped" in warnings[0]


def test_version_and_built_providers():
    assert hetrt.__version__.count(".") == 2
    built = hetrt.get_built_providers()
    assert "cpu" in built and "int8" in built and "emu" in built


def test_threads_option(conv_model):
    x = rand(2, 3, 8, 8)
    one = hetrt.InferenceSession(conv_model, threads=1, options={"cpu.conv_algo": "direct"})
    two = hetrt.InferenceSession(conv_model, threads=2, options={"cpu.conv_algo": "direct"})
    np.testing.assert_array_equal(one.run(None, {"x": x})[0], two.run(None, {"x": x})[0])


def test_options_values_are_converted(conv_model, tmp_path):
    sess = hetrt.InferenceSession(conv_model, options={"measure": True, "trace": False,
                                                       "threads": 1})
    sess.run(None, {"x": rand(1, 3, 4, 4)})
    sess.save_node_times(tmp_path / "t.tsv")  # measure=True took effect
    with pytest.raises(TypeError, match="option 'trace'"):
        hetrt.InferenceSession(conv_model, options={"trace": object()})
    assert os.path.getsize(tmp_path / "t.tsv") > 0


def test_plan_shapes_and_stored_regimes(source_dir, npu_profile, tmp_path):
    """regime_convs.onnx on emu+cpu, planned for 16x16 images (CPU):
    plan_shapes makes 128x128 a regime of its own without a run, the plan
    stores it, and the loaded plan gives the writer's outputs at both
    sizes with nothing re-planned."""
    model = str(source_dir / "tests" / "data" / "emu" / "regime_convs.onnx")
    sess = hetrt.InferenceSession(model, providers=["emu", "cpu"], devices=npu_profile,
                                  options={"shape": "x=1x3x16x16"})
    assert sess.plan_shapes({"x": (1, 3, 128, 128)}) == 1
    assert sess.plan_shapes("x=1x3x16x16") == 0
    with pytest.raises(hetrt.InvalidArgument, match="no input 'y'"):
        sess.plan_shapes("y=1x3x8x8")
    plan = tmp_path / "r.hplan"
    sess.save_plan(plan)
    loaded = hetrt.InferenceSession(str(plan))
    for side in (16, 128):
        x = rand(1, 3, side, side)
        np.testing.assert_array_equal(loaded.run(None, {"x": x})[0], sess.run(None, {"x": x})[0])
    report = loaded.explain()
    assert "regime 1: x=1x3x128x128, stored in the plan" in report
    assert "new regime" not in report
