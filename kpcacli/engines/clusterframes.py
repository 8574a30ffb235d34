"""The frames of a Dask cluster (:class:`ClusterFrames`, what :class:`kpcacli.engines.cluster.Cluster`
builds its engine on): the sources cut into pieces and loaded on the workers, where they stay
(:class:`Loaded`), their linear Gram by column groups added in a tree (García-González et al.
2021, eq. 8; bit for bit the in-process Gram for integer frames), farthest landmarks, and the
frames a model keeps gathered, compressed on the workers. What the workers run is
:mod:`kpcacli.engines.tasks`; :mod:`kpcacli.engines.cluster`'s docstring says how each pass is cut.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.trainingstore import check_like
from ..modelfile.zarrwrite import FrameCompressor
from ..numerics.gram import LinearGram
from ..numerics.landmarks import farthest_landmarks
from ..utils.budgets import BUDGETS
from ..utils.errors import InputError, ParameterError
from ..utils.progress import progress_bar
from . import tasks
from .pieces import TASKS_PER_THREAD, chosen_in_pieces, cut_pieces, split_rows
from .tasks import Block, GramShare, Piece

GROUP_MIN_COLUMNS = 256


@dataclass
class Loaded:
    """Frames loaded on the cluster: one future per piece, and what the client knows of them."""

    blocks: list  # distributed futures of Block, in frame order
    names: list[str]
    counts: list[int]
    frame_shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def n(self) -> int:
        return sum(self.counts)

    def rows_by_block(self, chosen: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """(block, local rows) for the frames `chosen` (sorted global indices), blocks without
        any left out."""
        return [(index, rows) for index, rows in enumerate(split_rows(chosen, self.counts)) if rows.size]


class ClusterFrames:
    """Frames loaded, reduced and gathered on a dask.distributed cluster through `client`
    (`progress`: bars on standard error; :attr:`timings`: seconds of each phase of the last fit)."""

    def __init__(self, client, progress: bool = False):
        self.client = client
        self.progress = progress
        self.timings: dict[str, float] = {}  # seconds of each phase of the last fit

    @property
    def threads(self) -> int:
        """Worker threads in the cluster (tasks that can run at once)."""
        return max(1, sum(self.client.nthreads().values()))

    # -- loading ----------------------------------------------------------------------------
    def pieces(self, request: FrameRequest) -> list[Piece]:
        """Cut the request's sources into loading tasks: image files in runs, videos in frame
        ranges that start at keyframes where they can; with a selection (``--frames``), each
        keeps only its chosen frames, and pieces without one are left out. Every piece
        converts its frames as the request asks (grey or RGB, resized or not)."""
        return self.chosen_pieces(request)[0]

    def chosen_pieces(self, request: FrameRequest) -> tuple[list[Piece], int | None]:
        """:meth:`pieces`, and the sources' frames in all when a selection had them counted
        (None without one): counted once, by the workers, from headers."""
        files = request.files()
        if "-" in files:
            raise ParameterError("standard input cannot be read by cluster workers; give files the workers can read")
        self.check_readable(sorted({os.path.abspath(path) for path in files}))
        pieces = cut_pieces(files, TASKS_PER_THREAD * self.threads, request.conversion)
        if request.selection is None:
            return pieces, None
        return chosen_in_pieces(pieces, self.counts(pieces), request.selection)

    def check_readable(self, paths: list[str]) -> None:
        """Refuse, in one line, sources that a worker cannot read (not on a file system it
        shares with the client)."""
        for worker, unreadable in sorted(self.client.run(tasks.unreadable, paths).items()):
            if unreadable:
                more = f" (and {len(unreadable) - 1} more)" if len(unreadable) > 1 else ""
                raise InputError(
                    f"worker {worker} cannot read {unreadable[0]}{more}: is it on a file system the workers share?"
                )

    def load(self, request: FrameRequest) -> Loaded:
        """Load every frame of `request` on the workers, checked as the frame store checks
        them (one size; the first frame's dtype)."""
        return self.load_pieces(self.pieces(request))

    def counts(self, pieces: list[Piece]) -> list[int]:
        """Frames in each piece, from headers (a video's from its frame table)."""
        return self._results(self.client.map(tasks.count, pieces, pure=False), "counting")

    def load_pieces(self, pieces: list[Piece], keep: list | None = None) -> Loaded:
        """Load `pieces` on the workers; of piece i keep only the rows ``keep[i]`` when given
        (every frame is still read and checked)."""
        keep = keep if keep is not None else [None] * len(pieces)
        blocks = [self.client.submit(tasks.load, piece, rows, pure=False) for piece, rows in zip(pieces, keep)]
        described: list[Block] = self._results(self.client.map(tasks.describe, blocks, pure=False), "loading")
        first = described[0]
        for other in described[1:]:
            check_like(
                other.first_name,
                other.frame_shape,
                other.rows.dtype,
                first.first_name,
                first.frame_shape,
                first.rows.dtype,
            )
        dtype = first.rows.dtype
        blocks = [
            block if other.rows.dtype == dtype else self.client.submit(tasks.converted, block, dtype.str, pure=False)
            for block, other in zip(blocks, described)
        ]
        names = [name for other in described for name in other.names]
        return Loaded(blocks, names, [len(other.names) for other in described], first.frame_shape, dtype)

    # -- the Gram and landmarks -------------------------------------------------------------
    def linear_gram(self, loaded: Loaded, chosen: np.ndarray | None = None) -> LinearGram:
        """The shifted linear Gram of the frames `chosen` (default: all), as
        :func:`kpcacli.numerics.gram.linear_gram` computes it (bit for bit for integer frames)."""
        clock = time.perf_counter()
        chosen = np.arange(loaded.n) if chosen is None else np.asarray(chosen)
        n, d = len(chosen), int(np.prod(loaded.frame_shape))
        groups = column_groups(n, d, loaded.dtype.itemsize, self.threads)
        bounds = [round(i * d / groups) for i in range(groups + 1)]
        by_block = loaded.rows_by_block(chosen)
        shares = []
        for start, stop in zip(bounds, bounds[1:]):
            parts = [
                self.client.submit(tasks.columns, loaded.blocks[index], rows, start, stop, pure=False)
                for index, rows in by_block
            ]
            shares.append(self.client.submit(tasks.gram_share, parts, start, pure=False))
        self._results(shares, "Gram")  # progress, and the first failure
        while len(shares) > 1:  # a tree sum: exact for integer frames, whatever the order
            pairs = [shares[i : i + 2] for i in range(0, len(shares), 2)]
            shares = [
                self.client.submit(tasks.add_shares, *pair, pure=False) if len(pair) == 2 else pair[0] for pair in pairs
            ]
        total: GramShare = shares[0].result()
        origin = np.empty(d, dtype=total.origins[0][1].dtype)
        for start, part in total.origins:
            origin[start : start + part.size] = part
        self._lap("gram", clock)
        # As linear_gram does: exactly symmetric (each share is already).
        return LinearGram(0.5 * (total.shifted + total.shifted.T), origin, total.origin_dots, float(total.origin_norm2))

    def farthest_landmarks(self, loaded: Loaded, count: int) -> np.ndarray:
        """:func:`kpcacli.numerics.landmarks.farthest_landmarks` over the loaded frames: each step one
        task per piece gives its frames' products with the newest landmark."""
        norms = np.concatenate(
            self._results(self.client.map(tasks.block_norms, loaded.blocks, pure=False), "landmarks")
        )
        starts = np.cumsum([0, *loaded.counts])

        def products_with(index: int) -> np.ndarray:
            block = int(np.searchsorted(starts, index, side="right")) - 1
            latest = self.client.submit(tasks.row, loaded.blocks[block], index - int(starts[block]), pure=False)
            futures = [self.client.submit(tasks.products, other, latest, pure=False) for other in loaded.blocks]
            return np.concatenate(self.client.gather(futures))

        return farthest_landmarks(norms, count, products_with)

    def gather(self, loaded: Loaded, kept: np.ndarray, compressor: FrameCompressor | None = None) -> Iterator[Frame]:
        """The loaded frames `kept` (sorted), in order, from the workers; compressed there for
        the model file when a `compressor` is to receive them."""
        futures = [
            self.client.submit(tasks.rows, loaded.blocks[index], rows, compressor is not None, pure=False)
            for index, rows in loaded.rows_by_block(kept)
        ]
        with progress_bar(self.progress, desc="gathering", total=len(kept), unit="frame") as bar:
            for future in futures:
                names, rows, chunks = future.result()
                for i, (name, row) in enumerate(zip(names, rows)):
                    if compressor is not None:
                        compressor.add(rows.dtype, chunks[i])
                    yield Frame(name, row.reshape(loaded.frame_shape))
                bar.update(len(names))

    def _lap(self, phase: str, since: float) -> float:
        """Record the seconds since `since` as `phase` (:attr:`timings`); return now."""
        now = time.perf_counter()
        self.timings[phase] = now - since
        return now

    def _results(self, futures: list, desc: str) -> list:
        """The results of `futures` in their order, with a progress bar as they complete; the
        first failure (a KpcaError raised on a worker comes back as itself) is raised."""
        from distributed import as_completed

        with progress_bar(self.progress, desc=f"{desc} (cluster)", total=len(futures), unit="task") as bar:
            for future in as_completed(futures, loop=self.client.loop):
                if future.status == "error":
                    future.result()
                bar.update()
        return [future.result() for future in futures]


def column_groups(n: int, d: int, itemsize: int, threads: int) -> int:
    """Gram tasks: at least two per worker thread and at most
    ``BUDGETS.cluster_gram_task`` (:mod:`kpcacli.utils.budgets`) of frames each,
    but no narrower than `GROUP_MIN_COLUMNS` columns."""
    wanted = max(2 * threads, math.ceil(n * d * itemsize / BUDGETS.cluster_gram_task))
    return max(1, min(wanted, d // GROUP_MIN_COLUMNS))
