"""Loading frames from every source kind of the command-line contract.

A *source* is a folder of images (natural sort order), an image file, a glob pattern, a video
(mp4, avi, mov, mkv, webm, gif), a multi-frame TIFF, a ``.npy`` / ``.csv`` / ``.txt`` matrix of
row vectors (point data; a 3-D ``.npy`` holds frames), or ``-`` for one image, ``.npy`` or text
matrix on standard input.

Frames are yielded one at a time as :class:`Frame` objects so that callers can stream them into
the on-disk frame store without holding the whole sequence in memory.

Dtype rule (asserted in the tests): 8-bit images give ``uint8`` frames, 16-bit images
``uint16``, floating-point images ``float32``; point data is ``float64``. Colour images are converted
to grey with ITU-R 601 luma exactly as Pillow's ``L`` mode does; alpha is dropped. Video frames
are the decoder's own luma plane (:mod:`kpcacli.io.video`).
"""

from __future__ import annotations

import glob
import io
import os
import re
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image, ImageSequence, UnidentifiedImageError

from ..utils.errors import DAMAGED_FILE_ERRORS, InputError, KpcaError, ParameterError, param
from ..utils.parallel import available_cores, decoder_threads, ordered_map
from .provenance import Provenance
from .video import FrameTable, decode_range, frame_rate, frame_table, grey_frames, header_frame_count

IMAGE_EXTENSIONS = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".pgm", ".ppm", ".pbm"}
VIDEO_EXTENSIONS = {".mp4", ".avi", ".mov", ".mkv", ".webm", ".gif"}
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
class FrameSelection:
    """``--frames``: Python slice syntax over the frames of all the sources in order, 0-based.

    ``5`` is frame 5 alone, ``10:20`` frames 10 to 19, ``::2`` the even frames, ``1::2`` the
    odd ones, ``-10:`` the last ten. Steps are positive: frames are read in order.
    """

    start: int | None
    stop: int | None
    step: int
    single: bool
    text: str

    @classmethod
    def parse(cls, text: str) -> FrameSelection:
        parts = str(text).replace(" ", "").split(":")
        bad = ParameterError(
            f"{param('selection')} takes a frame number or Python slice syntax (5, 10:20, ::2, 1::2, -10:). "
            f"Got {text!r} instead."
        )
        if len(parts) > 3 or not all(re.fullmatch(r"-?\d*", part) and part != "-" for part in parts):
            raise bad
        numbers = [int(part) if part else None for part in parts]
        if len(numbers) == 1:
            if numbers[0] is None:
                raise bad
            return cls(numbers[0], None, 1, True, str(text))
        step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
        if step <= 0:
            raise ParameterError(
                f"{param('selection')} needs a positive step (frames are read in order). Got {text!r} instead."
            )
        return cls(numbers[0], numbers[1], step, False, str(text))

    @classmethod
    def of_range(cls, chosen: range) -> FrameSelection:
        """The selection of exactly the frame numbers `chosen` (a non-empty increasing range)."""
        return cls(chosen.start, chosen.stop, chosen.step, False, f"{chosen.start}:{chosen.stop}:{chosen.step}")

    def indices(self, total: int) -> range:
        """The chosen frame numbers among `total` frames; an empty choice is an error."""
        if self.single:
            index = self.start + total if self.start < 0 else self.start
            if not 0 <= index < total:
                raise InputError(
                    f"{param('selection')} {self.text}: there is no frame {self.start}, the sources have {total} frames"
                )
            return range(index, index + 1)
        chosen = range(*slice(self.start, self.stop, self.step).indices(total))
        if len(chosen) == 0:
            raise InputError(f"{param('selection')} {self.text} selects no frame of the sources' {total}")
        return chosen


def natural_key(text: str) -> list:
    """Sort key that orders ``frame2`` before ``frame10`` (natural order)."""
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", text)]


def parse_size(text: str) -> tuple[int, int]:
    """Parse ``WxH`` (e.g. ``640x360``) into ``(width, height)``."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text or "")
    if not match or int(match.group(1)) < 1 or int(match.group(2)) < 1:
        raise ParameterError(f"size must be WxH with positive integers, e.g. 640x360. Got {text!r} instead.")
    return int(match.group(1)), int(match.group(2))


def expand_sources(sources: Iterable[str]) -> list[str]:
    """Turn folders and glob patterns into an ordered list of files (``-`` stays as it is).

    Raises
    ------
    InputError
        For a missing path, an empty folder, a folder without images or a glob with no match.
    """
    files: list[str] = []
    for source in sources:
        source = str(source)
        if source == "-":
            files.append(source)
            continue
        path = Path(source)
        if path.is_dir():
            entries = sorted(os.listdir(path), key=natural_key)
            if not entries:
                raise InputError(f"folder '{source}' is empty")
            images = [
                str(path / name)
                for name in entries
                if Path(name).suffix.lower() in IMAGE_EXTENSIONS and (path / name).is_file()
            ]
            if not images:
                raise InputError(f"folder '{source}' contains no images ({', '.join(sorted(IMAGE_EXTENSIONS))})")
            files.extend(images)
        elif path.exists():
            files.append(source)
        elif glob.has_magic(source):
            matches = sorted((m for m in glob.glob(source) if Path(m).is_file()), key=natural_key)
            if not matches:
                raise InputError(f"no file matches '{source}'")
            files.extend(matches)
        else:
            raise InputError(f"'{source}' does not exist")
    if not files:
        raise InputError("no sources given")
    return files


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


def iter_frames(
    sources: Iterable[str],
    resize: tuple[int, int] | None = None,
    stdin: BinaryIO | None = None,
    workers: int | None = None,
    selection: FrameSelection | None = None,
    colour: bool = False,
) -> Iterator[Frame]:
    """Yield the frames of every source, in order, converted to grey (or to RGB with `colour`).

    Runs of image files are decoded by a pool of threads (Pillow releases the GIL while it
    decodes), a few files ahead of the consumer, in order; videos are decoded by FFmpeg's own
    threads, straight to grey (:mod:`kpcacli.io.video`).

    Parameters
    ----------
    sources : iterable of str
        Paths, folders, glob patterns or ``-``.
    resize : (width, height), optional
        Resize every image frame to this size (Lanczos); point data is never resized.
    stdin : binary file, optional
        Where ``-`` reads from (default: ``sys.stdin.buffer``).
    workers : int, optional
        Decoding threads (default: the number of CPUs).
    selection : FrameSelection, optional
        Only these frames (``--frames``): files holding none of them are not opened, and a
        video is decoded only over the range it contributes, from the keyframe before it.
    colour : bool
        RGB frames, (height, width, 3) ``uint8``, instead of grey (``kpca fit --colour``).
    """
    files = expand_sources(sources)
    workers = workers or available_cores()
    conversion = Conversion(resize, colour)
    if selection is not None:
        yield from _selected_frames(files, selection, conversion, stdin, workers)
        return
    for index, frame in enumerate(_every_frame(files, conversion, stdin, workers)):
        frame.index = index
        yield frame


def _every_frame(files: list[str], conversion, stdin, workers) -> Iterator[Frame]:
    index = 0
    while index < len(files):
        if is_image_file(files[index]):
            end = index
            while end < len(files) and is_image_file(files[end]):
                end += 1
            for frames in ordered_map(
                lambda path: list(_frames_from_path(path, conversion)), files[index:end], workers
            ):
                yield from frames
            index = end
            continue
        source = files[index]
        index += 1
        if source == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from _frames_from_bytes(stream.read(), "<stdin>", conversion)
        else:
            yield from _frames_from_path(source, conversion)


def count_frames(sources: Iterable[str], selection: FrameSelection | None = None) -> int:
    """How many frames :func:`iter_frames` yields for `sources`, from headers where a format
    has one (images, videos' packets, ``.npy``), without decoding pixels."""
    files = expand_sources(sources)
    if "-" in files:
        return sum(1 for _ in iter_frames(files, selection=selection))
    total = sum(_count_file(source) for source in files)
    return total if selection is None else len(selection.indices(total))


def estimate_frames(sources: Iterable[str], selection: FrameSelection | None = None) -> int | None:
    """How many frames :func:`iter_frames` will yield, from headers alone and cheaply (a
    video's container header, not its packets): for progress bars. None when a source has no
    header to tell (standard input, text matrices, a video header without a count)."""
    try:
        total = 0
        for source in expand_sources(sources):
            suffix = Path(source).suffix.lower()
            if source == "-" or suffix in (".csv", ".txt"):
                return None
            if is_video_file(source):
                count = header_frame_count(source)
                if count is None:
                    return None
                total += count
            elif is_image_file(source) and suffix not in (".tif", ".tiff", ".gif"):
                total += 1
            else:
                total += _count_file(source)
        return total if selection is None else len(selection.indices(total))
    except KpcaError:
        return None  # the reading itself will say what is wrong


def _count_file(source: str, tables: dict | None = None) -> int:
    suffix = Path(source).suffix.lower()
    if is_video_file(source):
        table = frame_table(source)
        if tables is not None:
            tables[source] = table
        return len(table)
    if is_image_file(source) or suffix == ".gif":
        try:
            with Image.open(source) as image:
                return getattr(image, "n_frames", 1)
        except (UnidentifiedImageError, OSError):
            return sum(1 for _ in iter_frames([source]))  # its own error, as when loading
    if suffix == ".npy" and Path(source).is_file() and Path(source).stat().st_size:
        array = _load_npy(source, f"'{source}'")  # memory-mapped: the header only
        return 1 if array.ndim == 1 else int(array.shape[0])
    return sum(1 for _ in iter_frames([source]))


def _selected_frames(files: list[str], selection: FrameSelection, conversion, stdin, workers) -> Iterator[Frame]:
    """The frames of `files` that `selection` chooses, in order (see :func:`iter_frames`)."""
    if "-" in files:  # standard input has no header to count from: read it all, then choose
        frames = list(
            iter_frames(files, resize=conversion.size, stdin=stdin, workers=workers, colour=conversion.colour)
        )
        yield from (frames[i] for i in selection.indices(len(frames)))
        return
    tables: dict[str, FrameTable] = {}
    counts = [_count_file(source, tables) for source in files]
    chosen = selection.indices(sum(counts))
    for number, frame in zip(chosen, _frames_at(files, counts, chosen, tables, conversion, workers)):
        frame.index = number
        yield frame


def local_range(chosen: range, offset: int, count: int) -> range:
    """The numbers of `chosen` (increasing) that fall among `count` frames starting at frame
    `offset`, counted from that frame: which frames of one source (or piece) are chosen."""
    first = max(offset, chosen.start)
    first += (chosen.start - first) % chosen.step
    return range(first - offset, min(offset + count, chosen.stop) - offset, chosen.step)


def _frames_at(files, counts, chosen: range, tables, conversion, workers) -> Iterator[Frame]:
    """The frames numbered `chosen` among those of `files` (`counts` frames each)."""
    offset = 0
    singles: list[str] = []  # a run of one-frame image files, decoded on threads together
    for source, count in zip(files, counts):
        local = local_range(chosen, offset, count)
        offset += count
        if len(local) == 0:
            continue
        if is_image_file(source) and count == 1:
            singles.append(source)
            continue
        if singles:
            yield from iter_frames(singles, resize=conversion.size, workers=workers, colour=conversion.colour)
            singles = []
        if source in tables:
            yield from video_frames_in(source, tables[source], 0, local, conversion)
        else:
            wanted = set(local)
            yield from (frame for index, frame in enumerate(_frames_from_path(source, conversion)) if index in wanted)
    if singles:
        yield from iter_frames(singles, resize=conversion.size, workers=workers, colour=conversion.colour)


def source_frame_rate(sources: Iterable[str]) -> float | None:
    """The first video source's frame rate (:func:`kpcacli.io.video.frame_rate`); None when no
    source is a video or its header does not say."""
    return next((frame_rate(source) for source in expand_sources(sources) if is_video_file(source)), None)


def source_provenance(
    sources: Iterable[str],
    indices: Iterable[int],
    selection: FrameSelection | None,
    loaded: int,
    total: int | None = None,
) -> Provenance:
    """What a model records of the frames it was fitted on (:mod:`kpcacli.io.provenance`).

    `indices` are the training frames' numbers and `loaded` how many frames were read. The
    sources' frames in all are `total` when the caller counted them, `loaded` without a
    `selection`, and otherwise counted from headers (:func:`count_frames`); standard input,
    read once already, leaves the count and the size unknown.
    """
    files = expand_sources(sources)
    on_stdin = "-" in files
    if total is None:
        total = loaded if selection is None else None if on_stdin else count_frames(files)
    return Provenance(
        frame_indices=tuple(int(i) for i in indices),
        source_frames=total,
        selection=None if selection is None else selection.text,
        frame_rate=source_frame_rate(files),
        source_bytes=None if on_stdin else sum(Path(source).stat().st_size for source in files),
    )


def is_video_file(source: str) -> bool:
    """A video decoded by PyAV (GIFs are videos to the user but are read by Pillow)."""
    suffix = Path(source).suffix.lower()
    return source != "-" and suffix in VIDEO_EXTENSIONS and suffix != ".gif"


def is_image_file(source: str) -> bool:
    return source != "-" and Path(source).suffix.lower() in IMAGE_EXTENSIONS


def _frames_from_path(source: str, conversion) -> Iterator[Frame]:
    path = Path(source)
    if path.is_dir():
        raise InputError(f"'{source}' is a folder inside a folder; give the files or the inner folder")
    if path.stat().st_size == 0:
        raise InputError(f"'{source}' is empty (0 bytes)")
    suffix = path.suffix.lower()
    if suffix in MATRIX_EXTENSIONS:
        yield from _frames_from_matrix(source, conversion)
    elif suffix in VIDEO_EXTENSIONS:
        yield from _frames_from_video(source, conversion)
    else:
        yield from _frames_from_image_file(source, conversion)


def _frames_from_bytes(data: bytes, name: str, conversion) -> Iterator[Frame]:
    """Frames from standard input: a ``.npy`` array, an image, or a text matrix."""
    if not data:
        raise InputError("standard input is empty")
    if data.startswith(NPY_MAGIC):
        yield from _frames_from_array(_load_npy(io.BytesIO(data), name), name, conversion.colour)
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


def _load_npy(file, name: str) -> np.ndarray:
    try:
        array = np.load(file, allow_pickle=False, mmap_mode="r" if isinstance(file, str) else None)
    except DAMAGED_FILE_ERRORS as error:
        raise InputError(f"{name} is not a readable .npy array ({type(error).__name__}: {error})") from None
    if not isinstance(array, np.ndarray):
        getattr(array, "close", lambda: None)()  # an .npz archive under a .npy name
        raise InputError(f"{name} is not a single .npy array")
    return array


def load_text_matrix(text: str, name: str) -> np.ndarray:
    """A numeric matrix from text (comma- or whitespace-separated, ``#`` comment lines
    skipped); empty text is an error, and so is a value that is not a number or a row of
    another length (the message counts rows and columns from 1, and gives the file's line)."""
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


def _text_problem(text: str, delimiter: str | None) -> str | None:
    """Where a text matrix goes wrong, rows and columns counted from 1 (numpy counts its rows
    from 0 and its columns from 1)."""
    width, row = None, 0
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        row += 1
        fields = [field.strip() for field in line.split(delimiter)]
        for column, field in enumerate(fields, start=1):
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
        array = _load_npy(source, f"'{source}'")
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
            raise InputError(f"{name} has a NaN or infinite value in row {bad + 1}")
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
                raise InputError(f"{name} has a NaN or infinite value in frame {i + 1}")
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
