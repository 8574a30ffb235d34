"""Quantities every weight-space solver needs, computed from the linear Gram alone.

A candidate pre-image is a combination of training frames, ``x = X_C w`` (eq. 31) over a set
C of training rows. Its kernel values with training rows R follow from the dot products
``D = X Xᵀ`` (see :class:`kpcacli.numerics.gram.LinearGram`):

* Gaussian: argument ``a_i = |x^i − X_C w|² = D_ii − 2 D_iC w + wᵀ D_CC w``;
* dot-product kernels: argument ``a_i = x^i · X_C w = D_iC w``.

The projection of Φ(x) onto the k leading components, written as an expansion over the
training samples, ``P Φ(x) = Σ_i γ_i Φ(x^i)``, has ``γ = V* Λ*⁻¹ z`` with the codes
``z = V*ᵀ g`` of García-González et al. (2021, eq. 30); Dhir (2023, eqs. 7–8) writes the same
with ``β_l = z_l / √λ_l`` and unit-norm ``α^l = v^l / √λ_l``. For a centred state the mean is added back, giving the corrected
coefficients ``γ̃_i = γ_i + (1 − Σ_j γ_j) / n`` (Mika et al. 1999).
"""

from __future__ import annotations

import numpy as np


def expansion_coefficients(state, code: np.ndarray) -> np.ndarray:
    """γ̃ with ``P Φ(x) (+ mean when centred) = Σ_i γ̃_i Φ(x^i)``, shape (n,)."""
    eigenvalues = state.eigenvalues[: state.n_components]
    gamma = state.eigenvectors @ (code / eigenvalues)
    if state.centred:
        gamma = gamma + (1.0 - gamma.sum()) / len(gamma)
    return gamma


class Combination:
    """Kernel arguments between training rows R and candidates ``X_C w``, with derivatives.

    Parameters
    ----------
    state : FittedState
    rows : (r,) array of int
        Training rows R whose kernel values with the candidate are needed.
    columns : (c,) array of int
        Training rows C the candidate is combined from.
    """

    def __init__(self, state, rows: np.ndarray, columns: np.ndarray):
        self.kernel = state.kernel
        gram = state.linear_gram
        t = gram.origin_dots
        self.rows_columns = gram.shifted[np.ix_(rows, columns)] + t[rows, None] + t[None, columns] + gram.origin_norm2
        self.columns_columns = gram.dots_among(columns)
        self.row_norms = np.diag(gram.shifted)[rows] + 2.0 * t[rows] + gram.origin_norm2

    def arguments(self, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Kernel arguments ``a_i(w)`` for i in R, shape (r,), and ``∂a_i/∂w``, shape (r, c)."""
        cross = self.rows_columns @ w
        if self.kernel.uses_distance:
            cc_w = self.columns_columns @ w
            return self.row_norms - 2.0 * cross + w @ cc_w, -2.0 * self.rows_columns + 2.0 * cc_w[None, :]
        return cross, self.rows_columns

    def self_argument(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """Argument of ``κ(x, x)`` for the candidate and its gradient (zero for the Gaussian)."""
        if self.kernel.uses_distance:
            return 0.0, np.zeros_like(w)
        cc_w = self.columns_columns @ w
        return float(w @ cc_w), 2.0 * cc_w
