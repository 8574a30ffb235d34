"""Kernel PCA of the linear kernel in the primal, for :class:`kpcacli.KernelPCA`: with d
features and n > d samples, the centred Gram ``Ḡ = X̄ X̄ᵀ`` (n × n) and the scatter matrix
``S = X̄ᵀ X̄`` (d × d) have the same non-zero eigenvalues, and their eigenvectors map onto each
other, ``v = X̄ u / √λ`` (Schölkopf, Smola and Müller 1998, section 2). Solving the d × d
problem gives scikit-learn's eigenpairs of the Gram to rounding at O(n d² + d³) instead of
O(n³), and the codes of a sample are its projections on the unit axes u, ``(x − x̄)·u``:
O(d k), not a kernel row against every training sample.

Only the components of non-zero eigenvalue exist here; the others are the Gram's null space,
which only the Gram's own eigenproblem gives (:mod:`kpcacli.estimators.kernel_matrix`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics.signs import eigenvector_signs, flip_signs
from ..utils.blas import threads_for_blas
from .sklearn_compat import _check_psd_eigenvalues


@dataclass
class PrimalFit:
    """The linear kernel's eigenpairs from the scatter matrix.

    Attributes
    ----------
    mean : (d,) ndarray
        The training samples' mean (zeros for an uncentred kernel).
    axes : (d, c) ndarray
        The unit axes u of feature space, which for the linear kernel is the input space.
    eigenvalues : (c,) ndarray
        Decreasing, positive.
    eigenvectors : (n, c) ndarray
        The Gram's unit eigenvectors ``X̄ u / √λ``, each one's entry of largest magnitude
        positive (the axes' signs follow).
    """

    mean: np.ndarray
    axes: np.ndarray
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray

    def codes(self, samples: np.ndarray) -> np.ndarray:
        """Codes (m, c) of samples (m, d): projections on the unit axes, ``(x − x̄)·u``."""
        samples = np.asarray(samples, dtype=np.float64)
        with threads_for_blas(samples.size * self.axes.shape[1]):
            return (samples - self.mean) @ self.axes

    def codes_of(self, samples, kernel, training) -> np.ndarray:
        """:meth:`codes`: the linear kernel's codes need no kernel values (the `kernel` and the
        `training` samples are the other fits' way to them)."""
        return self.codes(samples)


def fit_primal(samples: np.ndarray, n_components: int | None, remove_zero_eig: bool, centre: bool) -> PrimalFit | None:
    """The linear kernel's `n_components` leading eigenpairs (None: every one of non-zero
    eigenvalue) from the scatter matrix of `samples` (n, d), d < n; eigenvalues checked and
    clipped as scikit-learn checks the Gram's (their largest is the same). None when components
    of eigenvalue 0 are asked for and kept (not `remove_zero_eig`): they need the Gram."""
    import scipy.linalg

    samples = np.asarray(samples, dtype=np.float64)
    mean = samples.mean(axis=0) if centre else np.zeros(samples.shape[1])
    centred = samples - mean
    n, d = samples.shape
    with threads_for_blas(n * d * d):
        scatter = centred.T @ centred
    with threads_for_blas(d**3):
        values, axes = scipy.linalg.eigh(scatter, overwrite_a=True, check_finite=False)
    values = _check_psd_eigenvalues(values[::-1], enable_warnings=False)  # decreasing
    positive = int(np.count_nonzero(values > 0))
    count = positive if n_components is None else min(n_components, samples.shape[0])
    if count > positive:
        if not remove_zero_eig:
            return None
        count = positive
    values, axes = values[:count], np.ascontiguousarray(axes[:, ::-1][:, :count])
    with threads_for_blas(n * d * count):
        eigenvectors = centred @ axes
    eigenvectors /= np.sqrt(values)
    signs = eigenvector_signs(eigenvectors)
    return PrimalFit(mean, flip_signs(axes, signs, in_place=True), values, flip_signs(eigenvectors, signs, True))
