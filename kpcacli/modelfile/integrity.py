"""The integrity of a state read from a model file (:func:`check_state`): its members of the
right types and shapes, its frames finite, and its spectrum, centring, codes and linear axes
consistent with its Gram to rounding, so that a damaged or forged file is refused in one line
(:class:`kpcacli.utils.errors.ModelFileError`) before any command uses it.
"""

from __future__ import annotations

import numpy as np

from ..model.state import FittedState, row_blocks
from ..numerics.centring import centre_gram
from ..numerics.kernels import Kernel
from ..utils.checks import FRAME_DTYPES, check_array, check_bool, check_int, check_real
from ..utils.errors import ModelFileError

# Relative tolerance of the consistency checks of a loaded state (rounding is ~1e-15).
CONSISTENCY_TOLERANCE = 1e-6


def check_state(state: FittedState) -> None:
    """Check every member and their consistency; raise ModelFileError naming the member.

    Checks types, shapes and dtypes; finiteness; ranges (eigenvalues decreasing and
    non-negative within rounding, 1 ≤ k < n); the frame shape against the frame length;
    that L is symmetric with a non-negative diagonal; that V* has orthonormal columns; that
    the codes are Ḡ V* and their squared norms the eigenvalues; that the centring terms
    are G's. The kernel's own parameters were checked when it was made.
    """
    if not isinstance(state.kernel, Kernel):
        raise ModelFileError(f"kernel must be a Kernel. Got {type(state.kernel).__name__} instead.")
    check_bool("centred", state.centred, ModelFileError)
    n, d = _check_frames_and_their_names(state)
    _check_spectrum(state, n, d)
    _check_consistency(state)
    if state.linear_axes is not None:
        _check_linear_axes(state)
    if np.dtype(state.frames.dtype).kind == "f":
        for block in row_blocks(state.frames):
            if not np.all(np.isfinite(block)):
                raise ModelFileError("frames must be finite. Got NaN or infinite values instead.")


def _check_frames_and_their_names(state: FittedState) -> tuple[int, int]:
    """The frames' matrix, shape, names and recorded numbers; returns (n, d)."""
    error = ModelFileError
    frames = state.frames
    if getattr(frames, "ndim", 0) != 2 or np.dtype(frames.dtype) not in FRAME_DTYPES:
        raise error(
            f"frames must be an (n, d) array of uint8, uint16, float32 or float64. Got "
            f"shape {getattr(frames, 'shape', '?')} and dtype {getattr(frames, 'dtype', '?')} instead."
        )
    n, d = frames.shape
    check_int("the number of training frames", n, 2, error=error)
    shape = state.frame_shape
    if not (
        isinstance(shape, tuple)
        and len(shape) in (1, 2, 3)
        and all(int(v) >= 1 for v in shape)
        and (len(shape) < 3 or int(shape[2]) == 3)
    ):
        raise error(f"frame_shape must be (height, width), (height, width, 3) or (d,). Got {shape!r} instead.")
    if int(np.prod(shape)) != d:
        raise error(f"frame_shape must hold the frame length {d}. Got {list(shape)} instead.")
    if len(state.frame_names) != n or not all(isinstance(name, str) for name in state.frame_names):
        raise error(f"frame_names must be {n} strings. Got {len(state.frame_names)} instead.")
    if state.provenance is not None and len(state.provenance.frame_indices) != n:
        raise error(f"provenance.frame_indices must be {n} numbers. Got {len(state.provenance.frame_indices)} instead.")
    return n, d


def _check_spectrum(state: FittedState, n: int, d: int) -> None:
    """The linear Gram's members, the eigenpairs and the codes: shapes, types and ranges."""
    error = ModelFileError
    gram = state.linear_gram
    check_array("linear_gram", gram.shifted, (n, n), error=error)
    if not np.array_equal(gram.shifted, gram.shifted.T) or np.any(np.diag(gram.shifted) < 0):
        raise error("linear_gram must be symmetric with a non-negative diagonal. Got another matrix instead.")
    check_array("origin", gram.origin, (d,), kinds="uif", error=error)
    check_array("origin_dots", gram.origin_dots, (n,), error=error)
    check_real("origin_norm2", gram.origin_norm2, non_negative=True, error=error)
    eigenvalues = check_array("eigenvalues", state.eigenvalues, (None,), error=error)
    check_int("the number of eigenvalues", len(eigenvalues), 1, n, error=error)
    largest = float(eigenvalues[0])
    if largest <= 0 or np.any(np.diff(eigenvalues) > 0) or eigenvalues[-1] < -1e-10 * largest:
        raise error("eigenvalues must be decreasing, non-negative and not all zero. Got other values instead.")
    vectors = check_array("eigenvectors", state.eigenvectors, (n, None), error=error)
    check_int("k (the eigenvectors' columns)", vectors.shape[1], 1, n - 1 if state.centred else n, error=error)
    k = vectors.shape[1]
    check_int("k (the eigenvectors' columns)", k, 1, len(eigenvalues), error=error)
    check_array("codes", state.codes, (n, k), error=error)
    check_array("gram_row_means", state.gram_row_means, (n,), error=error)
    check_real("gram_mean", state.gram_mean, error=error)


def _check_consistency(state: FittedState) -> None:
    """The members against each other: V* orthonormal, the centring terms G's, the codes
    Ḡ V* (eq. 27) and their squared norms the eigenvalues."""
    error = ModelFileError
    vectors, eigenvalues = state.eigenvectors, state.eigenvalues
    k, largest = vectors.shape[1], float(eigenvalues[0])
    if not np.allclose(vectors.T @ vectors, np.eye(k), rtol=0, atol=CONSISTENCY_TOLERANCE):
        raise error("eigenvectors must have orthonormal columns. Got other columns instead.")
    kernel_gram = state.kernel_gram
    if not np.all(np.isfinite(kernel_gram)):
        raise error("the kernel Gram of these frames must be finite. Got infinite values instead.")
    if state.centred:
        row_means = kernel_gram.mean(axis=1)
        scale = max(float(np.abs(row_means).max()), 1e-300)
        if not np.allclose(state.gram_row_means, row_means, rtol=0, atol=CONSISTENCY_TOLERANCE * scale) or not (
            abs(state.gram_mean - float(row_means.mean())) <= CONSISTENCY_TOLERANCE * scale
        ):
            raise error("gram_row_means and gram_mean must be the kernel Gram's. Got other values instead.")
    elif np.any(state.gram_row_means != 0) or state.gram_mean != 0:
        raise error("gram_row_means and gram_mean must be zero for an uncentred model. Got other values instead.")
    expected = state.codes_of_kernel_vectors(kernel_gram)
    scale = max(float(np.abs(expected).max()), 1e-300)
    if not np.allclose(state.codes, expected, rtol=0, atol=CONSISTENCY_TOLERANCE * scale):
        raise error("codes must be the training codes Ḡ V* (eq. 27). Got other values instead.")
    norms = np.sqrt(np.sum(state.codes**2, axis=0))
    if not np.allclose(norms, eigenvalues[:k], rtol=CONSISTENCY_TOLERANCE, atol=CONSISTENCY_TOLERANCE * largest):
        raise error("eigenvalues must match the norms of the codes (Ḡ V* = V* Λ). Got other values instead.")


def _check_linear_axes(state: FittedState) -> None:
    """The stored linear-PCA axes (:mod:`kpcacli.modelfile.axes`) against the linear Gram: 1 ≤ R ≤
    min(2k, n − 1) orthonormal eigenvectors of the centred Gram with their positive,
    decreasing eigenvalues, the Gram's diagonal as centred norms, positive scales."""
    error = ModelFileError
    axes = state.linear_axes
    n, k = state.n_samples, state.n_components
    eigenvalues = check_array("axis_eigenvalues", axes.eigenvalues, (None,), error=error)
    count = check_int("the number of linear axes", len(eigenvalues), 1, min(2 * k, n - 1), error=error)
    vectors = check_array("axis_eigenvectors", axes.eigenvectors, (n, count), error=error)
    norms = check_array("axis_centred_norms", axes.centred_norms, (n,), error=error)
    scales = check_array("axis_scales", axes.frames.scales, (count,), error=error)
    if np.any(eigenvalues <= 0) or np.any(np.diff(eigenvalues) > 0) or np.any(scales <= 0):
        raise error("axis_eigenvalues must be positive and decreasing, axis_scales positive. Got other values instead.")
    centred, _, _ = centre_gram(state.linear_gram.shifted)
    scale = max(float(np.abs(centred).max()), 1e-300)
    if not np.allclose(norms, np.diag(centred), rtol=0, atol=CONSISTENCY_TOLERANCE * scale):
        raise error("axis_centred_norms must be the centred linear Gram's diagonal. Got other values instead.")
    if not np.allclose(vectors.T @ vectors, np.eye(count), rtol=0, atol=CONSISTENCY_TOLERANCE) or not np.allclose(
        centred @ vectors, vectors * eigenvalues, rtol=0, atol=CONSISTENCY_TOLERANCE * scale
    ):
        raise error("axis_eigenvectors must be eigenvectors of the centred linear Gram. Got other columns instead.")
