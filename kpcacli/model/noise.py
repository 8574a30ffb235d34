"""White noise in frames: how much, estimated from their pixels, and the kernel arguments of a
noisy frame freed of what the noise adds to them.

White noise ``n`` of standard deviation σ adds to a frame's squared distance to every training
frame ``|x + n − x_j|² = |x − x_j|² + 2⟨n, x − x_j⟩ + |n|²``: ``σ² d`` in expectation, the same
for every j, and a cross term of mean zero and standard deviation ``2σ|x − x_j|``, small beside
the distance itself when d is large (the distances of noisy high-dimensional data concentrate
around the clean ones plus a constant, El Karoui 2010). To a Gaussian kernel the constant is a
factor ``exp(−β σ² d)`` on every kernel value, so the code shrinks toward the origin, and every
solver that reads where a code lies (all but Mika's fixed point, invariant to that factor)
decodes a frame far from the clean one: on real footage a new frame with noise of 10 grey
levels decoded as it came lost more to the factor than to the noise (docs/quality.md,
"Denoising new frames"). :func:`noise_free_arguments` removes the constant, estimated from the
frame's own pixels less the training frames' own noise (fitted on noisy frames, the Gram's
distances hold it too). Dot products (the other kernels) gain nothing from the noise in
expectation, and are left as they are.

References
----------
Donoho and Johnstone 1994 (the noise estimate); El Karoui 2010, *On information plus noise
kernel random matrices*, Annals of Statistics 38(5).
"""

from __future__ import annotations

import numpy as np

from ..numerics.landmarks import evenly_spaced
from ..numerics.metrics import wavelet_noise
from .state import FittedState

NOISE_SAMPLE_FRAMES = 8  # training frames whose pixels estimate their noise (pixel_noise)


def pixel_noise(state: FittedState, rows: np.ndarray) -> float:
    """The standard deviation of white noise in the training frames (value units): the median
    over ``NOISE_SAMPLE_FRAMES`` of `rows`, evenly spaced, of each one's :func:`_noise`."""
    rows = np.asarray(rows)
    sampled = rows[evenly_spaced(len(rows), NOISE_SAMPLE_FRAMES)]
    return float(np.median([_noise(state, state.frames[int(row)]) for row in sampled]))


def row_noise(state: FittedState, rows: np.ndarray) -> np.ndarray | None:
    """The white noise of each new row (m,: its :func:`_noise`, value units); None where nothing
    is taken out of kernel arguments: a kernel of dot products (noise adds nothing to them in
    expectation) and points (no pixels to estimate noise from)."""
    if not state.kernel.uses_distance or state.is_points:
        return None
    return np.array([_noise(state, row) for row in rows])


def _noise(state: FittedState, row) -> float:
    """:func:`kpcacli.numerics.metrics.wavelet_noise` of one row of `state`'s frames' shape."""
    return wavelet_noise(np.asarray(row).reshape(tuple(state.frame_shape)))


def noise_free_arguments(state: FittedState, arguments: np.ndarray, noise, training_noise: float) -> np.ndarray:
    """`arguments` (m, n: squared distances of m new rows to every training frame) less what each
    row's white noise adds beyond the training frames' own, ``(σ_row² − σ_train²) d`` (`noise`:
    σ_row, :func:`row_noise`; `training_noise`: σ_train), floored at zero; `arguments` as they
    are when `noise` is None."""
    if noise is None:
        return arguments
    excess = np.asarray(noise, dtype=np.float64) ** 2 - training_noise**2
    return np.maximum(arguments - excess[:, None] * state.frames.shape[1], 0.0)


def training_copies(state: FittedState, arguments: np.ndarray, noise, training_noise: float) -> np.ndarray:
    """Which new rows may be a training frame again, with the training frame's own noise (m,
    bool): those nearer their nearest training frame than half the noise either holds adds to a
    squared distance, ``min_j a_j ≤ ½ max(σ_row², σ_train²) d``. A new frame lies at least its
    own noise's ``σ_row² d`` from every training frame, and a new clean frame at least the
    training frames' noise from its nearest; a copy lies at zero. Every row when `noise` is None
    (the codes alone decide, :meth:`kpcacli.model.neighbours.NeighbourSearch.own_view`)."""
    if noise is None:
        return np.ones(len(arguments), dtype=bool)
    noise = np.asarray(noise, dtype=np.float64)
    return arguments.min(axis=1) <= 0.5 * np.maximum(noise**2, training_noise**2) * state.frames.shape[1]
