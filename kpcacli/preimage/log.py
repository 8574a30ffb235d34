"""The log-discrepancy pre-image solver of García-González et al. (2021, eq. 35), made robust.

The pre-image is a convex combination of training frames, ``x* = Σ_{j∈N} w_j x^j`` (eq. 31)
with ``w ≥ 0`` and ``Σ w = 1``, over the M training samples N nearest to the code ``z*`` in
reduced space (end of section 4). The weights minimise the discrepancy between logarithms of
kernel values (eq. 35):

    J(w) = Σ_{i∈N} ( log t_i − log κ(x^i, Σ_j w_j x^j) )²

For the Gaussian ``log κ = −β |x^i − X_N w|²`` and ``|x^i − X_N w|² = D_ii − 2 D_iN w + wᵀ D_NN w``
with ``D = X Xᵀ`` from the linear Gram, so J and its gradient come from an M x M block of the
Gram: no pixel is read until the final weighted sum.

**The target t.** The paper uses ``t = V* z*``: the kernel vector of the unknown frame, seen
through the k kept components only. With small k (the paper's k = 3) that projection loses much
of the vector, and matching it against the *full* kernel values of a candidate biases the
solution: at a training frame's own code the paper's J is not minimised by that frame. Here the
part the k codes cannot carry is completed from the neighbours:

    t = V*_N z* + R_NN a,      R = G − V* V*ᵀ G   (the residual of each kernel column)

where ``a ≥ 0, Σ a = 1`` are the barycentric weights of z* among the neighbours' codes (the
nearest point of their convex hull in reduced space). The first term is the paper's target; the
second is zero in the k kept directions. At a training frame's code ``t`` is its exact kernel
column, so every training frame is its own pre-image.

**Choices the paper leaves open**, each measured on held-out frames of the sample hand and of
seven stand-in clips (real photographs panned, zoomed, rotated; `benchmarks/quality.py`), k = 3:

* neighbours are the M nearest *distinct* training samples: a sample whose code lies within a
  quarter of the typical code spacing of one already chosen is a duplicate view (a clip that
  goes back and forth, a static shot) and is skipped; default M = 2, the pair bracketing the
  code along the clip (M = 3 suits motion with two degrees of freedom);
* the convex constraint ``Σ w = 1``: a blend of two frames is nearer to both than the true
  in-between frame is, so with free weights the fit leaves the segment (e.g. darkens); with
  the constraint it moves along it;
* the residual runs over the rows N; targets below the smallest kernel value seen between
  training frames are raised to it (their logarithm is undefined or carries no information);
* SLSQP from three deterministic starts (a, the nearest sample, uniform weights); the lowest
  objective wins.

docs/quality.md compares these choices with the paper's literal form (t = V* z*, w ≥ 0,
10 neighbours) on held-out frames.

The logarithm needs the **uncentred** kernel (García-González et al. 2021, after eq. 35): centred models are
refused.
"""

from __future__ import annotations

import numpy as np

from ..utils.errors import KpcaError, param
from .base import Preimage, PreimageSolver, register
from .expansion import Combination

MAX_ITERATIONS = 200


def barycentric_weights(codes: np.ndarray, code: np.ndarray) -> np.ndarray:
    """``a ≥ 0, Σ a = 1`` minimising ``|codesᵀ a − code|``: the nearest point of the hull.

    Parameters
    ----------
    codes : (m, k) ndarray
        The neighbours' codes.
    code : (k,) ndarray
    """
    m = len(codes)
    if m == 2:  # the nearest point of a segment, in closed form
        direction = codes[1] - codes[0]
        length2 = float(direction @ direction)
        t = 0.0 if length2 == 0 else float(np.clip((code - codes[0]) @ direction / length2, 0.0, 1.0))
        return np.array([1.0 - t, t])
    scale = max(float(np.abs(codes).max()), float(np.abs(code).max()), 1e-300)
    # The sum-to-one condition as a heavily weighted extra row of a non-negative least squares.
    matrix = np.vstack([codes.T / scale, np.full((1, m), 1e3)])
    rhs = np.concatenate([code / scale, [1e3]])
    import scipy.optimize  # lazy: a slow import that fit never needs

    weights, _ = scipy.optimize.nnls(matrix, rhs)
    total = weights.sum()
    return weights / total if total > 0 else np.full(m, 1.0 / m)


def completed_target(
    state, code: np.ndarray, neighbours: np.ndarray, rows: np.ndarray | slice
) -> tuple[np.ndarray, np.ndarray]:
    """``t = V*_R z* + R_RN a``: the kernel values of the unknown frame with training rows R,
    the paper's projection completed from the neighbours N (module docstring), and ``a``."""
    a = barycentric_weights(state.codes[neighbours], code)
    residual = state.kernel_gram[rows][:, neighbours] - state.eigenvectors[rows] @ state.codes[neighbours].T
    return state.eigenvectors[rows] @ code + residual @ a, a


@register
class LogDiscrepancySolver(PreimageSolver):
    name = "log"
    summary = (
        "log-discrepancy of kernel values, convex weights on distinct neighbours (García-González et al. 2021, eq. 35)"
    )
    default_neighbours = 2

    def check(self, state) -> None:
        if state.centred:
            raise KpcaError(
                "the log solver (García-González et al. 2021, eq. 35) needs an uncentred kernel: logarithms of centred "
                f"kernel values are undefined; refit with {param('center', False)} or choose another {param('solver')}"
            )

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        neighbours = np.asarray(neighbours)
        m = len(neighbours)
        if m == 1:
            return Preimage(indices=neighbours, weights=np.ones(1), objective=0.0, converged=True, iterations=0)
        kernel = state.kernel
        target, a = completed_target(state, code, neighbours, neighbours)
        target_log = np.log(np.maximum(target, state.smallest_kernel_value))
        combination = Combination(state, neighbours, neighbours)

        def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
            argument, d_argument = combination.arguments(w)
            log_kernel = kernel.log_value(argument)
            if not np.all(np.isfinite(log_kernel)):
                return 1e300, np.zeros_like(w)
            residual_log = log_kernel - target_log
            gradient = 2.0 * (residual_log * kernel.log_derivative(argument)) @ d_argument
            return float(residual_log @ residual_log), gradient

        if m == 2:  # w = (1 − t, t): a search on [0, 1], no optimiser library needed
            t, value, evaluations = _minimise_on_segment(lambda t: objective(np.array([1.0 - t, t]))[0])
            return Preimage(
                indices=neighbours,
                weights=np.array([1.0 - t, t]),
                objective=value,
                converged=True,
                iterations=evaluations,
            )
        nearest = np.zeros(m)
        nearest[0] = 1.0
        simplex = {"type": "eq", "fun": lambda w: w.sum() - 1.0, "jac": lambda w: np.ones_like(w)}
        import scipy.optimize  # lazy: a slow import that the default M = 2 never needs

        best = None
        for start in (a, nearest, np.full(m, 1.0 / m)):
            result = scipy.optimize.minimize(
                objective,
                start,
                jac=True,
                method="SLSQP",
                bounds=[(0.0, 1.0)] * m,
                constraints=[simplex],
                options={"maxiter": MAX_ITERATIONS, "ftol": 1e-14},
            )
            if best is None or result.fun < best.fun:
                best = result
        weights = np.clip(best.x, 0.0, None)
        return Preimage(
            indices=neighbours,
            weights=weights / weights.sum(),
            objective=float(best.fun),
            converged=bool(best.success),
            iterations=int(best.nit),
        )


GRID = 33
GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


def _minimise_on_segment(function, tolerance: float = 1e-10) -> tuple[float, float, int]:
    """Minimise a function of t on [0, 1]: a grid of ``GRID`` points (J may have several local
    minima), then golden-section search in the cell around the best grid point. Deterministic.

    Returns (t, value, evaluations).
    """
    grid = np.linspace(0.0, 1.0, GRID)
    values = [function(t) for t in grid]
    best = int(np.argmin(values))
    low, high = grid[max(best - 1, 0)], grid[min(best + 1, GRID - 1)]
    inner_low, inner_high = high - GOLDEN * (high - low), low + GOLDEN * (high - low)
    f_low, f_high = function(inner_low), function(inner_high)
    evaluations = GRID + 2
    while high - low > tolerance:
        if f_low <= f_high:
            high, inner_high, f_high = inner_high, inner_low, f_low
            inner_low = high - GOLDEN * (high - low)
            f_low = function(inner_low)
        else:
            low, inner_low, f_low = inner_low, inner_high, f_high
            inner_high = low + GOLDEN * (high - low)
            f_high = function(inner_high)
        evaluations += 1
    candidates = [(values[best], float(grid[best])), (f_low, inner_low), (f_high, inner_high)]
    value, t = min(candidates)
    return float(t), float(value), evaluations
