"""Schölkopf et al.'s pre-image by gradient minimisation in pixel space (Schölkopf et al. 1998, eq. 11).

The pre-image z minimises the feature-space distance to the projection,

    ρ(z) = | P Φ(x) − Φ(z) |² = κ(z, z) − 2 Σ_i γ̃_i κ(z, x^i) + const,

with ``γ̃`` the expansion coefficients of the projection (:func:`expansion_coefficients`).
The search starts from the best neighbour combination: ``w ≥ 0`` on the M nearest training
samples minimising ρ(X_N w), found from the linear Gram. It then moves freely in pixel space
with L-BFGS-B (integer frames: the result clipped to their range); each step costs two
blocked passes over the frame store (``X z`` and ``Xᵀ c``). For the Gaussian,
``∇ρ = −4β Σ_i γ̃_i κ_i (x^i − z)``.
"""

from __future__ import annotations

import numpy as np

from ..numerics.gram import frame_products
from .base import Preimage, PreimageSolver, register
from .expansion import Combination, expansion_coefficients
from .optimise import minimise_over_weights
from .synthesis import weighted_frame_sum

MAX_ITERATIONS = 60


@register
class GradientSolver(PreimageSolver):
    name = "gradient"
    default_neighbours = 10
    forms_pixels = True
    summary = "minimise |PΦ(x) − Φ(z)|² in pixel space with L-BFGS-B (Schölkopf et al. 1998)"
    # Two passes over the frames per iteration: too slow for frames larger than this.
    default_max_pixels = 250_000

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        kernel = state.kernel
        gamma = expansion_coefficients(state, code)
        n = len(gamma)
        if start is not None:  # denoising: start at the input itself (Schölkopf et al. 1998, section 3)
            first = Preimage(
                indices=np.asarray(neighbours[:1]), weights=np.ones(1), objective=np.nan, converged=True, iterations=0
            )
            return self._descend(state, gamma, np.asarray(start.pixels, dtype=np.float64), first)

        # 1. The best combination of the neighbours, from the Gram alone.
        combination = Combination(state, np.arange(n), neighbours)

        def rho_of_weights(w):
            argument, d_argument = combination.arguments(w)
            self_argument, d_self = combination.self_argument(w)
            value = kernel.value(self_argument) - 2.0 * gamma @ kernel.value(argument)
            gradient = (
                kernel.derivative(self_argument) * d_self - 2.0 * (gamma * kernel.derivative(argument)) @ d_argument
            )
            return float(value), gradient

        combined = minimise_over_weights(rho_of_weights, state, code, neighbours)
        return self._descend(state, gamma, combined.vector(state), combined)

    @staticmethod
    def _descend(state, gamma, z0, origin: Preimage) -> Preimage:
        """L-BFGS-B on ρ(z) over free pixels, from z0."""
        import scipy.optimize  # lazy: a slow import that fit never needs

        frames = state.frames

        def rho(z):
            return feature_distance(state, gamma, z)

        dtype = np.dtype(frames.dtype)
        # Integer frames: the descent runs unbounded and the answer is clipped to the frames'
        # range at the end. Pixel bounds gave the same pre-images at twice the time: scipy
        # converts them element by element.
        top = float(np.iinfo(dtype).max) if dtype.kind == "u" else None
        if top is not None:
            z0 = np.clip(z0, 0.0, top)
        initial_gradient = float(np.linalg.norm(rho(z0)[1]))

        result = scipy.optimize.minimize(
            rho,
            z0,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": MAX_ITERATIONS, "ftol": 1e-12, "gtol": 0.0, "maxcor": 8},
        )
        return Preimage(
            indices=origin.indices,
            weights=origin.weights,
            objective=float(result.fun),
            # L-BFGS-B's line search "fails" once it sits at the optimum: judge by the gradient.
            converged=bool(result.success) or float(np.linalg.norm(result.jac)) <= 1e-6 * max(initial_gradient, 1e-300),
            iterations=int(result.nit),
            pixels=result.x if top is None else np.clip(result.x, 0.0, top),
        )


def feature_distance(state, gamma: np.ndarray, z: np.ndarray) -> tuple[float, np.ndarray]:
    """ρ(z) = κ(z, z) − 2 Σ_i γ̃_i κ(z, x^i) (Schölkopf et al. 1998, eq. 11, less its constant
    term) and its gradient in pixel space; two passes over the stored frames.

    Parameters
    ----------
    state : FittedState
    gamma : (n,) ndarray
        The expansion coefficients γ̃ of the projection (:func:`expansion_coefficients`).
    z : (d,) ndarray
        A candidate pre-image, float64.
    """
    kernel, frames = state.kernel, state.frames
    dots = frame_products(frames, z)  # x^i · z
    z_norm = float(z @ z)
    argument = state.squared_norms - 2.0 * dots + z_norm if kernel.uses_distance else dots
    coefficients = gamma * kernel.derivative(argument)  # ∂/∂a_i of Σ γ̃ κ(a_i)
    value = -2.0 * float(gamma @ kernel.value(argument))
    if kernel.uses_distance:  # ∇a_i = 2 (z − x^i); κ(z, z) = 1
        value += 1.0
        gradient = -2.0 * (2.0 * coefficients.sum() * z - 2.0 * weighted_frame_sum(frames, coefficients))
    else:  # ∇a_i = x^i; κ(z, z) = κ(|z|²)
        value += float(kernel.value(z_norm))
        gradient = 2.0 * kernel.derivative(z_norm) * z - 2.0 * weighted_frame_sum(frames, coefficients)
    return value, gradient
