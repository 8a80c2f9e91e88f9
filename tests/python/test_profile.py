"""test_profile.py — profiling through the Python API: the per-op summary
and the Chrome trace of a session with trace=true, clearing the trace,
node times of a session with measure=true fed back as node_times, and the
planned peak memory."""

import json

import numpy as np
import pytest

import hetrt


def test_profile_and_trace(conv_tanh_model, npu_profile, tmp_path):
    sess = hetrt.InferenceSession(conv_tanh_model, providers=["emu", "cpu"],
                                  devices=[npu_profile],
                                  options={"trace": True, "algorithm": "priority"})
    x = np.ones((1, 3, 8, 8), np.float32)
    for _ in range(3):
        sess.run(None, {"x": x})
    summary = sess.profile()
    assert "Tanh" in summary and "cpu" in summary and "emu" in summary
    sess.save_trace(tmp_path / "trace.json")
    trace = json.loads((tmp_path / "trace.json").read_text())
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {e.get("name") for e in events}
    assert "tanh" in names and "conv" in names
    sess.clear_trace()
    sess.save_trace(tmp_path / "empty.json")
    cleared = json.loads((tmp_path / "empty.json").read_text())
    cleared = cleared["traceEvents"] if isinstance(cleared, dict) else cleared
    assert "tanh" not in {e.get("name") for e in cleared}


def test_node_times_round_trip(conv_model, tmp_path):
    sess = hetrt.InferenceSession(conv_model, options={"measure": True})
    for _ in range(2):
        sess.run(None, {"x": np.ones((1, 3, 8, 8), np.float32)})
    path = tmp_path / "times.tsv"
    sess.save_node_times(path)
    lines = path.read_text().splitlines()
    assert lines and any(line.split("\t")[0] == "conv" for line in lines)
    guided = hetrt.InferenceSession(conv_model, options={"node_times": path})
    assert guided.run(None, {"x": np.ones((1, 3, 8, 8), np.float32)})[0].shape == (1, 4, 8, 8)


def test_planned_peak(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    # Symbolic dims: no plan before the first run.
    with pytest.raises(hetrt.ShapeMismatch, match="has not run yet"):
        sess.planned_peak()
    sess.run(None, {"x": np.ones((2, 3, 16, 16), np.float32)})
    small = sess.planned_peak("host")
    sess.run(None, {"x": np.ones((8, 3, 32, 32), np.float32)})
    large = sess.planned_peak()
    # At least the input and output of the last run.
    assert large >= 8 * 3 * 32 * 32 * 4 + 8 * 4 * 32 * 32 * 4
    assert large > small > 0
