"""The model's frame store, chosen at fit: lossless H.264 by default (a training frame comes
back bit for bit), or lossy H.264 at a constant rate factor when the user asks for one
(``--store-crf N``, as ffmpeg's ``-crf``).

A model keeps its training frames, and what they cost is most of the model. Lossless H.264
(:mod:`kpcacli.modelfile.framecodec`) keeps them bit-exact; a lossy store keeps them in far
fewer bytes, but its noise reaches every decoded frame, by an amount that depends on the clip
and on k and that no measurement at fit predicts well (docs/compression.md). So the lossy
store is the user's choice alone. With it, every training
frame is coded at that rate factor, the model is fitted to the frames *as stored* (the Gram
and every code come from them, so fit → encode → decode of a training frame returns it as
stored), and the model records the store's PSNR against the frames it was given, which
``kpca fit`` and ``kpca info`` print.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..io.readers import Frame
from ..io.trainingstore import TrainingStore
from ..numerics.metrics import psnr_of_mse
from ..utils.checks import check_choice, check_int
from ..utils.cores import available_cores
from ..utils.errors import ParameterError, param
from ..utils.parallel import ordered_map, thread_budget
from .framecodec import (
    LOSSLESS_STORE,
    MAX_CRF,
    BackgroundCoding,
    EncodedFrames,
    FrameCodec,
    codable,
    encode_frames,
    groups,
)

STORES = ("lossless", "compact")
PEAK = 255.0


def check_store(store: str | None, store_crf: int | None) -> tuple[str, int | None]:
    """The store and its rate factor as asked: lossless unless a rate factor is given; the
    compact store needs one (kpca does not choose it: see the module docstring)."""
    if store_crf is not None:
        store_crf = check_int(param("store_crf"), store_crf, 0, MAX_CRF)
    if store is None:
        store = "lossless" if store_crf in (None, 0) else "compact"
    store = check_choice(param("store"), store, STORES)
    if store == "lossless" and store_crf not in (None, 0):
        raise ParameterError(f"{param('store_crf')} sets a lossy store's rate factor; the lossless store has none")
    if store == "compact" and store_crf is None:
        raise ParameterError(
            f"the compact store needs its rate factor, {param('store_crf')} N (0 to {MAX_CRF}, x264's constant rate "
            "factor): kpca does not choose one for you (docs/compression.md)"
        )
    return store, store_crf


@dataclass
class ModelStore:
    """The training frames as the model will store them.

    Attributes
    ----------
    frames : (n, d) ndarray or memory map
        The frames as stored: what the model is fitted to.
    encoded : EncodedFrames, BackgroundCoding or None
        Their H.264 groups for the model file, or the lossless store still being coded beside
        the fit (:func:`kpcacli.modelfile.framecodec.finished` waits for it); None for frames kept by
        Blosc (points, 16-bit and float frames), which are stored exactly.
    exact : bool
        Whether `frames` are the frames given, bit for bit.
    """

    frames: np.ndarray
    encoded: EncodedFrames | BackgroundCoding | None
    exact: bool


@contextlib.contextmanager
def model_store(
    store: TrainingStore,
    kind: str | None = None,
    crf: int | None = None,
    progress: bool = False,
) -> Iterator[ModelStore]:
    """The frames of `store` coded for the model file, as the module docstring tells; a lossy
    store's decoded frames live in a temporary store beside `store`, removed on leaving.

    The lossless store is coded on threads of its own (:class:`BackgroundCoding`), half the
    cores, while the caller fits on the others, and on all of them once the coding is done:
    the fit never reads the lossless store, its frames being the frames given."""
    kind, crf = check_store(kind, crf)
    frames, shape = store.frames, store.frame_shape
    if not codable(shape, frames.dtype):
        yield ModelStore(frames, None, True)
        return
    colour = len(shape) == 3
    if kind == "lossless":
        crf, description = 0, dict(LOSSLESS_STORE)
    else:
        description = {"codec": "h264", "crf": crf, "choice": "given"}
    cores = available_cores()
    if crf == 0 and cores >= 2:
        with BackgroundCoding(frames, shape, FrameCodec(0, colour), description, cores // 2) as coding:
            with thread_budget(lambda: cores - coding.busy_threads(), blas=False):
                yield ModelStore(frames, coding, True)
        return
    encoded = encode_frames(frames, shape, FrameCodec(crf, colour), description, progress)
    if crf == 0:
        yield ModelStore(frames, encoded, True)
        return
    with TrainingStore(store.directory) as decoded:
        decoded.extend(_decoded(encoded, store), progress=progress, total=frames.shape[0])
        description["psnr"] = round(psnr_of_mse(_mean_squared_error(frames, decoded.frames), PEAK), 2)
        yield ModelStore(decoded.frames, encoded, False)


def _decoded(encoded: EncodedFrames, store: TrainingStore) -> Iterator[Frame]:
    """The frames of `encoded`, decoded group by group on this process's cores, named and
    numbered as in `store`."""
    rows = groups(encoded.n_frames)
    for group, pixels in zip(rows, ordered_map(encoded.decode_group, range(len(rows)), available_cores())):
        for row, values in zip(group, pixels):
            yield Frame(store.names[row], values.reshape(encoded.frame_shape), store.indices[row])


def _mean_squared_error(reference, estimate) -> float:
    """Mean squared error over every pixel of two ``(n, d)`` uint8 matrices, a row at a time."""
    total = 0.0
    for row in range(reference.shape[0]):
        difference = np.asarray(reference[row], dtype=np.float64) - np.asarray(estimate[row], dtype=np.float64)
        total += float(difference @ difference)
    return total / (reference.shape[0] * reference.shape[1])
