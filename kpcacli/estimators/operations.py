"""What a fitted state does to frames, written once: encoding them (eqs. 29–30) and denoising
them. :class:`kpcacli.estimators.estimator.FrameModel`'s methods, the in-process engine and the
cluster's tasks all call these on a :class:`~kpcacli.model.state.FittedState`, none of them
through an estimator built again around the state.
"""

from __future__ import annotations

import numpy as np

from ..model.noise import noise_free_arguments, row_noise, training_copies
from ..model.state import FittedState
from ..model.validation import check_rows
from ..numerics.backend import HOST, Backend
from ..numerics.gram import CrossProducts
from ..preimage import Start, prepared_solver
from ..preimage.choice import DENOISING, OWN_FRAMES, prepared_for, solver_for, training_noise
from ..preimage.synthesis import preimage_frames


def encode_with_distances(
    state: FittedState, frames, progress: bool = False, backend: Backend = HOST, held=None
) -> tuple[np.ndarray, np.ndarray]:
    """The codes of `frames` (eqs. 29–30: ``z = V*ᵀ ḡ_new``), (m, k), and each frame's
    input-space distance to its nearest training frame, (m,), from one pass over the stored
    frames (:meth:`kpcacli.estimators.estimator.FrameModel.encode_with_distances`); `progress`
    shows that pass. By the `backend` (the same products for integer frames on any), the
    training frames `held` by it when a caller keeps them between batches
    (:meth:`kpcacli.numerics.backend.Backend.hold`)."""
    products = training_products(state, check_rows(state, frames), progress, backend, held)
    codes = state.codes_of_products(products)
    return codes, state.nearest_frame_distances(products)


def training_products(
    state: FittedState, rows: np.ndarray, progress: bool, backend: Backend = HOST, held=None
) -> CrossProducts:
    """The products of checked `rows` with the training frames, one pass over the stored
    frames by the `backend` (:meth:`kpcacli.numerics.backend.Backend.cross`, the training
    frames `held` by it when given)."""
    return backend.cross(state.linear_gram, state.frames, rows, held, progress)


def denoise(
    state: FittedState,
    frames,
    solver: str | None = None,
    neighbours: int | None = None,
    progress: bool = False,
    backend: Backend = HOST,
):
    """`frames` denoised, in the training frames' dtype, and their pre-images
    (:meth:`kpcacli.estimators.estimator.FrameModel.denoise`, which says how); `progress` shows
    the pass over the stored frames. The products with the training frames and the pixel sums
    of the pre-images by the `backend` (the same bits for integer frames on any)."""
    rows = check_rows(state, frames)
    method = prepared_for(state, solver, neighbours, DENOISING)
    arguments = state.kernel_arguments_of(training_products(state, rows, progress, backend))
    codes = state.codes_of_arguments(arguments)
    # A new frame's noise beyond the training frames' shrinks its code (kpcacli/model/noise.py):
    # its arguments are freed of it. A frame the model holds carries the training frames' own.
    noise = row_noise(state, rows)
    own_noise = training_noise(state) if noise is not None else 0.0
    copies = training_copies(state, arguments, noise, own_noise)
    own_views = [state.neighbours.own_view(code) if copy else None for code, copy in zip(codes, copies)]
    new = np.array([view is None for view in own_views])
    if new.any() and noise is not None:
        arguments[new] = noise_free_arguments(state, arguments[new], noise[new], own_noise)
        codes[new] = state.codes_of_arguments(arguments[new])
    # A frame the model holds is denoised by the solver measured for such frames (the
    # learned map's in-sample fit is not a held-back frame's, kpcacli/preimage/measurement.py).
    own_method = method
    if any(view is not None for view in own_views):
        own_method, _ = prepared_solver(state, solver_for(state, solver, OWN_FRAMES), neighbours)
    preimages = [
        (method if view is None else own_method).preimage(
            state, code, Start(np.asarray(row, dtype=np.float64), argument), exclude_copies_of=view
        )
        for code, row, argument, view in zip(codes, rows, arguments, own_views)
    ]
    return preimage_frames(state, preimages, backend), preimages
