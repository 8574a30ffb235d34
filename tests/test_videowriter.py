"""Video output that reads back as what was written: every container at its default quality,
the source's frame rate kept through extract, decode and denoise, and --crf.

Frames are textured and moving (the hard case for a codec), at an even and an odd size.
"""

from __future__ import annotations

import io
import re
from fractions import Fraction

import numpy as np
import pytest
from helpers import ok, one_line_error, run
from test_video import textured_frames, write_clip

from kpcacli.io.outputs import write_video
from kpcacli.io.sources import iter_frames, source_frame_rate
from kpcacli.io.videowriter import VIDEO_FORMATS, VideoSettings
from kpcacli.numerics.metrics import psnr

LOSSLESS = {".mkv", ".gif"}


def read_back(path) -> np.ndarray:
    return np.stack([frame.pixels for frame in iter_frames([path])])


@pytest.mark.parametrize("suffix", sorted(VIDEO_FORMATS))
@pytest.mark.parametrize("size", [(48, 64), (33, 47)], ids=["even", "odd"])
def test_every_container_reads_back_at_45_db_or_exactly(tmp_path, suffix, size):
    frames = textured_frames(12, *size)
    frames[6] = frames[5]  # a pause: equal neighbours must stay two frames
    path = tmp_path / f"clip{suffix}"
    write_video(iter(frames), str(path), VideoSettings(fps=30000 / 1001))
    back = read_back(path)
    assert back.shape == frames.shape
    worst = min(psnr(a, b) for a, b in zip(frames, back))
    if suffix in LOSSLESS:
        assert np.array_equal(back, frames)
    else:
        assert worst >= 45.0, worst
    if suffix != ".gif":  # GIF delays are in hundredths of a second
        assert Fraction(source_frame_rate([path])).limit_denominator(1001) == Fraction(30000, 1001)


@pytest.mark.parametrize("suffix", sorted(VIDEO_FORMATS))
def test_the_same_frames_give_the_same_video_bytes_on_every_run(tmp_path, suffix):
    """Videos are written bitexact: no random Matroska UID, no FFmpeg version string (which
    made the lock's PyAV for Python 3.12 write the README's clip a byte shorter than its
    PyAV for 3.11), so a second run's file is the first's, byte for byte."""
    frames = textured_frames(6)
    for name in ("first", "second"):
        write_video(iter(frames), str(tmp_path / f"{name}{suffix}"), VideoSettings())
    first = (tmp_path / f"first{suffix}").read_bytes()
    assert first == (tmp_path / f"second{suffix}").read_bytes()
    assert re.search(rb"Lavf\d", first) is None  # Matroska still names "Lavf", without a version


def test_crf_trades_quality_for_size_and_zero_is_lossless(tmp_path):
    frames = textured_frames(10)
    sizes = {}
    for crf in (0, 8, 30):
        path = tmp_path / f"c{crf}.mp4"
        write_video(iter(frames), str(path), VideoSettings(crf=crf))
        sizes[crf] = path.stat().st_size
        if crf == 0:
            assert np.array_equal(read_back(path), frames)
    assert sizes[0] > sizes[8] > sizes[30]
    write_video(iter(frames), str(tmp_path / "v0.webm"), VideoSettings(crf=0))
    assert np.array_equal(read_back(tmp_path / "v0.webm"), frames)


@pytest.fixture(scope="module")
def ntsc_clip(tmp_path_factory):
    """A 29.97 fps clip written by kpca extract, and a model fitted on it."""
    folder = tmp_path_factory.mktemp("ntsc")
    write_clip(folder / "source.mp4", textured_frames(16, 32, 48))
    ok(run(["extract", folder / "source.mp4", "--fps", "29.97", "-o", folder / "clip.mp4"]))
    # Lossless: the frames are noise, which a lossy store would smooth into other pictures.
    ok(run(["fit", folder / "clip.mp4", "-m", folder / "m.npz", "-k", "4", "-q", "--store", "lossless"]))
    return folder


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_decode_writes_the_frame_rate_the_model_was_fitted_at(ntsc_clip, tmp_path, via):
    """Codes from a file or standard input decode to a video at the training clip's rate
    (29.97, not 25), unless --fps says otherwise; the video is the PNG decode at >= 45 dB."""
    model = ntsc_clip / "m.npz"
    assert source_frame_rate([ntsc_clip / "clip.mp4"]) == pytest.approx(29.97)
    ok(run(["encode", ntsc_clip / "clip.mp4", "-m", model, "-o", tmp_path / "codes.txt", "-q"]))
    codes = ["-"] if via == "stdin" else [tmp_path / "codes.txt"]
    text = (tmp_path / "codes.txt").read_text() if via == "stdin" else None
    ok(run(["decode", *codes, "-m", model, "-o", tmp_path / "back.mp4"], input=text))
    ok(run(["decode", *codes, "-m", model, "-o", f"{tmp_path}/png/"], input=text))
    assert source_frame_rate([tmp_path / "back.mp4"]) == pytest.approx(29.97)
    video, exact = read_back(tmp_path / "back.mp4"), read_back(tmp_path / "png")
    assert len(video) == 16 and min(psnr(a, b) for a, b in zip(exact, video)) >= 45.0
    ok(run(["decode", *codes, "-m", model, "-o", tmp_path / "slow.mp4", "--fps", "12"], input=text))
    assert source_frame_rate([tmp_path / "slow.mp4"]) == pytest.approx(12.0)


def test_denoise_and_extract_keep_the_source_rate(ntsc_clip, tmp_path):
    ok(run(["denoise", ntsc_clip / "clip.mp4", "-m", ntsc_clip / "m.npz", "-o", tmp_path / "clean.webm", "-q"]))
    assert source_frame_rate([tmp_path / "clean.webm"]) == pytest.approx(29.97)
    ok(run(["extract", ntsc_clip / "clip.mp4", "--frames", "::2", "-o", tmp_path / "even.mkv"]))
    assert source_frame_rate([tmp_path / "even.mkv"]) == pytest.approx(29.97)
    extracted = np.stack([frame.pixels for frame in iter_frames([ntsc_clip / "clip.mp4"])])[::2]
    assert np.array_equal(read_back(tmp_path / "even.mkv"), extracted)  # .mkv: lossless


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["-o", "{tmp}/out.mkv", "--crf", "8"], "--crf applies to .mp4, .mov, .avi and .webm"),
        (["-o", "{tmp}/out.png", "--crf", "8"], "--crf applies to"),
        (["-o", "{tmp}/out.mp4", "--crf", "52"], "--crf for .mp4 must be in [0, 51]. Got 52"),
        (["-o", "{tmp}/out.webm", "--crf", "-1"], "--crf for .webm must be in [0, 63]"),
        (["-o", "{tmp}/out.mp4", "--fps", "0"], "fps"),
        (["-o", "{tmp}/out.png", "--fps", "12"], "--fps applies to videos (.mp4, .mov, .avi, .webm, .mkv, .gif)"),
        (["-o", "{tmp}/frames/", "--fps", "12"], "--fps applies to videos"),
    ],
)
def test_bad_video_options_are_one_line_before_anything_is_written(ntsc_clip, tmp_path, args, fragment):
    codes = io.StringIO()
    np.savetxt(codes, np.zeros((2, 4)))
    filled = [part.format(tmp=tmp_path) for part in args]
    result = run(["decode", "-", "-m", ntsc_clip / "m.npz", *filled], input=codes.getvalue())
    one_line_error(result, 2, fragment)
    assert list(tmp_path.iterdir()) == []
