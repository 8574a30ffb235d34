"""The optimiser shared by the weight-space solvers: L-BFGS-B over ``w ≥ 0`` from fixed starts."""

from __future__ import annotations

import numpy as np

from .base import Preimage

MAX_ITERATIONS = 400


def starting_weights(state, code: np.ndarray, neighbours: np.ndarray) -> list[np.ndarray]:
    """Deterministic starts: the nearest sample, uniform weights, normalised inverse distances."""
    m = len(neighbours)
    nearest = np.zeros(m)
    nearest[0] = 1.0
    starts = [nearest]
    if m > 1:
        starts.append(np.full(m, 1.0 / m))
        distances = np.linalg.norm(state.codes[neighbours] - code, axis=1)
        if distances[0] > 0:
            inverse = 1.0 / distances
            starts.append(inverse / inverse.sum())
    return starts


def minimise_over_weights(objective, state, code, neighbours) -> Preimage:
    """Minimise ``objective(w) -> (value, gradient)`` over ``w ≥ 0`` from the
    :func:`starting_weights`; the best start wins."""
    import scipy.optimize  # lazy: a slow import that fit never needs

    best = None
    for start in starting_weights(state, code, neighbours):
        result = scipy.optimize.minimize(
            objective,
            start,
            jac=True,
            method="L-BFGS-B",
            bounds=[(0.0, None)] * len(start),
            options={"maxiter": MAX_ITERATIONS, "ftol": 1e-15, "gtol": 1e-12},
        )
        if best is None or result.fun < best.fun:
            best = result
    return Preimage(
        indices=np.asarray(neighbours),
        weights=np.maximum(best.x, 0.0),
        objective=float(best.fun),
        converged=bool(best.success),
        iterations=int(best.nit),
    )
