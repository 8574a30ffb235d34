"""The discrepancy pre-image solver (García-González et al. 2021, eqs. 31–34).

Weights ``w ≥ 0`` on the M training samples N nearest to the code minimise the distance in
reduced space between the code and the code of the candidate ``x = Σ_j w_j x^j``:

    J(w) = | z* − V*ᵀ ḡ*(w) |²        (eq. 33)

where ``g*(w)_i = κ(x^i, X_N w)`` for every training row i (eq. 32) and ḡ* is centred with
eq. 25 when the state is centred. It works for every kernel, centred or not. Everything comes
from the linear Gram: an (n x M) block of dot products.
"""

from __future__ import annotations

import numpy as np

from .base import Preimage, PreimageSolver, register
from .expansion import Combination
from .optimise import minimise_over_weights


@register
class DiscrepancySolver(PreimageSolver):
    name = "discrepancy"
    default_neighbours = 10
    summary = "code discrepancy |z - V*ᵀ ḡ(w)|², weights w >= 0 on neighbours (García-González et al. 2021, eq. 33)"

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        rows = np.arange(state.frames.shape[0])
        combination = Combination(state, rows, neighbours)
        vectors = state.eigenvectors
        kernel = state.kernel
        centred = state.centred
        scale = 1.0 / max(float(code @ code), 1e-300)  # J relative to |z|² keeps tolerances meaningful

        def objective(w):
            argument, d_argument = combination.arguments(w)
            g = kernel.value(argument)
            dg = kernel.derivative(argument)[:, None] * d_argument  # (n, M)
            if centred:  # eq. 25: only the row mean of g depends on w
                g = g - state.gram_row_means - g.mean() + state.gram_mean
                dg = dg - dg.mean(axis=0, keepdims=True)
            residual = vectors.T @ g - code
            return scale * float(residual @ residual), scale * 2.0 * (residual @ (vectors.T @ dg))

        return minimise_over_weights(objective, state, code, neighbours)
