"""conftest.py — fixtures of the Python package's tests: the source tree
(device profiles), and the generated models written once per test session
into a temporary folder.  Run with PYTHONPATH=BUILD/python (CTest's
`python` test sets it)."""

import os
import pathlib

import pytest

import models

SOURCE_DIR = pathlib.Path(os.environ.get("HETRT_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR


@pytest.fixture(scope="session")
def npu_profile():
    path = SOURCE_DIR / "configs" / "devices" / "npu.yaml"
    assert path.is_file(), path
    return str(path)


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def conv_model(model_dir):
    return str(models.write(model_dir / "conv.onnx", models.conv_relu_add()))


@pytest.fixture(scope="session")
def conv_tanh_model(model_dir):
    return str(models.write(model_dir / "conv_tanh.onnx", models.conv_relu_add(tanh=True)))


@pytest.fixture(scope="session")
def outputs_model(model_dir):
    return str(models.write(model_dir / "outputs.onnx", models.several_outputs()))


@pytest.fixture(scope="session")
def cnn_model(model_dir):
    return str(models.write(model_dir / "cnn.onnx", models.small_cnn()))
