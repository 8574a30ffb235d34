"""A video's own coded packets, copied without decoding and coding again, and decoded group by
group: the frame store of a model fitted on a clip (``frame_store`` ``source``).

A lossy clip is 10 to 40 times smaller than the same frames coded losslessly, and decoding
H.264, HEVC, VP8, VP9 or AV1 is exact by their standards: the decoder of any conforming
library gives the same pixels for the same packets. So a model keeps the packets of the groups
of pictures that hold its training frames, as the demuxer gave them, and the codec's
parameters (its name and extradata), and decodes them again on demand.

A *group* is a run of packets in decoding order that starts at a keyframe and decodes alone: the
packets up to the next keyframe. A keyframe that frames before it in presentation order still
depend on (an open group of pictures: x265's CRA pictures, the leading B-frames of x264's
``--open-gop``) does not start a group: its packets join the group before, so every group
decodes to its frames exactly.

Which frames are copied is decided by timestamps: frame ``i`` of a clip is the one whose
presentation timestamp is ``pts[i]`` of its frame table (:func:`kpcacli.io.video.frame_table`),
and a group keeps those of its frames that the fit chose. A clip whose packets carry no
timestamps (a raw ``.h264``), repeat one, or hold a codec outside ``COPIED_CODECS`` cannot be
copied; :func:`source_copy` says why, and the model codes its frames losslessly instead. What
kpca does after decoding (grey from the luma plane, ``--colour``, ``--resize``) is recorded
with the codec as a recipe, each frame's digest guarding it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..utils.cores import available_cores
from ..utils.errors import InputError
from .readers import Conversion, Frame, is_video_file
from .video import _video, decode_range, frame_table, pixels

# Codecs whose decoding is exact by their standards (the same pixels from every conforming
# decoder). MPEG-1, MPEG-2 and MPEG-4 part 2 allow decoders to differ in their inverse
# transform's rounding, so their frames are coded losslessly instead.
COPIED_CODECS = ("h264", "hevc", "vp8", "vp9", "av1")
# FFmpeg's decoder for a codec where its own default is not a software one (its native AV1
# decoder needs a hardware accelerator; PyAV's wheels decode AV1 with dav1d).
DECODERS = {"av1": "libdav1d"}
NO_TIMESTAMP = -(2**63)  # a packet without a timestamp (presentation or decoding), in the packet tables
NOT_ONE_VIDEO = "the frames are not one video's"  # several files, of which not all images
UNLIKE_THE_CLIP = "the clip's groups of pictures, decoded alone, did not give the frames the clip decodes to"
SAMPLED_GROUPS = 2  # groups whose first kept frame is decoded both ways before the copy is used
SAMPLE_DEPTH = 8  # ... when it lies within this many frames of its group's keyframe


@dataclass
class PacketGroup:
    """One group of packets in decoding order, starting at a keyframe, decodable alone.

    Attributes
    ----------
    data : bytes
        The packets' bytes end to end.
    sizes, pts, dts : (p,) int64 ndarray
        Each packet's size, presentation and decoding timestamps (``NO_TIMESTAMP``: none).
    kept : (m,) int64 ndarray
        The presentation timestamps of the frames the model keeps from this group,
        increasing: its rows, in order.
    """

    data: bytes
    sizes: np.ndarray
    pts: np.ndarray
    dts: np.ndarray
    kept: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


@dataclass(frozen=True)
class PacketCodec:
    """The decoder a clip's packets need: FFmpeg's decoder `name`, the codec's `extradata`
    (H.264's and HEVC's parameter sets in an MP4), and how a decoded frame becomes a training
    frame (grey: the luma plane; RGB with `colour`; resized to `size`, (width, height), by
    Pillow's Lanczos, whose bytes are the same from Pillow 10.1 to 13.0: docs/model-format.md)."""

    name: str
    extradata: bytes
    colour: bool = False
    size: tuple[int, int] | None = None

    def description(self) -> dict:
        """What the model records of it (``frame_store``)."""
        return {
            "codec": "source",
            "source_codec": self.name,
            "extradata": base64.b64encode(self.extradata).decode("ascii"),
            "colour": self.colour,
            "resize": None if self.size is None else list(self.size),
        }

    @classmethod
    def of(cls, description: dict) -> PacketCodec:
        """The codec a model's ``frame_store`` describes (its values checked by the reader)."""
        size = description.get("resize")
        return cls(
            description["source_codec"],
            base64.b64decode(description["extradata"]),
            description["colour"],
            None if size is None else (int(size[0]), int(size[1])),
        )

    def decode(self, group: PacketGroup, threads: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """The frames `group` keeps, ``(pts, frame)`` in presentation order (each frame as the
        readers convert it: :class:`kpcacli.io.readers.Conversion`), decoding the group from
        its keyframe to its end (or until its last kept frame is out).

        Raises
        ------
        PacketError
            When the decoder fails, or a kept frame does not come out.
        """
        import av

        context = av.CodecContext.create(DECODERS.get(self.name, self.name), "r")
        if self.extradata:
            context.extradata = self.extradata
        # Frame threads on the cores this pass may use, counted (FFmpeg's own count, 0, hangs
        # a decoder closed before its last frame).
        threads = available_cores() if threads is None else threads
        context.thread_count = threads
        if threads > 1:
            context.thread_type = "FRAME"
        conversion = Conversion(self.size, self.colour)
        wanted = iter(group.kept.tolist())
        next_pts = next(wanted, None)
        offsets = np.concatenate([[0], np.cumsum(group.sizes)])
        view = memoryview(group.data)
        flushed = False
        try:
            for number in range(len(group.sizes) + 1):
                if next_pts is None:
                    break
                if number < len(group.sizes):
                    packet = av.Packet(bytes(view[offsets[number] : offsets[number + 1]]))
                    pts, dts = int(group.pts[number]), int(group.dts[number])
                    packet.pts = None if pts == NO_TIMESTAMP else pts
                    packet.dts = None if dts == NO_TIMESTAMP else dts
                else:
                    packet, flushed = None, True  # flush: the frames the decoder still holds
                for frame in context.decode(packet):
                    if frame.pts is None or frame.pts != next_pts:
                        if frame.pts is not None and frame.pts > next_pts:
                            raise PacketError(f"the frame at timestamp {next_pts} did not come out of its group")
                        continue
                    yield next_pts, conversion.pixels(pixels(frame, self.colour))
                    next_pts = next(wanted, None)
                    if next_pts is None:
                        break
        except av.error.FFmpegError as error:
            raise PacketError(f"{self.name} decoding failed ({error})") from None
        finally:
            if not flushed:
                drain(context)
        if next_pts is not None:
            raise PacketError(f"the frame at timestamp {next_pts} did not come out of its group")


def drain(context) -> None:
    """Flush `context`, its frames let go: FFmpeg's frame-threaded decoder, freed with packets
    still in its threads, can wait forever (seen: a decoder left after its first frame hung in
    ``avcodec_free_context``), so a group left before its end (the frames kept are out, or the
    caller stopped) is drained first."""
    import av

    try:
        for _ in context.decode(None):
            pass
    except av.error.FFmpegError:
        pass  # a damaged stream's error was raised already, or is not the caller's concern now


class PacketError(Exception):
    """A group of packets that does not decode to the frames its table promises."""


@dataclass
class SourceCopy:
    """The packets of one clip that hold the frames a request chose, and how to decode them.

    Attributes
    ----------
    path : str
        The clip (what the frames are named after; the model never needs it again).
    codec : PacketCodec
    groups : list of PacketGroup
        The groups holding at least one chosen frame, in order; each keeps its chosen frames.
    indices : list of int
        The chosen frames' numbers in the clip, in order (one per kept frame).
    decoded : bool
        Whether the training frames were decoded from these packets (:meth:`frames`, read to
        its end), as a model decodes them; when they were decoded otherwise (by a cluster's
        workers), the model checks a sample before it keeps the copy.
    """

    path: str
    codec: PacketCodec
    groups: list[PacketGroup]
    indices: list[int]
    decoded: bool = False

    @property
    def nbytes(self) -> int:
        return sum(len(group.data) for group in self.groups)

    @property
    def copied_frames(self) -> int:
        """Frames the copied groups hold in all (kept or not)."""
        return sum(int(np.count_nonzero(group.pts != NO_TIMESTAMP)) for group in self.groups)

    def frames(self) -> Iterator[Frame]:
        """The chosen frames, decoded from the copied packets as a model decodes them, named
        and numbered as :func:`kpcacli.io.sources.iter_frames` names them; a group's decoder
        runs on FFmpeg's frame threads."""
        indices = iter(self.indices)
        for group in self.groups:
            try:
                for _, values in self.codec.decode(group):
                    index = next(indices)
                    yield Frame(f"{self.path}[{index}]", values, index)
            except PacketError as error:
                raise InputError(f"'{self.path}': {error}") from None
        self.decoded = True

    def keeping(self, indices) -> SourceCopy:
        """The copy of only the frames numbered `indices` (a subset of :attr:`indices`, in
        order): the groups that hold none of them are dropped."""
        wanted = set(int(i) for i in indices)
        position, groups = 0, []
        for group in self.groups:
            mine = self.indices[position : position + len(group.kept)]
            position += len(group.kept)
            keep = np.array([index in wanted for index in mine], dtype=bool)
            if keep.any():
                groups.append(PacketGroup(group.data, group.sizes, group.pts, group.dts, group.kept[keep]))
        kept = [i for i in self.indices if i in wanted]
        return SourceCopy(self.path, self.codec, groups, kept, self.decoded)


def source_copy(files: list[str], chosen: range | None, conversion: Conversion) -> SourceCopy | str:
    """The packets of the groups holding the `chosen` frames (all when None) of the one video
    in `files`, or why they cannot be copied (a sentence the model records and ``kpca fit``
    and ``kpca info`` print).

    Raises
    ------
    InputError
        When the video cannot be read (the reading of its frames would say the same).
    """
    if len(files) != 1 or not is_video_file(files[0]):
        return NOT_ONE_VIDEO
    path = files[0]
    table = frame_table(path)
    if not table.timed:
        return "the clip's packets carry no timestamps (a raw stream)"
    if len(np.unique(table.pts)) != len(table.pts):
        return "the clip repeats a timestamp"
    chosen = range(len(table)) if chosen is None else chosen
    wanted = {int(table.pts[index]): int(index) for index in chosen}
    with _video(path) as (container, stream):
        name = stream.codec_context.codec.canonical_name  # the codec's, not its decoder's (libdav1d)
        if name not in COPIED_CODECS:
            return f"the clip's codec, {name}, is not exact across decoders (copied: {', '.join(COPIED_CODECS)})"
        codec = PacketCodec(name, bytes(stream.codec_context.extradata or b""), conversion.colour, conversion.size)
        runs = list(_groups(container, stream, set(wanted)))
    groups, indices = [], []
    for run in runs:
        kept = np.array(sorted(pts for pts in run.pts.tolist() if pts in wanted), dtype=np.int64)
        if kept.size:
            groups.append(PacketGroup(run.data, run.sizes, run.pts, run.dts, kept))
            indices.extend(wanted[pts] for pts in kept.tolist())
    if len(indices) != len(wanted):
        return "the clip's packets do not hold every chosen frame"
    if indices != sorted(indices):
        return "the clip's groups of pictures are not in presentation order"
    copy = SourceCopy(path, codec, groups, indices)
    return copy if _decodes_as_the_clip(copy, table, conversion) else UNLIKE_THE_CLIP


def _decodes_as_the_clip(copy: SourceCopy, table, conversion: Conversion) -> bool:
    """Whether the first kept frame of the first ``SAMPLED_GROUPS`` groups, decoded from its
    group alone, is the frame the clip decodes to (:func:`kpcacli.io.video.decode_range`, from
    the keyframe before it through the container): where a group does not decode alone (a
    keyframe a later frame reaches past), it shows at a group's start. Only frames within
    ``SAMPLE_DEPTH`` frames of their group's keyframe are compared, so the check costs a few
    frames' decoding whatever the groups' length."""
    for group in copy.groups[:SAMPLED_GROUPS]:
        first = int(group.kept[0])
        depth = int(np.count_nonzero((group.pts != NO_TIMESTAMP) & (group.pts < first)))
        if depth >= SAMPLE_DEPTH:
            continue
        index = int(np.searchsorted(table.pts, first))
        sample = PacketGroup(group.data, group.sizes, group.pts, group.dts, group.kept[:1])
        try:
            (_, alone), *_ = copy.codec.decode(sample, threads=1)  # one frame: no frame threads
        except (PacketError, ValueError):
            return False
        (clip,) = decode_range(copy.path, table, index, index + 1, colour=conversion.colour)
        if not np.array_equal(alone, conversion.pixels(clip)):
            return False
    return True


def _groups(container, stream, wanted: set[int]) -> Iterator[PacketGroup]:
    """The clip's groups that hold a frame whose timestamp is in `wanted`, in order: its
    packets cut at keyframes (open groups of pictures joined to the group before), up to the
    first damaged packet (the frame table's frames end there too). A group is let go as soon as
    the next one shows it joins none, so a long clip of which few frames are chosen is never
    held whole."""
    pending: PacketGroup | None = None  # the last group, until the next shows whether it joins it
    run: list[tuple[bytes, int, int]] = []
    for packet in container.demux(stream):
        if packet.is_corrupt:
            break
        if not packet.size:
            continue
        if packet.is_keyframe and run:
            pending, done = _joined(pending, _group(run))
            if done is not None and _holds(done, wanted):
                yield done
            run = []
        run.append((bytes(packet), packet.pts, NO_TIMESTAMP if packet.dts is None else packet.dts))
    if run:
        pending, done = _joined(pending, _group(run))
        if done is not None and _holds(done, wanted):
            yield done
    if pending is not None and _holds(pending, wanted):
        yield pending


def _group(run: list[tuple[bytes, int | None, int]]) -> PacketGroup:
    return PacketGroup(
        b"".join(data for data, _, _ in run),
        np.array([len(data) for data, _, _ in run], dtype=np.int64),
        np.array([NO_TIMESTAMP if pts is None else pts for _, pts, _ in run], dtype=np.int64),
        np.array([dts for _, _, dts in run], dtype=np.int64),
    )


def _joined(pending: PacketGroup | None, group: PacketGroup) -> tuple[PacketGroup, PacketGroup | None]:
    """The group to keep pending after `group`, and the one done: `group` joins `pending` where
    it holds frames before its keyframe (they depend on the group before), else `pending` is
    done and `group` pends."""
    leading = pending is not None and np.any((group.pts != NO_TIMESTAMP) & (group.pts < group.pts[0]))
    if not leading:
        return group, pending
    joined = PacketGroup(
        pending.data + group.data,
        np.concatenate([pending.sizes, group.sizes]),
        np.concatenate([pending.pts, group.pts]),
        np.concatenate([pending.dts, group.dts]),
    )
    return joined, None


def _holds(group: PacketGroup, wanted: set[int]) -> bool:
    return any(int(pts) in wanted for pts in group.pts)
