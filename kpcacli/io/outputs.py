"""Writing frames and points, always atomically (codes: :mod:`kpcacli.io.codes`).

Formats follow the command-line contract:

* frames: ``out.png`` (or another image extension) for one frame; ``DIR/`` (or an existing
  folder) for ``000000.png``, ``000001.png``, …; a video extension for a video; ``-`` for one
  PNG on standard output.
* points (models fitted on row vectors): ``.npy``, ``.txt`` or ``.csv`` rows, or text on
  standard output.

Every file goes to a temporary name beside its target and is renamed into place only when it
is complete, so an error never leaves a half-written output.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
from PIL import Image

from ..utils.atomic import atomic_file, atomic_path, check_writable, directory_mode, write_error
from ..utils.budgets import BUDGETS
from ..utils.checks import check_real
from ..utils.cores import available_cores
from ..utils.errors import KpcaError, ParameterError, param
from ..utils.parallel import ordered_map, run_ahead
from .ownership import SOFTWARE, image_save_options, output_kind, save_npy, written_kind
from .readers import IMAGE_EXTENSIONS, VIDEO_EXTENSIONS, Frame
from .videowriter import DEFAULT_VIDEO, VideoSettings, check_chroma, check_crf, check_fps, encode_video


# -- frames -----------------------------------------------------------------------------
@dataclass(frozen=True)
class FrameTarget:
    """Where frames go, resolved once from the text the user gave: standard output (one PNG,
    `kind` ``"stdout"``), one image file (``"image"``), a folder of one PNG per frame
    (``"folder"``: ``DIR/`` with its trailing separator, or an existing folder), a video
    (``"video"``) or a ``.npy`` stack of the frames, (m, height, width) in their dtype
    (``"array"``). Every writer and check takes it, so a target string is read in one place."""

    text: str
    kind: str

    @classmethod
    def of(cls, target: str | os.PathLike | FrameTarget | None) -> FrameTarget:
        """The target `target` names (``-`` or None: standard output).

        Raises
        ------
        KpcaError
            For a file of a type frames cannot be written as.
        """
        if isinstance(target, FrameTarget):
            return target
        if target is None or str(target) == "-":
            return cls("-", "stdout")
        text = str(target)
        if text.endswith(("/", "\\")) or Path(text).is_dir():
            return cls(text, "folder")
        suffix = Path(text).suffix.lower()
        if suffix in VIDEO_EXTENSIONS:
            return cls(text, "video")
        if suffix in IMAGE_EXTENSIONS:
            return cls(text, "image")
        if suffix == ".npy":
            return cls(text, "array")
        raise KpcaError(
            f"unknown output type '{text}': use an image (.png), a folder (DIR/), a video (.mp4) or a .npy stack"
        )

    @property
    def path(self) -> Path:
        return Path(self.text)

    @property
    def suffix(self) -> str:
        """The file's suffix, lower case (empty for standard output and folders)."""
        return self.path.suffix.lower() if self.kind in ("image", "video", "array") else ""

    def check(self, count: int) -> None:
        """Refuse the target for `count` frames before any work is done (so a failure leaves
        nothing behind): one PNG on standard output or in one image file, and a folder to
        write into."""
        if self.kind == "stdout":
            if count > 1:
                raise KpcaError(
                    f"{count} frames to write but standard output takes one PNG; give {param('output')} DIR/ or a video"
                )
            return
        folder = self.kind == "folder"
        parent = Path(self.text.rstrip("/\\") or ".").parent if folder else self.path.parent
        if not (folder and self.path.is_dir()) and not parent.is_dir():
            raise KpcaError(f"cannot write '{self.text}': folder '{parent}' does not exist")
        check_writable(self.text.rstrip("/\\") or ".", self.path if folder and self.path.is_dir() else parent)
        if self.kind == "image" and count > 1:
            raise KpcaError(
                f"{count} frames to write but '{self.text}' names one image; give a folder (DIR/) or a video"
            )


def check_rows_target(target: str | None) -> None:
    """Refuse a target for point rows (a denoised point cloud) before any work is done."""
    if target is None or target == "-":
        return
    parent = Path(target).parent
    if not parent.is_dir():
        raise KpcaError(f"cannot write '{target}': folder '{parent}' does not exist")
    check_writable(target)
    if output_kind(target) != "rows":
        raise KpcaError(
            f"point data is written as rows: give {param('output')} a .npy, .txt or .csv file, not '{target}'"
        )


def _made_ahead(items: Iterator) -> Iterator:
    """`items` made on a thread of their own while the ones before are encoded and written,
    up to ``BUDGETS.queued_frames`` of them ahead (the first is made here, to learn its size)."""
    first = next(items, None)
    if first is None:
        return iter(())
    depth = max(2, BUDGETS.queued_frames // max(1, _pixels(first).nbytes))
    return run_ahead(itertools.chain([first], items), depth)


def write_frames(
    frames: Iterable[np.ndarray],
    target: str | FrameTarget | None,
    stdout: BinaryIO | None = None,
    count: int | None = None,
    video: VideoSettings = DEFAULT_VIDEO,
) -> list[str]:
    """Write decoded frames, each (height, width), to `target`; returns the files written.

    `frames` may be a generator: a folder or a video is written one frame at a time, so a long
    clip never sits in memory. `count` (default ``len(frames)``) is checked against the target
    before anything is written. In a folder, frames are ``000000.png``, ``000001.png``, …;
    frames given as :class:`~kpcacli.io.readers.Frame` objects keep their names instead
    (:func:`png_name`): what ``denoise`` and ``extract`` write. A video is written at `video`
    (:class:`kpcacli.io.videowriter.VideoSettings`).
    """
    target = FrameTarget.of(target)
    count = len(frames) if count is None else count
    check_video_options(target, video)
    target.check(count)
    items = iter(frames)
    if target.kind in ("folder", "video"):
        items = _made_ahead(items)
    frames = map(_pixels, items)
    if target.kind == "stdout":
        stream = stdout if stdout is not None else sys.stdout.buffer
        if stream.isatty():
            raise ParameterError(
                f"refusing to write a PNG to the terminal; give {param('output')} FILE or pipe the output"
            )
        stream.write(encode_png(next(frames)))
        stream.flush()
        return ["-"]
    if target.kind == "folder":
        return write_folder(items, target.path)
    if target.kind == "video":
        write_video(frames, target.text, video)
    elif target.kind == "array":
        stack = np.stack(list(frames))
        with atomic_file(target.text) as out:
            save_npy(out, stack, f"{SOFTWARE}: {len(stack)} frames")
    else:
        format = Image.registered_extensions()[target.suffix]
        with atomic_file(target.text) as out:
            Image.fromarray(next(frames)).save(out, format=format, **image_save_options(format))
    return [target.text]


def write_folder(items: Iterable, folder: Path) -> list[str]:
    """One PNG per frame (an array or a :class:`~kpcacli.io.readers.Frame`, which keeps its name:
    :func:`png_name`) in `folder`; returns the files written.

    The folder ends up holding this run's frames and none of an earlier run's: they are written
    into a new hidden folder beside it, which then takes its place (an existing folder of frames
    kpca wrote is removed). Where the folder holds files kpca did not write (``--force``),
    those stay and only the frames kpca wrote there before are removed. On any error, nothing of
    this run stays and the folder is as it was.
    """
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".kpca", dir=folder.absolute().parent))
        os.chmod(staging, directory_mode())  # mkdtemp's 0700 would hide the frames from others
    except OSError as error:
        raise write_error(folder, error) from None
    names: list[str] = []
    try:
        used: set[str] = set()
        # PNG compression releases the GIL: frames are compressed on every core, in order.
        named = (
            (item, png_name(item.name, index, used) if isinstance(item, Frame) else f"{index:06d}.png")
            for index, item in enumerate(items)
        )  # an error of the frames' source passes as it is
        for name, png in ordered_map(_named_png, named, available_cores()):
            try:
                (staging / name).write_bytes(png)
            except OSError as error:
                raise write_error(folder, error) from None
            names.append(name)
        try:
            _publish_folder(staging, folder)
        except OSError as error:
            raise write_error(folder, error) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [str(folder / name) for name in names]


def _named_png(named: tuple) -> tuple[str, bytes]:
    item, name = named
    return name, encode_png(_pixels(item))


def _publish_folder(staging: Path, folder: Path) -> None:
    """Put the frames in `staging` in `folder`'s place (see :func:`write_folder`)."""
    if not folder.exists():
        os.rename(staging, folder)
    elif written_kind(folder) == "folder":  # empty, or only frames kpca wrote: swap the folders
        earlier = staging.with_name(staging.name + ".earlier")
        os.rename(folder, earlier)
        os.rename(staging, folder)
        shutil.rmtree(earlier)
    else:  # files kpca did not write (--force): they stay beside this run's frames
        for entry in folder.iterdir():
            if entry.is_file() and written_kind(entry) == "frames":
                entry.unlink()
        for entry in staging.iterdir():
            os.replace(entry, folder / entry.name)
        staging.rmdir()


def check_video_options(target: str | FrameTarget | None, video: VideoSettings) -> None:
    """``--fps``, ``--crf`` and ``--chroma`` (`video`) against the output `target`, before any
    work is done.

    Raises
    ------
    ParameterError
        For a frame rate that is not a positive number, or a frame rate, CRF or chroma the
        output cannot take (:func:`kpcacli.io.videowriter.check_fps`,
        :func:`kpcacli.io.videowriter.check_crf`, :func:`kpcacli.io.videowriter.check_chroma`).
    """
    if video.fps is not None:
        check_real("fps", video.fps, positive=True)
    if video.fps is None and video.crf is None and video.chroma is None:
        return
    if not isinstance(target, FrameTarget) and output_kind(target) == "rows":  # a point model's rows
        suffix = Path(str(target)).suffix.lower()
    else:
        suffix = FrameTarget.of(target).suffix
    check_fps(suffix, video.fps)
    if video.crf is not None:
        check_crf(suffix, video.crf)
    if video.chroma is not None:
        check_chroma(suffix, video.chroma)


def _pixels(item) -> np.ndarray:
    """A frame's pixels, given as an array or as a :class:`~kpcacli.io.readers.Frame`."""
    return item.pixels if isinstance(item, Frame) else item


def png_name(name: str, position: int, used: set[str]) -> str:
    """A PNG file name that keeps the frame's own: ``hand_001.png`` for ``frames/hand_001.jpg``,
    ``clip_000005.png`` for frame 5 of ``clip.mp4`` (named ``clip.mp4[5]``), a suffix ``_2``,
    ``_3``, … where it would clash with one in `used` (updated); a frame from standard input
    is numbered by its `position`."""
    match = re.fullmatch(r"(.*)\[(\d+)\]", name)
    source, index = (match.group(1), int(match.group(2))) if match else (name, None)
    stem = "" if source.startswith("<") else Path(source).stem
    if index is not None:
        stem = f"{stem}_{index:06d}" if stem else f"{index:06d}"
    stem = stem or f"{position:06d}"
    file, copy = f"{stem}.png", 1
    while file.lower() in used:
        copy += 1
        file = f"{stem}_{copy}.png"
    used.add(file.lower())
    return file


def encode_png(frame: np.ndarray) -> bytes:
    """One frame (grey uint8 or uint16, or RGB) as PNG bytes, marked as kpca's."""
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", **image_save_options("PNG"))
    return buffer.getvalue()


def write_video(
    frames: Iterable[np.ndarray],
    target: str,
    video: VideoSettings = DEFAULT_VIDEO,
) -> None:
    """Write grey or colour frames as a video at `video`, one frame at a time, atomically
    (:mod:`kpcacli.io.videowriter`)."""
    frames = (_to_8bit(frame) for frame in frames)
    with atomic_path(target) as temporary:
        encode_video(frames, temporary, video, suffix=Path(target).suffix, name=target)


def _to_8bit(frame: np.ndarray) -> np.ndarray:
    """Video codecs take 8-bit frames: 16-bit frames keep their brightness."""
    frame = np.asarray(frame)
    return frame if frame.dtype == np.uint8 else (frame // 257).astype(np.uint8)
