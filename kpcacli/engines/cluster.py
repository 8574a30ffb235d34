"""Dask as the engine beyond one process: ``--scheduler ADDRESS`` runs loading, the Gram,
encoding and decoding on a dask.distributed cluster (:class:`Cluster`, an
:class:`kpcacli.engines.engine.Engine`, as :class:`kpcacli.engines.engine.InProcess` is for this process).

Without ``--scheduler`` nothing here is imported (nor is Dask). With it (this module is the
client's engine, over the frames it loads on the workers, :mod:`kpcacli.engines.clusterframes`;
what the workers run is :mod:`kpcacli.engines.tasks`):

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
import itertools
import math
import time
from collections import deque
from collections.abc import Iterator

import numpy as np

from ..estimators.reconstruction import Reconstruction, ReconstructOptions
from ..io.filecopy import FileCopy
from ..io.packets import SourceCopy
from ..io.request import FrameRequest
from ..io.trainingstore import TrainingStore
from ..model.state import FittedState
from ..model.validation import check_codes
from ..modelfile.zarrwrite import FrameCompressor
from ..numerics.landmarks import check_landmarks, uniform_landmarks
from ..preimage import DENOISING, prepared_for
from ..utils.budgets import BUDGETS, count_within
from ..utils.errors import KpcaError
from . import tasks
from .clusterframes import ClusterFrames, Loaded
from .connection import cluster_error, connect, restore_logs
from .engine import Training
from .pieces import TASKS_PER_THREAD, split_rows
from .tasks import Piece


class Cluster(ClusterFrames):
    """A connection to a dask.distributed scheduler, and kpca's work expressed as its tasks.

    Use as a context manager: errors of the cluster itself (a lost worker, a closed
    connection) leave it as one-line :class:`kpcacli.utils.errors.KpcaError`.
    """

    def __init__(self, address: str, progress: bool = False):
        self.address = address
        client, self._log_levels = connect(address)
        super().__init__(client, progress)

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
            indices = [numbers[i] for i in positions]
            yield Training(
                store=store,
                indices=indices,
                chosen=chosen,
                total=total,
                compressor=compressor,
                linear_gram_of=lambda rows: self.linear_gram(loaded, kept[rows]),
                codes_of_all=codes_of_all,
                source=_copied(request, indices),
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
        futures = (
            self.client.submit(tasks.decode_batch, remote, codes[start : start + size], solver, neighbours, pure=False)
            for start in range(0, len(codes), size)
        )
        return (frame for frames in self._streamed(futures) for frame in frames)

    def denoise(
        self, state: FittedState, rows: list[np.ndarray], solver: str | None, neighbours: int | None
    ) -> tuple[np.ndarray, list]:
        """`rows` denoised a batch per task (the solver resolved and checked here, before any
        task, as decode does), in order, and their pre-images."""
        # Checked here, before any task; each task resolves auto as the local engine does (a
        # frame the model holds may take another solver: FrameModel.denoise).
        prepared_for(state, solver, neighbours, DENOISING)
        size = max(1, math.ceil(len(rows) / (TASKS_PER_THREAD * self.threads)))
        remote = self.scatter_state(state)
        futures = [
            self.client.submit(tasks.denoise_batch, remote, rows[start : start + size], solver, neighbours, pure=False)
            for start in range(0, len(rows), size)
        ]
        results = self._results(futures, "denoising")
        return np.concatenate([denoised for denoised, _ in results]), [p for _, batch in results for p in batch]

    def reconstruct(
        self, state: FittedState, batches: Iterator, options: ReconstructOptions
    ) -> Iterator[Reconstruction]:
        """Each of `batches` completed by one task (:func:`kpcacli.engines.tasks.reconstruct_batch`),
        in order, at most two batches per worker thread in flight so that a long clip streams.
        The solver is resolved and prepared here, before any task (as decode does)."""
        options = dataclasses.replace(options, solver=prepared_for(state, options.solver, options.neighbours).name)
        remote = self.scatter_state(state)
        futures = (
            self.client.submit(tasks.reconstruct_batch, remote, frames, observed, options, pure=False)
            for frames, observed in batches
        )
        return self._streamed(futures)

    # -- the parts --------------------------------------------------------------------------------
    def _streamed(self, futures: Iterator) -> Iterator:
        """The results of `futures`, a lazy iterator that submits one task each step, in order,
        with at most two tasks per worker thread in flight, so that a long clip streams: a task
        is submitted as each result is taken. Nothing is submitted before the first result is
        asked for."""
        pending: deque = deque(itertools.islice(futures, 2 * self.threads))
        while pending:
            result = pending.popleft().result()
            pending.extend(itertools.islice(futures, 1))
            yield result

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


def _copied(request: FrameRequest, indices: list[int]) -> SourceCopy | FileCopy | str:
    """The source's own bytes of the frames numbered `indices` (a clip's packets, image files),
    copied on the client, where it reads the source too; the workers decoded the frames by another path, so the model's store
    checks a sample against them before it is written (:mod:`kpcacli.modelfile.storechoice`)."""
    try:
        source = request.source_copy()
    except KpcaError:
        return "the client cannot read the source the workers loaded"
    return source if isinstance(source, str) else source.keeping(indices)
