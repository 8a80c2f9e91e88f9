"""test_errors.py — every failure the library reports comes out as a
hetrt.Error subclass carrying het_last_error()'s message: unknown
providers and options, bad models, missing, unknown, ill-typed and
ill-shaped inputs, policies (missing, malformed, valid),
profiling without trace/measure, and errors raised on other threads."""

import pickle
import threading

import numpy as np
import pytest

import hetrt


def x_input(n=1):
    return {"x": np.zeros((n, 3, 8, 8), np.float32)}


def test_hierarchy():
    assert issubclass(hetrt.Error, RuntimeError)
    assert issubclass(hetrt.InvalidArgument, (hetrt.Error, ValueError))
    assert issubclass(hetrt.TypeMismatch, TypeError)
    assert issubclass(hetrt.ShapeMismatch, ValueError)
    assert hetrt.InvalidArgument.status == "invalid argument"
    assert hetrt.InvalidModel.code == 4
    e = pickle.loads(pickle.dumps(hetrt.NotFound("provider 'x'")))
    assert type(e) is hetrt.NotFound and str(e) == "provider 'x'"


def test_unknown_provider(conv_model):
    with pytest.raises(hetrt.NotFound) as e:
        hetrt.InferenceSession(conv_model, providers=["warp-drive", "cpu"])
    assert "provider 'warp-drive': unknown provider 'warp-drive'" in str(e.value)


def test_bad_model_bytes():
    with pytest.raises(hetrt.InvalidModel, match="not a valid ONNX model"):
        hetrt.InferenceSession(b"\x08\x07 this is not a model")


def test_missing_model_file(tmp_path):
    missing = str(tmp_path / "nope.onnx")
    with pytest.raises(hetrt.Error) as e:
        hetrt.InferenceSession(missing)
    assert missing in str(e.value)


def test_missing_input(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    with pytest.raises(hetrt.InvalidArgument, match="input 'x' is not given"):
        sess.run(None, {})


def test_unknown_input(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    feeds = dict(x_input(), bogus=np.zeros(1, np.float32))
    with pytest.raises(hetrt.InvalidArgument, match="'bogus' is not an input of the model"):
        sess.run(None, feeds)


def test_unknown_output(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    with pytest.raises(hetrt.Error, match="nope"):
        sess.run(["nope"], x_input())


def test_wrong_dtype(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    with pytest.raises(hetrt.TypeMismatch, match="input 'x': got int32, model expects float32"):
        sess.run(None, {"x": np.zeros((1, 3, 8, 8), np.int32)})


def test_wrong_shape(conv_model):
    sess = hetrt.InferenceSession(conv_model)
    with pytest.raises(hetrt.ShapeMismatch, match="input 'x': dim 1 is 5, model expects 3"):
        sess.run(None, {"x": np.zeros((1, 5, 8, 8), np.float32)})
    with pytest.raises(hetrt.ShapeMismatch, match="input 'x'"):
        sess.run(None, {"x": np.zeros((3, 8, 8), np.float32)})


def test_unknown_option_key(conv_model):
    with pytest.raises(hetrt.InvalidArgument, match="unknown session option 'colour'"):
        hetrt.InferenceSession(conv_model, options={"colour": "blue"})


def test_bad_option_value(conv_model):
    with pytest.raises(hetrt.InvalidArgument, match="algorithm"):
        hetrt.InferenceSession(conv_model, options={"algorithm": "fastest"})
    with pytest.raises(hetrt.InvalidArgument):
        hetrt.InferenceSession(conv_model, threads=0)


def test_policy_is_passed_to_the_library(conv_model, tmp_path):
    """policy= becomes the session option "policy": a file that does not
    exist is an error naming it, a malformed one names its line and
    column, and a valid one places the nodes it pins."""
    missing = str(tmp_path / "no-such-policy.yaml")
    with pytest.raises(hetrt.Error, match="no-such-policy.yaml"):
        hetrt.InferenceSession(conv_model, policy=missing)
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - match: {op: Conv}\n    pinn: cpu\n")
    with pytest.raises(hetrt.InvalidArgument, match=r"bad.yaml:3:5: unknown action 'pinn'"):
        hetrt.InferenceSession(conv_model, policy=bad)
    good = tmp_path / "good.yaml"
    good.write_text("providers: [cpu]\nrules:\n  - match: {op: Conv}\n    pin: cpu\n")
    sess = hetrt.InferenceSession(conv_model, policy=good)
    assert all(p["provider"] == "cpu" for p in sess.placement())


def test_missing_device_profile(conv_model, tmp_path):
    missing = str(tmp_path / "ghost.yaml")
    with pytest.raises(hetrt.Error, match="ghost.yaml"):
        hetrt.InferenceSession(conv_model, providers=["emu", "cpu"], devices=[missing])


def test_profiling_needs_trace_and_measure(conv_model, tmp_path):
    sess = hetrt.InferenceSession(conv_model)
    sess.run(None, x_input())
    with pytest.raises(hetrt.InvalidArgument, match="trace=true"):
        sess.profile()
    with pytest.raises(hetrt.InvalidArgument, match="trace=true"):
        sess.save_trace(tmp_path / "t.json")
    with pytest.raises(hetrt.Error, match="measure"):
        sess.save_node_times(tmp_path / "t.tsv")
    sess.clear_trace()  # allowed without trace=true
    with pytest.raises(hetrt.NotFound):
        sess.planned_peak("warp-drive")


def test_error_message_is_the_failing_threads(conv_model):
    """het_last_error is per thread: runs failing on several threads at
    once each report their own input's error."""
    sess = hetrt.InferenceSession(conv_model)
    results = {}

    def fail(k):
        try:
            sess.run(None, {"x": np.zeros((1, 3 + k, 8, 8), np.float32)})
        except hetrt.ShapeMismatch as e:
            results[k] = str(e)

    threads = [threading.Thread(target=fail, args=(k,)) for k in range(1, 7)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {k: "input 'x': dim 1 is %d, model expects 3" % (3 + k)
                       for k in range(1, 7)}


def test_argument_errors_are_python_errors(conv_model):
    with pytest.raises(TypeError):
        hetrt.InferenceSession(12)
    sess = hetrt.InferenceSession(conv_model)
    with pytest.raises(TypeError):
        sess.run("y", x_input())
    with pytest.raises(TypeError):
        sess.run(None, [("x", np.zeros(1))])
    with pytest.raises(TypeError):
        sess.run(None, {1: np.zeros(1)})
    with pytest.raises(TypeError):
        hetrt.InferenceSession(conv_model, providers=[3])
