"""Nearest training samples in reduced space (García-González et al. 2021, end of section 4).

The pre-image of a code is sought among the training samples whose codes are nearest to it.
Clips that go back and forth, or hold still, have several training frames with (nearly) the
same code: those count as one view, so that M neighbours are M different views.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property

import numpy as np

# Training samples whose codes are closer than this fraction of the typical code spacing count
# as one view when neighbours are chosen (clips that go back and forth, static shots).
DUPLICATE_FRACTION = 0.25
# Training samples whose codes are closer than this fraction of the spacing are copies of one
# frame (the same pixels, to rounding), and hold the same noise.
COPY_FRACTION = 1e-6
# Rows of the code-distance matrix computed at a time: memory stays O(n), not O(n²).
ROW_CHUNK = 512


class NeighbourSearch:
    """Nearest-neighbour queries among the training codes.

    Parameters
    ----------
    codes : (n, k) ndarray
        The training codes ``Z*ᵀ`` (eq. 27).
    """

    def __init__(self, codes: np.ndarray):
        self.codes = codes

    @cached_property
    def code_spacing(self) -> float:
        """Typical distance between a training code and its nearest distinct neighbour
        (:func:`typical_spacing` of the codes)."""
        codes = self.codes
        return typical_spacing(np.sum(codes**2, axis=1), lambda rows: codes[rows] @ codes.T)

    @cached_property
    def code_reach(self) -> float:
        """The longest edge of the training codes' minimum spanning tree (:func:`reach`)."""
        codes = self.codes
        return reach(np.sum(codes**2, axis=1), lambda rows: codes[rows] @ codes.T)

    def nearest_distances(self, codes: np.ndarray) -> np.ndarray:
        """Distance from each of `codes` (m, k) to its nearest training code, (m,)."""
        codes = np.atleast_2d(codes)
        squared = np.sum(self.codes**2, axis=1)
        nearest = np.empty(len(codes))
        for start in range(0, len(codes), ROW_CHUNK):
            rows = codes[start : start + ROW_CHUNK]
            block = np.sum(rows**2, axis=1)[:, None] + squared[None, :] - 2.0 * rows @ self.codes.T
            nearest[start : start + len(rows)] = np.sqrt(np.maximum(block.min(axis=1), 0.0))
        return nearest

    def own_view(self, code: np.ndarray) -> int | None:
        """The training sample whose view `code` is (its code within ``DUPLICATE_FRACTION`` of
        :attr:`code_spacing`: a training frame encoded again, up to rounding, or another copy of
        it), else None. Denoising leaves it out of the neighbours (``exclude_view_of``): a
        training frame's own copy holds its own noise, and every neighbour solver would give it
        back unchanged."""
        distances = np.linalg.norm(self.codes - code, axis=1)
        nearest = int(np.argmin(distances))
        return nearest if distances[nearest] <= DUPLICATE_FRACTION * self.code_spacing else None

    def nearest(
        self,
        code: np.ndarray,
        count: int,
        distinct: bool = True,
        exclude_view_of: int | None = None,
        exclude_copies_of: int | None = None,
    ) -> np.ndarray:
        """Indices of the `count` training samples nearest to `code`, nearest first.

        With `distinct`, a sample whose code lies within ``DUPLICATE_FRACTION`` of
        :attr:`code_spacing` of an already chosen one is the same view and is skipped.
        `exclude_view_of` (distinct only) leaves out that training sample and every sample
        that is the same view of it: a training frame's neighbours as if it were held out.
        `exclude_copies_of` leaves out that sample and its copies (codes within
        ``COPY_FRACTION`` of the spacing): denoising a training frame, its other views, with
        noise of their own, stay its neighbours.
        """
        distances = np.linalg.norm(self.codes - code, axis=1)
        order = np.argsort(distances, kind="stable")
        if exclude_copies_of is not None:
            copies = np.linalg.norm(self.codes - self.codes[exclude_copies_of], axis=1)
            order = order[copies[order] > COPY_FRACTION * self.code_spacing]
        if not distinct:
            return order[: min(count, len(order))]
        radius = DUPLICATE_FRACTION * self.code_spacing
        excluded = [] if exclude_view_of is None else [int(exclude_view_of)]
        chosen: list[int] = []
        for index in order:
            taken = chosen + excluded
            # One norm over the samples taken, not one call per pair: this runs for every code
            # every decode and the solver choice solve.
            if not taken or np.all(np.linalg.norm(self.codes[taken] - self.codes[index], axis=1) > radius):
                chosen.append(int(index))
                if len(chosen) == count:
                    break
        return np.asarray(chosen, dtype=np.intp)


def nearest_other_distances(squared_norms: np.ndarray, inner_products: Callable[[slice], np.ndarray]) -> np.ndarray:
    """The distance from each sample to its nearest other sample, (n,).

    Parameters
    ----------
    squared_norms : (n,) ndarray
        ``|x_i|²`` of the samples (codes, or frames less a common shift).
    inner_products : callable
        ``inner_products(rows)`` gives the rows `rows` of the (n, n) matrix ``x_i · x_j``:
        computed ``ROW_CHUNK`` rows at a time, memory stays O(n).
    """
    n = len(squared_norms)
    nearest = np.empty(n)
    for start in range(0, n, ROW_CHUNK):
        rows = slice(start, min(start + ROW_CHUNK, n))
        block = squared_norms[rows, None] + squared_norms[None, :] - 2.0 * inner_products(rows)
        block[np.arange(block.shape[0]), np.arange(rows.start, rows.stop)] = np.inf
        nearest[rows] = np.sqrt(np.maximum(block.min(axis=1), 0.0))
    return nearest


def _positive(nearest: np.ndarray, squared_norms: np.ndarray) -> np.ndarray:
    """The distances of a sample to a distinct one: runs of identical samples (a static shot)
    would otherwise count as zero."""
    scale = float(np.sqrt(squared_norms.max())) if len(squared_norms) else 0.0
    return nearest[nearest > 1e-9 * (scale or 1.0)]


def typical_spacing(squared_norms: np.ndarray, inner_products: Callable[[slice], np.ndarray]) -> float:
    """The median distance from a sample to its nearest distinct sample
    (:func:`nearest_other_distances`; same parameters), 0 when every sample is the same."""
    positive = _positive(nearest_other_distances(squared_norms, inner_products), squared_norms)
    return float(np.median(positive)) if positive.size else 0.0


def reach(squared_norms: np.ndarray, inner_products: Callable[[slice], np.ndarray]) -> float:
    """The longest edge of the samples' minimum spanning tree (same parameters as
    :func:`nearest_other_distances`), 0 when every sample is the same: the widest gap between
    parts of the set, which a new sample of the same kind can fall in.

    The largest distance from a sample to its nearest other one would collapse on clips that
    go there and back: each frame's nearest other is its twin on the way back, so the gaps
    between consecutive positions would go unmeasured and held-out frames of the clip be
    called far. The tree joins every sample across the smallest gaps there are, so its
    longest edge is at least every sample's nearest-other distance, and is the gap between
    consecutive positions whether or not they are visited twice. Prim's algorithm, one row of
    products at a time: O(n²) time, O(n) memory.
    """
    n = len(squared_norms)
    if n < 2:
        return 0.0
    joined = np.zeros(n, dtype=bool)
    gap = np.full(n, np.inf)  # squared distance from each sample outside the tree to the tree
    longest, newest = 0.0, 0
    for _ in range(n - 1):
        joined[newest] = True
        row = np.asarray(inner_products(slice(newest, newest + 1)), dtype=np.float64).ravel()
        distances = np.maximum(squared_norms[newest] + squared_norms - 2.0 * row, 0.0)
        np.minimum(gap, distances, out=gap)
        gap[joined] = np.inf
        newest = int(np.argmin(gap))
        longest = max(longest, float(gap[newest]))
    longest = float(np.sqrt(longest))
    scale = float(np.sqrt(squared_norms.max()))
    return longest if longest > 1e-9 * (scale or 1.0) else 0.0
