"""The parameters ``kpca fit --params`` reads: one row per frame the request chooses, checked
against the frames before they are read, and the rows of the frames the model keeps."""

from __future__ import annotations

import numpy as np

from ..io.parametertable import read_parameter_table
from ..io.request import FrameRequest
from ..io.sources import count_frames
from ..model.parameters import check_parameter_values
from ..utils.errors import InputError, ParameterError, param


def read_fit_parameters(source: str, request: FrameRequest, stdin=None) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """The table ``--params`` names, checked against the frames `request` chooses before they
    are read (their count from headers; standard input's once read: :func:`kept_rows`)."""
    if source == "-" and request.reads_stdin:
        raise ParameterError(f"the frames and {param('params')} cannot both come from standard input")
    values, names = read_parameter_table(source, stdin=stdin)
    if not request.reads_stdin:
        check_parameter_values(values, names, request.count())
    return values, names


def kept_rows(values: np.ndarray, names, request: FrameRequest, indices, chosen: int, total: int | None) -> np.ndarray:
    """The rows of `values` (one per frame `request` chose, `chosen` of them) for the frames a
    model keeps, numbered `indices` among the sources' `total` frames (all of them, or the
    landmarks)."""
    check_parameter_values(values, names, chosen)
    if len(indices) == chosen:
        return values  # every chosen frame, in order
    if request.selection is None:
        return values[np.asarray(indices)]
    if total is None:
        if request.reads_stdin:
            raise InputError(
                f"{param('params')} with landmarks of frames chosen from standard input: give the frames as files"
            )
        total = count_frames(request.files())
    numbers = request.selection.indices(total)
    return values[[numbers.index(number) for number in indices]]
