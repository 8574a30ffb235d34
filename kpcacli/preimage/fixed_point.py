"""Mika et al.'s fixed-point iteration for the Gaussian kernel (seed 001 eqs. 7–8; seed 004).

The pre-image z maximises ``(P Φ(x)) · Φ(z) = Σ_i γ̃_i κ(z, x^i)``; setting the gradient to zero
gives the fixed point

    z_{t+1} = Σ_i γ̃_i κ(z_t, x^i) x^i / Σ_i γ̃_i κ(z_t, x^i)

with ``γ̃`` the expansion coefficients of the projection, corrected for centring
(:func:`expansion_coefficients`).

Two equivalent implementations, whichever is cheaper:

* **weight space** (frames, d > n): every iterate after the first is a combination of training
  frames, ``z_t = Σ_i c_i x^i`` with ``Σ_i c_i = 1``, so the iteration runs on c with the linear
  Gram alone (O(n²) a step) and pixels are read once, for the final sum;
* **input space** (points, d ≤ n): z itself, with distances to the training samples computed
  directly (O(n d) a step).

Start: the input when denoising (seed 002 section 3, seed 004 ``z_0 = x``), otherwise the
nearest training sample. Convergence: ``|z_{t+1} − z_t|² ≤ tol² / β`` (the kernel's squared
length scale). When the denominator vanishes, a known failure of the iteration (seed 004), it
restarts deterministically from the next-nearest training samples; the converged start with
the best objective wins.
"""

from __future__ import annotations

import numpy as np

from ..errors import KpcaError
from .base import Preimage, PreimageSolver, register
from .expansion import Combination, expansion_coefficients

TOLERANCE = 1e-6
MAX_ITERATIONS = 1000
MAX_RESTARTS = 5


@register
class FixedPointSolver(PreimageSolver):
    name = "fixed-point"
    summary = "Mika's fixed-point iteration for the Gaussian kernel, with the centring correction (seed 001)"

    def check(self, model) -> None:
        if model.kernel_.name != "rbf":
            raise KpcaError(
                f"the fixed-point solver needs the Gaussian (rbf) kernel; this model uses {model.kernel_.name}"
            )

    def solve(self, model, code, neighbours, start=None) -> Preimage:
        gamma = expansion_coefficients(model, code)
        n, d = model.frames_.shape
        iterate = self._input_space if d <= n else self._weight_space
        starts: list = [start] if start is not None else []
        starts += [int(index) for index in neighbours[:MAX_RESTARTS]]
        best = None
        total = 0
        for begin in starts:
            result, value, converged, iterations = iterate(model, gamma, begin)
            total += iterations
            if result is None:
                continue  # vanishing denominator: try the next start
            if best is None or (converged, -value) > (best[2], -best[1]):
                best = (result, value, converged)
            if converged:
                break
        if best is None:
            raise KpcaError("the fixed-point iteration failed from every start (the denominator vanished)")
        result, value, converged = best
        if d <= n:
            return Preimage(np.asarray(neighbours[:1]), np.ones(1), value, converged, total, pixels=result)
        return Preimage(np.arange(n), result, value, converged, total)

    @staticmethod
    def _step(gamma: np.ndarray, kernel_values: np.ndarray) -> np.ndarray | None:
        weighted = gamma * kernel_values
        denominator = weighted.sum()
        if denominator == 0 or abs(denominator) < 1e-12 * np.abs(weighted).sum():
            return None
        return weighted / denominator

    def _weight_space(self, model, gamma, begin):
        n = len(gamma)
        kernel = model.kernel_
        combination = Combination(model, np.arange(n), np.arange(n))
        shifted = model.linear_gram_.shifted
        tolerance = TOLERANCE**2 / kernel.beta
        if isinstance(begin, int):
            c = np.zeros(n)
            c[begin] = 1.0
        else:  # the input: one step takes it into the span of the training frames
            c = self._step(gamma, kernel.value(begin.arguments))
            if c is None:
                return None, 0.0, False, 1
        for iteration in range(1, MAX_ITERATIONS + 1):
            argument, _ = combination.arguments(c)
            update = self._step(gamma, kernel.value(argument))
            if update is None:
                return None, 0.0, False, iteration
            step = update - c  # sums to zero, so the Gram's shift cancels
            c = update
            if step @ shifted @ step <= tolerance:
                break
        argument, _ = combination.arguments(c)
        return c, -float(gamma @ kernel.value(argument)), iteration < MAX_ITERATIONS, iteration

    def _input_space(self, model, gamma, begin):
        kernel = model.kernel_
        points, norms = _points_and_norms(model)
        tolerance = TOLERANCE**2 / kernel.beta
        z = points[begin].copy() if isinstance(begin, int) else np.asarray(begin.pixels, dtype=np.float64)

        def kernel_values(z):
            return kernel.value(np.maximum(norms - 2.0 * points @ z + z @ z, 0.0))

        for iteration in range(1, MAX_ITERATIONS + 1):
            weights = self._step(gamma, kernel_values(z))
            if weights is None:
                return None, 0.0, False, iteration
            update = weights @ points
            step = update - z
            z = update
            if step @ step <= tolerance:
                break
        return z, -float(gamma @ kernel_values(z)), iteration < MAX_ITERATIONS, iteration


def _points_and_norms(model) -> tuple[np.ndarray, np.ndarray]:
    """The training points in float64 and their squared norms, computed once per set of frames
    (a denoising run solves once per input point: thousands of times on the same model)."""
    cached = getattr(model, "_points_and_norms", None)
    if cached is None or cached[0] is not model.frames_:
        points = np.asarray(model.frames_, dtype=np.float64)
        cached = (model.frames_, points, np.einsum("ij,ij->i", points, points))
        model._points_and_norms = cached
    return cached[1], cached[2]
