"""Shared fixtures and helpers: the sample hand sequence, small frame sets, fitted models, and
running the command line (``run``, ``ok``, ``one_line_error``). Test modules import the
helpers with ``from conftest import ...``."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import settings

from kpcacli import FrameModel
from kpcacli.cli import main
from kpcacli.io.sources import iter_frames

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "sample_data" / "hand"


def run(args, input=None):
    """`kpca ARGS` through click's CliRunner (stdout and stderr kept apart)."""
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def ok(result):
    """Assert a CliRunner result succeeded; return it."""
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.stderr}"
    return result


def one_line_error(result, status, *fragments):
    """Assert the command failed with `status` and exactly one clean line on standard error
    (no traceback, no internal error) containing every fragment."""
    assert result.exit_code == status, (result.exit_code, result.stderr, result.stdout)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Traceback" not in result.output and "internal error" not in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def loaded_by(command, modules) -> list[str]:
    """Which of `modules` a fresh Python has imported after running ``kpca COMMAND`` (it must
    succeed): what a command costs in imports, measured where no test has imported them."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom kpcacli.cli import main\n"
        f"try:\n    main({[str(part) for part in command]!r})\n"
        "except SystemExit as stop:\n    assert not stop.code, stop.code\n"
        f"print('loaded:', *sorted(m for m in {tuple(modules)!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return result.stdout.strip().splitlines()[-1].split()[1:]


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


@pytest.fixture
def small_frames() -> np.ndarray:
    """Twelve smooth 12 x 16 uint8 frames of a moving blob (a 1-D manifold), deterministic."""
    ys, xs = np.mgrid[0:12, 0:16]
    frames = []
    for t in np.linspace(0.0, 1.0, 12):
        cx, cy = 3 + 10 * t, 4 + 4 * np.sin(np.pi * t)
        frames.append(40 + 180 * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / 8.0))
    return np.rint(np.stack(frames)).astype(np.uint8)


def open_descriptors(folder) -> list[str]:
    """Files in `folder` this process holds open, named or deleted (/proc/self/fd): an
    anonymous frame store that was never closed shows up here as "folder/#123 (deleted)"."""
    gc.collect()  # memory maps of earlier tests close when collected
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the descriptor listdir itself used
        if target.startswith(str(folder)):
            found.append(target)
    return sorted(found)


@pytest.fixture(params=["anonymous", "named"])
def store_kind(request, monkeypatch):
    """Run a test with the anonymous (O_TMPFILE) frame store and with the named fallback used
    where the filesystem has no O_TMPFILE."""
    if request.param == "named":
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    elif not hasattr(os, "O_TMPFILE"):
        pytest.skip("this system has no O_TMPFILE")
    return request.param


def previous_model(path) -> bytes:
    """Put a stand-in for an earlier model at `path` (a zip holding ``kernel.npy``, which
    is what tells a model file from other files) and return its bytes: a command that fails
    must leave them as they were, and one that succeeds may replace them without --force."""
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("kernel.npy", b"the previous model")
    return Path(path).read_bytes()
