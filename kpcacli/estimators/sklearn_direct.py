"""scikit-learn's own fit of :class:`kpcacli.KernelPCA`, done in place
(:class:`ScikitLearnFit`): the kernel values as scikit-learn computes them, the eigenpairs of
the centred kernel matrix (:mod:`kpcacli.estimators.kernel_matrix`) or, for the linear kernel
with fewer features than samples, of the features' scatter matrix
(:mod:`kpcacli.estimators.primal`), the codes, and scikit-learn's kernel ridge inverse (Bakır
et al. 2004). Every fit that needs no kpca model comes here, and so do the kernels kpca's
model does not compute from frames.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse
from sklearn.utils.validation import validate_data

from ..numerics.spectrum import EigenSolver
from ..preimage import AUTO
from ..utils.arrays import namespace
from ..utils.blas import threads_for_blas
from ..utils.errors import ParameterError
from .sklearn_conventions import SparseInverseError, is_other_integer

MATRIX_KERNELS = ("cosine", "precomputed")  # with callables, fitted from the kernel matrix itself

# The kernel values a direct fit's transform holds at once (32 MB): a block of rows at a time.
KERNEL_BLOCK_VALUES = 1 << 22


class ScikitLearnFit:
    """The fit, codes and kernel ridge inverse of :class:`kpcacli.KernelPCA` as scikit-learn's
    ``KernelPCA`` computes them, from the estimator's parameters (a mixin of that class: it
    reads ``kernel``, ``gamma_``, ``n_components``, ... and sets the fitted attributes)."""

    def _samples(self, X, reset: bool = False, **checks) -> np.ndarray:
        """`X` as scikit-learn checks it (`reset`: at fit, recording n_features_in_): floats and
        integers kept as they are, as scikit-learn keeps them (and 1,000,000 samples of 784 bytes
        are 784 MB, 6.3 GB as float64), other values as float64; sparse input as CSR, as scikit-learn
        keeps it (only kpca's own model densifies it)."""
        X = validate_data(self, X, accept_sparse="csr", dtype="numeric", reset=reset, **checks)
        if not isinstance(X, np.ndarray) and not scipy.sparse.issparse(X):
            return X  # another library's arrays (array_api_dispatch): numbers, as checked
        return X if X.dtype.kind in "uif" else X.astype(np.float64)

    @property
    def _n_features_out(self):
        """The number of codes, for ``get_feature_names_out`` (``kernelpca0`` ...)."""
        return self.n_components_

    @property
    def _preimage(self) -> str:
        """The pre-image solver `solver` names, None standing for the default, scikit-learn's
        kernel ridge (``learned``)."""
        return "learned" if self.solver is None else self.solver

    def _inverts_by_ridge(self) -> bool:
        """Whether ``inverse_transform`` is scikit-learn's kernel ridge: asked for (``learned``),
        the only inverse of a direct fit, or what ``auto`` kept where kpca's measured choice did
        not beat it (:mod:`kpcacli.estimators.sklearn_auto`)."""
        kept = self._preimage == AUTO and getattr(self, "_auto_kept_default", False)
        return self._preimage == "learned" or self._direct is not None or kept

    def _set_eigenpairs(self, eigenvalues: np.ndarray, eigenvectors: np.ndarray) -> None:
        """``eigenvalues_`` and ``eigenvectors_``, computed in float64, in float32 after a fit
        on float32 samples, as scikit-learn's are; the float64 ones kept for the training
        codes (the same arrays after a float64 fit)."""
        self._eigenpairs = (eigenvalues, eigenvectors)
        dtype = np.float32 if self._float32 else np.float64
        self.eigenvalues_ = eigenvalues.astype(dtype, copy=False)
        self.eigenvectors_ = eigenvectors.astype(dtype, copy=False)

    def _from_kernel_matrix(self) -> bool:
        """Whether the kernel is one kpca's model does not compute from frames (fitted from the
        kernel matrix itself): precomputed, cosine, a callable, or a kernel of gamma 0 or of a
        degree that is not a positive integer (constant, or scikit-learn's fractional powers)."""
        if callable(self.kernel) or self.kernel in MATRIX_KERNELS:
            return True
        fractional = self.kernel == "poly" and (self.degree < 1 or self.degree != int(self.degree))
        return fractional or (self.gamma is not None and self.gamma == 0 and self.kernel != "linear")

    def _check_direct_fit(self, X) -> None:
        """What scikit-learn's fit refuses, and kpca's additions that need kpca's own kernels,
        before any work: in this process and on another array library's samples alike."""
        if scipy.sparse.issparse(X) and self.kernel == "precomputed":  # scikit-learn's centring refuses it
            raise TypeError(
                "Sparse data was passed for X, but dense data is required. Use '.toarray()' to convert to a "
                "dense numpy array."
            )
        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError("Cannot fit_inverse_transform with a precomputed kernel.")
        if self._from_kernel_matrix() and (self.landmarks is not None or self.frame_shape is not None):
            raise ParameterError("landmarks and frame_shape need one of kpca's kernels: linear, rbf, poly, sigmoid")
        if self.fit_inverse_transform and self._preimage not in (AUTO, "learned"):
            raise ParameterError(
                f"solver {self.solver!r} needs one of kpca's kernels (linear, rbf, poly, sigmoid); with this kernel "
                "the inverse is scikit-learn's, solver='learned'"
            )
        if self._from_kernel_matrix() and self.eps is not None:
            raise ParameterError("eps needs one of kpca's kernels: linear, rbf, poly, sigmoid")
        if self.fit_inverse_transform and scipy.sparse.issparse(X):
            raise SparseInverseError("Inverse transform not implemented for sparse matrices!")

    def _fit_directly(self, X: np.ndarray) -> ScikitLearnFit:
        """scikit-learn's fit, from the kernel matrix (:mod:`kpcacli.estimators.kernel_matrix`,
        in place), or for the linear kernel with fewer features than samples and an exact
        eigensolver (dense, auto) from the scatter matrix (:mod:`kpcacli.estimators.primal`);
        scikit-learn's kernel ridge the only inverse."""
        from .kernel_matrix import fit_kernel_matrix
        from .primal import fit_primal

        self._check_direct_fit(X)
        rows = self._training_rows(X, copy=self.copy_X)
        primal = (
            self.kernel == "linear"
            and self.eigen_solver in ("auto", "dense")
            and rows.shape[1] < rows.shape[0]
            and not scipy.sparse.issparse(rows)
        )
        direct = fit_primal(rows, self.n_components, self.remove_zero_eig, self.centre) if primal else None
        if direct is None:  # not the linear kernel, or components of eigenvalue 0 kept: the Gram's
            kernel = np.array(rows, dtype=np.float64) if self.kernel == "precomputed" else self._kernel(rows, rows)
            solver = self._eigen_solver(self.eigen_solver)
            direct = fit_kernel_matrix(kernel, self.n_components, self.remove_zero_eig, self.centre, solver)
        self._direct = direct
        self._set_eigenpairs(direct.eigenvalues, direct.eigenvectors)
        self.n_components_ = len(self.eigenvalues_)
        self.X_fit_ = (X.copy() if self.copy_X else X) if is_other_integer(X.dtype) else rows
        if self.fit_inverse_transform:
            self._fit_kernel_ridge(rows)
        return self

    @staticmethod
    def _training_rows(X, copy: bool):
        """The rows the model keeps, in floating point: 8- and 16-bit samples are kept as they
        are in X and only the rows fitted on converted; a copy unless not `copy` (copy_X), so
        that the caller's array may change. Sparse samples stay sparse (the direct fit's kernel
        values take them as scikit-learn's do)."""
        dtype = np.float64 if X.dtype.kind in "ui" else X.dtype
        if scipy.sparse.issparse(X):
            return X.astype(dtype, copy=copy)
        return np.array(X, dtype=dtype, copy=True) if copy else np.asarray(X, dtype=dtype)

    def _eigen_solver(self, method: str) -> EigenSolver:
        """The eigensolver `method` with this estimator's tol, max_iter, iterated_power and
        random_state."""
        return EigenSolver(method, float(self.tol), self.max_iter, self.iterated_power, self.random_state)

    def _kernel(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The kernel's values between `first` and `second` as scikit-learn computes them: a
        callable with `kernel_params`, the others with ``gamma_``, `degree` and `coef0`."""
        from sklearn.metrics.pairwise import pairwise_kernels

        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": self.gamma_, "degree": self.degree, "coef0": self.coef0}
        with threads_for_blas(first.shape[0] * second.shape[0] * first.shape[1]):
            return pairwise_kernels(first, second, metric=self.kernel, filter_params=True, **params)

    def _fit_kernel_ridge(self, rows: np.ndarray) -> None:
        """scikit-learn's inverse: kernel ridge regression from the training codes to the
        training samples, with the model's own kernel on the codes (Bakır et al. 2004)."""
        codes = self._codes_of_training()
        dual_coef = self._kernel_ridge(codes, rows)
        dtype = np.float32 if self._float32 else np.float64  # scikit-learn solves in the samples' float
        self.dual_coef_, self.X_transformed_fit_ = dual_coef.astype(dtype, copy=False), codes.astype(dtype, copy=False)

    def _kernel_ridge(self, codes: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """The dual coefficients ``(K + alpha I)⁻¹ rows`` of the kernel ridge from `codes`
        (scikit-learn's) to `rows`, K the model's kernel on the codes: a pre-image of codes
        ``z`` is then ``k(z, codes)`` times them."""
        import scipy.linalg

        kernel = self._kernel(codes, codes)
        kernel.flat[:: len(codes) + 1] += self.alpha
        n = len(codes)
        with threads_for_blas(n * n * (n / 3 + rows.shape[1])):  # Cholesky, then the solves
            return scipy.linalg.solve(kernel, rows, assume_a="pos", overwrite_a=True)

    def _codes_of_training(self) -> np.ndarray:
        """The training samples' codes, scikit-learn's ``eigenvectors_ * √eigenvalues_``, in
        float64 from the eigenpairs as computed (not from their float32 copies), in their namespace."""
        eigenvalues, eigenvectors = self._eigenpairs
        if isinstance(eigenvalues, np.ndarray):
            return eigenvectors * np.sqrt(eigenvalues)
        return eigenvectors * namespace(eigenvalues).sqrt(eigenvalues)

    def _codes_dtype(self, X: np.ndarray):
        """The dtype of codes of `X`: float32 when both `X` and the training samples are
        float32, else float64 (scikit-learn's kernel values take the wider of the two)."""
        return np.float32 if self._float32 and X.dtype == np.float32 else np.float64

    def _direct_codes(self, X: np.ndarray) -> np.ndarray:
        """The codes of a direct fit (:meth:`_fit_directly`), a block of rows of `X` at a
        time, so that the kernel values in memory stay within ``KERNEL_BLOCK_VALUES``
        (scikit-learn forms every one against every training sample, twice)."""
        from .primal import PrimalFit

        codes = np.empty((X.shape[0], self.n_components_), dtype=self._codes_dtype(X))
        size = max(1, KERNEL_BLOCK_VALUES // max(1, self.X_fit_.shape[0]))
        for start in range(0, X.shape[0], size):
            block = X[start : start + size]
            if isinstance(self._direct, PrimalFit):
                codes[start : start + block.shape[0]] = self._direct.codes(block)
                continue
            if self.kernel == "precomputed":  # the caller's values: centred in a copy
                kernel = np.array(block, dtype=np.float64)
            else:
                kernel = np.asarray(self._kernel(block, self.X_fit_), dtype=np.float64)
            codes[start : start + block.shape[0]] = self._direct.codes(kernel)
        return codes

    def _learned_inverse(self, codes: np.ndarray, dtype) -> np.ndarray:
        """scikit-learn's kernel ridge inverse of `codes` (float64): the kernel between them and
        the training codes times ``dual_coef_``, in `dtype`."""
        weights = self._kernel(codes, self.X_transformed_fit_)
        with threads_for_blas(weights.size * self.dual_coef_.shape[1]):
            back = weights @ self.dual_coef_
        return back.astype(dtype, copy=False)
