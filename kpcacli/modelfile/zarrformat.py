"""Model formats 2 and 3: a Zarr v3 group in one zip file, a directory or an fsspec URL.

Format 3 (written) differs from format 2 (still read) in the frames only: 8-bit grey and RGB
frames are stored as groups of H.264 (:mod:`kpcacli.framecodec`), lossless or at a constant
rate factor chosen by measurement (:mod:`kpcacli.compactstore`), in ``stream``, a 1-D uint8
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
at level 1 and bit shuffling (byte shuffling for wider integers). Measured on 132 frames of
1280 x 720 from an H.264 clip (a photograph panned, with sensor noise), one core, per frame:

==============================  ========  ===========  =============
codecs                          raw kept  compressing  decompressing
==============================  ========  ===========  =============
zstd 1                          68%       3.6 ms       1.1 ms
delta, zstd 1 (earlier models)  42%       3.8 ms       3.1 ms
delta, zstd 3                   43%       7.4 ms       3.4 ms
delta, Blosc zstd 1 bitshuffle  46%       2.2 ms       3.3 ms
delta, Blosc lz4 bitshuffle     72%       0.9 ms       2.7 ms
the frames' PNG files           38%
==============================  ========  ===========  =============

(``python benchmarks/performance.py video`` prints the comparison): Blosc takes 42% less time
than plain zstd for 4 points more of the raw size, and the fit compresses every frame while
it decodes the next. Earlier models (delta, zstd 1) are still read. Float frames
are not delta-coded (a float difference rounds): byte-shuffled Blosc alone. Blosc's own
threads are off: the frames are compressed on kpca's threads. The delta codec is
numcodecs', which zarr-python reads; it is not in the Zarr v3 core specification (zarr warns
about that, and this module silences that one warning).

Why a Zarr zip store for the single file, rather than small ``.npy`` arrays and a store side
by side in one container: the same group is then one file, a directory or a URL, and any
Zarr reader can open it. kpca reads its own local files of 8-bit frames (only the ``bytes``
codec) without zarr (:mod:`kpcacli.zarrread`: zarr's import was 0.2 s of every decode), and
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
import itertools
import json
import os
import posixpath
import shutil
import tempfile
import threading
import warnings
import weakref
import zipfile
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..atomic import AnonymousFile, check_target, directory_mode, write_error
from ..checks import FRAME_DTYPES
from ..errors import ModelFileError
from ..parallel import available_cores, ordered_map, submit_uninterrupted
from ..progress import progress_bar
from .framecodec import EncodedFrames, FrameCodec, FrameCodecError, GroupDecoder, codable
from .zarrread import Group as LightGroup
from .zarrread import NeedsZarr, opened_group
from .zarrread import open_group as open_light_group

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
    """The distance solver's linear-PCA axes as a model file holds them (:mod:`kpcacli.axisstore`).

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
        yield _module("zarr")


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
    numcodecs = _module("numcodecs")
    _module("numcodecs.blosc").use_threads = False  # kpca's threads compress, one chunk each
    data = np.ascontiguousarray(row, dtype=row.dtype.newbyteorder("<"))
    if _delta_coded(row.dtype):
        data = numcodecs.Delta(dtype=data.dtype.str).encode(data)
    shuffle = {"bitshuffle": numcodecs.Blosc.BITSHUFFLE, "shuffle": numcodecs.Blosc.SHUFFLE}[_shuffle(row.dtype)]
    return bytes(numcodecs.Blosc(shuffle=shuffle, **BLOSC).encode(data))


def _bytes_codec(dtype: np.dtype) -> dict:
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
    return [*(delta if _delta_coded(dtype) else []), _bytes_codec(dtype), {"name": "blosc", "configuration": blosc}]


# -- writing ------------------------------------------------------------------------------
def _json_value(value):
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and np.isnan(value):
        return None  # JSON has no NaN: a parameter the kernel does not use
    return value


def _json(document: dict) -> bytes:
    return json.dumps(document, indent=2, allow_nan=True).encode()  # as zarr-python writes metadata


def array_metadata(shape: tuple, dtype: np.dtype, chunks: tuple, codecs: list[dict]) -> bytes:
    """An array's ``zarr.json`` (Zarr v3 core specification: regular chunk grid, default
    ``/``-separated chunk keys, fill value 0)."""
    dtype = np.dtype(dtype)
    fill = {"f": 0.0, "b": False}.get(dtype.kind, 0)
    document = {
        "shape": [int(v) for v in shape],
        "data_type": dtype.name,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [int(v) for v in chunks]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill,
        "codecs": codecs,
        "attributes": {},
        "zarr_format": 3,
        "node_type": "array",
        "storage_transformers": [],
    }
    return _json(document)


def metadata_entries(
    members: dict,
    n: int,
    d: int,
    dtype: np.dtype,
    encoded: EncodedFrames | None = None,
    axes: AxisMembers | None = None,
) -> dict[str, bytes]:
    """Every key of the group but the frame chunks: the group's and arrays' ``zarr.json``
    and the small arrays' chunks (one uncompressed little-endian chunk each, left out when
    all zero, as zarr leaves out chunks equal to the fill value). With `encoded` frames
    (format 3's H.264 store), the ``stream`` array's metadata and the ``groups`` table
    instead of the ``frames`` array's metadata; with `axes`, their arrays and metadata.

    Written here, byte for byte as zarr-python writes them (a test compares), rather than
    through zarr: importing zarr takes 0.14–0.19 s beside numpy and numcodecs, on a fit that
    takes 1.1–1.6 s from a video; no longer importing it nor reading the model back saved
    about 0.25 s (alternating runs).
    """
    scalars = {name: _json_value(value) for name, value in members.items() if name not in SMALL_ARRAYS}
    scalars["frame_shape"] = [int(v) for v in members["frame_shape"]]
    scalars["frame_names"] = [str(v) for v in members["frame_names"]]
    scalars["format_version"] = int(members.get("format_version", FORMAT_VERSION))
    small = dict.fromkeys(SMALL_ARRAYS)
    if encoded is not None:
        scalars["frame_store"] = encoded.description
        small["groups"] = group_table(encoded)
    entries = {}
    if axes is not None:
        scalars["linear_axes"] = axes.description
        small.update(axes.arrays)
        if isinstance(axes.frames, EncodedFrames):
            small["axis_groups"] = group_table(axes.frames)
            entries.update(_stream_metadata("axis_stream", axes.frames.nbytes))
        else:
            shape = axes.frames.shape
            codecs = frames_codecs(axes.frames.dtype)
            entries["axis_frames/zarr.json"] = array_metadata(shape, axes.frames.dtype, (1, chunk_columns(d)), codecs)
    entries["zarr.json"] = _json({"attributes": scalars, "zarr_format": 3, "node_type": "group"})
    for name, given in small.items():
        array = np.ascontiguousarray(members[name] if given is None else given)
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        entries[f"{name}/zarr.json"] = array_metadata(
            array.shape, array.dtype, array.shape, [_bytes_codec(array.dtype)]
        )
        if np.any(array):
            entries[f"{name}/c/" + "/".join("0" * array.ndim)] = array.tobytes()
    if encoded is None:
        frames_chunks = (1, chunk_columns(d))
        entries["frames/zarr.json"] = array_metadata((n, d), dtype, frames_chunks, frames_codecs(dtype))
    else:
        entries.update(_stream_metadata("stream", encoded.nbytes))
    return dict(sorted(entries.items()))


def _stream_metadata(name: str, size: int) -> dict[str, bytes]:
    """The ``zarr.json`` of a 1-D uint8 array of `size` bytes of H.264 groups."""
    chunks = (min(STREAM_CHUNK, max(size, 1)),)
    return {f"{name}/zarr.json": array_metadata((size,), np.uint8, chunks, [_bytes_codec(np.dtype(np.uint8))])}


def group_table(encoded: EncodedFrames) -> np.ndarray:
    """``groups``: for each H.264 group, its first frame, its frames, the byte offset and
    length of its stream in ``stream``, and the CRC-32 of those bytes, (G, 5) int64."""
    table = np.zeros((len(encoded.streams), 5), dtype=np.int64)
    first = offset = 0
    for row, (stream, count) in enumerate(zip(encoded.streams, encoded.counts)):
        table[row] = (first, count, offset, len(stream), zlib.crc32(stream))
        first, offset = first + count, offset + len(stream)
    return table


def _stream_chunks(encoded: EncodedFrames, name: str = "stream") -> Iterator[tuple[str, bytes]]:
    """The chunks of ``stream`` (or `name`): the groups' bytes end to end, cut every
    ``STREAM_CHUNK`` bytes, the last one padded with zeros to a whole chunk (as zarr stores
    edge chunks)."""
    data = b"".join(encoded.streams)
    step = min(STREAM_CHUNK, max(len(data), 1))
    for number, start in enumerate(range(0, len(data), step)):
        yield f"{name}/c/{number}", data[start : start + step].ljust(step, b"\0")


def _axis_chunks(axes: AxisMembers | None) -> Iterator[tuple[str, bytes]]:
    """The chunks of the axis frames: H.264 groups, or float32 rows compressed as frames are."""
    if axes is None:
        return
    if isinstance(axes.frames, EncodedFrames):
        yield from _stream_chunks(axes.frames, "axis_stream")
        return
    for row, values in enumerate(axes.frames):
        for block, data in enumerate(compress_frame(values)):
            yield frame_chunk_key(row, block, "axis_frames"), data


def frame_chunk_key(row: int, block: int, name: str = "frames") -> str:
    """The store key of chunk ``(row, block)`` of the frames (zarr's default key encoding)."""
    return f"{name}/c/{row}/{block}"


def compress_frame(pixels: np.ndarray) -> list[bytes]:
    """The compressed chunks of one frame, left to right."""
    values = np.ravel(pixels)
    step = chunk_columns(values.size)
    return [encode_chunk(values[start : start + step]) for start in range(0, values.size, step)]


class FrameCompressor:
    """Compresses frames while they are being loaded, on one background thread.

    Compressing each frame as it arrives overlaps the compression with the decoding instead
    of adding it after the fit. :meth:`tap` passes the frames
    through unchanged. The work is kept only if the stored frames turn out to be exactly the
    tapped ones (same count and dtype); :func:`write` compresses again otherwise.
    """

    def __init__(self):
        from concurrent.futures import ThreadPoolExecutor

        self.pool = ThreadPoolExecutor(max_workers=1)
        self.futures: list = []
        self.dtypes: set = set()

    def __enter__(self) -> FrameCompressor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def tap(self, frames) -> Iterator:
        for frame in frames:
            self.dtypes.add(np.dtype(frame.pixels.dtype))
            # 8-bit images go to the H.264 store, never to Blosc: compressing them here cost
            # the megapixel fit a third of a core's time for nothing.
            if not codable(frame.pixels.shape, frame.pixels.dtype):
                self.futures.append(submit_uninterrupted(self.pool, compress_frame, frame.pixels))
            yield frame

    def add(self, dtype, chunks: list[bytes]) -> None:
        """The next frame's chunks, compressed elsewhere (by a cluster worker)."""
        from concurrent.futures import Future

        done: Future = Future()
        done.set_result(chunks)
        self.dtypes.add(np.dtype(dtype))
        self.futures.append(done)

    def chunks_for(self, frames) -> list | None:
        """The compressed chunks, frame by frame, if they are `frames`' (else None)."""
        if len(self.futures) != frames.shape[0] or self.dtypes != {np.dtype(frames.dtype)}:
            return None
        return self.futures

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


# zarr, numcodecs and their submodules are imported by one thread at a time: their modules
# import each other, and two threads importing them at once (the compressor, a reader, a
# cluster worker's tasks) can see a partially initialised module and fail.
_IMPORTS = threading.Lock()


def _module(name: str):
    with _IMPORTS:
        return importlib.import_module(name)


def _frame_chunks(frames, progress: bool, compressed: list | None = None) -> Iterator[tuple[str, bytes]]:
    """Compressed frame chunks in row order: the futures of a :class:`FrameCompressor`, or
    compressed here on a pool of threads (Blosc and numpy release the GIL) a few frames ahead
    of the writer."""
    n = frames.shape[0]
    if compressed is not None:
        results = (future.result() for future in compressed)
    else:
        results = ordered_map(lambda row: compress_frame(np.asarray(frames[row])), range(n), available_cores())
    with progress_bar(progress, desc="compressing", total=n, unit="frame") as bar:
        for row, chunks in enumerate(results):
            for block, data in enumerate(chunks):
                yield frame_chunk_key(row, block), data
            bar.update()


def write(
    members: dict,
    frames,
    location: str | os.PathLike,
    progress: bool = False,
    compressed=None,
    encoded: EncodedFrames | None = None,
    axes: AxisMembers | None = None,
) -> None:
    """Write a model (format 3) to `location` atomically: a zip file, a directory or a URL.

    Parameters
    ----------
    members : dict
        The model's members but the frames (:func:`kpcacli.modelfile.members`).
    frames : (n, d) array-like
        The training frames (a memory map is read one row at a time).
    compressed : list of futures, optional
        Their chunks, already compressed (:meth:`FrameCompressor.chunks_for`).
    encoded : EncodedFrames, optional
        The frames as H.264 groups (:mod:`kpcacli.framecodec`), stored instead of Blosc chunks;
        `frames` must be what they decode to.
    axes : AxisMembers, optional
        The distance solver's linear-PCA axes (:mod:`kpcacli.axisstore`).
    """
    n, d = frames.shape
    entries = metadata_entries(members, n, d, np.dtype(frames.dtype), encoded, axes)
    root = entries.pop("zarr.json")  # written last: a store without it is not a model
    chunks = _frame_chunks(frames, progress, compressed) if encoded is None else _stream_chunks(encoded)
    try:
        with _writer(location) as put:
            for key, data in itertools.chain(chunks, _axis_chunks(axes)):
                put(key, data)
            for key, data in entries.items():
                put(key, data)
            put("zarr.json", root)
    except OSError as error:  # a full disk, a read-only folder: one line naming the model
        raise write_error(location, error) from None


@contextlib.contextmanager
def _writer(location) -> Iterator[Callable[[str, bytes], None]]:
    if is_url(location):
        yield from _url_writer(str(location))
    elif is_directory_target(location):
        yield from _directory_writer(Path(str(location).rstrip("/")))
    else:
        yield from _zip_writer(Path(location))


def _zip_writer(path: Path):
    """Members go into an anonymous file beside `path`, published under its name at the end:
    an error, Ctrl-C or SIGKILL leaves the previous model and nothing else."""
    check_target(path)
    with AnonymousFile(path.parent, prefix=f".{path.stem}-") as temporary:
        with zipfile.ZipFile(temporary.file, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:

            def put(key: str, data: bytes) -> None:
                archive.writestr(zipfile.ZipInfo(key, date_time=FIXED_TIMESTAMP), data)

            yield put
        temporary.publish(path)


def _directory_writer(path: Path):
    """Members go into a hidden directory beside `path`, renamed onto it at the end. A
    previous model directory there is swapped out and removed (a directory that is not a
    kpca model is refused, never deleted)."""
    if path.exists() and not (path / "zarr.json").is_file():
        raise ModelFileError(f"'{path}' exists and is not a kpca model directory; choose another name")
    if not path.parent.is_dir():
        raise ModelFileError(f"cannot write '{path}': folder '{path.parent}' does not exist")
    temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:

        def put(key: str, data: bytes) -> None:
            target = temporary / key
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

        yield put
        os.chmod(temporary, directory_mode())  # mkdtemp made it 0700
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / "model")
            os.replace(temporary, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(temporary, path)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _url_writer(url: str):
    """Members are written to the URL through fsspec; the root ``zarr.json`` comes last, so
    a reader never takes a half-written store for a model."""
    try:
        import fsspec
    except ImportError:
        raise ModelFileError("writing a model to a URL needs fsspec: pip install fsspec") from None
    try:
        filesystem, root = fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as error:
        raise ModelFileError(f"cannot write to '{url}': {error}") from None
    with contextlib.suppress(FileNotFoundError):
        filesystem.rm(f"{root}/zarr.json")  # the old model stops being one before it changes

    folders: set[str] = set()

    def put(key: str, data: bytes) -> None:
        target = f"{root}/{key}"
        folder = posixpath.dirname(target)
        if folder not in folders:  # local file systems need the folders; object stores ignore this
            filesystem.makedirs(folder, exist_ok=True)
            folders.add(folder)
        filesystem.pipe_file(target, data)

    yield put


# -- reading ------------------------------------------------------------------------------
def stored_size(location) -> int:
    """Bytes the model takes where it is stored: a file, a directory's files, a URL's objects."""
    if is_url(location):
        import fsspec

        filesystem, root = fsspec.core.url_to_fs(str(location))
        return int(filesystem.du(root))
    path = Path(location)
    if path.is_dir():
        return sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    return path.stat().st_size


def format_version(location) -> int | None:
    """The ``format_version`` a Zarr model declares (2 or 3 for kpca's), read from its root
    ``zarr.json`` alone, without zarr; None when it declares none or cannot be read."""
    text = str(location)
    try:
        if is_url(text):
            import fsspec

            filesystem, root = fsspec.core.url_to_fs(text)
            document = filesystem.cat_file(f"{root}/zarr.json")
        elif Path(text).is_dir():
            document = (Path(text) / "zarr.json").read_bytes()
        else:
            with zipfile.ZipFile(text) as archive:
                document = archive.read("zarr.json")
        version = json.loads(document).get("attributes", {}).get("format_version")
    except (OSError, KeyError, ValueError, AttributeError, zipfile.BadZipFile):
        return None
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def holds_zarr(path: Path) -> bool:
    """Whether a zip file holds a Zarr group (format 2) rather than ``.npy`` members."""
    with zipfile.ZipFile(path) as archive:
        return "zarr.json" in archive.namelist()


def _open_group(zarr, location):
    storage = _module("zarr.storage")
    FsspecStore, LocalStore, ZipStore = storage.FsspecStore, storage.LocalStore, storage.ZipStore

    text = str(location)
    if is_url(text):
        try:
            store = FsspecStore.from_url(text, read_only=True)
        except ImportError as error:
            raise ModelFileError(f"reading '{text}' needs {error.name or 'fsspec'}: pip install it") from None
    elif Path(text).is_dir():
        store = LocalStore(text, read_only=True)
    else:
        store = ZipStore(text, mode="r")
    group = opened_group(store, lambda: zarr.open_group(store, mode="r", zarr_format=3), FileNotFoundError, location)
    return group, store


def read(location) -> tuple[dict, CompressedFrames]:
    """The members of a format-2 model (in format 1's names and types) and its frames.

    Raises
    ------
    ModelFileError
        For a store that is not a kpca model, of another version, with an array missing,
        a codec outside ``ALLOWED_CODECS``, a non-numeric dtype or a shape that does not fit.
    """
    members = frames = None
    if not is_url(location):  # kpca's own local files, without importing zarr (zarrread)
        group, store = open_light_group(location)
        try:
            members, frames = _read_group(group, location)
        except NeedsZarr:
            store.close()
        except BaseException:
            store.close()
            raise
    if members is None:
        with quiet_numcodecs() as zarr:
            group, store = _open_group(zarr, location)
        try:
            members, frames = _read_group(group, location)
        except BaseException:
            store.close()
            raise
    # The frames (and the axes) read the store on demand, so it stays open while either is in
    # use and is closed when the last of them goes: closed here, not by the garbage collector,
    # which warns of every file it has to close (ResourceWarning).
    owner = _StoreOwner()
    owner.close = weakref.finalize(owner, store.close)
    frames.store_owner = owner
    if "linear_axes" in members:
        members["linear_axes"]["frames"].store_owner = owner
    return members, frames


class _StoreOwner:
    """Held by every object that reads a model's store on demand; the store closes with it,
    or at once with ``close()``."""


def close_store(frames) -> None:
    """Close the store `frames` (from :func:`read`) read on demand: a model refused after
    reading, whose frames an error's traceback would otherwise keep open."""
    owner = getattr(frames, "store_owner", None)
    if owner is not None:
        owner.close()


def _read_group(group, location) -> tuple[dict, FramesOnDemand]:
    """:func:`read`'s members and frames of an open Zarr `group` (zarr's, or
    kpcacli.zarrread's :class:`~kpcacli.zarrread.Group`, which raises ``NeedsZarr`` for an
    array only zarr reads)."""
    lite = isinstance(group, LightGroup)
    with contextlib.nullcontext() if lite else quiet_numcodecs():
        attributes = dict(group.attrs)
        version = attributes.get("format_version")
        if version not in READ_VERSIONS:
            raise ModelFileError(
                f"'{location}' has model format version {version}; this kpca reads versions 1, 2 and 3"
            )
        coded = version == 3 and "frame_store" in attributes
        axes = version == 3 and "linear_axes" in attributes
        axis_codec = (
            attributes["linear_axes"].get("codec") if axes and isinstance(attributes["linear_axes"], dict) else None
        )
        if axes and axis_codec not in ("h264", "float32"):
            raise ModelFileError(
                f"linear_axes must describe an h264 or float32 store. Got {json.dumps(attributes['linear_axes'])[:60]} instead."
            )
        axis_names = (
            (*AXIS_ARRAYS, *(("axis_stream", "axis_groups") if axis_codec == "h264" else ("axis_frames",)))
            if axes
            else ()
        )
        arrays = {}
        for name in (*SMALL_ARRAYS, *(("stream", "groups") if coded else ("frames",)), *axis_names):
            try:
                arrays[name] = group[name]
            except KeyError:
                raise ModelFileError(f"'{location}' is not a kpca model: it lacks {name}") from None
            _check_array_metadata(name, arrays[name])
    if coded:
        frames = VideoFrames.of(
            arrays.pop("stream"), arrays.pop("groups"), attributes["frame_store"], attributes.get("frame_shape")
        )
    else:
        frames = arrays.pop("frames")
    n, d = frames.shape if len(frames.shape) == 2 else (0, 0)
    if len(frames.shape) != 2 or n < 2 or np.dtype(frames.dtype) not in FRAME_DTYPES:
        raise ModelFileError(f"frames must be an (n, d) array of numbers. Got {frames.shape} {frames.dtype} instead.")
    limits = {"linear_gram": (n, n), "eigenvectors": (n, n), "codes": (n, n), "origin": (d,)}
    if coded and arrays["origin"].shape != (d,):  # the frames' size comes from frame_shape alone
        raise ModelFileError(
            f"frame_shape must hold the frame length {arrays['origin'].shape[0]}. Got {attributes['frame_shape']} instead."
        )
    members = {}
    if axes:
        members["linear_axes"] = _axis_members(arrays, attributes, (n, d))
    for name, array in arrays.items():
        bound = limits.get(name, (n,))
        if len(array.shape) != len(bound) or any(size > limit for size, limit in zip(array.shape, bound)):
            raise ModelFileError(f"{name} must fit {n} frames of {d} values. Got shape {array.shape} instead.")
        members[name] = np.asarray(array[...])
    for name in ("kernel", "beta", "gamma", "degree", "coef0", "centred", "origin_norm2", "gram_mean"):
        if name not in attributes:
            raise ModelFileError(f"'{location}' is not a kpca model: it lacks {name}")
        value = attributes[name]
        members[name] = np.asarray(np.nan if value is None and name in ("beta", "gamma") else value)
    for name in ("frame_shape", "frame_names"):
        value = attributes.get(name)
        if not isinstance(value, list):
            raise ModelFileError(f"{name} must be a list. Got {json.dumps(value)[:40]} instead.")
        members[name] = np.asarray(value) if value else np.zeros(0, dtype=np.int64)
    members["provenance"] = attributes.get("provenance")  # optional: older models have none
    members["solver_choice"] = attributes.get("solver_choice")  # optional: older models keep their rule
    members["frame_store"] = attributes.get("frame_store") if coded else None
    return members, frames if coded else CompressedFrames(frames)


def _axis_members(arrays: dict, attributes: dict, shape: tuple[int, int]) -> dict:
    """The axes' members, taken out of `arrays`: ``AXIS_ARRAYS`` read, their shapes checked
    against n and R, the description, and the frames read on demand."""
    n, d = shape
    description = attributes["linear_axes"]
    eigenvalues = arrays.pop("axis_eigenvalues")
    count = eigenvalues.shape[0] if len(eigenvalues.shape) == 1 else -1
    if not 0 < count < n:
        raise ModelFileError(f"axis_eigenvalues must be 1 to {n - 1} values. Got shape {eigenvalues.shape} instead.")
    bounds = {"axis_eigenvectors": (n, count), "axis_centred_norms": (n,), "axis_scales": (count,)}
    members = {"description": description, "axis_eigenvalues": np.asarray(eigenvalues[...])}
    for name, bound in bounds.items():
        array = arrays.pop(name)
        if tuple(array.shape) != bound:
            raise ModelFileError(f"{name} must have shape {bound}. Got {tuple(array.shape)} instead.")
        members[name] = np.asarray(array[...])
    if description["codec"] == "h264":
        frames = VideoFrames.of(
            arrays.pop("axis_stream"),
            arrays.pop("axis_groups"),
            description,
            attributes.get("frame_shape"),
            "linear_axes",
        )
    else:
        frames = CompressedFrames(arrays.pop("axis_frames"))
    if frames.shape != (count, d) or frames.dtype not in (np.uint8, np.float32):
        raise ModelFileError(f"the axis frames must be ({count}, {d}). Got {frames.shape} {frames.dtype} instead.")
    members["frames"] = frames
    return members


def _check_array_metadata(name: str, array) -> None:
    """Refuse, before any chunk is read, an array whose codecs could run code or whose
    values are not plain numbers."""
    names = getattr(array, "codec_names", None)
    if names is None:  # zarr's array
        names = [codec.to_dict().get("name") for codec in array.metadata.codecs]
    for codec_name in names:
        if codec_name not in ALLOWED_CODECS:
            raise ModelFileError(f"{name} uses the codec {codec_name!r}; kpca reads only {sorted(ALLOWED_CODECS)}")
    if np.dtype(array.dtype).kind not in "uifb":
        raise ModelFileError(f"{name} must hold numbers. Got dtype {array.dtype} instead.")


class FramesOnDemand:
    """The ``(n, d)`` training frames of a Zarr model, read on demand: indexing one row
    (``frames[i]``) reads that row alone (:meth:`row`); any other access (slices,
    ``numpy.asarray``) reads every frame once into memory (:attr:`matrix`, which subclasses
    define as a cached property) and serves it from there."""

    ndim = 2
    shape: tuple[int, int]

    def __len__(self) -> int:
        return self.shape[0]

    @property
    def in_memory(self) -> bool:
        """Whether every frame is read already (then rows are read from memory)."""
        return "matrix" in self.__dict__

    def row(self, index: int) -> np.ndarray:
        """Frame `index` (0 <= index < n), read alone."""
        raise NotImplementedError

    def rows(self, indices, threads: int) -> np.ndarray:
        """The frames at `indices` (increasing), ``(r, d)``, read on `threads` threads, one
        row a task (compressed chunks decompress with the GIL released)."""
        block = np.empty((len(indices), self.shape[1]), dtype=self.dtype)
        for position, values in enumerate(ordered_map(lambda index: self[int(index)], indices, threads)):
            block[position] = values
        return block

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and not self.in_memory:
            index = int(key)
            if not -self.shape[0] <= index < self.shape[0]:
                raise IndexError(f"frame {index} of {self.shape[0]}")
            return self.row(index % self.shape[0])
        return self.matrix[key]

    def __array__(self, dtype=None, copy=None):
        return self.matrix if dtype is None else self.matrix.astype(dtype)


class CompressedFrames(FramesOnDemand):
    """The ``(n, d)`` training frames of a format-2 model, decompressed on demand.

    Indexing one row (``frames[i]``) reads that frame's chunks alone: a decoder needs only
    its neighbours. Any other access (slices, ``numpy.asarray``) decompresses the whole
    matrix once, into memory, and serves it from there.
    """

    def __init__(self, array):
        self.array = array
        self.shape = tuple(int(v) for v in array.shape)
        self.dtype = np.dtype(array.dtype)

    @cached_property
    def matrix(self) -> np.ndarray:
        """Every frame, decompressed, (n, d)."""
        try:
            with quiet_numcodecs():
                return np.asarray(self.array[...])
        except Exception as error:  # zstd and zarr raise their own types for damaged chunks
            raise ModelFileError(f"the frames are damaged ({type(error).__name__}: {error})") from None

    def row(self, index: int) -> np.ndarray:
        try:
            with quiet_numcodecs():
                return np.asarray(self.array[index])
        except Exception as error:
            raise ModelFileError(f"frame {index} is damaged ({type(error).__name__}: {error})") from None


class VideoFrames(FramesOnDemand):
    """The ``(n, d)`` training frames of a format-3 model stored as groups of H.264, decoded
    on demand.

    Indexing one row (``frames[i]``) decodes that frame's group alone (at most
    ``GROUP_FRAMES`` frames), kept among the last ``CACHED_GROUPS`` decoded, so consecutive
    rows decode each group once. Any other access (slices, ``numpy.asarray``) decodes every
    group once, on kpca's threads, into memory, and serves it from there.
    """

    dtype = np.dtype(np.uint8)

    def __init__(
        self, stream, table: np.ndarray, codec: FrameCodec, frame_shape: tuple[int, ...], label: str = "frame"
    ):
        self.label = label  # what a row is, in errors: "frame" or "axis frame"
        self.stream = stream
        self.table = table
        self.codec = codec
        self.frame_shape = frame_shape
        self.shape = (int(table[-1, 0] + table[-1, 1]), int(np.prod(frame_shape)))
        self._groups: OrderedDict[int, GroupDecoder] = OrderedDict()
        self._lock = threading.Lock()
        self._group_locks: dict[int, threading.Lock] = {}

    @classmethod
    def of(cls, stream, groups, description, shape, name: str = "frame_store") -> VideoFrames:
        """The frames of a format-3 group's ``stream`` and ``groups`` tables, the table and
        `description` (the attribute `name`) checked first; frames of `shape`."""
        if not isinstance(description, dict) or description.get("codec") != "h264":
            raise ModelFileError(f"{name} must describe an h264 store. Got {json.dumps(description)[:60]} instead.")
        crf = description.get("crf")
        if not isinstance(crf, int) or isinstance(crf, bool) or not 0 <= crf <= 51:
            raise ModelFileError(f"{name} crf must be an int in [0, 51]. Got {crf!r} instead.")
        if not (isinstance(shape, list) and all(isinstance(v, int) and v > 0 for v in shape)):
            raise ModelFileError(f"frame_shape must be a list of positive ints. Got {json.dumps(shape)[:40]} instead.")
        colour = len(shape) == 3
        if not codable(tuple(shape), np.uint8):
            raise ModelFileError(f"an h264 store holds grey or RGB frames; frame_shape is {shape}")
        if len(groups.shape) != 2 or groups.shape[1] != 5 or groups.shape[0] < 1 or np.dtype(groups.dtype).kind != "i":
            raise ModelFileError(f"groups must be a (G, 5) int table. Got {groups.shape} {groups.dtype} instead.")
        if len(stream.shape) != 1 or np.dtype(stream.dtype) != np.uint8:
            raise ModelFileError(f"stream must be 1-D uint8. Got {stream.shape} {stream.dtype} instead.")
        table = np.asarray(groups[...])
        first, counts, offsets, lengths = table[:, 0], table[:, 1], table[:, 2], table[:, 3]
        ends = np.cumsum(counts)
        consistent = (
            np.all(counts >= 1)
            and np.array_equal(first, ends - counts)
            and np.all(offsets >= 0)
            and np.all(lengths >= 1)
            and np.all(offsets + lengths <= stream.shape[0])
            and np.all((table[:, 4] >= 0) & (table[:, 4] < 2**32))
        )
        if not consistent:
            raise ModelFileError("groups does not describe consecutive frames within the stream")
        return cls(
            stream, table, FrameCodec(crf, colour), tuple(shape), "axis frame" if name == "linear_axes" else "frame"
        )

    def group(self, number: int) -> tuple[GroupDecoder, threading.Lock]:
        """Group `number`'s decoder (cached), which decodes its frames as far as they are
        asked for (:class:`kpcacli.framecodec.GroupDecoder`), and the lock to hold while
        asking it."""
        with self._lock:
            decoder = self._groups.get(number)
            if decoder is None:
                decoder = self._groups[number] = self._decoder(number)
                while len(self._groups) > CACHED_GROUPS:
                    self._groups.popitem(last=False)
            self._groups.move_to_end(number)
            lock = self._group_locks.setdefault(number, threading.Lock())
        return decoder, lock

    def _decoder(self, number: int) -> GroupDecoder:
        """A decoder of group `number`, its bytes read and checked."""
        data = self._bytes(number)
        try:
            return GroupDecoder(self.codec, data, int(self.table[number, 1]), self.frame_shape)
        except FrameCodecError as error:
            raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None

    def _rows(self, number: int) -> str:
        first, count = int(self.table[number, 0]), int(self.table[number, 1])
        return f"{self.label}s {first}–{first + count - 1} are" if count > 1 else f"{self.label} {first} is"

    def _bytes(self, number: int) -> bytes:
        """Group `number`'s H.264 bytes, their checksum checked."""
        _, _, offset, length, checksum = (int(v) for v in self.table[number])
        try:
            data = np.asarray(self.stream[offset : offset + length]).tobytes()
        except Exception as error:  # zarr's and the zip's own errors for damaged chunks
            raise ModelFileError(f"{self._rows(number)} damaged ({type(error).__name__}: {error})") from None
        if zlib.crc32(data) != checksum:
            raise ModelFileError(f"{self._rows(number)} damaged: the H.264 bytes fail their checksum")
        return data

    def _decode(self, number: int) -> np.ndarray:
        """Every frame of group `number`, (count, d)."""
        try:
            return self.codec.decode(self._bytes(number), int(self.table[number, 1]), self.frame_shape)
        except FrameCodecError as error:
            raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None

    @cached_property
    def matrix(self) -> np.ndarray:
        """Every frame, decoded, (n, d)."""
        out = np.empty(self.shape, dtype=np.uint8)
        numbers = range(len(self.table))
        for number, frames in zip(numbers, ordered_map(self._decode, numbers, available_cores())):
            first, count = int(self.table[number, 0]), int(self.table[number, 1])
            out[first : first + count] = frames
        return out

    def rows(self, indices, threads: int) -> np.ndarray:
        """The frames at `indices` (increasing), ``(r, d)``: a task a group, so that groups
        decode side by side on `threads` threads (a task a row queued the rows of one group
        behind its lock, one thread decoding while the other waited)."""
        indices = np.asarray(indices, dtype=np.int64)
        numbers = np.searchsorted(self.table[:, 0], indices, side="right") - 1
        runs = np.split(np.arange(len(indices)), np.flatnonzero(np.diff(numbers)) + 1)
        block = np.empty((len(indices), self.shape[1]), dtype=self.dtype)

        def decode(positions: np.ndarray) -> None:
            for position in positions:
                block[position] = self[int(indices[position])]

        for _ in ordered_map(decode, runs, threads):
            pass
        return block

    def row(self, index: int) -> np.ndarray:
        number = int(np.searchsorted(self.table[:, 0], index, side="right")) - 1
        decoder, lock = self.group(number)
        with lock:  # one thread decodes a group at a time; the others wait for its frames
            try:
                return decoder.frame(index - int(self.table[number, 0]))
            except FrameCodecError as error:
                raise ModelFileError(f"{self._rows(number)} damaged: {error}") from None
