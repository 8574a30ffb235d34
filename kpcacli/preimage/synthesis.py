"""Pre-images as pixels: the weighted sums ``x* = Σ_j w_j x^j`` (García-González et al. 2021,
eq. 31) of a batch of codes, in one pass over the training frames they use.

This is the package's one implementation of ``Σ_j w_j x^j``: decoding forms its frames here
(:func:`preimage_frames`), a solver that needs one pre-image as a vector asks
:func:`weighted_frame_sum`, and the gradient of a pixel-space objective (the ``gradient``
solver) is a weighted sum of the frames too.

A solver returns weights over training rows (:class:`kpcacli.preimage.Preimage`); only this
step reads pixels. For a batch of m codes the sums are one matrix product ``W X_U`` over the
union U of the rows the batch uses: each row is read once per batch, not once per code, which
matters when a solver weighs every training frame (the ``learned`` solver) and when frames
are decoded on demand (a model reads a row's group alone). The ``distance`` solver's
pre-images also move along the model's R linear-PCA axis frames (``+ M A``, one more part of
the same product, :class:`kpcacli.numerics.linearaxes.AxisFrames`). The rows are read in
groups of at most ``BUDGETS.synthesis_group`` (:mod:`kpcacli.utils.budgets`); within a group the
product is the backend's (:meth:`kpcacli.numerics.backend.Backend.weighted_sums`: on the CPU,
blocks of pixel columns shared among threads, as a GEMM when most weights are non-zero and as a
sparse product otherwise, the ``log`` solver's two rows a code). Integer frames are summed exactly (:func:`exact_terms`): a decoded frame is the same bits whatever codes are
decoded beside it, on whatever threads, in this process or on a cluster's workers.
"""

from __future__ import annotations

import numpy as np

from ..model.framerows import read_rows
from ..numerics.backend import HOST, Backend
from ..utils.budgets import BUDGETS, count_within
from ..utils.cores import available_cores
from ..utils.parallel import ordered_map


def batch_size(pixels: int) -> int:
    """Pre-images formed per pass over the training frames, for frames of `pixels` values: their
    float64 sums (kept when the frames are read in several groups) within
    ``BUDGETS.synthesis_batch`` (:mod:`kpcacli.utils.budgets`)."""
    return count_within(BUDGETS.synthesis_batch, 8 * pixels)


def weighted_frame_sums(
    frames,
    weights: np.ndarray,
    convert=None,
    workers: int | None = None,
    axes=None,
    moves=None,
    dtype=np.float64,
    backend: Backend = HOST,
    rows=None,
) -> np.ndarray:
    """``W X`` (plus ``M A`` along linear-PCA axes): for each row of `weights`, the weighted
    sum of the training frames.

    Parameters
    ----------
    frames : (n, d) array-like
        Training frames; only the rows with a non-zero weight are read, one row at a time
        (``frames[i]``), so a memory map or compressed frames are read once per call.
    weights : (m, n) ndarray
    convert : callable, optional
        Applied to each block of float64 sums, in cache, on the worker threads, giving values
        of the frames' dtype (e.g. rounding and clipping to 8 bits); default: float64 sums.
    workers : int, optional
        Threads (default: the cores this process may use).
    axes : AxisFrames, optional
        Axis frames ``a_r`` (:class:`kpcacli.numerics.linearaxes.AxisFrames`) to add ``Σ_r move_r a_r``
        along, for each row of `moves` (m, R): the ``distance`` solver's pre-images.
    dtype : {numpy.float64, numpy.float32}
        The sums' precision without `convert`. float32 halves the memory each block of frames
        is converted to, and the time: for sums that are quantised next (a model's stored
        axes).
    backend : Backend, optional
        Whose products (:meth:`kpcacli.numerics.backend.Backend.weighted_sums`; default numpy's):
        integer frames give the same bits on any.
    rows : optional
        Where the rows come from (:meth:`kpcacli.numerics.backend.Backend.decode_rows`, which a
        decode keeps for all its batches); default: the `backend`'s for this call.

    Returns
    -------
    (m, d) ndarray, `dtype` or (with `convert`) the frames' dtype
    """
    weights = np.asarray(weights, dtype=np.float64)
    m, d = weights.shape[0], frames.shape[1]
    threads = workers or available_cores()
    dtype = np.dtype(dtype) if convert is None else np.dtype(np.float64)
    out = np.zeros((m, d), dtype=dtype) if convert is None else np.empty((m, d), dtype=frames.dtype)
    used = np.flatnonzero(np.any(weights != 0.0, axis=0))
    group = count_within(BUDGETS.synthesis_group, d * np.dtype(frames.dtype).itemsize)
    axis_weights = shift = None
    if axes is not None and axes.count and np.any(moves):
        axis_weights, shift = axes.terms(moves)
    # Integer frames (with integer axis values) are summed exactly, so that a frame's bits
    # never depend on the codes decoded beside it, the threads or the BLAS (exact_terms).
    if convert is not None and _integers(frames.dtype) and (axis_weights is None or _integers(axes.dtype)):
        offset = 0.0 if axis_weights is None else axes.offset
        weights, axis_weights, shift = exact_terms(weights, np.iinfo(frames.dtype).max, axis_weights, offset)
    # Each group: its terms, each its weights (m, r) and a function reading its r rows. The axis
    # frames are one more term of the last group, so a decode's few rows and its axes are summed
    # in one pass over each block of columns, never through a second full-size array of sums;
    # a model's stored axes not read yet are read beside the first group's rows.
    beside = axes if axis_weights is not None else None
    source = rows if rows is not None else backend.decode_rows(frames)

    def reader(first: int):
        chosen = used[first : first + group]
        return lambda: source.rows(chosen, lambda: _read_rows(frames, chosen, threads, beside if first == 0 else None))

    groups = [[(weights[:, used[first : first + group]], reader(first))] for first in range(0, len(used), group)]
    if axis_weights is not None:
        if not groups:
            groups.append([])
        groups[-1].append((axis_weights, lambda: axes.values))
    if not groups:
        if convert is not None:
            out[...] = convert(np.zeros((m, d)))
        return out
    # With several groups the float64 sums are accumulated before the last group converts them.
    total = out if convert is None else (np.zeros((m, d)) if len(groups) > 1 else None)
    groups = [[(part.astype(dtype, copy=False), read) for part, read in terms] for terms in groups]
    for number, terms in enumerate(groups):
        terms = [(part, read()) for part, read in terms]
        last = number == len(groups) - 1

        def finish(columns: slice, sums: np.ndarray, last=last) -> None:
            if shift is not None and last:
                sums -= shift[:, None]
            if total is not None:
                total[:, columns] += sums
                sums = total[:, columns]
            if convert is not None and last:
                out[:, columns] = convert(sums)

        backend.weighted_sums(terms, finish, threads, dtype)
    return out


def _integers(dtype) -> bool:
    return np.dtype(dtype).kind == "u"


def exact_terms(
    weights: np.ndarray, top: int, axis_weights: np.ndarray | None = None, offset: float = 0.0
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Weights on which every sum of integer frames is exact in float64, so that a pre-image's
    pixels are the same bits whatever else is summed beside it, in whatever order.

    Each row's weights (and its axis weights) are rounded to one power-of-two grid, ``2^-e``,
    with e the largest for which every partial sum of ``w_j x_j`` (x integers up to `top`),
    and of the axis terms with their shift, stays a multiple of ``2^-e`` below ``2^52 · 2^-e``:
    then every product and every partial sum is exactly representable, and any summation
    order (a GEMM's blocking, the rows beside it in a batch, the threads, a sparse product,
    several groups of rows) gives the exact sum. The rounding moves a pixel by at most
    ``2^-52`` of the sum's bound; a float32 sum, as before, depended on the batch for about one
    pixel in 60,000.

    Parameters
    ----------
    weights : (m, n) ndarray
    top : int
        The frames' largest value (255 for 8-bit frames).
    axis_weights : (m, R) ndarray, optional
        Weights on integer axis values, whose offset is subtracted as ``offset Σ_r a_r``.

    Returns
    -------
    weights, axis_weights, shift : the rounded weights, the rounded axis weights (or None) and
    each row's shift ``offset Σ_r a_r`` (or None).
    """
    bound = top * np.abs(weights).sum(axis=1)
    if axis_weights is not None:
        bound += (top + abs(offset)) * np.abs(axis_weights).sum(axis=1)
    with np.errstate(divide="ignore"):
        exponent = np.where(bound > 0, 52 - np.ceil(np.log2(np.where(bound > 0, bound, 1.0))), 0)
    exponent = np.clip(exponent, -1000, 1000).astype(np.int64)[:, None]

    def on_grid(values: np.ndarray) -> np.ndarray:
        return np.ldexp(np.rint(np.ldexp(values, exponent)), -exponent)

    if axis_weights is None:
        return on_grid(weights), None, None
    axis_weights = on_grid(axis_weights)
    return on_grid(weights), axis_weights, offset * axis_weights.sum(axis=1)


def weighted_frame_sum(frames, weights: np.ndarray, indices: np.ndarray | None = None) -> np.ndarray:
    """``Σ_j w_j x^j``, one weighted sum of the training frames as a float64 vector, (d,):
    `weights` over the rows `indices` (a row may repeat: its weights add), or over every row
    when `indices` is None. :func:`weighted_frame_sums` of one row of weights."""
    weights = np.asarray(weights, dtype=np.float64)
    if indices is None:
        return weighted_frame_sums(frames, weights[np.newaxis])[0]
    row = np.zeros((1, frames.shape[0]))
    np.add.at(row[0], np.asarray(indices), weights)
    return weighted_frame_sums(frames, row)[0]


def _read_rows(frames, rows: np.ndarray, threads: int, axes=None) -> np.ndarray:
    """The training frames at `rows`, (r, d) in their dtype; with `axes` whose stored frames
    are not read yet, those are read beside the rows (decoding the axes takes as long as a
    decode's few rows), one of the `threads` reading the axes, the others the rows."""
    if axes is not None and threads >= 2 and not axes.is_read:
        jobs = [lambda: _read_rows(frames, rows, threads - 1), lambda: axes.values]
        block, _ = ordered_map(lambda job: job(), jobs, 2)
        return block
    return read_rows(frames, rows, threads)


def preimage_frames(state, preimages, backend: Backend = HOST, rows=None) -> np.ndarray:
    """The pre-images as frames: ``(m, *frame_shape)`` in the training frames' dtype (integer
    frames rounded and clipped), one pass over the rows they use per ``batch_size`` of them;
    their products by the `backend` (the same bits for integer frames on any), the rows from
    `rows` when a decode keeps them (:meth:`kpcacli.numerics.backend.Backend.decode_rows`)."""
    frames = np.empty((len(preimages), state.frames.shape[1]), dtype=state.frames.dtype)
    combined = [row for row, preimage in enumerate(preimages) if preimage.pixels is None]
    for row, preimage in enumerate(preimages):
        if preimage.pixels is not None:
            frames[row] = to_frame_dtype(np.asarray(preimage.pixels), state.frames.dtype)
    size = batch_size(frames.shape[1])
    for first in range(0, len(combined), size):
        batch = [preimages[index] for index in combined[first : first + size]]
        frames[combined[first : first + size]] = weighted_frame_sums(
            state.frames,
            _weights(state.n_samples, batch),
            convert=lambda sums: to_frame_dtype(sums, state.frames.dtype),
            backend=backend,
            rows=rows,
            **_axis_moves(batch),
        )
    return frames.reshape((len(preimages),) + state.frame_shape)


def preimage_vectors(state, preimages) -> np.ndarray:
    """The pre-images as float64 vectors, (m, d), unrounded (to score them against float
    data): their pixels, or their weighted sums formed together in one pass."""
    vectors = np.empty((len(preimages), state.frames.shape[1]))
    combined = [row for row, preimage in enumerate(preimages) if preimage.pixels is None]
    for row, preimage in enumerate(preimages):
        if preimage.pixels is not None:
            vectors[row] = preimage.pixels
    if combined:
        batch = [preimages[index] for index in combined]
        vectors[combined] = weighted_frame_sums(state.frames, _weights(state.n_samples, batch), **_axis_moves(batch))
    return vectors


def _weights(n: int, preimages) -> np.ndarray:
    """The pre-images' weights as a dense (m, n) matrix over the training rows."""
    weights = np.zeros((len(preimages), n))
    for row, preimage in enumerate(preimages):
        np.add.at(weights[row], np.asarray(preimage.indices), preimage.weights)
    return weights


def _axis_moves(preimages) -> dict:
    """The pre-images' moves along their linear-PCA axes, as :func:`weighted_frame_sums`
    takes them: ``axes`` and ``moves`` (m, R), or nothing when none moves."""
    moving = [preimage for preimage in preimages if preimage.move is not None]
    if not moving:
        return {}
    axes = moving[0].axes
    if any(preimage.axes is not axes for preimage in moving):
        raise ValueError("pre-images formed together must move along one model's axes")
    moves = np.zeros((len(preimages), axes.count))
    for row, preimage in enumerate(preimages):
        if preimage.move is not None:
            moves[row] = preimage.move
    return {"axes": axes, "moves": moves}


def to_frame_dtype(vector: np.ndarray, dtype) -> np.ndarray:
    """Round and clip float pixels to the training frames' `dtype` (8- or 16-bit), or cast
    them to it (float frames)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        rounded = np.rint(vector)  # in the pixels' own float type: the same whole numbers
        np.clip(rounded, 0, np.iinfo(dtype).max, out=rounded)
        return rounded.astype(dtype)
    return vector.astype(dtype)
