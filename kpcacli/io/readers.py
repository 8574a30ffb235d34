"""One source's frames, by kind: image files (Pillow, multi-frame TIFFs and GIFs included),
videos (PyAV, :mod:`kpcacli.io.video`), ``.npy`` and text matrices, and standard input's bytes.

Dtype rule (asserted in the tests): 8-bit images give ``uint8`` frames, 16-bit images
``uint16``, floating-point images ``float32``; point data is ``float64``. Colour images are converted
to grey with ITU-R 601 luma exactly as Pillow's ``L`` mode does; alpha is dropped. Video frames
are the decoder's own luma plane (:mod:`kpcacli.io.video`).

Which sources, in which order, and which of their frames: :mod:`kpcacli.io.sources`.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageSequence, UnidentifiedImageError

from ..utils.cores import decoder_threads
from ..utils.errors import DAMAGED_FILE_ERRORS, InputError, param
from .video import FrameTable, decode_range, grey_frames

IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm", ".pbm"}
VIDEO_EXTENSIONS = {".mp4", ".avi", ".mov", ".mkv", ".webm", ".gif"}  # what kpca reads and writes
# Containers FFmpeg reads that kpca does not write (MPEG program and transport streams, Ogg,
# Flash, Windows Media, phone clips), and raw streams as cameras record them (H.264 and H.265
# without a container, as a Raspberry Pi's; Motion JPEG; YUV4MPEG): read as videos, never
# taken for images.
READ_ONLY_VIDEO_EXTENSIONS = {
    ".mpeg", ".mpg", ".m2v", ".m4v", ".ts", ".mts", ".m2ts", ".ogv", ".flv", ".wmv", ".3gp",
    ".h264", ".264", ".h265", ".265", ".hevc", ".mjpeg", ".mjpg", ".y4m",
}  # fmt: skip
MATRIX_EXTENSIONS = {".npy", ".csv", ".txt"}
NPY_MAGIC = b"\x93NUMPY"
DEFAULT_FPS = 25.0  # for video written from images, which carry no frame rate


@dataclass
class Frame:
    """One sample: a grey image (2-D array) or a point (1-D array), and where it came from."""

    name: str
    pixels: np.ndarray
    index: int | None = None  # its number among all the sources' frames (what --frames counts)


@dataclass(frozen=True)
class Conversion:
    """How decoded pixels become a frame: grey (ITU-R 601 luma, as Pillow's ``L``) or RGB, at
    the source's size or resized to `size` (width, height) with Lanczos."""

    size: tuple[int, int] | None = None
    colour: bool = False

    def image(self, image: Image.Image) -> np.ndarray:
        """One Pillow image as a frame."""
        return pil_to_rgb(image, self.size) if self.colour else pil_to_grey(image, self.size)

    def pixels(self, pixels: np.ndarray) -> np.ndarray:
        """An 8-bit grey or RGB array already decoded (a video frame), resized if asked."""
        return pixels if self.size is None else self.image(Image.fromarray(pixels))


def is_video_file(source: str) -> bool:
    """A video decoded by PyAV (GIFs are videos to the user but are read by Pillow)."""
    suffix = Path(source).suffix.lower()
    return source != "-" and suffix in VIDEO_EXTENSIONS | READ_ONLY_VIDEO_EXTENSIONS and suffix != ".gif"


def is_image_file(source: str) -> bool:
    return source != "-" and Path(source).suffix.lower() in IMAGE_EXTENSIONS


def frames_from_path(source: str, conversion) -> Iterator[Frame]:
    path = Path(source)
    if path.is_dir():
        raise InputError(f"'{source}' is a folder inside a folder; give the files or the inner folder")
    if path.stat().st_size == 0:
        raise InputError(f"'{source}' is empty (0 bytes)")
    suffix = path.suffix.lower()
    if suffix in MATRIX_EXTENSIONS:
        yield from _frames_from_matrix(source, conversion)
    elif suffix in VIDEO_EXTENSIONS | READ_ONLY_VIDEO_EXTENSIONS:
        yield from _frames_from_video(source, conversion)
    else:
        yield from _frames_from_image_file(source, conversion)


def frames_from_bytes(data: bytes, name: str, conversion) -> Iterator[Frame]:
    """Frames from standard input: a ``.npy`` array, an image, or a text matrix."""
    if not data:
        raise InputError("standard input is empty")
    if data.startswith(NPY_MAGIC):
        yield from _frames_from_array(load_npy(io.BytesIO(data), name), name, conversion.colour)
        return
    try:
        image = Image.open(io.BytesIO(data))
    except UnidentifiedImageError:
        pass
    else:
        yield from _frames_from_pil(image, name, conversion)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{name} is neither an image, a .npy array nor a text matrix") from None
    yield from _frames_from_array(load_text_matrix(text, name), name)


def load_npy(file, name: str) -> np.ndarray:
    try:
        array = np.load(file, allow_pickle=False, mmap_mode="r" if isinstance(file, str) else None)
    except DAMAGED_FILE_ERRORS as error:
        raise InputError(f"{name} is not a readable .npy array ({type(error).__name__}: {error})") from None
    if not isinstance(array, np.ndarray):
        getattr(array, "close", lambda: None)()  # an .npz archive under a .npy name
        raise InputError(f"{name} is not a single .npy array")
    return array


def load_text_matrix(text: str, name: str, names_row: bool = True) -> np.ndarray:
    """A numeric matrix from text (comma- or whitespace-separated, ``#`` comment lines and,
    unless not `names_row` (the caller took it), a first row of column names skipped:
    :func:`column_names`); empty text is an error, and so is a value that is not a number or
    a row of another length (the message counts rows and columns from 0, and gives the
    file's line)."""
    if names_row:
        text = column_names(text)[0]
    data = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    delimiter = "," if any("," in line for line in data) else None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "input contained no data": reported below instead
            array = np.loadtxt(io.StringIO(text), delimiter=delimiter, ndmin=2, dtype=np.float64)
    except ValueError as error:
        raise InputError(f"{name} is not a numeric matrix ({_text_problem(text, delimiter) or error})") from None
    if array.size == 0:
        raise InputError(f"{name} holds no data")
    return array


def column_names(text: str, numbered: bool = False) -> tuple[str, tuple[str, ...] | None]:
    """`text` with its first row of column names turned into a comment, and the names; the
    text as it is and None when its first row holds a number. A CSV that pandas, a spreadsheet or
    kpca wrote names its columns (``z0,z1,…``). With `numbered`, a first row of the columns'
    numbers ``0,1,…`` (two or more) is names too: pandas' for a frame of unnamed columns
    (``pd.DataFrame(codes).to_csv(index=False)``), for codes, which are never those integers."""
    lines, content = text.splitlines(), data_lines(text)
    if not content:
        return text, None
    first = lines[content[0]]
    fields = [field.strip() for field in first.split("," if "," in first else None)]
    pandas_numbers = numbered and len(fields) >= 2 and fields == [str(index) for index in range(len(fields))]
    if any(is_number(field) for field in fields) and not pandas_numbers:  # numbers (or a typo): data
        return text, None
    return "\n".join(lines[: content[0]] + ["#" + first] + lines[content[0] + 1 :]), tuple(fields)


def data_lines(text: str) -> list[int]:
    """The numbers of the lines of `text` that hold data: neither blank nor ``#`` comments."""
    return [i for i, line in enumerate(text.splitlines()) if line.strip() and not line.lstrip().startswith("#")]


def is_number(text: str) -> bool:
    """Whether `text` reads as a number (``float``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _text_problem(text: str, delimiter: str | None) -> str | None:
    """Where a text matrix goes wrong: its row and column counted from 0, as every number kpca
    prints is (a frame, a row, a sensor), and the file's line counted from 1, as editors count."""
    width, row = None, -1
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row += 1
        fields = [field.strip() for field in line.split(delimiter)]
        for column, field in enumerate(fields):
            try:
                float(field)
            except ValueError:
                return f"the value in row {row}, column {column} is {field!r}, not a number: line {line_number}"
        if width is None:
            width = len(fields)
        elif len(fields) != width:
            return f"row {row} has {len(fields)} values, the rows before it {width}: line {line_number}"
    return None


def _frames_from_matrix(source: str, conversion: Conversion) -> Iterator[Frame]:
    if source.lower().endswith(".npy"):
        array = load_npy(source, f"'{source}'")
    else:
        with open(source, encoding="utf-8", errors="replace") as handle:
            array = load_text_matrix(handle.read(), f"'{source}'")
    yield from _frames_from_array(array, source, conversion.colour)


def _frames_from_array(array: np.ndarray, name: str, colour: bool = False) -> Iterator[Frame]:
    """Rows of a 1-D/2-D array are points; a 3-D array is a stack of grey frames, a 4-D one
    (last axis 3) of colour frames (read only for a colour model)."""
    if array.dtype.kind not in "uif" or array.dtype.itemsize > 8:
        raise InputError(f"{name} holds {array.dtype} values; expected a numeric array")
    if array.size == 0:
        raise InputError(f"{name} holds no data")
    if array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim == 2:
        points = np.asarray(array, dtype=np.float64)
        if not np.all(np.isfinite(points)):
            bad = int(np.argwhere(~np.isfinite(points))[0, 0])
            raise InputError(f"{name} has a NaN or infinite value in row {bad}")
        for i, row in enumerate(points):
            yield Frame(f"{name}[{i}]", row)
    elif array.ndim == 3 or (array.ndim == 4 and array.shape[3] == 3):
        if array.ndim == 4 and not colour:
            raise InputError(
                f"{name} holds colour frames (n, height, width, 3); fit a model of them with {param('colour')}"
            )
        for i in range(array.shape[0]):
            frame = np.asarray(array[i])
            if frame.dtype.kind == "f" and not np.all(np.isfinite(frame)):
                raise InputError(f"{name} has a NaN or infinite value in frame {i}")
            if frame.dtype not in (np.uint8, np.uint16):
                frame = frame.astype(np.float32)
            if colour and frame.ndim == 2:  # a grey frame for a colour model: grey in every channel
                frame = np.repeat(frame[..., np.newaxis], 3, axis=2)
            yield Frame(f"{name}[{i}]", frame)
    else:
        raise InputError(
            f"{name} has {array.ndim} dimensions; expected rows of points (2-D), grey frames (3-D) or colour "
            "frames (4-D, 3 channels)"
        )


def _frames_from_image_file(source: str, conversion) -> Iterator[Frame]:
    try:
        image = Image.open(source)
    except UnidentifiedImageError:
        raise InputError(f"'{source}' is not an image Pillow can read") from None
    except OSError as error:
        raise InputError(f"cannot open '{source}': {error.strerror or error}") from None
    with image:
        yield from _frames_from_pil(image, source, conversion)


def _frames_from_pil(image: Image.Image, name: str, conversion) -> Iterator[Frame]:
    """Every frame of a (possibly multi-frame) Pillow image, as grey arrays."""
    n_frames = getattr(image, "n_frames", 1)
    try:
        for index, page in enumerate(ImageSequence.Iterator(image)):
            label = name if n_frames == 1 else f"{name}[{index}]"
            yield Frame(label, conversion.image(page))
    except (OSError, SyntaxError, ValueError) as error:
        raise InputError(f"'{name}' is damaged or truncated ({error})") from None


def pil_to_grey(image: Image.Image, resize: tuple[int, int] | None = None) -> np.ndarray:
    """Convert one Pillow image to a grey array following the dtype rule of this module."""
    image.load()
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        # 16-bit (or 32-bit integer) grey: keep the full range as uint16.
        array = np.asarray(image, dtype=np.int64)
        if resize is not None:
            array = _resize_float(array.astype(np.float32), resize)
        return np.clip(np.rint(array), 0, 65535).astype(np.uint16)
    if mode == "F":
        array = np.asarray(image, dtype=np.float32)
        return _resize_float(array, resize) if resize is not None else array
    if mode != "L":
        if mode in ("RGBA", "LA", "PA") or (mode == "P" and "transparency" in image.info):
            image = image.convert("RGBA").convert("RGB")
        image = image.convert("L")
    if resize is not None and image.size != resize:
        image = image.resize(resize, Image.Resampling.LANCZOS)
    return np.asarray(image, dtype=np.uint8)


def pil_to_rgb(image: Image.Image, resize: tuple[int, int] | None = None) -> np.ndarray:
    """One Pillow image as an RGB ``uint8`` array, (height, width, 3): grey images repeat their
    value in the three channels, 16-bit ones keep their brightness, alpha is dropped."""
    image.load()
    if image.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        grey = pil_to_grey(image, resize)
        if grey.dtype == np.uint16:
            grey = (grey // 257).astype(np.uint8)
        elif grey.dtype != np.uint8:
            grey = np.clip(np.rint(grey), 0, 255).astype(np.uint8)
        return np.repeat(grey[..., np.newaxis], 3, axis=2)
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        image = image.convert("RGBA")
    image = image.convert("RGB")
    if resize is not None and image.size != resize:
        image = image.resize(resize, Image.Resampling.LANCZOS)
    return np.asarray(image, dtype=np.uint8)


def _resize_float(array: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    if (array.shape[1], array.shape[0]) == size:
        return array
    return np.asarray(Image.fromarray(array, mode="F").resize(size, Image.Resampling.LANCZOS))


def _frames_from_video(source: str, conversion) -> Iterator[Frame]:
    if source.lower().endswith(".gif"):
        yield from _frames_from_image_file(source, conversion)
        return
    for index, pixels in enumerate(grey_frames(source, threads=decoder_threads(), colour=conversion.colour)):
        yield _video_frame(source, index, pixels, conversion)


def video_range_frames(
    source: str, table: FrameTable, start: int, stop: int, first: int, conversion
) -> Iterator[Frame]:
    """Frames ``start..stop-1`` of the video `source`, numbered as in `table` (a window of its
    frame table: :meth:`kpcacli.io.video.FrameTable.window`), named and resized exactly as
    :func:`iter_frames` gives them; `first` is frame `start`'s index in the whole video."""
    decoded = decode_range(source, table, start, stop, threads=decoder_threads(), colour=conversion.colour)
    for offset, pixels in enumerate(decoded):
        yield _video_frame(source, first + offset, pixels, conversion)


def video_frames_in(source: str, table: FrameTable, first: int, local: range, conversion) -> Iterator[Frame]:
    """The frames `local` (a non-empty increasing range, numbered as in `table`) of the video
    `source`, decoded from the keyframe before the first and not past the last; `first` is
    frame 0 of `table`'s index in the whole video."""
    window = video_range_frames(source, table, local[0], local[-1] + 1, first + local[0], conversion)
    return (frame for position, frame in enumerate(window) if position % local.step == 0)


def _video_frame(source: str, index: int, pixels: np.ndarray, conversion: Conversion) -> Frame:
    return Frame(f"{source}[{index}]", conversion.pixels(pixels))
