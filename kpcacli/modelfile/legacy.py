"""Format 1, written by kpca 0.1: an ``.npz`` of plain ``.npy`` members (the names of
:mod:`kpcacli.modelfile.schema`) with the frames stored raw, memory-mapped on reading. It
still loads; nothing writes it. (Format 2, a Zarr group whose frames Blosc compressed one at a
time, is read by the same code as format 3, :mod:`kpcacli.modelfile.zarrformat`: only its
frames' codec differs, :class:`kpcacli.modelfile.storedframes.CompressedFrames`.)
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from ..utils.checks import FRAME_DTYPES
from ..utils.errors import ModelFileError
from .schema import ARRAYS, REQUIRED, SCALARS

FORMAT_1 = 1  # still read, as is 2; FORMAT_VERSION (3) is written


def read_format_1(path: Path) -> tuple[dict, np.ndarray]:
    """The members of the format-1 model at `path` (pickled members refused), and its frames
    memory-mapped in place."""
    return _read_members(path), _frames(path)


def _read_members(path: Path) -> dict:
    # Open the file here: np.load leaks its own handle when zipfile rejects the archive.
    with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
        missing = [name for name in REQUIRED if name not in archive.files]
        if "format_version" in archive.files:
            version = _member(archive, "format_version", path)
            if version.shape != () or version.dtype.kind not in "iu" or int(version) != FORMAT_1:
                shown = version.tolist() if version.size == 1 else "unreadable"
                raise ModelFileError(f"'{path}' has model format version {shown}; this kpca reads versions 1 and 2")
        if missing:
            raise ModelFileError(f"'{path}' is not a kpca model: it lacks {', '.join(missing)}")
        return {name: _member(archive, name, path) for name in SCALARS + ARRAYS}


def _member(archive, name: str, path: Path) -> np.ndarray:
    try:
        return archive[name]
    except ValueError as error:
        if "allow_pickle" in str(error) or "Object arrays" in str(error):
            raise ModelFileError(f"'{path}' holds pickled objects in '{name}'; kpca refuses to load them") from None
        raise


def _frames(path: Path) -> np.ndarray:
    """Memory-map the ``frames`` member in place (it is stored uncompressed)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("frames.npy")
    if info.compress_type != zipfile.ZIP_STORED:
        # Written by another tool with compression: it has to be read into memory.
        with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
            return _member(archive, "frames", path)
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        local = handle.read(30)
        if len(local) < 30 or local[:4] != b"PK\x03\x04":
            raise ModelFileError(f"'{path}' is damaged: bad zip header for the frames")
        name_length = int.from_bytes(local[26:28], "little")
        extra_length = int.from_bytes(local[28:30], "little")
        handle.seek(info.header_offset + 30 + name_length + extra_length)
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(handle)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(handle)
        offset = handle.tell()
    if dtype.hasobject:
        raise ModelFileError(f"'{path}' holds pickled objects in 'frames'; kpca refuses to load them")
    if len(shape) != 2 or dtype not in FRAME_DTYPES:
        raise ModelFileError(f"'{path}' has frames of shape {shape} and dtype {dtype}; expected (n, d) numbers")
    needed = offset + int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < needed:
        raise ModelFileError(
            f"'{path}' is truncated: the frames need {needed} bytes, the file has {path.stat().st_size}"
        )
    if 0 in shape:
        raise ModelFileError(f"'{path}' has no training frames")
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=tuple(shape), order="F" if fortran else "C")
