"""The training store: the fit's temporary copy of the training frames, one n x d matrix on disk,
memory-mapped.

Frames are streamed into a raw file one at a time (so a long clip never sits in memory) and
the file is then opened as a read-only ``numpy.memmap`` of shape ``(n, d)``, in the frames'
own dtype (``uint8`` for 8-bit input). The store is temporary and anonymous
(:class:`kpcacli.utils.atomic.AnonymousFile`): it lives beside the model being written, on the file
system that will hold it, and disappears when closed, on error, on Ctrl-C and on SIGKILL. The
model keeps its own compressed copy of the frames (:mod:`kpcacli.modelfile.zarrformat`).
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ..utils.atomic import AnonymousFile
from ..utils.budgets import PageRelease
from ..utils.checks import FRAME_DTYPES, depth_name, frame_size, other_bit_depth
from ..utils.errors import InputError, KpcaError, param
from ..utils.parallel import joined
from ..utils.progress import progress_bar
from .readers import Frame


class TrainingStore:
    """Training frames as rows of an on-disk, memory-mapped ``(n, d)`` matrix.

    Parameters
    ----------
    directory : path-like
        Where the temporary store file is created (choose the filesystem that will hold
        the model, so the space check is the real one).

    Attributes
    ----------
    frames : (n, d) numpy.memmap
        The stored frames, read-only, one frame per row (available after :meth:`extend`).
    frame_shape : tuple of int
        Shape of one frame, e.g. ``(height, width)``, or ``(d,)`` for point data.
    names : list of str
        Where each frame came from, in row order.
    indices : list of int
        Each frame's number among the sources' frames (:attr:`kpcacli.io.readers.Frame.index`),
        in row order; the row number when a frame carries none.
    digests : list of bytes
        Each row's SHA-256, of its bytes as stored: what a model checks every frame it decodes
        from its store against.
    grey_in_colour : bool
        Whether the frames are RGB with R = G = B in every pixel of every frame: grey footage
        read in colour, which takes three times the values for the same model.
    """

    def __init__(self, directory: str | os.PathLike = "."):
        self.directory = Path(directory)
        self.file: AnonymousFile | None = None
        self.frames: np.ndarray | None = None
        self.frame_shape: tuple[int, ...] | None = None
        self.names: list[str] = []
        self.indices: list[int] = []
        self.digests: list[bytes] = []
        self.grey_in_colour = False
        self.release: PageRelease | None = None

    def __enter__(self) -> TrainingStore:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def extend(self, frames: Iterable[Frame], progress: bool = False, total: int | None = None) -> np.ndarray:
        """Write `frames` to the store and return the memory-mapped ``(n, d)`` matrix; the
        progress bar counts to `total` when it is known.

        Raises
        ------
        InputError
            When a frame differs in size from the first one (the message names both files).
        KpcaError
            When the disk fills up.
        """
        first: Frame | None = None
        dtype = None
        count = 0
        try:
            self.file = AnonymousFile(self.directory, prefix=".kpca-store-")
            out = self.file.file
            with joined(frames), progress_bar(progress, desc="loading", unit="frame", total=total) as bar:
                for frame in frames:
                    if first is None:
                        first, dtype = frame, store_dtype(frame.pixels.dtype)
                        self.grey_in_colour = is_colour_shape(frame.pixels.shape)
                    else:
                        check_like_first(frame, first)
                    if self.grey_in_colour:  # until a frame has a colour
                        self.grey_in_colour = channels_equal(frame.pixels)
                    data = np.ascontiguousarray(convert(frame.pixels, dtype))
                    out.write(data)
                    self.digests.append(frame_digest(data))
                    self.names.append(frame.name)
                    self.indices.append(count if frame.index is None else int(frame.index))
                    count += 1
                    bar.update()
            out.flush()
        except OSError as error:
            if error.errno == errno.ENOSPC:
                raise KpcaError(
                    f"no space left on the device while writing the frame store in '{self.directory}'; "
                    "free some space or write the model elsewhere"
                ) from None
            raise
        if first is None:
            raise InputError("the sources hold no frames")
        self.frame_shape = tuple(first.pixels.shape)
        d = int(np.prod(self.frame_shape))
        self.frames = np.memmap(out, dtype=dtype, mode="r", shape=(count, d))
        self.release = PageRelease(self.frames)  # read pages leave the resident memory as passes go
        return self.frames

    def remove(self) -> None:
        """Delete the store (safe to call more than once; an anonymous store just closes)."""
        if self.release is not None:
            self.release.stop()
            self.release = None
        self.frames = None
        if self.file is not None:
            self.file.close()
            self.file = None


def is_colour_shape(shape: tuple[int, ...]) -> bool:
    """Whether frames of `shape` are RGB images, (height, width, 3)."""
    return len(shape) == 3 and shape[2] == 3


def channels_equal(pixels: np.ndarray) -> bool:
    """Whether an RGB frame's three channels are one: a grey frame in colour."""
    return bool(np.array_equal(pixels[..., 0], pixels[..., 1]) and np.array_equal(pixels[..., 1], pixels[..., 2]))


def frame_digest(values: np.ndarray) -> bytes:
    """The SHA-256 of a frame's values as stored (C order): what a model records of each
    training frame and checks every frame it decodes from its store against."""
    return hashlib.sha256(np.ascontiguousarray(values)).digest()


def digest_table(digests: list[bytes]) -> np.ndarray:
    """``frame_digests``: each frame's SHA-256 as a row of 32 bytes, (n, 32) uint8."""
    return np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), 32)


def frame_digests(frames) -> np.ndarray:
    """The ``frame_digests`` of `frames`, ``(n, d)`` uint8 (a memory map is read a row at a
    time): what every frame decoded from the model's store is checked against."""
    return digest_table([frame_digest(frames[row]) for row in range(frames.shape[0])])


def same_digests(frames: Iterable[np.ndarray], digests) -> bool:
    """Whether `frames`, decoded by one path, are those whose SHA-256 are the first of
    `digests` (:func:`kpcacli.io.trainingstore.frame_digest`), decoded by another."""
    return all(frame_digest(values) == bytes(digest) for values, digest in zip(frames, digests))


def check_like_first(frame: Frame, first: Frame) -> None:
    """Refuse a frame of another size or bit depth than the first one, naming both files
    (:func:`check_like`)."""
    check_like(frame.name, frame.pixels.shape, frame.pixels.dtype, first.name, first.pixels.shape, first.pixels.dtype)


def check_like(name: str, shape: tuple, dtype, first_name: str, first_shape: tuple, first_dtype) -> None:
    """Refuse frames of `shape` and `dtype` (from `name`) beside the first ones' (from
    `first_name`): another size, or images of another bit depth.

    Raises
    ------
    InputError
    """
    if tuple(shape) != tuple(first_shape):
        raise InputError(size_mismatch(name, shape, first_name, first_shape))
    if other_bit_depth(dtype, first_dtype):
        raise InputError(depth_mismatch(name, dtype, first_name, first_dtype))


def depth_mismatch(name: str, dtype, first_name: str, first_dtype) -> str:
    """The message for a frame whose bit depth differs from the first frame's."""
    return (
        f"'{name}' is a {depth_name(dtype)} image but the first frame '{first_name}' is "
        f"{depth_name(first_dtype)}; one model holds frames of one bit depth: convert them first"
    )


def size_mismatch(name: str, shape: tuple, first_name: str, first_shape: tuple) -> str:
    """The message for a frame whose size differs from the first frame's."""
    return (
        f"'{name}' is {frame_size(shape)} but the first frame '{first_name}' is {frame_size(first_shape)}; "
        f"use {param('resize')} WxH to bring all frames to one size"
    )


def store_dtype(dtype: np.dtype) -> np.dtype:
    """Frames in one of ``FRAME_DTYPES`` are stored as they are; any other numbers as float64."""
    if dtype in FRAME_DTYPES:
        return np.dtype(dtype)
    return np.dtype(np.float64)


def convert(pixels: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bring a frame to the store's dtype (the first frame decides it: :func:`store_dtype`)."""
    if pixels.dtype == dtype:
        return pixels
    if dtype == np.uint8 and pixels.dtype == np.uint16:
        return (pixels // 257).astype(np.uint8)  # 16-bit to 8-bit: same brightness
    if dtype == np.uint16 and pixels.dtype == np.uint8:
        return pixels.astype(np.uint16) * 257
    if dtype.kind == "u":
        info = np.iinfo(dtype)
        return np.clip(np.rint(pixels), info.min, info.max).astype(dtype)
    return pixels.astype(dtype)
