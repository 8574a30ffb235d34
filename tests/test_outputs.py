"""What the tool writes: files get the umask's mode, never mkstemp's 0600."""

from __future__ import annotations

import json
import os
import shutil
import stat

import numpy as np
import pytest
from conftest import HAND, ok, one_line_error, run
from PIL import Image


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def modes(folder) -> dict[str, int]:
    return {
        str(path.relative_to(folder)): stat.S_IMODE(path.stat().st_mode) for path in folder.rglob("*") if path.is_file()
    }


def test_every_output_honours_the_umask(tmp_path, umask_022):
    frames = np.stack([np.asarray(Image.open(p))[::4, ::4] for p in sorted(HAND.glob("*.png"))[::6]])
    source = tmp_path / "in"
    source.mkdir()
    np.save(source / "frames.npy", frames)
    np.savetxt(source / "points.csv", np.random.default_rng(0).normal(size=(20, 2)), delimiter=",")
    out = tmp_path / "out"
    out.mkdir()
    ok(run(["fit", source / "frames.npy", "-m", out / "model.npz", "-k", "2", "--codes", out / "all.npy", "-q"]))
    ok(run(["fit", source / "points.csv", "-m", out / "points.npz", "-k", "2", "--beta", "1", "-q"]))
    ok(run(["encode", source / "frames.npy", "-m", out / "model.npz", "-o", out / "codes.txt", "-q"]))
    ok(run(["decode", out / "codes.txt", "-m", out / "model.npz", "-o", f"{out / 'frames'}/"]))
    ok(run(["decode", out / "codes.txt", "-m", out / "model.npz", "-o", out / "clip.mp4"]))
    ok(run(["decode", "-", "-m", out / "model.npz", "-o", out / "one.png"], input=b"0 0\n"))
    ok(run(["denoise", source / "points.csv", "-m", out / "points.npz", "-o", out / "clean.csv"]))
    ok(run(["compare", out / "one.png", out / "one.png", "-o", out / "side.png"]))
    ok(run(["eval", source / "frames.npy", "-k", "2", "--solver", "nearest", "--report", out / "report", "-q"]))
    ok(run(["sweep", source / "points.csv", "-k", "1", "--beta-range", "1:2:2", "--plot", out / "sweep.png"]))
    written = modes(out)
    expected = {
        "model.npz", "all.npy", "points.npz", "codes.txt", "clip.mp4", "one.png", "clean.csv", "side.png",
        "sweep.png", "frames/000000.png", "report/nearest_worst.png", "report/codes.png",
    }  # fmt: skip
    assert expected <= set(written), sorted(written)
    assert {name: mode for name, mode in written.items() if mode != 0o644} == {}


def test_a_tighter_umask_is_honoured_too(tmp_path):
    np.save(tmp_path / "c.npy", np.zeros((1, 2)))
    previous = os.umask(0o077)
    try:
        frames = np.random.default_rng(0).integers(0, 256, (6, 4, 4), dtype=np.uint8)
        np.save(tmp_path / "f.npy", frames)
        ok(run(["fit", tmp_path / "f.npy", "-m", tmp_path / "m.npz", "-k", "2", "-q"]))
        ok(run(["encode", tmp_path / "f.npy", "-m", tmp_path / "m.npz", "-o", tmp_path / "codes.npy"]))
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "m.npz").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "codes.npy").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    "command, existing",
    [
        (["fit", HAND, "-k", "2", "-q", "-m", "{target}"], "png"),
        (["fit", HAND, "-k", "2", "-q", "-m", "{target}"], "text"),
        (["encode", HAND / "hand_000.png", "-m", "{model}", "-o", "{target}"], "model"),
        (["decode", "{codes}", "-m", "{model}", "-o", "{target}"], "model"),
        (["extract", HAND, "--frames", "3", "-o", "{target}"], "model"),
    ],
)
def test_an_existing_file_of_another_kind_is_not_replaced_without_force(tmp_path, command, existing):
    """A PNG is not a model, a model is not a frame: refused in one line and left untouched;
    --force replaces it."""
    model, codes = tmp_path / "model.npz", tmp_path / "codes.npy"
    ok(run(["fit", HAND, "-k", "2", "-q", "-m", model]))
    ok(run(["encode", HAND / "hand_000.png", "-m", model, "-o", codes]))
    target = tmp_path / ("existing" + (".npy" if command[0] == "encode" else ".png" if existing != "text" else ".txt"))
    if existing == "model":
        shutil.copy(model, target)
    elif existing == "png":
        Image.fromarray(np.zeros((4, 4), np.uint8)).save(target, format="PNG")
    else:
        target.write_text("notes\n")
    before = target.read_bytes()
    args = [str(a).format(target=target, model=model, codes=codes) for a in command]
    one_line_error(run(args), 2, "would replace it", "--force")
    assert target.read_bytes() == before
    ok(run([*args, "--force"]))
    assert target.read_bytes() != before


def test_a_model_replaces_a_model(tmp_path):
    ok(run(["fit", HAND, "-k", "2", "-q", "-m", tmp_path / "m.npz"]))
    ok(run(["fit", HAND, "-k", "3", "-q", "-m", tmp_path / "m.npz"]))
    assert json.loads(ok(run(["info", "-m", tmp_path / "m.npz", "--json"])).stdout)["k"] == 3
