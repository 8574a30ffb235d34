"""The training frames of a model read from its store on demand: Blosc-compressed frames
(formats 2 and 3) and groups of H.264 (format 3), a frame or a group of rows at a time.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections import OrderedDict
from functools import cached_property

import numpy as np

from ..io.packets import PacketError
from ..io.trainingstore import frame_digest
from ..model.framerows import RowsOnDemand
from ..utils.cores import available_cores
from ..utils.errors import ModelFileError
from ..utils.parallel import ordered_map, thread_budget
from .filestore import FileDecoder, check_files_description
from .framecodec import EncodedFrames, FrameCodec, FrameCodecError, GroupDecoder, codable
from .sourcestore import PacketGroupDecoder, PacketTables, check_packet_tables, check_source_description
from .zarrlayout import CACHED_GROUPS, quiet_numcodecs


class FramesOnDemand(RowsOnDemand):
    """The ``(n, d)`` training frames of a Zarr model, read on demand
    (:class:`kpcacli.model.framerows.RowsOnDemand`): indexing one row (``frames[i]``) reads
    that row alone (:meth:`row`); any other access (slices, ``numpy.asarray``) reads every
    frame once into memory (:attr:`matrix`, which subclasses define as a cached property) and
    serves it from there."""

    @property
    def in_memory(self) -> bool:
        """Whether every frame is read already (then rows are read from memory)."""
        return "matrix" in self.__dict__

    def row(self, index: int) -> np.ndarray:
        """Frame `index` (0 <= index < n), read alone."""
        raise NotImplementedError

    def rows(self, indices, threads: int) -> np.ndarray:
        """The frames at `indices` (increasing), ``(r, d)``, read on `threads` threads, one
        row a task (compressed chunks decompress with the GIL released)."""
        block = np.empty((len(indices), self.shape[1]), dtype=self.dtype)
        for position, values in enumerate(ordered_map(lambda index: self[int(index)], indices, threads)):
            block[position] = values
        return block

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and not self.in_memory:
            index = int(key)
            if not -self.shape[0] <= index < self.shape[0]:
                raise IndexError(f"frame {index} of {self.shape[0]}")
            return self.row(index % self.shape[0])
        return self.matrix[key]

    def __array__(self, dtype=None, copy=None):
        return self.matrix if dtype is None else self.matrix.astype(dtype)


class CompressedFrames(FramesOnDemand):
    """The ``(n, d)`` training frames of a format-2 model, decompressed on demand.

    Indexing one row (``frames[i]``) reads that frame's chunks alone: a decoder needs only
    its neighbours. Any other access (slices, ``numpy.asarray``) decompresses the whole
    matrix once, into memory, and serves it from there.
    """

    def __init__(self, array):
        self.array = array
        self.shape = tuple(int(v) for v in array.shape)
        self.dtype = np.dtype(array.dtype)

    @cached_property
    def matrix(self) -> np.ndarray:
        """Every frame, decompressed, (n, d)."""
        try:
            with quiet_numcodecs():
                return np.asarray(self.array[...])
        except Exception as error:  # zstd and zarr raise their own types for damaged chunks
            raise ModelFileError(f"the frames are damaged ({type(error).__name__}: {error})") from None

    def row(self, index: int) -> np.ndarray:
        try:
            with quiet_numcodecs():
                return np.asarray(self.array[index])
        except Exception as error:
            raise ModelFileError(f"frame {index} is damaged ({type(error).__name__}: {error})") from None


class VideoFrames(FramesOnDemand):
    """The ``(n, d)`` training frames of a format-3 model stored as groups of H.264, decoded
    on demand.

    Indexing one row (``frames[i]``) decodes that frame's group alone (at most
    ``GROUP_FRAMES`` frames), kept among the last ``CACHED_GROUPS`` decoded, so consecutive
    rows decode each group once. Any other access (slices, ``numpy.asarray``) decodes every
    group once, on kpca's threads, into memory, and serves it from there.

    Each frame decoded is checked against its SHA-256 in `digests` (``frame_digests``; models
    written before 2026-11-28 have none): a library that decodes differently is an error
    naming the frame, never a wrong frame.
    """

    dtype = np.dtype(np.uint8)

    def __init__(
        self,
        stream,
        table: np.ndarray,
        codec: FrameCodec,
        frame_shape: tuple[int, ...],
        label: str = "frame",
        digests: np.ndarray | None = None,
    ):
        self.label = label  # what a row is, in errors: "frame" or "axis frame"
        self.digests = digests
        self._checked: set[int] = set()  # rows whose digest was checked
        self.stream = stream
        self.table = table
        self.codec = codec
        self.frame_shape = frame_shape
        self.shape = (int(table[-1, 0] + table[-1, 1]), int(np.prod(frame_shape)))
        self._groups: OrderedDict[int, GroupDecoder] = OrderedDict()
        self._lock = threading.Lock()
        self._group_locks: dict[int, threading.Lock] = {}

    @classmethod
    def of(
        cls, stream, groups, description, shape, name: str = "frame_store", extras: dict | None = None
    ) -> VideoFrames:
        """The frames of a format-3 group's ``stream`` and ``groups`` tables, the table and
        `description` (the attribute `name`) checked first; frames of `shape`. `extras` are
        the store's other arrays: ``frame_digests``, and a source store's packet tables
        (:mod:`kpcacli.modelfile.sourcestore`)."""
        extras = extras or {}
        kind = description.get("codec") if isinstance(description, dict) else None
        source = kind in ("source", "files") and name == "frame_store"  # the source's own bytes
        if not isinstance(description, dict) or not (source or kind == "h264"):
            kinds = "an h264 or source" if name == "frame_store" else "an h264"
            raise ModelFileError(f"{name} must describe {kinds} store. Got {json.dumps(description)[:60]} instead.")
        crf = 0 if source else description.get("crf")
        if not isinstance(crf, int) or isinstance(crf, bool) or not 0 <= crf <= 51:
            raise ModelFileError(f"{name} crf must be an int in [0, 51]. Got {crf!r} instead.")
        if not (isinstance(shape, list) and all(isinstance(v, int) and v > 0 for v in shape)):
            raise ModelFileError(f"frame_shape must be a list of positive ints. Got {json.dumps(shape)[:40]} instead.")
        colour = len(shape) == 3
        if not codable(tuple(shape), np.uint8):
            raise ModelFileError(f"an h264 store holds grey or RGB frames; frame_shape is {shape}")
        if len(groups.shape) != 2 or groups.shape[1] != 5 or groups.shape[0] < 1 or np.dtype(groups.dtype).kind != "i":
            raise ModelFileError(f"groups must be a (G, 5) int table. Got {groups.shape} {groups.dtype} instead.")
        if len(stream.shape) != 1 or np.dtype(stream.dtype) != np.uint8:
            raise ModelFileError(f"stream must be 1-D uint8. Got {stream.shape} {stream.dtype} instead.")
        table = np.asarray(groups[...])
        first, counts, offsets, lengths = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
        ends = np.cumsum(counts)
        consistent = (
            np.all(counts >= 1)
            and np.array_equal(first, ends - counts)
            and np.all(offsets >= 0)
            and np.all(lengths >= 1)
            and np.all(offsets + lengths <= stream.shape[0])
            and np.all((table[:, 4] >= 0) & (table[:, 4] < 2**32))
        )
        if not consistent:
            raise ModelFileError("groups does not describe consecutive frames within the stream")
        digests = extras.get("frame_digests")
        if digests is not None:
            digests = np.asarray(digests[...])
            if digests.shape != (int(ends[-1]), 32) or digests.dtype != np.uint8:
                raise ModelFileError(f"frame_digests must be ({int(ends[-1])}, 32) uint8. Got {digests.shape} instead.")
        label = "axis frame" if name == "linear_axes" else "frame"
        if kind == "files" and source:
            colour, size = check_files_description(description, shape, table, name)
            return FileFrames(stream, table, FrameCodec(0, colour), tuple(shape), label, digests, size)
        if source:
            packet_codec = check_source_description(description, shape, name)
            packets, frame_pts = check_packet_tables(extras["packets"], extras["frame_pts"], table, stream.shape[0])
            tables = PacketTables(packets, frame_pts, table)
            return SourceFrames(
                stream, table, FrameCodec(0, colour), tuple(shape), label, digests, packet_codec, tables
            )
        return cls(stream, table, FrameCodec(crf, colour), tuple(shape), label, digests)

    def group(self, number: int) -> tuple[GroupDecoder, threading.Lock]:
        """Group `number`'s decoder (cached), which decodes its frames as far as they are
        asked for (:class:`kpcacli.modelfile.framecodec.GroupDecoder`), and the lock to hold while
        asking it."""
        with self._lock:
            decoder = self._groups.get(number)
            if decoder is None:
                decoder = self._groups[number] = self._decoder(number)
                while len(self._groups) > CACHED_GROUPS:
                    self._groups.popitem(last=False)
            self._groups.move_to_end(number)
            lock = self._group_locks.setdefault(number, threading.Lock())
        return decoder, lock

    def _decoder(self, number: int) -> GroupDecoder:
        """A decoder of group `number`, its bytes read and checked."""
        data = self._bytes(number)
        try:
            return GroupDecoder(self.codec, data, int(self.table[number, 1]), self.frame_shape)
        except FrameCodecError as error:
            raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None

    def _check(self, row: int, values: np.ndarray) -> np.ndarray:
        """`values`, frame `row` as decoded, once checked against its digest."""
        if self.digests is None or row in self._checked:
            return values
        if frame_digest(values) != self.digests[row].tobytes():
            raise ModelFileError(
                f"{self.label} {row} of the model's store decodes to other pixels than the fit's (its SHA-256 "
                "differs): this PyAV's decoder disagrees with the one that wrote the model; read it with that "
                "version, or fit again"
            )
        self._checked.add(row)
        return values

    def _rows(self, number: int) -> str:
        first, count = int(self.table[number, 0]), int(self.table[number, 1])
        return f"{self.label}s {first}–{first + count - 1} are" if count > 1 else f"{self.label} {first} is"

    def _bytes(self, number: int) -> bytes:
        """Group `number`'s H.264 bytes, their checksum checked."""
        _, _, offset, length, checksum = (int(v) for v in self.table[number])
        try:
            data = np.asarray(self.stream[offset : offset + length]).tobytes()
        except Exception as error:  # zarr's and the zip's own errors for damaged chunks
            raise ModelFileError(f"{self._rows(number)} damaged ({type(error).__name__}: {error})") from None
        if zlib.crc32(data) != checksum:
            raise ModelFileError(f"{self._rows(number)} damaged: the H.264 bytes fail their checksum")
        return data

    def encoded(self, description: dict) -> EncodedFrames:
        """The frames as a writer codes them (:class:`kpcacli.modelfile.framecodec.EncodedFrames`):
        the stored groups' bytes, checked, under `description`, to store them again unchanged."""
        streams = [self._bytes(number) for number in range(len(self.table))]
        counts = [int(count) for count in self.table[:, 1]]
        return EncodedFrames(self.codec, streams, counts, self.frame_shape, description, self._arrays())

    def _arrays(self) -> dict:
        """The store's members beside ``stream`` and ``groups``, to store them again."""
        return {} if self.digests is None else {"frame_digests": self.digests}

    def _decode(self, number: int) -> np.ndarray:
        """Every frame of group `number`, (count, d), each checked against its digest."""
        try:
            frames = self._group_frames(number)
        except (FrameCodecError, PacketError) as error:
            raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None
        first = int(self.table[number, 0])
        for offset, values in enumerate(frames):
            self._check(first + offset, values)
        return frames

    def _group_frames(self, number: int) -> np.ndarray:
        return self._decoder(number).every_frame()

    @cached_property
    def matrix(self) -> np.ndarray:
        """Every frame, decoded, (n, d)."""
        out = np.empty(self.shape, dtype=np.uint8)
        numbers = range(len(self.table))
        for number, frames in zip(numbers, ordered_map(self._decode, numbers, available_cores())):
            first, count = int(self.table[number, 0]), int(self.table[number, 1])
            out[first : first + count] = frames
        return out

    def rows(self, indices, threads: int) -> np.ndarray:
        """The frames at `indices` (increasing), ``(r, d)``: a task a group, so that groups
        decode side by side on `threads` threads (a task a row queued the rows of one group
        behind its lock, one thread decoding while the other waited)."""
        indices = np.asarray(indices, dtype=np.int64)
        numbers = np.searchsorted(self.table[:, 0], indices, side="right") - 1
        runs = np.split(np.arange(len(indices)), np.flatnonzero(np.diff(numbers)) + 1)
        block = np.empty((len(indices), self.shape[1]), dtype=self.dtype)

        workers = max(1, min(threads, len(runs)))
        cores = max(1, available_cores() // workers)  # a group's decoder's threads

        def decode(positions: np.ndarray) -> None:
            with thread_budget(cores, blas=False):
                for position in positions:
                    block[position] = self[int(indices[position])]

        for _ in ordered_map(decode, runs, workers):
            pass
        return block

    def row(self, index: int) -> np.ndarray:
        number = int(np.searchsorted(self.table[:, 0], index, side="right")) - 1
        decoder, lock = self.group(number)
        with lock:  # one thread decodes a group at a time; the others wait for its frames
            try:
                return self._check(index, decoder.frame(index - int(self.table[number, 0])))
            except (FrameCodecError, PacketError) as error:
                raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None


class SourceFrames(VideoFrames):
    """The ``(n, d)`` training frames of a model that keeps its clip's own packets
    (:mod:`kpcacli.modelfile.sourcestore`), read on demand as :class:`VideoFrames` reads its
    groups: a group is decoded once from its keyframe, and keeps the frames the model uses."""

    def __init__(self, stream, table, codec, frame_shape, label, digests, packet_codec, tables: PacketTables):
        super().__init__(stream, table, codec, frame_shape, label, digests)
        self.packet_codec, self.tables = packet_codec, tables

    def _decoder(self, number: int) -> PacketGroupDecoder:
        try:
            group = self.tables.group(number, self._bytes(number))
            return PacketGroupDecoder(self.packet_codec, group, self.shape[1])
        except PacketError as error:
            raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None

    def _arrays(self) -> dict:
        return {**super()._arrays(), "packets": self.tables.packets, "frame_pts": self.tables.frame_pts}


class FileFrames(VideoFrames):
    """The ``(n, d)`` training frames of a model that keeps its image files' own bytes
    (:mod:`kpcacli.modelfile.filestore`): a group is one file, decoded when its frame is asked for."""

    def __init__(self, stream, table, codec, frame_shape, label, digests, size: tuple[int, int] | None):
        super().__init__(stream, table, codec, frame_shape, label, digests)
        self.size = size  # the recorded --resize

    def _decoder(self, number: int) -> FileDecoder:
        return FileDecoder(self._bytes(number), self.codec.colour, self.size, self.frame_shape)
