"""The frame store: training frames as one n x d matrix on disk, memory-mapped.

Frames are streamed into a raw file one at a time (so a long clip never sits in memory) and
the file is then opened as a read-only ``numpy.memmap`` of shape ``(n, d)``, in the frames'
own dtype (``uint8`` for 8-bit input). The store is temporary: it lives beside the model being
written and is removed on error and on Ctrl-C (use it as a context manager). On success
:func:`kpcacli.modelfile.save` can finish it into the model file in place
(:mod:`kpcacli.npzinplace`): the frames start
``RESERVED`` bytes into the file, where the zip and ``.npy`` headers are written at the end,
and their CRC-32 is kept as they stream in, so the frames are written to disk only once.
"""

from __future__ import annotations

import errno
import os
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .atomic import file_mode
from .checks import frame_size
from .errors import InputError, KpcaError
from .progress import progress_bar
from .sources import Frame

# Bytes reserved before the frames: room for a zip local header and a .npy header, so that
# kpcacli.modelfile can turn the store itself into the model file without copying the frames.
RESERVED = 4096


class FrameStore:
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
    """

    def __init__(self, directory: str | os.PathLike = "."):
        self.directory = Path(directory)
        self.file = None  # the open store file (read-write)
        self.path: Path | None = None  # its name, unless it is anonymous (O_TMPFILE)
        self.frames: np.ndarray | None = None
        self.frame_shape: tuple[int, ...] | None = None
        self.names: list[str] = []
        self.crc32 = 0  # of the frame bytes, for the zip member they become

    def __enter__(self) -> FrameStore:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def _open(self) -> None:
        """An anonymous file in `directory` where the system allows it, else a named one.

        An anonymous file (Linux O_TMPFILE) has no name until :meth:`publish` gives it one,
        so nothing is left behind whatever ends the process, SIGKILL included.
        """
        flag = getattr(os, "O_TMPFILE", None)
        if flag is not None:
            try:
                handle = os.open(self.directory, flag | os.O_RDWR, 0o600)
            except OSError:
                handle = None
            if handle is not None:
                self.file = os.fdopen(handle, "w+b")
                return
        handle, name = tempfile.mkstemp(prefix=".kpca-store-", suffix=".raw", dir=self.directory)
        self.path = Path(name)
        self.file = os.fdopen(handle, "w+b")

    def extend(self, frames: Iterable[Frame], progress: bool = False) -> np.ndarray:
        """Write `frames` to the store and return the memory-mapped ``(n, d)`` matrix.

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
            self._open()
            out = self.file
            with progress_bar(progress, desc="loading", unit="frame") as bar:
                out.write(bytes(RESERVED))
                for frame in frames:
                    if first is None:
                        first, dtype = frame, _store_dtype(frame.pixels.dtype)
                    elif frame.pixels.shape != first.pixels.shape:
                        raise InputError(
                            f"'{frame.name}' is {frame_size(frame.pixels.shape)} but the first frame "
                            f"'{first.name}' is {frame_size(first.pixels.shape)}; use --resize WxH "
                            "to bring all frames to one size"
                        )
                    data = np.ascontiguousarray(_convert(frame.pixels, dtype))
                    out.write(data)
                    self.crc32 = zlib.crc32(data, self.crc32)
                    self.names.append(frame.name)
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
        self.frames = np.memmap(self.file, dtype=dtype, mode="r", offset=RESERVED, shape=(count, d))
        return self.frames

    def publish(self, target: Path) -> None:
        """Give the finished store the name `target` (atomically replacing any file there)."""
        self.file.flush()
        os.fchmod(self.file.fileno(), file_mode())  # created 0600: the model gets the umask's mode
        os.fsync(self.file.fileno())
        if self.path is None:  # anonymous: link it into the folder under a temporary name first
            handle, name = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=self.directory)
            os.close(handle)
            os.unlink(name)
            # linkat(AT_SYMLINK_FOLLOW) through /proc names the anonymous file; CPython uses
            # linkat only when given a directory descriptor, plain link() would not follow.
            folder = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.link(f"/proc/self/fd/{self.file.fileno()}", Path(name).name, dst_dir_fd=folder, follow_symlinks=True)
            finally:
                os.close(folder)
            self.path = Path(name)
        try:
            os.replace(self.path, target)
        except OSError:
            self.path.unlink(missing_ok=True)
            raise
        self.path = None  # the file is the model now: nothing to remove
        self.file.close()
        self.file = None

    def remove(self) -> None:
        """Delete the store (safe to call more than once; an anonymous store just closes)."""
        self.frames = None
        if self.file is not None:
            self.file.close()
            self.file = None
        if self.path is not None:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass
            self.path = None


def _store_dtype(dtype: np.dtype) -> np.dtype:
    """uint8 and uint16 frames are stored as they are; anything else as float64 or float32."""
    if dtype in (np.uint8, np.uint16, np.float32, np.float64):
        return np.dtype(dtype)
    return np.dtype(np.float64)


def _convert(pixels: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Bring a frame to the store's dtype (the first frame decides it)."""
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
