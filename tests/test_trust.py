"""Codes you can trust: text codes name the model that wrote them and decode refuses another
model's; frames and codes far from the training set are decoded with a one-line warning;
absurd codes are one line; float32 codes halve the size for a fraction of a grey level.

Models: the sample hand's even frames (k = 3) and a model of the same frames upside down
(same k, same frame size: its codes look plausible to the first model).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run
from PIL import Image

from kpcacli import FrameModel
from kpcacli.numerics.novelty import FAR_REACHES, Novelty


@pytest.fixture(scope="module")
def models(tmp_path_factory, hand):
    root = tmp_path_factory.mktemp("trust")
    ok(run(["fit", HAND, "--frames", "::2", "-m", root / "hand.npz", "-k", "3", "-q"]))
    flipped = root / "flipped"
    flipped.mkdir()
    for index, frame in enumerate(hand[::2]):
        Image.fromarray(frame[::-1]).save(flipped / f"f_{index:02d}.png")
    ok(run(["fit", flipped, "-m", root / "flipped.npz", "-k", "3", "-q"]))
    Image.fromarray(hand[35]).save(root / "held_out.png")
    Image.fromarray(hand[35][::-1]).save(root / "upside_down.png")
    return root


def png(path) -> bytes:
    return path.read_bytes()


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_text_codes_name_their_model_and_another_model_refuses_them(models, tmp_path, via):
    if via == "file":
        ok(run(["encode", models / "held_out.png", "-m", models / "hand.npz", "-o", tmp_path / "codes.txt"]))
        text = (tmp_path / "codes.txt").read_text()
    else:
        text = ok(run(["encode", "-", "-m", models / "hand.npz"], input=png(models / "held_out.png"))).stdout
        (tmp_path / "codes.txt").write_text(text)
    fingerprint = FrameModel.load(models / "hand.npz").state_.fingerprint
    assert text.splitlines()[0] == f"# kpca codes of model {fingerprint} (k = 3)"
    source = ["-"] if via == "stdin" else [tmp_path / "codes.txt"]
    stdin = text if via == "stdin" else None
    ok(run(["decode", *source, "-m", models / "hand.npz", "-o", tmp_path / "back.png"], input=stdin))
    refused = run(["decode", *source, "-m", models / "flipped.npz", "-o", tmp_path / "wrong.png"], input=stdin)
    one_line_error(refused, 1, "written by another model", fingerprint, "--force")
    assert not (tmp_path / "wrong.png").exists()
    forced = ok(
        run(["decode", *source, "-m", models / "flipped.npz", "-o", tmp_path / "wrong.png", "--force"], input=stdin)
    )
    assert (tmp_path / "wrong.png").exists() and "Error" not in forced.stderr


def test_the_fingerprint_names_one_fitted_model(models, tmp_path):
    """Stable through save and load, different for another k, another kernel width, other frames."""
    model = FrameModel.load(models / "hand.npz")
    again = FrameModel.load(models / "hand.npz")
    assert model.state_.fingerprint == again.state_.fingerprint and len(model.state_.fingerprint) == 16
    others = [model.with_components(4), FrameModel.load(models / "flipped.npz")]
    model.save(tmp_path / "copy.npz")
    assert FrameModel.load(tmp_path / "copy.npz").state_.fingerprint == model.state_.fingerprint
    assert len({model.state_.fingerprint, *(other.state_.fingerprint for other in others)}) == 3


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_encode_warns_of_frames_unlike_every_training_frame(models, via):
    def encode(name):
        if via == "file":
            return ok(run(["encode", models / name, "-m", models / "hand.npz"]))
        return ok(run(["encode", "-", "-m", models / "hand.npz"], input=png(models / name)))

    assert encode("held_out.png").stderr == ""
    warned = encode("upside_down.png").stderr.strip().splitlines()
    assert len(warned) == 1 and warned[0].startswith("Warning: 1 of 1 frames lie far from every training frame")


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_decode_warns_of_codes_far_from_every_training_code_and_still_decodes(models, tmp_path, via):
    state = FrameModel.load(models / "hand.npz").state_
    codes = np.vstack([state.codes[4], np.zeros(3), state.codes[9] * 1.01])  # row 1: no frame's code
    np.save(tmp_path / "codes.npy", codes)
    buffer = io.BytesIO()
    np.save(buffer, codes)
    source = ["-"] if via == "stdin" else [tmp_path / "codes.npy"]
    stdin = buffer.getvalue() if via == "stdin" else None
    result = ok(run(["decode", *source, "-m", models / "hand.npz", "-o", f"{tmp_path}/out/"], input=stdin))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Warning: 1 of 3 codes lie far from every training code")
    assert "row 1, at" in lines[0]
    assert len(list((tmp_path / "out").iterdir())) == 3
    quiet = ok(
        run(
            ["decode", "-", "-m", models / "hand.npz", "-o", tmp_path / "one.png"],
            input=" ".join(map(str, state.codes[7])),
        )
    )
    assert quiet.stderr == ""


def test_far_is_beyond_the_widest_gap_between_training_samples():
    novelty = Novelty.of("codes", np.array([0.5, FAR_REACHES * 2.0 + 0.1, 1.0]), 2.0)
    assert list(novelty.far) == [1] and "1 of 3 codes" in novelty.warning()
    assert "row 1, at" in novelty.warning()
    assert Novelty.of("frames", np.array([0.5, 1.0]), 2.0).warning() is None


@pytest.fixture(scope="module")
def uneven(tmp_path_factory):
    """The pan that is slow for most of the clip, then fast, as a video; a model of its even
    frames, and a picture of another texture."""
    from test_video import write_clip

    from benchmarks.experiments import texture, uneven_pan

    folder = tmp_path_factory.mktemp("uneven")
    frames = uneven_pan()
    write_clip(folder / "clip.mp4", frames)
    Image.fromarray(np.clip(np.rint(texture(2, frames.shape[1:])), 0, 255).astype(np.uint8)).save(folder / "other.png")
    ok(run(["fit", folder / "clip.mp4", "--frames", "::2", "-k", "8", "-q", "-m", folder / "even.npz"]))
    return folder


@pytest.mark.slow  # a generated clip and two fits of it; the warnings themselves are tested quick above
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_the_models_own_clip_raises_no_alarm_where_the_camera_speeds_up(uneven, tmp_path, via):
    """Every frame of the clip, encoded and decoded: held-out frames of the fast part lie many
    median spacings from the training frames (the old rule warned on both commands) but within
    the widest gap between them. A picture of another texture is still far; its codes lie
    among the training codes, so decoding them is no extrapolation and draws no warning."""
    encoded = ok(run(["encode", uneven / "clip.mp4", "-m", uneven / "even.npz", "-o", tmp_path / "codes.txt"]))
    assert encoded.stderr == ""
    source = ["-"] if via == "stdin" else [tmp_path / "codes.txt"]
    stdin = (tmp_path / "codes.txt").read_bytes() if via == "stdin" else None
    decoded = ok(run(["decode", *source, "-m", uneven / "even.npz", "-o", tmp_path / "back.mkv"], input=stdin))
    assert decoded.stderr == ""
    other = ok(run(["encode", uneven / "other.png", "-m", uneven / "even.npz", "-o", tmp_path / "other.txt"]))
    assert other.stderr.startswith("Warning: 1 of 1 frames lie far from every training frame")
    warned = ok(run(["decode", tmp_path / "other.txt", "-m", uneven / "even.npz", "-o", tmp_path / "other.png"]))
    assert warned.stderr == ""


@pytest.mark.slow
def test_the_novelty_table_separates_the_clip_from_strangers():
    """benchmarks/experiments.py novelty, the table of kpcacli/numerics/novelty.py: held-out frames and
    codes within one reach; other pictures' frames and black frames' frames and codes beyond."""
    from benchmarks.experiments import novelty

    for (name, _), row in novelty(verbose=False).items():
        assert max(row["held-out"]) < 0.8 * FAR_REACHES
        assert row["another picture"][0] > FAR_REACHES, (name, row["another picture"])
        assert min(row["a black frame"]) > FAR_REACHES, (name, row["a black frame"])
        assert row["zero codes"][1] > FAR_REACHES


def test_a_clip_there_and_back_is_within_reach_of_itself():
    """Samples passing each place twice (twins a hair apart): the reach is the gap between
    places, not between twins, so a sample half-way between two places is near; one three
    gaps beyond the end is far."""
    from kpcacli.model.neighbours import reach

    places = np.arange(10.0)
    path = np.concatenate([places, places[::-1] + 1e-3])[:, None] * np.ones((1, 4))
    widest = reach(np.sum(path**2, axis=1), lambda rows: path[rows] @ path.T)
    assert widest == pytest.approx(2.0, rel=1e-3)  # 1 along each of the 4 axes
    assert 1.0 / widest < FAR_REACHES < 6.0 / widest


@pytest.mark.parametrize("codes", ["1e308 0 0", "0 -1e300 0", "0 0 4e12"])
def test_absurd_codes_are_one_line_and_nothing_is_written(models, tmp_path, codes):
    result = run(["decode", "-", "-m", models / "hand.npz", "-o", tmp_path / "x.png"], input=codes)
    one_line_error(result, 1, "not codes of this model", "row 0")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("suffix", [".npy", ".txt"])
def test_float32_codes_halve_the_size_and_decode_within_a_grey_level(models, tmp_path, suffix):
    wide, narrow = tmp_path / f"wide{suffix}", tmp_path / f"narrow{suffix}"
    ok(run(["encode", HAND, "--frames", "1::6", "-m", models / "hand.npz", "-o", wide]))
    ok(run(["encode", HAND, "--frames", "1::6", "-m", models / "hand.npz", "-o", narrow, "--dtype", "float32"]))
    if suffix == ".npy":
        assert np.load(narrow).dtype == np.float32 and np.load(wide).dtype == np.float64
        assert np.load(narrow).nbytes * 2 == np.load(wide).nbytes
    else:
        assert len(narrow.read_text()) < 0.7 * len(wide.read_text())
    ok(run(["decode", wide, "-m", models / "hand.npz", "-o", f"{tmp_path}/wide/"]))
    ok(run(["decode", narrow, "-m", models / "hand.npz", "-o", f"{tmp_path}/narrow/"]))
    for name in sorted(p.name for p in (tmp_path / "wide").iterdir()):
        a = np.asarray(Image.open(tmp_path / "wide" / name), dtype=np.int16)
        b = np.asarray(Image.open(tmp_path / "narrow" / name), dtype=np.int16)
        assert np.abs(a - b).max() <= 1
    one_line_error(run(["encode", HAND, "-m", models / "hand.npz", "--dtype", "float16"]), 2, "--dtype")
