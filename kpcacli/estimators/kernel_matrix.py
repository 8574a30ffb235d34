"""Kernel PCA of a kernel matrix itself, for :class:`kpcacli.KernelPCA`'s kernels that kpca's
model does not compute from frames: a precomputed kernel, a callable (with ``kernel_params``),
``cosine``, a polynomial of a degree that is not a positive integer, a width of 0, and samples
the kernel cannot tell apart. scikit-learn's conventions throughout, since only its estimator comes
here: the kernel centred as its ``KernelCenterer`` centres it, the eigenproblem as its
``KernelPCA`` solves it (the k largest eigenvalues, by value for ``dense`` and ``arpack``, by
magnitude for ``randomized``), its check of the eigenvalues and its codes, ``ḡᵀ v_l / √λ_l``.

Importing this module imports scikit-learn, as :mod:`kpcacli.estimators.sklearn_estimator`
does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import KernelCenterer
from sklearn.utils.validation import _check_psd_eigenvalues

from ..numerics.spectrum import EigenSolver, fix_signs, randomized_eigenpairs

ARPACK_FROM = 200  # scikit-learn's auto: ARPACK above this many samples and under
ARPACK_BELOW_COMPONENTS = 10  # this many components, else every eigenpair


@dataclass
class KernelMatrixFit:
    """The centring and the eigenpairs of a training kernel matrix.

    Attributes
    ----------
    centerer : KernelCenterer or None
        Fitted on the training kernel matrix; None for an uncentred kernel.
    eigenvalues : (c,) ndarray
        Decreasing, 0 beyond the kernel's rank (unless removed).
    eigenvectors : (n, c) ndarray
        Unit eigenvectors, each one's entry of largest magnitude positive.
    """

    centerer: KernelCenterer | None
    eigenvalues: np.ndarray
    eigenvectors: np.ndarray

    def codes(self, kernel_rows: np.ndarray) -> np.ndarray:
        """Codes (m, c) of samples given by their kernel values against the training samples
        (m, n): projections on the unit axes, 0 on the components of eigenvalue 0."""
        rows = self.centerer.transform(kernel_rows, copy=True) if self.centerer is not None else kernel_rows
        codes = np.zeros((len(rows), len(self.eigenvalues)))
        nonzero = self.eigenvalues > 0
        codes[:, nonzero] = rows @ (self.eigenvectors[:, nonzero] / np.sqrt(self.eigenvalues[nonzero]))
        return codes

    def training_codes(self) -> np.ndarray:
        """The training samples' codes, ``eigenvectors * √eigenvalues``."""
        return self.eigenvectors * np.sqrt(self.eigenvalues)


def fit_kernel_matrix(
    kernel: np.ndarray, n_components: int | None, remove_zero_eig: bool, centre: bool, solver: EigenSolver
) -> KernelMatrixFit:
    """Kernel PCA of the training kernel matrix `kernel` (n, n), as scikit-learn's KernelPCA
    fits it: `n_components` (None: every component of non-zero eigenvalue), the eigensolver
    and its settings of `solver` (``auto``: ARPACK above ``ARPACK_FROM`` samples and under
    ``ARPACK_BELOW_COMPONENTS`` components, else dense)."""
    kernel = np.array(kernel, dtype=np.float64)
    centerer = KernelCenterer().fit(kernel) if centre else None
    centred = centerer.transform(kernel, copy=True) if centerer is not None else kernel
    n = len(centred)
    count = n if n_components is None else min(n, n_components)
    method = solver.method
    if method == "auto":
        method = "arpack" if n > ARPACK_FROM and count < ARPACK_BELOW_COMPONENTS else "dense"
    if method == "dense":
        import scipy.linalg

        eigenvalues, eigenvectors = scipy.linalg.eigh(centred, subset_by_index=(n - count, n - 1))
    elif method == "arpack":
        from scipy.sparse.linalg import eigsh

        start = solver.generator().uniform(-1, 1, n)  # scikit-learn's start vector for a random state
        eigenvalues, eigenvectors = eigsh(centred, count, which="LA", tol=solver.tol, maxiter=solver.max_iter, v0=start)
    else:  # randomized, by magnitude as scikit-learn's; its own check below
        eigenvalues, eigenvectors = randomized_eigenpairs(centred, count, solver, checked=False)
    eigenvalues = _check_psd_eigenvalues(eigenvalues, enable_warnings=False)
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    eigenvalues, eigenvectors = eigenvalues[order], fix_signs(eigenvectors[:, order])
    if remove_zero_eig or n_components is None:
        kept = eigenvalues > 0
        eigenvalues, eigenvectors = eigenvalues[kept], eigenvectors[:, kept]
    return KernelMatrixFit(centerer, eigenvalues, eigenvectors)
