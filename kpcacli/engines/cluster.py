"""Dask as the engine beyond one process: ``--scheduler ADDRESS`` runs loading, the Gram,
encoding and decoding on a dask.distributed cluster (:class:`Cluster`, an
:class:`kpcacli.engines.engine.Engine`, as :class:`kpcacli.engines.engine.InProcess` is for this process).

Without ``--scheduler`` nothing here is imported (nor is Dask). With it (this module is the
client; what the workers run is :mod:`kpcacli.engines.tasks`):

* **Loading.** The sources are cut into pieces, each loaded by one task on a worker and kept
  in that worker's memory: runs of image files, and ranges of a video's frames. A video's
  ranges come from a demux-only pass on the client (:func:`kpcacli.io.video.frame_table`): each
  task seeks to the keyframe before its range and decodes forward by timestamp, so variable
  frame rates stay right. Frames are named, resized and converted exactly as in-process
  (:mod:`kpcacli.io.sources`, :mod:`kpcacli.io.trainingstore`).
* **The Gram.** ``L = Σ_c (X_c − 1 s_cᵀ)(X_c − 1 s_cᵀ)ᵀ`` over groups c of pixel columns
  (García-González et al. 2021, eq. 8, in the shifted form of :mod:`kpcacli.numerics.gram`): one task per
  group gathers its columns of the chosen frames from the pieces and computes its share on one
  thread; the shares are added in a tree. For integer frames each share is a matrix of exact
  integers held in float64, so their sum, in any order, is the in-process Gram bit for bit and
  the model is the same file.
* **Landmarks.** Uniform ones are read in a pass that keeps only them; farthest ones step
  through :func:`kpcacli.numerics.landmarks.farthest_landmarks` with one task per piece at each step.
* **Encoding and decoding.** The fitted state is sent to every worker once; each task encodes
  a piece (or decodes a batch of codes) on one thread; the client gathers results in order.

The client writes the model (:mod:`kpcacli.workflows`): the frames it keeps (all, or the
landmarks) are gathered already compressed by the workers. Workers must read the sources at
the paths the client gives (a shared file system), and run the same kpcacli.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..estimators.partial import Completion, Reconstruction
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.trainingstore import TrainingStore, check_like
from ..model.state import FittedState
from ..model.validation import check_codes
from ..modelfile.zarrwrite import FrameCompressor
from ..numerics.gram import LinearGram
from ..numerics.landmarks import check_landmarks, farthest_landmarks, uniform_landmarks
from ..preimage import prepared_for
from ..utils.budgets import BUDGETS, count_within
from ..utils.errors import InputError, ParameterError
from ..utils.progress import progress_bar
from . import tasks
from .connection import cluster_error, connect, restore_logs
from .engine import Training
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


class Cluster:
    """A connection to a dask.distributed scheduler, and kpca's work expressed as its tasks.

    Use as a context manager: errors of the cluster itself (a lost worker, a closed
    connection) leave it as one-line :class:`kpcacli.utils.errors.KpcaError`.
    """

    def __init__(self, address: str, progress: bool = False):
        self.address = address
        self.progress = progress
        self.timings: dict[str, float] = {}  # seconds of each phase of the last fit
        self.client, self._log_levels = connect(address)

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        try:
            self.client.close()
        finally:
            restore_logs(self._log_levels)
        if error is not None:
            replacement = cluster_error(self.address, error)
            if replacement is not None:
                raise replacement from None

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

    # -- the Gram -------------------------------------------------------------------------------
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

    # -- the engine's work (kpcacli.engines.engine.Engine) ----------------------------------------------
    @contextlib.contextmanager
    def training(
        self,
        request: FrameRequest,
        directory,
        *,
        landmarks: int | None = None,
        landmark_method: str = "uniform",
        compress: bool = True,
    ) -> Iterator[Training]:
        """:meth:`kpcacli.engines.engine.Engine.training` on the cluster: the frames load on the
        workers and stay there; only those the model keeps come to the client, compressed
        there for the model file. Uniform landmarks are read in two passes that each hold one
        piece per task, so the workers never hold the clip (224 GB for an hour of 1080p): the
        first keeps only the landmarks, the second encodes (decoding a frame twice costs little
        beside encoding it against the landmarks, some 2 GFLOP a frame at 1080p). Farthest
        landmarks need every frame at every step, so the workers hold them all, as the
        in-process store does."""
        check_landmarks(landmarks, landmark_method)
        clock = time.perf_counter()
        pieces, total = self.chosen_pieces(request)
        if landmarks is not None and landmark_method == "uniform":
            counts = self.counts(pieces)
            chosen = sum(counts)
            positions = uniform_landmarks(chosen, landmarks)
            loaded = self.load_pieces(pieces, split_rows(positions, counts))
            kept = np.arange(loaded.n)  # only the landmarks were kept

            def codes_of_all(state: FittedState) -> np.ndarray:
                return self.encode_pieces(state, pieces)[0]

        else:
            loaded = self.load_pieces(pieces)
            chosen = loaded.n
            if landmarks is not None and landmarks < chosen:
                kept = positions = self.farthest_landmarks(loaded, landmarks)
            else:
                kept = positions = np.arange(chosen)

            def codes_of_all(state: FittedState) -> np.ndarray:
                return self.encode_loaded(state, loaded)

        # The kept frames' numbers among the sources' frames, as one process numbers them.
        numbers = request.selection.indices(total) if request.selection is not None else range(chosen)
        clock = self._lap("loading", clock)
        with (
            FrameCompressor() if compress else contextlib.nullcontext() as compressor,
            TrainingStore(directory) as store,
        ):
            store.extend(self.gather(loaded, kept, compressor=compressor), progress=False)
            self._lap("gathering", clock)
            yield Training(
                store=store,
                indices=[numbers[i] for i in positions],
                chosen=chosen,
                total=total,
                compressor=compressor,
                linear_gram_of=lambda rows: self.linear_gram(loaded, kept[rows]),
                codes_of_all=codes_of_all,
            )

    def encode(self, state: FittedState, request: FrameRequest) -> tuple[np.ndarray, np.ndarray]:
        """Codes of every frame of `request`, each piece loaded and encoded by one task (the
        frames never leave their worker), and each frame's distance to its nearest training
        frame (:func:`kpcacli.estimators.batches.encode_frames`)."""
        return self.encode_pieces(state, self.pieces(request))

    def decode(self, state: FittedState, codes: np.ndarray, solver: str | None, neighbours: int | None) -> Iterator:
        """Frames decoded from `codes`, in order, a batch per task, at most two batches per
        worker thread in flight so that a long clip streams. The codes and the solver are
        checked and the solver resolved here, before any task (:func:`kpcacli.preimage.prepared_for`,
        as :meth:`kpcacli.estimators.estimator.FrameModel.decode_iter` does); each worker
        prepares it once (:func:`kpcacli.preimage.prepared_solver`)."""
        codes = check_codes(state, codes)
        solver = prepared_for(state, solver, neighbours).name  # auto resolved here, not on every worker
        frame_bytes = 8 * int(np.prod(state.frame_shape))
        per_thread = math.ceil(len(codes) / (TASKS_PER_THREAD * self.threads))
        size = min(per_thread, count_within(BUDGETS.cluster_decode, frame_bytes))
        remote = self.scatter_state(state)
        batches = iter(range(0, len(codes), size))
        pending: deque = deque()

        def submit() -> None:
            for start in batches:
                pending.append(
                    self.client.submit(
                        tasks.decode_batch, remote, codes[start : start + size], solver, neighbours, pure=False
                    )
                )
                return

        def frames() -> Iterator:
            for _ in range(2 * self.threads):
                submit()
            while pending:
                frames = pending.popleft().result()
                submit()
                yield from frames

        return frames()

    def denoise(
        self, state: FittedState, rows: list[np.ndarray], solver: str | None, neighbours: int | None
    ) -> tuple[np.ndarray, list]:
        """`rows` denoised a batch per task (the solver resolved and checked here, before any
        task, as decode does), in order, and their pre-images."""
        # Checked here, before any task; each task resolves auto as the local engine does (a
        # frame the model holds may take another solver: FrameModel.denoise).
        prepared_for(state, solver, neighbours, denoising=True)
        size = max(1, math.ceil(len(rows) / (TASKS_PER_THREAD * self.threads)))
        remote = self.scatter_state(state)
        futures = [
            self.client.submit(tasks.denoise_batch, remote, rows[start : start + size], solver, neighbours, pure=False)
            for start in range(0, len(rows), size)
        ]
        results = self._results(futures, "denoising")
        return np.concatenate([denoised for denoised, _ in results]), [p for _, batch in results for p in batch]

    def reconstruct(self, state: FittedState, batches: Iterator, options: Completion) -> Iterator[Reconstruction]:
        """Each of `batches` completed by one task (:func:`kpcacli.engines.tasks.reconstruct_batch`),
        in order, at most two batches per worker thread in flight so that a long clip streams.
        The solver is resolved and prepared here, before any task (as decode does)."""
        options = dataclasses.replace(options, solver=prepared_for(state, options.solver, options.neighbours).name)
        remote = self.scatter_state(state)
        pending: deque = deque()

        def submit() -> None:
            for frames, observed in batches:
                pending.append(
                    self.client.submit(tasks.reconstruct_batch, remote, frames, observed, options, pure=False)
                )
                return

        def completed() -> Iterator[Reconstruction]:
            for _ in range(2 * self.threads):
                submit()
            while pending:
                result = pending.popleft().result()
                submit()
                yield result

        return completed()

    # -- the parts --------------------------------------------------------------------------------
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

    def _lap(self, phase: str, since: float) -> float:
        """Record the seconds since `since` as `phase` (:attr:`timings`); return now."""
        now = time.perf_counter()
        self.timings[phase] = now - since
        return now

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

    def scatter_state(self, state: FittedState):
        """Send the fitted state to every worker once (frames as a plain array)."""
        portable = dataclasses.replace(state, frames=np.asarray(state.frames))
        return self.client.scatter(portable, broadcast=True, hash=False)

    def encode_loaded(self, state: FittedState, loaded: Loaded) -> np.ndarray:
        """Codes of every loaded frame, in order."""
        clock = time.perf_counter()
        remote = self.scatter_state(state)
        futures = [self.client.submit(tasks.encode_block, block, remote, pure=False) for block in loaded.blocks]
        codes = np.concatenate(self._results(futures, "encoding"))
        self._lap("encoding", clock)
        return codes

    def encode_pieces(self, state: FittedState, pieces: list[Piece]) -> tuple[np.ndarray, np.ndarray]:
        """Codes of every frame of `pieces`, each loaded and encoded by one task, and their
        distances to the nearest training frame."""
        clock = time.perf_counter()
        remote = self.scatter_state(state)
        futures = [self.client.submit(tasks.encode_piece, piece, remote, pure=False) for piece in pieces]
        results = self._results(futures, "encoding")
        self._lap("encoding", clock)
        return np.concatenate([codes for codes, _ in results]), np.concatenate([d for _, d in results])

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
