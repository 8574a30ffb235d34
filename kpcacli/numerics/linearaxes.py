"""The leading linear-PCA axes of the training frames, from their linear Gram, and the same
axes as frames (what the ``distance`` pre-image moves a frame along).

With ``c_i = x_i − x̄`` the centred training frames and ``C = H L H`` their centred linear Gram
(L the shifted Gram of :mod:`kpcacli.numerics.gram`, H the centring matrix), the unit axes of linear PCA
are ``a_j = Σ_i v_ij c_i / √λ_j = Σ_i v_ij x_i / √λ_j`` for the eigenpairs ``C v_j = λ_j v_j``
(``Σ_i v_ij = 0`` for λ_j > 0, so the mean drops out). A point with weights w over the training
frames (Σ w = 1) has coordinates ``√λ ⊙ Vᵀ w`` on these axes; one at squared distances d² to
every training frame has ``Vᵀ (diag C − d²) / (2 √λ)`` (Kwok and Tsang 2004, section 3,
projected on the axes).

Everything but the axis frames follows from the Gram without a pixel. The frames ``a_j`` are
``R`` weighted sums of every training frame; a model stores them (:mod:`kpcacli.modelfile.axes`)
so that a decoder reads its M neighbours and the R axes, never the whole training set.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .centring import centre_gram
from .spectrum import FULL_EIGENDECOMPOSITION_MAX, eigendecomposition, lanczos_eigenpairs

# Eigenvalues of the centred linear Gram below this fraction of the largest are rounding noise.
RANK_TOLERANCE = 1e-10
QUANTISED_OFFSET = 128.0  # 8-bit axis values are signed: 128 is zero
QUANTISED_REACH = 127.0  # the largest |value − offset| of an 8-bit axis


class AxisFrames:
    """The unit axes as frames, ``a_j = scale_j (values_j − offset)``, (R, d).

    ``values`` is an array, or anything ``numpy.asarray`` reads (a model's H.264 or Blosc
    store), or a function forming them, called once, when they are first needed: the Gram-only
    part of a solve never reads them.

    ``description`` and ``stored`` are how a model file holds them (:mod:`kpcacli.modelfile.axes`):
    the store's description, and its content (the coded groups, the float32 values, or the
    store they were read from); both None for axes formed in memory, which no model stores.
    """

    def __init__(
        self,
        values,
        scales: np.ndarray,
        offset: float = 0.0,
        description: dict | None = None,
        stored=None,
    ):
        self._values = values
        self.scales = np.asarray(scales, dtype=np.float64)
        self.offset = float(offset)
        self.description = description
        self.stored = stored
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """R, the number of axes."""
        return len(self.scales)

    def __getstate__(self) -> dict:
        # Pickled (to a cluster's workers) with the values read: a lock, a function forming
        # them or a model's on-demand store do not travel. Saving an unpickled model codes
        # the values again, losslessly (:func:`kpcacli.modelfile.axes.axis_members`).
        state = dict(self.__dict__, _values=self.values, stored=None)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    @property
    def values(self) -> np.ndarray:
        """The stored values, (R, d), read or formed on first use."""
        with self._lock:
            if isinstance(self._values, Callable):
                self._values = self._values()
            if not isinstance(self._values, np.ndarray):
                self._values = np.asarray(self._values)
            return self._values

    @property
    def is_read(self) -> bool:
        """Whether the values are in memory (not yet read from a model's store, or formed)."""
        return isinstance(self._values, np.ndarray)

    @property
    def dtype(self) -> np.dtype:
        """The stored values' dtype, without reading them where their store tells it."""
        known = getattr(self._values, "dtype", None)
        return np.dtype(known) if known is not None else self.values.dtype

    def row(self, index: int) -> np.ndarray:
        """``a_j`` for j = `index`, float64, (d,)."""
        return self.scales[index] * (np.asarray(self.values[index], dtype=np.float64) - self.offset)

    def matrix(self) -> np.ndarray:
        """``a_j`` as float64 rows, (R, d), to read, not to write: float64 values with unit
        scales and no offset (axes formed from the frames) are returned as they are, since at
        16 axes of a 1080 x 1920 frame each copy is 265 MB."""
        values = self.values
        if values.dtype == np.float64 and self.offset == 0.0 and np.all(self.scales == 1.0):
            return values
        out = values.astype(np.float64)
        out -= self.offset
        out *= self.scales[:, None]
        return out

    def terms(self, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``Σ_j move_j a_j = Σ_j weight_j values_j − shift`` for each row of `moves` (m, R):
        the weights on the stored values (m, R) and the shift (m,)."""
        weights = np.asarray(moves, dtype=np.float64) * self.scales
        return weights, self.offset * weights.sum(axis=1)

    @classmethod
    def quantised(cls, frames: np.ndarray) -> AxisFrames:
        """8-bit values of float axis frames (R, d), each axis scaled to its own range: the
        rounding is ~0.3% of an axis's largest value, well under what decoding resolves."""
        reach = np.maximum(frames.max(axis=1), -frames.min(axis=1))
        scales = np.where(reach > 0, reach / QUANTISED_REACH, 1.0)
        values = np.empty(frames.shape, dtype=np.uint8)
        for row, (axis, scale) in enumerate(zip(frames, scales)):  # a row at a time, in float32: in cache
            scaled = np.multiply(axis, 1.0 / scale, dtype=np.float32)
            scaled += np.float32(QUANTISED_OFFSET)
            values[row] = np.clip(np.rint(scaled, out=scaled), 0, 255, out=scaled)
        return cls(values, scales, QUANTISED_OFFSET)


@dataclass(frozen=True, eq=False)
class LinearAxes:
    """The R leading axes of linear PCA on the training frames.

    Attributes
    ----------
    eigenvectors : (n, R) ndarray
        ``v_j``, unit eigenvectors of the centred linear Gram ``C = H L H``.
    eigenvalues : (R,) ndarray
        ``λ_j > 0``, decreasing.
    centred_norms : (n,) ndarray
        ``|c_i|² = C_ii``, squared distances of the training frames to their mean.
    frames : AxisFrames, optional
        ``a_j`` as frames: stored with a model, or formed from the training frames when first
        used.
    """

    eigenvectors: np.ndarray
    eigenvalues: np.ndarray
    centred_norms: np.ndarray
    frames: AxisFrames | None = None

    @classmethod
    def of_gram(cls, shifted_gram: np.ndarray, count: int) -> LinearAxes:
        """The `count` leading axes (fewer when the frames span fewer) of the frames whose
        shifted linear Gram is `shifted_gram`: ``(X − s)(X − s)ᵀ`` centred is ``C``."""
        centred, _, _ = centre_gram(shifted_gram)
        if not np.any(centred):  # identical training frames: no axis to move along
            return cls(np.zeros((len(centred), 0)), np.zeros(0), np.zeros(len(centred)))
        if len(centred) > FULL_EIGENDECOMPOSITION_MAX:  # the leading ones only, as the kernel's
            eigenvalues, eigenvectors = lanczos_eigenpairs(centred, count)
        else:
            eigenvalues, eigenvectors = eigendecomposition(centred)  # decreasing, signs fixed
        rank = int(np.count_nonzero(eigenvalues > eigenvalues[0] * RANK_TOLERANCE))
        count = min(count, rank)
        return cls(eigenvectors[:, :count], eigenvalues[:count], np.maximum(np.diag(centred), 0.0))

    @property
    def count(self) -> int:
        """R, the number of axes."""
        return len(self.eigenvalues)

    def frame_weights(self) -> np.ndarray:
        """``a_j = Σ_i W_ji x_i``: the weights forming the axis frames, (R, n), each row
        summing to zero (the mean frame drops out exactly, not only up to rounding)."""
        weights = self.eigenvectors.T / np.sqrt(self.eigenvalues)[:, None]
        return weights - weights.mean(axis=1, keepdims=True)

    def with_frames(self, frames: AxisFrames | Callable[[], np.ndarray]) -> LinearAxes:
        """These axes with their frames: `frames`, or float64 frames a function forms."""
        if not isinstance(frames, AxisFrames):
            frames = AxisFrames(frames, np.ones(self.count))
        return LinearAxes(self.eigenvectors, self.eigenvalues, self.centred_norms, frames)

    def coordinates_of_weights(self, indices: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Coordinates of ``Σ_i w_i x_i`` over the training frames `indices` (Σ w = 1) on the
        unit axes: ``√λ ⊙ Vᵀ w``."""
        return np.sqrt(self.eigenvalues) * (self.eigenvectors[indices].T @ weights)

    def coordinates_of_distances(self, squared_distances: np.ndarray) -> np.ndarray:
        """Coordinates of the point at these squared distances to every training frame."""
        centred_dots = (self.centred_norms - squared_distances) / 2.0
        return (self.eigenvectors.T @ centred_dots) / np.sqrt(self.eigenvalues)
