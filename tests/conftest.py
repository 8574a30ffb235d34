"""Shared fixtures: the sample hand sequence, small frame sets, fitted models, the frame store's
two kinds. The helpers tests import are in helpers.py."""

from __future__ import annotations

import gc
import os

# scikit-learn's array API dispatch (KernelPCA on array-api-strict, tests/test_array_api.py)
# needs scipy's own array API support, which is read when scipy is first imported.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest
from helpers import HAND
from hypothesis import settings

from kpcacli import FrameModel
from kpcacli.io.sources import iter_frames


@pytest.fixture(scope="module", autouse=True)
def collect_garbage_after_each_module():
    """Collect after every test module, so that a file the library left open is closed (and
    warned of, ResourceWarning, an error here) in the module that left it, not at random in a
    later one. (After every test it cost 60 ms a test, the quick suite's time doubled.)"""
    yield
    gc.collect()


# CI runs a fixed set of examples so a failure is reproducible; local runs explore.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def hand() -> np.ndarray:
    """The 70 sample hand frames, (70, 180, 320) uint8."""
    return np.stack([frame.pixels for frame in iter_frames([str(HAND)])])


@pytest.fixture(scope="session")
def hand_split(hand):
    """The numerical test of García-González et al. (2021): the middle frame held out, the other 69 for training."""
    return np.delete(hand, 35, axis=0), hand[35]


@pytest.fixture(scope="session")
def hand_model(hand_split) -> FrameModel:
    """Gaussian kernel, uncentred, k = 3, fitted on the 69 training frames."""
    return FrameModel(n_components=3).fit(hand_split[0])


def _small_frames() -> np.ndarray:
    """Twelve smooth 12 x 16 uint8 frames of a moving blob (a 1-D manifold), deterministic."""
    ys, xs = np.mgrid[0:12, 0:16]
    frames = []
    for t in np.linspace(0.0, 1.0, 12):
        cx, cy = 3 + 10 * t, 4 + 4 * np.sin(np.pi * t)
        frames.append(40 + 180 * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / 8.0))
    return np.rint(np.stack(frames)).astype(np.uint8)


@pytest.fixture
def small_frames() -> np.ndarray:
    """Twelve smooth 12 x 16 uint8 frames of a moving blob (a 1-D manifold), deterministic."""
    return _small_frames()


@pytest.fixture(scope="session")
def small_model_bytes(tmp_path_factory) -> bytes:
    """The file of ``FrameModel(n_components=2)`` fitted on :func:`small_frames`, fitted once:
    a fit writes the same bytes every time (tests/test_modelfile.py), so a test that needs the
    file copies these rather than paying the fit and its solver choice again."""
    path = tmp_path_factory.mktemp("small-model") / "model.npz"
    FrameModel(n_components=2).fit(_small_frames()).save(path)
    return path.read_bytes()


@pytest.fixture(params=["anonymous", "named"])
def store_kind(request, monkeypatch):
    """Run a test with the anonymous (O_TMPFILE) frame store and with the named fallback used
    where the filesystem has no O_TMPFILE."""
    if request.param == "named":
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    elif not hasattr(os, "O_TMPFILE"):
        pytest.skip("this system has no O_TMPFILE")
    return request.param
