"""Diagonalising the (centred) Gram and projecting onto V* (García-González et al. 2021, eqs.
26, 27 and 30), k given or chosen by eq. 3 (:mod:`kpcacli.numerics.components`).

Numerical hygiene follows scikit-learn: tiny negative eigenvalues from rounding are clipped to
zero, significant ones are reported as an error (the kernel is not positive semi-definite on
these frames), and eigenvector signs are fixed by a convention so that the same input always
gives the same model.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..utils.blas import single_threaded_blas
from ..utils.errors import DegenerateKernelError, KpcaError, KpcaWarning
from ..utils.hyperparameters import check
from .backend import HOST, Backend
from .components import check_k_request, choose_k
from .signs import fix_signs

# The eigensolver "auto" names: every eigenpair (LAPACK's divide and conquer, O(n³)) or only
# the leading ones by Lanczos iteration (ARPACK through scipy, a few hundred products with the
# matrix; docs/performance.md, design measurements). Three fits, three rules, all here:
# - kpca's model, whose k eq. 3 may choose from every eigenvalue: every eigenpair up to
#   FULL_EIGENDECOMPOSITION_MAX samples, Lanczos beyond (_leading_eigenpairs);
# - a model of a known, small k (the solver choice's folds): Lanczos above
#   KNOWN_K_LANCZOS_FROM samples when k is under a tenth of them (known_k_method);
# - scikit-learn's KernelPCA, whose rule kpca's KernelPCA keeps so as to give its results:
#   ARPACK above SCIKIT_LEARN_ARPACK_FROM samples and under SCIKIT_LEARN_ARPACK_BELOW
#   components (scikit_learn_method).
FULL_EIGENDECOMPOSITION_MAX = 3000
KNOWN_K_LANCZOS_FROM = 500
SCIKIT_LEARN_ARPACK_FROM = 200
SCIKIT_LEARN_ARPACK_BELOW = 10
FIRST_LANCZOS_COUNT = 32  # eigenpairs first computed when eq. 3 chooses k; doubled until it is met

RANDOMIZED_OVERSAMPLING = 10  # extra directions the randomized method sketches (Halko et al. 2011)

# Eigenvalues closer than this fraction of the largest are equal to rounding: an eigensolver's
# rounding moves each eigenvector by about n·ε·λ_1 / gap (ε = 2.2e-16; Davis and Kahan 1970),
# 1e-4 of a unit vector at this gap for n = 500, and for a tie it may return any basis of the
# common eigenspace, chosen by the BLAS kernels of the CPU that ran it.
EQUAL_EIGENVALUES = 1e-10


@dataclass(frozen=True)
class EigenSolver:
    """How the leading eigenpairs are found, with scikit-learn's KernelPCA's parameters.

    Attributes
    ----------
    method : {"auto", "dense", "arpack", "randomized"}
        Every eigenpair (LAPACK), the leading ones by Lanczos iteration (ARPACK), or by the
        randomized method of Halko, Martinsson and Tropp (2011); auto is dense up to
        ``FULL_EIGENDECOMPOSITION_MAX`` samples, arpack beyond.
    tol : float
        ARPACK's relative accuracy; 0 is machine precision.
    max_iter : int, optional
        ARPACK's iterations (None: its own, 10 n).
    iterated_power : int or "auto"
        Power iterations of the randomized method; auto is 7 when k < n / 10, else 4
        (scikit-learn's).
    seed : int or numpy.random.RandomState, optional
        ARPACK's start vector and the randomized method's sketch; None a fixed one, so that the
        same matrix gives the same model.
    """

    method: str = "auto"
    tol: float = 0.0
    max_iter: int | None = None
    iterated_power: int | str = "auto"
    seed: object = None

    def generator(self) -> np.random.RandomState:
        """The random state the start vector or the sketch is drawn from."""
        if isinstance(self.seed, np.random.RandomState):
            return self.seed
        return np.random.RandomState(0 if self.seed is None else self.seed)


# scikit-learn's thresholds (sklearn.utils.validation._check_psd_eigenvalues) for float64.
SIGNIFICANT_NEGATIVE_RATIO = 1e-5
SIGNIFICANT_NEGATIVE_VALUE = 1e-10


def eigendecomposition(centred_gram: np.ndarray, backend: Backend = HOST) -> tuple[np.ndarray, np.ndarray]:
    """All eigenpairs of ``Ḡ = V Λ Vᵀ`` (eq. 26), eigenvalues in decreasing order, by the
    `backend`'s eigensolver (:meth:`kpcacli.numerics.backend.Backend.eigh`).

    Returns
    -------
    eigenvalues : (n,) ndarray
        ``λ_1 ≥ λ_2 ≥ … ≥ 0`` after clipping rounding noise.
    eigenvectors : (n, n) ndarray
        Orthonormal columns ``v^i``, signs fixed by :func:`fix_signs`.

    Raises
    ------
    KpcaError
        When Ḡ has significant negative eigenvalues.
    """
    eigenvalues, eigenvectors = in_decreasing_order(*backend.eigh(centred_gram))
    eigenvalues = check_psd(eigenvalues)
    return eigenvalues, fix_signs(eigenvectors, in_place=True)


def in_decreasing_order(eigenvalues: np.ndarray, eigenvectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The eigenpairs by decreasing eigenvalue, ties in reverse order of their columns.
    Eigenpairs that come increasing (LAPACK's, ARPACK's) are reversed in `eigenvectors`
    itself, not copied: column pair by column pair in Fortran order, row by row in C order
    (at n = 20,000 the matrix is 3.2 GB)."""
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    if not np.array_equal(order, np.arange(len(order))[::-1]) or not eigenvectors.flags.writeable:
        return eigenvalues[order], eigenvectors[:, order]
    if eigenvectors.flags.f_contiguous:
        count = eigenvectors.shape[1]
        for first in range(count // 2):
            last = count - 1 - first
            kept = eigenvectors[:, first].copy()
            eigenvectors[:, first] = eigenvectors[:, last]
            eigenvectors[:, last] = kept
    elif eigenvectors.flags.c_contiguous:
        for row in eigenvectors:
            row[:] = row[::-1].copy()
    else:
        return eigenvalues[order], eigenvectors[:, order]
    return eigenvalues[::-1].copy(), eigenvectors


def leading_eigenpairs(
    centred_gram: np.ndarray,
    n_components: int | None,
    eps: float | None,
    solver: str | EigenSolver = "auto",
    warn_of_ties: bool = True,
    backend: Backend = HOST,
    centred: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """The leading eigenvalues of ``Ḡ`` and the eigenvectors V* of the k chosen (eqs. 3, 26);
    k below n for a `centred` Gram, up to n for an uncentred one (:func:`choose_k`).

    `solver` (a method's name, or :class:`EigenSolver` with its settings) ``dense``: every
    eigenpair. ``arpack``: the leading ones by Lanczos iteration, k of them when k is given,
    otherwise 32, 64, … until eq. 3 is met against the trace of Ḡ (the sum of every
    eigenvalue), or every eigenpair once a quarter of them would be needed. ``randomized``:
    the k leading ones by the randomized method when k is given, otherwise as dense. ``auto``:
    dense up to ``FULL_EIGENDECOMPOSITION_MAX`` samples, arpack beyond. A k that cuts through
    eigenvalues equal to rounding is warned of (:func:`warn_of_a_cut_in_a_tie`) unless not
    `warn_of_ties`. On a `backend` whose dense solver is cheap at any size (a GPU's solves
    20,000 samples in seconds), ``auto`` and ``dense`` compute every eigenpair there, whatever
    n, and ``randomized`` its products there; ``arpack``'s Lanczos iteration runs on the CPU
    (and every eigenpair, when it needs them all, by the `backend`).

    Returns
    -------
    eigenvalues : (r,) ndarray
        ``λ_1 ≥ … ≥ λ_r``, r = n or r ≥ k.
    eigenvectors : (n, k) ndarray
        V*, signs fixed by :func:`fix_signs`.
    """
    check_k_request(n_components, eps)
    settings = solver if isinstance(solver, EigenSolver) else EigenSolver(solver)
    check("eigen_solver", settings.method)
    eigenvalues, eigenvectors = _leading_eigenpairs(centred_gram, n_components, eps, settings, backend, centred)
    if warn_of_ties:
        warn_of_a_cut_in_a_tie(eigenvalues, eigenvectors.shape[1])
    return eigenvalues, eigenvectors


def known_k_method(n: int, k: int) -> str:
    """The eigensolver for a model of `n` samples whose `k` is known: its k eigenpairs alone by
    Lanczos (``arpack``) above ``KNOWN_K_LANCZOS_FROM`` samples when k is under a tenth of them,
    else every eigenpair (``dense``)."""
    return "arpack" if n > KNOWN_K_LANCZOS_FROM and k < n // 10 else "dense"


def scikit_learn_method(n: int, count: int) -> str:
    """scikit-learn's KernelPCA ``eigen_solver="auto"`` for `count` components of `n` samples:
    ``arpack`` above ``SCIKIT_LEARN_ARPACK_FROM`` samples and under
    ``SCIKIT_LEARN_ARPACK_BELOW`` components, else ``dense``."""
    return "arpack" if n > SCIKIT_LEARN_ARPACK_FROM and count < SCIKIT_LEARN_ARPACK_BELOW else "dense"


def _leading_eigenpairs(
    centred_gram: np.ndarray,
    n_components: int | None,
    eps: float | None,
    settings: EigenSolver,
    backend: Backend = HOST,
    centred: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`leading_eigenpairs` without its checks and warning."""
    method, n = settings.method, centred_gram.shape[0]
    if backend.dense_at_any_size and method in ("auto", "dense"):
        eigenvalues, eigenvectors = eigendecomposition(centred_gram, backend)
        return eigenvalues, eigenvectors[:, : choose_k(eigenvalues, n_components, eps, centred=centred)]
    if method == "randomized" and n_components is not None and n_components < n:
        eigenvalues, eigenvectors = randomized_eigenpairs(centred_gram, n_components, settings, backend=backend)
        return eigenvalues, eigenvectors[:, : choose_k(eigenvalues, n_components, None, n=n, centred=centred)]
    if method == "arpack" or (method == "auto" and n > FULL_EIGENDECOMPOSITION_MAX):
        total = float(np.trace(centred_gram))
        count = n_components if n_components is not None else FIRST_LANCZOS_COUNT
        limit = n // 4 if method == "auto" else n - 1  # auto: dense costs less beyond
        while count < limit:
            eigenvalues, eigenvectors = lanczos_eigenpairs(centred_gram, count, settings)
            k = choose_k(eigenvalues, n_components, eps, total=total, n=n, centred=centred)
            if n_components is not None or k < count or eigenvalues.sum() >= (1.0 - eps) * total:
                return eigenvalues, eigenvectors[:, :k]
            count *= 2
    eigenvalues, eigenvectors = eigendecomposition(centred_gram, backend)
    return eigenvalues, eigenvectors[:, : choose_k(eigenvalues, n_components, eps, centred=centred)]


def warn_of_a_cut_in_a_tie(eigenvalues: np.ndarray, k: int) -> None:
    """Warn when λ_k and λ_(k+1) are equal to rounding (:data:`EQUAL_EIGENVALUES`), both above
    it: the k components kept are then one arbitrary choice among the directions of a common
    eigenspace, made by rounding, so codes and the frames decoded from them differ from one
    CPU to another. (Ties among the kept components alone change nothing a code is used for:
    distances in reduced space do not depend on the basis of the space.) Ties of eigenvalue 0
    are left alone: those directions code nothing."""
    if k >= len(eigenvalues):
        return
    equal = EQUAL_EIGENVALUES * float(eigenvalues[0])
    if eigenvalues[k] <= equal or eigenvalues[k - 1] - eigenvalues[k] > equal:
        return
    tied = np.flatnonzero(np.abs(eigenvalues - eigenvalues[k]) <= equal)
    if len(tied) == np.count_nonzero(eigenvalues > equal):
        cause = (
            "every eigenvalue is the same: the kernel tells no two samples apart more than any other "
            "(a Gaussian kernel too narrow for their distances?)"
        )
    else:
        cause = "choose a k outside the tie"
    warnings.warn(
        f"{len(tied)} eigenvalues are equal to rounding ({eigenvalues[k]:.6g}) and k = {k} keeps "
        f"{k - int(tied[0])} of them: which of their directions are kept depends on the CPU's rounding, and so "
        f"do the codes; {cause}",
        KpcaWarning,
        stacklevel=3,  # the caller of leading_eigenpairs
    )


def lanczos_eigenpairs(
    matrix: np.ndarray, count: int, settings: EigenSolver | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The `count` eigenpairs of largest magnitude of a symmetric matrix, decreasing, signs
    fixed, negligible negative eigenvalues clipped (significant ones raise, as in
    :func:`check_psd`: largest magnitude, not largest value, so that a kernel that is not
    positive semi-definite shows its large negative eigenvalues). ARPACK's tolerance,
    iterations and start vector from `settings` (:class:`EigenSolver`)."""
    from scipy.sparse.linalg import eigsh

    settings = settings or EigenSolver("arpack")
    n = matrix.shape[0]
    if settings.seed is None:
        start = np.random.default_rng(0).uniform(size=n)  # fixed: the same matrix gives the same model
    else:
        start = settings.generator().uniform(-1, 1, size=n)  # scikit-learn's start for a given state
    with single_threaded_blas():  # each product reads the whole matrix: memory-bound either way
        eigenvalues, eigenvectors = eigsh(
            matrix, k=min(count, n - 1), which="LM", v0=start, tol=settings.tol, maxiter=settings.max_iter
        )
    order = np.argsort(eigenvalues, kind="stable")[::-1]
    eigenvalues = check_psd(eigenvalues[order])
    return eigenvalues, fix_signs(eigenvectors[:, order])


def randomized_eigenpairs(
    matrix: np.ndarray, count: int, settings: EigenSolver, checked: bool = True, backend: Backend = HOST
) -> tuple[np.ndarray, np.ndarray]:
    """The `count` eigenpairs of largest magnitude of a symmetric matrix by the randomized
    method (Halko, Martinsson and Tropp 2011), step for step as scikit-learn's KernelPCA takes
    them (its ``_randomized_eigsh`` with ``selection="module"``): a Gaussian sketch of
    ``count + RANDOMIZED_OVERSAMPLING`` directions drawn from the settings' RandomState,
    ``iterated_power`` power iterations each multiplying by A and by Aᵀ and normalising by LU
    (none at two iterations or fewer), an orthonormal basis of the result, the SVD of A on it
    (algorithms 4.4 and 5.1), and the eigenvalues the singular values signed by ``v_iᵀ u_i``;
    decreasing, signs fixed, and (`checked`) the eigenvalues checked, as
    :func:`lanczos_eigenpairs`. The algebra is the `backend`'s
    (:meth:`kpcacli.numerics.backend.Backend.randomized_sketch`: on an accelerator, `matrix`
    may be there already and the products are normalised by QR; the same eigenpairs to
    rounding, as numpy arrays)."""
    n = matrix.shape[0]
    power = settings.iterated_power
    if power == "auto":
        power = 7 if count < 0.1 * n else 4
    basis = settings.generator().normal(size=(n, count + RANDOMIZED_OVERSAMPLING))
    values, vectors = backend.randomized_sketch(matrix, count, basis, int(power))
    decreasing = np.argsort(values, kind="stable")[::-1]
    values = check_psd(values[decreasing]) if checked else values[decreasing]
    return values, fix_signs(vectors[:, decreasing])


def check_psd(eigenvalues: np.ndarray) -> np.ndarray:
    """Clip negligible negative eigenvalues to zero; raise on significant ones."""
    largest = float(eigenvalues.max(initial=0.0))
    smallest = float(eigenvalues.min(initial=0.0))
    if largest <= 0:
        raise DegenerateKernelError(
            "the kernel Gram matrix has no positive eigenvalue; the frames may all be identical"
        )
    if smallest < -SIGNIFICANT_NEGATIVE_RATIO * largest and smallest < -SIGNIFICANT_NEGATIVE_VALUE:
        raise KpcaError(
            f"the kernel Gram matrix has significant negative eigenvalues ({smallest / largest:.3g} of the "
            "largest): this kernel is not positive semi-definite on these frames; try another kernel "
            "or other parameters"
        )
    return np.where(eigenvalues < 0, 0.0, eigenvalues)


def project(vectors: np.ndarray, eigenvectors: np.ndarray) -> np.ndarray:
    """Codes of kernel vectors, ``z = V*ᵀ ḡ`` (eq. 30; eq. 27 for the training Gram's rows).

    Each code is accumulated term by term in a fixed order, ``z += ḡ_l v_l`` for l = 1..n,
    so a frame gets bit-identical codes alone or in any batch. A BLAS product does not
    promise that (its blocking and kernels depend on the batch), nor does a numpy reduction
    (its loop order depends on the shape): both can differ by an ulp or more.

    Parameters
    ----------
    vectors : (m, n) ndarray
        Kernel vectors ``ḡ``, one per row.
    eigenvectors : (n, k) ndarray
        ``V*``.

    Returns
    -------
    codes : (m, k) ndarray
    """
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    terms = np.ascontiguousarray(vectors.T)  # (n, m): the l-th term of every code, contiguous
    codes = np.zeros((vectors.shape[0], eigenvectors.shape[1]))
    for term, row in zip(terms, eigenvectors):
        codes += term[:, None] * row[None, :]
    return codes
