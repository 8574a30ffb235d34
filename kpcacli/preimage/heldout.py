"""Training frames held back from a fitted model, as the solver choice measures them
(:mod:`kpcacli.preimage.measurement`): the model of the other frames from the linear Gram's
rows and columns, the held-back frames' codes in it, and the squared error of a pre-image to
a held-back frame, in weight space from the Gram (``(w − e_h)ᵀ L (w − e_h)``) or in pixels;
and held-back points scored feature by feature (J-invariance: a code made from half the
features, scored on the other half).
"""

from __future__ import annotations

import numpy as np

from ..model.framerows import RowsOnDemand
from ..model.spectralfit import spectral_fit
from ..model.state import FittedState
from ..numerics.gram import CrossProducts, LinearGram
from ..numerics.spectrum import known_k_method
from .base import prepared_solver
from .synthesis import preimage_vectors


class StoredRows(RowsOnDemand):
    """Rows `indices` of `frames`, read only when a pre-image is formed in pixels: while the
    choice is measured, the transport solver's two neighbours of each held-back frame (every
    other candidate's error comes from the Gram)."""

    def __init__(self, frames, indices: np.ndarray):
        self.frames, self.indices = frames, indices
        self.shape = (len(indices), frames.shape[1])
        self.dtype = frames.dtype

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self.frames[int(self.indices[key])]
        return np.asarray(self)[key]

    def __array__(self, dtype=None, copy=None):
        rows = np.stack([np.asarray(self.frames[int(row)]) for row in self.indices])
        return rows if dtype is None else rows.astype(dtype)


def fitted_without(state: FittedState, kept: np.ndarray) -> FittedState:
    """The model of the training frames `kept` alone, from the linear Gram's rows and columns."""
    gram = state.linear_gram
    linear = LinearGram(gram.shifted[np.ix_(kept, kept)], gram.origin, gram.origin_dots[kept], gram.origin_norm2)
    k = min(state.n_components, len(kept) - 1)
    names = tuple(state.frame_names[row] for row in kept)
    frames = state.frames[kept] if state.is_points else StoredRows(state.frames, kept)
    # The leading k eigenpairs alone (Lanczos) once the fold's model is large: a dense solve is
    # O(n³), and the choice makes four.
    eigen_solver = known_k_method(len(kept), k)
    # A tie at the cut is the whole model's to warn of, once, not each fold's.
    return spectral_fit(
        frames,
        state.frame_shape,
        names,
        linear,
        state.kernel,
        state.centred,
        k,
        None,
        eigen_solver=eigen_solver,
        warn_of_ties=False,
    )


def held_back_codes(state: FittedState, model: FittedState, kept: np.ndarray, held: np.ndarray) -> tuple:
    """Codes (m, k) of the training frames `held` in `model` (fitted on `kept`), and their
    kernel arguments against `model`'s frames (m, n_kept), from the Gram."""
    gram = state.linear_gram
    products = CrossProducts(
        model.linear_gram, gram.shifted[np.ix_(held, kept)], np.diag(gram.shifted)[held].copy(), gram.origin_dots[held]
    )
    arguments = model.kernel_arguments_of(products)
    return model.codes_of_arguments(arguments), arguments


def pixel_squared_error(frame: np.ndarray, preimage) -> float:
    """``|x* − x|²`` summed over `frame` (d values) of a pre-image that formed pixels: all of
    them, or those at its grid (``preimage.sampled``), their error scaled to the frame."""
    frame = np.asarray(frame, dtype=np.float64).reshape(-1)
    target = frame if preimage.sampled is None else frame[preimage.sampled]
    difference = np.asarray(preimage.pixels, dtype=np.float64) - target
    return float(difference @ difference) * (len(frame) / len(difference))


def squared_error(state: FittedState, kept: np.ndarray, preimage, held: int, axis_weights) -> float:
    """``|x* − x_h|²`` summed over the frame: in weight space (the axes' frames as weights
    `axis_weights` over `kept`), or in pixels for a solver that gave them (points, the
    transport solver); from the pixels it formed, scaled to the frame, where it formed some."""
    if preimage.pixels is not None:
        return pixel_squared_error(np.asarray(state.frames[held]), preimage)
    weights = np.zeros(state.n_samples)
    np.add.at(weights, kept[np.asarray(preimage.indices)], preimage.weights)
    if preimage.move is not None:
        weights[kept] += preimage.move @ axis_weights
    weights[held] -= 1.0
    gram, total = state.linear_gram, weights.sum()
    value = weights @ gram.shifted @ weights + 2.0 * total * (gram.origin_dots @ weights) + total**2 * gram.origin_norm2
    return max(float(value), 0.0)


def split_feature_codes(state: FittedState, model: FittedState, held: np.ndarray) -> list[tuple]:
    """For each half of the features: the codes in `model` of the held-back samples `held` made
    from that half alone (scaled to the whole), the other half's columns, and the samples'
    values there, which the pre-images of those codes are scored against."""
    rows, training = state.float_rows[held], model.float_rows
    d = rows.shape[1]
    halves = (np.arange(0, d, 2), np.arange(1, d, 2))
    coded_halves = []
    for coded, scored in (halves, halves[::-1]):
        scale = d / len(coded)
        half, half_training = rows[:, coded], training[:, coded]
        if model.kernel.uses_distance:
            arguments = (
                (half * half).sum(1)[:, None] + (half_training**2).sum(1)[None, :] - 2.0 * half @ half_training.T
            )
            arguments = np.maximum(arguments, 0.0) * scale
        else:
            arguments = scale * half @ half_training.T
        coded_halves.append((model.codes_of_arguments(arguments), scored, rows[:, scored]))
    return coded_halves


def split_feature_errors(model: FittedState, name: str, coded_halves: list[tuple]) -> list[float]:
    """``|x* − x_h|²`` of the held-back samples, each feature scored by a pre-image of a code
    made from the other half of the features (:func:`split_feature_codes`), so that it cannot
    hold that feature's own noise (Batson and Royer 2019, J-invariance)."""
    method, _ = prepared_solver(model, name, None)
    errors = np.zeros(len(coded_halves[0][0]))
    for codes, scored, targets in coded_halves:
        preimages = [method.preimage(model, code) for code in codes]
        difference = preimage_vectors(model, preimages)[:, scored] - targets
        errors += np.einsum("ij,ij->i", difference, difference)
    return list(errors)
