"""test_threads.py — one session run from several Python threads: the
outputs equal a single-threaded run's bit for bit, the GIL is released
while hetrt runs (another thread keeps running Python meanwhile), and an
input that needs no conversion is lent to the run, not copied."""

import sys
import threading
import time

import numpy as np
import pytest

import hetrt
import models


@pytest.fixture(scope="module")
def chain_session():
    return hetrt.InferenceSession(models.matmul_chain(512, 6), threads=1)


def test_eight_threads_match_one(conv_model):
    sess = hetrt.InferenceSession(conv_model, options={"cpu.conv_algo": "direct"})
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((2, 3, 16, 16)).astype(np.float32) for _ in range(8)]
    expected = [sess.run(None, {"x": x})[0] for x in inputs]
    got = [[None] * 5 for _ in inputs]
    errors = []
    start = threading.Barrier(8)

    def worker(k):
        try:
            start.wait()
            for r in range(5):
                got[k][r] = sess.run(None, {"x": inputs[k]})[0]
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for k in range(8):
        for r in range(5):
            np.testing.assert_array_equal(got[k][r], expected[k])


def test_gil_is_released_during_run(chain_session):
    """A ticker thread records the time every millisecond; while the main
    thread is inside one long run it must keep ticking.  With the GIL held
    through the run it could not tick at all between the run's start and
    end."""
    x = np.ones((8192, 512), np.float32)
    chain_session.run(None, {"x": x})  # plan made, caches warm
    ticks, stop = [], threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.02)
    begin = time.perf_counter()
    chain_session.run(None, {"x": x})
    end = time.perf_counter()
    stop.set()
    t.join()
    assert end - begin > 0.05, "the run is too short to tell"
    inside = [s for s in ticks if begin + 0.01 < s < end - 0.01]
    assert len(inside) >= 5, (len(inside), end - begin)


def _extra_refs_during_run(sess, array):
    """References to array held while another thread runs sess on it,
    beyond those held before: the median of samples taken from this
    thread through the run (numpy's copy of a converted input releases
    the GIL too, but lasts a small part of the run)."""
    feeds = {"x": array}
    base = sys.getrefcount(array)
    t = threading.Thread(target=sess.run, args=(None, feeds))
    samples = []
    t.start()
    while t.is_alive():
        samples.append(sys.getrefcount(array) - base)
        time.sleep(0.0005)
    t.join()
    assert len(samples) >= 20, "the run is too short to sample"
    return sorted(samples)[len(samples) // 2]


def test_contiguous_input_is_lent_not_copied(chain_session):
    """While a run is in flight it holds the array it reads: the caller's
    own array when that is C-contiguous float32, a converted copy (and so
    no extra reference to the caller's) otherwise."""
    x = np.ones((8192, 512), np.float32)
    chain_session.run(None, {"x": x})
    assert _extra_refs_during_run(chain_session, x) == 1
    strided = np.ones((8192, 1024), np.float32)[:, ::2]
    assert _extra_refs_during_run(chain_session, strided) == 0
