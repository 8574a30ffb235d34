"""The linear Gram matrix of the training frames, computed in one blocked pass over pixels.

Every kernel the tool offers is a function of dot products or squared distances, so the only
pass over pixels at fit time computes the *linear* Gram (García-González et al. 2021, eq. 8, with
samples as rows)

    L = (X - 1 sᵀ)(X - 1 sᵀ)ᵀ,       X : (n, d) frames, s : (d,) origin

in blocks of pixel columns. The origin ``s`` is the mean frame, computed block by block in the
same pass; for integer frames it is rounded to integers so that ``X - s`` is exact and every
product and sum of the float64 GEMM is an exact integer (the sums stay below 2⁵³ for d up to
~10⁸ 8-bit pixels). Subtracting the mean keeps ``|x_i - x_j|² = L_ii + L_jj - 2 L_ij`` free of
cancellation for float data too. Dot products of the raw frames follow from

    x_i · x_j = L_ij + t_i + t_j + |s|²,     t = (X - s) s.

No step holds an n x d float64 matrix: one block is ``n x block_columns``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..utils.budgets import BUDGETS, count_within
from ..utils.cores import available_cores
from ..utils.parallel import run_partitioned, until_stopped
from ..utils.progress import progress_bar

# Up to this many new frames are encoded with one pass over contiguous rows of the store (a
# matrix-vector product per row block); larger batches use the column-blocked GEMM.
ROW_PASS_MAX = 4
# A tile of the store (:func:`float_tiles`) spans this many frames when a frame's values do not
# fit the tile budget: enough rows for the product to run as a small GEMM.
TILE_ROWS = 8
# Stores of fewer values than this are read by tiles on one thread: starting threads would
# cost more than the few tiles they share (a pre-image solver's many products of small frames).
SHARED_PASS_MIN_VALUES = 1 << 22


@dataclass
class LinearGram:
    """Shifted linear Gram of the training frames and what is needed to undo the shift.

    Attributes
    ----------
    shifted : (n, n) ndarray
        ``L = (X - s)(X - s)ᵀ`` in float64.
    origin : (d,) ndarray
        The shift ``s`` (the mean frame; integer-valued for integer frames), in the frames' dtype
        for integer frames and float64 otherwise.
    origin_dots : (n,) ndarray
        ``t = (X - s) s``.
    origin_norm2 : float
        ``|s|²``.
    """

    shifted: np.ndarray
    origin: np.ndarray
    origin_dots: np.ndarray
    origin_norm2: float

    def squared_norms(self) -> np.ndarray:
        """``|x_i - s|²`` for every training frame, shape (n,)."""
        return np.diag(self.shifted).copy()

    def squared_distances(self) -> np.ndarray:
        """``|x_i - x_j|²``, shape (n, n), clipped at zero against rounding."""
        norms = self.squared_norms()
        distances = norms[:, None] + norms[None, :] - 2.0 * self.shifted
        np.fill_diagonal(distances, 0.0)
        return np.maximum(distances, 0.0)

    def dots(self) -> np.ndarray:
        """``x_i · x_j`` of the raw frames, shape (n, n)."""
        t = self.origin_dots
        return self.shifted + t[:, None] + t[None, :] + self.origin_norm2

    def dots_among(self, indices: np.ndarray) -> np.ndarray:
        """``x_i · x_j`` for i, j in `indices`, shape (len(indices), len(indices))."""
        t = self.origin_dots[indices]
        return self.shifted[np.ix_(indices, indices)] + t[:, None] + t[None, :] + self.origin_norm2

    def cross(self, frames: np.ndarray, new: np.ndarray, progress: bool = False) -> CrossProducts:
        """Products of new frames with the training frames, in one blocked pass over the store.

        Parameters
        ----------
        frames : (n, d) array-like
            The training frames (usually a memory map).
        new : (m, d) ndarray
            New frames, in any numeric dtype.
        """
        m = new.shape[0]
        n, d = frames.shape
        if m <= ROW_PASS_MAX:
            return self._cross_by_rows(frames, new)
        step = block_columns(n + m, d)
        starts = range(0, d, step)

        def share(index: int, workers: int):
            products = np.zeros((n, m))  # (X - s)(Y - s)ᵀ
            new_norms = np.zeros(m)  # |y - s|²
            new_origin_dots = np.zeros(m)  # (y - s)·s
            buffers = np.empty((n, step)), np.empty((m, step))
            for start in until_stopped(starts[index::workers]):
                stop = min(start + step, d)
                origin = self.origin[start:stop].astype(np.float64)
                block = float_block(frames[:, start:stop], buffers[0])
                block -= origin
                new_block = float_block(new[:, start:stop], buffers[1])
                new_block -= origin
                products += block @ new_block.T
                new_norms += np.einsum("ij,ij->i", new_block, new_block)
                new_origin_dots += new_block @ origin
                bar.update(stop - start)
            return products, new_norms, new_origin_dots

        with progress_bar(progress and d > step, desc="encoding", total=d, unit="px", unit_scale=True) as bar:
            shares = run_partitioned(share, min(available_cores(), len(starts)))
        products, new_norms, new_origin_dots = (sum(parts[1:], parts[0]) for parts in zip(*shares))
        return CrossProducts(self, products.T, new_norms, new_origin_dots)

    def _cross_by_rows(self, frames: np.ndarray, new: np.ndarray) -> CrossProducts:
        """A few new frames: ``(X − s) c = X c − (s·c) 1`` with ``c = y − s``, one pass over
        contiguous rows of the store (exact for integer frames, like the column pass)."""
        origin = self.origin.astype(np.float64)
        shifted = np.asarray(new, dtype=np.float64) - origin  # (m, d): c = y − s
        products = frame_products(frames, shifted.T)  # (n, m): X c
        origin_dots = shifted @ origin  # (y − s)·s
        products -= origin_dots[None, :]
        norms = np.einsum("ij,ij->i", shifted, shifted)
        return CrossProducts(self, products.T, norms, origin_dots)


@dataclass
class CrossProducts:
    """Products between m new frames and the n training frames.

    Attributes
    ----------
    shifted : (m, n) ndarray
        ``(y - s)·(x_i - s)``.
    norms : (m,) ndarray
        ``|y - s|²``.
    origin_dots : (m,) ndarray
        ``(y - s)·s``.
    """

    gram: LinearGram
    shifted: np.ndarray
    norms: np.ndarray
    origin_dots: np.ndarray

    def squared_distances(self) -> np.ndarray:
        """``|y - x_i|²``, shape (m, n)."""
        train = self.gram.squared_norms()
        distances = self.norms[:, None] + train[None, :] - 2.0 * self.shifted
        return np.maximum(distances, 0.0)

    def dots(self) -> np.ndarray:
        """``y · x_i``, shape (m, n)."""
        return self.shifted + self.origin_dots[:, None] + self.gram.origin_dots[None, :] + self.gram.origin_norm2


def float_block(values, buffer: np.ndarray) -> np.ndarray:
    """`values` (a block of frames) converted into the leading columns of `buffer`, reused from
    block to block. A fresh array per block would cost a page fault per page wherever malloc
    returns large blocks to the system at once (Dask workers set ``MALLOC_TRIM_THRESHOLD_``)."""
    rows, columns = np.shape(values)
    block = buffer[:rows, :columns]
    np.copyto(block, values, casting="unsafe")
    return block


def block_columns(n_rows: int, d: int) -> int:
    """Number of pixel columns per block so one float64 block stays within
    ``BUDGETS.gram_block`` (:mod:`kpcacli.utils.budgets`)."""
    return int(max(256, min(d, count_within(BUDGETS.gram_block, 8 * n_rows))))


# 8-bit frames shifted by an integer mean lie in [-255, 255]. A float32 product sums exactly, in
# any order the BLAS adds, while every partial sum is an integer of magnitude at most 2²⁴; so a
# block's columns are taken in runs whose bound ``Σ_c max_i |x_ic| · max(max_i |x_ic|, |s_c|)``
# stays within EXACT_SUM (:func:`exact_runs`): at least 258 columns of the widest values, and
# the whole block where frames differ little from their mean, where wide products run faster.
# Accumulating those products in float64 gives the same Gram as the float64 path, bit for bit,
# with sgemm's speed. Below FLOAT32_MIN_FRAMES the many small products cost more than they save
# (docs/performance.md, design measurements).
EXACT_SUM = float(2**24)
FLOAT32_MIN_FRAMES = 64


def exact_runs(block: np.ndarray, mean: np.ndarray) -> list[slice]:
    """Consecutive runs of the columns of `block` (float32 integers, |entries| ≤ 255) over which
    every partial sum of ``block @ block.T`` and ``block @ mean`` is an integer of magnitude at
    most ``EXACT_SUM``: float32 holds each exactly. The runs depend on the values only, never on
    the threads, so neither do the sums."""
    widest = np.maximum(block.max(axis=0), -block.min(axis=0)).astype(np.float64)
    bounds = np.cumsum(widest * np.maximum(widest, np.abs(mean)))
    runs, start, below = [], 0, 0.0
    while start < block.shape[1]:
        stop = max(start + 1, int(np.searchsorted(bounds, below + EXACT_SUM, side="right")))
        runs.append(slice(start, stop))
        start, below = stop, bounds[stop - 1]
    return runs


def _exact_float32_products(block: np.ndarray, mean: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``block @ block.T`` and ``block @ mean`` for float32 blocks of integers with |entries| ≤ 255,
    by float32 GEMMs over :func:`exact_runs` of columns, accumulated in float64: exact."""
    products = np.zeros((block.shape[0], block.shape[0]))
    dots = np.zeros(block.shape[0])
    for run in exact_runs(block, mean):
        part = block[:, run]
        products += part @ part.T
        dots += part @ mean[run]
    return products, dots


def linear_gram(frames: np.ndarray, progress: bool = False, workers: int | None = None) -> LinearGram:
    """Compute the shifted linear Gram of `frames` in one pass over blocks of pixel columns.

    The blocks are shared among `workers` threads (every ``workers``-th block to each, BLAS
    single-threaded: :mod:`kpcacli.utils.parallel`); each thread sums its own products and the
    shares are added in a fixed order. For integer frames every sum is exact, so the Gram is
    the same bit for bit whatever the number of threads.

    Parameters
    ----------
    frames : (n, d) array-like
        Training frames as rows; a ``numpy.memmap`` is read block by block.
    progress : bool
        Show a progress bar on standard error (when it is a terminal).
    workers : int, optional
        Threads (default: the cores this process may use).

    Returns
    -------
    LinearGram
    """
    n, d = frames.shape
    integer = np.dtype(frames.dtype).kind in "ui"
    single_precision = np.dtype(frames.dtype) == np.uint8 and n >= FLOAT32_MIN_FRAMES
    origin = np.empty(d, dtype=frames.dtype if integer else np.float64)
    step = block_columns(n, d)
    starts = range(0, d, step)

    def share(index: int, count: int):
        shifted, origin_dots, origin_norm2 = np.zeros((n, n)), np.zeros(n), 0.0
        buffer = np.empty((n, step), dtype=np.float32 if single_precision else np.float64)
        for start in until_stopped(starts[index::count]):
            stop = min(start + step, d)
            # A copy: the block is shifted in place below, never the caller's frames.
            block = float_block(frames[:, start:stop], buffer)
            mean = block.mean(axis=0, dtype=np.float64)
            if integer:
                mean = np.rint(mean)  # exact integer arithmetic below
            origin[start:stop] = mean  # each thread writes its own columns
            block -= mean.astype(block.dtype)
            if single_precision:
                products, dots = _exact_float32_products(block, mean.astype(np.float32))
                shifted += products
                origin_dots += dots
            else:
                # syrk would halve the flops; a plain GEMM keeps the code simple and exact.
                shifted += block @ block.T
                origin_dots += block @ mean
            origin_norm2 += float(mean @ mean)
            bar.update(stop - start)
        return shifted, origin_dots, origin_norm2

    with progress_bar(progress, desc="Gram", total=d, unit="px", unit_scale=True) as bar:
        shares = run_partitioned(share, min(workers or available_cores(), len(starts)))
    shifted, origin_dots, origin_norm2 = (sum(parts[1:], parts[0]) for parts in zip(*shares))
    # Enforce exact symmetry (the GEMM result is symmetric up to the last bit at most).
    shifted = 0.5 * (shifted + shifted.T)
    return LinearGram(shifted, origin, origin_dots, float(origin_norm2))


def float_tiles(frames: np.ndarray, share: tuple[int, int] = (0, 1)):
    """``(rows, columns, tile)``: `frames` (n, d) a tile at a time, as float64 within
    ``BUDGETS.tile`` (a few rows by a span of columns: a megapixel row is too long to stay in
    cache between its conversion and its product), rows and columns as slices. `share`
    ``(index, workers)``: every ``workers``-th band of rows from `index` alone (a thread's
    share of :func:`kpcacli.utils.parallel.run_partitioned`); the tiles' bounds do not depend
    on it, so neither do the sums formed over them."""
    n, d = frames.shape
    height, width = _tile_shape(n, d)
    buffer = np.empty(height * width)
    index, workers = share
    for first in until_stopped(range(0, n, height)[index::workers]):
        rows = slice(first, min(first + height, n))
        block = frames[rows]
        for start in range(0, d, width):
            columns = slice(start, min(start + width, d))
            tile = buffer[: block.shape[0] * (columns.stop - start)].reshape(block.shape[0], -1)
            tile[...] = block[:, columns]
            yield rows, columns, tile


def _tile_shape(n: int, d: int) -> tuple[int, int]:
    """The rows and columns of :func:`float_tiles`' tiles of an (n, d) store."""
    budget = count_within(BUDGETS.tile, 8)
    width = min(d, max(1, budget // min(n, TILE_ROWS)))
    return max(1, budget // width), width


def _by_row_bands(frames: np.ndarray, out: np.ndarray, add) -> np.ndarray:
    """`out` with ``add(rows, columns, tile)`` run on every tile of :func:`float_tiles`, the
    bands of rows shared among the cores this pass may use: each thread adds to its own rows of
    `out` only, in the order one thread would, so the bytes do not depend on the threads."""
    bands = -(-frames.shape[0] // _tile_shape(*frames.shape)[0])
    workers = min(available_cores(), bands) if frames.shape[0] * frames.shape[1] >= SHARED_PASS_MIN_VALUES else 1

    def share(index: int, workers: int) -> None:
        for rows, columns, tile in float_tiles(frames, (index, workers)):
            add(rows, columns, tile)

    run_partitioned(share, workers)
    return out


def frame_products(frames: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``X v``: dot products of every stored frame with `vectors`, (d,) or (d, m), a
    cache-sized tile of the store at a time (:func:`float_tiles`), bands of rows on the cores
    this pass may use; shape (n,) or (n, m). Exact for integer frames and integer-valued
    vectors."""
    out = np.zeros((frames.shape[0],) + vectors.shape[1:])

    def add(rows, columns, tile):
        out[rows] += tile @ vectors[columns]

    return _by_row_bands(frames, out, add)


def frame_combination(frames: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``Xᵀ w = Σ_j w_j x_j``: the stored frames weighted by `weights` (n,) and summed, (d,),
    a cache-sized tile at a time. Exact for integer frames and integer weights."""
    out = np.zeros(frames.shape[1])
    for rows, columns, tile in float_tiles(frames):
        out[columns] += weights[rows] @ tile
    return out


def frame_squares(frames: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """``Σ_p w_p x_jp²`` for every stored frame, `weights` (d,) (None: every value once, without
    forming the squares apart); shape (n,)."""
    out = np.zeros(frames.shape[0])

    def add(rows, columns, tile):
        if weights is None:
            out[rows] += np.einsum("ij,ij->i", tile, tile)
        else:
            out[rows] += (tile * tile) @ weights[columns]

    return _by_row_bands(frames, out, add)
