"""Landmarks: fit on M frames chosen across a long clip, encode the others.

Kernel PCA costs an n x n Gram and eigenproblem; a clip of thousands of frames can be modelled
from M of them. Two ways to choose:

* ``uniform``: M frames evenly spaced in time (cheap, no pass over pixels);
* ``farthest``: greedy farthest-point sampling, starting from the first frame, each step
  adding the frame farthest from those already chosen. For the Gaussian kernel the
  feature-space distance ``‖Φ(x) − Φ(y)‖² = 2 − 2 exp(−β ‖x − y‖²)`` grows with ``‖x − y‖``, so
  farthest in input space is farthest in kernel distance, whatever β. Each step is one pass
  over the frames (their dot products with the new landmark).

`kpca eval --landmarks M` reports the quality this costs on held-out frames.
"""

from __future__ import annotations

import numpy as np

from ..utils.hyperparameters import check
from .gram import frame_products


def choose_landmarks(frames: np.ndarray, count: int, method: str = "uniform") -> np.ndarray:
    """Indices (sorted, in frame order) of `count` landmark frames among the rows of `frames`."""
    n = frames.shape[0]
    check_landmarks(count, method)
    if count >= n:
        return np.arange(n)
    if method == "uniform":
        return uniform_landmarks(n, count)
    return farthest_landmarks(
        square_norms(frames[i] for i in range(n)),
        count,
        lambda i: frame_products(frames, np.asarray(frames[i], dtype=np.float64)),
    )


def check_landmarks(count: int | None, method: str = "uniform") -> None:
    """A landmark count (at least 2, or None for none) and method, checked before any frame is
    read."""
    check("landmark_method", method)
    check("landmarks", count)


def square_norms(rows) -> np.ndarray:
    """``‖x_i‖²`` of each row, in float64."""
    return np.array([float(np.sum(np.asarray(row, dtype=np.float64) ** 2)) for row in rows])


def farthest_landmarks(norms: np.ndarray, count: int, products_with) -> np.ndarray:
    """Greedy farthest-point sampling (sorted indices of `count` frames) among frames of
    squared norms `norms`, starting from the first; ``products_with(i)`` gives the dot
    products of every frame with frame i, one pass over the frames wherever they live (here, or
    on a cluster's workers: :mod:`kpcacli.engines.cluster`)."""
    n = len(norms)
    chosen = [0]
    nearest = np.full(n, np.inf)  # squared distance of every frame to the chosen set
    for _ in range(min(count, n) - 1):
        latest = chosen[-1]
        distances = norms + norms[latest] - 2.0 * products_with(latest)
        nearest = np.minimum(nearest, np.maximum(distances, 0.0))
        nearest[chosen] = -1.0
        chosen.append(int(np.argmax(nearest)))
    return np.sort(np.asarray(chosen))


def uniform_landmarks(n: int, count: int) -> np.ndarray:
    """Indices of `count` frames evenly spaced among `n` (all of them when count ≥ n)."""
    check("landmarks", count, required=True)
    return evenly_spaced(n, count)


def evenly_spaced(n: int, count: int) -> np.ndarray:
    """Indices of at most `count` of `n` samples, evenly spaced, the first and the last among
    them (all of them when count ≥ n)."""
    return np.unique(np.rint(np.linspace(0, n - 1, min(n, count))).astype(int))
