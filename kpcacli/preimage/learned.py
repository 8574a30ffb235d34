"""The learned pre-image: kernel ridge regression from codes to frames (Bakır et al. 2004).

Bakır, Weston and Schölkopf (2004) learn the map back from reduced space to input space from
the training pairs ``(z_i, x_i)`` themselves: with a Gaussian kernel ``k_z`` on codes,

    x*(z) = Σ_i w_i(z) x_i,      w(z) = (K_z + λ I)⁻¹ k_z(Z, z),

where ``K_z`` is the kernel Gram of the training codes Z. This is scikit-learn's
``FrameModel(fit_inverse_transform=True)``, which fixes the bandwidth to the forward kernel's
and λ = 1. Here both are chosen per model by leave-one-out on the training frames, in closed
form and without reading a pixel: for ridge regression the held-out residual of frame i is
``(x_i − x̂_i) / (1 − H_ii)`` with the hat matrix ``H = K_z (K_z + λ I)⁻¹``, and its squared
norm ``r_iᵀ D r_i`` follows from the dot products D of the training frames (r_i the row of
``(I − H)`` divided by ``1 − H_ii``). One eigendecomposition of ``K_z`` per bandwidth serves
every λ.

It applies to every kernel, centred or not, since it only needs the codes. It uses every
code (the regression is on all k coordinates), but it is a smooth interpolator of the
training frames: it cannot place a frame between two training frames along a motion as the
``distance`` and ``log`` solvers do (docs/quality.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Preimage, PreimageSolver, register

# Bandwidths as multiples of the median squared distance between training codes, and ridges
# (the kernel's diagonal is 1): the grid the leave-one-out choice searches.
BANDWIDTH_FACTORS = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)
RIDGES = (1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
# A code this close to a training code (as a fraction of the typical spacing between codes) is
# that frame's own: encoding a training frame gives its code up to rounding.
OWN_CODE_FRACTION = 1e-6


@dataclass
class RidgeMap:
    """Kernel ridge regression from codes to weights over the training frames.

    Attributes
    ----------
    codes : (n, k) ndarray
        The training codes Z.
    bandwidth : float
        ``h`` in ``k_z(z, z') = exp(−|z − z'|² / h)``.
    ridge : float
        λ.
    coefficients : (n, n) ndarray
        ``(K_z + λ I)⁻¹``.
    loo_error : float
        Mean squared leave-one-out error per training frame, in squared pixel units summed
        over the frame, at the chosen parameters.
    """

    codes: np.ndarray
    bandwidth: float
    ridge: float
    coefficients: np.ndarray
    loo_error: float

    @classmethod
    def fit(cls, codes: np.ndarray, dots: np.ndarray) -> RidgeMap:
        """Choose the bandwidth and ridge by closed-form leave-one-out and fit.

        Parameters
        ----------
        codes : (n, k) ndarray
            Training codes.
        dots : (n, n) ndarray
            ``x_i · x_j`` of the training frames.
        """
        n = len(codes)
        squared = _squared_distances(codes, codes)
        positive = squared[squared > 0]
        median = float(np.median(positive)) if positive.size else 1.0
        # The leave-one-out residuals are R = D⁻¹ (I − H), H = Q S Qᵀ the hat matrix (Q, S: the
        # code kernel's eigenvectors and their shrinkage s/(s + λ)), D its leverages 1 − H_ii;
        # their error is trace(R L Rᵀ) = |R F|², F a factor of the frames' Gram L = F Fᵀ of
        # its rank r: n² r a ridge instead of the two n³ products of forming H and R L.
        gram_values, gram_vectors = np.linalg.eigh(dots)
        rank = gram_values > 1e-12 * max(float(gram_values[-1]), 0.0)
        factor = gram_vectors[:, rank] * np.sqrt(gram_values[rank])
        best = None
        for width in BANDWIDTH_FACTORS:
            bandwidth = width * median
            values, vectors = np.linalg.eigh(np.exp(-squared / bandwidth))
            values = np.maximum(values, 0.0)
            projected = vectors.T @ factor
            for ridge in RIDGES:
                shrinkage = values / (values + ridge)
                leverage = 1.0 - np.einsum("ik,k,ik->i", vectors, shrinkage, vectors)
                if np.any(leverage <= 1e-12):  # a frame fitted exactly by itself alone
                    continue
                residual = (vectors @ ((1.0 - shrinkage)[:, None] * projected)) / leverage[:, None]
                error = float(np.einsum("ij,ij->", residual, residual)) / n
                if best is None or error < best[0]:
                    best = (error, bandwidth, ridge, vectors, values)
        if best is None:  # no parameters left a frame out: interpolate with the widest ridge
            bandwidth, ridge = median, RIDGES[-1]
            values, vectors = np.linalg.eigh(np.exp(-squared / bandwidth))
            best = (float("nan"), bandwidth, ridge, vectors, np.maximum(values, 0.0))
        error, bandwidth, ridge, vectors, values = best
        coefficients = (vectors / (values + ridge)) @ vectors.T
        return cls(np.asarray(codes, dtype=np.float64), bandwidth, ridge, coefficients, error)

    def weights(self, code: np.ndarray) -> np.ndarray:
        """``w(z) = (K_z + λ I)⁻¹ k_z(Z, z)``, (n,)."""
        return self.coefficients @ np.exp(-_squared_distances(self.codes, code[None, :])[:, 0] / self.bandwidth)


def _squared_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    distances = np.sum(a * a, axis=1)[:, None] + np.sum(b * b, axis=1)[None, :] - 2.0 * a @ b.T
    return np.maximum(distances, 0.0)


@register
class LearnedSolver(PreimageSolver):
    name = "learned"
    summary = (
        "kernel ridge regression from codes to frames (Bakır et al. 2004), bandwidth and ridge chosen by "
        "leave-one-out; any kernel"
    )
    default_neighbours = 1  # the nearest alone: a training frame's own code gives the frame back
    takes_neighbours = False
    uses_instead = "its regression weighs every training frame"

    def prepare(self, state, count: int = 0) -> RidgeMap:
        """The ridge map of `state` (M plays no part)."""
        return RidgeMap.fit(state.codes, state.linear_gram.dots_among(np.arange(state.n_samples)))

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        # A training frame's own code gives the frame itself, as every neighbour-based solver
        # does: the ridge smooths (λ > 0), and a model that keeps its frames exactly must give
        # them back exactly.
        if len(neighbours) and np.linalg.norm(state.codes[int(neighbours[0])] - code) <= (
            OWN_CODE_FRACTION * state.neighbours.code_spacing
        ):
            return Preimage(
                indices=np.asarray(neighbours[:1]), weights=np.ones(1), objective=0.0, converged=True, iterations=0
            )
        ridge_map = prepared if prepared is not None else self.prepare(state)
        # No objective is minimised per code: the leave-one-out error of the map stands for it.
        return Preimage(
            indices=np.arange(state.n_samples),
            weights=ridge_map.weights(code),
            objective=ridge_map.loo_error,
            converged=True,
            iterations=0,
        )
