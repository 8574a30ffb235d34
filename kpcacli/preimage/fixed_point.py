"""Mika et al.'s fixed-point iteration for the Gaussian kernel (seed 001 eqs. 7–8; seed 004).

The pre-image z maximises ``(P Φ(x)) · Φ(z) = Σ_i γ̃_i κ(z, x^i)``; setting the gradient to zero
gives the fixed point

    z_{t+1} = Σ_i γ̃_i κ(z_t, x^i) x^i / Σ_i γ̃_i κ(z_t, x^i)

with ``γ̃`` the expansion coefficients of the projection, corrected for centring
(:func:`expansion_coefficients`). Every iterate is a combination of training frames,
``z_t = Σ_i c_i x^i`` with ``Σ_i c_i = 1``, so the iteration runs on the coefficients c using
the linear Gram alone; pixels are read once, for the final sum.

Convergence test: ``|z_{t+1} − z_t|² ≤ tol² · median |x^i − x^j|²``. When the denominator
vanishes (a known failure of the iteration, seed 004) it restarts from the next-nearest
training sample, deterministically; the best objective over the starts tried wins.
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

    def solve(self, model, code, neighbours) -> Preimage:
        n = model.frames_.shape[0]
        everything = np.arange(n)
        gamma = expansion_coefficients(model, code)
        combination = Combination(model, everything, everything)
        shifted = model.linear_gram_.shifted
        scale = 1.0 / model.kernel_.beta  # the median squared distance for the default β
        best = None
        iterations = 0
        for start in list(neighbours[:MAX_RESTARTS]):
            c = np.zeros(n)
            c[start] = 1.0
            converged = False
            for _ in range(MAX_ITERATIONS):
                iterations += 1
                argument, _ = combination.arguments(c)
                weighted = gamma * model.kernel_.value(argument)
                denominator = weighted.sum()
                if abs(denominator) < 1e-12 * np.abs(weighted).sum() or denominator == 0:
                    break  # vanishing denominator: restart elsewhere
                update = weighted / denominator
                step = update - c  # sums to zero, so the Gram's shift cancels
                c = update
                if step @ shifted @ step <= TOLERANCE**2 * scale:
                    converged = True
                    break
            argument, _ = combination.arguments(c)
            value = -float(gamma @ model.kernel_.value(argument))  # −(PΦ)·Φ(z), lower is better
            if best is None or (converged, -value) > (best[2], -best[1]):
                best = (c, value, converged)
            if converged:
                break
        c, value, converged = best
        return Preimage(everything, c, value, converged, iterations)
