"""Checks of everything that enters a fitted model: training frames (:func:`training_rows`),
and new frames (:func:`check_rows`, :func:`check_observed_rows`), masks, sensors and codes
(:func:`check_codes`) given to encode, decode or complete. Each raises one domain error naming
what is wrong; :class:`kpcacli.model.state.FittedState` itself only holds. Parameters and their
map are checked beside them, in :mod:`kpcacli.model.parameters`; the members of a state read
from a model file, in :mod:`kpcacli.modelfile.integrity`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..utils.arrays import on_host
from ..utils.checks import (
    FRAME_DTYPES,
    depth_name,
    frame_size,
    other_bit_depth,
)
from ..utils.errors import InputError, InputWarning, ParameterError, param
from ..utils.hyperparameters import check
from .state import FittedState

# Codes this many times larger than every training code are no model's codes (and their squares
# overflow long before 1e308): refused in one line rather than decoded to noise or a warning.
ABSURD_CODE_FACTOR = 1e6


# -- new input ----------------------------------------------------------------------------
def check_rows(state: FittedState, frames) -> np.ndarray:
    """New frames as (m, d) rows, checked against the frame shape and for finiteness.

    Accepts one frame of ``frame_shape``, a stack ``(m, *frame_shape)``, rows ``(m, d)`` or
    a list of frames; another array library's frames come to the host.
    """
    frames = on_host(frames)
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


def check_observed_rows(state: FittedState, frames, mask=None) -> tuple[np.ndarray, np.ndarray]:
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
                _warn_of_fractional_mask_values(mask, name)
            observed = mask != 0 if threshold is None else mask >= threshold
            if shape == state.frame_shape[:2] and state.is_colour:
                observed = np.repeat(observed[..., np.newaxis], 3, axis=-1)
            return np.broadcast_to(observed.reshape(-1, d), (count, d)).copy()
    if mask.ndim >= 2 and mask.shape[0] != count and mask.shape[1:] in shapes:
        raise InputError(f"{mask.shape[0]} masks for {count} frames; give one mask, or one per frame")
    size = frame_size(mask.shape[-len(state.frame_shape) :]) if mask.ndim else "a single value"
    raise InputError(f"the mask is {size}; the model's frames are {frame_size(state.frame_shape)}")


def _warn_of_fractional_mask_values(mask: np.ndarray, name: str) -> None:
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
    they are; numbers of other dtypes become float64, as the frame store makes them; another
    array library's frames come to the host)."""
    frames = on_host(frames)
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
