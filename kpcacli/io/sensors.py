"""Sensor files: where a frame is read, one sensor a row, as CSV.

The header names the columns: ``index`` (the flat index into the frame vector: row-major
pixels, ``(row * width + col) * 3 + channel`` in colour, or a point's feature), then for frames
``row,col`` (and ``channel`` in colour) so that a person can read them. ``kpca sensors`` writes
them; ``kpca reconstruct --sensors`` reads them, its readings' columns in the file's order. A
file written by hand may give ``row,col`` (and ``channel``) without ``index``.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from ..utils.atomic import atomic_file
from ..utils.errors import InputError
from .ownership import SOFTWARE

COORDINATES = ("row", "col", "channel")


def read_sensors(source: str, frame_shape: tuple[int, ...]) -> np.ndarray:
    """The flat indices (P,) a sensor file lists, in order, for frames of `frame_shape`
    (:func:`kpcacli.model.validation.check_sensors` checks them against a model)."""
    path = Path(source)
    if not path.is_file():
        raise InputError(f"sensor file '{source}' does not exist" if not path.exists() else f"'{source}' is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"'{source}' is not a CSV text file of sensors") from None
    rows = [row for row in csv.reader(line for line in io.StringIO(text) if not line.startswith("#")) if row]
    if not rows:
        raise InputError(f"'{source}' lists no sensors")
    header = [name.strip().lower() for name in rows[0]]
    wanted = ["index"] if "index" in header else [name for name in COORDINATES[: len(frame_shape)]]
    missing = [name for name in wanted if name not in header]
    if missing or len(frame_shape) == 1 and "index" not in header:
        raise InputError(
            f"'{source}' has no column {(missing or ['index'])[0]!r}: its first line must name the columns "
            "(index, or row,col for frames)"
        )
    columns = [header.index(name) for name in wanted]
    values = []
    for number, row in enumerate(rows[1:], start=2):
        try:
            values.append([int(row[column].strip()) for column in columns])
        except (ValueError, IndexError):
            raise InputError(f"'{source}' line {number} is not a sensor: {','.join(row)!r}") from None
    if not values:
        raise InputError(f"'{source}' lists no sensors (a header and no rows)")
    values = np.array(values, dtype=np.int64)
    if wanted == ["index"]:
        return values[:, 0]
    for axis, (name, size) in enumerate(zip(wanted, frame_shape)):
        bad = np.flatnonzero((values[:, axis] < 0) | (values[:, axis] >= size))
        if len(bad):
            raise InputError(
                f"'{source}' line {bad[0] + 2}: {name} {values[bad[0], axis]} is outside the frame (0 to {size - 1})"
            )
    return np.ravel_multi_index(tuple(values.T), frame_shape)  # what write_sensors unravels


def write_sensors(target: str | None, indices: np.ndarray, frame_shape: tuple[int, ...]) -> None:
    """Write the sensors at flat `indices` as a sensor file (atomically; None or ``-``: to
    standard output), with their row and column in frames."""
    names = ["index", *COORDINATES[: len(frame_shape)]] if len(frame_shape) > 1 else ["index"]
    lines = [f"# {SOFTWARE}: sensors, one a row", ",".join(names)]
    for index in np.asarray(indices, dtype=np.int64):
        if len(frame_shape) == 1:
            lines.append(str(index))
        else:
            coordinates = np.unravel_index(index, frame_shape)
            lines.append(",".join(str(int(v)) for v in (index, *coordinates)))
    text = ("\n".join(lines) + "\n").encode()
    if target in (None, "-"):
        sys.stdout.buffer.write(text)
        sys.stdout.buffer.flush()
        return
    with atomic_file(target) as out:
        out.write(text)
