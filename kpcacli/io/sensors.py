"""Sensor files: where a frame is read, one sensor a row, as CSV.

A plain CSV file, as pandas' ``read_csv`` and numpy's ``genfromtxt(names=True,
delimiter=",")`` open it: the first line names the columns, ``index`` (the flat index into the
frame vector: row-major pixels, ``(row * width + col) * 3 + channel`` in colour, or a point's
feature), then for frames ``row,col`` (and ``channel`` in colour) so that a person can read
them; one sensor a line after it. ``kpca sensors`` writes them; ``kpca reconstruct --sensors``
reads them, its readings' columns in the file's order. A file written by hand may give
``row,col`` (and ``channel``) without ``index``; lines starting with ``#`` are skipped (files of
kpca before 2026-11-26 began with one).

Having no room for a mark of kpca's (:mod:`kpcacli.io.ownership`), a sensor file is known as
kpca's by its shape alone (:func:`is_sensor_file`): kpca's header, and indices that agree with
their rows and columns for one frame width.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from ..utils.atomic import atomic_file
from ..utils.errors import InputError

COORDINATES = ("row", "col", "channel")
HEADERS = ("index", "index,row,col", "index,row,col,channel")  # points, grey frames, colour frames


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
    lines = [",".join(names)]
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


def is_sensor_file(text: str) -> bool:
    """Whether `text` is a sensor file as :func:`write_sensors` writes them: one of kpca's
    headers, then lines of as many non-negative integers, and for frames indices that are
    their rows and columns (and channels) unravelled for one frame width. (Files of kpca
    before 2026-11-26 began with a line ``# kpca ...: sensors``.)"""
    lines = text.splitlines()
    if lines and lines[0].startswith("# kpca") and ": sensors" in lines[0]:
        return True
    if not lines or lines[0] not in HEADERS or len(lines) < 2:
        return False
    try:
        values = np.array([[int(field) for field in line.split(",")] for line in lines[1:]], dtype=np.int64)
    except ValueError:
        return False
    columns = lines[0].count(",") + 1
    if values.ndim != 2 or values.shape[1] != columns or np.any(values < 0):
        return False
    if columns == 1:
        return True
    index, row, col = values[:, 0], values[:, 1], values[:, 2]
    channels = 3 if columns == 4 else 1
    if channels == 3:
        if np.any(values[:, 3] > 2) or np.any((index - values[:, 3]) % 3):
            return False
        index = (index - values[:, 3]) // 3
    width = col.max() + 1  # the narrowest width the columns allow; rows beyond the first fix it
    off_first = row > 0
    if off_first.any():
        widths = (index[off_first] - col[off_first]) / row[off_first]
        width = widths[0]
        if not np.all(widths == width) or width != int(width) or width <= col.max():
            return False
    return bool(np.all(index == row * int(width) + col))
