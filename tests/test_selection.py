"""Choosing frames (``--frames``), ``kpca extract`` and ``kpca compare`` over whole sequences.

Every command that reads sources reads the same frames for the same ``--frames``: what
``extract`` writes is what ``encode`` encodes, the frames ``fit`` keeps, and what ``compare``
scores. Sources are a folder of PNGs and an H.264 clip (keyframes every 8 frames, so that a
range is decoded from the keyframe before it).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from helpers import ok, one_line_error, run
from PIL import Image
from test_video import textured_frames, write_clip

from kpcacli import FrameModel
from kpcacli.io.sources import FrameSelection, count_frames, iter_frames
from kpcacli.utils.errors import InputError, ParameterError

SLICES = ["5", "-1", "3:9", "::4", "1::2", "-6:", "2:17:5"]


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """A 20-frame H.264 clip and a folder holding the same frames as PNGs."""
    folder = tmp_path_factory.mktemp("clip")
    frames = textured_frames(20, 32, 48)
    write_clip(folder / "clip.mp4", frames, gop=8)
    (folder / "png").mkdir()
    for index, frame in enumerate(frames):
        Image.fromarray(frame).save(folder / "png" / f"f_{index:02d}.png")
    return folder


@pytest.mark.parametrize("text", SLICES)
@pytest.mark.parametrize("kind", ["video", "folder", "both"])
def test_selection_is_python_slicing_over_every_source(clip, text, kind):
    sources = {"video": [clip / "clip.mp4"], "folder": [clip / "png"], "both": [clip / "png", clip / "clip.mp4"]}[kind]
    every = list(iter_frames(sources))
    selection = FrameSelection.parse(text)
    numbers = list(range(len(every)))
    expected = (
        [numbers[int(text)]] if ":" not in text else numbers[slice(*[int(p) if p else None for p in text.split(":")])]
    )
    chosen = list(iter_frames(sources, selection=selection))
    assert [frame.index for frame in chosen] == expected
    assert [frame.name for frame in chosen] == [every[i].name for i in expected]
    for frame in chosen:
        assert np.array_equal(frame.pixels, every[frame.index].pixels)
    assert count_frames(sources, selection) == len(expected)


@pytest.mark.parametrize("text", ["", "a", "1:2:3:4", "::0", "::-1", "1.5", "-"])
def test_bad_selections_are_usage_errors(text):
    with pytest.raises(ParameterError):
        FrameSelection.parse(text)


def test_a_selection_of_nothing_is_an_error(clip):
    with pytest.raises(InputError, match="no frame 20"):
        list(iter_frames([clip / "clip.mp4"], selection=FrameSelection.parse("20")))
    with pytest.raises(InputError, match="selects no frame"):
        list(iter_frames([clip / "png"], selection=FrameSelection.parse("30:")))
    one_line_error(run(["encode", clip / "png", "--frames", "x"]), 2, "--frames")


def test_extract_writes_what_encode_sees(clip, tmp_path):
    ok(run(["fit", clip / "png", "-m", tmp_path / "m.npz", "-k", "3", "--frames", "::2", "-q"]))
    assert FrameModel.load(tmp_path / "m.npz").state_.n_samples == 10
    ok(run(["extract", clip / "clip.mp4", "--frames", "1::2", "-o", f"{tmp_path}/odd/"]))
    names = sorted(path.name for path in (tmp_path / "odd").iterdir())
    assert names == [f"clip_{i:06d}.png" for i in range(1, 20, 2)]
    ok(run(["encode", clip / "clip.mp4", "--frames", "1::2", "-m", tmp_path / "m.npz", "-o", tmp_path / "a.npy"]))
    ok(run(["encode", tmp_path / "odd", "-m", tmp_path / "m.npz", "-o", tmp_path / "b.npy"]))
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    ok(run(["extract", clip / "png", "--frames", "7", "-o", tmp_path / "seven.png"]))
    assert np.array_equal(
        np.asarray(Image.open(tmp_path / "seven.png")), np.asarray(Image.open(clip / "png" / "f_07.png"))
    )


def test_extract_to_standard_output_takes_one_frame(clip):
    one_line_error(run(["extract", clip / "png", "--frames", "0:5", "-o", "-"]), 1, "5 frames", "standard output")
    one = ok(run(["extract", clip / "png", "--frames", "4", "-o", "-"]))
    written = np.asarray(Image.open(io.BytesIO(one.stdout_bytes)))
    assert np.array_equal(written, np.asarray(Image.open(clip / "png" / "f_04.png")))


def test_extract_to_video_keeps_the_source_frame_rate(clip, tmp_path):
    import av

    ok(run(["extract", clip / "clip.mp4", "--frames", "0:10", "-o", tmp_path / "part.mp4"]))
    with av.open(str(tmp_path / "part.mp4")) as container:
        stream = container.streams.video[0]
        assert float(stream.average_rate) == pytest.approx(25.0) and stream.frames in (0, 10)
    assert count_frames([tmp_path / "part.mp4"]) == 10


def test_denoise_keeps_the_input_names(clip, tmp_path):
    ok(run(["fit", clip / "png", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    ok(run(["denoise", clip / "png", "--frames", "0:3", "-m", tmp_path / "m.npz", "-o", f"{tmp_path}/clean/", "-q"]))
    assert sorted(path.name for path in (tmp_path / "clean").iterdir()) == ["f_00.png", "f_01.png", "f_02.png"]


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_compare_scores_every_frame(clip, tmp_path, via):
    """Folder against video: the mean and the worst over every pair, the worst frame's number
    counted as --frames counts, and JSON with one entry per pair."""
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    for index, frame in enumerate(iter_frames([clip / "png"])):
        pixels = frame.pixels.astype(np.int16)
        pixels[:4, :4] += 8 * (index == 13) + 1  # frame 13 is the worst
        Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(damaged / f"f_{index:02d}.png")
    result = json.loads(ok(run(["compare", clip / "png", damaged, "--json"])).stdout)
    assert result["frames"] == 20 and len(result["per_frame"]) == 20
    assert result["worst_frame"] == 13 and result["min_psnr"] == min(f["psnr"] for f in result["per_frame"])
    assert result["mean_psnr"] == pytest.approx(np.mean([f["psnr"] for f in result["per_frame"]]))
    chosen = json.loads(ok(run(["compare", clip / "png", damaged, "--frames", "10:", "--json"])).stdout)
    assert [f["index"] for f in chosen["per_frame"]] == list(range(10, 20)) and chosen["worst_frame"] == 13
    if via == "stdin":
        one = ok(run(["compare", clip / "png" / "f_13.png", "-", "--json"], input=(damaged / "f_13.png").read_bytes()))
        assert json.loads(one.stdout)["min_psnr"] == pytest.approx(result["per_frame"][13]["psnr"])
        return
    text = ok(run(["compare", clip / "png", damaged, "-o", tmp_path / "worst.png"])).stdout
    assert "frames compared      20" in text and "frame 13" in text
    with Image.open(tmp_path / "worst.png") as worst:
        assert worst.size[0] > 3 * 48  # original | other | difference


@pytest.mark.parametrize("output", ["part/", "part.mp4", "one.png"])
def test_extract_says_how_many_frames_it_wrote(clip, tmp_path, output):
    selection = "7" if output == "one.png" else ":10"
    result = ok(run(["extract", clip / "clip.mp4", "--frames", selection, "-o", f"{tmp_path}/{output}"]))
    count = "1 frame" if output == "one.png" else "10 frames"
    assert result.stderr.strip() == f"wrote {count} -> {tmp_path}/{output}"


def test_compare_refuses_sequences_of_different_lengths(clip, tmp_path):
    ok(run(["extract", clip / "clip.mp4", "--frames", ":10", "-o", f"{tmp_path}/part/"]))
    one_line_error(run(["compare", clip / "clip.mp4", tmp_path / "part"]), 1, "has 20 frames", "has 10")
    one_line_error(run(["compare", clip / "png", clip / "png" / "f_00.png"]), 1, "20 frames", "has 1")


def test_compare_selects_on_the_original_alone_when_the_other_holds_just_those_frames(clip, tmp_path):
    """Held-out frames decoded to a video are scored against the clip they came from without
    extracting them first: the 10 odd frames of a 20-frame clip against a 10-frame video. When
    both hold 20 frames the selection applies to both, as before."""
    ok(run(["fit", clip / "clip.mp4", "--frames", "::2", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    ok(run(["encode", clip / "clip.mp4", "--frames", "1::2", "-m", tmp_path / "m.npz", "-o", tmp_path / "odd.npy"]))
    ok(run(["decode", tmp_path / "odd.npy", "-m", tmp_path / "m.npz", "-o", tmp_path / "odd.mkv", "-q"]))
    ok(run(["extract", clip / "clip.mp4", "--frames", "1::2", "-o", f"{tmp_path}/odd/"]))
    alone = json.loads(
        ok(run(["compare", clip / "clip.mp4", tmp_path / "odd.mkv", "--frames", "1::2", "--json"])).stdout
    )
    extracted = json.loads(ok(run(["compare", tmp_path / "odd", tmp_path / "odd.mkv", "--json"])).stdout)
    assert alone["frames"] == 10 and [f["index"] for f in alone["per_frame"]] == list(range(1, 20, 2))
    assert [f["psnr"] for f in alone["per_frame"]] == [f["psnr"] for f in extracted["per_frame"]]
    both = json.loads(ok(run(["compare", clip / "clip.mp4", clip / "png", "--frames", "1::2", "--json"])).stdout)
    assert [f["index"] for f in both["per_frame"]] == list(range(1, 20, 2))
    one_line_error(run(["compare", clip / "clip.mp4", tmp_path / "odd.mkv", "--frames", "::4"]), 1, "5 frames")


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_the_model_records_its_frames_and_info_shows_them(clip, tmp_path, via):
    """fit keeps each training frame's number (as --frames counts), the --frames text, the
    video's frame rate and the source's bytes; info shows them and their ratios. From standard
    input the size and the count of the source are unknown and said to be."""
    model = tmp_path / "m.npz"
    if via == "stdin":
        stack = np.stack([frame.pixels for frame in iter_frames([clip / "png"])])
        buffer = io.BytesIO()
        np.save(buffer, stack)
        ok(run(["fit", "-", "--frames", "1::3", "-m", model, "-k", "2", "-q"], input=buffer.getvalue()))
    else:
        fitted = ok(run(["fit", clip / "clip.mp4", "--frames", "1::3", "-m", model, "-k", "2", "-q"]))
        assert "the model is" in fitted.stderr and "codes 16 B a frame" in fitted.stderr
    info = json.loads(ok(run(["info", "-m", model, "--json"])).stdout)
    assert info["frame_indices"] == list(range(1, 20, 3)) and info["selection"] == "1::3"
    assert info["frame_size"] == {"width": 48, "height": 32, "channels": 1}
    sizes = info["sizes"]
    assert sizes["codes_bytes_per_frame"] == 16 and sizes["model_bytes"] == info["file_size"]
    text = ok(run(["info", "-m", model])).stdout
    assert "frames 1, 4, … 19" in text and "--frames 1::3" in text
    if via == "stdin":
        assert info["frame_rate"] is None and sizes["source_bytes"] is None and sizes["model_to_source"] is None
        assert "(7, step 3)" in text and "frame rate" not in text and "source 0" not in text
        return
    size = (clip / "clip.mp4").stat().st_size
    assert info["frame_rate"] == pytest.approx(25.0) and sizes["source_bytes"] == size
    assert sizes["source_frames"] == 20 and sizes["model_to_source"] == pytest.approx(info["file_size"] / size)
    assert sizes["source_to_codes"] == pytest.approx(size / 20 / 16)
    assert "(7 of 20, step 3)" in text and "25 fps" in text and "the model is" in text


def test_landmarks_record_the_numbers_of_the_frames_kept(clip, tmp_path):
    model = tmp_path / "m.npz"
    ok(run(["fit", clip / "png", "--frames", "10:", "--landmarks", "4", "-m", model, "-k", "2", "-q"]))
    info = json.loads(ok(run(["info", "-m", model, "--json"])).stdout)
    state = FrameModel.load(model).state_
    assert len(info["frame_indices"]) == 4 and set(info["frame_indices"]) <= set(range(10, 20))
    assert [f"{clip / 'png'}/f_{i:02d}.png" for i in info["frame_indices"]] == list(state.frame_names)
