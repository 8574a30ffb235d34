"""Parameter tables in: the values a frame was made at (``kpca fit --params``), or the values to
predict frames at (``kpca predict PARAMS``).

A table is text (``.csv`` comma-separated, otherwise whitespace; ``#`` lines are comments)
whose first line may name the columns (``opening,load``), or a ``.npy`` array (n, p) or (n,)
without names; ``-`` reads either from standard input. ``--param name=value`` options give
one row by name.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..utils.errors import InputError, ParameterError, param
from .readers import NPY_MAGIC, column_names, data_lines, is_number, load_npy, load_text_matrix


def read_parameter_table(source: str, stdin: BinaryIO | None = None) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """The rows of the table `source` (a file or ``-``) as an (n, p) array, and the columns'
    names when its first line gives them (None otherwise).

    Raises
    ------
    InputError
        For a missing, empty or unreadable table, or a value that is not a number (the
        message gives its row and column).
    """
    name = "standard input" if source == "-" else f"'{source}'"
    if source == "-":
        data = (stdin if stdin is not None else sys.stdin.buffer).read()
    else:
        path = Path(source)
        if not path.is_file():
            raise InputError(
                f"parameter table '{source}' does not exist" if not path.exists() else f"'{source}' is not a file"
            )
        data = path.read_bytes()
    if not data.strip():
        raise InputError(f"{name} holds no parameters")
    if data.startswith(NPY_MAGIC):
        array = np.asarray(load_npy(io.BytesIO(data), name))
        if array.ndim == 1:
            array = array[:, np.newaxis]
        return array, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name} is neither a text table of parameters nor a .npy array") from None
    return _text_table(text, name)


def _text_table(text: str, name: str) -> tuple[np.ndarray, tuple[str, ...] | None]:
    if not data_lines(text):
        raise InputError(f"{name} holds no parameters")
    text, names = column_names(text)
    if names is not None and not data_lines(text):
        raise InputError(f"{name} names its columns but holds no rows")
    array = load_text_matrix(text, name, names_row=False)
    if names is not None and len(names) != array.shape[1]:
        raise InputError(f"{name} names {len(names)} columns but its rows have {array.shape[1]} values")
    return array, names


def parse_assignments(assignments) -> tuple[np.ndarray, tuple[str, ...]]:
    """``--param name=value`` options as one row (1, p) and its names, in the order given."""
    names, values = [], []
    for assignment in assignments:
        name, equals, value = str(assignment).partition("=")
        if not equals or not name.strip() or not is_number(value.strip()):
            raise ParameterError(
                f"{param('param')} takes name=value with a number (opening=0.25). Got {assignment!r} instead."
            )
        if name.strip() in names:
            raise ParameterError(f"{param('param')} gives {name.strip()} twice")
        names.append(name.strip())
        values.append(float(value))
    return np.asarray([values], dtype=np.float64), tuple(names)
