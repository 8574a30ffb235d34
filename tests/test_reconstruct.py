"""Whole frames from part of them (FrameModel.reconstruct, encode with a mask): what the
completion gives back, its exactness and independence of batches, the quality it reaches on
the sample hand, the error estimate's ranking, and every refusal of bad input."""

from __future__ import annotations

import importlib.util
import io
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run
from PIL import Image

from kpcacli import FrameModel, InputError
from kpcacli.estimators.reconstruction import _cross_products, nearest_on_observed
from kpcacli.numerics.gram import frame_products
from kpcacli.numerics.hidden import HiddenValues
from kpcacli.utils.budgets import BUDGETS
from kpcacli.utils.errors import InputWarning, ParameterError


@pytest.fixture(scope="module")
def even_model(hand) -> FrameModel:
    """Gaussian, k = 8, fitted on the hand's even frames (the odd ones are held out)."""
    return FrameModel(n_components=8).fit(hand[::2])


def occluded(shape) -> np.ndarray:
    """True where observed: a block over the hand's middle hidden (19% of the frame)."""
    observed = np.ones(shape, dtype=bool)
    observed[40:130, 100:220] = False
    return observed


def hidden_rms(frames, truth, observed) -> np.ndarray:
    """Each frame's root-mean-square error at its hidden pixels."""
    errors = np.asarray(frames, dtype=np.float64) - truth
    return np.sqrt(np.mean(errors[:, ~observed] ** 2, axis=1))


def test_a_fully_observed_frame_keeps_its_pixels_and_gets_its_codes(even_model, hand):
    frames = hand[1:6:2]
    result = even_model.reconstruct(frames, np.ones(frames.shape[1:], dtype=bool))
    assert np.array_equal(result.frames, frames)
    assert np.array_equal(result.codes, even_model.encode(frames))  # integer frames: exact
    decoded = even_model.decode(result.codes).astype(np.float64)
    expected = np.sqrt(np.mean((decoded - frames).reshape(3, -1) ** 2, axis=1))
    np.testing.assert_allclose(result.estimate, expected, rtol=1e-12)
    assert result.rounds.tolist() == [1, 1, 1] and result.converged.all()


def test_observed_pixels_are_kept_unless_replaced(even_model, hand):
    observed = occluded(hand.shape[1:])
    kept = even_model.reconstruct(hand[7], observed)
    assert kept.frames.dtype == np.uint8 and kept.frames.shape == (1, *hand.shape[1:])
    assert np.array_equal(kept.frames[0][observed], hand[7][observed])
    replaced = even_model.reconstruct(hand[7], observed, replace=True)
    assert np.array_equal(replaced.frames[0][~observed], kept.frames[0][~observed])
    assert np.array_equal(replaced.frames, even_model.decode(kept.codes))  # the pre-image everywhere


@pytest.mark.slow
def test_hidden_pixels_beat_the_nearest_training_frame(even_model, hand):
    """Held-out frames under a block over the hand: the completion's hidden pixels at least a
    quarter closer (root-mean-square) than the model's decode of the training frame nearest on
    the observed pixels (measured: 1.45 against 4.90 grey levels)."""
    held, train = hand[1::2], hand[::2]
    observed = occluded(hand.shape[1:])
    result = even_model.reconstruct(held, observed)
    gaps = ((train[:, observed].astype(np.float64)[None] - held[:, observed][:, None]) ** 2).sum(axis=2)
    nearest = even_model.decode(even_model.encode(train[np.argmin(gaps, axis=1)]))
    assert hidden_rms(result.frames, held, observed).mean() < 0.75 * hidden_rms(nearest, held, observed).mean()


def test_a_training_frame_seen_in_part_comes_back_whole_and_exact(even_model, hand):
    """The nearest training frame is a candidate: a training frame under a block agrees with
    itself on every observed pixel, and is given back as it is, with its own codes."""
    observed = occluded(hand.shape[1:])
    result = even_model.reconstruct(hand[[4, 30]], observed)
    assert np.array_equal(result.frames, hand[[4, 30]])
    assert np.array_equal(result.codes, even_model.state_.codes[[2, 15]])
    assert result.kept.tolist() == ["nearest", "nearest"] and result.estimate.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("kernel", "center"), [("rbf", False), ("rbf", True), ("poly", False), ("sigmoid", True)])
@pytest.mark.slow
def test_the_completion_never_agrees_worse_with_what_is_seen_than_the_nearest_frame(hand, kernel, center):
    """Whatever the kernel, each held-out frame's completion is at most as far from its
    observed pixels as the training frame nearest there (exact sums of squared integers), its
    estimate is the distance of the candidate it kept, and that candidate is what `replace`
    gives back."""
    model = FrameModel(kernel=kernel, n_components=6, center=center).fit(hand[::2])
    held = hand[1::8]
    rng = np.random.default_rng(2)
    masks = rng.random((len(held), *hand.shape[1:])) < 0.7
    masks[::2] = occluded(hand.shape[1:])
    result = model.reconstruct(held, masks, replace=True)
    nearest = hand[::2][nearest_on_observed(model.state_, held, masks)].astype(np.int64)
    for frame, observed, whole, lookup, estimate in zip(held, masks, result.frames, nearest, result.estimate):
        kept_error = np.sum((whole[observed].astype(np.int64) - frame[observed]) ** 2)
        assert kept_error <= np.sum((lookup[observed] - frame[observed]) ** 2)
        assert estimate == np.sqrt(kept_error / observed.sum())
    assert set(result.kept.tolist()) <= {"nearest", "between"} | {
        f"round {r}" for r in range(1, int(result.rounds.max()) + 1)
    }


@pytest.mark.slow
def test_frames_from_sparse_readings_lie_between_their_two_nearest_training_frames(even_model, hand):
    """From 200 sensors' readings the rounds cannot leave the nearest training frame; the
    model's frame between the two nearest, placed by the readings, is kept and is at least
    twice as close as the nearest frame over the whole frame (measured: 0.85 against 2.77 grey
    levels, root-mean-square, on the 35 held-out frames)."""
    held = hand[1::2]
    observed = np.zeros(held[0].size, dtype=bool)
    observed[even_model.sensors(200)] = True
    observed = observed.reshape(held[0].shape)
    result = even_model.reconstruct(held, observed)
    nearest = hand[::2][nearest_on_observed(even_model.state_, held, observed)]
    whole = np.zeros(held[0].shape, dtype=bool)  # scored everywhere, the readings too
    assert hidden_rms(result.frames, held, whole).mean() < 0.5 * hidden_rms(nearest, held, whole).mean()
    assert np.mean(result.kept == "between") > 0.5


@pytest.mark.slow
def test_the_error_estimate_ranks_frames_by_their_true_error(even_model, hand):
    """Spearman's rank correlation of the estimate with the hidden pixels' true error over the
    35 held-out frames: at least 0.4 (measured 0.46; 0.71 when the rounds alone filled the
    frames: the frame between the two nearest, kept on most of them, agrees closely with the
    observed pixels wherever the hand moves little, docs/reconstruct.md)."""
    from scipy.stats import spearmanr

    held = hand[1::2]
    observed = occluded(hand.shape[1:])
    result = even_model.reconstruct(held, observed)
    assert spearmanr(result.estimate, hidden_rms(result.frames, held, observed)).statistic >= 0.4


def test_a_frame_completes_alike_alone_and_in_any_batch(even_model, hand):
    """Integer frames: every product exact, so a frame's completion does not depend on the
    frames beside it or their masks (one mask each, or one shared)."""
    frames = hand[[3, 11, 29]]
    rng = np.random.default_rng(0)
    masks = rng.random((3, *hand.shape[1:])) < 0.6  # scattered: read as whole rows
    masks[1] = occluded(hand.shape[1:])  # a block: read as rectangles
    together = even_model.reconstruct(frames, masks)
    for index in range(3):
        alone = even_model.reconstruct(frames[index], masks[index])
        assert np.array_equal(alone.frames[0], together.frames[index])
        assert np.array_equal(alone.codes[0], together.codes[index])
    shared = even_model.reconstruct(frames, masks[1])
    assert np.array_equal(shared.frames[1], together.frames[1])


def test_products_kept_through_the_rounds_are_the_encoders(even_model, hand):
    """The completion's products with the training frames, built from the observed part and
    the hidden values' changes, are the encoder's own, bit for bit (integer frames)."""
    state = even_model.state_
    frame = hand[9].reshape(1, -1).astype(np.float64)
    dots = frame_products(state.frames, frame.T).T
    ours = _cross_products(state, frame, dots)
    theirs = state.linear_gram.cross(state.frames, frame)
    assert np.array_equal(ours.shifted, theirs.shifted)
    assert np.array_equal(ours.norms, theirs.norms) and np.array_equal(ours.origin_dots, theirs.origin_dots)


def test_nan_marks_the_hidden_values_and_encode_takes_a_mask(even_model, hand):
    observed = occluded(hand.shape[1:])
    frame = hand[13].astype(np.float64)
    holes = np.where(observed, frame, np.nan)
    model = FrameModel(n_components=8).fit(hand[::2].astype(np.float64))
    by_nan = model.reconstruct(holes)
    by_mask = model.reconstruct(frame, observed)
    assert np.array_equal(by_nan.frames, by_mask.frames)
    assert np.array_equal(even_model.encode(hand[13], mask=observed), even_model.reconstruct(hand[13], observed).codes)


@pytest.mark.parametrize("kind", ["colour", "points"])
def test_colour_frames_and_points_complete(kind, hand):
    rng = np.random.default_rng(1)
    if kind == "colour":
        frames = np.stack([hand[::4], np.roll(hand[::4], 5, axis=2), 255 - hand[::4]], axis=-1)
        model = FrameModel(n_components=6).fit(frames)
        observed = occluded(hand.shape[1:])  # height x width: every channel
        result = model.reconstruct(frames[3], observed)
        assert np.array_equal(result.frames[0][observed], frames[3][observed])
        assert result.frames.shape == (1, *frames.shape[1:])
        return
    angle = rng.uniform(0, 2 * np.pi, 80)
    points = np.c_[np.cos(angle), np.sin(angle), np.cos(angle) * np.sin(angle)]
    model = FrameModel(n_components=2, beta=2.0).fit(points)
    truth = np.c_[np.cos([0.3, 2.0]), np.sin([0.3, 2.0]), np.cos([0.3, 2.0]) * np.sin([0.3, 2.0])]
    seen = np.array([True, True, False])
    result = model.reconstruct(np.where(seen, truth, np.nan))
    assert result.frames.shape == (2, 3)
    assert np.abs(result.frames[:, 2] - truth[:, 2]).max() < 0.15  # the third feature from the other two


@pytest.mark.parametrize("budget", [2**10, 2**20])
def test_hidden_values_read_as_rectangles_or_rows_give_the_gathered_products(budget, monkeypatch):
    monkeypatch.setattr(BUDGETS, "tile", budget)
    rng = np.random.default_rng(2)
    frames = rng.integers(0, 256, (11, 40 * 60 * 3), dtype=np.uint8)
    blocks = np.zeros((40, 60, 3), dtype=bool)
    blocks[5:30, 10:50] = True
    blocks[20:38, 40:58] = True
    for kind, hidden in (("blocks", blocks.ravel()), ("scattered", rng.random(40 * 60 * 3) < 0.7)):
        values = HiddenValues.of(hidden, 60 * 3)
        assert np.array_equal(np.sort(values.indices), np.flatnonzero(hidden))
        vectors = rng.integers(-255, 256, (values.count, 2)).astype(np.float64)
        gathered = frames[:, values.indices].astype(np.float64)
        assert np.array_equal(values.products(frames, vectors), gathered @ vectors)
        assert np.array_equal(values.squared_sums(frames), np.sum(gathered**2, axis=1))
        read_once = values.gathered(frames)  # the rectangles' values read once, for every round
        assert (read_once is None) == (kind == "scattered")  # scattered values: one pass over whole rows
        if read_once is not None:
            assert np.array_equal(read_once, frames[:, values.indices])
            assert np.array_equal(values.products(frames, vectors, read_once), gathered @ vectors)
            assert np.array_equal(values.squared_sums(frames, read_once), np.sum(gathered**2, axis=1))
            monkeypatch.setattr(BUDGETS, "hidden_values", read_once.nbytes - 1)
            assert values.gathered(frames) is None  # over its budget: the rectangles are read each round
            monkeypatch.setattr(BUDGETS, "hidden_values", 2**28)


def test_bad_masks_are_refused_in_one_line(even_model, hand):
    frame = hand[5]
    with pytest.raises(InputError, match="the mask is 100x80 pixels; the model's frames are 320x180 pixels"):
        even_model.reconstruct(frame, np.ones((80, 100), dtype=bool))
    with pytest.raises(InputError, match="frame 1 has no observed value"):
        masks = np.ones((2, *frame.shape), dtype=bool)
        masks[1] = False
        even_model.reconstruct(hand[:2], masks)
    with pytest.raises(InputError, match="3 masks for 2 frames"):
        even_model.reconstruct(hand[:2], np.ones((3, *frame.shape), dtype=bool))
    with pytest.raises(InputError, match="the mask contains NaN"):
        even_model.reconstruct(frame, np.full(frame.shape, np.nan))
    holes = frame.astype(np.float64)
    holes[0, 0] = np.nan
    model = FrameModel(n_components=8).fit(hand[::2].astype(np.float64))
    with pytest.raises(InputError, match="frame 0 is NaN at a value its mask says is observed"):
        model.reconstruct(holes, np.ones(frame.shape, dtype=bool))
    with pytest.raises(ParameterError, match="rounds must be an int in the range"):
        even_model.reconstruct(frame, occluded(frame.shape), rounds=0)


def test_fewer_observed_values_than_k_warn_that_the_codes_are_underdetermined(even_model, hand):
    observed = np.zeros(hand.shape[1:], dtype=bool)
    observed[90, 100:105] = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = even_model.reconstruct(hand[5], observed)
    assert [str(w.message) for w in caught if issubclass(w.category, InputWarning)] == [
        "frame 0 has 5 observed values, fewer than the model's k = 8: its codes are underdetermined, and the "
        "hidden values only one of many fits"
    ]
    assert np.array_equal(result.frames[0][observed], hand[5][observed])


# -- kpca reconstruct ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def even_model_file(tmp_path_factory) -> Path:
    """kpca fit of the hand's even frames, k = 8."""
    path = tmp_path_factory.mktemp("partial") / "even.npz"
    ok(run(["fit", HAND, "--frames", "::2", "-m", path, "-k", "8", "-q"]))
    return path


@pytest.fixture(scope="module")
def mask_file(tmp_path_factory, hand) -> Path:
    path = tmp_path_factory.mktemp("mask") / "mask.png"
    Image.fromarray(occluded(hand.shape[1:]).astype(np.uint8) * 255).save(path)
    return path


def test_reconstruct_completes_frames_under_a_mask_and_reports_each(even_model_file, mask_file, hand, tmp_path):
    out = tmp_path / "whole"
    result = ok(run(["reconstruct", HAND, "--frames", "1:8:2", "--mask", mask_file, "-m", even_model_file,
                     "-o", f"{out}/", "--json", "-q"]))  # fmt: skip
    report = json.loads(result.stdout)
    assert [Path(entry["name"]).name for entry in report["frames"]] == [f"hand_{i:03d}.png" for i in (1, 3, 5, 7)]
    assert sorted(path.name for path in out.iterdir()) == [f"hand_{i:03d}.png" for i in (1, 3, 5, 7)]
    observed = occluded(hand.shape[1:])
    library = FrameModel.load(even_model_file).reconstruct(hand[1:8:2], observed)
    for index, path in zip(range(4), sorted(out.iterdir())):
        assert np.array_equal(np.asarray(Image.open(path)), library.frames[index])
    assert [entry["estimate"] for entry in report["frames"]] == library.estimate.tolist()
    assert all(entry["hidden"] == pytest.approx(1 - observed.mean()) for entry in report["frames"])
    assert "4 frames, 18.8% of the values hidden" in result.stderr


def test_reconstruct_says_which_frames_the_nearest_training_frame_filled(even_model_file, mask_file, hand, tmp_path):
    """Frames 4 and 6 are training frames: each agrees exactly with itself where observed, so
    it fills them, and the JSON and a note say so."""
    out = tmp_path / "whole"
    result = ok(run(["reconstruct", HAND, "--frames", "3:7", "--mask", mask_file, "-m", even_model_file,
                     "-o", f"{out}/", "--json", "-q"]))  # fmt: skip
    report = json.loads(result.stdout)
    assert [entry["kept"] == "nearest" for entry in report["frames"]] == [False, True, False, True]
    assert [entry["estimate"] for entry in report["frames"]][1::2] == [0.0, 0.0]
    assert "2 of 4 frames filled from the training frame nearest on the observed values" in result.stderr
    assert np.array_equal(np.asarray(Image.open(out / "hand_004.png")), hand[4])


def test_reconstruct_takes_a_mask_a_frame_and_standard_input(even_model_file, hand, tmp_path):
    masks = tmp_path / "masks"
    masks.mkdir()
    rng = np.random.default_rng(3)
    for index in range(3):
        Image.fromarray((rng.random(hand.shape[1:]) < 0.5).astype(np.uint8) * 255).save(masks / f"{index}.png")
    ok(
        run(
            [
                "reconstruct",
                HAND,
                "--frames",
                "10:13",
                "--mask",
                masks,
                "-m",
                even_model_file,
                "-o",
                f"{tmp_path}/out/",
                "-q",
            ]
        )
    )
    frame = io.BytesIO()
    Image.fromarray(hand[11]).save(frame, format="PNG")
    piped = ok(run(["reconstruct", "-", "--mask", masks / "1.png", "-m", even_model_file, "-o", "-", "-q"],
                   input=frame.getvalue()))  # fmt: skip
    assert np.array_equal(
        np.asarray(Image.open(io.BytesIO(piped.stdout_bytes))),
        np.asarray(Image.open(tmp_path / "out" / "hand_011.png")),
    )


def test_reconstruct_from_readings_at_sensors_files_and_standard_input(even_model_file, hand, tmp_path):
    sensors = tmp_path / "sensors.csv"
    rng = np.random.default_rng(4)
    indices = rng.choice(hand[0].size, 60, replace=False)
    sensors.write_text("index,row,col\n" + "".join(f"{i},{i // 320},{i % 320}\n" for i in indices))
    readings = hand[[1, 33]].reshape(2, -1)[:, indices]
    np.savetxt(tmp_path / "readings.csv", readings, fmt="%d", delimiter=",")
    ok(
        run(
            [
                "reconstruct",
                tmp_path / "readings.csv",
                "--sensors",
                sensors,
                "-m",
                even_model_file,
                "-o",
                f"{tmp_path}/out/",
                "-q",
            ]
        )
    )
    written = [np.asarray(Image.open(tmp_path / "out" / name)) for name in ("000000.png", "000001.png")]
    for frame, truth, values in zip(written, hand[[1, 33]], readings):
        assert np.array_equal(frame.ravel()[indices], values)  # the sensors' values kept
        assert np.sqrt(np.mean((frame.astype(float) - truth) ** 2)) < 4.0  # measured 1.8: 60 of 57,600 pixels
    rows_only = tmp_path / "by-row-col.csv"
    rows_only.write_text("row,col\n" + "".join(f"{i // 320},{i % 320}\n" for i in indices))
    piped = ok(run(["reconstruct", "-", "--sensors", rows_only, "-m", even_model_file, "-o", "-", "-q"],
                   input=" ".join(str(v) for v in readings[0]) + "\n"))  # fmt: skip
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(piped.stdout_bytes))), written[0])


def test_reconstruct_on_a_point_model_writes_rows(tmp_path):
    rng = np.random.default_rng(5)
    angle = rng.uniform(0, 2 * np.pi, 80)
    points = np.c_[np.cos(angle), np.sin(angle), np.cos(angle) * np.sin(angle)]
    np.savetxt(tmp_path / "train.csv", points, delimiter=",")
    ok(run(["fit", tmp_path / "train.csv", "-m", tmp_path / "p.npz", "-k", "2", "--beta", "2", "-q"]))
    (tmp_path / "s.csv").write_text("index\n0\n1\n")
    np.savetxt(tmp_path / "r.csv", points[:4, :2], delimiter=",")
    ok(
        run(
            [
                "reconstruct",
                tmp_path / "r.csv",
                "--sensors",
                tmp_path / "s.csv",
                "-m",
                tmp_path / "p.npz",
                "-o",
                tmp_path / "out.csv",
                "-q",
            ]
        )
    )
    rows = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    assert rows.shape == (4, 3) and np.allclose(rows[:, :2], points[:4, :2])
    assert np.abs(rows[:, 2] - points[:4, 2]).max() < 0.15


def test_bad_input_to_reconstruct_is_one_line_and_writes_nothing(even_model_file, mask_file, hand, tmp_path):
    out = tmp_path / "out"
    model = even_model_file
    small = tmp_path / "small.png"
    Image.fromarray(np.full((80, 100), 255, np.uint8)).save(small)
    blank = tmp_path / "blank.png"
    Image.fromarray(np.zeros(hand.shape[1:], np.uint8)).save(blank)
    masks = tmp_path / "masks"
    masks.mkdir()
    for index in range(2):
        Image.fromarray(occluded(hand.shape[1:]).astype(np.uint8) * 255).save(masks / f"{index}.png")
    sensors = tmp_path / "s.csv"
    sensors.write_text("index\n5\n900\n")
    readings = tmp_path / "r.csv"
    readings.write_text("1,2\n3,4\n")
    cases = [
        (["--mask", small], HAND, 1, "the mask is 100x80 pixels; the model's frames are 320x180 pixels"),
        (["--mask", blank], HAND, 1, "frame 0 has no observed value"),
        (["--mask", masks], HAND, 1, "fewer masks than frames"),
        (["--mask", masks, "--frames", ":1"], HAND, 1, "more masks than frames"),
        (["--sensors", tmp_path / "outside.csv"], readings, 1, "index 57600, outside the model's frames"),
        (["--sensors", tmp_path / "twice.csv"], readings, 1, "index 5 is listed twice"),
        (["--sensors", tmp_path / "nameless.csv"], readings, 1, "has no column 'row'"),
        (["--sensors", sensors], tmp_path / "three.csv", 1, "the readings have 3 columns but there are 2 sensors"),
        (["--sensors", sensors], tmp_path / "nan.csv", 1, "NaN or infinite value in row 1"),
        ([], HAND, 2, "give --mask (frames seen in part) or --sensors"),
        (["--mask", mask_file, "--sensors", sensors], HAND, 2, "give --mask (frames seen in part) or --sensors"),
        (["--mask", mask_file, "--rounds", "0"], HAND, 2, "--rounds must be an int in the range [1, inf)"),
    ]
    (tmp_path / "outside.csv").write_text("index\n5\n57600\n")
    (tmp_path / "twice.csv").write_text("index\n5\n5\n")
    (tmp_path / "nameless.csv").write_text("5\n6\n")
    (tmp_path / "three.csv").write_text("1,2,3\n")
    (tmp_path / "nan.csv").write_text("1,2\nnan,4\n")
    for extra, source, status, message in cases:
        one_line_error(run(["reconstruct", source, "-m", model, "-o", f"{out}/", "-q", *extra]), status, message)
        assert not out.exists(), (extra, message)
    one_line_error(
        run(["reconstruct", HAND, "--mask", mask_file, "-m", model, "--json"]), 2, "--json prints to standard output"
    )
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    Image.fromarray(hand[1]).save(mixed / "a.png")
    Image.fromarray(hand[1][:, :300]).save(mixed / "b.png")
    one_line_error(run(["reconstruct", mixed, "--mask", mask_file, "-m", model, "-o", f"{out}/"]), 1, "300x180 pixels")
    Image.fromarray(np.full((80, 100), 255, np.uint8)).save(masks / "1.png")  # the second mask of another size
    result = run(["reconstruct", HAND, "--frames", ":2", "--mask", masks, "-m", model, "-o", f"{out}/"])
    one_line_error(result, 1, "1.png", "the mask is 100x80 pixels")
    assert not out.exists()


def test_too_few_observed_values_warn_in_one_line(even_model_file, hand, tmp_path):
    sensors = tmp_path / "s.csv"
    sensors.write_text("index\n100\n5000\n9000\n")
    result = ok(
        run(
            ["reconstruct", "-", "--sensors", sensors, "-m", even_model_file, "-o", tmp_path / "f.png", "-q"],
            input="10 20 30\n",
        )
    )
    warnings_printed = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings_printed == [
        "Warning: frame 0 has 3 observed values, fewer than the model's k = 8: its codes are underdetermined, and "
        "the hidden values only one of many fits"
    ]


def test_a_lossy_mask_is_warned_of_with_its_count_or_cut_at_a_threshold(even_model_file, mask_file, hand, tmp_path):
    """A JPEG mask's grey edges were taken as observed without a word (28.2% hidden where 31.2%
    was drawn): now a warning counts them, and --mask-threshold T hides every value below T."""
    lossy = tmp_path / "mask.jpg"
    Image.open(mask_file).save(lossy, quality=75)
    values = np.asarray(Image.open(lossy).convert("L"))
    grey = int(np.count_nonzero((values != 0) & (values != values.max())))
    assert grey > 100
    command = ["reconstruct", HAND, "--frames", "1", "-m", even_model_file, "-q", "--json"]
    warned = ok(run([*command, "--mask", lossy, "-o", tmp_path / "a.png"]))
    assert [line for line in warned.stderr.splitlines() if line.startswith("Warning:")] == [
        f"Warning: mask '{lossy}' has {grey:,} values between 0 and its largest, {values.max()} (a lossy image's "
        "edges?): they count as observed; --mask-threshold T counts the values below T as hidden"
    ]
    cut = ok(run([*command, "--mask", lossy, "--mask-threshold", "128", "-o", tmp_path / "b.png"]))
    assert "Warning" not in cut.stderr
    hidden = json.loads(cut.stdout)["frames"][0]["hidden"]
    assert hidden == pytest.approx(np.mean(values < 128)) and hidden > json.loads(warned.stdout)["frames"][0]["hidden"]
    exact = ok(run([*command, "--mask", mask_file, "-o", tmp_path / "c.png"]))
    assert "Warning" not in exact.stderr  # 0 and 255 alone
    refused = run([*command, "--mask", lossy, "--mask-threshold", "0", "-o", tmp_path / "d.png"])
    one_line_error(refused, 2, "--mask-threshold must be a float in the range (0.0, inf). Got 0.0 instead.")
    assert not (tmp_path / "d.png").exists()


@pytest.mark.slow
def test_the_readmes_reconstruct_example_runs_as_written(tmp_path, monkeypatch, hand):
    """The README's two lines, from a folder beside the sample data, with hand.npz fitted on
    the even frames as its walkthrough's: every odd frame completed under the mask."""
    import shlex
    import subprocess
    import sys

    from helpers import ROOT

    readme = (ROOT / "README.md").read_text().split("**Whole frames from part of them**", 1)[1]
    lines = readme.split("```\n", 2)[1].strip().splitlines()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    ok(run(["fit", "sample_data/hand", "--frames", "::2", "-m", "hand.npz", "-k", "8", "-q"]))
    subprocess.run([sys.executable, *shlex.split(lines[0])[1:]], check=True)
    command, _, target = lines[1].partition(" > ")
    report = json.loads(ok(run(shlex.split(command)[1:])).stdout)
    assert target == "whole.json" and len(report["frames"]) == 35 == len(list((tmp_path / "whole").iterdir()))
    observed = np.asarray(Image.open("mask.png")) > 0
    assert (~observed).sum() == 120 * 90
    for entry in report["frames"]:
        name = Path(entry["name"]).name
        truth = hand[int(name[5:8])]
        assert np.array_equal(np.asarray(Image.open(tmp_path / "whole" / name))[observed], truth[observed])


# -- kpca sensors ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_sensors_are_the_pivots_of_qr_on_the_centred_training_frames(dtype):
    """The streamed pivoting picks LAPACK's pivots (geqp3 on X − 1 sᵀ) while the frames'
    directions last (exact arithmetic for 8-bit frames; a margin between the pivots' residuals
    on these random frames for float ones), then the remaining values by variance, none twice."""
    import scipy.linalg

    from kpcacli.numerics.pivots import pivoted_columns

    rng = np.random.default_rng(7)
    frames = rng.integers(0, 256, (12, 300)).astype(dtype)
    origin = np.rint(frames.mean(axis=0))
    _, _, pivots = scipy.linalg.qr(frames - origin, pivoting=True, mode="economic")
    ours = pivoted_columns(frames, origin, 40)
    assert np.array_equal(ours[:12], pivots[:12])
    assert len(set(ours.tolist())) == 40


@pytest.mark.slow
def test_kpca_sensors_writes_a_file_reconstruct_reads(even_model_file, hand, tmp_path):
    sensors = tmp_path / "sensors.csv"
    ok(run(["sensors", "-m", even_model_file, "-n", "60", "-o", sensors]))
    lines = sensors.read_text().splitlines()
    assert lines[0] == "index,row,col" and len(lines) == 61
    indices = np.array([int(line.split(",")[0]) for line in lines[1:]])
    rows_cols = np.array([[int(v) for v in line.split(",")[1:]] for line in lines[1:]])
    assert np.array_equal(indices, rows_cols[:, 0] * 320 + rows_cols[:, 1])
    assert np.array_equal(indices, FrameModel.load(even_model_file).sensors(60))
    printed = ok(run(["sensors", "-m", even_model_file, "-n", "60"])).stdout
    assert printed == sensors.read_text()
    readings = hand[1::2].reshape(35, -1)[:, indices]
    np.savetxt(tmp_path / "r.txt", readings, fmt="%d")
    ok(
        run(
            [
                "reconstruct",
                tmp_path / "r.txt",
                "--sensors",
                sensors,
                "-m",
                even_model_file,
                "-o",
                f"{tmp_path}/out/",
                "-q",
            ]
        )
    )
    whole = np.stack([np.asarray(Image.open(path)) for path in sorted((tmp_path / "out").iterdir())])
    assert np.sqrt(np.mean((whole.astype(float) - hand[1::2]) ** 2)) < 5.0  # measured 2.9 from 60 of 57,600
    ok(run(["sensors", "-m", even_model_file, "-n", "8", "-o", sensors]))  # kpca wrote it: replaced
    stranger = tmp_path / "notes.txt"
    stranger.write_text("mine\n")
    one_line_error(
        run(["sensors", "-m", even_model_file, "-n", "8", "-o", stranger]),
        2,
        f"'{stranger}' is a text file that kpca did not write; -o would replace it with a sensor file",
    )
    for text in ("index,row,col\n5,0,5\n650,2,10\n", "index,row,col\n5,0,5\n650,2,11\n", "index\n3\n1\n"):
        stranger.write_text(text)  # the second's index is no row and column of one width: not kpca's
        result = run(["sensors", "-m", even_model_file, "-n", "8", "-o", stranger])
        assert result.exit_code == (2 if "11" in text else 0), text
    one_line_error(run(["sensors", "-m", even_model_file, "-n", "0"]), 2, "-n must be an int in the range [1, 57600]")
    one_line_error(
        run(["sensors", "-m", even_model_file, "-n", "57601"]), 2, "-n must be an int in the range [1, 57600]"
    )


def test_a_sensor_file_opens_as_written_in_pandas_and_numpy(even_model_file):
    """The first line was '# kpca 0.1.0: sensors, one a row', which pandas read as two columns
    of comment and numpy's genfromtxt(names=True) refused: now the first line names the
    columns."""
    printed = ok(run(["sensors", "-m", even_model_file, "-n", "12"])).stdout
    indices = FrameModel.load(even_model_file).sensors(12)
    table = np.genfromtxt(io.StringIO(printed), names=True, delimiter=",", dtype=np.int64)
    assert table.dtype.names == ("index", "row", "col") and np.array_equal(table["index"], indices)
    assert np.array_equal(table["row"] * 320 + table["col"], indices)
    pandas = pytest.importorskip("pandas")
    frame = pandas.read_csv(io.StringIO(printed))
    assert list(frame.columns) == ["index", "row", "col"] and frame["index"].tolist() == indices.tolist()


def test_colour_sensors_name_their_channel_and_read_back(hand, tmp_path):
    from kpcacli.io.sensors import read_sensors, write_sensors

    frames = np.stack([hand[::6], np.roll(hand[::6], 3, axis=1), 255 - hand[::6]], axis=-1)
    model = FrameModel(n_components=4).fit(frames)
    indices = model.sensors(20)
    write_sensors(tmp_path / "s.csv", indices, frames.shape[1:])
    assert (tmp_path / "s.csv").read_text().splitlines()[0] == "index,row,col,channel"
    from kpcacli.io.ownership import written_kind

    assert written_kind(tmp_path / "s.csv") == "sensors"
    assert np.array_equal(read_sensors(str(tmp_path / "s.csv"), frames.shape[1:]), indices)
    by_hand = tmp_path / "by-hand.csv"
    by_hand.write_text("row,col,channel\n" + "".join(f"{i // 960},{i // 3 % 320},{i % 3}\n" for i in indices))
    assert np.array_equal(read_sensors(str(by_hand), frames.shape[1:]), indices)


# -- kpca eval --mask-fraction -------------------------------------------------------------------
@pytest.mark.slow
def test_eval_masks_held_out_frames_and_scores_the_hidden_pixels(tmp_path):
    """kpca eval --mask-fraction: a quarter of each held-out hand hidden in blocks; the
    completion beats the nearest training frame and both inpaintings on the hidden pixels by
    margins far beyond rounding (measured: 50.7, 40.2, 24.0 and 24.9 dB), its table is the
    library's, and the report holds the two pictures and the estimate's plot."""
    from kpcacli.workflows.masking import block_masks

    result = ok(run(["eval", HAND, "-k", "8", "--mask-fraction", "0.25", "--json", "-q", "--report", tmp_path / "r"]))
    report = json.loads(result.stdout)
    means = {row["method"]: row["mean_psnr"] for row in report["results"]}
    assert list(means)[:3] == ["kpca reconstruct", "nearest frame", "OpenCV Telea"]
    assert means["kpca reconstruct"] > means["nearest frame"] + 5 > means["OpenCV Telea"] + 10
    if importlib.util.find_spec("skimage") is not None:  # the bench extra
        assert means["kpca reconstruct"] > means["scikit-image biharmonic"] + 15
    else:
        assert "scikit-image biharmonic" not in means and "scikit-image biharmonic is left out" in result.stderr
    assert report["held_out"] == 35 and report["hidden"] == 0.25 and len(report["estimate"]) == 35
    assert sorted(path.name for path in (tmp_path / "r").iterdir()) == [
        "completion_median.png",
        "completion_worst.png",
        "estimate.png",
    ]
    masks = block_masks((180, 320), 35, 0.25)
    assert np.all((~masks).mean(axis=(1, 2)) >= 0.25)
    assert np.array_equal(masks, block_masks((180, 320), 35, 0.25))  # seeded: the same on every run


@pytest.mark.slow
def test_eval_mask_fraction_takes_solvers_and_points(tmp_path):
    result = ok(run(["eval", HAND, "--frames", "::2", "-k", "6", "--mask-fraction", "0.4", "--solver", "log",
                     "--solver", "nearest", "-q"]))  # fmt: skip
    assert "kpca reconstruct (log)" in result.stdout and "kpca reconstruct (nearest)" in result.stdout
    rng = np.random.default_rng(8)
    angle = rng.uniform(0, 2 * np.pi, 60)
    np.savetxt(tmp_path / "p.csv", np.c_[np.cos(angle), np.sin(angle), np.cos(angle) * np.sin(angle)], delimiter=",")
    points = json.loads(ok(run(["eval", tmp_path / "p.csv", "-k", "2", "--beta", "2", "--mask-fraction", "0.3",
                                "--json", "-q"])).stdout)  # fmt: skip
    assert [row["method"] for row in points["results"]] == ["kpca reconstruct", "nearest frame"]
    assert all(len(row["distance"]) == 30 for row in points["results"])


@pytest.mark.parametrize("fraction", ["0", "1", "-0.2", "nan"])
def test_eval_refuses_a_mask_fraction_outside_zero_and_one(fraction):
    one_line_error(run(["eval", HAND, "-k", "3", "--mask-fraction", fraction]), 2, "--mask-fraction must be")


def test_eval_without_scikit_image_says_its_reference_is_left_out(monkeypatch):
    import sys

    for name in ("skimage", "skimage.restoration"):  # as on a machine without the bench extra
        monkeypatch.setitem(sys.modules, name, None)
    result = ok(run(["eval", HAND, "--frames", "::3", "-k", "4", "--mask-fraction", "0.25", "-q"]))
    assert "scikit-image biharmonic" not in result.stdout
    assert "Note: scikit-image biharmonic is left out: scikit-image is not installed" in result.stderr


@pytest.mark.slow
def test_batches_completed_on_every_core_give_one_threads_bytes(even_model_file, mask_file, tmp_path, monkeypatch):
    """In one process the batches run a core each (engines/engine.py); the frames are those of
    one thread, byte for byte (the batches made small so that several run at once)."""
    import kpcacli.engines.engine as engine

    monkeypatch.setattr(BUDGETS, "reconstruct_batch", 6 * 8 * 180 * 320 * 2)  # two frames a batch
    command = ["reconstruct", HAND, "--frames", "1:24:2", "--mask", mask_file, "-m", even_model_file, "-q"]
    ok(run([*command, "-o", f"{tmp_path}/cores/"]))
    monkeypatch.setattr(engine, "available_cores", lambda: 1)
    ok(run([*command, "-o", f"{tmp_path}/one/"]))
    names = sorted(path.name for path in (tmp_path / "one").iterdir())
    assert len(names) == 12 and names == sorted(path.name for path in (tmp_path / "cores").iterdir())
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "cores" / name).read_bytes()
