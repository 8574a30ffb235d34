"""Codes in and out: a matrix of codes (or of point samples) as ``.npy`` or text, from a
file or standard input, and to one; text starts with the fingerprint of the model that wrote
the codes (:func:`codes_header`), so a decode can tell codes of another model.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..utils.atomic import atomic_file
from ..utils.errors import DAMAGED_FILE_ERRORS, InputError
from .ownership import SOFTWARE, check_rows_name, csv_names, npy_mark, save_npy
from .readers import NPY_MAGIC, column_names, load_text_matrix

TEXT_FORMAT = "%.17g"  # float64 survives a text round trip exactly
TEXT_FORMAT_FLOAT32 = "%.9g"  # and float32 with 9 digits
CODES_HEADER = re.compile(r"^#\s*kpca codes of model ([0-9a-f]{16})", re.MULTILINE)
CODES_MARK = re.compile(r"^kpca codes of model ([0-9a-f]{16})")  # the same words in a .npy header
ROWS_HEADER = f"{SOFTWARE}: one row per sample"


# -- codes ------------------------------------------------------------------------------
def codes_header(fingerprint: str, k: int) -> str:
    """The comment line text codes start with: which model wrote them (:func:`read_codes_file`)."""
    return f"kpca codes of model {fingerprint} (k = {k})"


def read_codes_file(source: str, stdin: BinaryIO | None = None) -> tuple[np.ndarray, str | None]:
    """A codes matrix from ``.npy`` or text, from a file or ``-`` (standard input), as (m, k)
    float64, and the fingerprint of the model that wrote them when the file
    carries one (:func:`codes_header`, as text or in a ``.npy`` header).

    Returns
    -------
    codes : (m, k) float64 ndarray
    fingerprint : str or None
    """
    return read_matrix_file(source, stdin, what="codes", row="one row of k values per frame")


def read_matrix_file(
    source: str, stdin: BinaryIO | None = None, what: str = "codes", row: str = "one row of k values per frame"
) -> tuple[np.ndarray, str | None]:
    """A matrix of `what` (codes, readings) as :func:`read_codes_file` reads codes, the errors
    naming `what` and what a `row` holds."""
    if source == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        data = stream.read()
        name = "standard input"
    else:
        path = Path(source)
        if not path.exists():
            raise InputError(f"{what} file '{source}' does not exist")
        if path.is_dir():
            raise InputError(f"'{source}' is a folder; give a {what} file (.npy, .txt or .csv)")
        data = path.read_bytes()
        name = f"'{source}'"
    if not data.strip():
        raise InputError(f"{name} holds no {what} (it is empty)")
    if data.startswith(NPY_MAGIC):
        try:
            codes = np.load(io.BytesIO(data), allow_pickle=False)
        except DAMAGED_FILE_ERRORS as error:
            raise InputError(f"{name} is not a readable .npy array ({error})") from None
        if codes.dtype.kind not in "uif":
            raise InputError(f"{name} holds {codes.dtype} values, not numbers")
        match = CODES_MARK.match(npy_mark(data) or "")
        codes, fingerprint = np.asarray(codes, dtype=np.float64), (match.group(1) if match else None)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(f"{name} is neither a .npy array nor text") from None
        codes = load_text_matrix(column_names(text, numbered=what == "codes")[0], name, names_row=False)
        match = CODES_HEADER.search(text)
        fingerprint = match.group(1) if match else None
    if codes.ndim == 1:
        codes = codes[np.newaxis, :]
    if codes.ndim != 2 or codes.size == 0:
        raise InputError(f"{name} holds no {what}; expected {row}")
    return codes, fingerprint


def write_matrix(
    rows: np.ndarray,
    target: str | None,
    stdout: BinaryIO | None = None,
    delimiter: str | None = None,
    header: str | None = None,
    column: str = "x",
) -> None:
    """Write rows (codes or points) as ``.npy`` or text, or as text to standard output, in
    their own dtype (float32 rows are written as float32, in 9 significant digits as text).

    `delimiter` applies to standard output (default a space); files follow their extension.
    `header` (it starts with "kpca") is a comment line (``# ...``) at the top of text, and a
    comment in a ``.npy`` file's header (:func:`kpcacli.io.ownership.save_npy`); files always get
    one (:data:`ROWS_HEADER` by default), the mark by which a later run may replace them. A CSV
    file starts instead with a row naming its columns, `column` and their number (``z0,z1,…``
    for codes, ``x0,x1,…`` for samples), which pandas and spreadsheets read as the header: it
    marks the file as kpca's (:func:`kpcacli.io.ownership.inspect`), and names no model.
    """
    rows = np.atleast_2d(rows)
    if target in (None, "-"):
        stream = stdout if stdout is not None else sys.stdout.buffer
        stream.write(_text(rows, delimiter or " ", header).encode())
        stream.flush()
        return
    check_rows_name(target)
    header = header if header is not None else ROWS_HEADER
    suffix = Path(target).suffix.lower()
    with atomic_file(target) as out:
        if suffix == ".npy":
            save_npy(out, rows, header)
        elif suffix == ".csv":
            out.write(_text(rows, ",", names=csv_names(column, rows.shape[1])).encode())
        else:
            out.write(_text(rows, " ", header).encode())


def _text(rows: np.ndarray, delimiter: str, header: str | None = None, names: str | None = None) -> str:
    buffer = io.StringIO()
    if header is not None:
        buffer.write(f"# {header}\n")
    if names is not None:
        buffer.write(f"{names}\n")
    fmt = TEXT_FORMAT_FLOAT32 if rows.dtype == np.float32 else TEXT_FORMAT
    np.savetxt(buffer, rows, fmt=fmt, delimiter=delimiter)
    return buffer.getvalue()
