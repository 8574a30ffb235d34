"""The frame store that keeps a clip's own coded packets (``frame_store`` codec ``source``).

A model fitted on one video keeps the packets of the groups of pictures that hold its training
frames, as the clip holds them (:mod:`kpcacli.io.packets`): no decoding and coding again, and
about the clip's bytes instead of 10 to 40 times them in lossless H.264. The members beside
format 3's ``stream`` (the groups' packets end to end) and ``groups`` (first row, rows, byte
offset, byte length and CRC-32 of each group):

* ``packets``, (P, 3) int64: each packet's size, presentation and decoding timestamp, in
  decoding order, group after group;
* ``frame_pts``, (n,) int64: the presentation timestamp of each training frame, which picks it
  out of its group's decoded frames;
* ``frame_digests``, (n, 32) uint8, as every H.264 store has: each frame's SHA-256, checked
  whenever a frame is decoded, so a library that decodes differently is one clear error naming
  the frame, never a wrong frame.

The attribute ``frame_store`` names the decoder (``source_codec``, FFmpeg's name), its
``extradata`` (base64) and whether frames are RGB (``colour``); grey frames are the decoded
luma plane, as :func:`kpcacli.io.video.grey` reads every video.
"""

from __future__ import annotations

import binascii
import json
from collections import OrderedDict

import numpy as np

from ..io.packets import COPIED_CODECS, PacketCodec, PacketError, PacketGroup, SourceCopy
from ..io.trainingstore import same_digests
from ..utils.budgets import BUDGETS, count_within
from ..utils.errors import ModelFileError
from .filestore import check_resize
from .framecodec import EncodedFrames, FrameCodec, codable

SOURCE_ARRAYS = ("packets", "frame_pts")
SAMPLED_GROUPS = 2  # groups a fit decodes again, to compare, when a cluster loaded the frames


class CopiedFrames(EncodedFrames):
    """A clip's packets as the model file writes them: each group's bytes a stream of
    :class:`~kpcacli.modelfile.framecodec.EncodedFrames`, with the packet tables beside."""

    def __init__(self, copy: SourceCopy, frame_shape: tuple[int, ...], description: dict):
        streams = [group.data for group in copy.groups]
        counts = [len(group.kept) for group in copy.groups]
        packets = np.concatenate([np.stack([g.sizes, g.pts, g.dts], axis=1) for g in copy.groups]).astype(np.int64)
        frame_pts = np.concatenate([group.kept for group in copy.groups]).astype(np.int64)
        arrays = {"packets": packets, "frame_pts": frame_pts}
        super().__init__(FrameCodec(0), streams, counts, tuple(frame_shape), description, arrays)
        self.packet_codec = copy.codec
        self.groups = copy.groups

    def decode_group(self, number: int) -> np.ndarray:
        shape = (len(self.groups[number].kept), int(np.prod(self.frame_shape)))
        return np.stack([values.ravel() for _, values in self.packet_codec.decode(self.groups[number])]).reshape(shape)


def copied_frames(copy: SourceCopy, frame_shape: tuple[int, ...], description: dict) -> CopiedFrames:
    """`copy` as the model stores it, under `description` (:func:`description_of` and the
    store's own words)."""
    return CopiedFrames(copy, frame_shape, {**copy.codec.description(), **description})


def decodes_alike(copy: SourceCopy, digests: list[bytes]) -> bool:
    """Whether the first ``SAMPLED_GROUPS`` groups of `copy`, decoded as a model decodes them,
    give the frames whose SHA-256 are the first of `digests` (frames decoded by another path)."""
    try:
        decoded = [values for group in copy.groups[:SAMPLED_GROUPS] for _, values in copy.codec.decode(group)]
    except PacketError:
        return False
    return same_digests(decoded, digests)


class PacketGroupDecoder:
    """One group of a model's copied packets, decoded as far as its frames are asked for (the
    interface of :class:`kpcacli.modelfile.framecodec.GroupDecoder`).

    A clip's group may hold 250 frames, so it keeps the frames last decoded within
    ``BUDGETS.group_frames`` bytes (at least two), not all: frames asked in increasing order,
    as a decode's batches ask them, decode the group once; a frame asked after it was let go
    decodes the group again from its keyframe, as seeking in the clip would."""

    def __init__(self, codec: PacketCodec, group: PacketGroup, frame_bytes: int):
        self.codec, self.group, self.count = codec, group, len(group.kept)
        self.limit = max(2, count_within(BUDGETS.group_frames, frame_bytes))
        self.kept: OrderedDict[int, np.ndarray] = OrderedDict()
        self._restart()

    def _restart(self) -> None:
        if getattr(self, "frames", None) is not None:
            self.frames.close()  # the decoder drained before it goes (packets.PacketCodec.decode)
        self.frames, self.next = self.codec.decode(self.group), 0

    def frame(self, index: int) -> np.ndarray:
        if index in self.kept:
            return self.kept[index]
        if index < self.next:  # let go of: decode the group again
            self._restart()
        while self.next <= index:
            try:
                _, values = next(self.frames)
            except StopIteration:
                raise PacketError("the group ended before its frames") from None
            self.kept[self.next] = values.ravel()
            self.next += 1
            while len(self.kept) > self.limit:
                self.kept.popitem(last=False)
        return self.kept[index]

    def every_frame(self) -> np.ndarray:
        """Every frame of the group, ``(count, d)``, decoded from its keyframe."""
        return np.stack([values.ravel() for _, values in self.codec.decode(self.group)])


def check_source_description(description: dict, shape: list, name: str = "frame_store") -> PacketCodec:
    """The decoder a ``source`` store's description names, its fields checked."""
    codec = description.get("source_codec")
    if codec not in COPIED_CODECS:
        raise ModelFileError(f"{name} source_codec must be one of {list(COPIED_CODECS)}. Got {codec!r} instead.")
    extradata, colour = description.get("extradata"), description.get("colour")
    if not isinstance(extradata, str) or not isinstance(colour, bool):
        raise ModelFileError(f"{name} must give extradata (base64) and colour. Got {json.dumps(description)[:80]}")
    check_resize(description.get("resize"), shape, name)
    try:
        PacketCodec.of(description)
    except (binascii.Error, ValueError):
        raise ModelFileError(f"{name} extradata is not base64") from None
    if not codable(tuple(shape), np.uint8) or colour != (len(shape) == 3):
        raise ModelFileError(f"a source store holds grey or RGB frames as its colour says; frame_shape is {shape}")
    return PacketCodec.of(description)


def check_packet_tables(packets, frame_pts, table: np.ndarray, stream_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``packets`` and ``frame_pts`` tables, read and checked against the ``groups`` table:
    the packets' sizes add up to the stream, each group starts at a packet, and each frame's
    timestamp is one of its group's packets'."""
    packets, frame_pts = np.asarray(packets[...]), np.asarray(frame_pts[...])
    n = int(table[-1, 0] + table[-1, 1])
    if packets.ndim != 2 or packets.shape[1] != 3 or packets.shape[0] < 1 or packets.dtype.kind != "i":
        raise ModelFileError(f"packets must be a (P, 3) int table. Got {packets.shape} {packets.dtype} instead.")
    if frame_pts.shape != (n,) or frame_pts.dtype.kind != "i":
        raise ModelFileError(f"frame_pts must hold {n} ints. Got {frame_pts.shape} {frame_pts.dtype} instead.")
    starts = np.concatenate([[0], np.cumsum(packets[:, 0])])
    if np.any(packets[:, 0] < 1) or starts[-1] > stream_size or not np.all(np.isin(table[:, 2], starts[:-1])):
        raise ModelFileError("packets does not cut the stream at its groups")
    return packets, frame_pts


class PacketTables:
    """A source store's packet tables, and each group's packets cut out of them."""

    def __init__(self, packets: np.ndarray, frame_pts: np.ndarray, table: np.ndarray):
        self.packets, self.frame_pts, self.table = packets, frame_pts, table
        self.starts = np.concatenate([[0], np.cumsum(packets[:, 0])])

    def group(self, number: int, data: bytes) -> PacketGroup:
        """Group `number`, whose bytes are `data` (read and checked by the caller)."""
        first_row, count, offset, length = (int(v) for v in self.table[number, :4])
        first = int(np.searchsorted(self.starts, offset))
        last = int(np.searchsorted(self.starts, offset + length))
        if self.starts[last] != offset + length:
            raise PacketError("its packets do not end where the group does")
        rows = self.packets[first:last]
        kept = self.frame_pts[first_row : first_row + count]
        if np.any(np.diff(kept) <= 0) or not np.all(np.isin(kept, rows[:, 1])):
            raise PacketError("its frames' timestamps are not among its packets'")
        return PacketGroup(data, rows[:, 0], rows[:, 1], rows[:, 2], kept)
