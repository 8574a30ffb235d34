"""scikit-learn's own fit of :class:`kpcacli.KernelPCA`, done in place (:class:`DirectFit`, one
of the estimator's fitted cores): the eigenpairs of the centred kernel matrix
(:mod:`kpcacli.estimators.kernel_matrix`) or, for the linear kernel with fewer features than
samples, of the features' scatter matrix (:mod:`kpcacli.estimators.primal`), the codes, and
scikit-learn's kernel ridge inverse (:mod:`kpcacli.estimators.sklearn_ridge`). Every numpy fit
that needs no kpca model comes here, and so do the kernels kpca's model does not compute from
frames.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse

from ..preimage import AUTO
from ..utils.errors import ParameterError
from .kernel_matrix import KernelMatrixFit, fit_kernel_matrix
from .primal import PrimalFit, fit_primal
from .sklearn_conventions import SparseInverseError, is_other_integer
from .sklearn_ridge import KernelRidge, SampleKernel, training_codes

MATRIX_KERNELS = ("cosine", "precomputed")  # with callables, fitted from the kernel matrix itself

# The kernel values a direct fit's transform holds at once (32 MB): a block of rows at a time.
KERNEL_BLOCK_VALUES = 1 << 22


@dataclass
class DirectFit:
    """scikit-learn's fit of the training `samples` (``X_fit_``) by the `kernel`: the `spectrum`
    of its kernel matrix (:class:`kpcacli.estimators.kernel_matrix.KernelMatrixFit`) or of the
    scatter matrix (:class:`kpcacli.estimators.primal.PrimalFit`), and its kernel `ridge`
    inverse when one was fitted. A :class:`kpcacli.estimators.sklearn_estimator.FittedCore`."""

    spectrum: KernelMatrixFit | PrimalFit
    kernel: SampleKernel
    samples: object
    ridge: KernelRidge | None = None
    model: object = None  # kpca's model, fitted when ``model_`` first asks for it
    on_host = True

    @property
    def eigenvalues(self) -> np.ndarray:
        return self.spectrum.eigenvalues

    @property
    def eigenvectors(self) -> np.ndarray:
        return self.spectrum.eigenvectors

    def codes(self, X) -> np.ndarray:
        """The codes (m, c) of `X` (dense or sparse), float64, a block of rows at a time, so that
        the kernel values in memory stay within ``KERNEL_BLOCK_VALUES`` (scikit-learn forms every
        one against every training sample, twice)."""
        codes = np.empty((X.shape[0], len(self.eigenvalues)))
        size = max(1, KERNEL_BLOCK_VALUES // max(1, self.samples.shape[0]))
        for start in range(0, X.shape[0], size):
            block = X[start : start + size]
            codes[start : start + block.shape[0]] = self.spectrum.codes_of(block, self.kernel, self.samples)
        return codes

    def inverse(self, codes: np.ndarray, dtype, solver: str, neighbours: int | None) -> np.ndarray:
        """scikit-learn's kernel ridge inverse of `codes` (float64), in `dtype`: the only one of
        a direct fit, whatever the `solver`."""
        return self.ridge.invert(codes).astype(dtype, copy=False)


def fit_directly(estimator, X) -> DirectFit:
    """scikit-learn's fit of numpy samples `X` by `estimator`'s parameters (a
    :class:`kpcacli.KernelPCA`), from the kernel matrix (in place), or for the linear kernel
    with fewer features than samples and an exact eigensolver (dense, auto) from the scatter
    matrix; scikit-learn's kernel ridge the only inverse."""
    check_direct_fit(estimator, X)
    rows = training_rows(X, copy=estimator.copy_X)
    primal = (
        estimator.kernel == "linear"
        and estimator.eigen_solver in ("auto", "dense")
        and rows.shape[1] < rows.shape[0]
        and not scipy.sparse.issparse(rows)
    )
    kernel = estimator._sample_kernel()
    spectrum = fit_primal(rows, estimator.n_components, estimator.remove_zero_eig, estimator.centre) if primal else None
    if spectrum is None:  # not the linear kernel, or components of eigenvalue 0 kept: the Gram's
        solver = estimator._eigen_solver(estimator.eigen_solver)
        spectrum = fit_kernel_matrix(
            kernel.values(rows, rows), estimator.n_components, estimator.remove_zero_eig, estimator.centre, solver
        )
    samples = (X.copy() if estimator.copy_X else X) if is_other_integer(X.dtype) else rows
    fit = DirectFit(spectrum, kernel, samples)
    if estimator.fit_inverse_transform:
        fit.ridge = estimator._ridge(training_codes(fit.eigenvalues, fit.eigenvectors), rows)
    return fit


def check_direct_fit(estimator, X) -> None:
    """What scikit-learn's fit refuses, and kpca's additions that need kpca's own kernels,
    before any work: in this process and on another array library's samples alike."""
    if scipy.sparse.issparse(X) and estimator.kernel == "precomputed":  # scikit-learn's centring refuses it
        raise TypeError(
            "Sparse data was passed for X, but dense data is required. Use '.toarray()' to convert to a "
            "dense numpy array."
        )
    if estimator.fit_inverse_transform and estimator.kernel == "precomputed":
        raise ValueError("Cannot fit_inverse_transform with a precomputed kernel.")
    matrix = estimator._from_kernel_matrix()
    if matrix and (estimator.landmarks is not None or estimator.frame_shape is not None):
        raise ParameterError("landmarks and frame_shape need one of kpca's kernels: linear, rbf, poly, sigmoid")
    if estimator.fit_inverse_transform and estimator._preimage not in (AUTO, "learned"):
        raise ParameterError(
            f"solver {estimator.solver!r} needs one of kpca's kernels (linear, rbf, poly, sigmoid); with this "
            "kernel the inverse is scikit-learn's, solver='learned'"
        )
    if matrix and estimator.eps is not None:
        raise ParameterError("eps needs one of kpca's kernels: linear, rbf, poly, sigmoid")
    if estimator.fit_inverse_transform and scipy.sparse.issparse(X):
        raise SparseInverseError("Inverse transform not implemented for sparse matrices!")


def training_rows(X, copy: bool):
    """The rows a model keeps, in floating point: 8- and 16-bit samples are kept as they are in X
    and only the rows fitted on converted; a copy unless not `copy` (copy_X), so that the
    caller's array may change. Sparse samples stay sparse (the direct fit's kernel values take
    them as scikit-learn's do)."""
    dtype = np.float64 if X.dtype.kind in "ui" else X.dtype
    if scipy.sparse.issparse(X):
        return X.astype(dtype, copy=copy)
    return np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)
