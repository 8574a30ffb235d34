""":class:`kpcacli.KernelPCA` on arrays of another library (CuPy, PyTorch, array-api-strict)
under ``sklearn.set_config(array_api_dispatch=True)``, as scikit-learn's array-API estimators
take them (:class:`ArrayAPIFit`): the fitted attributes and every output in the samples' own
namespace and on their device.

scikit-learn's fit (every one that needs no kpca model) runs there: the kernel matrix by
scikit-learn's own array-API kernels, its centring (``KernelCenterer``), every eigenpair by the
namespace's ``linalg.eigh`` (Schölkopf, Smola and Müller 1998) or the leading ones by the
randomized method (Halko, Martinsson and Tropp 2011; its products there), the codes, and the
kernel ridge inverse (Bakır et al. 2004) by its ``linalg.solve``. ARPACK's leading eigenpairs
and kpca's own model (its pre-images, landmarks, frames, eps) run on the CPU: the samples come
to the host, and what the estimator keeps and gives goes back to their namespace and device.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import KernelCenterer

from ..numerics.arraybackend import ArrayBackend
from ..numerics.spectrum import EigenSolver, randomized_eigenpairs
from ..utils.arrays import Accelerator, device_of, from_numpy, namespace, to_numpy
from .sklearn_compat import _check_psd_eigenvalues, get_namespace_and_device
from .sklearn_model import FrameModelFit

# Fitted attributes that are arrays: in the samples' namespace and on their device.
ARRAY_ATTRIBUTES = ("eigenvalues_", "eigenvectors_", "X_fit_", "dual_coef_", "X_transformed_fit_")


@dataclass
class NamespaceKernelFit:
    """The centring and the eigenpairs of a training kernel matrix in another array library's
    namespace: what :class:`kpcacli.estimators.kernel_matrix.KernelMatrixFit` is for numpy
    (arrays only, so that it pickles)."""

    centerer: KernelCenterer | None
    eigenvalues: object  # (c,), decreasing, 0 beyond the kernel's rank (unless removed)
    eigenvectors: object  # (n, c), each one's entry of largest magnitude positive
    positive: int  # the leading eigenvalues above 0

    def codes(self, kernel_rows):
        """Codes (m, c) of samples given by their kernel values against the training samples
        (m, n): ``ḡᵀ v_l / √λ_l``, 0 on the components of eigenvalue 0."""
        xp, positive = namespace(self.eigenvalues), self.positive
        rows = self.centerer.transform(kernel_rows) if self.centerer is not None else kernel_rows
        leading = rows @ self.eigenvectors[:, :positive] / xp.sqrt(self.eigenvalues[:positive])
        rest = xp.zeros((rows.shape[0], self.eigenvalues.shape[0] - positive), dtype=xp.float64, device=device_of(rows))
        return xp.concat([leading, rest], axis=1)


def namespace_of(X):
    """`X`'s namespace and device as scikit-learn sees them (numpy's unless
    ``array_api_dispatch`` is on)."""
    xp, _, device = get_namespace_and_device(X)
    return xp, device


def fit_kernel_matrix_in(
    xp, kernel, n_components: int | None, remove_zero_eig: bool, centre: bool, solver: EigenSolver
) -> NamespaceKernelFit:
    """Kernel PCA of the training kernel matrix `kernel` (n, n) in namespace `xp`, as
    :func:`kpcacli.estimators.kernel_matrix.fit_kernel_matrix` fits a numpy one: by the
    randomized method when `solver` says so (:func:`kpcacli.numerics.spectrum.randomized_eigenpairs`
    on the kernel's device), else with every eigenpair (``dense``); the eigenvalues checked as
    scikit-learn checks them, the eigenvectors' signs fixed by the array backend
    (:meth:`kpcacli.numerics.arraybackend.ArrayBackend.fix_signs`), as numpy's are."""
    centerer = KernelCenterer().set_output(transform="default").fit(kernel) if centre else None
    centred = centerer.transform(kernel) if centerer is not None else kernel
    n = centred.shape[0]
    count = n if n_components is None else min(n, n_components)
    device = device_of(centred)
    backend = ArrayBackend(Accelerator(str(device), xp, device))
    if solver.method == "randomized":
        values, vectors = randomized_eigenpairs(centred, count, solver, checked=False, backend=backend)
        values, vectors = from_numpy(values, xp, device), from_numpy(vectors, xp, device)
    else:
        values, vectors = xp.linalg.eigh(centred)
        values, vectors = xp.flip(values[n - count :]), xp.flip(vectors[:, n - count :], axis=1)
    checked = _check_psd_eigenvalues(to_numpy(values), enable_warnings=False)  # (c,): on the host
    positive = int(np.count_nonzero(checked > 0))
    if remove_zero_eig or n_components is None:
        checked, vectors = checked[:positive], vectors[:, :positive]
    return NamespaceKernelFit(centerer, from_numpy(checked, xp, device), backend.fix_signs(vectors), positive)


class ArrayAPIFit(FrameModelFit):
    """The fit, codes and inverse of :class:`kpcacli.KernelPCA` on samples of another array
    library (a mixin of that class; the module docstring says what runs where). The estimator
    keeps no namespace or device object (they need not pickle): ``_foreign`` says the fit was
    on another library's arrays, and the fitted attributes say which."""

    @property
    def _namespace(self):
        """(namespace, device) of a fit on another library's arrays, else None."""
        if not getattr(self, "_foreign", False):
            return None
        return namespace(self.eigenvectors_), device_of(self.eigenvectors_)

    def _fit_in(self, X, xp, device):
        """Fit on `X` of namespace `xp` on `device`: scikit-learn's fit there, or kpca's model's
        on the host, its attributes then moved to `xp` and `device`."""
        self._foreign = True
        if self._needs_model() or self.eigen_solver == "arpack":
            self._fit_on_host(to_numpy(X))
            for name in ARRAY_ATTRIBUTES:
                if hasattr(self, name):
                    setattr(self, name, from_numpy(getattr(self, name), xp, device))
            self._eigenpairs = tuple(from_numpy(array, xp, device) for array in self._eigenpairs)
            return self
        self._check_direct_fit(X)
        dtype = X.dtype if X.dtype in (xp.float32, xp.float64) else xp.float64  # as _training_rows
        rows = xp.asarray(X, dtype=dtype, copy=True)
        kernel = xp.asarray(rows if self.kernel == "precomputed" else self._kernel(rows, rows), dtype=xp.float64)
        solver = self._eigen_solver(self.eigen_solver)
        self._direct = fit_kernel_matrix_in(xp, kernel, self.n_components, self.remove_zero_eig, self.centre, solver)
        self._set_eigenpairs_in(xp, self._direct.eigenvalues, self._direct.eigenvectors)
        self.n_components_ = int(self._direct.eigenvalues.shape[0])
        self.X_fit_ = rows
        if self.fit_inverse_transform:
            codes = self._codes_of_training()
            kernel = self._kernel(codes, codes) + self.alpha * xp.eye(codes.shape[0], dtype=xp.float64, device=device)
            dtype = xp.float32 if self._float32 else xp.float64
            self.dual_coef_ = xp.astype(xp.linalg.solve(kernel, xp.astype(rows, xp.float64)), dtype)
            self.X_transformed_fit_ = xp.astype(codes, dtype)
        return self

    def _fit_on_host(self, X: np.ndarray) -> None:
        """The numpy fit of `X`: kpca's model, or scikit-learn's fit by ARPACK."""
        self._foreign = False
        if not self._needs_model():
            self._fit_directly(X)
        else:
            self._fit_model(X)
        self._foreign = True

    def _set_eigenpairs_in(self, xp, eigenvalues, eigenvectors) -> None:
        """``eigenvalues_`` and ``eigenvectors_`` in `xp`, float32 after a fit on float32."""
        self._eigenpairs = (eigenvalues, eigenvectors)
        dtype = xp.float32 if self._float32 else xp.float64
        self.eigenvalues_, self.eigenvectors_ = xp.astype(eigenvalues, dtype), xp.astype(eigenvectors, dtype)

    def _transform_in(self, X):
        """The codes of `X` in the fit's namespace and on its device."""
        xp, device = self._namespace
        dtype = xp.float32 if self._float32 and X.dtype == xp.float32 else xp.float64
        if self._direct is None or not isinstance(self._direct, NamespaceKernelFit):
            return xp.astype(from_numpy(self._on_host("transform", X), xp, device), dtype)
        kernel = X if self.kernel == "precomputed" else self._kernel(X, self.X_fit_)
        return xp.astype(self._direct.codes(xp.asarray(kernel, dtype=xp.float64, copy=True)), dtype)

    def _inverse_in(self, codes):
        """The pre-images of `codes` in the fit's namespace and on its device."""
        xp, device = self._namespace
        if not isinstance(self._direct, NamespaceKernelFit):
            return from_numpy(self._on_host("inverse_transform", codes), xp, device)
        dtype = xp.float32 if self._float32 and codes.dtype == xp.float32 else xp.float64
        weights = self._kernel(
            xp.asarray(codes, dtype=xp.float64), xp.asarray(self.X_transformed_fit_, dtype=xp.float64)
        )
        return xp.astype(weights @ xp.asarray(self.dual_coef_, dtype=xp.float64), dtype)

    def _as_fitted_float(self, codes):
        """`codes` (float64) in float32 after a fit on float32 samples, as scikit-learn keeps
        them, in their own namespace."""
        if not self._float32:
            return codes
        if self._namespace is None:
            return codes.astype(np.float32)
        return self._namespace[0].astype(codes, self._namespace[0].float32)

    def _score_in(self, X) -> float:
        """``score`` of `X` in the fit's namespace: the negative mean squared error of its round
        trip through ``transform`` and ``inverse_transform``."""
        xp = self._namespace[0]
        rows = xp.asarray(X, dtype=xp.float64)
        back = xp.asarray(self.inverse_transform(self.transform(X)), dtype=xp.float64)
        return -float(xp.sum((rows - back) ** 2)) / (rows.shape[0] * rows.shape[1])

    def _on_host(self, method: str, X) -> np.ndarray:
        """The estimator's `method` on `X` brought to the host, its array attributes there for
        the call (a fit that ran there: kpca's model, ARPACK)."""
        saved = {name: getattr(self, name) for name in ARRAY_ATTRIBUTES if hasattr(self, name)}
        self._foreign = False
        try:
            for name, value in saved.items():
                setattr(self, name, to_numpy(value))
            return getattr(self, method)(to_numpy(X))
        finally:
            self._foreign = True
            for name, value in saved.items():
                setattr(self, name, value)
