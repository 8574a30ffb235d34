"""Fuzzing the readers through the CLI: random and mutated bytes as PNG, .npy, .csv, codes and
model files must give exit status 0 or one clean error line, never a traceback.

A bounded number of cases runs in the suite; set KPCA_FUZZ=N for N cases of each kind.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from kpcacli.cli import main

CASES = int(os.environ.get("KPCA_FUZZ", "25"))
HAND = Path(__file__).resolve().parent.parent / "sample_data" / "hand"


def mutate(data: bytes, rng: np.random.Generator) -> bytes:
    """One of: random bytes, byte flips, truncation, insertion, a repeated chunk."""
    choice = rng.integers(5)
    array = bytearray(data)
    if choice == 0 or not array:
        return rng.bytes(int(rng.integers(0, 2000)))
    if choice == 1:
        for _ in range(int(rng.integers(1, 12))):
            array[int(rng.integers(len(array)))] = int(rng.integers(256))
        return bytes(array)
    if choice == 2:
        return bytes(array[: int(rng.integers(len(array)))])
    if choice == 3:
        at = int(rng.integers(len(array)))
        return bytes(array[:at]) + rng.bytes(int(rng.integers(1, 64))) + bytes(array[at:])
    at = int(rng.integers(len(array)))
    return bytes(array[:at]) + bytes(array[at : at + 200]) + bytes(array[at:])


def assert_clean(result, what):
    assert result.exit_code in (0, 1, 2), (what, result.exit_code, result.output)
    if result.exit_code:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), (what, result.stderr)
        assert "internal error" not in lines[0], (what, lines[0])
    assert "Traceback" not in result.output, what


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """Valid inputs of every kind to mutate, and a model to run them against."""
    root = tmp_path_factory.mktemp("fuzz")
    frames = np.stack([np.asarray(Image.open(p))[::8, ::8] for p in sorted(HAND.glob("*.png"))[::7]])
    np.save(root / "frames.npy", frames)
    runner = CliRunner()
    assert (
        runner.invoke(main, ["fit", str(root / "frames.npy"), "-m", str(root / "model.npz"), "-k", "2"]).exit_code == 0
    )
    png = io.BytesIO()
    Image.fromarray(frames[0]).save(png, format="PNG")
    npy = io.BytesIO()
    np.save(npy, frames[:3])
    codes = io.BytesIO()
    np.save(codes, np.zeros((2, 2)))
    return {
        "root": root,
        "png": png.getvalue(),
        "npy": npy.getvalue(),
        "csv": b"0.1,0.2\n0.3,0.4\n0.5,0.6\n",
        "codes.npy": codes.getvalue(),
        "codes.txt": b"0.5 -0.25\n1e-3 2\n",
        "model": (root / "model.npz").read_bytes(),
        **{kind: _member(root / "model.npz", member) for kind, member in MEMBERS.items()},
    }


def _member(model: Path, member: str) -> bytes:
    import zipfile

    with zipfile.ZipFile(model) as archive:
        return archive.read(member)


KINDS = ["png", "npy", "csv", "codes.npy", "codes.txt", "model", "model-stream", "model-groups"]
# Members of the model's zip rewritten with mutated bytes (the zip's own CRC made anew, so the
# mutation reaches kpca's checks and the H.264 decoder instead of stopping at the zip).
MEMBERS = {"model-stream": "stream/c/0", "model-groups": "groups/c/0/0"}


def with_member(model: Path, target: Path, member: str, data: bytes) -> Path:
    import zipfile

    with zipfile.ZipFile(model) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            out.writestr(info, data if info.filename == member else source.read(info))
    return target


@pytest.mark.slow  # many cases of every kind; tests/test_errors.py and the forged-model tests run quick
@pytest.mark.parametrize("kind", KINDS)
def test_mutated_inputs_give_only_clean_errors(seeds, tmp_path, kind):
    rng = np.random.default_rng(KINDS.index(kind))
    root = seeds["root"]
    runner = CliRunner()
    for case in range(CASES):
        data = mutate(seeds[kind], rng)
        if kind == "png":
            path = tmp_path / "frame.png"
            path.write_bytes(data)
            commands = [["encode", str(path), "-m", str(root / "model.npz")]]
        elif kind == "npy":
            path = tmp_path / "frames.npy"
            path.write_bytes(data)
            commands = [
                ["fit", str(path), "-m", str(tmp_path / "m.npz"), "-k", "1", "-q"],
                ["encode", str(path), "-m", str(root / "model.npz")],
            ]
        elif kind == "csv":
            path = tmp_path / "points.csv"
            path.write_bytes(data)
            commands = [["fit", str(path), "-m", str(tmp_path / "m.npz"), "-k", "1", "-q"]]
        elif kind.startswith("codes"):
            path = tmp_path / kind
            path.write_bytes(data)
            commands = [["decode", str(path), "-m", str(root / "model.npz"), "-o", str(tmp_path / "out/")]]
        elif kind in MEMBERS:
            path = with_member(root / "model.npz", tmp_path / "model.npz", MEMBERS[kind], data)
            np.save(tmp_path / "codes.npy", np.zeros((2, 2)))
            commands = [
                ["info", "-m", str(path)],
                ["encode", str(root / "frames.npy"), "-m", str(path)],
                ["decode", str(tmp_path / "codes.npy"), "-m", str(path), "-o", str(tmp_path / "out/"), "--force"],
            ]
        else:
            path = tmp_path / "model.npz"
            path.write_bytes(data)
            commands = [["info", "-m", str(path)], ["encode", str(root / "frames.npy"), "-m", str(path)]]
        for command in commands:
            assert_clean(runner.invoke(main, command), f"{kind} case {case}: {' '.join(command[:1])}")
        stdin = runner.invoke(main, ["encode", "-", "-m", str(root / "model.npz")], input=data)
        assert_clean(stdin, f"{kind} case {case} on standard input")
