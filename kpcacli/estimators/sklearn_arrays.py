""":class:`kpcacli.KernelPCA` on arrays of another library (CuPy, PyTorch, array-api-strict)
under ``sklearn.set_config(array_api_dispatch=True)``, as scikit-learn's array-API estimators
take them: :class:`NamespaceFit`, the fitted core of scikit-learn's fit in the samples' own
namespace and on their device.

There: the kernel matrix by scikit-learn's own array-API kernels, its centring
(``KernelCenterer``), every eigenpair by the namespace's ``linalg.eigh`` (Schölkopf, Smola and
Müller 1998) or the leading ones by the randomized method (Halko, Martinsson and Tropp 2011;
its products there, :class:`kpcacli.numerics.arraybackend.ArrayBackend`), the codes, and the
kernel ridge inverse (Bakır et al. 2004) by its ``linalg.solve``. ARPACK's leading eigenpairs
and kpca's own model (its pre-images, landmarks, frames, eps) fit on the CPU instead (the
estimator brings the samples to the host, and what it keeps and gives back to their namespace
and device).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import KernelCenterer

from ..numerics.arraybackend import ArrayBackend
from ..numerics.spectrum import EigenSolver, randomized_eigenpairs
from ..utils.arrays import Accelerator, device_of, from_numpy, namespace, to_numpy
from .sklearn_compat import _check_psd_eigenvalues
from .sklearn_direct import check_direct_fit
from .sklearn_ridge import KernelRidge, SampleKernel, training_codes


@dataclass
class NamespaceFit:
    """scikit-learn's fit of the training `samples` (``X_fit_``) by the `kernel` in their own
    namespace: the `centerer` of the kernel matrix, its `eigenvalues` (c,) (decreasing, 0 beyond
    its rank unless removed; the leading `positive` ones above 0) and unit `eigenvectors` (n, c),
    and the kernel `ridge` inverse when one was fitted (arrays only, so that it pickles). A
    :class:`kpcacli.estimators.sklearn_estimator.FittedCore`."""

    centerer: KernelCenterer | None
    eigenvalues: object
    eigenvectors: object
    positive: int
    kernel: SampleKernel
    samples: object
    ridge: KernelRidge | None = None
    model: object = None  # kpca's model, fitted on the host when ``model_`` first asks for it
    on_host = False

    def codes(self, X):
        """Codes (m, c) of `X` in its namespace, float64: ``ḡᵀ v_l / √λ_l`` of its kernel values
        against the training samples, 0 on the components of eigenvalue 0."""
        xp, positive = namespace(self.eigenvalues), self.positive
        rows = self.kernel.values(X, self.samples)
        rows = self.centerer.transform(rows) if self.centerer is not None else rows
        leading = rows @ self.eigenvectors[:, :positive] / xp.sqrt(self.eigenvalues[:positive])
        rest = xp.zeros((rows.shape[0], self.eigenvalues.shape[0] - positive), dtype=xp.float64, device=device_of(rows))
        return xp.concat([leading, rest], axis=1)

    def inverse(self, codes, dtype, solver: str, neighbours: int | None):
        """The kernel ridge inverse of `codes` (float64) in their namespace, in `dtype`: the only
        one of this fit, whatever the `solver`."""
        return namespace(codes).astype(self.ridge.invert(codes), dtype)


def fit_in_namespace(estimator, X, xp) -> NamespaceFit:
    """scikit-learn's fit of `X` in its namespace `xp` by `estimator`'s parameters (a
    :class:`kpcacli.KernelPCA`): the kernel matrix's eigenpairs by the randomized method when its
    eigensolver says so (:func:`kpcacli.numerics.spectrum.randomized_eigenpairs` on the samples'
    device), else every one (``dense``); the eigenvalues checked as scikit-learn checks them, the
    eigenvectors' signs fixed by the array backend
    (:meth:`kpcacli.numerics.arraybackend.ArrayBackend.fix_signs`), as numpy's are."""
    check_direct_fit(estimator, X)
    dtype = X.dtype if X.dtype in (xp.float32, xp.float64) else xp.float64  # as training_rows
    rows = xp.asarray(X, dtype=dtype, copy=True)
    kernel = estimator._sample_kernel()
    values = kernel.values(rows, rows)
    centerer = KernelCenterer().set_output(transform="default").fit(values) if estimator.centre else None
    centred = centerer.transform(values) if centerer is not None else values
    n = centred.shape[0]
    count = n if estimator.n_components is None else min(n, estimator.n_components)
    device = device_of(centred)
    backend = ArrayBackend(Accelerator(str(device), xp, device))
    solver: EigenSolver = estimator._eigen_solver(estimator.eigen_solver)
    if solver.method == "randomized":
        eigenvalues, vectors = randomized_eigenpairs(centred, count, solver, checked=False, backend=backend)
        eigenvalues, vectors = from_numpy(eigenvalues, xp, device), from_numpy(vectors, xp, device)
    else:
        eigenvalues, vectors = xp.linalg.eigh(centred)
        eigenvalues, vectors = xp.flip(eigenvalues[n - count :]), xp.flip(vectors[:, n - count :], axis=1)
    checked = _check_psd_eigenvalues(to_numpy(eigenvalues), enable_warnings=False)  # (c,): on the host
    positive = int(np.count_nonzero(checked > 0))
    if estimator.remove_zero_eig or estimator.n_components is None:
        checked, vectors = checked[:positive], vectors[:, :positive]
    fit = NamespaceFit(centerer, from_numpy(checked, xp, device), backend.fix_signs(vectors), positive, kernel, rows)
    if estimator.fit_inverse_transform:
        fit.ridge = estimator._ridge(training_codes(fit.eigenvalues, fit.eigenvectors), rows)
    return fit
