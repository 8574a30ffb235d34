"""The linear Gram of 8-bit frames, computed while the frames are still arriving.

Fitting from a video decodes the frames, compresses them and computes their Gram. Done one
after the other, the Gram waits for the last frame. :class:`StreamedGram` instead multiplies
each strip of new rows with every row before it (the lower triangle of ``X Xᵀ``, strip by
strip) on a background thread while the decoder produces the next frames, then shifts the
result by the mean frame at the end (García-González et al. 2021, eq. 8, with the shift of
:mod:`kpcacli.gram`):

    L = (X - 1 sᵀ)(X - 1 sᵀ)ᵀ = X Xᵀ - u 1ᵀ - 1 uᵀ + |s|² 1 1ᵀ,     u = X s.

For 8-bit frames and the integer origin ``s`` (the rounded mean) every term is an integer
below 2⁵³, computed exactly (float32 products of at most ``EXACT_COLUMNS`` pixel columns,
added in float64), so ``L``, ``u - |s|²`` and ``|s|²`` equal :func:`kpcacli.gram.linear_gram`'s
bit for bit, and so does the model. Other dtypes are not streamed: :meth:`StreamedGram.finish`
computes their Gram by the column pass.

The strips grow with the backlog: the thread takes every row that arrived while it was busy,
so a slow Gram works on larger, more efficient products and a fast one stays one strip
behind the decoder. What is left when the last frame arrives is computed on every core.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from .gram import BLOCK_BYTES, EXACT_COLUMNS, LinearGram, float_block, frame_products, linear_gram
from .parallel import available_cores, run_partitioned
from .progress import progress_bar

# A strip starts once this many new rows wait: thinner float32 products run well below the
# BLAS's speed. Timed on one thread for 132 random 8-bit frames of 720 x 1280, the whole
# triangle would take 0.49 s in strips of 8 rows, 0.34 s in strips of 16, 0.31 s in strips
# of 33, against 0.30 s for the full square in one pass.
MIN_STRIP = 16


class StreamedGram:
    """``X Xᵀ`` of 8-bit frames accumulated strip by strip while they are written.

    Use: :meth:`wants_rows` after each frame written; when it is true, hand over a readable
    ``(m, d)`` view of every row so far (:meth:`add_rows`); at the end, :meth:`finish` with
    all the frames gives the :class:`~kpcacli.gram.LinearGram`. Close (or use as a context
    manager) to stop the thread on error.
    """

    def __init__(self):
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kpca-gram")
        self.pending: Future | None = None
        self.strips: list[tuple[int, np.ndarray]] = []  # (first row, products with rows [0, first + rows))
        self.done = 0  # rows whose strip has been handed to the thread
        self.column_sums: np.ndarray | None = None

    def __enter__(self) -> StreamedGram:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def wants_rows(self, count: int, dtype: np.dtype) -> bool:
        """Whether to hand over the first `count` rows now: 8-bit frames, the thread idle,
        and at least ``MIN_STRIP`` rows new."""
        if np.dtype(dtype) != np.uint8 or count - self.done < MIN_STRIP:
            return False
        return self.pending is None or self.pending.done()

    def add_rows(self, rows: np.ndarray) -> None:
        """Start the strip of the rows after the last strip, against `rows` (every row so far)."""
        if self.pending is not None:
            self.pending.result()  # a failure surfaces here, in the caller's thread
        first, self.done = self.done, rows.shape[0]
        self.pending = self.pool.submit(self._strip, rows, first, 1)

    def _strip(self, rows: np.ndarray, first: int, workers: int, progress: bool = False) -> None:
        products, sums = strip_products(rows, first, workers, progress)
        self.strips.append((first, products))
        self.column_sums = sums if self.column_sums is None else self.column_sums + sums

    def finish(self, frames: np.ndarray, progress: bool = False) -> LinearGram:
        """The linear Gram of `frames` (every row, as handed over and more): the rows not
        yet multiplied on every core, then the shift. Frames of another dtype, or too few
        to have streamed, get :func:`kpcacli.gram.linear_gram`."""
        if self.pending is not None:
            self.pending.result()
        self.close()
        n, d = frames.shape
        if np.dtype(frames.dtype) != np.uint8 or self.done == 0:
            return linear_gram(frames, progress=progress)
        if self.done < n:
            self._strip(frames, self.done, available_cores(), progress)
        products = np.empty((n, n))
        for first, strip in self.strips:
            stop = first + strip.shape[0]
            products[first:stop, :stop] = strip
            products[:first, first:stop] = strip[:, :first].T
        origin = np.rint(self.column_sums / n)  # as linear_gram: the exact mean, rounded
        dots = frame_products(frames, origin)  # u = X s, exact
        norm2 = float(origin @ origin)
        shifted = products - dots[:, None] - dots[None, :] + norm2
        return LinearGram(shifted, origin.astype(np.uint8), dots - norm2, norm2)


def strip_products(
    rows: np.ndarray, first: int, workers: int = 1, progress: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``rows[first:] @ rows.T`` and the column sums of ``rows[first:]``, for 8-bit `rows`,
    exactly: float32 GEMMs of ``EXACT_COLUMNS`` columns (every partial sum an integer below
    2²⁴) added in float64, over blocks of pixel columns shared among `workers` threads.

    One stacked ``matmul`` per block does all its GEMMs: few calls into numpy, so the thread
    seldom waits for the GIL while the decoder's threads hold it.
    """
    m, d = rows.shape
    new = m - first
    # float32 blocks of BLOCK_BYTES, a whole number of EXACT_COLUMNS wide
    step = max(EXACT_COLUMNS, BLOCK_BYTES // (4 * m) // EXACT_COLUMNS * EXACT_COLUMNS)
    starts = range(0, d, step)

    def share(index: int, count: int):
        products, sums = np.zeros((new, m)), np.zeros(d)
        buffer = np.empty((m, step), dtype=np.float32)
        for start in starts[index::count]:
            stop = min(start + step, d)
            block = float_block(rows[:, start:stop], buffer)
            sums[start:stop] = block[first:].sum(axis=0, dtype=np.float64)
            whole = (stop - start) // EXACT_COLUMNS
            if whole:
                slices = block[:, : whole * EXACT_COLUMNS].reshape(m, whole, EXACT_COLUMNS).transpose(1, 0, 2)
                products += np.matmul(slices[:, first:], slices.transpose(0, 2, 1)).sum(axis=0, dtype=np.float64)
            if whole * EXACT_COLUMNS < stop - start:
                rest = block[:, whole * EXACT_COLUMNS :]
                products += rest[first:] @ rest.T
            bar.update(stop - start)
        return products, sums

    with progress_bar(progress, desc="Gram", total=d, unit="px", unit_scale=True) as bar:
        shares = run_partitioned(share, min(workers, len(starts)))
    products = sum((share[0] for share in shares[1:]), shares[0][0])
    sums = sum((share[1] for share in shares[1:]), shares[0][1])
    return products, sums
