"""The fit of :class:`kpcacli.estimators.estimator.FrameModel` (García-González et al. 2021),
from training frames to a :class:`~kpcacli.model.state.FittedState`: the linear Gram (eq. 8,
the one pass over pixels, unless it was computed elsewhere), the kernel (eq. 21) and the
spectral fit (:func:`kpcacli.model.spectralfit.spectral_fit`: centring, eigenproblem, k, codes);
then, as its last step, decoding prepared (:func:`prepared_for_decoding`), so that saving and
decoding measure nothing.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..io.provenance import Provenance
from ..model.spectralfit import spectral_fit
from ..model.state import FittedState
from ..model.validation import training_rows
from ..modelfile.axes import stored_axes
from ..numerics.backend import HOST, Backend
from ..numerics.gram import LinearGram
from ..numerics.kernels import make_kernel
from ..numerics.spectrum import EigenSolver
from ..preimage import with_solver_choice
from ..preimage.distance import DistanceSolver
from ..utils.errors import InputError, ParameterError

DEFAULT_EPS = 0.1  # eq. 3's tolerance when neither -k nor --eps is given


def k_request(n_components: int | None, eps: float | None) -> tuple[int | None, float | None]:
    """(n_components, eps) as asked; neither means the default ``eps = 0.1`` (``DEFAULT_EPS``)."""
    if n_components is None and eps is None:
        return None, DEFAULT_EPS
    return n_components, eps


def fitted_state(
    frames,
    frame_shape: tuple[int, ...] | None,
    names: list[str] | None,
    gram: LinearGram | None,
    provenance: Provenance | None,
    *,
    kernel: str,
    kernel_parameters: tuple,
    centred: bool,
    k_request: tuple[int | None, float | None],
    eigen_solver: str | EigenSolver,
    progress: bool,
    backend: Backend = HOST,
) -> FittedState:
    """The fitted state of training `frames` (:meth:`FrameModel.fit` says what each argument
    is), its kernel `kernel` with `kernel_parameters` (beta, gamma, degree, coef0), k by
    `k_request` (n_components, eps), decoding not yet prepared; the Gram and the eigenproblem
    by the `backend` (:mod:`kpcacli.numerics.backend`: the same Gram, bit for bit, for integer
    frames, on any). Refused: fewer than two frames, float frames with NaN or
    infinite values, and a `gram` of other frames."""
    frames, shape = training_rows(frames, frame_shape)
    n = frames.shape[0]
    if n < 2:
        raise InputError(f"a model needs at least two frames; got {n}")
    if np.dtype(frames.dtype).kind == "f" and not isinstance(frames, np.memmap):
        if not np.all(np.isfinite(frames)):
            raise InputError("the training frames contain NaN or infinite values")
    if gram is None:
        gram = backend.linear_gram(frames, progress)
    elif gram.shifted.shape != (n, n) or gram.origin.shape != (frames.shape[1],):
        raise ParameterError(f"the given linear Gram is not that of {n} frames of {frames.shape[1]} values")
    names = tuple(str(name) for name in names) if names is not None else tuple(f"frame {i}" for i in range(n))
    return spectral_fit(
        frames,
        shape,
        names,
        gram,
        make_kernel(kernel, gram, *kernel_parameters),
        centred,
        *k_request,
        provenance=provenance,
        eigen_solver=eigen_solver,
        backend=backend,
    )


def prepared_for_decoding(state: FittedState, progress: bool = False, solver: str | None = None) -> FittedState:
    """`state` with decoding prepared, the fit's last steps: the default solver measured, or
    `solver` recorded when one is named (:func:`kpcacli.preimage.measurement.with_solver_choice`),
    then the distance solver's axes as the model stores them
    (:func:`kpcacli.modelfile.axes.stored_axes`) where a default solver is the distance
    solver. Elsewhere a decode that names it forms exact axes from every frame (they cost a
    pass over the frames and an x264 coding at fit, and bytes in the file, for a solver the
    model does not use by default)."""
    chosen = with_solver_choice(state, progress=progress, solver=solver)
    uses_axes = DistanceSolver.name in chosen.solver_choice.defaults()
    return dataclasses.replace(chosen, linear_axes=stored_axes(state) if uses_axes else None)


def parameters_of(state: FittedState) -> dict:
    """The parameters of the estimator a fitted state is a fit of: its kernel's, its k, its
    centring (:meth:`kpcacli.estimators.estimator.FrameModel.from_state`)."""
    kernel = state.kernel
    return {
        "kernel": kernel.name,
        "n_components": state.n_components,
        "beta": kernel.beta,
        "gamma": kernel.gamma,
        "degree": kernel.degree,
        "coef0": kernel.coef0 if kernel.name in ("poly", "sigmoid") else None,
        "center": state.centred,
    }
