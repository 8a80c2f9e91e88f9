"""test_leaks.py — no leaks and right reference counts: the resident size
stays flat over thousands of session creations, runs and failing calls
(while holding the same objects grows it by far more than the limit, so
a leak of a session or tensor per iteration would fail), and the inputs'
and other arguments' reference counts are unchanged after successful
and failing calls.  rss_loop.py is the longer, printing version."""

import gc
import sys

import numpy as np
import pytest

import hetrt
import models
from rss_loop import rss_kib

N = 2000
LIMIT_KIB = 2048


@pytest.fixture(scope="module")
def model():
    return models.conv_relu_add()


def growth(body, n=N):
    """RSS growth in KiB from the first fifth of n iterations to the end."""
    first = None
    for i in range(n):
        body(i)
        if i + 1 == n // 5:
            gc.collect()
            first = rss_kib()
    gc.collect()
    return rss_kib() - first


def x64():
    return np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)


def test_session_create_run_destroy_is_flat(model):
    x = x64()

    def body(i):
        hetrt.InferenceSession(model).run(None, {"x": x})

    assert growth(body) < LIMIT_KIB
    held = []  # the control: what one leaked session per iteration costs
    assert growth(lambda i: held.append(hetrt.InferenceSession(model)), 200) > LIMIT_KIB


def test_runs_are_flat(model):
    sess = hetrt.InferenceSession(model)
    x = x64()
    strided = np.repeat(x, 2, axis=3)[..., ::2]  # converted on each run
    assert growth(lambda i: sess.run(None, {"x": x if i % 2 else strided})) < LIMIT_KIB
    held = []
    assert growth(lambda i: held.append(sess.run(None, {"x": x})), 200) > LIMIT_KIB


def test_failing_calls_are_flat(model):
    sess = hetrt.InferenceSession(model)
    x = x64()
    feeds = [{"x": x[:, :2]}, {"y": x}, {"x": x.astype(np.float64)}, {}]

    def failing_run(i):
        with pytest.raises(hetrt.Error):
            sess.run(None, feeds[i % 4])

    def failing_create(i):
        kwargs = [{"options": {"no_such_key": "1"}}, {"providers": ["nope"]},
                  {"policy": "p.yaml"}, {"threads": 0}][i % 4]
        with pytest.raises(hetrt.Error):
            hetrt.InferenceSession(model, **kwargs)

    assert growth(failing_run) < LIMIT_KIB
    assert growth(failing_create) < LIMIT_KIB
    with pytest.raises(hetrt.Error):
        hetrt.InferenceSession(b"junk")
    assert growth(lambda i: pytest.raises(hetrt.Error, hetrt.InferenceSession, b"junk"),
                  N) < LIMIT_KIB


def test_quantizer_is_flat(tmp_path):
    path = models.write(tmp_path / "cnn.onnx", models.small_cnn())
    sets = [{"x": np.ones((1, 3, 16, 16), np.float32)}]

    def body(i):
        if i % 2:
            hetrt.quantize(path, tmp_path / "q.onnx", sets, method="minmax")
        else:
            with pytest.raises(hetrt.InvalidArgument):
                hetrt.quantize(path, tmp_path / "q.onnx", sets, method="bogus")

    assert growth(body, 200) < LIMIT_KIB


def test_reference_counts(model, outputs_model):
    sess = hetrt.InferenceSession(model)
    x = x64()
    names = ["y"]
    feeds = {"x": x}
    before = (sys.getrefcount(x), sys.getrefcount(names), sys.getrefcount(feeds))
    for _ in range(100):
        y = sess.run(names, feeds)[0]
    with pytest.raises(hetrt.Error):
        sess.run(["nope"], feeds)
    with pytest.raises(hetrt.Error):
        sess.run(names, {"x": x, "extra": x})
    with pytest.raises(TypeError):
        sess.run([names[0], 3], feeds)
    assert (sys.getrefcount(x), sys.getrefcount(names), sys.getrefcount(feeds)) == before
    # An output is referenced by its holder alone; its base is the capsule
    # owning the het_tensor, referenced by the array alone (3 here: the
    # array, the temporary y.base and getrefcount's argument).
    assert sys.getrefcount(y) == 2 and sys.getrefcount(y.base) == 3
    # Several outputs: each array has its own tensor.
    multi = hetrt.InferenceSession(outputs_model)
    a = np.ones((2, 3), np.float32)
    outs = multi.run(None, {"a": a, "b": a})
    assert sys.getrefcount(a) == 2 and len({id(o.base) for o in outs}) == 3
