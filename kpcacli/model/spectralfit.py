"""Everything of a kernel-PCA fit after the pixel pass, from the linear Gram alone.

García-González et al. (2021): kernel Gram ``G = κ(L)`` (eq. 21) → centring (eqs. 24–25,
optional) → eigenproblem (eq. 26) → k (given, or by eq. 3) → training codes (eq. 27). No pixel
is read, so a model of any subset of the training frames is a cheap step from the full
linear Gram's rows and columns (the solver choice fits four of them,
:mod:`kpcacli.preimage.measurement`).
"""

from __future__ import annotations

import numpy as np

from ..io.provenance import Provenance
from ..numerics.backend import HOST, Backend
from ..numerics.centring import centre_gram
from ..numerics.gram import LinearGram
from ..numerics.kernels import Kernel
from ..numerics.spectrum import EigenSolver, leading_eigenpairs, project
from ..utils.errors import InputError, param
from .state import FittedState


def spectral_fit(
    frames: np.ndarray,
    frame_shape: tuple[int, ...],
    names: tuple[str, ...],
    gram: LinearGram,
    kernel: Kernel,
    center: bool,
    n_components: int | None,
    eps: float | None,
    provenance: Provenance | None = None,
    eigen_solver: str | EigenSolver = "auto",
    warn_of_ties: bool = True,
    backend: Backend = HOST,
) -> FittedState:
    """Everything after the pixel pass: kernel Gram, centring, eigenproblem (by `eigen_solver`,
    :func:`kpcacli.numerics.spectrum.leading_eigenpairs`, which warns of a k cut through tied
    eigenvalues unless not `warn_of_ties`; by the `backend`), k, codes."""
    kernel_gram = kernel.gram(gram)
    if not np.all(np.isfinite(kernel_gram)):
        raise InputError(
            f"the kernel Gram matrix has infinite values; use a smaller {param('gamma')} or {param('degree')}"
        )
    if center:
        centred, row_means, grand_mean = centre_gram(kernel_gram)
    else:
        centred, row_means, grand_mean = kernel_gram, np.zeros(kernel_gram.shape[0]), 0.0
    eigenvalues, eigenvectors = leading_eigenpairs(
        centred, n_components, eps, eigen_solver, warn_of_ties, backend, centred=center
    )
    state = FittedState(
        kernel=kernel,
        centred=center,
        frames=frames,
        frame_shape=tuple(int(v) for v in frame_shape),
        frame_names=names,
        linear_gram=gram,
        gram_row_means=row_means,
        gram_mean=grand_mean,
        eigenvalues=eigenvalues,
        eigenvectors=eigenvectors,
        codes=project(centred, eigenvectors),  # Z*ᵀ = Ḡ V*, eq. 27
        provenance=provenance,
    )
    return state


def with_components(
    state: FittedState,
    k: int,
    kernel: Kernel | None = None,
    eigen_solver: str | EigenSolver = "auto",
    backend: Backend = HOST,
) -> FittedState:
    """`state`'s fit again with k components (and `kernel` in place of its own when given), from
    its stored linear Gram: no pixel is read (a sweep's cells,
    :meth:`kpcacli.estimators.estimator.FrameModel.with_components`); the eigenproblem by the
    `backend`, as the fit's."""
    return spectral_fit(
        state.frames,
        state.frame_shape,
        state.frame_names,
        state.linear_gram,
        kernel if kernel is not None else state.kernel,
        state.centred,
        k,
        None,
        provenance=state.provenance,
        eigen_solver=eigen_solver,
        backend=backend,
    )
