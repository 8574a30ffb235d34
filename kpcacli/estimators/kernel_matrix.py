"""Kernel PCA of a kernel matrix itself, for :class:`kpcacli.KernelPCA` wherever kpca's own
model is not needed: every fit without kpca's pre-images, landmarks or frames (the linear
kernel with fewer features than samples excepted: :mod:`kpcacli.estimators.primal`), and the
kernels kpca's model does not compute from frames: a precomputed kernel, a callable (with
``kernel_params``), ``cosine``, a polynomial of a degree that is not a positive integer, a
width of 0, and samples the kernel cannot tell apart. scikit-learn's conventions throughout,
since only its estimator comes here: the kernel centred as its ``KernelCenterer`` centres it,
the eigenproblem as its ``KernelPCA`` solves it (the k largest eigenvalues, by value for
``dense`` and ``arpack``, by magnitude for ``randomized``), its check of the eigenvalues and its
codes, ``ḡᵀ v_l / √λ_l``; but in place, where scikit-learn copies the n × n matrix at each step.

Importing this module imports scikit-learn, as :mod:`kpcacli.estimators.sklearn_estimator`
does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import KernelCenterer

from ..numerics.backend import HOST
from ..numerics.spectrum import EigenSolver, in_decreasing_order, randomized_eigenpairs, scikit_learn_method
from ..utils.blas import threads_for_blas
from .sklearn_compat import _check_psd_eigenvalues

# Every eigenpair of up to this many samples by divide and conquer, faster than MRRR
# (docs/sklearn.md) but with a workspace of twice the matrix; beyond, MRRR, whose matrix and
# eigenvectors take two matrices in all where divide and conquer takes three: at 30,000
# samples, each matrix is 7.2 GB.
DIVIDE_AND_CONQUER_MAX = 10_000


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
        (m, n), a float64 array this centres in place: projections on the unit axes,
        ``ḡᵀ v_l / √λ_l``, 0 on the components of eigenvalue 0."""
        rows = self.centerer.transform(kernel_rows, copy=False) if self.centerer is not None else kernel_rows
        positive = int(np.count_nonzero(self.eigenvalues > 0))  # a leading run: they decrease
        codes = np.zeros((len(rows), len(self.eigenvalues)))
        with threads_for_blas(rows.shape[0] * rows.shape[1] * positive):
            codes[:, :positive] = rows @ self.eigenvectors[:, :positive]
        codes[:, :positive] /= np.sqrt(self.eigenvalues[:positive])
        return codes

    def codes_of(self, samples, kernel, training) -> np.ndarray:
        """Codes (m, c) of `samples` by their `kernel` values against the `training` samples
        (:class:`kpcacli.estimators.sklearn_ridge.SampleKernel`, formed here and centred in place)."""
        return self.codes(kernel.values(samples, training))


def fit_kernel_matrix(
    kernel: np.ndarray, n_components: int | None, remove_zero_eig: bool, centre: bool, solver: EigenSolver
) -> KernelMatrixFit:
    """Kernel PCA of the training kernel matrix `kernel` (n, n), as scikit-learn's KernelPCA
    fits it: `n_components` (None: every component of non-zero eigenvalue), the eigensolver
    and its settings of `solver` (``auto``: scikit-learn's rule,
    :func:`kpcacli.numerics.spectrum.scikit_learn_method`).

    `kernel` is centred and diagonalised in place when it is a float64 array (pass a copy to
    keep it): at n = 20,000 each n × n matrix is 3.2 GB, and the eigenvectors of every
    eigenpair take the matrix's own place (LAPACK's divide and conquer)."""
    centred = np.asarray(kernel, dtype=np.float64)
    centerer = (
        KernelCenterer().set_output(transform="default").fit(centred) if centre else None
    )  # arrays, whatever set_config says
    if centerer is not None:
        centred = centerer.transform(centred, copy=False)
    n = len(centred)
    count = n if n_components is None else min(n, n_components)
    method = solver.method
    if method == "auto":
        method = scikit_learn_method(n, count)
    if method == "dense":
        with threads_for_blas(n**3):
            eigenvalues, eigenvectors = _dense_eigenpairs(centred, count)
    elif method == "arpack":
        from scipy.sparse.linalg import eigsh

        start = solver.generator().uniform(-1, 1, n)  # scikit-learn's start vector for a random state
        eigenvalues, eigenvectors = eigsh(centred, count, which="LA", tol=solver.tol, maxiter=solver.max_iter, v0=start)
    else:  # randomized, by magnitude as scikit-learn's; its own check below
        eigenvalues, eigenvectors = randomized_eigenpairs(centred, count, solver, checked=False)
    del centred, kernel  # a subset's eigenvectors are new memory: the matrix's is free now
    eigenvalues = _check_psd_eigenvalues(eigenvalues, enable_warnings=False)
    eigenvalues, eigenvectors = in_decreasing_order(eigenvalues, eigenvectors)
    eigenvectors = HOST.fix_signs(eigenvectors)  # in place, as the namespace fit signs its own
    if remove_zero_eig or n_components is None:
        positive, columns = int(np.count_nonzero(eigenvalues > 0)), eigenvectors.shape[1]  # a leading run
        eigenvalues, eigenvectors = eigenvalues[:positive], eigenvectors[:, :positive]
        if 2 * positive < columns:  # most dropped: free their memory rather than keep it behind a view
            eigenvectors = eigenvectors.copy()
    return KernelMatrixFit(centerer, eigenvalues, eigenvectors)


def _dense_eigenpairs(centred: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The `count` largest eigenpairs of the symmetric `centred` by LAPACK, increasing,
    `centred` overwritten. Every eigenpair of up to ``DIVIDE_AND_CONQUER_MAX`` samples by
    divide and conquer (syevd), a subset or a larger matrix by MRRR (syevr) as scikit-learn.
    Passed transposed, the matrix is in Fortran order and LAPACK works on it without a copy;
    ``lower=False`` then reads the triangle scikit-learn's call reads."""
    import scipy.linalg

    n = len(centred)
    if n == 1:  # SciPy 1.10 asks syevd for too little workspace at n = 1
        return centred[0].copy(), np.ones((1, 1))
    if count == n and n <= DIVIDE_AND_CONQUER_MAX:
        return scipy.linalg.eigh(centred.T, lower=False, driver="evd", overwrite_a=True, check_finite=False)
    return scipy.linalg.eigh(
        centred.T, lower=False, subset_by_index=(n - count, n - 1), overwrite_a=True, check_finite=False
    )
