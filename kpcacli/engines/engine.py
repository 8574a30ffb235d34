"""Engines: where a workflow's frames are loaded and its passes over pixels run.

Every workflow (:mod:`kpcacli.workflows`) is written once against :class:`Engine`, which two
classes implement:

* :class:`InProcess`, this process: frames in a temporary frame store (:mod:`kpcacli.io.trainingstore`),
  decoders and BLAS on this machine's cores;
* :class:`kpcacli.engines.cluster.Cluster`, a dask.distributed cluster (``--scheduler``): frames
  loaded and kept on the workers, the Gram, encoding and decoding run there as tasks.

Both give the same model file byte for byte and the same codes (``tests/test_cluster.py``);
they differ only in where the work runs, and so in what each can read (a cluster's workers
cannot read the client's standard input).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..estimators.batches import encode_frames, encode_rows
from ..estimators.operations import denoise
from ..estimators.parametric import predicted_frames
from ..estimators.reconstruction import Reconstruction, ReconstructOptions
from ..io.filecopy import FileCopy
from ..io.packets import SourceCopy
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.trainingstore import TrainingStore
from ..model.state import FittedState
from ..modelfile.zarrwrite import FrameCompressor
from ..numerics.backend import HOST, Backend
from ..numerics.gram import LinearGram
from ..numerics.landmarks import choose_landmarks
from ..preimage.decoding import decoded_frames
from ..utils.cores import available_cores
from ..utils.parallel import joined, ordered_map, thread_budget


@dataclass(kw_only=True)
class Training:
    """The frames a model is fitted on, as an engine holds them for the length of a fit.

    Attributes
    ----------
    store : TrainingStore
        The frames the model keeps (all that the request chose, or the landmarks among them),
        in a temporary store on the client.
    indices : list of int
        Their numbers among the sources' frames (what the model records:
        :mod:`kpcacli.io.provenance`).
    chosen : int
        Frames the request chose (read, or counted when only landmarks were read).
    total : int or None
        The sources' frames in all, when the engine counted them on the way.
    compressor : FrameCompressor or None
        The kept frames, already compressed for the model file (None: compressed at saving).
    linear_gram_of : callable or None
        ``linear_gram_of(rows)``: the :class:`kpcacli.numerics.gram.LinearGram` of the store's frames
        `rows`, computed where the frames live; None when they live in this process, where the
        estimator computes it from the store.
    codes_of_all : callable
        ``codes_of_all(state)``: the codes of every frame the request chose, in order.
    source : SourceCopy, FileCopy or str
        The source's own bytes of the kept frames: a clip's coded packets, which the frames
        were decoded from (:mod:`kpcacli.io.packets`), or image files
        (:mod:`kpcacli.io.filecopy`); or why there is no such copy.
    """

    store: TrainingStore
    indices: list[int]
    chosen: int
    total: int | None
    compressor: FrameCompressor | None
    linear_gram_of: Callable[[np.ndarray], LinearGram] | None
    codes_of_all: Callable[[FittedState], np.ndarray]
    source: SourceCopy | FileCopy | str

    def linear_gram(self) -> LinearGram | None:
        """The linear Gram of every kept frame, when computed elsewhere (else None)."""
        if self.linear_gram_of is None:
            return None
        return self.linear_gram_of(np.arange(len(self.store.names)))


class Engine(Protocol):
    """What a workflow asks of the place it runs. An engine is a context manager: entering it
    connects (a cluster), leaving it lets go."""

    progress: bool

    def __enter__(self) -> Engine: ...

    def __exit__(self, kind, error, traceback) -> None: ...

    def training(
        self,
        request: FrameRequest,
        directory,
        *,
        landmarks: int | None = None,
        landmark_method: str = "uniform",
        compress: bool = True,
    ) -> contextlib.AbstractContextManager[Training]:
        """The frames of `request` held for a fit (a temporary store in `directory`), only
        `landmarks` of them kept when given (:mod:`kpcacli.numerics.landmarks`), compressed for the
        model file as they arrive when `compress`. Everything is removed on leaving."""

    def encode(self, state: FittedState, request: FrameRequest) -> tuple[np.ndarray, np.ndarray]:
        """Codes of every frame of `request`, in order, and each frame's distance to its
        nearest training frame (:func:`kpcacli.estimators.batches.encode_frames`)."""

    def decode(self, state: FittedState, codes: np.ndarray, solver: str | None, neighbours: int | None) -> Iterator:
        """Frames decoded from `codes`, in order, streamed. The codes and the solver are
        checked before the first frame."""

    def denoise(
        self, state: FittedState, rows: list[np.ndarray], solver: str | None, neighbours: int | None
    ) -> tuple[np.ndarray, list]:
        """`rows` (frames or points) denoised (:func:`kpcacli.estimators.operations.denoise`), in
        order, and their pre-images."""

    def reconstruct(
        self, state: FittedState, batches: Iterator, options: ReconstructOptions
    ) -> Iterator[Reconstruction]:
        """Each of `batches`, ``(frames, observed)`` as the workflow checked them, completed from
        its observed values (:meth:`kpcacli.estimators.reconstruction.ReconstructOptions.run`), in order,
        streamed."""


class InProcess:
    """The :class:`Engine` of this process; the products of its encoding, decoding and
    denoising by the `backend` (:mod:`kpcacli.numerics.backend`: numpy's, or an accelerator's)."""

    def __init__(self, progress: bool = False, backend: Backend = HOST):
        self.progress = progress
        self.backend = backend

    def __enter__(self) -> InProcess:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        return None

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
        # Compress the frames while they load, unless only landmarks among them go into the
        # model. The Gram waits for the last frame: the two cores are busy decoding and
        # compressing while frames load (docs/performance.md, design measurements).
        compressor = FrameCompressor() if compress and landmarks is None else None
        with contextlib.ExitStack() as stack:
            if compressor is not None:
                stack.enter_context(compressor)
            source = request.source_copy()
            frames = source.frames() if isinstance(source, SourceCopy) else None
            every = stack.enter_context(training_store(request, directory, self.progress, compressor, frames))
            store = every
            if landmarks is not None and landmarks < every.frames.shape[0]:
                chosen = choose_landmarks(every.frames, landmarks, landmark_method)
                if not isinstance(source, str):
                    source = source.keeping([every.indices[i] for i in chosen])
                store = stack.enter_context(TrainingStore(every.directory))
                store.extend(
                    Frame(every.names[i], np.asarray(every.frames[i]).reshape(every.frame_shape), every.indices[i])
                    for i in chosen
                )
            yield Training(
                store=store,
                indices=store.indices,
                chosen=len(every.names),
                total=None,  # not counted on the way
                compressor=compressor,
                linear_gram_of=None,  # the frames live here: the estimator computes it
                codes_of_all=lambda state: encode_rows(state, every.frames),
                source=source,
            )

    def encode(self, state: FittedState, request: FrameRequest) -> tuple[np.ndarray, np.ndarray]:
        total = request.estimate() if self.progress else None
        with joined(request.frames()) as frames:
            return encode_frames(state, frames, total=total, progress=self.progress, backend=self.backend)

    def decode(self, state: FittedState, codes: np.ndarray, solver: str | None, neighbours: int | None) -> Iterator:
        return decoded_frames(state, codes, solver, neighbours, self.backend)

    def denoise(
        self, state: FittedState, rows: list[np.ndarray], solver: str | None, neighbours: int | None
    ) -> tuple[np.ndarray, list]:
        return denoise(state, rows, solver, neighbours, self.progress, self.backend)

    def reconstruct(
        self, state: FittedState, batches: Iterator, options: ReconstructOptions
    ) -> Iterator[Reconstruction]:
        # A batch a core: each batch's passes run on one thread (their products are exact, so
        # the bytes do not depend on which thread ran them).
        def run(batch):
            with thread_budget(1, blas=False):
                return options.run(state, *batch)

        return ordered_map(run, batches, available_cores())

    def predict(
        self, state: FittedState, rows, map: str | None, solver: str | None, neighbours: int | None
    ) -> Iterator:
        """Frames at the parameter `rows`, in order, streamed (checked before the first frame):
        :func:`kpcacli.estimators.parametric.predicted_frames`. In this process only: a
        prediction reads a few training frames per row."""
        return predicted_frames(state, rows, map, solver, neighbours)


@contextlib.contextmanager
def training_store(
    request: FrameRequest,
    directory,
    progress: bool = False,
    compressor: FrameCompressor | None = None,
    frames: Iterator[Frame] | None = None,
) -> Iterator[TrainingStore]:
    """The frames of `request` in a temporary frame store in `directory` (one size, checked),
    removed after; `compressor`, if given, compresses each on its way in. `frames` are the
    request's frames as another reader gives them (decoded from the source's copied
    packets: :meth:`kpcacli.io.request.FrameRequest.source_copy`)."""
    # joined: a failure (frames of two sizes) stops the frames' decoding threads and waits for
    # them here and now, not whenever the abandoned generator is collected.
    with TrainingStore(directory) as store:
        with joined(request.frames() if frames is None else frames) as frames:
            total = request.estimate() if progress else None
            store.extend(compressor.tap(frames) if compressor is not None else frames, progress=progress, total=total)
        yield store
