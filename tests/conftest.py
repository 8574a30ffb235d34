"""Shared fixtures: the sample hand sequence, small frame sets, fitted models, the frame store's
two kinds. The helpers tests import are in helpers.py."""

from __future__ import annotations

import copy
import gc
import hashlib
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
from kpcacli.preimage import measurement


@pytest.fixture(scope="module", autouse=True)
def collect_garbage_after_each_module():
    """Collect after every test module, so that a file the library left open is closed (and
    warned of, ResourceWarning, an error here) in the module that left it, not at random in a
    later one. (After every test it cost 60 ms a test, the quick suite's time doubled.) What
    survives is frozen (``gc.freeze``): the imported libraries and session fixtures, alive to
    the end, which every collection would otherwise walk again (a tenth to a quarter of a
    second each); an object frozen alive is still freed when its last reference goes."""
    yield
    gc.collect()
    gc.freeze()


class MeasuredChoices:
    """The solver choices :func:`kpcacli.preimage.measurement.measure_solvers` measured in this
    test process, by a digest of everything the measurement reads, so that the many tests that
    fit the same frames alike (the sample hand at k = 3, through the CLI or the API) measure
    them once: the measurement is a pure function of those inputs, and most of the time of a
    small fit (held-back folds, each candidate solver on each).

    A test is served a choice an earlier test measured only for the first measurement of those
    inputs it asks for: a second one in the same test (two fits compared, as a test of
    determinism does) is measured afresh, so that such a test always compares a measurement
    with another one. A test that patches anything (``monkeypatch`` among its fixtures) is never
    served: it may have changed what the measurement does. Neither is a state whose frames are
    not in memory, or which holds axes or a choice already (not a fit's)."""

    def __init__(self, measure):
        self.measure = measure
        self.choices: dict[bytes, object] = {}
        self.asked: set[bytes] = set()
        self.serving = False

    def __call__(self, state, peak=None, progress=False):
        key = self.key(state, peak) if self.serving else None
        if key is not None and key in self.choices and key not in self.asked:
            self.asked.add(key)
            return copy.deepcopy(self.choices[key])
        choice = self.measure(state, peak=peak, progress=progress)
        if key is not None:
            self.asked.add(key)
            self.choices[key] = copy.deepcopy(choice)
        return choice

    @staticmethod
    def key(state, peak) -> bytes | None:
        frames = state.frames
        if not isinstance(frames, np.ndarray) or state.linear_axes is not None or state.solver_choice is not None:
            return None
        gram = state.linear_gram
        digest = hashlib.sha256(repr((state.kernel, state.centred, state.frame_shape, peak, frames.dtype.str,
                                      frames.shape, state.gram_mean, gram.origin_norm2)).encode())  # fmt: skip
        for array in (frames, state.eigenvalues, state.eigenvectors, state.codes, state.gram_row_means,
                      gram.shifted, gram.origin, gram.origin_dots):  # fmt: skip
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.digest()


MEASURED_CHOICES = MeasuredChoices(measurement.measure_solvers)


def pytest_sessionstart(session):
    # What every measurement calls: with_solver_choice (a fit, and choice.solver_choice for a
    # state derived without one) looks it up in its own module.
    measurement.measure_solvers = MEASURED_CHOICES


def pytest_runtest_setup(item):
    """Before the test's fixtures: whether it (and the fixtures it sets up first) may be served
    choices measured before (:class:`MeasuredChoices`)."""
    MEASURED_CHOICES.serving = "monkeypatch" not in item.fixturenames
    MEASURED_CHOICES.asked = set()


def pytest_runtest_teardown(item):
    MEASURED_CHOICES.serving = False


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
