"""The one place values entering the library are checked: options, API arguments, model members.

Every refusal has the form ``"<name> must be <requirement>. Got <value> instead."`` (as
scikit-learn's), written by :func:`invalid` alone. Checks raise :class:`ParameterError` by
default (exit status 2 on the command line); the model-file reader passes
:class:`ModelFileError` so that a forged member is reported as a damaged model (exit 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .errors import KpcaError, ParameterError

# The dtypes training frames are kept in (others become float64): the frame store, the estimator
# and both model formats accept these and no other.
FRAME_DTYPES = (np.uint8, np.uint16, np.float32, np.float64)
INTEGER_TYPES = (int, np.integer)
REAL_TYPES = (int, float, np.integer, np.floating)


def invalid(name: str, requirement: str, value, error: type[KpcaError] = ParameterError) -> KpcaError:
    """The error for `value` of `name` failing `requirement`."""
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        value = value.item()
    return error(f"{name} must be {requirement}. Got {value!r} instead.")


def check_int(name: str, value, low: int, high: int | None = None, error: type[KpcaError] = ParameterError) -> int:
    """An int (not a bool) in ``[low, high]`` (``high`` None: no upper bound)."""
    bounds = f"[{low}, {'inf' if high is None else high}{')' if high is None else ']'}"
    if (
        not isinstance(value, INTEGER_TYPES)
        or isinstance(value, (bool, np.bool_))
        or value < low
        or (high is not None and value > high)
    ):
        raise invalid(name, f"an int in the range {bounds}", value, error)
    return int(value)


def check_real(
    name: str,
    value,
    *,
    positive: bool = False,
    non_negative: bool = False,
    open_unit: bool = False,
    error: type[KpcaError] = ParameterError,
) -> float:
    """A finite real number; optionally > 0, ≥ 0, or in the open interval (0, 1)."""
    ok = isinstance(value, REAL_TYPES) and not isinstance(value, (bool, np.bool_)) and math.isfinite(value)
    if positive:
        requirement, ok = "a finite number > 0", ok and value > 0
    elif non_negative:
        requirement, ok = "a finite number >= 0", ok and value >= 0
    elif open_unit:
        requirement, ok = "a number in the open interval (0, 1)", ok and 0 < value < 1
    else:
        requirement = "a finite number"
    if not ok:
        raise invalid(name, requirement, value, error)
    return float(value)


def check_choice(name: str, value, choices: Iterable[str], error: type[KpcaError] = ParameterError) -> str:
    """One of `choices`."""
    choices = list(choices)
    if value not in choices:
        raise invalid(name, f"one of {', '.join(choices)}", value, error)
    return value


def check_bool(name: str, value, error: type[KpcaError] = ParameterError) -> bool:
    """True or False (numpy booleans included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise invalid(name, "True or False", value, error)
    return bool(value)


def check_array(
    name: str,
    value,
    shape: tuple,
    kinds: str = "f",
    finite: bool = True,
    error: type[KpcaError] = ParameterError,
) -> np.ndarray:
    """An ndarray of `shape` (None entries match any length) whose dtype kind is in `kinds`."""
    array = np.asarray(value)
    wanted = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    if array.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, array.shape)):
        raise error(f"{name} must have shape {wanted}. Got shape {array.shape} instead.")
    if array.dtype.kind not in kinds:
        names = {"f": "floats", "i": "integers", "u": "unsigned integers", "U": "strings", "b": "booleans"}
        raise error(f"{name} must hold {' or '.join(names[k] for k in kinds)}. Got dtype {array.dtype} instead.")
    if finite and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise error(f"{name} must be finite. Got NaN or infinite values instead.")
    return array


def bit_depth(dtype) -> int | None:
    """8 or 16 for 8- and 16-bit frames (images); None for any other values."""
    dtype = np.dtype(dtype)
    return 8 * dtype.itemsize if dtype in (np.uint8, np.uint16) else None


def depth_name(dtype) -> str:
    """``8-bit`` or ``16-bit``: a frame's depth as messages say it."""
    return f"{bit_depth(dtype)}-bit"


def other_bit_depth(dtype, reference) -> bool:
    """Whether `dtype` and `reference` are images of two bit depths (8 and 16), which one model
    never mixes: a 16-bit frame among 8-bit ones was scaled into the fit but not into encode."""
    depths = bit_depth(dtype), bit_depth(reference)
    return None not in depths and depths[0] != depths[1]


def frame_size(shape) -> str:
    """A frame's size as the user writes it: ``320x180 pixels`` (width x height), ``320x180
    RGB pixels`` (colour), ``3 values``."""
    shape = tuple(int(v) for v in shape)
    if len(shape) == 2:
        return f"{shape[1]}x{shape[0]} pixels"
    if len(shape) == 3 and shape[2] == 3:
        return f"{shape[1]}x{shape[0]} RGB pixels"
    return " x ".join(str(v) for v in shape) + " values" if shape else "no values"


def percent(fraction: float) -> str:
    """`fraction` as a percentage with one decimal, or as many more as it takes to read as
    neither 0% nor 100% when it is neither: 40 values of 307,200 are 0.01%, the rest 99.99%."""
    value = 100.0 * float(fraction)
    for decimals in range(1, 10):
        text = f"{value:.{decimals}f}"
        if not (0.0 < value < 100.0) or float(text) not in (0.0, 100.0):
            return f"{text}%"
    return f"{value:.15g}%"
