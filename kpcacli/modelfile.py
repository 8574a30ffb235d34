"""The model file: one ``.npz`` holding everything encode and decode need.

Layout (format version 1). Every member is a plain ``.npy`` array, stored uncompressed so the
training frames can be memory-mapped at their offset inside the file:

=================  ==============  ===========================================================
member             shape / dtype   meaning
=================  ==============  ===========================================================
format_version     () int64        ``FORMAT_VERSION``
kernel             () str          rbf, poly, linear or sigmoid
beta, gamma        () float64      kernel scales (NaN when unused)
degree             () int64        polynomial degree
coef0              () float64      offset of poly and sigmoid
centred            () bool         kernel centred in feature space (eqs. 24–25)
frame_shape        (1 or 2,) int   ``(height, width)`` for images, ``(d,)`` for points
frame_names        (n,) str        source of each training frame
eigenvalues        (n,) float64    all eigenvalues, decreasing (eq. 26)
eigenvectors       (n, k)          V* (eq. 26)
codes              (n, k)          Z*ᵀ, the training codes (eq. 27)
linear_gram        (n, n)          shifted linear Gram ``L = (X − s)(X − s)ᵀ``
origin             (d,)            the shift ``s`` (mean frame, integer for integer frames)
origin_dots        (n,)            ``(X − s) s``
origin_norm2       ()              ``|s|²``
gram_row_means     (n,)            centring term ``G1/n`` (zeros when not centred)
gram_mean          ()              centring term ``1ᵀG1/n²`` (zero when not centred)
frames             (n, d)          the training frames (uint8 for 8-bit input), last member
=================  ==============  ===========================================================

Writing is atomic (a temporary file beside the target, then a rename) and deterministic (fixed
zip timestamps), so the same input gives a byte-identical file. When the frames are in a
:class:`kpcacli.store.FrameStore` beside the target, the store file itself becomes the model:
its reserved first bytes receive the zip and ``.npy`` headers of ``frames`` (then the first
member), the small arrays and the zip directory are appended, and the file is renamed onto the
target, so the frames are written once. Otherwise ``frames`` is copied in as the last member. Reading uses
``allow_pickle=False`` throughout: a file with pickled objects is refused without unpickling.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import DAMAGED_FILE_ERRORS, KpcaError, ModelFileError
from .kernels import KERNELS, Kernel

if TYPE_CHECKING:  # pragma: no cover
    from .model import KernelPCA

FORMAT_VERSION = 1
FIXED_TIMESTAMP = (1980, 1, 1, 0, 0, 0)
SCALARS = ("format_version", "kernel", "beta", "gamma", "degree", "coef0", "centred", "origin_norm2", "gram_mean")
ARRAYS = (
    "frame_shape",
    "frame_names",
    "eigenvalues",
    "eigenvectors",
    "codes",
    "linear_gram",
    "origin",
    "origin_dots",
    "gram_row_means",
)
REQUIRED = SCALARS + ARRAYS + ("frames",)


def check_target(path: Path) -> None:
    """Refuse early an output path whose folder does not exist or that is a folder."""
    if path.is_dir():
        raise KpcaError(f"'{path}' is a folder; give a model file name such as model.npz")
    if not path.parent.is_dir():
        raise KpcaError(f"cannot write '{path}': folder '{path.parent}' does not exist")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside `path` (same suffix); renamed onto `path` if the block succeeds.

    On any error, or Ctrl-C, the temporary file is removed and `path` is left untouched.
    """
    path = Path(path)
    check_target(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except OSError as error:
        _unlink(temporary)
        if error.errno == errno.ENOSPC:
            raise KpcaError(f"no space left on the device while writing '{path}'") from None
        raise KpcaError(f"cannot write '{path}': {error.strerror or error}") from None
    except BaseException:
        _unlink(temporary)
        raise


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb") -> Iterator:
    """Like :func:`atomic_path`, but yields the open temporary file (flushed to disk on success)."""
    with atomic_path(path) as temporary, open(temporary, mode) as out:
        yield out
        out.flush()
        os.fsync(out.fileno())


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _arrays(model: KernelPCA) -> dict:
    """Every member but the frames, in file order."""
    kernel = model.kernel_
    return {
        "format_version": np.int64(FORMAT_VERSION),
        "kernel": np.str_(kernel.name),
        "beta": np.float64(np.nan if kernel.beta is None else kernel.beta),
        "gamma": np.float64(np.nan if kernel.gamma is None else kernel.gamma),
        "degree": np.int64(kernel.degree),
        "coef0": np.float64(kernel.coef0),
        "centred": np.bool_(model.centred_),
        "frame_shape": np.asarray(model.frame_shape_, dtype=np.int64),
        "frame_names": np.asarray([str(name) for name in model.frame_names_], dtype=np.str_),
        "eigenvalues": np.asarray(model.eigenvalues_, dtype=np.float64),
        "eigenvectors": np.asarray(model.eigenvectors_, dtype=np.float64),
        "codes": np.asarray(model.codes_, dtype=np.float64),
        "linear_gram": model.linear_gram_.shifted,
        "origin": model.linear_gram_.origin,
        "origin_dots": model.linear_gram_.origin_dots,
        "origin_norm2": np.float64(model.linear_gram_.origin_norm2),
        "gram_row_means": np.asarray(model.gram_row_means_, dtype=np.float64),
        "gram_mean": np.float64(model.gram_mean_),
    }


def _write_member(archive: zipfile.ZipFile, name: str, array) -> None:
    info = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_TIMESTAMP)
    info.compress_type = zipfile.ZIP_STORED
    with archive.open(info, mode="w", force_zip64=True) as member:
        np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def save(model: KernelPCA, path: str | os.PathLike, store=None) -> None:
    """Write `model` to `path` atomically.

    Parameters
    ----------
    store : FrameStore, optional
        The store holding ``model.frames_``. When it lives in the target's folder the store
        file becomes the model file (no copy of the frames); otherwise the frames are
        streamed from their memory map into a new file.
    """
    path = Path(path)
    arrays = _arrays(model)
    if store is not None and store.file is not None and store.frames is model.frames_:
        if store.directory.resolve() == path.parent.resolve():
            _finish_store(store, arrays, path)
            return
    with atomic_file(path) as out:
        with zipfile.ZipFile(out, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            for name, array in arrays.items():
                _write_member(archive, name, array)
            _write_member(archive, "frames", model.frames_)


def _finish_store(store, arrays: dict, path: Path) -> None:
    """Turn the store file into the model file in place, then rename it onto `path`."""
    from .store import RESERVED

    check_target(path)
    frames = store.frames
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(frames.dtype), "fortran_order": False, "shape": frames.shape}
    )
    npy_header = header.getvalue()
    size = len(npy_header) + frames.nbytes
    crc = crc32_combine(zlib.crc32(npy_header), store.crc32, frames.nbytes)
    name = b"frames.npy"
    big = size >= zipfile.ZIP64_LIMIT
    extra = struct.pack("<HHQQ", 1, 16, size, size) if big else b""
    padding = RESERVED - 30 - len(name) - len(extra) - len(npy_header) - 4  # an extra record of our own
    if padding < 0:
        raise KpcaError("internal error: the reserved header space of the frame store is too small")
    extra += struct.pack("<HH", 0x6B70, padding) + bytes(padding)  # id "pk": padding, ignored by readers
    local = struct.pack(
        "<4sHHHHHIIIHH",
        b"PK\x03\x04",
        45 if big else 20,  # version needed to extract
        0,  # flags
        zipfile.ZIP_STORED,
        0,  # time 00:00:00
        (1980 - 1980) << 9 | 1 << 5 | 1,  # date 1980-01-01, as FIXED_TIMESTAMP
        crc,
        0xFFFFFFFF if big else size,
        0xFFFFFFFF if big else size,
        len(name),
        len(extra),
    )
    try:
        out = store.file  # the store's own file, finished in place
        out.seek(0)
        out.write(local + name + extra + npy_header)
        if out.tell() != RESERVED:
            raise KpcaError("internal error: the model header does not end where the frames begin")
        out.seek(RESERVED + frames.nbytes)
        out.truncate()
        with zipfile.ZipFile(out, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
            info = zipfile.ZipInfo(name.decode(), date_time=FIXED_TIMESTAMP)
            info.compress_type = zipfile.ZIP_STORED
            info.header_offset, info.CRC = 0, crc
            info.file_size = info.compress_size = size
            info.external_attr = 0o600 << 16
            archive.filelist.append(info)
            archive.NameToInfo[info.filename] = info
            for member, array in arrays.items():
                _write_member(archive, member, array)
        out.flush()
        store.publish(path)
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise KpcaError(f"no space left on the device while writing '{path}'") from None
        raise KpcaError(f"cannot write '{path}': {error.strerror or error}") from None


def crc32_combine(crc1: int, crc2: int, length2: int) -> int:
    """CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's algorithm).

    Lets the store keep the CRC of its frames while they stream in, before the ``.npy``
    header that precedes them in the zip member is known.
    """
    if length2 <= 0:
        return crc1

    def times(matrix, vector):
        total, index = 0, 0
        while vector:
            if vector & 1:
                total ^= matrix[index]
            vector >>= 1
            index += 1
        return total

    def square(matrix):
        return [times(matrix, matrix[n]) for n in range(32)]

    operator = [0xEDB88320] + [1 << n for n in range(31)]  # appends one zero bit to a CRC
    for _ in range(3):
        operator = square(operator)  # one zero byte
    while length2:  # append length2 zero bytes to crc1: one squaring per bit of length2
        if length2 & 1:
            crc1 = times(operator, crc1)
        length2 >>= 1
        operator = square(operator)
    return crc1 ^ crc2


def load(path: str | os.PathLike) -> KernelPCA:
    """Read and validate a model file; the training frames are memory-mapped.

    Raises
    ------
    ModelFileError
        When the file is missing, not a zip, truncated, of another format version, holds
        pickled objects, or lacks or misshapes an array.
    """
    from .model import KernelPCA

    path = Path(path)
    if not path.exists():
        raise ModelFileError(f"model file '{path}' does not exist; create it with 'kpca fit SOURCE -m {path}'")
    if path.is_dir():
        raise ModelFileError(f"model path '{path}' is a folder, not a model file")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(f"'{path}' is not a kpca model (not an .npz file)")
    try:
        state = _read_state(path)
    except ModelFileError:
        raise
    except DAMAGED_FILE_ERRORS as error:
        raise ModelFileError(f"'{path}' is damaged or truncated ({error})") from None
    return KernelPCA._from_state(state)


def _read_state(path: Path) -> dict:
    # Open the file here: np.load leaks its own handle when zipfile rejects the archive.
    with open(path, "rb") as handle, np.load(handle, allow_pickle=False) as archive:
        missing = [name for name in REQUIRED if name not in archive.files]
        if "format_version" in archive.files:
            version = _member(archive, "format_version", path)
            if version.shape != () or version.dtype.kind not in "iu" or int(version) != FORMAT_VERSION:
                shown = version.tolist() if version.size == 1 else "unreadable"
                raise ModelFileError(
                    f"'{path}' has model format version {shown}; this kpca reads version {FORMAT_VERSION}"
                )
        if missing:
            raise ModelFileError(f"'{path}' is not a kpca model: it lacks {', '.join(missing)}")
        state = {name: _member(archive, name, path) for name in SCALARS + ARRAYS}
    state["frames"] = _frames(path)
    _validate(state, path)
    name = str(state["kernel"])
    state["kernel"] = Kernel(
        name,
        beta=_optional(state["beta"]),
        gamma=_optional(state["gamma"]),
        degree=int(state["degree"]),
        coef0=float(state["coef0"]),
    )
    state["centred"] = bool(state["centred"])
    return state


def _optional(value: np.ndarray) -> float | None:
    """NaN marks a parameter the kernel does not use."""
    return None if np.isnan(value) else float(value)


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
    if len(shape) != 2 or dtype not in (np.uint8, np.uint16, np.float32, np.float64):
        raise ModelFileError(f"'{path}' has frames of shape {shape} and dtype {dtype}; expected (n, d) numbers")
    needed = offset + int(np.prod(shape)) * dtype.itemsize
    if path.stat().st_size < needed:
        raise ModelFileError(
            f"'{path}' is truncated: the frames need {needed} bytes, the file has {path.stat().st_size}"
        )
    return np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=tuple(shape), order="F" if fortran else "C")


def _validate(state: dict, path: Path) -> None:
    """Check kinds, shapes and dtypes against each other."""

    def fail(what: str) -> None:
        raise ModelFileError(f"'{path}' is not a valid kpca model: {what}")

    for name in SCALARS:
        if state[name].shape != ():
            fail(f"'{name}' should be a scalar, has shape {state[name].shape}")
    if state["kernel"].dtype.kind != "U" or str(state["kernel"]) not in KERNELS:
        fail(f"unknown kernel {state['kernel']!r}")
    for name in ("beta", "gamma", "coef0", "origin_norm2", "gram_mean"):
        if state[name].dtype.kind != "f":
            fail(f"'{name}' should be a float")
    if state["degree"].dtype.kind not in "iu" or state["centred"].dtype != np.bool_:
        fail("'degree' should be an integer and 'centred' a boolean")
    frames = state["frames"]
    n, d = frames.shape
    shape = state["frame_shape"]
    if shape.dtype.kind not in "iu" or shape.ndim != 1 or len(shape) not in (1, 2) or int(np.prod(shape)) != d:
        fail(f"frame_shape {shape.tolist()} does not match frames of width {d}")
    if n < 2:
        fail("fewer than two training frames")
    expected = {
        "frame_names": (n,),
        "eigenvalues": (n,),
        "linear_gram": (n, n),
        "origin": (d,),
        "origin_dots": (n,),
        "gram_row_means": (n,),
    }
    for name, want in expected.items():
        if state[name].shape != want:
            fail(f"'{name}' has shape {state[name].shape}, expected {want}")
    for name in ("eigenvalues", "linear_gram", "origin_dots", "gram_row_means", "eigenvectors", "codes"):
        if state[name].dtype.kind != "f":
            fail(f"'{name}' should hold floats, holds {state[name].dtype}")
    if state["frame_names"].dtype.kind != "U":
        fail("'frame_names' should hold strings")
    vectors, codes = state["eigenvectors"], state["codes"]
    if vectors.ndim != 2 or vectors.shape[0] != n or not (1 <= vectors.shape[1] < n) or codes.shape != vectors.shape:
        fail(f"eigenvectors {vectors.shape} and codes {codes.shape} should both be (n, k) with 1 ≤ k < n = {n}")
    if state["origin"].dtype.kind not in "uif":
        fail("'origin' should hold numbers")
    for name in ("eigenvalues", "linear_gram", "eigenvectors", "codes", "origin_dots", "gram_row_means"):
        if not np.all(np.isfinite(state[name])):
            fail(f"'{name}' has NaN or infinite values")
