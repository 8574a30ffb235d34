"""What a fitted state's ``frames`` member is (:class:`kpcacli.model.state.FittedState`): the
``(n, d)`` training frames, either an array (in memory, or memory-mapped while a fit holds
them) or rows read on demand (:class:`RowsOnDemand`), which the solvers read through this
interface alone, never through what holds them (a model file's store,
:mod:`kpcacli.modelfile.storedframes`; the solver choice's held-back models,
:mod:`kpcacli.preimage.heldout`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class RowsOnDemand(ABC):
    """``(n, d)`` training frames read when asked: ``frames[i]`` is row i alone, :meth:`rows`
    a few of them, and any other access (slices, ``numpy.asarray``) every row."""

    ndim = 2
    shape: tuple[int, int]
    dtype: np.dtype

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def in_memory(self) -> bool:
        """Whether every row is read already (then ``numpy.asarray`` costs nothing)."""
        return False

    def rows(self, indices, threads: int) -> np.ndarray:
        """The rows at `indices` (increasing), ``(r, d)``, read on at most `threads` threads
        (here one row after another)."""
        return np.stack([np.asarray(self[int(row)]) for row in indices])

    @abstractmethod
    def __getitem__(self, key): ...

    @abstractmethod
    def __array__(self, dtype=None, copy=None): ...


FrameRows = np.ndarray | RowsOnDemand  # what FittedState.frames holds


def read_rows(frames: FrameRows, indices: np.ndarray, threads: int) -> np.ndarray:
    """The rows `indices` (increasing) of `frames`, ``(r, d)`` in their dtype: an array
    itself when every row is asked (no copy), else its rows; rows on demand read on
    `threads` threads, or from memory once every row is read."""
    if isinstance(frames, RowsOnDemand) and frames.in_memory:
        frames = np.asarray(frames)
    if isinstance(frames, RowsOnDemand):
        return frames.rows(indices, threads)
    frames = np.asarray(frames)
    return frames if len(indices) == frames.shape[0] else frames[indices]
