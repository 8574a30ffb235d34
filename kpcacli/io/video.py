"""Video frames as grey arrays, decoded by PyAV (FFmpeg) without a colour round trip.

A frame's grey is the decoder's own luma plane, taken without conversion and, for video-range
(16–235) content, stretched to 0–255 through a 256-entry table that reproduces FFmpeg's
``gray`` conversion exactly (a test checks it), looked up by OpenCV's LUT, several times faster
than Pillow's ``point`` or numpy's indexing for the same bytes (docs/performance.md, design
measurements): asking PyAV for ``gray`` (swscale) costs more than decoding the frame does.
Pixel formats without an 8-bit luma plane go through swscale.

:func:`frame_table` reads only the packets (no decoding) to number the frames and find the
keyframes, so that :func:`decode_range` can seek to the keyframe before a range and decode
forward: that is how a cluster splits one video among workers. Seeking by timestamp, not by
index at a constant frame rate, keeps variable-frame-rate video right.

A video cut short (a download stopped, ``head -c``) promises in its header frames it does not
hold, and may end in a truncated packet. The frame table holds the frames that can be read:
those before the first damaged packet, in presentation order up to the first missing one. It
says once, with an :class:`~kpcacli.utils.errors.InputWarning`, how many the header promised; every
count (``--frames``, ``info``, ``extract``) and every decoder follows the table.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from PIL import Image

from ..utils.cores import opencv
from ..utils.errors import InputError, InputWarning

# Planar 8-bit formats whose first plane is the luma (Y) plane.
LUMA_PLANE_FORMATS = {"yuv420p", "yuv422p", "yuv444p", "yuv440p", "yuv411p", "yuv410p", "nv12", "nv21", "gray"}
FULL_RANGE_FORMATS = {"yuvj420p", "yuvj422p", "yuvj444p", "yuvj440p", "yuvj411p", "gray"}
FULL_RANGE = 2  # AVCOL_RANGE_JPEG
# Video range 16..235 to 0..255, rounded to nearest, as swscale's gray conversion does.
VIDEO_RANGE_TABLE = np.clip(np.rint((np.arange(256) - 16) * 255.0 / 219.0), 0, 255).astype(np.uint8)


def grey(frame) -> np.ndarray:
    """The grey ``(height, width)`` ``uint8`` array of a decoded PyAV video frame.

    A luma plane is read as it is (video range stretched to 0–255). A frame stored as RGB
    (FFV1's ``bgr0``, a GIF's palette, ...) goes through Pillow's conversion, the one images
    go through (ITU-R 601 luma, Pillow's ``L``): swscale's own rounds differently, and the same
    pixels would no longer compare as identical in a video and in a PNG.
    """
    name = frame.format.name
    if frame.format.is_rgb or frame.format.has_palette:
        return np.asarray(Image.fromarray(frame.to_ndarray(format="rgb24")).convert("L"))
    if name in LUMA_PLANE_FORMATS or name in FULL_RANGE_FORMATS:
        plane = frame.planes[0]
        if name in FULL_RANGE_FORMATS or frame.color_range == FULL_RANGE:
            luma = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size)[:, : frame.width]
            return luma.copy()  # the plane's buffer belongs to the frame
        luma = np.frombuffer(plane, np.uint8).reshape(frame.height, plane.line_size)[:, : frame.width]
        return opencv().LUT(luma, VIDEO_RANGE_TABLE)
    return frame.to_ndarray(format="gray")


@contextlib.contextmanager
def _video(path: str, threads: int | None = None) -> Iterator[tuple]:
    """``(container, stream)`` for the first video stream of `path`, closed afterwards; any
    PyAV failure inside the block becomes one :class:`InputError` naming the file.

    `threads` set the decoder's threads (0: one per core); ``None`` leaves them (demuxing).
    """
    import av  # imported lazily: loading PyAV costs start-up time

    try:
        container = av.open(path)
    except Exception as error:  # PyAV raises many unrelated types for damaged files
        raise InputError(f"cannot decode video '{path}' ({type(error).__name__}: {error})") from None
    try:
        if not container.streams.video:
            raise InputError(f"'{path}' holds no video stream")
        stream = container.streams.video[0]
        if threads is not None:
            stream.thread_type = "AUTO"
            stream.codec_context.thread_count = threads
        yield container, stream
    except InputError:
        raise
    except Exception as error:
        raise InputError(f"cannot decode video '{path}' ({type(error).__name__}: {error})") from None
    finally:
        container.close()


def rgb(frame) -> np.ndarray:
    """The RGB ``(height, width, 3)`` ``uint8`` array of a decoded PyAV video frame, converted
    by swscale (BT.601) from the range the frame declares (full-range streams, such as kpca's
    own, would otherwise be read as video range)."""
    from av.video.reformatter import Interpolation, VideoReformatter

    converted = VideoReformatter().reformat(
        frame,
        format="rgb24",
        src_color_range=frame.color_range or None,
        interpolation=Interpolation.BILINEAR | Interpolation.ACCURATE_RND,
    )
    return converted.to_ndarray()


def pixels(frame, colour: bool) -> np.ndarray:
    """:func:`rgb` or :func:`grey` of a decoded frame."""
    return rgb(frame) if colour else grey(frame)


def grey_frames(path: str, threads: int = 0, colour: bool = False) -> Iterator[np.ndarray]:
    """Every frame of the first video stream of `path`, in presentation order, as ``uint8``
    ``(height, width)`` arrays (``(height, width, 3)`` RGB with `colour`).

    Parameters
    ----------
    threads : int
        FFmpeg decoding threads (0: FFmpeg chooses, one per core).

    Raises
    ------
    InputError
        When the file cannot be opened or decoded, or holds no frame.
    """
    table = frame_table(path)
    count = 0
    with _video(path, threads) as (container, stream):
        for frame in decoded(container, stream):
            if count == len(table):
                break  # the frames past a cut-off are not in the table: not numbered, not read
            count += 1
            yield pixels(frame, colour)
    if count < len(table):
        raise InputError(f"video '{path}' ended after {count} of its {len(table)} frames")


def decoded(container, stream) -> Iterator:
    """The frames of `stream`, decoded in presentation order, stopping before the first damaged
    packet (a cut file's last, truncated one) with the decoder flushed: PyAV's own
    ``container.decode`` raises there, losing the frames the decoder still holds."""
    for packet in container.demux(stream):
        if packet.is_corrupt:
            yield from stream.decode(None)
            return
        yield from stream.decode(packet)  # the demuxer's last, empty packet flushes


@dataclass(frozen=True)
class FrameTable:
    """Where every frame of a video is, from one pass over its packets (no decoding).

    Attributes
    ----------
    pts : (n,) int64 ndarray
        Presentation timestamps in stream time base, in presentation order: frame ``i`` is
        the one whose timestamp is ``pts[i]``.
    keyframe : (n,) bool ndarray
        Whether frame ``i`` starts a keyframe packet (decoding may start there).
    timed : bool
        Whether the packets carry timestamps. A raw H.264 or H.265 stream (``.h264``, as a
        Raspberry Pi camera records) carries none: its frames are numbered in the order the
        decoder gives them (``pts`` is 0, 1, 2, …), and only frame 0 is a keyframe, since
        without timestamps a seek cannot say where it landed.
    """

    pts: np.ndarray
    keyframe: np.ndarray
    cut_short: str | None = None  # what the header promised, when the file holds fewer frames
    timed: bool = True

    def __len__(self) -> int:
        return len(self.pts)

    def ranges(self, parts: int) -> list[tuple[int, int]]:
        """Split the frames into at most `parts` contiguous ``(start, stop)`` ranges that
        start at keyframes.

        Each boundary is the keyframe nearest to an even split, so that decoding a range
        starts at its first frame: a range starting elsewhere would decode, and drop, every
        frame since the keyframe before it (up to a GOP, often 250 frames). A video with one
        keyframe is one range.
        """
        n = len(self)
        parts = max(1, min(parts, n))
        keyframes = np.flatnonzero(self.keyframe[1:]) + 1
        bounds = {0, n}
        if keyframes.size:
            for i in range(1, parts):
                bounds.add(int(keyframes[np.argmin(np.abs(keyframes - i * n / parts))]))
        bounds = sorted(bounds)
        return list(zip(bounds, bounds[1:]))

    def window(self, start: int, stop: int) -> tuple[FrameTable, int]:
        """The part of the table that :func:`decode_range` needs for frames ``start..stop-1``
        (from the keyframe before `start`), and where `start` falls in it: what a cluster
        task is given instead of the whole table."""
        keyframes = np.flatnonzero(self.keyframe[: start + 1])
        first = int(keyframes[-1]) if keyframes.size else 0
        window = FrameTable(self.pts[first:stop], self.keyframe[first:stop], self.cut_short, self.timed)
        return window, start - first


# Demuxers of raw streams that state a rate of their own (FFmpeg's -framerate option, 25 by
# default) whatever the stream holds: the stream's rate is its codec's (H.264's and H.265's
# timing information), and Motion JPEG has none.
RAW_STREAM_FORMATS = {"h264", "hevc", "mjpeg"}


def frame_rate(path: str) -> float | None:
    """The video's average frame rate in frames per second (e.g. 29.97 for 30000/1001), from
    its header, or for a raw H.264 or H.265 stream from the stream's own timing; None when
    neither says (a raw stream without timing, Motion JPEG)."""
    with _video(path) as (container, stream):
        if container.format.name in RAW_STREAM_FORMATS:
            rate = stream.codec_context.framerate
        else:
            rate = stream.average_rate or stream.guessed_rate
    return float(rate) if rate else None


def header_frame_count(path: str) -> int | None:
    """The number of frames the container's header gives (from its frame count, else its
    duration and rate), without reading packets: exact for most mp4 and mkv files, an estimate
    for others (progress bars); None when the header says neither."""
    with _video(path) as (container, stream):
        if stream.frames:
            return int(stream.frames)
        rate = stream.average_rate or stream.guessed_rate
        if stream.duration is not None and stream.time_base is not None and rate:
            return max(1, round(float(stream.duration * stream.time_base * rate)))
        if container.duration is not None and rate:
            return max(1, round(container.duration / 1_000_000 * float(rate)))
    return None


def frame_table(path: str) -> FrameTable:
    """Demux `path` (read packets without decoding them) and number its frames.

    Kept for the file's current version (its path, size and modification time): counting the
    frames for ``--frames`` and then reading the chosen ones, or recording the count in a
    model, demuxed the whole clip once per use. The table's arrays are read-only.
    """
    try:
        stat = os.stat(path)
    except OSError:
        return _demux_table(path)  # the reading says what is wrong, naming the path as given
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns)
    with _TABLES_LOCK:
        table = _TABLES.get(key)
    if table is None:
        table = _demux_table(path)
        with _TABLES_LOCK:
            if len(_TABLES) >= TABLES_KEPT:
                del _TABLES[next(iter(_TABLES))]  # the oldest
            _TABLES[key] = table
    if table.cut_short is not None:  # on every use: a command shows it once ("default" filter)
        warnings.warn(table.cut_short, InputWarning, stacklevel=1)
    return table


TABLES_KEPT = 64
_TABLES: dict[tuple[str, int, int], FrameTable] = {}
_TABLES_LOCK = threading.Lock()  # cluster workers run tasks on threads


def _demux_table(path: str) -> FrameTable:
    entries, damaged = [], None  # (pts, keyframe) in decoding order; the first damaged packet's pts
    untimed, corrupt = 0, False  # packets of a frame without a timestamp (a raw H.264 stream's)
    ends, data_end = {}, 0  # where each stream's last packet ends (its pts units); the data's last byte
    with _video(path) as (container, stream):
        promised = int(stream.frames) or None  # exact in MP4, MOV and AVI headers; 0 elsewhere
        # Matroska and WebM give no frame count but their duration, from the header, which a
        # cut file keeps: every stream's packets (an audio track may outlast the video) must
        # reach it.
        lasts = container.duration / 1_000_000 if container.duration else None
        rate = float(stream.average_rate or stream.guessed_rate or 0)
        raw = container.format.name == "yuv4mpegpipe"  # frames of a fixed size, nothing after the last
        for packet in container.demux():
            index = packet.stream.index
            if packet.pts is not None:
                ends[index] = max(ends.get(index, packet.pts), packet.pts + (packet.duration or 0))
            if index != stream.index:
                continue
            if packet.is_corrupt:
                damaged, corrupt = packet.pts, True
                break
            if packet.pts is not None:
                entries.append((packet.pts, packet.is_keyframe))
            elif packet.size:
                untimed += 1
            if raw and packet.size and packet.pos is not None and packet.pos >= 0:
                data_end = max(data_end, packet.pos + packet.size)
        start = float(stream.start_time * stream.time_base) if stream.start_time is not None else 0.0
        ends = max((float(end * container.streams[index].time_base) for index, end in ends.items()), default=0.0)
    partial = raw and os.path.getsize(path) > data_end > 0  # a Y4M frame cut in its middle
    shorter = (
        promised is None and lasts is not None and rate > 0 and ends - start < lasts - 1.5 / rate
    )  # packets that end well before the duration the header states
    timed = bool(entries) or not untimed  # untimed: no packet has a timestamp (raw H.264)
    cut_short = None
    if not timed:  # frames numbered as decoded, from the start
        pts = np.arange(untimed, dtype=np.int64)
        keyframe = pts == 0
        if corrupt:
            cut_short = _cut_short(path, None, untimed)
    else:
        if not entries:
            if damaged is not None or promised:
                promise = f" (its header promises {promised} frames)" if promised else ""
                raise InputError(f"video '{path}' is cut short before its first whole frame{promise}")
            raise InputError(f"video '{path}' has no frames")
        entries.sort()  # decoding order to presentation order (B-frames)
        pts = np.array([entry[0] for entry in entries], dtype=np.int64)
        keyframe = np.array([entry[1] for entry in entries], dtype=bool)
        if damaged is not None or (promised is not None and len(pts) < promised):
            readable = _readable_prefix(pts, damaged)
            pts, keyframe = pts[:readable], keyframe[:readable]
            cut_short = _cut_short(path, promised, readable)
        elif shorter:
            cut_short = (
                f"video '{path}' is cut short: its header says it lasts {lasts:.2f} s, its frames end at "
                f"{ends - start:.2f} s, {len(pts)} can be read; reading those"
            )
        elif partial:
            cut_short = (
                f"video '{path}' is cut short: it ends in part of a frame, {len(pts)} whole can be read; reading those"
            )
    pts.flags.writeable = keyframe.flags.writeable = False
    return FrameTable(pts, keyframe, cut_short, timed)


def _cut_short(path: str, promised: int | None, readable: int) -> str:
    """What a frame table says of a video cut short: what its header promised, or that it
    ends in a damaged frame, and how many frames can be read."""
    promise = f"its header promises {promised} frames" if promised else "it ends in a damaged frame"
    return f"video '{path}' is cut short: {promise}, {readable} can be read; reading those"


def _readable_prefix(pts: np.ndarray, damaged: int | None) -> int:
    """How many frames of a cut video, in presentation order (`pts` sorted), come before the
    first that cannot be shown: the damaged one, or the first one missing (a gap of more than
    1.5 frame durations: a B-frame whose packet was cut off while a later frame's was not)."""
    readable = len(pts) if damaged is None else int(np.searchsorted(pts, damaged))
    steps = np.diff(pts[:readable])
    if steps.size:
        gaps = np.flatnonzero(steps > 1.5 * np.median(steps))
        if gaps.size:
            readable = int(gaps[0]) + 1
    return readable


def decode_range(
    path: str, table: FrameTable, start: int, stop: int, threads: int = 1, colour: bool = False
) -> Iterator[np.ndarray]:
    """Frames ``start`` to ``stop - 1`` of `path` (numbered as in `table`), as grey arrays.

    Seeks to the last keyframe at or before `start` and decodes forward, keeping the frames
    whose timestamps fall in the range, so the result equals the same frames of
    :func:`grey_frames`. Where the frames decoded after seeking do not carry the table's
    timestamps (a raw stream without an index, such as an MPEG-1 ``.mpeg``, whose parser
    makes its timestamps up again after a seek: its first frame comes back a frame late), the
    rest of the range is decoded from the start of the file instead, as the table was read.
    """
    if not 0 <= start < stop <= len(table):
        raise InputError(f"frame range {start}..{stop} is outside the video's {len(table)} frames")
    wanted = table.pts[start:stop]
    keyframes = np.flatnonzero(table.keyframe[: start + 1])
    seek_to = int(table.pts[keyframes[-1]]) if keyframes.size else int(table.pts[0])
    found = 0  # frames of the range given so far
    # None: from the start of the file, without seeking (an untimed table's only way: its
    # frames are numbered by their place in the decoder's output).
    for seeking in (seek_to, None) if table.timed else (None,):
        with _video(path, threads) as (container, stream):
            if seeking is not None:
                container.seek(seeking, stream=stream, backward=True, any_frame=False)
            astray = False  # whether this pass met another frame than the one wanted next
            for place, frame in enumerate(decoded(container, stream)):
                stamp = frame.pts if table.timed else place
                if stamp is None or stamp < wanted[found]:
                    continue
                if stamp != wanted[found]:  # the frame wanted next did not come
                    astray = True
                    break
                found += 1
                yield pixels(frame, colour)
                if found == len(wanted):
                    return
    if astray:
        raise InputError(f"video '{path}' did not decode frame {start + found} at its timestamp")
    raise InputError(f"video '{path}' ended after {start + found} of {stop} frames")
