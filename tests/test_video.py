"""Video decoding: the grey of every frame, and frame ranges found by timestamp (kpcacli.io.video)."""

from __future__ import annotations

import contextlib
import json
import re
from fractions import Fraction

import av
import numpy as np
import pytest
from helpers import ok, run
from PIL import Image

from kpcacli.io.sources import iter_frames
from kpcacli.io.video import decode_range, frame_rate, frame_table, grey, grey_frames
from kpcacli.utils.errors import InputError


def textured_frames(count: int, height: int = 64, width: int = 96) -> np.ndarray:
    """Frames with texture and motion, so the encoder uses P- and B-frames."""
    rng = np.random.default_rng(7)
    scene = rng.integers(0, 256, (height, width * 3), dtype=np.uint8)
    return np.stack([np.roll(scene, -3 * i, axis=1)[:, :width] for i in range(count)])


def write_stream(path, frames, codec="libx264", container=None, options=None, rate=25, **context):
    """Encode grey `frames` in yuv420p with `codec` at `rate` fps into `path`, in the
    `container` format its suffix implies unless named, with the muxer's `options` and the
    codec context's settings `context` (``gop_size``, ``max_b_frames``)."""
    with av.open(str(path), "w", format=container, options=options or {}) as output:
        stream = output.add_stream(codec, rate=rate)
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "yuv420p"
        for name, value in context.items():
            setattr(stream.codec_context, name, value)
        for frame in frames:
            picture = av.VideoFrame.from_ndarray(np.repeat(frame[..., None], 3, axis=2), format="rgb24")
            for packet in stream.encode(picture.reformat(format="yuv420p")):
                output.mux(packet)
        for packet in stream.encode():
            output.mux(packet)


def write_clip(path, frames, pix_fmt="yuv420p", gaps=None, gop=8, colour_range=None):
    """Encode grey `frames` with libx264; `gaps` gives each frame's pts step (variable rate)."""
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=25)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = pix_fmt
        stream.codec_context.gop_size = gop
        stream.codec_context.time_base = Fraction(1, 1000)
        if colour_range is not None:
            stream.codec_context.color_range = colour_range
        pts = 0
        for index, frame in enumerate(frames):
            image = av.VideoFrame.from_ndarray(np.repeat(frame[..., None], 3, axis=2), format="rgb24")
            image = image.reformat(format=pix_fmt)
            image.pts = pts
            image.time_base = Fraction(1, 1000)
            pts += gaps[index] if gaps is not None else 40
            for packet in stream.encode(image):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


@pytest.mark.parametrize("pix_fmt", ["yuv420p", "yuv444p", "yuvj420p"])
def test_grey_equals_ffmpegs_grey_conversion(tmp_path, pix_fmt):
    path = tmp_path / "clip.mp4"
    write_clip(path, textured_frames(6), pix_fmt=pix_fmt)
    with av.open(str(path)) as container:
        decoded = list(container.decode(video=0))
    assert decoded and decoded[0].format.name == pix_fmt
    for frame in decoded:
        assert np.array_equal(grey(frame), frame.to_ndarray(format="gray"))
    assert len(list(grey_frames(str(path)))) == 6


def test_video_range_is_stretched_to_full_range(tmp_path):
    """Black and white in video range (16 and 235) come out as 0 and 255."""
    frames = np.zeros((4, 32, 32), dtype=np.uint8)
    frames[:, :, 16:] = 255
    path = tmp_path / "clip.mp4"
    write_clip(path, frames)
    first = next(grey_frames(str(path)))
    assert first[:, :8].max() <= 2 and first[:, 24:].min() >= 253


@pytest.mark.parametrize("variable_rate", [False, True])
def test_frame_ranges_equal_the_same_frames_of_a_full_decode(tmp_path, variable_rate):
    count = 41
    gaps = [40, 40, 120, 33, 40, 7, 40, 80] * 6 if variable_rate else None
    path = tmp_path / "clip.mp4"
    write_clip(path, textured_frames(count), gaps=gaps, gop=8)
    everything = np.stack(list(grey_frames(str(path))))
    table = frame_table(str(path))
    assert len(table) == count == len(everything)
    assert table.keyframe[0] and 1 < table.keyframe.sum() < count  # several GOPs to seek among
    assert np.all(np.diff(table.pts) > 0)
    for start, stop in [(0, 5), (9, 17), (13, 14), (30, count)] + table.ranges(3):
        part = np.stack(list(decode_range(str(path), table, start, stop)))
        assert np.array_equal(part, everything[start:stop]), (start, stop)
    ranges = table.ranges(3)
    assert 2 <= len(ranges) <= 3 and ranges[0][0] == 0 and ranges[-1][1] == count
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert all(table.keyframe[start] for start, _ in ranges)  # no frame decoded twice
    for start, stop in [(9, 17), (30, count)] + ranges:
        window, offset = table.window(start, stop)
        assert window.keyframe[0] and len(window) == stop - start + offset
        part = np.stack(list(decode_range(str(path), window, offset, len(window))))
        assert np.array_equal(part, everything[start:stop]), (start, stop)


def test_frame_ranges_of_a_raw_mpeg_stream_are_its_frames(tmp_path, monkeypatch):
    """After a seek, a raw MPEG-1 stream's parser numbers its frames again: its first frame
    comes back a frame late. A range decoded so is taken again from the start of the file
    (as the frame table was read), never refused and never another frame; the same when a
    seek lands past the range."""
    import kpcacli.io.video

    path = tmp_path / "clip.mpeg"  # a raw MPEG-1 stream with B-frames, without a container
    write_stream(path, textured_frames(30), "mpeg1video", "mpeg1video", gop_size=8, max_b_frames=2)
    everything = np.stack(list(grey_frames(str(path))))
    table = frame_table(str(path))
    assert len(table) == len(everything) == 30
    ranges = [(0, 3), (0, 30), (5, 12), (17, 18), (22, 30)]
    for start, stop in ranges:
        assert np.array_equal(np.stack(list(decode_range(str(path), table, start, stop))), everything[start:stop])
    original = kpcacli.io.video._video

    class SeeksTooFar:  # the container, but every seek lands on the last frame
        def __init__(self, container):
            self.container = container

        def __getattr__(self, name):
            return getattr(self.container, name)

        def seek(self, offset, **options):
            self.container.seek(int(table.pts[-1]), **options)

    @contextlib.contextmanager
    def seeking_too_far(*args):
        with original(*args) as (container, stream):
            yield SeeksTooFar(container), stream

    monkeypatch.setattr(kpcacli.io.video, "_video", seeking_too_far)
    for start, stop in ranges:
        assert np.array_equal(np.stack(list(decode_range(str(path), table, start, stop))), everything[start:stop])


@pytest.mark.parametrize(("suffix", "container", "codec"), [(".h264", "h264", "libx264"), (".hevc", "hevc", "libx265")])
def test_a_raw_stream_without_timestamps_is_read_frame_by_frame(tmp_path, suffix, container, codec):
    """A raw H.264 or H.265 stream (a Raspberry Pi camera's .h264) has no timestamps: its
    frames are numbered as the decoder gives them, every range is decoded from the start,
    and the commands read it as they read any video. Its rate is the stream's own (30 fps),
    not the 25 FFmpeg's raw demuxer assumes."""
    path = tmp_path / f"clip{suffix}"
    write_stream(path, textured_frames(24), codec, container, rate=30)
    assert frame_rate(str(path)) == 30.0
    everything = np.stack(list(grey_frames(str(path))))
    table = frame_table(str(path))
    assert not table.timed and len(table) == len(everything) == 24 and table.ranges(3) == [(0, 24)]
    for start, stop in [(0, 3), (5, 12), (23, 24)]:
        assert np.array_equal(np.stack(list(decode_range(str(path), table, start, stop))), everything[start:stop])
        window, offset = table.window(start, stop)
        assert np.array_equal(
            np.stack(list(decode_range(str(path), window, offset, len(window)))), everything[start:stop]
        )
    ok(run(["extract", path, "--frames", "1::3", "-o", f"{tmp_path / 'third'}/"]))
    written = sorted((tmp_path / "third").iterdir())
    assert len(written) == 8 and np.array_equal(np.asarray(Image.open(written[2])), everything[7])


def test_frame_range_outside_the_video_is_refused(tmp_path):
    path = tmp_path / "clip.mp4"
    write_clip(path, textured_frames(5))
    table = frame_table(str(path))
    with pytest.raises(InputError, match="outside the video's 5 frames"):
        list(decode_range(str(path), table, 3, 9))


@pytest.mark.parametrize("content", [b"", b"not a video at all" * 100])
def test_damaged_video_is_refused(tmp_path, content):
    path = tmp_path / "clip.mp4"
    path.write_bytes(content)
    with pytest.raises(InputError, match="clip.mp4"):
        list(grey_frames(str(path)))
    with pytest.raises(InputError, match="clip.mp4"):
        frame_table(str(path))


def test_a_frame_table_is_demuxed_once_per_version_of_the_file(tmp_path, monkeypatch):
    """Counting the frames for --frames, then reading the chosen ones, demuxes the clip once;
    a rewritten file is demuxed again."""
    import os

    from kpcacli.io import video
    from kpcacli.io.sources import FrameSelection, count_frames, iter_frames

    path = tmp_path / "clip.mp4"
    write_clip(path, textured_frames(12, 16, 24))
    calls = []
    real = video._demux_table
    monkeypatch.setattr(video, "_demux_table", lambda p: calls.append(p) or real(p))
    selection = FrameSelection.parse("2::3")
    assert count_frames([path], selection) == 4
    assert [frame.index for frame in iter_frames([path], selection=selection)] == [2, 5, 8, 11]
    assert len(calls) == 1
    write_clip(path, textured_frames(9, 16, 24))
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    assert count_frames([path]) == 9 and len(calls) == 2
    with pytest.raises(ValueError):
        video.frame_table(str(path)).pts[0] = 1  # shared between uses: read-only


# -- a video cut short ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def cut_clip(tmp_path_factory):
    """A 40-frame faststart MP4 (its index first, as web video is) cut to 70% of its bytes, as
    an interrupted download or `head -c` leaves it: the header still promises 40 frames."""
    folder = tmp_path_factory.mktemp("cut")
    write_stream(folder / "whole.mp4", textured_frames(40), options={"movflags": "faststart"})
    data = (folder / "whole.mp4").read_bytes()
    (folder / "cut.mp4").write_bytes(data[: int(len(data) * 0.7)])
    return folder / "cut.mp4"


def cut_warning(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert len(lines) == 1, result.stderr
    assert "is cut short: its header promises 40 frames" in lines[0]
    return lines[0]


def test_a_cut_video_is_read_up_to_the_cut_with_one_warning_and_one_count(cut_clip, tmp_path):
    """extract, --frames, fit and info agree on how many frames the cut file holds, each
    command says so once, and every frame read is the whole clip's frame."""
    extracted = ok(run(["extract", cut_clip, "-o", f"{tmp_path / 'all'}/"]))
    count = int(re.search(r"(\d+) can be read", cut_warning(extracted)).group(1))
    assert 10 < count < 40 and len(list((tmp_path / "all").iterdir())) == count
    whole = list(grey_frames(str(cut_clip.parent / "whole.mp4")))
    read = [frame.pixels for frame in iter_frames([str(tmp_path / "all")])]
    assert all(np.array_equal(a, b) for a, b in zip(read, whole))
    refused = run(["extract", cut_clip, "--frames", f"{count}:", "-o", f"{tmp_path / 'none'}/"])
    assert refused.exit_code == 1 and f"sources' {count}" in refused.stderr
    cut_warning(refused)
    tail = ok(run(["extract", cut_clip, "--frames", f"{count - 3}:", "-o", f"{tmp_path / 'tail'}/"]))
    cut_warning(tail)
    assert len(list((tmp_path / "tail").iterdir())) == 3
    cut_warning(ok(run(["fit", cut_clip, "-k", "3", "-q", "-m", tmp_path / "m.npz"])))
    info = json.loads(ok(run(["info", "-m", tmp_path / "m.npz", "--json"])).stdout)
    assert info["frames"] == count and info["sizes"]["source_frames"] == count


@pytest.mark.parametrize(
    ("suffix", "codec", "said"),
    [
        (".mkv", "libx264", "its header says it lasts 1.60 s"),
        (".webm", "libvpx-vp9", "its header says it lasts 1.60 s"),
        (".y4m", "rawvideo", "it ends in part of a frame"),
    ],
)
def test_a_cut_clip_without_a_frame_count_warns_as_a_cut_mp4_does(suffix, codec, said, tmp_path):
    """Matroska and WebM state no frame count, but their duration, which a cut file keeps; a
    Y4M file cut in a frame ends in part of one: each is one warning with the count read, as a
    cut MP4 is (it used to fit "24 frames" silently), and the whole file none."""
    from test_source_store import write_clip

    whole, cut = tmp_path / f"whole{suffix}", tmp_path / f"cut{suffix}"
    write_clip(whole, textured_frames(40), codec, {})
    data = whole.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    assert "Warning" not in ok(run(["extract", whole, "-o", tmp_path / "whole.npy"])).stderr
    fitted = ok(run(["fit", cut, "-k", "3", "-q", "-m", tmp_path / "m.npz"]))
    warned = [line for line in fitted.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warned) == 1 and "is cut short" in warned[0] and said in warned[0], fitted.stderr
    count = int(re.search(r"(\d+) (whole )?can be read", warned[0]).group(1))
    assert 10 < count < 40 and f"fitted {count} frames" in fitted.stderr


def test_a_video_that_fails_while_frames_are_written_leaves_no_output(cut_clip, tmp_path, monkeypatch):
    """A decoder that gives fewer frames than the table promised: one error line, and neither
    the new folder nor an earlier run's frames are touched."""
    import kpcacli.io.video

    decoded = kpcacli.io.video.decoded

    def stops_early(container, stream):
        for index, frame in enumerate(decoded(container, stream)):
            if index == 6:
                return
            yield frame

    ok(run(["extract", cut_clip, "--frames", ":2", "-o", f"{tmp_path / 'old'}/"]))
    before = sorted(p.name for p in (tmp_path / "old").iterdir())
    monkeypatch.setattr(kpcacli.io.video, "decoded", stops_early)
    for target in ("new", "old"):
        result = run(["extract", cut_clip, "-o", f"{tmp_path / target}/"])
        assert result.exit_code == 1 and "ended after 6 of its" in result.stderr.splitlines()[-1]
    assert not (tmp_path / "new").exists()
    assert sorted(p.name for p in (tmp_path / "old").iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]
