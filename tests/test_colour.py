"""Colour: ``kpca fit --colour`` models RGB frames as vectors of 3·h·w values, with the same
kernels, Gram, solvers and store; encode, decode and denoise follow the model, extract follows
--colour; grey stays the default. Data: the shipped colour clip (sample_data/hand_colour.mp4,
the sample hand rendered skin-coloured on blue fabric) and frames rendered by make_hand.py.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from helpers import ROOT, ok, one_line_error, run
from PIL import Image

from kpcacli import FrameModel
from kpcacli.io.sources import iter_frames
from kpcacli.numerics.metrics import psnr

CLIP = ROOT / "sample_data" / "hand_colour.mp4"


@pytest.fixture(scope="module")
def colour_model(tmp_path_factory):
    root = tmp_path_factory.mktemp("colour")
    ok(run(["fit", CLIP, "--colour", "--frames", "::3", "-k", "3", "-m", root / "c.npz", "-q"]))
    return root


def clip_frames(colour: bool) -> np.ndarray:
    return np.stack([frame.pixels for frame in iter_frames([CLIP], colour=colour)])


def test_a_colour_model_holds_rgb_frames(colour_model):
    info = json.loads(ok(run(["info", "-m", colour_model / "c.npz", "--json"])).stdout)
    assert info["frame_size"] == {"width": 320, "height": 180, "channels": 3} and info["frames"] == 24
    assert "320x180 RGB pixels" in ok(run(["info", "-m", colour_model / "c.npz"])).stdout
    state = FrameModel.load(colour_model / "c.npz").state_
    assert state.is_colour and state.frames.shape == (24, 3 * 180 * 320)
    frames = clip_frames(colour=True)
    assert frames.shape == (70, 180, 320, 3)
    # Colour carries what grey cannot: the channels differ (skin on blue fabric).
    assert np.abs(frames[..., 0].astype(int) - frames[..., 2]).mean() > 20


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_encode_and_decode_follow_a_colour_model(colour_model, tmp_path, via):
    """A training frame comes back (k = 3: its own code decodes to itself); a held-out one is
    close; both as RGB PNGs, from a file or from standard input."""
    frames = clip_frames(colour=True)
    model = colour_model / "c.npz"
    for index in (6, 7):  # 6 is a training frame (every third), 7 is not
        Image.fromarray(frames[index]).save(tmp_path / f"f{index}.png")
        if via == "file":
            codes = ok(run(["encode", tmp_path / f"f{index}.png", "-m", model])).stdout
        else:
            codes = ok(run(["encode", "-", "-m", model], input=(tmp_path / f"f{index}.png").read_bytes())).stdout
        back = ok(run(["decode", "-", "-m", model], input=codes)).stdout_bytes
        decoded = np.asarray(Image.open(io.BytesIO(back)))
        assert decoded.shape == (180, 320, 3)
        assert psnr(frames[index], decoded) >= (50.0 if index == 6 else 35.0), index


def pixel_format(path) -> str:
    import av

    with av.open(str(path)) as container:
        return container.streams.video[0].codec_context.pix_fmt


@pytest.mark.slow
def test_colour_video_and_lossless_mkv(colour_model, tmp_path):
    """Colour .mp4 is 4:2:0 by default (what browsers and most players decode; it was 4:4:4,
    which they cannot play), 4:4:4 with --chroma 444; .mkv keeps RGB, exactly."""
    model = colour_model / "c.npz"
    ok(run(["encode", CLIP, "--frames", ":10", "-m", model, "-o", tmp_path / "codes.npy", "-q"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", f"{tmp_path}/png/", "-q"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / "back.mp4", "-q"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / "full.mp4", "-q", "--chroma", "444"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / "back.mkv", "-q"]))
    assert [pixel_format(tmp_path / name) for name in ("back.mp4", "full.mp4")] == [
        "yuvj420p",
        "yuvj444p",
    ]  # full range
    exact = np.stack([frame.pixels for frame in iter_frames([tmp_path / "png"], colour=True)])
    video = np.stack([frame.pixels for frame in iter_frames([tmp_path / "back.mp4"], colour=True)])
    full = np.stack([frame.pixels for frame in iter_frames([tmp_path / "full.mp4"], colour=True)])
    lossless = np.stack([frame.pixels for frame in iter_frames([tmp_path / "back.mkv"], colour=True)])
    assert exact.shape == video.shape == full.shape == (10, 180, 320, 3)
    assert np.array_equal(exact, lossless)
    assert min(psnr(a, b) for a, b in zip(exact, full)) >= 40.0
    assert min(psnr(a, b) for a, b in zip(exact, video)) >= 30.0  # half the colour resolution each way
    one_line_error(
        run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / "x.mkv", "--chroma", "444"]),
        2,
        "--chroma applies to .mp4",
    )


def test_denoise_follows_the_model_and_extract_follows_colour(colour_model, tmp_path):
    model = colour_model / "c.npz"
    ok(run(["denoise", CLIP, "--frames", "4:6", "-m", model, "-o", f"{tmp_path}/clean/", "-q"]))
    names = sorted(path.name for path in (tmp_path / "clean").iterdir())
    assert names == ["hand_colour_000004.png", "hand_colour_000005.png"]
    assert np.asarray(Image.open(tmp_path / "clean" / names[0])).shape == (180, 320, 3)
    ok(run(["extract", CLIP, "--colour", "--frames", "3", "-o", tmp_path / "three.png"]))
    ok(run(["extract", CLIP, "--frames", "3", "-o", tmp_path / "grey.png"]))
    assert np.array_equal(np.asarray(Image.open(tmp_path / "three.png")), clip_frames(colour=True)[3])
    assert np.array_equal(np.asarray(Image.open(tmp_path / "grey.png")), clip_frames(colour=False)[3])


def test_colour_stacks_need_a_colour_model(tmp_path):
    frames = clip_frames(colour=True)[:6]
    np.save(tmp_path / "stack.npy", frames)
    one_line_error(run(["fit", tmp_path / "stack.npy", "-m", tmp_path / "m.npz", "-k", "2"]), 1, "--colour")
    ok(run(["fit", tmp_path / "stack.npy", "--colour", "-m", tmp_path / "m.npz", "-k", "2", "-q"]))
    assert FrameModel.load(tmp_path / "m.npz").state_.frame_shape == (180, 320, 3)


def test_make_hand_renders_colour_whose_grey_is_the_sample():
    """The colour sample is the grey one, coloured: the renderer's grey output is unchanged."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_hand", ROOT / "sample_data" / "make_hand.py")
    make_hand = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_hand)
    grey = make_hand.render_frame(10 / 70, 180, 320)
    colour = make_hand.render_frame(10 / 70, 180, 320, colour=True)
    assert colour.shape == (180, 320, 3)
    assert np.array_equal(grey, np.asarray(Image.open(ROOT / "sample_data" / "hand" / "hand_010.png")))


@pytest.mark.slow
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_eval_measures_a_colour_model_and_reports_rgb_pictures(tmp_path, via):
    """eval --colour scores RGB reconstructions (SSIM: the mean over the channels) and its
    report pictures are RGB."""
    from kpcacli.numerics.metrics import ssim

    frames = clip_frames(colour=True)[::4]
    if via == "file":
        args = [CLIP, "--frames", "::4"]
        stdin = None
    else:
        buffer = io.BytesIO()
        np.save(buffer, frames)
        args, stdin = ["-"], buffer.getvalue()
    result = ok(
        run(
            ["eval", *args, "--colour", "-k", "3", "--solver", "distance", "--report", tmp_path / "r", "-q"],
            input=stdin,
        )
    )
    assert "distance" in result.stdout and "18 frames" in result.stdout
    with Image.open(tmp_path / "r" / "distance_worst.png") as picture:
        assert picture.mode == "RGB"
    reference, other = frames[0], frames[1]
    channels = [ssim(reference[..., c], other[..., c]) for c in range(3)]
    assert ssim(reference, other) == pytest.approx(np.mean(channels), abs=1e-12)


def test_compare_scores_colour_over_every_channel(tmp_path):
    """Colour scored on brightness alone said 49.72 dB where the PSNR over RGB was 48.11: now
    every channel counts when both images are in colour, and the output says so."""
    rng = np.random.default_rng(4)
    original = rng.integers(0, 256, (24, 32, 3), dtype=np.uint8)
    other = original.copy()
    other[..., 2] = np.clip(other[..., 2].astype(int) + rng.integers(-6, 7, (24, 32)), 0, 255)  # blue alone
    Image.fromarray(original).save(tmp_path / "a.png")
    Image.fromarray(other).save(tmp_path / "b.png")
    result = json.loads(ok(run(["compare", tmp_path / "a.png", tmp_path / "b.png", "--json"])).stdout)
    error = np.mean((original.astype(float) - other) ** 2)
    assert result["channels"] == "rgb" and result["mean_psnr"] == pytest.approx(10 * np.log10(255**2 / error))
    assert "RGB: every channel" in ok(run(["compare", tmp_path / "a.png", tmp_path / "b.png"])).stdout
    grey = json.loads(ok(run(["compare", tmp_path / "a.png", tmp_path / "a.png", "--json"])).stdout)
    assert grey["identical"] and grey["channels"] == "rgb"
    Image.fromarray(original[..., 0]).save(tmp_path / "g.png")
    Image.fromarray(other[..., 2]).save(tmp_path / "h.png")
    assert (
        json.loads(ok(run(["compare", tmp_path / "g.png", tmp_path / "h.png", "--json"])).stdout)["channels"] == "grey"
    )


@pytest.mark.parametrize("model", [None, "grey", "colour"])
def test_a_grey_file_is_scored_against_a_colour_one_in_grey_with_or_without_a_model(colour_model, tmp_path, model):
    """A grey decode of a colour clip was scored over RGB (the grey frame in all three
    channels: 17.28 dB on a public clip) without -m and in grey with a grey model (50.69 dB):
    now in grey whatever -m gives, and a line says which sequence held colour."""
    colour = clip_frames(colour=True)[:6]
    noise = np.random.default_rng(5).integers(-3, 4, colour.shape[:3])
    grey = np.clip(clip_frames(colour=False)[:6].astype(int) + noise, 0, 255).astype(np.uint8)
    for folder, frames in (("c", colour), ("g", grey)):
        (tmp_path / folder).mkdir()
        for i, frame in enumerate(frames):
            Image.fromarray(frame).save(tmp_path / folder / f"{i:02d}.png")
    extra = []
    if model == "grey":
        ok(run(["fit", tmp_path / "c", "-k", "2", "-m", tmp_path / "g.npz", "-q"]))
        extra = ["-m", tmp_path / "g.npz"]
    elif model == "colour":
        extra = ["-m", colour_model / "c.npz"]
    scores = json.loads(ok(run(["compare", tmp_path / "c", tmp_path / "g", "--json", *extra])).stdout)
    reference = clip_frames(colour=False)[:6]
    expected = np.mean([psnr(a, b) for a, b in zip(reference, grey)])
    assert scores["channels"] == "grey" and scores["mean_psnr"] == pytest.approx(expected, abs=1e-9)
    assert (
        scores["channels_note"]
        == f"'{tmp_path / 'c'}' holds colour and '{tmp_path / 'g'}' grey: both were scored in grey"
    )
    text = ok(run(["compare", tmp_path / "g", tmp_path / "c", *extra])).stdout
    assert "grey (ITU-R 601 luma" in text and f"'{tmp_path / 'c'}' holds colour" in text
    if model is not None:
        assert 5 < scores["mean_frame_psnr"] < 60  # the mean frame scored in grey too


@pytest.mark.slow
def test_the_colour_figures_of_the_commands_page_are_what_the_commands_print(tmp_path):
    """docs/commands.md quotes the colour clip decoded to .mp4 in 4:2:0 and 4:4:4."""
    import re

    text = " ".join((ROOT / "docs" / "commands.md").read_text().split())
    quoted = re.search(
        r"scores ([\d.]+) dB on average and ([\d.]+) dB at worst against the clip, over RGB; "
        r"with `--chroma 444`, ([\d.]+) and ([\d.]+) dB",
        text,
    )
    model = tmp_path / "c.npz"
    ok(run(["fit", CLIP, "--colour", "--frames", "::2", "-k", "8", "-m", model, "-q"]))
    ok(run(["encode", CLIP, "-m", model, "-o", tmp_path / "codes.npy", "-q"]))
    printed = []
    for name, chroma in (("back.mp4", []), ("full.mp4", ["--chroma", "444"])):
        ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / name, "-q", *chroma]))
        scores = json.loads(ok(run(["compare", CLIP, tmp_path / name, "--json"])).stdout)
        assert scores["channels"] == "rgb"
        printed += [f"{scores['mean_psnr']:.2f}", f"{scores['min_psnr']:.2f}"]
    assert list(quoted.groups()) == printed
