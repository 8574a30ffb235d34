"""The values a frame hides, and products of the training frames with vectors that live there.

Completing a frame seen in part (:mod:`kpcacli.estimators.reconstruction`) changes its hidden values
only, round after round; its products with the training frames change by ``X_H Δ_H``, the
training frames at the hidden values times the change there. Reading those values alone makes
a round cost a fraction of a pass over the store. A mask of blocks (an occluder, a logo, a dead
region) hides rectangles: each is read as a strided slice of every training frame, converted
to float64 a cache-sized tile at a time (:data:`kpcacli.utils.budgets.Budgets.tile`). A mask of
scattered values (sparse sensors leave almost everything hidden, in short pieces) is read as
one pass over whole rows with the vector set to zero where the frame is observed.

For integer frames every product is an exact integer in float64, as in
:mod:`kpcacli.numerics.gram`, whichever way it is read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..utils.budgets import BUDGETS, count_within
from .gram import frame_products, frame_squares

# Rectangles smaller than this many values on average are read as one pass over whole rows
# instead (their slices' overhead outgrows the values they save).
SMALLEST_MEAN_RECTANGLE = 256


@dataclass(frozen=True)
class HiddenValues:
    """Where a frame is hidden, as rectangles of its values laid out in rows of `width`.

    Attributes
    ----------
    size : int
        d, the length of the frame vector.
    width : int
        The values in one row of the frame (its width; three times it in colour; d for points).
    rectangles : (R, 4) ndarray of int
        ``first_row, rows, first_column, columns`` of each rectangle, in the order their
        values are numbered (:attr:`indices`).
    """

    size: int
    width: int
    rectangles: np.ndarray

    @classmethod
    def of(cls, hidden: np.ndarray, width: int | None = None) -> HiddenValues:
        """From a (d,) bool vector, True where hidden, laid out in rows of `width` (default:
        one row). Runs of hidden values in consecutive rows with the same columns join into
        one rectangle."""
        size = len(hidden)
        width = size if width is None else int(width)
        rectangles: list[list[int]] = []
        open_rectangles: dict[tuple[int, int], int] = {}  # a run's columns -> its rectangle
        edges = np.diff(np.pad(hidden.reshape(-1, width).astype(np.int8), ((0, 0), (1, 1))), axis=1)
        starts, stops = np.nonzero(edges == 1), np.nonzero(edges == -1)  # both row-major
        for row, start, stop in zip(starts[0].tolist(), starts[1].tolist(), stops[1].tolist()):
            index = open_rectangles.get((start, stop))
            if index is not None and rectangles[index][0] + rectangles[index][1] == row:
                rectangles[index][1] += 1
            else:
                open_rectangles[(start, stop)] = len(rectangles)
                rectangles.append([row, 1, start, stop - start])
        return cls(size, width, np.array(rectangles, dtype=np.intp).reshape(-1, 4))

    @cached_property
    def indices(self) -> np.ndarray:
        """The hidden values' flat indices, rectangle by rectangle, each row by row, (h,)."""
        parts = [
            ((top + np.arange(rows))[:, None] * self.width + left + np.arange(columns)[None, :]).ravel()
            for top, rows, left, columns in self.rectangles
        ]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)

    @property
    def count(self) -> int:
        """h, the number of hidden values."""
        return int(np.sum(self.rectangles[:, 1] * self.rectangles[:, 3]))

    @property
    def _by_rectangles(self) -> bool:
        return len(self.rectangles) > 0 and self.count >= SMALLEST_MEAN_RECTANGLE * len(self.rectangles)

    def gathered(self, frames: np.ndarray) -> np.ndarray | None:
        """The training frames at the hidden values, (n, h) in their own dtype, columns in the
        order of :attr:`indices`, when the mask hides rectangles and they fit
        ``BUDGETS.hidden_values``; else None. Read once, they serve every round of a frame at
        the speed of a contiguous pass (the rectangles' strided rows are read again otherwise)."""
        if not self._by_rectangles or len(frames) * self.count * frames.dtype.itemsize > BUDGETS.hidden_values:
            return None
        out = np.empty((len(frames), self.count), dtype=frames.dtype)
        # Frames are read a block at a time, the block within a quarter of the budget of what
        # is gathered (a store decodes what it is asked for), each rectangle copied from the
        # whole block at once: one strided copy per rectangle and block, not per rectangle and
        # frame, whose Python overhead outgrew the copying.
        step = count_within(BUDGETS.hidden_values // 4, self.size * frames.dtype.itemsize)
        height = self.size // self.width
        for start in range(0, len(frames), step):
            block = np.asarray(frames[start : start + step]).reshape(-1, height, self.width)
            offset = 0
            for top, rows, left, columns in self.rectangles:
                target = out[start : start + len(block), offset : offset + rows * columns]
                target.reshape(len(block), rows, columns)[...] = block[:, top : top + rows, left : left + columns]
                offset += rows * columns
        return out

    def products(self, frames: np.ndarray, vectors: np.ndarray, gathered: np.ndarray | None = None) -> np.ndarray:
        """``X_H V``: the training frames (n, d) at the hidden values times `vectors` (h, g),
        whose rows follow :attr:`indices` (from `gathered`, :meth:`gathered`'s, when given).
        Returns (n, g)."""
        if gathered is not None:
            return frame_products(gathered, vectors)
        if not self._by_rectangles:
            full = np.zeros((self.size, vectors.shape[1]))
            full[self.indices] = vectors
            return frame_products(frames, full)
        out = np.zeros((len(frames), vectors.shape[1]))
        for rows, offset, tile in self._tiles(frames):
            out[rows] += tile @ vectors[offset : offset + tile.shape[1]]
        return out

    def squared_sums(self, frames: np.ndarray, gathered: np.ndarray | None = None) -> np.ndarray:
        """``Σ_{p hidden} x_jp²`` for every training frame, (n,) (from `gathered` when given)."""
        if gathered is not None:
            return frame_squares(gathered)
        if not self._by_rectangles:
            weights = np.zeros(self.size)
            weights[self.indices] = 1.0
            return frame_squares(frames, weights)
        out = np.zeros(len(frames))
        for rows, _, tile in self._tiles(frames):
            out[rows] += np.einsum("ij,ij->i", tile, tile)
        return out

    def _tiles(self, frames: np.ndarray):
        """``(rows, offset, tile)``: the training frames `rows` (a slice) at a band of one
        rectangle's rows, as a float64 (len(rows), values) tile within ``BUDGETS.tile``, and
        where the band's values start in :attr:`indices`."""
        n = len(frames)
        budget = count_within(BUDGETS.tile, 8)
        buffer = np.empty(max(budget, int(self.rectangles[:, 3].max())))  # a row wider than the budget: alone
        offset = 0
        for top, rows, left, columns in self.rectangles:
            band = max(1, min(rows, budget // columns))  # image rows of the rectangle per tile
            for first in range(top, top + rows, band):
                last = min(first + band, top + rows)
                values = (last - first) * columns
                step = max(1, budget // values)
                for start in range(0, n, step):
                    chosen = slice(start, min(start + step, n))
                    block = frames[chosen].reshape(-1, self.size // self.width, self.width)
                    tile = buffer[: block.shape[0] * values].reshape(block.shape[0], last - first, columns)
                    tile[...] = block[:, first:last, left : left + columns]
                    yield chosen, offset, tile.reshape(block.shape[0], values)
                offset += values
