"""Training frames as H.264 groups of pictures: the model's frame store (format 3).

A model must keep its training frames (every pre-image is a weighted sum of them), and frames
of a video are alike from one to the next: coded in order by a video codec they take a
fraction of what each frame compressed alone takes. The frames are cut into groups of at most
``GROUP_FRAMES`` consecutive frames, each an independent H.264 stream (its own keyframe, no
reference outside it), so reading one frame decodes at most its group: a decoder that needs
a frame's neighbours reads a bounded part of the store, whatever the training set's size.

* **Lossless** (``crf`` 0): x264's lossless mode (QP 0) at its ``ultrafast`` preset with
  CABAC, two steps of sub-pixel motion search and two reference frames put back
  (``LOSSLESS_OPTIONS``), in groups of 32: a decoder that wants one frame decodes at most 31
  before it. What each option gains is measured in docs/model-format.md
  (``python benchmarks/store_codecs.py``).
* **Lossy** (``crf`` 1–51): x264's constant rate factor at preset ``medium``, tuned for PSNR
  (no psycho-visual optimisation: the frames feed a least-squares model, not an eye).

Grey frames go in as H.264's 4:0:0 (the grey values are the luma plane, exactly), colour
frames as RGB through libx264rgb (4:4:4 without a colour transform, so lossless is exact).
Any size works, odd ones included. Only 8-bit frames are coded this way;
:func:`codable` says which.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..io.packets import drain
from ..utils.cores import available_cores
from ..utils.parallel import ordered_map, thread_budget
from ..utils.progress import progress_bar

GROUP_FRAMES = 32  # frames per independent H.264 stream: what reading one frame may decode
# The lossless store's x264 options: the coding time of the fit's largest step after the Gram.
LOSSLESS_OPTIONS = {"qp": "0", "preset": "ultrafast", "x264-params": "cabac=1:subme=2:ref=2"}
LOSSY_PRESET = "medium"
LOSSLESS_STORE = {"codec": "h264", "crf": 0, "choice": "lossless"}  # what a model records of it
GIVEN_AS_ARRAYS = "the frames were given as arrays"  # why a model saved from memory codes them
MAX_CRF = 51


class FrameCodecError(Exception):
    """A group of frames that does not decode to what its index promises."""


@dataclass(frozen=True)
class FrameCodec:
    """How a model's frames are coded: H.264 at `crf` (0: lossless), grey or RGB.

    Attributes
    ----------
    crf : int
        x264's constant rate factor, 0 (lossless) to 51.
    colour : bool
        RGB frames ``(h, w, 3)`` through libx264rgb; grey ``(h, w)`` through libx264 otherwise.
    preset : str
        x264's preset for a lossy store (default ``LOSSY_PRESET``); decoding does not need it.
    macroblock_tree : bool
        x264's macroblock tree rate control (lossy only), off by default: with it, x264
        (through PyAV, one thread) can code the same frames to different streams when the
        cores are busy (docs/performance.md, design measurements). A model must be a function
        of its inputs, so every store leaves it off.
    """

    crf: int
    colour: bool = False
    preset: str = LOSSY_PRESET
    macroblock_tree: bool = False

    @property
    def lossless(self) -> bool:
        return self.crf == 0

    @property
    def pixel_format(self) -> str:
        return "rgb24" if self.colour else "gray"

    def options(self) -> dict[str, str]:
        if self.lossless:
            return dict(LOSSLESS_OPTIONS)
        options = {"crf": str(self.crf), "preset": self.preset, "tune": "psnr"}
        return options if self.macroblock_tree else {**options, "x264-params": "mbtree=0"}

    def encode(self, frames: np.ndarray) -> bytes:
        """One group: `frames`, ``(m, h, w)`` or ``(m, h, w, 3)`` uint8, as one H.264 stream
        (Annex B byte stream, parameter sets in band)."""
        import av

        height, width = frames.shape[1:3]
        context = av.CodecContext.create("libx264rgb" if self.colour else "libx264", "w")
        context.width, context.height, context.pix_fmt = width, height, self.pixel_format
        context.time_base = Fraction(1, 25)
        # One thread a group: groups are coded side by side on kpca's threads instead.
        context.thread_count = 1
        context.options = self.options()  # one group is one stream: its first frame is its keyframe
        packets = []
        for index, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format=self.pixel_format)
            frame.pts = index
            packets += [bytes(packet) for packet in context.encode(frame)]
        packets += [bytes(packet) for packet in context.encode(None)]
        return b"".join(packets)

    def decode(self, data: bytes, count: int, frame_shape: tuple[int, ...]) -> np.ndarray:
        """The `count` frames of one group, ``(count, d)`` uint8.

        Raises
        ------
        FrameCodecError
            When the stream does not decode to `count` frames of `frame_shape`.
        """
        return GroupDecoder(self, data, count, frame_shape).every_frame()

    def _pixels(self, frame) -> np.ndarray:
        if self.colour:
            return frame.to_ndarray(format="rgb24")
        plane = frame.planes[0]  # the luma plane is the grey frame, row-padded
        rows = np.frombuffer(plane, dtype=np.uint8).reshape(frame.height, plane.line_size)
        return rows[:, : frame.width]


class GroupDecoder:
    """One group's H.264 stream, decoded as far as frames are asked for and no further: the
    frames come out in order, so a decoder that needs frame 3 of 16 decodes 4, and asking for
    frame 9 later goes on from there (half a group on average for a decoder's scattered
    neighbours, instead of every frame of it)."""

    def __init__(self, codec: FrameCodec, data: bytes, count: int, frame_shape: tuple[int, ...]):
        import av

        self.codec, self.count, self.frame_shape = codec, count, tuple(frame_shape)
        self.decoded: list[np.ndarray] = []
        self.context = av.CodecContext.create("h264", "r")
        # Frame threads on the cores this pass may use: a decode reads a group's frames in
        # order, one at a time, and a large lossless frame decodes almost twice as fast on two
        # (the same bytes; docs/performance.md). Groups read side by side (VideoFrames.rows)
        # get a core each.
        threads = available_cores()
        self.context.thread_count = threads
        if threads > 1:
            self.context.thread_type = "FRAME"
        try:
            self.packets = deque([*self.context.parse(bytes(data)), *self.context.parse(None), None])  # None: flush
        except av.error.FFmpegError as error:
            raise FrameCodecError(f"H.264 decoding failed ({error})") from None

    def __del__(self):  # left before its group's end: drained first, or FFmpeg may hang (packets.drain)
        if getattr(self, "packets", None) and self.context.thread_count > 1:
            drain(self.context)

    def frame(self, index: int) -> np.ndarray:
        """Frame `index` of the group (0-based), ``(d,)`` uint8, decoded up to it."""
        self._decode_to(index + 1)
        return self.decoded[index]

    def every_frame(self) -> np.ndarray:
        """Every frame of the group, ``(count, d)`` uint8, the stream read to its end."""
        self._decode_to(self.count)
        return np.stack(self.decoded)

    def _decode_to(self, needed: int) -> None:
        """Decode until `needed` frames are out.

        Raises
        ------
        FrameCodecError
            When the stream ends before, holds frames of another size, or (read to its end)
            does not hold `count` frames.
        """
        import av

        height, width = self.frame_shape[:2]
        needed = min(needed, self.count)
        try:
            while len(self.decoded) < needed and self.packets:
                for frame in self.context.decode(self.packets.popleft()):
                    if (frame.height, frame.width) != (height, width) or len(self.decoded) == self.count:
                        raise FrameCodecError(self._wrong())
                    self.decoded.append(self.codec._pixels(frame).ravel())
            if needed == self.count:  # the whole group: nothing may follow its last frame
                while self.packets:
                    if self.context.decode(self.packets.popleft()):
                        raise FrameCodecError(self._wrong())
        except av.error.FFmpegError as error:
            raise FrameCodecError(f"H.264 decoding failed ({error})") from None
        if len(self.decoded) < needed:
            raise FrameCodecError(self._wrong())

    def _wrong(self) -> str:
        height, width = self.frame_shape[:2]
        return f"a group of {self.count} frames of {width} x {height} decoded to other frames"


def codable(frame_shape: tuple[int, ...], dtype) -> bool:
    """Whether frames of this shape and dtype can be coded as H.264: 8-bit grey or RGB images
    (point data and 16-bit or float frames keep format 2's lossless Blosc store)."""
    shape = tuple(frame_shape)
    return np.dtype(dtype) == np.uint8 and (len(shape) == 2 or (len(shape) == 3 and shape[2] == 3))


def groups(n: int, size: int = GROUP_FRAMES) -> list[range]:
    """The rows of each group of `n` frames: consecutive runs of at most `size`."""
    return [range(first, min(first + size, n)) for first in range(0, n, size)]


@dataclass
class EncodedFrames:
    """A model's frames coded as groups of H.264 (what format 3 stores instead of Blosc chunks).

    Attributes
    ----------
    codec : FrameCodec
    streams : list of bytes
        One independent H.264 stream per group, in row order.
    counts : list of int
        Frames in each group.
    frame_shape : tuple of int
        ``(h, w)`` or ``(h, w, 3)``.
    description : dict
        What the model records of its store (the CRF, how it was chosen, its PSNR against the
        frames it was given): :mod:`kpcacli.modelfile.storechoice`.
    arrays : dict of str to ndarray
        The store's other members, written beside ``stream`` and ``groups``: each frame's
        digest (``frame_digests``), and a copied source's packet tables
        (:mod:`kpcacli.modelfile.sourcestore`).
    """

    codec: FrameCodec
    streams: list[bytes]
    counts: list[int]
    frame_shape: tuple[int, ...]
    description: dict
    arrays: dict = field(default_factory=dict)

    @property
    def n_frames(self) -> int:
        return sum(self.counts)

    @property
    def nbytes(self) -> int:
        return sum(len(stream) for stream in self.streams)

    def decode_group(self, number: int) -> np.ndarray:
        """The frames of group `number`, decoded, ``(count, d)`` uint8."""
        return self.codec.decode(self.streams[number], self.counts[number], self.frame_shape)

    def decoded(self) -> np.ndarray:
        """Every frame, decoded group by group on this process's cores, ``(n, d)`` uint8."""
        numbers = range(len(self.streams))
        return np.concatenate(list(ordered_map(self.decode_group, numbers, available_cores())))


def encode_frames(
    frames, frame_shape: tuple[int, ...], codec: FrameCodec, description: dict, progress: bool = False
) -> EncodedFrames:
    """`frames`, ``(n, d)`` uint8 (a memory map is read one group at a time), coded as groups
    of H.264, the groups side by side on this process's cores."""
    rows = groups(frames.shape[0])

    def encode(group: range) -> bytes:
        return codec.encode(np.asarray(frames[group.start : group.stop]).reshape((len(group), *frame_shape)))

    streams = []
    with progress_bar(progress, desc="coding", total=frames.shape[0], unit="frame") as bar:
        for group, stream in zip(rows, ordered_map(encode, rows, available_cores())):
            streams.append(stream)
            bar.update(len(group))
    return EncodedFrames(codec, streams, [len(group) for group in rows], tuple(frame_shape), description)


class PendingStore:
    """A store still being made beside the fit; :meth:`result` waits for it."""

    def result(self, progress: bool = False) -> EncodedFrames:
        raise NotImplementedError


class BackgroundCoding(PendingStore):
    """The lossless store coded on threads of its own while the caller goes on: a fit codes
    its store while it forms the Gram and the axes, which never read the coded frames.

    The coding runs on one core beside the Gram (the Gram on the other, then the axes on both
    once the coding is done: :meth:`busy_threads`), not while the frames load, when the
    frames' decoding already takes the cores (docs/performance.md, design measurements).

    Each group is coded as it would be alone (one x264 thread), so the bytes are the same
    whatever runs beside them. Leaving the ``with`` block early (an error, Ctrl-C) stops the
    coding after the groups in hand.

    Parameters
    ----------
    frames : (n, d) uint8 array or memory map
    frame_shape : tuple of int
    codec : FrameCodec
    description : dict
        What the model records of its store (:class:`EncodedFrames`).
    threads : int
        Groups coded at once.
    """

    def __init__(self, frames, frame_shape, codec: FrameCodec, description: dict, threads: int = 1):
        self.frames, self.frame_shape, self.codec, self.description = frames, tuple(frame_shape), codec, description
        self.rows = groups(frames.shape[0])
        self.changed = threading.Condition()
        self.claimed, self.done = 0, 0  # groups taken, and frames coded
        self.streams: dict[int, bytes] = {}
        self.error: BaseException | None = None
        self.stopped = False
        self.threads = [
            threading.Thread(target=self._code, name="kpca-store-coding", daemon=True) for _ in range(max(1, threads))
        ]

    def __enter__(self) -> BackgroundCoding:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        with self.changed:
            self.stopped = True
        for thread in self.threads:
            thread.join()

    def busy_threads(self) -> int:
        """Threads still coding: none once every group is coded (or the coding failed)."""
        with self.changed:
            finished = self.error is not None or self.done == self.frames.shape[0]
            return 0 if finished else len(self.threads)

    def _next_group(self) -> int | None:
        with self.changed:
            if self.stopped or self.error is not None or self.claimed == len(self.rows):
                return None
            self.claimed += 1
            return self.claimed - 1

    def _code(self) -> None:
        """Code groups until none is left (on the coding threads, and on the caller's once it
        waits for the result)."""
        with thread_budget(1, blas=False):  # x264 uses no BLAS
            while (number := self._next_group()) is not None:
                group = self.rows[number]
                try:
                    frames = np.asarray(self.frames[group.start : group.stop])
                    stream = self.codec.encode(frames.reshape((len(group), *self.frame_shape)))
                except BaseException as error:  # raised in the caller, by result()
                    with self.changed:
                        self.error = self.error or error
                        self.changed.notify_all()
                    return
                with self.changed:
                    self.streams[number] = stream
                    self.done += len(group)
                    self.changed.notify_all()

    def result(self, progress: bool = False) -> EncodedFrames:
        """The coded frames, once every group is coded (a bar counts what is left, if
        `progress`); the coding's own error, if it failed. The caller codes the groups not yet
        taken itself rather than wait idle: a fit whose Gram and axes are done while groups
        remain finishes them on every core."""
        n = self.frames.shape[0]
        with progress_bar(progress and self.done < n, desc="coding", total=n, unit="frame") as bar:
            self._code()
            shown = 0
            with self.changed:
                while self.error is None and self.done < n:
                    if not any(thread.is_alive() for thread in self.threads):
                        raise RuntimeError("the store's coding stopped before its last group")
                    self.changed.wait(0.1)
                    bar.update(self.done - shown)
                    shown = self.done
        if self.error is not None:
            raise self.error
        streams = [self.streams[number] for number in range(len(self.rows))]
        return EncodedFrames(
            self.codec, streams, [len(group) for group in self.rows], self.frame_shape, self.description
        )


def finished(encoded: EncodedFrames | PendingStore | None, progress: bool = False) -> EncodedFrames | None:
    """`encoded`, waited for if it is still being coded beside the caller."""
    return encoded.result(progress) if isinstance(encoded, PendingStore) else encoded
