"""The exact inverse for the linear kernel (García-González et al. 2021, eqs. 17–18).

With ``κ(x, y) = x·y`` the feature space is the input space, ``U* = X V* Λ*^{-1/2}`` (eq. 18 with
unit-norm columns) and the reconstruction ``x = U* U*ᵀ x`` (eq. 6) is the weighted sum
``x* = Σ_i γ̃_i x^i`` with ``γ = V* Λ*⁻¹ z`` and, for a centred state, the mean added back:
``γ̃ = γ + (1 − Σγ)/n``. This is linear PCA's reconstruction with k components.
"""

from __future__ import annotations

import numpy as np

from ..utils.errors import KpcaError
from .base import Preimage, PreimageSolver, register
from .expansion import expansion_coefficients


@register
class LinearSolver(PreimageSolver):
    name = "linear"
    summary = "exact inverse of the linear kernel (linear PCA reconstruction)"
    default_neighbours = 1  # read by nothing: the inverse is exact
    takes_neighbours = False
    uses_instead = "its exact inverse weighs every training frame"

    def check(self, state) -> None:
        if state.kernel.name != "linear":
            raise KpcaError(f"the linear solver inverts the linear kernel only; this state uses {state.kernel.name}")

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        gamma = expansion_coefficients(state, code)
        return Preimage(indices=np.arange(len(gamma)), weights=gamma, objective=0.0, converged=True, iterations=0)
