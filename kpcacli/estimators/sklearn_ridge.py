"""scikit-learn's kernel ridge inverse of :class:`kpcacli.KernelPCA` (Bakır et al. 2004): a
regression from the training samples' codes to the samples themselves, with the model's own
kernel on the codes (:class:`SampleKernel`, the kernel values every route of the estimator
computes as scikit-learn does), in numpy or in another array library's namespace alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..utils.arrays import device_of, is_numpy, namespace
from ..utils.blas import threads_for_blas


@dataclass(frozen=True)
class SampleKernel:
    """A kernel between samples as scikit-learn's ``KernelPCA`` computes it: `kernel` (a name
    of ``pairwise_kernels`` or a callable) with `params` (``gamma``, ``degree`` and ``coef0``,
    or a callable's ``kernel_params``); ``precomputed`` takes the samples as the values."""

    kernel: object
    params: dict = field(default_factory=dict)

    def __call__(self, first, second):
        """The kernel's values between `first` (m, d) and `second` (n, d), (m, n), in their
        namespace."""
        from sklearn.metrics.pairwise import pairwise_kernels

        with threads_for_blas(first.shape[0] * second.shape[0] * first.shape[1]):
            return pairwise_kernels(first, second, metric=self.kernel, filter_params=True, **self.params)

    def values(self, first, second):
        """The kernel's values between `first` and `second` as a new float64 array, which a fit
        may centre in place: for ``precomputed``, `first` itself (the caller's values), copied."""
        if self.kernel == "precomputed":
            return _as_float64(first, copy=True)
        return _as_float64(self(first, second), copy=False)


def _as_float64(values, copy: bool):
    """`values` as float64 in their own namespace (array-api-compat's, which knows PyTorch's
    tensors too), a copy when `copy`."""
    xp = namespace(values)
    return xp.asarray(values, dtype=xp.float64, copy=True) if copy else xp.asarray(values, dtype=xp.float64)


def ridge_coefficients(kernel: SampleKernel, codes, rows, alpha: float):
    """The dual coefficients ``(K + alpha I)⁻¹ rows`` of the kernel ridge from `codes` (n, c) to
    `rows` (n, d), K the `kernel` on the codes, in float64 in their namespace: a pre-image of
    codes ``z`` is then ``k(z, codes)`` times them."""
    gram = kernel(codes, codes)
    n = codes.shape[0]
    if is_numpy(namespace(gram)):
        # numpy: in place by Cholesky (scipy's positive-definite solve), no second n × n matrix
        import scipy.linalg

        gram = np.asarray(gram, dtype=np.float64)
        gram.flat[:: n + 1] += alpha
        with threads_for_blas(n * n * (n / 3 + rows.shape[1])):  # Cholesky, then the solves
            return scipy.linalg.solve(gram, np.asarray(rows), assume_a="pos", overwrite_a=True)
    xp = namespace(gram)  # the array API has no positive-definite solve: its general one
    identity = xp.eye(n, dtype=xp.float64, device=device_of(gram))
    return xp.linalg.solve(xp.asarray(gram, dtype=xp.float64) + alpha * identity, xp.astype(rows, xp.float64))


def training_codes(eigenvalues, eigenvectors):
    """The training samples' codes, scikit-learn's ``eigenvectors * √eigenvalues``, in their
    namespace: what the ridge regresses from, and ``fit_transform``'s."""
    return eigenvectors * namespace(eigenvalues).sqrt(eigenvalues)


@dataclass
class KernelRidge:
    """The fitted inverse: `dual_coef` (n, d) and the training `codes` (n, c) it regresses
    from, both in the fit's float (float32 after a fit on float32 samples, as scikit-learn keeps
    them), and the `kernel` on codes."""

    kernel: SampleKernel
    dual_coef: object
    codes: object

    @classmethod
    def fitted(cls, kernel: SampleKernel, codes, rows, alpha: float, dtype) -> KernelRidge:
        """The ridge from the training `codes` (float64, scikit-learn's) to `rows` with `alpha`,
        kept in `dtype` (a float type of their namespace)."""
        xp = namespace(codes)
        dual_coef = ridge_coefficients(kernel, codes, rows, alpha)
        return cls(kernel, xp.astype(dual_coef, dtype, copy=False), xp.astype(codes, dtype, copy=False))

    def invert(self, codes):
        """The pre-images of `codes` (float64), (m, d) in float64: the kernel between them and
        the training codes times the dual coefficients."""
        xp = namespace(codes)
        weights = self.kernel(codes, xp.astype(self.codes, xp.float64, copy=False))
        dual_coef = xp.astype(self.dual_coef, xp.float64, copy=False)
        with threads_for_blas(weights.shape[0] * weights.shape[1] * dual_coef.shape[1]):
            return weights @ dual_coef
