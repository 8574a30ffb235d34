"""Model formats 2 and 3: a Zarr v3 group in one zip file, a directory or an fsspec URL.

Format 3 (written) differs from format 2 (still read) in the frames only: 8-bit grey and RGB
frames are stored as groups of H.264 (:mod:`kpcacli.modelfile.framecodec`), lossless or at a constant
rate factor chosen by measurement (:mod:`kpcacli.modelfile.storechoice`), in ``stream``, a 1-D uint8
array of the groups' bytes end to end, and ``groups``, an (G, 5) int64 table (first frame,
frames, byte offset, byte length, CRC-32 of the bytes); the root attribute ``frame_store``
says how they were coded. Other frames (points, 16-bit, float) keep format 2's ``frames``
array. The CRC is checked before a group is decoded, so a damaged store is one error naming
the frames, never a picture decoded from garbage.

Layout: the root group's attributes hold the scalars and names (``format_version`` 2, the
kernel and its parameters, ``centred``, ``frame_shape``, ``frame_names``, ``origin_norm2``,
``gram_mean`` and, optionally, ``provenance``); the small matrices are uncompressed one-chunk arrays with the names of format
1 (``eigenvalues``, ``eigenvectors``, ``codes``, ``linear_gram``, ``origin``, ``origin_dots``,
``gram_row_means``); ``frames`` is the ``(n, d)`` matrix of training frames, one chunk per
frame (split in columns beyond ``CHUNK_PIXELS``), so a decoder reads only the frames it needs.

Integer frames are compressed losslessly by a horizontal delta filter, then Blosc with zstd
at level 1 and bit shuffling (byte shuffling for wider integers): the fastest of the lossless
codecs compared for a few points of size (docs/performance.md, design measurements;
``python benchmarks/performance.py video`` prints the comparison), and the fit compresses
every frame while it decodes the next. Models whose frames are delta and plain zstd are read
too. Float frames are not delta-coded (a float difference rounds): byte-shuffled Blosc alone. Blosc's own
threads are off: the frames are compressed on kpca's threads. The delta codec is
numcodecs', which zarr-python reads; it is not in the Zarr v3 core specification (zarr warns
about that, and this module silences that one warning).

Why a Zarr zip store for the single file, rather than small ``.npy`` arrays and a store side
by side in one container: the same group is then one file, a directory or a URL, and any
Zarr reader can open it. kpca reads its own local files of 8-bit frames (only the ``bytes``
codec) without zarr (:mod:`kpcacli.modelfile.zarrread`, sparing every decode zarr's import), and
everything else (URLs, Blosc frames) through ``zarr.open_group``. Writing goes around
zarr's per-chunk machinery: chunks are compressed on our threads, overlapping the rest of
the work, with the same codecs zarr would use (a test checks the bytes against zarr's own),
and written in a fixed order with fixed zip timestamps, so identical input gives an
identical file.

Reading never unpickles: before any chunk is decoded, every array's codecs must be in
``ALLOWED_CODECS`` and its dtype numeric, and its shape is checked against the frames'.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .framecodec import EncodedFrames

FORMAT_VERSION = 3
READ_VERSIONS = (2, 3)  # format 1 (an .npz of .npy members) is read by kpcacli.modelfile
STREAM_CHUNK = 2**18  # bytes of H.264 per chunk of `stream`: a group spans a few chunks
CACHED_GROUPS = 3  # decoded groups kept per model: a code's three neighbours never evict each other
CHUNK_PIXELS = 2**22  # one chunk holds at most this many pixels of one frame (4 MiB of uint8)
BLOSC = {"cname": "zstd", "clevel": 1, "blocksize": 0}  # the shuffle depends on the dtype: _shuffle
ALLOWED_CODECS = {"bytes", "blosc", "zstd", "numcodecs.delta"}  # zstd: models written before Blosc
SMALL_ARRAYS = ("eigenvalues", "eigenvectors", "codes", "linear_gram", "origin", "origin_dots", "gram_row_means")
# The distance solver's linear-PCA axes (optional): their Gram-side arrays, and their frames
# as ``axis_stream`` and ``axis_groups`` (8-bit values in H.264) or ``axis_frames`` (float32).
AXIS_ARRAYS = ("axis_eigenvectors", "axis_eigenvalues", "axis_centred_norms", "axis_scales")
FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # every zip member's date: identical input, identical bytes


@dataclass
class AxisMembers:
    """The distance solver's linear-PCA axes as a model file holds them (:mod:`kpcacli.modelfile.axes`).

    Attributes
    ----------
    arrays : dict
        ``AXIS_ARRAYS``: eigenvectors (n, R), eigenvalues (R,), centred norms (n,), the
        frames' scales (R,).
    description : dict
        The root attribute ``linear_axes``: how the frames are stored (``codec`` h264 with its
        ``crf`` and ``offset``, or float32).
    frames : EncodedFrames or ndarray
        The axis frames: 8-bit values as H.264 groups, or float32 (R, d).
    """

    arrays: dict
    description: dict
    frames: EncodedFrames | np.ndarray


def is_url(location: str | os.PathLike) -> bool:
    """A fsspec URL (``file://``, ``s3://``, ...) rather than a local path."""
    return "://" in str(location)


def is_directory_target(location: str | os.PathLike) -> bool:
    """Write a directory store: the name ends with ``/`` or ``.zarr``, or is a directory."""
    text = str(location)
    return text.endswith(("/", ".zarr")) or Path(text).is_dir()


@contextlib.contextmanager
def quiet_numcodecs() -> Iterator:
    """zarr, with its warning that the delta codec is not in the v3 core specification
    silenced inside the block (zarr warns each time such a codec is made, on reading too)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Numcodecs codecs are not in the Zarr version 3 specification")
        yield imported_module("zarr")


# -- codecs -------------------------------------------------------------------------------
def _delta_coded(dtype: np.dtype) -> bool:
    return np.dtype(dtype).kind in "ui"


def chunk_columns(d: int) -> int:
    """Pixels of one frame per chunk."""
    return min(d, CHUNK_PIXELS)


def _shuffle(dtype: np.dtype) -> str:
    """Blosc's shuffle: bits for 8-bit data (bytes would not move), bytes for wider values."""
    return "bitshuffle" if np.dtype(dtype).itemsize == 1 else "shuffle"


def encode_chunk(row: np.ndarray) -> bytes:
    """One chunk's bytes as zarr writes them for the frames' codecs (delta for integers,
    little-endian bytes, Blosc)."""
    numcodecs = imported_module("numcodecs")
    imported_module("numcodecs.blosc").use_threads = False  # kpca's threads compress, one chunk each
    data = np.ascontiguousarray(row, dtype=row.dtype.newbyteorder("<"))
    if _delta_coded(row.dtype):
        data = numcodecs.Delta(dtype=data.dtype.str).encode(data)
    shuffle = {"bitshuffle": numcodecs.Blosc.BITSHUFFLE, "shuffle": numcodecs.Blosc.SHUFFLE}[_shuffle(row.dtype)]
    return bytes(numcodecs.Blosc(shuffle=shuffle, **BLOSC).encode(data))


def bytes_codec(dtype: np.dtype) -> dict:
    return {"name": "bytes"} if dtype.itemsize == 1 else {"name": "bytes", "configuration": {"endian": "little"}}


def frames_codecs(dtype: np.dtype) -> list[dict]:
    """The frames' codecs as Zarr v3 metadata: delta (integers), bytes, Blosc."""
    dtype = np.dtype(dtype)
    delta = [{"name": "numcodecs.delta", "configuration": {"dtype": dtype.newbyteorder("<").str}}]
    blosc = {  # in zarr-python's key order: the metadata's bytes are zarr's
        "typesize": dtype.itemsize,
        "cname": BLOSC["cname"],
        "clevel": BLOSC["clevel"],
        "shuffle": _shuffle(dtype),
        "blocksize": BLOSC["blocksize"],
    }
    return [*(delta if _delta_coded(dtype) else []), bytes_codec(dtype), {"name": "blosc", "configuration": blosc}]


def frame_chunk_key(row: int, block: int, name: str = "frames") -> str:
    """The store key of chunk ``(row, block)`` of the frames (zarr's default key encoding)."""
    return f"{name}/c/{row}/{block}"


def compress_frame(pixels: np.ndarray) -> list[bytes]:
    """The compressed chunks of one frame, left to right."""
    values = np.ravel(pixels)
    step = chunk_columns(values.size)
    return [encode_chunk(values[start : start + step]) for start in range(0, values.size, step)]


# zarr, numcodecs and their submodules are imported by one thread at a time: their modules
# import each other, and two threads importing them at once (the compressor, a reader, a
# cluster worker's tasks) can see a partially initialised module and fail.
_IMPORTS = threading.Lock()


def imported_module(name: str):
    with _IMPORTS:
        return importlib.import_module(name)
