"""Checks of everything that enters a fitted model: the members of a state read from a
model file (:func:`check_state`), training frames (:func:`training_rows`), and new frames
(:func:`check_rows`) and codes (:func:`check_codes`) given to encode or decode. Each raises
one domain error naming what is wrong; :class:`kpcacli.model.state.FittedState` itself only
holds. Parameters and their map are checked beside them, in :mod:`kpcacli.model.parameters`.
"""

from __future__ import annotations

import json
import warnings

import numpy as np

from ..numerics.centring import centre_gram
from ..numerics.kernels import Kernel
from ..utils.checks import (
    FRAME_DTYPES,
    check_array,
    check_bool,
    check_int,
    check_real,
    depth_name,
    frame_size,
    other_bit_depth,
)
from ..utils.errors import InputError, InputWarning, ModelFileError, ParameterError, param
from ..utils.hyperparameters import check
from .state import FittedState, row_blocks

# Relative tolerance of the consistency checks of a loaded state (rounding is ~1e-15).
CONSISTENCY_TOLERANCE = 1e-6
# Codes this many times larger than every training code are no model's codes (and their squares
# overflow long before 1e308): refused in one line rather than decoded to noise or a warning.
ABSURD_CODE_FACTOR = 1e6


# -- new input ----------------------------------------------------------------------------
def check_rows(state: FittedState, frames) -> np.ndarray:
    """New frames as (m, d) rows, checked against the frame shape and for finiteness.

    Accepts one frame of ``frame_shape``, a stack ``(m, *frame_shape)``, rows ``(m, d)`` or
    a list of frames.
    """
    if not isinstance(frames, np.ndarray):
        items = [np.asarray(item) for item in frames]
        if not items:
            raise InputError("no frames to encode")
        for item in items:
            if item.shape != state.frame_shape and item.shape != (state.frames.shape[1],):
                raise InputError(_shape_mismatch(state, "a frame", item.shape))
            if other_bit_depth(item.dtype, state.frames.dtype):  # before np.stack makes them one dtype
                raise InputError(depth_advice(state, f"a frame is {depth_name(item.dtype)}"))
        frames = np.stack([item.reshape(-1) for item in items])
    d = state.frames.shape[1]
    if frames.shape == state.frame_shape:
        frames = frames[np.newaxis]
    if frames.ndim < 2 or frames.shape[1:] not in (state.frame_shape, (d,)):
        raise InputError(_shape_mismatch(state, "frames", frames.shape[1:]))
    rows = frames.reshape(frames.shape[0], d)
    if other_bit_depth(rows.dtype, state.frames.dtype):
        raise InputError(depth_advice(state, f"the frames to encode are {depth_name(rows.dtype)}"))
    if rows.dtype.kind not in "uif":
        raise InputError(f"the frames to encode hold {rows.dtype} values, not numbers")
    if rows.dtype.kind == "f" and not np.all(np.isfinite(rows)):
        raise InputError("the frames to encode contain NaN or infinite values")
    return rows


def check_partial_rows(state: FittedState, frames, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Frames seen in part, as (m, d) rows (hidden values 0) and where each is observed,
    (m, d) bool. `mask` (True or non-zero where observed) is one frame's shape, (d,), one
    mask per frame, or for a colour model height x width for every channel; None: wherever
    `frames` is not NaN. Refused: a mask of another size, or not of numbers; NaN at an observed
    value; a frame with nothing observed."""
    if not isinstance(frames, np.ndarray):
        items = [np.asarray(item) for item in frames]
        frames = np.stack(items) if items and len({item.shape for item in items}) == 1 else items
    unknown = None
    if isinstance(frames, np.ndarray) and frames.dtype.kind == "f":
        unknown = np.isnan(frames)
        frames = np.where(unknown, 0.0, frames).astype(frames.dtype, copy=False) if unknown.any() else frames
    rows = check_rows(state, frames)
    unknown = np.zeros(rows.shape, dtype=bool) if unknown is None else unknown.reshape(rows.shape)
    if mask is None:
        observed = ~unknown
    else:
        observed = check_mask(state, mask, len(rows))
        if np.any(unknown & observed):
            row = int(np.argmax((unknown & observed).any(axis=1)))
            raise InputError(f"frame {row} is NaN at a value its mask says is observed")
    empty = ~observed.any(axis=1)
    if empty.any():
        raise InputError(f"frame {int(np.argmax(empty))} has no observed value: its mask hides everything")
    return rows, observed


def check_mask(
    state: FittedState, mask, count: int, threshold: float | None = None, name: str = "the mask"
) -> np.ndarray:
    """`mask` for `count` frames as (count, d) bool, True where observed: non-zero values, or
    with `threshold`, values at or above it. A mask of numbers with values other than 0 and its
    largest (a JPEG's grey edges, a blurred mask) and no `threshold` is warned of, with their
    count: they count as observed. `name` names the mask in messages."""
    mask = np.asarray(mask)
    threshold = check("mask_threshold", threshold)
    if mask.dtype.kind not in "biuf":
        raise InputError(f"the mask holds {mask.dtype} values, not numbers")
    if mask.dtype.kind == "f" and not np.all(np.isfinite(mask)):
        raise InputError("the mask contains NaN or infinite values")
    d = state.frames.shape[1]
    shapes = [state.frame_shape, (d,)] + ([state.frame_shape[:2]] if state.is_colour else [])
    for shape in shapes:
        if mask.shape == shape or mask.shape == (count, *shape):
            if threshold is None:
                _warn_of_partial_values(mask, name)
            observed = mask != 0 if threshold is None else mask >= threshold
            if shape == state.frame_shape[:2] and state.is_colour:
                observed = np.repeat(observed[..., np.newaxis], 3, axis=-1)
            return np.broadcast_to(observed.reshape(-1, d), (count, d)).copy()
    if mask.ndim >= 2 and mask.shape[0] != count and mask.shape[1:] in shapes:
        raise InputError(f"{mask.shape[0]} masks for {count} frames; give one mask, or one per frame")
    size = frame_size(mask.shape[-len(state.frame_shape) :]) if mask.ndim else "a single value"
    raise InputError(f"the mask is {size}; the model's frames are {frame_size(state.frame_shape)}")


def _warn_of_partial_values(mask: np.ndarray, name: str) -> None:
    """Warn when a mask of numbers holds values other than 0 and its largest."""
    if mask.dtype.kind == "b" or mask.size == 0:
        return
    largest = mask.max()
    partial = int(np.count_nonzero((mask != 0) & (mask != largest)))
    if partial:
        warnings.warn(
            f"{name} has {partial:,} values between 0 and its largest, {largest:g} (a lossy image's edges?): they "
            f"count as observed; {param('mask_threshold')} T counts the values below T as hidden",
            InputWarning,
            stacklevel=3,
        )


def check_sensors(state: FittedState, indices) -> np.ndarray:
    """Sensor locations as flat indices into the frame vector, (P,) int: within the frame,
    each once."""
    indices = np.asarray(indices)
    d = state.frames.shape[1]
    if indices.ndim != 1 or not len(indices) or indices.dtype.kind not in "iu":
        raise InputError("the sensors must be a list of flat indices into the frame, one a sensor")
    outside = np.flatnonzero((indices < 0) | (indices >= d))
    if len(outside):
        raise InputError(
            f"sensor {outside[0]} is at index {indices[outside[0]]}, outside the model's frames "
            f"({frame_size(state.frame_shape)}: indices 0 to {d - 1})"
        )
    values, counts = np.unique(indices, return_counts=True)
    if np.any(counts > 1):
        repeated = int(values[np.argmax(counts > 1)])
        raise InputError(f"index {repeated} is listed twice among the sensors; each sensor reads its own value")
    return indices.astype(np.intp)


def rows_from_readings(state: FittedState, readings, sensors: np.ndarray) -> np.ndarray:
    """Frames as (m, d) float rows, NaN but at `sensors` (checked by :func:`check_sensors`),
    where they hold `readings` (m, P): one row a frame, one column a sensor, finite."""
    readings = np.asarray(readings, dtype=np.float64)
    if readings.ndim == 1:
        readings = readings[np.newaxis, :]
    if readings.ndim != 2 or readings.shape[1] != len(sensors):
        columns = readings.shape[1] if readings.ndim == 2 else "no"
        raise InputError(
            f"the readings have {columns} columns but there are {len(sensors)} sensors; one column a sensor"
        )
    bad = np.flatnonzero(~np.isfinite(readings).all(axis=1))
    if len(bad):
        raise InputError(f"the readings have a NaN or infinite value in row {bad[0]}")
    rows = np.full((len(readings), state.frames.shape[1]), np.nan)
    rows[:, sensors] = readings
    return rows


def _shape_mismatch(state: FittedState, what: str, shape) -> str:
    return (
        f"{what} of {frame_size(shape)} do not match the model's {frame_size(state.frame_shape)}; {size_advice(state)}"
    )


def depth_advice(state: FittedState, what: str) -> str:
    """The message for frames of another bit depth than the model's (`what` says which)."""
    return f"{what} but the model was fitted on {depth_name(state.frames.dtype)} frames; convert them first"


def size_advice(state: FittedState) -> str:
    """What to do about a sample of the wrong size: resize a frame to the model's size (the
    value to give, so that a model fitted with ``--resize`` says what it was); a point model
    takes only rows of its own length (resizing a picture cannot make one)."""
    if len(state.frame_shape) == 1:
        return f"give rows of {state.frame_shape[0]} values (.npy, .csv), as the model's points are"
    height, width = state.frame_shape[:2]
    return f"use {param('resize')} {width}x{height} to bring them to the model's size"


def check_codes(state: FittedState, codes) -> np.ndarray:
    """Codes as a float64 (m, k) array: 2-D, k columns, finite."""
    codes = np.asarray(codes, dtype=np.float64)
    if codes.ndim == 1:
        codes = codes[np.newaxis, :]
    if codes.ndim != 2 or codes.shape[0] == 0:
        raise InputError("the codes are empty; expected one row of k values per frame")
    if codes.shape[1] != state.n_components:
        raise InputError(f"the codes have {codes.shape[1]} columns but the model has k = {state.n_components}")
    if not np.all(np.isfinite(codes)):
        row = int(np.argwhere(~np.isfinite(codes))[0, 0])
        raise InputError(f"the codes have a NaN or infinite value in row {row}")
    largest = float(np.abs(state.codes).max()) or 1.0
    if np.abs(codes).max() > ABSURD_CODE_FACTOR * largest:
        row, column = (int(v) for v in np.unravel_index(np.argmax(np.abs(codes)), codes.shape))
        raise InputError(
            f"the code in row {row}, column {column} is {codes[row, column]:.3g}, over "
            f"{ABSURD_CODE_FACTOR:.0e} times the largest training code ({largest:.3g}): these are not codes of "
            "this model"
        )
    return codes


# -- a model file's state -----------------------------------------------------------------
def training_rows(frames, frame_shape) -> tuple[np.ndarray, tuple[int, ...]]:
    """Training frames as an (n, d) array, and one frame's shape (memory maps are kept as
    they are; numbers of other dtypes become float64, as the frame store makes them)."""
    if isinstance(frames, (list, tuple)) or (not hasattr(frames, "shape")):
        items = [np.asarray(item) for item in frames]
        frames = np.stack(items) if items else np.empty((0, 0))
    if frames.ndim == 1:
        raise InputError("training frames must be a 2-D (n, d) or 3-D (n, height, width) array")
    if np.dtype(frames.dtype) not in FRAME_DTYPES:  # as the frame store does: other numbers as float64
        frames = np.asarray(frames, dtype=np.float64)
    n = frames.shape[0]
    if frames.ndim == 2:
        shape = _frame_shape(frame_shape) if frame_shape is not None else (frames.shape[1],)
        if int(np.prod(shape)) != frames.shape[1]:
            raise InputError(f"frame_shape {shape} does not hold {frames.shape[1]} values")
        return frames, shape
    return frames.reshape(n, -1), tuple(frames.shape[1:])


def _frame_shape(frame_shape) -> tuple[int, ...]:
    """A given frame shape: ``(d,)`` points, ``(height, width)`` or ``(height, width, 3)``,
    positive ints."""
    try:
        shape = tuple(frame_shape)
    except TypeError:
        shape = ()
    valid = (
        1 <= len(shape) <= 3
        and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in shape)
        and (len(shape) < 3 or shape[2] == 3)
    )
    if not valid:
        raise ParameterError(
            f"frame_shape must be (d,), (height, width) or (height, width, 3) of positive ints. Got {frame_shape!r} instead."
        )
    return tuple(int(v) for v in shape)


def check_solver_choice(choice, solvers, error=ModelFileError) -> dict | None:
    """A model file's ``solver_choice`` (:class:`kpcacli.preimage.solverchoice.SolverChoice`): None
    (a model older than it), or a mapping of the chosen solver and the rule's, both among
    `solvers`, finite scores by solver name (none when nothing was measured, and then the
    rule's solver was chosen), the count of frames held back, and optionally the denoising
    choice (a solver among its own finite scores). A solver named at fit (``named``: true)
    has no scores and no frames held back, and neither has its denoising choice."""
    if choice is None:
        return None
    scores = choice.get("scores") if isinstance(choice, dict) else None
    held_back = choice.get("held_back") if isinstance(choice, dict) else None
    named = choice.get("named", False) if isinstance(choice, dict) else None
    valid = (
        isinstance(choice, dict)
        and isinstance(named, bool)
        and choice.get("solver") in solvers
        and choice.get("rule") in solvers
        and _valid_count(held_back, 0)
        and _valid_scores(scores, solvers)
        and (
            not scores and held_back == 0
            if named
            else (choice["solver"] in scores if scores else choice["solver"] == choice["rule"] and held_back == 0)
        )
        and _valid_denoising(choice.get("denoising"), solvers, named)
    )
    if not valid:
        raise error(
            "solver_choice must name a known solver, the rule's solver, the scores of the solvers "
            "measured, the count of frames held back and any denoising solver among its scores. "
            f"Got {json.dumps(choice)[:80]} instead."
        )
    return choice


def _valid_denoising(denoising, solvers, named: bool) -> bool:
    """The optional ``denoising`` of a solver choice: absent, or the chosen solver among finite
    scores by solver name, and the count of frames denoised (at least one); named at fit, a
    known solver with no scores and no frames denoised."""
    if denoising is None:
        return True
    if not isinstance(denoising, dict):
        return False
    scores = denoising.get("scores")
    if named:
        return denoising.get("solver") in solvers and scores == {} and denoising.get("held_back") == 0
    return (
        _valid_scores(scores, solvers)
        and denoising.get("solver") in scores
        and _valid_count(denoising.get("held_back"), 1)
    )


def _valid_scores(scores, solvers) -> bool:
    """A mapping of solver names among `solvers` to finite numbers."""
    return isinstance(scores, dict) and all(
        name in solvers and isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
        for name, value in scores.items()
    )


def _valid_count(count, low: int) -> bool:
    """An int (not a bool) of at least `low`."""
    return isinstance(count, int) and not isinstance(count, bool) and count >= low


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
    check_int("k (the eigenvectors' columns)", vectors.shape[1], 1, n - 1, error=error)
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
