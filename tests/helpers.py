"""What the tests share besides fixtures: where the sample data is, running the command line
(``run``, ``ok``, ``one_line_error``), what a command imports, a source file's syntax nodes, which files the process holds
open, a stand-in for an earlier model, noisy copies of frames, the array libraries the device
tests run on. Test modules import them with
``from helpers import ...``; the fixtures are in conftest.py."""

from __future__ import annotations

import ast
import functools
import gc
import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from kpcacli.cli import main
from kpcacli.utils.arrays import Accelerator

# `via` for a command that takes its input from a file or standard input and costs seconds: the
# file in the quick suite, standard input's second pass of the same work in the slow one.
VIA_FILE_QUICK = ["file", pytest.param("stdin", marks=pytest.mark.slow)]

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "sample_data" / "hand"
# Every solver that decodes an uncentred Gaussian model of frames (all but `linear`), by name.
RBF_FRAME_SOLVERS = ["discrepancy", "distance", "fixed-point", "gradient", "learned", "log", "nearest", "transport"]


def accelerators() -> list:
    """The accelerators the device tests run on, as pytest parameters: array-api-strict on its
    ``device1`` (the standard and nothing more, on a device that refuses to mix with arrays
    elsewhere) always; where installed, PyTorch and CuPy through array-api-compat (each
    library's own functions: its dtypes, rounding and LAPACK), on their GPU where there is one
    and PyTorch on its CPU where there is none. A GPU library only widens the list: the suite
    needs none."""
    import array_api_strict

    found = [pytest.param(Accelerator("cuda", array_api_strict, array_api_strict.Device("device1")), id="strict")]
    if importlib.util.find_spec("torch") is not None:
        import torch
        from array_api_compat import torch as xp

        # cuda:0, as arrays report their device (torch.device("cuda") compares unequal to it)
        device = torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
        found.append(pytest.param(Accelerator("cuda", xp, device), id=f"torch-{device.type}"))
    if importlib.util.find_spec("cupy") is not None:
        import cupy
        from array_api_compat import cupy as xp

        try:
            if cupy.cuda.runtime.getDeviceCount() > 0:
                found.append(pytest.param(Accelerator("cuda", xp, cupy.cuda.Device(0)), id="cupy"))
        except cupy.cuda.runtime.CUDARuntimeError:  # CuPy without a driver
            pass
    return found


@functools.cache
def syntax_nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of the syntax tree of the source file `path` (``ast.walk``), parsed once in
    a test process: the layer tests walk every module of kpcacli several times."""
    return tuple(ast.walk(ast.parse(path.read_text())))


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


def previous_model(path) -> bytes:
    """Put a stand-in for an earlier model at `path` (a zip holding ``kernel.npy``, which
    is what tells a model file from other files) and return its bytes: a command that fails
    must leave them as they were, and one that succeeds may replace them without --force."""
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("kernel.npy", b"the previous model")
    return Path(path).read_bytes()


def noisy_copy(frames: np.ndarray, sigma: float, seed: int = 0) -> np.ndarray:
    """8-bit frames with white noise of `sigma` grey levels (seeded), rounded and clipped as a
    camera's."""
    rng = np.random.default_rng(seed)
    return np.clip(np.rint(frames + rng.normal(0, sigma, frames.shape)), 0, 255).astype(np.uint8)
