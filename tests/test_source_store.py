"""The store that keeps a clip's own coded packets (kpcacli/modelfile/sourcestore.py): the
training frames come back bit for bit from every container and codec it copies, a model costs
about its clip, what cannot be copied is coded losslessly and says why, and a frame that
decodes to other pixels is one clear error naming it."""

from __future__ import annotations

import re
import zipfile
from fractions import Fraction

import av
import numpy as np
import pytest
from helpers import ok, one_line_error, run
from PIL import Image

from kpcacli import FrameModel
from kpcacli.io.sources import FrameSelection, iter_frames
from kpcacli.modelfile.storedframes import FileFrames, SourceFrames

# (file name, encoder, encoder options, codec context settings): groups of pictures of 8
# frames with B-frames, closed (x264's default) and open (x264's open-gop, x265's default CRA
# pictures), in the containers users hold.
CLIPS = {
    "h264.mp4": ("libx264", {"x264-params": "keyint=8:min-keyint=8:bframes=2"}),
    "h264-open-gop.mkv": ("libx264", {"x264-params": "keyint=8:min-keyint=8:bframes=3:open-gop=1"}),
    "hevc.mp4": ("libx265", {"x265-params": "keyint=8:min-keyint=8:bframes=2:log-level=error"}),
    "vp9.webm": ("libvpx-vp9", {"g": "8", "deadline": "realtime", "cpu-used": "8"}),
    "h264.mov": ("libx264", {"x264-params": "keyint=12:bframes=0"}),
    "av1.mkv": ("libsvtav1", {"preset": "12", "svtav1-params": "keyint=8"}),
}


def write_clip(path, frames, codec: str, options: dict, rate: int = 25, colour: bool = False):
    """`frames` (grey ``(n, h, w)`` or RGB ``(n, h, w, 3)``) coded in yuv420p by `codec`."""
    with av.open(str(path), "w") as output:
        stream = output.add_stream(codec, rate=rate, options=options)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        stream.codec_context.time_base = Fraction(1, rate)
        for index, frame in enumerate(frames):
            rgb = frame if colour else np.repeat(frame[..., None], 3, axis=2)
            picture = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format="rgb24").reformat(format="yuv420p")
            picture.pts = index
            for packet in stream.encode(picture):
                output.mux(packet)
        for packet in stream.encode():
            output.mux(packet)


@pytest.fixture(scope="module")
def clips(hand, tmp_path_factory):
    folder = tmp_path_factory.mktemp("source-clips")
    frames = hand[:40, :, :]
    paths = {}
    for name, (codec, options) in CLIPS.items():
        write_clip(folder / name, frames, codec, options)
        paths[name] = folder / name
    return paths


def frames_of(path, selection: str | None = None, colour: bool = False) -> np.ndarray:
    chosen = None if selection is None else FrameSelection.parse(selection)
    return np.stack([f.pixels for f in iter_frames([str(path)], selection=chosen, colour=colour)])


@pytest.mark.parametrize("name", sorted(CLIPS))
@pytest.mark.parametrize("selection", [None, "3::3"])
def test_a_clip_model_keeps_the_clips_packets_and_its_frames_bit_for_bit(clips, tmp_path, name, selection):
    clip = clips[name]
    extra = [] if selection is None else ["--frames", selection]
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "3", "-q", *extra]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "source" and isinstance(state.frames, SourceFrames)
    expected = frames_of(clip, selection).reshape(state.frames.shape[0], -1)
    # Row by row, in a scattered order (each group decoded once and kept), then every frame.
    for row in [5, 0, len(expected) - 1, 6, 1]:
        np.testing.assert_array_equal(state.frames[row], expected[row])
    np.testing.assert_array_equal(np.asarray(FrameModel.load(tmp_path / "m.npz").state_.frames), expected)
    with zipfile.ZipFile(tmp_path / "m.npz") as archive:
        stream = sum(item.file_size for item in archive.infolist() if item.filename.startswith("stream/"))
    assert stream <= clip.stat().st_size  # the packets, not the frames coded again
    assert "the clip's own" in ok(run(["info", "-m", tmp_path / "m.npz"])).stdout


def test_a_colour_model_keeps_the_clips_packets(hand, tmp_path):
    colour = np.stack([hand[:16], np.roll(hand[:16], 7, axis=2), 255 - hand[:16]], axis=3)
    write_clip(tmp_path / "c.mp4", colour, "libx264", {"x264-params": "keyint=6"}, colour=True)
    ok(run(["fit", tmp_path / "c.mp4", "--colour", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "source" and state.frame_store["colour"] is True
    np.testing.assert_array_equal(np.asarray(state.frames), frames_of(tmp_path / "c.mp4", colour=True).reshape(16, -1))


def test_decoding_training_codes_gives_the_training_frames(clips, tmp_path):
    """The whole path through the copied store: fit, encode, decode every code to a video."""
    clip = clips["h264.mp4"]
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "3", "-q", "--frames", "::4"]))
    ok(run(["encode", clip, "--frames", "::4", "-m", tmp_path / "m.npz", "-o", tmp_path / "c.npy", "-q"]))
    ok(run(["decode", tmp_path / "c.npy", "-m", tmp_path / "m.npz", "-o", f"{tmp_path}/d/", "--solver", "nearest"]))
    decoded = np.stack([f.pixels for f in iter_frames([str(tmp_path / "d")])])
    np.testing.assert_array_equal(decoded, frames_of(clip, "::4"))


@pytest.mark.parametrize(
    ("kind", "why"),
    [
        ("mpeg2", "mpeg2video, is not exact across decoders"),
        ("raw", "carry no timestamps"),
        ("tiff", "an image file holds several frames"),
    ],
)
def test_frames_that_cannot_be_copied_are_coded_losslessly_and_say_why(hand, tmp_path, kind, why):
    frames, extra = hand[:12], []
    if kind == "mpeg2":
        source = tmp_path / "c.mpg"
        write_clip(source, frames, "mpeg2video", {})
    elif kind == "raw":
        source = tmp_path / "c.h264"
        write_clip(source, frames, "libx264", {"x264-params": "keyint=4"})
    elif kind == "tiff":
        source = tmp_path / "frames.tif"
        pages = [Image.fromarray(frame) for frame in frames]
        pages[0].save(source, save_all=True, append_images=pages[1:])
    result = ok(run(["fit", source, "-m", tmp_path / "m.npz", "-k", "3", *extra]))
    assert "lossless" in result.output and why in result.output
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "h264" and why in state.frame_store["why"]
    assert why in ok(run(["info", "-m", tmp_path / "m.npz"])).stdout
    np.testing.assert_array_equal(np.asarray(state.frames), frames_of(source).reshape(12, -1))
    one_line_error(
        run(["fit", source, "-m", tmp_path / "s.npz", "-k", "3", "--store", "source", *extra]), 2, "--store", why
    )
    assert not (tmp_path / "s.npz").exists()


def test_landmarks_few_among_their_groups_keep_the_smaller_store(hand, tmp_path):
    """Four landmarks of a clip that is one group of 40 frames: the clip's packets hold ten
    times the frames kept, so the lossless store is coded too and the smaller one kept; both
    sizes are recorded, and the frames come back bit for bit either way."""
    write_clip(tmp_path / "c.mp4", hand[:40], "libx264", {"x264-params": "keyint=250"})
    ok(run(["fit", tmp_path / "c.mp4", "-m", tmp_path / "m.npz", "-k", "2", "-q", "--landmarks", "4"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    why = state.frame_store["why"]
    assert "4 frames kept of the 40" in why
    packets, lossless = (int(number.replace(",", "")) for number in re.findall(r"([\d,]+) bytes", why))
    kept = "source" if packets < lossless else "h264"
    assert state.frame_store["codec"] == kept
    every = frames_of(tmp_path / "c.mp4").reshape(40, -1)
    rows = [int(name.rsplit("[", 1)[1].rstrip("]")) for name in state.frame_names]
    np.testing.assert_array_equal(np.asarray(state.frames), every[rows])


def test_a_frame_that_decodes_to_other_pixels_is_one_error_naming_it(clips, tmp_path):
    """As when another library's decoder differs: the digest recorded at fit no longer matches."""
    clip = clips["h264.mp4"]
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    ok(run(["encode", clip, "--frames", "2", "-m", tmp_path / "m.npz", "-o", tmp_path / "c.npy", "-q"]))
    with zipfile.ZipFile(tmp_path / "m.npz") as source, zipfile.ZipFile(tmp_path / "bad.npz", "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "frame_digests/c/0/0":
                digests = np.frombuffer(data, np.uint8).reshape(-1, 32).copy()
                digests[:, 0] ^= 0xFF  # every frame's digest differs
                data = digests.tobytes()
            target.writestr(item, data)
    result = run(
        ["decode", tmp_path / "c.npy", "-m", tmp_path / "bad.npz", "-o", tmp_path / "d.png", "--solver", "nearest"]
    )
    one_line_error(result, 1, "frame 2 of the model's store decodes to other pixels")
    assert not (tmp_path / "d.png").exists()


@pytest.fixture(scope="module")
def noisy_folders(hand, tmp_path_factory):
    """The first 24 hand frames with sensor-like noise, as JPEG files (smaller than lossless
    H.264 of their frames, which cannot predict noise from frame to frame) and as PNG files."""
    root = tmp_path_factory.mktemp("image-files")
    noise = np.random.default_rng(1).normal(0.0, 6.0, hand[:24].shape)
    frames = np.clip(hand[:24] + noise, 0, 255).astype(np.uint8)
    for kind in ("jpg", "png"):
        (root / kind).mkdir()
        for index, frame in enumerate(frames):
            Image.fromarray(frame).save(
                root / kind / f"f{index:02d}.{kind}", **({"quality": 85} if kind == "jpg" else {})
            )
    return root


def files_of(folder, selection=None) -> np.ndarray:
    return frames_of(folder, selection).reshape(-1, 180 * 320)


def test_image_files_are_kept_as_they_are_where_they_are_the_smaller_store(noisy_folders, tmp_path):
    """JPEG frames: the files' own bytes, smaller than lossless H.264, and the frames back bit
    for bit; both sizes recorded. PNG frames of the same clip: lossless H.264, the smaller."""
    ok(run(["fit", noisy_folders / "jpg", "-m", tmp_path / "j.npz", "-k", "3", "-q", "--frames", "1::2"]))
    state = FrameModel.load(tmp_path / "j.npz").state_
    assert state.frame_store["codec"] == "files" and isinstance(state.frames, FileFrames)
    files, lossless = (
        int(number.replace(",", "")) for number in re.findall(r"([\d,]+) bytes", state.frame_store["why"])
    )
    assert files < lossless and "the 12 image files take" in state.frame_store["why"]
    np.testing.assert_array_equal(state.frames[3], files_of(noisy_folders / "jpg", "1::2")[3])
    np.testing.assert_array_equal(np.asarray(state.frames), files_of(noisy_folders / "jpg", "1::2"))
    assert "the image files' own bytes" in ok(run(["info", "-m", tmp_path / "j.npz"])).stdout

    ok(run(["fit", noisy_folders / "png", "-m", tmp_path / "p.npz", "-k", "3", "-q"]))
    state = FrameModel.load(tmp_path / "p.npz").state_
    files, lossless = (
        int(number.replace(",", "")) for number in re.findall(r"([\d,]+) bytes", state.frame_store["why"])
    )
    assert state.frame_store["codec"] == ("files" if files < lossless else "h264")
    np.testing.assert_array_equal(np.asarray(state.frames), files_of(noisy_folders / "png"))


def test_store_source_keeps_the_image_files_and_every_command_reads_them(noisy_folders, tmp_path):
    ok(run(["fit", noisy_folders / "png", "-m", tmp_path / "m.npz", "-k", "3", "-q", "--store", "source"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "files"
    frame = noisy_folders / "png" / "f05.png"
    ok(run(["encode", frame, "-m", tmp_path / "m.npz", "-o", tmp_path / "c.npy", "-q"]))
    ok(run(["decode", tmp_path / "c.npy", "-m", tmp_path / "m.npz", "-o", tmp_path / "d.png", "--solver", "nearest"]))
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "d.png")), np.asarray(Image.open(frame)))


def test_a_long_group_keeps_a_bounded_number_of_frames_and_decodes_again_when_asked_back(clips, tmp_path, monkeypatch):
    """A group of a clip's copied packets keeps the frames last decoded within its budget (here
    two): asked back for a frame it let go, it decodes the group again from its keyframe."""
    from kpcacli.modelfile.sourcestore import PacketGroupDecoder
    from kpcacli.utils.budgets import BUDGETS

    clip = clips["h264.mov"]  # groups of 12 frames
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    monkeypatch.setattr(BUDGETS, "group_frames", 1)
    frames = FrameModel.load(tmp_path / "m.npz").state_.frames
    expected = frames_of(clip).reshape(frames.shape[0], -1)
    decoders = []
    original = PacketGroupDecoder.__init__

    def spy(self, *args):
        original(self, *args)
        decoders.append(self)

    monkeypatch.setattr(PacketGroupDecoder, "__init__", spy)
    for row in [9, 10, 2, 11, 0, 9, 25, 13]:
        np.testing.assert_array_equal(frames[row], expected[row])
    assert all(len(decoder.kept) <= 2 for decoder in decoders) and len(decoders) == 3  # groups 0, 2, 1


@pytest.mark.parametrize("kind", ["clip", "jpeg"])
def test_resized_frames_keep_their_source_with_the_resize_as_a_recipe(clips, noisy_folders, tmp_path, kind):
    """--resize is recorded beside the source's own bytes (Pillow's Lanczos gives the same bytes
    from Pillow 10.1 to 13.0, docs/model-format.md), each frame's digest guarding it."""
    source = clips["h264.mp4"] if kind == "clip" else noisy_folders / "jpg"
    ok(run(["fit", source, "-m", tmp_path / "m.npz", "-k", "3", "-q", "--resize", "96x54", "--store", "source"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["resize"] == [96, 54] and state.frame_shape == (54, 96)
    expected = np.stack([f.pixels for f in iter_frames([str(source)], resize=(96, 54))]).reshape(-1, 54 * 96)
    np.testing.assert_array_equal(state.frames[4], expected[4])
    np.testing.assert_array_equal(np.asarray(FrameModel.load(tmp_path / "m.npz").state_.frames), expected)


def test_a_clip_whose_groups_do_not_decode_alone_as_it_does_is_coded_losslessly(clips, tmp_path, monkeypatch):
    """Before its frames are decoded from the copied groups, a group's first frame decoded alone
    is compared with the clip's own decode through the container: here the clip's decode is
    made to differ (as a keyframe that later frames reach past would), and the model reads the
    frames as the clip decodes them and codes them losslessly, saying why."""
    import kpcacli.io.packets as packets

    clip = clips["h264.mp4"]
    decode_range = packets.decode_range
    monkeypatch.setattr(packets, "decode_range", lambda *a, **k: (255 - f for f in decode_range(*a, **k)))
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "h264" and state.frame_store["why"] == packets.UNLIKE_THE_CLIP
    np.testing.assert_array_equal(np.asarray(state.frames), frames_of(clip).reshape(40, -1))


@pytest.mark.parametrize("target", ["again.npz", "again.zarr"])
def test_a_loaded_model_saved_again_keeps_its_store_as_it_is(clips, noisy_folders, tmp_path, target):
    """FrameModel.load(...).save(...) (to move a model to a directory or a URL) writes the clip's
    packets or the image files again, not their frames coded losslessly."""
    for source, kind in ((clips["hevc.mp4"], "source"), (noisy_folders / "jpg", "files")):
        ok(run(["fit", source, "-m", tmp_path / "m.npz", "-k", "3", "-q", "--force"]))
        FrameModel.load(tmp_path / "m.npz").save(tmp_path / target)
        again = FrameModel.load(tmp_path / target).state_
        assert again.frame_store == FrameModel.load(tmp_path / "m.npz").state_.frame_store
        assert again.frame_store["codec"] == kind
        np.testing.assert_array_equal(np.asarray(again.frames), frames_of(source).reshape(again.frames.shape))
        if target.endswith(".npz"):
            assert (tmp_path / target).read_bytes() == (tmp_path / "m.npz").read_bytes()


def test_only_the_groups_holding_chosen_frames_are_copied(clips, tmp_path):
    """Frames 9 to 12 of a clip cut in groups of 8: groups 1 (frames 8-15) alone is copied, the
    other four never kept."""
    clip = clips["h264.mp4"]
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "2", "-q", "--frames", "9:13"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    assert state.frame_store["codec"] == "source" and len(state.frames.table) == 1
    assert "its group of pictures holds 8 frames for the 4 kept" in state.frame_store["why"]
    np.testing.assert_array_equal(np.asarray(state.frames), frames_of(clip, "9:13").reshape(4, -1))
