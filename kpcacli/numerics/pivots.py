"""Where to read a frame: the values whose readings say most of the training frames.

Sensor placement for reconstruction picks values by QR factorisation with column pivoting
(Businger and Golub 1965) of a basis, as PySensors does on linear modes (Manohar et al. 2018):
each pick is the value whose column is farthest from the span of those picked before. Here
the columns are those of the training frames themselves, centred, ``A = X − 1 sᵀ`` (n x d):
kpca's pre-images are combinations of training frames, so the values that tell training
frames apart are the ones a partly seen frame needs. (Pivoting on the centred training frames
measured better than on PySensors' own sensors with kpca's reconstruction: docs/reconstruct.md.)

The factorisation never holds A: the residual norms of its d columns are kept, and each pick
costs one pass over the stored frames (``Aᵀ q`` for the new orthonormal direction q), so a
megapixel model picks P values in P passes, in memory of a few vectors of d.
"""

from __future__ import annotations

import numpy as np

from ..utils.progress import progress_bar
from .gram import float_tiles, frame_combination

# A column whose residual falls below this fraction of the largest column's norm adds no new
# direction (the frames' span is exhausted): later picks follow the columns' own variance.
EXHAUSTED = 1e-10


def pivoted_columns(frames: np.ndarray, origin: np.ndarray, count: int, progress: bool = False) -> np.ndarray:
    """The first `count` pivots of the QR factorisation with column pivoting of the centred
    training frames ``X − 1 sᵀ`` (`frames` (n, d), `origin` s (d,)): flat indices into the
    frame vector, in the order picked. Beyond the frames' rank (n − 1 directions at most),
    the remaining values are taken by decreasing variance. `progress`: a bar a pick (each a
    pass over the store)."""
    n, d = frames.shape
    origin = np.asarray(origin, dtype=np.float64)
    variance = np.zeros(d)
    for _, columns, tile in float_tiles(frames):
        centred = tile - origin[columns]
        variance[columns] += np.einsum("ij,ij->j", centred, centred)
    residual = variance.copy()
    scale = float(variance.max()) if d else 0.0
    directions = np.zeros((0, n))
    chosen: list[int] = []
    taken = np.zeros(d, dtype=bool)
    with progress_bar(progress, desc="sensors", total=count, unit="sensor") as bar:
        for _ in range(count):
            pick = _next_pivot(residual, taken, scale)
            if pick is None:
                rest = np.flatnonzero(~taken)
                order = rest[np.argsort(-variance[rest], kind="stable")]
                chosen.extend(int(v) for v in order[: count - len(chosen)])
                break
            column = np.asarray(frames[:, pick], dtype=np.float64) - origin[pick]
            direction = column - directions.T @ (directions @ column)
            direction -= directions.T @ (directions @ direction)  # twice is enough (Giraud et al. 2005)
            direction /= np.linalg.norm(direction)
            projections = frame_combination(frames, direction) - origin * direction.sum()  # Aᵀ q
            residual -= projections**2
            directions = np.vstack([directions, direction])
            chosen.append(pick)
            taken[pick] = True
            bar.update()
    return np.array(chosen, dtype=np.intp)


def _next_pivot(residual: np.ndarray, taken: np.ndarray, scale: float) -> int | None:
    """The value of largest residual variance not taken yet, or None once every direction of
    the frames is taken (the residual at rounding)."""
    candidates = np.where(taken, -np.inf, residual)
    pick = int(np.argmax(candidates))
    return None if candidates[pick] <= EXHAUSTED * scale else pick
