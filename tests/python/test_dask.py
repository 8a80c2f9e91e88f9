"""test_dask.py — hetrt.dask on a local cluster of two worker processes
(loopback only): a model over a dask array and over a bag of .npy and .pb
files equals single-process runs bit for bit, each worker creates its
session once, and a bad input comes back to the client as the worker's
hetrt error.  Skipped when dask or distributed cannot be imported."""

import os

import numpy as np
import pytest

import hetrt
import models

da = pytest.importorskip("dask.array", reason="python3-dask is not installed")
db = pytest.importorskip("dask.bag", reason="python3-dask is not installed")
distributed = pytest.importorskip("distributed", reason="python3-distributed is not installed")
import hetrt.dask as hdask  # noqa: E402  (needs dask)

# Fixed kernels, so that every worker's session computes like the local one.
OPTIONS = {"cpu.conv_algo": "direct"}


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                       host="127.0.0.1", dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_array_blocks_match_local_runs(client, conv_model):
    x = np.random.default_rng(0).standard_normal((10, 3, 8, 8)).astype(np.float32)
    dx = da.from_array(x, chunks=(3, 3, 8, 4))  # axis 3 chunked too: rechunked
    dy = hdask.map_model(conv_model, dx, options=OPTIONS)
    assert dy.shape == (10, 4, 8, 8) and dy.dtype == np.float32
    assert dy.chunks[0] == (3, 3, 3, 1)
    got = dy.compute()
    local = hetrt.InferenceSession(conv_model, options=OPTIONS)
    want = np.concatenate([local.run(None, {"x": x[i:i + 3]})[0] for i in range(0, 10, 3)])
    np.testing.assert_array_equal(got, want)
    # Each worker made its session once, however many blocks it ran.
    dy2 = hdask.map_model(conv_model, da.from_array(x, chunks=(1, 3, 8, 8)), options=OPTIONS)
    want1 = np.concatenate([local.run(None, {"x": x[i:i + 1]})[0] for i in range(10)])
    np.testing.assert_array_equal(dy2.compute(), want1)
    counts = client.run(hdask.cached_session_count)
    assert len(counts) == 2 and all(n <= 1 for n in counts.values()), counts
    assert sum(counts.values()) >= 1
    pids = client.run(os.getpid)
    assert len(set(pids.values())) == 2 and os.getpid() not in pids.values()


def test_plan_file_on_workers(client, conv_model, tmp_path):
    """Workers load an ahead-of-time plan like a model: the same bytes as a
    local session on that plan and as the session that wrote it."""
    writer = hetrt.InferenceSession(conv_model, options=OPTIONS)
    plan = str(tmp_path / "conv.hplan")
    writer.save_plan(plan)
    x = np.random.default_rng(2).standard_normal((7, 3, 8, 8)).astype(np.float32)
    got = hdask.map_model(plan, da.from_array(x, chunks=(2, 3, 8, 8))).compute()
    local = hetrt.InferenceSession(plan)
    for i in range(0, 7, 2):
        want = writer.run(None, {"x": x[i:i + 2]})[0]
        np.testing.assert_array_equal(local.run(None, {"x": x[i:i + 2]})[0], want)
        np.testing.assert_array_equal(got[i:i + 2], want)


def test_bag_of_files_matches_local_runs(client, cnn_model, tmp_path):
    from onnx import numpy_helper
    rng = np.random.default_rng(1)
    arrays, paths = [], []
    for k in range(6):
        a = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
        if k % 2:
            path = tmp_path / ("in_%d.npy" % k)
            np.save(path, a)
        else:
            path = tmp_path / ("in_%d.pb" % k)
            path.write_bytes(numpy_helper.from_array(a, "x").SerializeToString())
        arrays.append(a)
        paths.append(str(path))
    bag = db.from_sequence(paths, npartitions=3)
    got = hdask.map_model(cnn_model, bag, output="probs").compute()
    local = hetrt.InferenceSession(cnn_model)
    assert len(got) == 6
    for g, a in zip(got, arrays):
        np.testing.assert_array_equal(g, local.run(None, {"x": a})[0])


def test_worker_error_reaches_the_client(client, conv_model, tmp_path):
    bad = tmp_path / "bad.npy"
    np.save(bad, np.zeros((1, 5, 8, 8), np.float32))
    bag = db.from_sequence([str(bad)], npartitions=1)
    with pytest.raises(hetrt.ShapeMismatch, match="input 'x': dim 1 is 5, model expects 3"):
        hdask.map_model(conv_model, bag, options=OPTIONS).compute()
    dx = da.from_array(np.zeros((4, 3, 8, 8), np.float64), chunks=(2, 3, 8, 8))
    with pytest.raises(hetrt.TypeMismatch, match="got float64, model expects float32"):
        hdask.map_model(conv_model, dx, options=OPTIONS).compute()


def test_bad_arguments(conv_model):
    with pytest.raises(TypeError, match="dask.array"):
        hdask.map_model(conv_model, [1, 2, 3])
    with pytest.raises(ValueError, match="no output 'z'"):
        hdask.map_model(conv_model, da.zeros((2, 3, 8, 8), np.float32), output="z")
