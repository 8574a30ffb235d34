"""The frames of every source kind of the command-line contract, in order.

A *source* is a folder of images (natural sort order), an image file, a glob pattern, a video
(mp4, avi, mov, mkv, webm, gif), a multi-frame TIFF, a ``.npy`` / ``.csv`` / ``.txt`` matrix of
row vectors (point data; a 3-D ``.npy`` holds frames), or ``-`` for one image, ``.npy`` or text
matrix on standard input. This module names the files, counts their frames, chooses among
them (``--frames``) and yields them; one file's frames are read by :mod:`kpcacli.io.readers`.

Frames are yielded one at a time as :class:`~kpcacli.io.readers.Frame` objects so that callers
can stream them into the on-disk frame store without holding the whole sequence in memory.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from PIL import Image, UnidentifiedImageError

from ..utils.cores import available_cores
from ..utils.errors import InputError, KpcaError, ParameterError, param
from ..utils.parallel import joined, ordered_map
from .provenance import Provenance
from .readers import (
    IMAGE_EXTENSIONS,
    Conversion,
    Frame,
    frames_from_bytes,
    frames_from_path,
    is_image_file,
    is_video_file,
    load_npy,
    video_frames_in,
)
from .video import FrameTable, frame_rate, frame_table, header_frame_count


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
    with joined(_every_frame(files, conversion, stdin, workers)) as frames:
        for index, frame in enumerate(frames):
            frame.index = index
            yield frame


def _every_frame(files: list[str], conversion, stdin, workers) -> Iterator[Frame]:
    index = 0
    while index < len(files):
        if is_image_file(files[index]):
            end = index
            while end < len(files) and is_image_file(files[end]):
                end += 1
            with joined(
                ordered_map(lambda path: list(frames_from_path(path, conversion)), files[index:end], workers)
            ) as runs:
                for frames in runs:
                    yield from frames
            index = end
            continue
        source = files[index]
        index += 1
        if source == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from frames_from_bytes(stream.read(), "<stdin>", conversion)
        else:
            yield from frames_from_path(source, conversion)


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
        array = load_npy(source, f"'{source}'")  # memory-mapped: the header only
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
    with joined(_frames_at(files, counts, chosen, tables, conversion, workers)) as frames:
        for number, frame in zip(chosen, frames):
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
            yield from (frame for index, frame in enumerate(frames_from_path(source, conversion)) if index in wanted)
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
