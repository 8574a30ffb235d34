"""``KernelPCA(solver="auto")`` against the default it replaces: kpca's measured choice
(:mod:`kpcacli.preimage.measurement`) is kept only where it reconstructs held-back training
samples better than scikit-learn's kernel ridge inverse with the estimator's `alpha` (Bakır et
al. 2004), on the same folds; elsewhere the inverse is that default.

The measurement ranks kpca's candidates among themselves; the default's ridge, on
scikit-learn's codes with the forward kernel and its ``alpha``, is none of them, and on noisy
digits the measured choice lost to it (a held-out MSE of 0.01061 against 0.01017 in a grid
search). Each of the measurement's interleaved folds (sample i in fold ``i mod FOLDS``) is
fitted from the linear Gram's rows and columns (:func:`kpcacli.preimage.heldout.fitted_without`),
its held-back samples encoded, then decoded by the measured solver and by the default, and
their squared errors summed against the samples as given: the reconstruction error a
reconstruction-scored search measures.
"""

from __future__ import annotations

import numpy as np

from ..model.state import FittedState
from ..preimage import prepared_solver
from ..preimage.heldout import fitted_without, held_back_codes
from ..preimage.measurement import FOLDS
from ..preimage.synthesis import preimage_vectors
from .sklearn_ridge import SampleKernel, ridge_coefficients


def measured_beats_default(kernel: SampleKernel, alpha: float, state: FittedState, rows: np.ndarray) -> bool:
    """Whether `state`'s measured solver reconstructs its held-back samples with a smaller summed
    squared error than the default inverse, the kernel ridge with the estimator's `kernel` and
    `alpha`, on the same folds (:func:`held_back_errors`); False where the samples are too few
    to hold any back (fewer than ``2 * FOLDS``), so that the default stays."""
    if state.n_samples < 2 * FOLDS or state.solver_choice is None:
        return False
    measured, default = held_back_errors(kernel, alpha, state, rows)
    return measured < default


def held_back_errors(kernel: SampleKernel, alpha: float, state: FittedState, rows: np.ndarray) -> tuple[float, float]:
    """The summed squared errors of the held-back samples over the folds: decoded by `state`'s
    measured solver, and by the default inverse (the kernel ridge with `kernel` and `alpha`)."""
    n = state.n_samples
    order, chosen = np.arange(n), state.solver_choice.solver
    rows = np.asarray(rows, dtype=np.float64).reshape(n, -1)
    measured = default = 0.0
    for fold in range(FOLDS):
        kept, held = order[order % FOLDS != fold], order[order % FOLDS == fold]
        model = fitted_without(state, kept)
        codes = held_back_codes(state, model, kept, held)[0]
        method, _ = prepared_solver(model, chosen, None)
        decoded = preimage_vectors(model, [method.preimage(model, code) for code in codes])
        scales = np.sqrt(model.eigenvalues[: model.n_components])  # scikit-learn's codes: the paper's over √λ
        trained = model.codes / scales
        ridge = kernel(codes / scales, trained) @ ridge_coefficients(kernel, trained, rows[kept], alpha)
        measured += float(np.sum((decoded - rows[held]) ** 2))
        default += float(np.sum((ridge - rows[held]) ** 2))
    return measured, default
