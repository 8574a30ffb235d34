"""What kpca wrote, and so may replace: an output replaces an existing file only when kpca
wrote it, unless ``--force`` (as ffmpeg without ``-y``). The one place that decides.

Every output carries a mark naming kpca (:data:`SOFTWARE`):

============================  =========================================================
output                        mark
============================  =========================================================
model (.npz, a Zarr zip)      its members (format 1's ``kernel.npy``, format 2's groups)
codes and rows as text        a first line ``# kpca ...`` (the codes' header names the
                              model: :func:`kpcacli.io.codes.codes_header`)
codes and rows as CSV         a first row naming the columns ``z0,z1,…`` (codes) or
                              ``x0,x1,…`` (samples), then rows of as many numbers: pandas
                              reads the names as its header (no model is named)
sensor files (CSV)            none (a plain CSV's first line names its columns): kpca's
                              header and indices that agree with their rows and columns
                              (:func:`kpcacli.io.sensors.is_sensor_file`)
codes and rows as .npy        the same words as a comment after the header's dictionary
                              (numpy reads the header with ``ast.literal_eval``, which
                              drops comments: every numpy reads the file as before)
PNG                           a ``Software`` text chunk
JPEG, WebP, TIFF              the Exif ``Software`` tag
MP4, MOV, AVI, MKV, WebM      the container's ``comment`` tag
GIF                           a comment extension before the first frame
folder of frames              every file in it is an image kpca wrote
============================  =========================================================

BMP and the netpbm formats have no place for a mark: kpca never replaces one without
``--force``.
"""

from __future__ import annotations

import io
import os
import re
import struct
import zipfile
from collections.abc import Iterable
from pathlib import Path

import numpy as np
from PIL import Image

from ..utils.errors import KpcaError, ParameterError, param
from ..utils.version import __version__
from .readers import MATRIX_EXTENSIONS, NPY_MAGIC, VIDEO_EXTENSIONS, is_number
from .sensors import HEADERS as SENSOR_HEADERS
from .sensors import is_sensor_file
from .sources import expand_sources

SOFTWARE = f"kpca {__version__}"
EXIF_SOFTWARE = 0x0131  # the Exif (and TIFF) tag naming the program that wrote the image
NPY_COMMENT = re.compile(r"\}\s*#\s*(kpca[^\n]*?)\s*$")
OUTPUT_KINDS = {"model": "a model", "rows": "codes or rows", "frames": "frames", "sensors": "a sensor file"}
SENSOR_FILE_LIMIT = 64 << 20  # larger text files are read no further to tell whether they are sensor files
CSV_COLUMNS = ("z", "x")  # the names of a CSV's columns: codes z0, z1, …; samples x0, x1, …


def is_marked(text: str | bytes | None) -> bool:
    """Whether a mark read from a file names kpca."""
    if isinstance(text, bytes):
        text = text.decode("latin-1")
    return isinstance(text, str) and text.strip().startswith("kpca")


# -- writing the marks --------------------------------------------------------------------
def save_npy(out, rows: np.ndarray, mark: str) -> None:
    """Write `rows` to the open binary file `out` in numpy's format 1.0, with `mark` (one line
    of ASCII) as a comment after the header's dictionary, the header padded to 64 bytes as
    numpy pads it."""
    rows = np.ascontiguousarray(rows)
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, np.lib.format.header_data_from_array_1_0(rows))
    prelude = buffer.getvalue()
    text = prelude[10:].decode("latin-1").rstrip() + f" # {mark}"
    text += " " * (-(10 + len(text) + 1) % 64) + "\n"
    out.write(prelude[:8] + struct.pack("<H", len(text)) + text.encode("latin-1"))
    out.write(rows.data)


def npy_mark(data: bytes) -> str | None:
    """The kpca mark in the header of a .npy file starting with `data`, or None."""
    if not data.startswith(NPY_MAGIC) or len(data) < 12:
        return None
    if data[6] == 1:
        size, start = struct.unpack("<H", data[8:10])[0], 10
    else:
        size, start = struct.unpack("<I", data[8:12])[0], 12
    match = NPY_COMMENT.search(data[start : start + size].decode("latin-1"))
    return match.group(1) if match else None


def image_save_options(format: str) -> dict:
    """Pillow's save options for an image kpca writes as `format` (``"PNG"``, ``"JPEG"``, ...):
    the mark that names it kpca's (none for formats without metadata), and PNG's compression."""
    if format == "PNG":
        from PIL.PngImagePlugin import PngInfo

        info = PngInfo()
        info.add_text("Software", SOFTWARE)
        # zlib level 1, not Pillow's 6: a quarter of the time for files a fifth larger, so a
        # folder of decoded frames is written at video speed.
        return {"pnginfo": info, "compress_level": 1}
    if format in ("JPEG", "WEBP", "TIFF", "MPO"):
        exif = Image.Exif()
        exif[EXIF_SOFTWARE] = SOFTWARE
        return {"exif": exif}
    return {}


def mark_gif(path: str | os.PathLike) -> None:
    """Insert a comment extension naming kpca into the GIF at `path`, after its header and
    global colour table (FFmpeg's GIF muxer writes no metadata)."""
    path = Path(path)
    data = path.read_bytes()
    packed = data[10]
    start = 13 + (3 * 2 ** ((packed & 7) + 1) if packed & 0x80 else 0)
    comment = SOFTWARE.encode("ascii")
    block = b"\x21\xfe" + bytes([len(comment)]) + comment + b"\x00"
    path.write_bytes(data[:start] + block + data[start:])


# -- reading them ---------------------------------------------------------------------------
def inspect(path: str | os.PathLike) -> tuple[str, str | None]:
    """What an existing `path` holds, as a user would name it (``a kpca model``, ``a PNG
    image``, ``a .npy array``, ``a video``, ``a text file``, ``a folder``, ...), and what kpca
    wrote there: ``"model"``, ``"rows"`` (codes or rows), ``"frames"`` (an image or a video),
    ``"folder"`` (of images kpca wrote, or empty), or None when kpca did not write it (or
    cannot tell: a BMP)."""
    path = Path(path)
    if path.is_dir():
        return "a folder", ("folder" if all(written_kind(entry) == "frames" for entry in path.iterdir()) else None)
    if not path.is_file():
        return "a device or special file", None  # /dev/null, a pipe: never kpca's, never replaced
    with open(path, "rb") as handle:
        head = handle.read(65536)
    if head.startswith(b"PK\x03\x04"):
        return ("a kpca model", "model") if _is_model_archive(path) else ("a zip archive", None)
    if head.startswith(NPY_MAGIC):
        return "a .npy array", ("rows" if is_marked(npy_mark(head)) else None)
    if _is_sensor_file(path, head):
        return "a sensor file", "sensors"
    if head.startswith(b"# kpca"):
        return "a text file", "rows"
    if _is_rows_csv(head):
        return "a CSV file", "rows"
    image_format, mark = _image_mark(path)
    if image_format is not None and is_marked(mark):
        return f"a {image_format} image", "frames"
    if path.suffix.lower() in VIDEO_EXTENSIONS:
        what = f"a {image_format} image" if image_format is not None else "a video"
        return what, ("frames" if is_marked(_video_mark(path)) else None)
    if image_format is not None:
        return f"a {image_format} image", None
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "a file", None
    return "a text file", None


def _is_sensor_file(path: Path, head: bytes) -> bool:
    """:func:`kpcacli.io.sensors.is_sensor_file` of `path`, read whole only when its first line
    (in `head`) is a sensor file's header: a codes file's ``# kpca`` line says what it is."""
    first = head.split(b"\n", 1)[0].rstrip(b"\r").decode("latin-1")
    if first.startswith("# kpca"):
        return ": sensors" in first
    if first not in SENSOR_HEADERS or path.stat().st_size > SENSOR_FILE_LIMIT:
        return False
    try:
        return is_sensor_file(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False


def csv_names(column: str, count: int) -> str:
    """The first row of a CSV of codes or samples kpca writes (:func:`kpcacli.io.codes.write_matrix`),
    its mark: its `count` columns named `column` (one of ``CSV_COLUMNS``) and a number."""
    return ",".join(f"{column}{index}" for index in range(count))


def _is_rows_csv(head: bytes) -> bool:
    """Whether a file starting with `head` is codes or samples as kpca writes CSV: a first row
    of :func:`csv_names`, then a row of as many numbers."""
    lines = head.split(b"\n", 2)
    if len(lines) < 2:
        return False
    first, values = (line.rstrip(b"\r").decode("latin-1") for line in lines[:2])
    count = first.count(",") + 1
    if first[:1] not in CSV_COLUMNS or first != csv_names(first[:1], count):
        return False
    values = values.split(",")
    return len(values) == count and all(is_number(value) for value in values)


def written_kind(path: str | os.PathLike) -> str | None:
    """What kpca wrote at `path` (:func:`inspect`), or None."""
    return inspect(path)[1]


def _is_model_archive(path: Path) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    # Format 1 (numpy's .npz) or format 2 (a Zarr v3 group in a zip).
    return "kernel.npy" in names or {"zarr.json", "eigenvalues/zarr.json"} <= names


def _image_mark(path: Path) -> tuple[str | None, str | bytes | None]:
    """The image's format and kpca's mark in it, if Pillow can open it."""
    try:
        with Image.open(path) as image:
            if image.format == "PNG":
                return image.format, image.info.get("Software")
            if image.format == "GIF":
                return image.format, image.info.get("comment")
            return image.format, image.getexif().get(EXIF_SOFTWARE)
    except (OSError, SyntaxError, ValueError):
        return None, None


def _video_mark(path: Path) -> str | None:
    import av  # lazy: loading PyAV costs start-up time

    try:
        with av.open(str(path)) as container:
            tags = {key.lower(): value for key, value in container.metadata.items()}
    except Exception:  # PyAV raises its own error types; an unreadable file is no kpca video
        return None
    return tags.get("comment")


# -- the rule -------------------------------------------------------------------------------
def output_kind(target: str | os.PathLike | None) -> str:
    """What a frames output (``-o`` of decode, denoise) writes at `target`: ``"rows"`` for a
    .npy, .txt or .csv name (point models), else ``"frames"``."""
    return "rows" if target is not None and Path(str(target)).suffix.lower() in MATRIX_EXTENSIONS else "frames"


def check_rows_name(target: str | os.PathLike | None) -> None:
    """Refuse a rows output (codes, points, standard deviations) whose name says no format kpca
    writes rows in: .npy, .txt, .csv, no extension (text), or ``-`` for standard output."""
    if target in (None, "-"):
        return
    suffix = Path(str(target)).suffix.lower()
    if suffix and suffix not in MATRIX_EXTENSIONS:
        raise KpcaError(f"cannot write rows to '{target}': use a .npy, .txt or .csv file or - for standard output")


def check_replaceable(target: str | os.PathLike | None, kind: str, option: str, force: bool) -> None:
    """Refuse (a usage error) an existing `target` that kpca did not write as `kind` (``model``,
    ``rows``, ``frames`` or ``sensors``), unless `force`. A folder target of frames may hold only images kpca
    wrote (they are replaced by this run's, never mixed with them)."""
    if target in (None, "-"):
        return
    path = Path(target)
    if path.exists() and not path.is_dir() and not path.is_file():
        # Outputs are renamed into place: that would replace the device node itself, --force or not.
        raise ParameterError(
            f"'{target}' is {inspect(path)[0]}; {option} writes regular files: choose another {option}"
        )
    if force or not path.exists():
        return
    if path.is_dir():
        if kind != "frames":
            return  # a directory model store, or a folder error reported by the writer
        strangers = [entry for entry in sorted(path.iterdir()) if written_kind(entry) != "frames"]
        if strangers:
            raise ParameterError(
                f"folder '{target}' holds '{strangers[0].name}', which kpca did not write; {option} would put "
                f"frames beside it: choose another {option} or add {param('force')}"
            )
        return
    what, written = inspect(path)
    if written == kind:
        return
    whose = "written by kpca as another kind" if written is not None else "that kpca did not write"
    raise ParameterError(
        f"'{target}' is {what} {whose}; {option} would replace it with {OUTPUT_KINDS[kind]}: "
        f"choose another {option} or add {param('force')}"
    )


def check_not_inputs(outputs: Iterable[str | None], inputs: Iterable[str], force: bool) -> None:
    """Refuse (a usage error) an output that is one of the inputs or the folder holding one,
    unless `force`."""
    if force:
        return
    try:
        given = [path for path in inputs if path is not None]  # an optional input not given
        sources = [Path(path).resolve() for path in expand_sources(given) if path != "-"]
    except KpcaError:
        return  # the inputs' own error is reported when they are read
    for output in outputs:
        if output in (None, "-"):
            continue
        target = Path(output).resolve()
        for source in sources:
            if target == source or (target.is_dir() and source.parent == target):
                raise ParameterError(
                    f"output '{output}' would overwrite the input '{source}'; choose another output or add "
                    f"{param('force')}"
                )


def check_outputs(
    outputs: Iterable[tuple[str | os.PathLike | None, str, str]], inputs: Iterable[str], force: bool
) -> None:
    """Every check of a command's outputs before any work: none is an input, none is named like
    a negative number (``--std -1``: a value that missed its option), a rows output names a
    format for rows, and each replaces only what kpca wrote as its kind. `outputs` holds
    (target, kind, option) triples."""
    outputs = list(outputs)
    check_not_inputs([str(target) if target is not None else None for target, _, _ in outputs], inputs, force)
    for target, kind, option in outputs:
        if target is not None and str(target).startswith("-") and is_number(str(target)):
            raise ParameterError(
                f"{option} {target} names a file after a negative number, which is likely a value meant for another "
                f"option; give the file another name (./{target} if it is meant)"
            )
        if kind == "rows":
            check_rows_name(target)
        check_replaceable(target, kind, option, force)
