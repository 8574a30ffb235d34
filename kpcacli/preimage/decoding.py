"""Codes to frames: the one decode that the estimator, both engines and the cluster's tasks run.

Each code goes :meth:`kpcacli.preimage.base.PreparedSolver.preimage` (its M nearest training
codes, then the solver: García-González et al. 2021, end of section 4), and a batch of
pre-images is formed in one pass over the training frames it uses
(:func:`kpcacli.preimage.synthesis.preimage_frames`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..model.state import FittedState
from ..model.validation import check_codes
from ..numerics.backend import HOST, Backend
from .base import Preimage, PreparedSolver
from .choice import prepared_for
from .synthesis import batch_size, preimage_frames


def solve_codes(state: FittedState, codes, solver: str | None = None, neighbours: int | None = None) -> list[Preimage]:
    """The pre-image of each of `codes` (m, k) by `solver` (None or ``auto``: the model's
    choice) with M = `neighbours` (None: the solver's own): weights over training frames, no
    pixel read, but for the solvers that form pixels (transport, gradient)."""
    codes = check_codes(state, codes)
    method = prepared_for(state, solver, neighbours)
    return [method.preimage(state, code) for code in codes]


def decoded_frames(
    state: FittedState,
    codes,
    solver: str | None = None,
    neighbours: int | None = None,
    backend: Backend = HOST,
) -> Iterator[np.ndarray]:
    """Frames (``frame_shape``, in the training frames' dtype) decoded from `codes`, in order,
    a batch at a time: a long clip streams. The codes and the solver are checked before this
    returns, not at the first frame. The pixel sums by the `backend`
    (:func:`kpcacli.preimage.synthesis.preimage_frames`)."""
    codes = check_codes(state, codes)  # before the solver, whose checks come second
    return decoded_by(state, codes, prepared_for(state, solver, neighbours), backend)


def decoded_by(state: FittedState, codes, method: PreparedSolver, backend: Backend = HOST) -> Iterator[np.ndarray]:
    """:func:`decoded_frames` by a solver resolved and prepared already (:func:`prepared_for`):
    what the rounds of a completion decode with, resolved once for all of them."""
    codes = check_codes(state, codes)
    return batched_frames(state, codes, lambda code: method.preimage(state, code), backend)


def batched_frames(state: FittedState, items, preimage_of, backend: Backend = HOST) -> Iterator[np.ndarray]:
    """The frames of the pre-images ``preimage_of(item)`` of `items`, in order, formed a
    batch at a time (:func:`kpcacli.preimage.synthesis.preimage_frames`): a long clip streams.
    A generator: nothing is solved before the first frame is asked for. The first batches are
    of one frame, then two, four and so on up to the full size: whoever writes the frames
    starts on the first at once instead of waiting idle for a whole batch (docs/performance.md),
    and a frame is the same bytes in any batch
    (:func:`kpcacli.preimage.synthesis.weighted_frame_sums`). The training rows the batches
    weigh come from one source for them all (:meth:`kpcacli.numerics.backend.Backend.decode_rows`:
    on a device, they go there at most twice in all)."""
    size = batch_size(state.frames.shape[1])
    rows = backend.decode_rows(state.frames)  # for every batch
    first, step = 0, 1
    while first < len(items):
        last = min(first + min(step, size), len(items))
        yield from preimage_frames(state, [preimage_of(item) for item in items[first:last]], backend, rows)
        first, step = last, step * 2
