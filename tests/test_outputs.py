"""What the tool writes: files get the umask's mode, never mkstemp's 0600."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run
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


@pytest.mark.slow
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


@pytest.fixture(scope="module")
def hand_model_codes(tmp_path_factory):
    """A k = 2 model of the sample hand and the codes of its first frame, which the tests
    below read (never replace)."""
    root = tmp_path_factory.mktemp("hand-model")
    model, codes = root / "model.npz", root / "codes.npy"
    ok(run(["fit", HAND, "-k", "2", "-q", "-m", model]))
    ok(run(["encode", HAND / "hand_000.png", "-m", model, "-o", codes]))
    return model, codes


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
def test_an_existing_file_of_another_kind_is_not_replaced_without_force(tmp_path, hand_model_codes, command, existing):
    """A PNG is not a model, a model is not a frame: refused in one line and left untouched;
    --force replaces it."""
    model, codes = hand_model_codes
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


@pytest.mark.slow
def test_a_model_replaces_a_model(tmp_path):
    ok(run(["fit", HAND, "-k", "2", "-q", "-m", tmp_path / "m.npz"]))
    ok(run(["fit", HAND, "-k", "3", "-q", "-m", tmp_path / "m.npz"]))
    assert json.loads(ok(run(["info", "-m", tmp_path / "m.npz", "--json"])).stdout)["k"] == 3


# -- nothing of the user's is replaced ------------------------------------------------------
@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A k = 3 model of every fifth hand frame, and the point model of a noisy arc."""
    folder = tmp_path_factory.mktemp("models")
    ok(run(["fit", HAND, "--frames", "::5", "-k", "3", "-q", "-m", folder / "hand.npz"]))
    angle = np.linspace(0, np.pi, 40)
    np.savetxt(folder / "pts.csv", np.c_[np.cos(angle), np.sin(angle)], delimiter=",")
    ok(run(["fit", folder / "pts.csv", "-k", "2", "--beta", "2", "-q", "-m", folder / "toy.npz"]))
    return folder


def a_users_clip(path):
    from test_video import textured_frames, write_clip

    write_clip(path, textured_frames(6))
    return path


def users_file(path):
    """A file of the user's at `path` (its kind from the suffix); returns its bytes."""
    if path.suffix in (".mp4", ".gif", ".mkv", ".webm", ".avi"):
        if path.suffix == ".mp4":
            a_users_clip(path)
        else:
            Image.fromarray(np.zeros((8, 8), np.uint8)).save(path) if path.suffix == ".gif" else path.write_bytes(
                b"\x1a\x45\xdf\xa3 a user's video"
            )
    elif path.suffix == ".png":
        Image.fromarray(np.full((8, 8), 7, np.uint8)).save(path)
    elif path.suffix == ".npy":
        np.save(path, np.arange(6.0).reshape(2, 3))
    else:
        path.write_text("milk\neggs\n")
    return path.read_bytes()


@pytest.mark.parametrize("via", ["file", "stdin"])
@pytest.mark.parametrize(
    "command, name",
    [
        (["encode", "{frame}", "-m", "{hand}"], "list.txt"),
        (["encode", "{frame}", "-m", "{hand}"], "mydata.csv"),
        (["encode", "{frame}", "-m", "{hand}"], "data.npy"),
        (["denoise", "{points}", "-m", "{toy}"], "notes.txt"),
        (["extract", "{frame}"], "other.mp4"),
        (["extract", "{frame}"], "picture.png"),
        (["decode", "{codes}", "-m", "{hand}"], "other.mp4"),
        (["decode", "{codes}", "-m", "{hand}"], "loop.gif"),
        (["decode", "{codes}", "-m", "{hand}"], "picture.png"),
    ],
)
def test_an_output_never_replaces_a_file_kpca_did_not_write(tmp_path, models, command, name, via):
    """ffmpeg without -y: the user's file is refused in one line (exit 2) and left as it was;
    --force replaces it."""
    frame = HAND / "hand_003.png"
    codes = tmp_path / "codes.txt"
    ok(run(["encode", frame, "-m", models / "hand.npz", "-o", codes]))
    inputs = {"frame": frame, "codes": codes, "points": models / "pts.csv"}
    piped = None
    if via == "stdin":  # the input comes through standard input instead
        key = next(key for key in inputs if f"{{{key}}}" in command)
        piped = Path(inputs[key]).read_bytes()
        inputs[key] = "-"
    target = tmp_path / name
    before = users_file(target)
    args = [str(a).format(hand=models / "hand.npz", toy=models / "toy.npz", **inputs) for a in command]
    one_line_error(run([*args, "-o", target], input=piped), 2, str(target), "kpca did not write", "--force")
    assert target.read_bytes() == before
    ok(run([*args, "-o", target, "--force"], input=piped))
    assert target.read_bytes() != before


@pytest.mark.parametrize(
    "command, name",
    [
        (["encode", "{frame}", "-m", "{hand}"], "codes.txt"),
        (["encode", "{frame}", "-m", "{hand}"], "codes.csv"),
        (["encode", "{frame}", "-m", "{hand}"], "codes.npy"),
        (["denoise", "{points}", "-m", "{toy}"], "clean.csv"),
        (["denoise", "{points}", "-m", "{toy}"], "clean.npy"),
        (["decode", "{codes}", "-m", "{hand}"], "back.png"),
        (["decode", "{codes}", "-m", "{hand}"], "back.jpg"),
        (["decode", "{codes}", "-m", "{hand}"], "back.tif"),
        (["decode", "{codes}", "-m", "{hand}"], "back.webp"),
        (["decode", "{codes}", "-m", "{hand}"], "back.mp4"),
        (["decode", "{codes}", "-m", "{hand}"], "back.mov"),
        (["decode", "{codes}", "-m", "{hand}"], "back.avi"),
        (["decode", "{codes}", "-m", "{hand}"], "back.mkv"),
        (["decode", "{codes}", "-m", "{hand}"], "back.webm"),
        (["decode", "{codes}", "-m", "{hand}"], "back.gif"),
        (["compare", "{frame}", "{frame}"], "worst.png"),
    ],
)
def test_what_kpca_wrote_it_replaces(tmp_path, models, command, name):
    """Every output carries kpca's mark, so running the same command again replaces it without
    --force; a second run with other input gives other content."""
    codes = tmp_path / "codes.txt"
    outputs = []
    for frame in (HAND / "hand_003.png", HAND / "hand_040.png"):
        ok(run(["encode", frame, "-m", models / "hand.npz", "-o", codes, "-q"]))
        names = {"hand": models / "hand.npz", "toy": models / "toy.npz", "frame": frame, "codes": codes}
        names["points"] = models / "pts.csv"
        ok(run([str(a).format(**names) for a in command] + ["-o", tmp_path / name]))
        outputs.append((tmp_path / name).read_bytes())
    if command[0] in ("encode", "decode"):
        assert outputs[0] != outputs[1]


def test_kpcas_text_npy_and_image_outputs_read_as_before(tmp_path, models):
    """The marks change nothing a reader sees: numpy loads marked .npy codes, and they carry
    the model's fingerprint, so decode refuses them with another model as it refuses text."""
    ok(run(["encode", HAND / "hand_003.png", "-m", models / "hand.npz", "-o", tmp_path / "c.npy"]))
    ok(run(["encode", HAND / "hand_003.png", "-m", models / "hand.npz", "-o", tmp_path / "c.txt"]))
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), np.loadtxt(tmp_path / "c.txt", ndmin=2))
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy", mmap_mode="r"), np.load(tmp_path / "c.npy"))
    ok(run(["fit", HAND, "--frames", "1::5", "-k", "3", "-q", "-m", tmp_path / "other.npz"]))
    result = run(["decode", tmp_path / "c.npy", "-m", tmp_path / "other.npz", "-o", tmp_path / "x.png"])
    one_line_error(result, 1, "another model")
    assert not (tmp_path / "x.png").exists()


def frames_in(folder) -> dict[str, tuple[int, int]]:
    sizes = {}
    for path in sorted(folder.iterdir()):
        with Image.open(path) as image:
            sizes[path.name] = image.size
    return sizes


def test_a_folder_output_never_mixes_runs(tmp_path, models):
    """An earlier run's frames (here 6 of another size, as an interrupted decode leaves) are
    replaced by this run's, never mixed with them."""
    out = tmp_path / "out"
    ok(run(["extract", HAND, "--frames", "0:6", "--resize", "64x36", "-o", f"{out}/"]))
    assert len(frames_in(out)) == 6
    codes = tmp_path / "codes.txt"
    ok(run(["encode", HAND, "--frames", "10:13", "-m", models / "hand.npz", "-o", codes]))
    ok(run(["decode", codes, "-m", models / "hand.npz", "-o", f"{out}/"]))
    assert frames_in(out) == {f"{i:06d}.png": (320, 180) for i in range(3)}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging left


def test_a_folder_with_the_users_files_is_refused_and_force_keeps_them(tmp_path, models):
    out = tmp_path / "out"
    ok(run(["extract", HAND, "--frames", "0:4", "-o", f"{out}/"]))
    (out / "notes.txt").write_text("mine\n")
    one_line_error(run(["extract", HAND, "--frames", "4:6", "-o", f"{out}/"]), 2, "notes.txt", "--force")
    assert sorted(p.name for p in out.iterdir()) == [*(f"hand_{i:03d}.png" for i in range(4)), "notes.txt"]
    ok(run(["extract", HAND, "--frames", "4:6", "-o", f"{out}/", "--force"]))
    assert sorted(p.name for p in out.iterdir()) == ["hand_004.png", "hand_005.png", "notes.txt"]


def test_a_failure_while_writing_frames_leaves_nothing_of_this_run(tmp_path, monkeypatch):
    """An error after the first frames were written: no new folder, an existing one as it was."""
    from kpcacli.io.outputs import write_frames

    def frames(count):
        for index in range(count):
            if index == 3:
                raise KeyboardInterrupt
            yield np.full((4, 6), index, np.uint8)

    with pytest.raises(KeyboardInterrupt):
        write_frames(frames(5), f"{tmp_path / 'new'}/", count=5)
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    write_frames(frames(2), f"{tmp_path / 'old'}/", count=2)
    before = {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()}
    with pytest.raises(KeyboardInterrupt):
        write_frames(frames(5), f"{tmp_path / 'old'}/", count=5)
    assert {p.name: p.read_bytes() for p in (tmp_path / "old").iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]


@pytest.mark.parametrize("target", ["out.mkv", "out/"])
def test_frames_are_made_a_budget_ahead_of_the_writer(tmp_path, monkeypatch, target):
    """A video or a folder is written while the frames after are made, up to
    BUDGETS.queued_frames of them ahead (a whole batch of pre-images, not two frames), and the
    frames come out as they were made."""
    import kpcacli.io.outputs as outputs
    from kpcacli.utils.budgets import BUDGETS

    frames = [np.full((18, 32), value, dtype=np.uint8) for value in range(0, 250, 10)]
    depths = []
    original = outputs.run_ahead

    def recording(items, depth=2):
        depths.append(depth)
        return original(items, depth)

    monkeypatch.setattr(outputs, "run_ahead", recording)
    monkeypatch.setattr(BUDGETS, "queued_frames", 10 * frames[0].nbytes)
    outputs.write_frames(iter(frames), f"{tmp_path}/{target}", count=len(frames))
    assert depths == [10]
    if target.endswith("/"):
        written = [np.asarray(Image.open(path)) for path in sorted((tmp_path / "out").glob("*.png"))]
    else:
        from kpcacli.io.sources import iter_frames

        written = [frame.pixels for frame in iter_frames([str(tmp_path / target)])]
    np.testing.assert_array_equal(np.stack(written), np.stack(frames))
