"""Every figure a command prints is true for every input: compare's means with identical frames,
the same pixels in any container, training and held-out frames apart; sweep's star on the best
of what the table shows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import HAND, ok, run
from PIL import Image

from kpcacli.numerics.metrics import mean_psnr, psnr
from kpcacli.workflows.sweep import SweepResult, SweepRow


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """Six hand frames, and the same six with frame 0 untouched and the others changed."""
    folder = tmp_path_factory.mktemp("pairs")
    original, changed = folder / "original", folder / "changed"
    original.mkdir()
    changed.mkdir()
    rng = np.random.default_rng(5)
    for index, path in enumerate(sorted(HAND.glob("*.png"))[:6]):
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("L"))
        Image.fromarray(pixels).save(original / f"f_{index}.png")
        noisy = pixels if index == 0 else np.clip(pixels + rng.normal(0, 2 + index, pixels.shape), 0, 255)
        Image.fromarray(np.rint(noisy).astype(np.uint8)).save(changed / f"f_{index}.png")
    return original, changed


def grey(path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image, dtype=np.float64)


def test_one_identical_frame_leaves_the_means_finite(pairs):
    """ "mean PSNR inf dB (identical)" beside a worst of 40 dB was the bug: the mean is over the
    frames that differ, the PSNR of the mean MSE over all of them, and both are stated."""
    original, changed = pairs
    result = json.loads(ok(run(["compare", original, changed, "--json"])).stdout)
    psnrs = [frame["psnr"] for frame in result["per_frame"]]
    assert psnrs[0] is None and all(value is not None for value in psnrs[1:])
    assert result["identical_frames"] == 1 and result["identical"] is False
    assert result["mean_psnr"] == pytest.approx(np.mean(psnrs[1:]))
    mses = [np.mean((grey(original / f"f_{i}.png") - grey(changed / f"f_{i}.png")) ** 2) for i in range(6)]
    assert result["psnr_of_mean_mse"] == pytest.approx(10 * np.log10(255**2 / np.mean(mses)))
    assert set(result["conventions"]) == {"mean_psnr", "psnr_of_mean_mse", "channels"}
    text = ok(run(["compare", original, changed])).stdout
    assert "inf" not in text and "(1 identical)" in text and "mean over the 5 frames that differ" in text
    assert f"{result['mean_psnr']:6.2f} dB" in text and f"{result['psnr_of_mean_mse']:6.2f} dB" in text


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_identical_is_said_only_when_every_frame_is(pairs, via):
    original, changed = pairs
    if via == "stdin":
        same = run(["compare", original / "f_0.png", "-"], input=(changed / "f_0.png").read_bytes())
        other = run(["compare", original / "f_1.png", "-", "--json"], input=(changed / "f_1.png").read_bytes())
    else:
        same = run(["compare", original, original])
        other = run(["compare", original / "f_1.png", changed / "f_1.png", "--json"])
    assert "every one identical" in ok(same).stdout
    answer = json.loads(ok(other).stdout)
    assert answer["identical"] is False and answer["identical_frames"] == 0 and answer["mean_psnr"] > 20


@pytest.mark.parametrize("container", [".mkv", ".gif"])
def test_the_same_pixels_compare_identical_in_any_container(tmp_path, container):
    """RGB frames in a lossless video and in PNGs go through one grey conversion (Pillow's),
    so they compare as identical; FFmpeg's own gave 71.44 dB for .mkv. The colours are
    random, so every rounding of the two conversions is met."""
    rng = np.random.default_rng(11)
    (tmp_path / "png").mkdir()
    for index in range(3):
        colours = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
        Image.fromarray(colours).save(tmp_path / "png" / f"f_{index}.png")
    video = tmp_path / f"colour{container}"
    ok(run(["extract", tmp_path / "png", "--colour", "-o", video]))
    if container == ".gif":  # a GIF holds 256 colours a frame: compare with its own colours
        ok(run(["extract", video, "--colour", "-o", f"{tmp_path / 'gif_colours'}/"]))
    text = ok(run(["compare", video, tmp_path / ("gif_colours" if container == ".gif" else "png")])).stdout
    assert "every one identical" in text, text


@pytest.fixture(scope="module")
def even_model(tmp_path_factory):
    """A model of the hand's even frames and the decode of all 70 frames' codes."""
    folder = tmp_path_factory.mktemp("split")
    ok(run(["fit", HAND, "--frames", "::2", "-k", "8", "-q", "-m", folder / "even.npz"]))
    ok(run(["encode", HAND, "-m", folder / "even.npz", "-o", folder / "codes.npy", "-q"]))
    ok(run(["decode", folder / "codes.npy", "-m", folder / "even.npz", "-o", f"{folder / 'back'}/", "-q"]))
    return folder


def test_with_a_model_training_and_held_out_frames_are_apart(even_model):
    """A mean over training frames (decoded nearly exactly) and held-out ones says little about
    either: with -m they are summarised apart, each frame marked."""
    result = json.loads(ok(run(["compare", HAND, even_model / "back", "-m", even_model / "even.npz", "--json"])).stdout)
    assert result["training"]["frames"] == 35 and result["held_out"]["frames"] == 35
    assert [frame["training"] for frame in result["per_frame"]] == [index % 2 == 0 for index in range(70)]
    held = [frame["psnr"] for frame in result["per_frame"] if not frame["training"]]
    assert result["held_out"]["mean_psnr"] == pytest.approx(mean_psnr(np.array(held, dtype=float)))
    training_mean = result["training"]["mean_psnr"]
    assert training_mean is None or training_mean > result["held_out"]["mean_psnr"] + 3
    text = ok(run(["compare", HAND, even_model / "back", "-m", even_model / "even.npz"])).stdout
    assert "training frames      35 frames" in text and "held-out frames      35 frames" in text


def test_a_model_of_another_sequence_is_not_split_and_says_why(even_model):
    text = ok(
        run(["compare", HAND / "hand_003.png", even_model / "back" / "000003.png", "-m", even_model / "even.npz"])
    )
    assert "not told apart" in text.stdout and "70 frames" in text.stdout and "has 1" in text.stdout


def test_sweep_stars_the_best_by_the_measure_it_shows():
    """The lowest squared error is not the highest mean PSNR (a mean of logarithms): the star
    follows the PSNR the table shows, as it follows the distance for points."""
    rows = [
        SweepRow(beta=1.0, k=2, mse=10.0, mean_distance=3.0, psnr=33.1710, not_converged=0),
        SweepRow(beta=2.0, k=2, mse=11.0, mean_distance=2.0, psnr=33.1973, not_converged=0),
    ]
    images = SweepResult(rows, [1.0, 2.0], points=False, denoising=False)
    assert images.best is rows[1]
    assert "33.1973*" in images.format_table() and "33.1710*" not in images.format_table()
    points = SweepResult(rows, [1.0, 2.0], points=True, denoising=False)
    assert points.best is rows[1]
    rows[1].mean_distance = 4.0
    assert points.best is rows[0]


@pytest.mark.slow
def test_the_sweep_cli_stars_the_highest_psnr():
    result = json.loads(ok(run(["sweep", HAND, "--frames", "::4", "-k", "2", "-k", "4", "--json", "-q"])).stdout)
    assert result["best"]["psnr"] == max(row["psnr"] for row in result["rows"])


def test_mean_psnr_is_over_the_frames_that_differ():
    frames = np.zeros((2, 4, 4), np.uint8)
    assert psnr(frames[0], frames[1]) == np.inf
    assert mean_psnr([np.inf, 30.0, 40.0]) == 35.0
    assert mean_psnr([np.inf, np.inf]) == np.inf


def test_a_group_of_identical_frames_says_so_in_one_phrase(even_model, tmp_path):
    """With a model, each group's line says 'every one identical' rather than three infinities."""
    ok(run(["extract", HAND, "-o", f"{tmp_path / 'same'}/"]))
    text = ok(run(["compare", HAND, tmp_path / "same", "-m", even_model / "even.npz"])).stdout
    assert "training frames      35 frames, every one identical" in text
    assert "held-out frames      35 frames, every one identical" in text and "inf" not in text


@pytest.mark.parametrize("value", [0.96, 1.04, 0.999, 1.0, 0.5, 7.3, 0.0625, 1 / 1.04])
def test_a_ratio_never_reads_as_one_when_it_is_not(value):
    """The summary said "the model is 1/1 of the source" of a model 4% smaller than it."""
    from kpcacli.workflows.summary import ratio

    text = ratio(value)
    if text == "the size of":
        assert abs(value - 1) < 5e-4
        return
    number = float(text.split()[0].removeprefix("1/"))
    assert number != 1 and abs((number if value >= 1 else 1 / number) / value - 1) < 0.05, text
