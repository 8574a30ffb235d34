"""Encoding many frames in bounded batches: one pass over the training frames per batch.

Encoding converts the new frames to float64 (``kpcacli.numerics.gram.LinearGram.cross``), so a batch is
capped at ``BUDGETS.encode_batch`` (:mod:`kpcacli.utils.budgets`) of float64 pixels: a long clip is
encoded in constant memory,
in-process or in one cluster task (:mod:`kpcacli.engines.cluster`) alike. A frame's codes do not depend
on its batch (bit for bit for integer frames), so any batching gives the same codes.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ..io.readers import Frame
from ..model.state import FittedState
from ..model.validation import depth_advice, size_advice
from ..numerics.backend import HOST, Backend
from ..utils.budgets import BUDGETS, count_within
from ..utils.checks import depth_name, frame_size, other_bit_depth
from ..utils.errors import InputError
from ..utils.progress import progress_bar
from .operations import encode_with_distances


def batch_size(state: FittedState) -> int:
    """Frames encoded per pass over the store: ``BUDGETS.encode_batch`` (:mod:`kpcacli.utils.budgets`) of
    float64 pixels."""
    return count_within(BUDGETS.encode_batch, 8 * int(np.prod(state.frame_shape)))


def encode_rows(state: FittedState, frames: np.ndarray, progress: bool = False) -> np.ndarray:
    """Codes of many frames (rows or a memory map), a batch per pass over the store (`progress`:
    a bar for each pass)."""
    batch = batch_size(state)
    return np.concatenate(
        [
            encode_with_distances(state, np.asarray(frames[i : i + batch]), progress)[0]
            for i in range(0, len(frames), batch)
        ]
    )


def encode_frames(
    state: FittedState,
    frames: Iterable[Frame],
    total: int | None = None,
    progress: bool = False,
    backend: Backend = HOST,
) -> tuple[np.ndarray, np.ndarray]:
    """Codes of a stream of frames, in input order, one pass over the store per batch, and
    each frame's distance to its nearest training frame
    (:func:`kpcacli.estimators.operations.encode_with_distances`).

    Every frame is checked against the model's frame shape, and a mismatch names its file.
    With `progress`, one bar counts the frames (to `total` when known). The products are the
    `backend`'s, the training frames held by it from the first batch for every other
    (:meth:`kpcacli.numerics.backend.Backend.hold`: on a device, sent there once when they fit).
    """
    size = batch_size(state)
    codes, distances, batch = [], [], []
    held, holding = None, False
    with progress_bar(progress, desc="encoding", total=total, unit="frame") as bar:

        def encode_batch():
            nonlocal held, holding
            if not holding:  # not before a frame has passed its checks
                held, holding = backend.hold(state.frames), True
            batch_codes, batch_distances = encode_with_distances(state, np.stack(batch), False, backend, held)
            codes.append(batch_codes)
            distances.append(batch_distances)
            bar.update(len(batch))
            batch.clear()

        for frame in frames:
            if frame.pixels.shape != state.frame_shape:
                raise InputError(
                    f"'{frame.name}' is {frame_size(frame.pixels.shape)} but the model was fitted on "
                    f"{frame_size(state.frame_shape)}; {size_advice(state)}"
                )
            if other_bit_depth(frame.pixels.dtype, state.frames.dtype):
                raise InputError(depth_advice(state, f"'{frame.name}' is a {depth_name(frame.pixels.dtype)} image"))
            batch.append(frame.pixels)
            if len(batch) == size:
                encode_batch()
        if batch:
            encode_batch()
    if not codes:
        raise InputError("the sources hold no frames")
    return np.concatenate(codes), np.concatenate(distances)
