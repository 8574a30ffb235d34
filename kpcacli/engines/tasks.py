"""What a Dask cluster's workers run for :class:`kpcacli.engines.cluster.Cluster`: module
functions, which travel to the workers by reference (the workers run the same kpcacli), over
pieces of the sources kept in the workers' memory.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..estimators.batches import encode_frames, encode_rows
from ..estimators.operations import denoise
from ..estimators.reconstruction import Reconstruction, ReconstructOptions
from ..io.readers import Conversion, Frame, video_frames_in, video_range_frames
from ..io.sources import FrameSelection, count_frames, iter_frames
from ..io.trainingstore import check_like_first, convert, store_dtype
from ..io.video import FrameTable
from ..model.state import FittedState
from ..modelfile.zarrlayout import compress_frame
from ..numerics.gram import frame_products, linear_gram
from ..numerics.landmarks import square_norms
from ..preimage.decoding import decoded_frames
from ..utils.errors import InputError, KpcaError
from ..utils.parallel import thread_budget


# -- what the workers run (module functions: they travel by reference) ----------------------
@dataclass(frozen=True)
class Piece:
    """Frames one task loads: a run of files, or frames ``start..stop-1`` of a video window
    (:meth:`kpcacli.io.video.FrameTable.window`) whose frame ``start`` is frame `first` of the video."""

    paths: tuple[str, ...]
    table: FrameTable | None = None
    start: int = 0
    stop: int = 0
    first: int = 0
    keep: range | None = None  # only these of its frames (--frames), as numbered within it
    conversion: Conversion = Conversion()  # grey or RGB, resized or not, as the request asks
    labels: tuple[str, ...] = ()  # `paths` as the user gave them: frames are named after these

    def frames(self) -> Iterator[Frame]:
        """The piece's frames, read at the absolute `paths` (a worker's working directory is
        not the client's) and named after the `labels`, as one process names them."""
        frames = self._read()
        if not self.labels:
            return frames
        names = dict(zip(self.paths, self.labels))
        return (dataclasses.replace(frame, name=_relabel(frame.name, names)) for frame in frames)

    def _read(self) -> Iterator[Frame]:
        conversion = self.conversion
        if self.table is None:
            selection = FrameSelection.of_range(self.keep) if self.keep is not None else None
            return iter_frames(self.paths, resize=conversion.size, selection=selection, colour=conversion.colour)
        if self.keep is None:
            return video_range_frames(self.paths[0], self.table, self.start, self.stop, self.first, conversion)
        # Numbered in the window's table, decoded from the first kept frame to the last.
        window = range(self.start + self.keep.start, self.start + self.keep.stop, self.keep.step)
        return video_frames_in(self.paths[0], self.table, self.first - self.start, window, conversion)

    def known_count(self) -> int | None:
        """Frames it yields, when known without reading them."""
        if self.keep is not None:
            return len(self.keep)
        return self.stop - self.start if self.table is not None else None


@dataclass
class Block:
    """A loaded piece, kept on its worker: frames as rows in the store's dtype, their names,
    and the name of the piece's first frame (kept or not: error messages name it)."""

    names: list[str]
    rows: np.ndarray
    frame_shape: tuple[int, ...]
    first_name: str


@dataclass
class GramShare:
    """One column group's part of the shifted linear Gram (:class:`kpcacli.numerics.gram.LinearGram`)."""

    shifted: np.ndarray
    origin_dots: np.ndarray
    origin_norm2: float
    origins: list[tuple[int, np.ndarray]]  # (first column, s over the group's columns)


def _relabel(name: str, labels: dict[str, str]) -> str:
    """A frame's name (``path`` or ``path[i]``) with its path as the user gave it."""
    path, bracket, rest = name.rpartition("[") if name not in labels else (name, "", "")
    return labels.get(path, path) + bracket + rest


def on_worker(task):
    """A task that sends kpca's errors back as themselves, with no context: an InputError
    raised while PyAV's own exception was handled carries it in its context, which does not
    unpickle on the client, so Dask sent a bare "Exception: InputError(...)" instead."""

    @functools.wraps(task)
    def run(*args, **kwargs):
        try:
            return task(*args, **kwargs)
        except KpcaError as error:
            failure = type(error)(*error.args)
        raise failure  # outside the handler: no context

    return run


def unreadable(paths: list[str]) -> list[str]:
    """The `paths` this worker cannot read."""
    return [path for path in paths if not os.access(path, os.R_OK)]


@on_worker
def load(piece: Piece, keep: np.ndarray | None = None) -> Block:
    """The frames of `piece`, checked (one size) and in the first one's store dtype; only
    the rows `keep` of them when given (the others are checked, then dropped)."""
    with thread_budget(1):
        frames = list(piece.frames())
    if not frames:
        raise InputError(f"'{piece.paths[0]}' holds no frames")
    first = frames[0]
    for frame in frames[1:]:
        check_like_first(frame, first)
    dtype = store_dtype(first.pixels.dtype)
    kept = frames if keep is None else [frames[i] for i in keep]
    rows = np.empty((len(kept), first.pixels.size), dtype=dtype)
    for row, frame in zip(rows, kept):
        row[:] = convert(frame.pixels, dtype).reshape(-1)
    return Block([frame.name for frame in kept], rows, tuple(first.pixels.shape), first.name)


@on_worker
def count(piece: Piece) -> int:
    known = piece.known_count()
    return known if known is not None else count_frames(piece.paths)


def describe(block: Block) -> Block:
    """The block without its pixels: what the client needs to know of it."""
    return dataclasses.replace(block, rows=np.empty((len(block.rows), 0), dtype=block.rows.dtype))


def converted(block: Block, dtype: str) -> Block:
    rows = np.empty(block.rows.shape, dtype=dtype)
    for row, source in zip(rows, block.rows):
        row[:] = convert(source, np.dtype(dtype))
    return dataclasses.replace(block, rows=rows)


def columns(block: Block, rows: np.ndarray, start: int, stop: int) -> np.ndarray:
    return np.ascontiguousarray(block.rows[rows, start:stop])


def gram_share(parts: list[np.ndarray], start: int) -> GramShare:
    with thread_budget(1):
        gram = linear_gram(np.concatenate(parts), workers=1)
    return GramShare(gram.shifted, gram.origin_dots, gram.origin_norm2, [(start, gram.origin)])


def add_shares(a: GramShare, b: GramShare) -> GramShare:
    return GramShare(
        a.shifted + b.shifted, a.origin_dots + b.origin_dots, a.origin_norm2 + b.origin_norm2, a.origins + b.origins
    )


def rows(block: Block, kept: np.ndarray, compress: bool) -> tuple[list[str], np.ndarray, list | None]:
    """The rows `kept` of a block, their names, and each compressed for the model file when
    `compress`."""
    with thread_budget(1):
        rows = block.rows if len(kept) == len(block.rows) else block.rows[kept]  # no copy of a whole block
        return [block.names[i] for i in kept], rows, [compress_frame(row) for row in rows] if compress else None


def block_norms(block: Block) -> np.ndarray:
    with thread_budget(1):
        return square_norms(block.rows)


def row(block: Block, index: int) -> np.ndarray:
    return np.asarray(block.rows[index], dtype=np.float64)


def products(block: Block, vector: np.ndarray) -> np.ndarray:
    with thread_budget(1):
        return frame_products(block.rows, vector)


@on_worker
def encode_block(block: Block, state: FittedState) -> np.ndarray:
    with thread_budget(1):
        return encode_rows(state, block.rows)


@on_worker
def encode_piece(piece: Piece, state: FittedState) -> tuple[np.ndarray, np.ndarray]:
    with thread_budget(1):
        return encode_frames(state, piece.frames())


@on_worker
def denoise_batch(state: FittedState, rows: list[np.ndarray], solver: str, neighbours: int | None) -> tuple:
    with thread_budget(1):
        return denoise(state, rows, solver, neighbours)


@on_worker
def reconstruct_batch(
    state: FittedState, frames: np.ndarray, observed: np.ndarray, options: ReconstructOptions
) -> Reconstruction:
    with thread_budget(1):
        return options.run(state, frames, observed)


@on_worker
def decode_batch(state: FittedState, codes: np.ndarray, solver: str, neighbours: int | None) -> np.ndarray:
    with thread_budget(1):
        return np.stack(list(decoded_frames(state, codes, solver, neighbours)))
