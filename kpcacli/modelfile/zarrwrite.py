"""Writing a model's Zarr store (:mod:`kpcacli.modelfile.zarrlayout` describes it): the
metadata documents zarr-python would write, the chunks compressed on kpca's threads while the
rest of the work runs, and the entries written in a fixed order with fixed zip timestamps to
one zip file, a directory or an fsspec URL, so identical input gives an identical file.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import posixpath
import shutil
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from ..utils.atomic import AnonymousFile, check_place, directory_mode, write_error
from ..utils.cores import available_cores
from ..utils.errors import ModelFileError
from ..utils.parallel import ordered_map, submit_uninterrupted
from ..utils.progress import progress_bar
from .framecodec import EncodedFrames, codable
from .zarrlayout import (
    FIXED_TIMESTAMP,
    FORMAT_VERSION,
    SMALL_ARRAYS,
    STREAM_CHUNK,
    AxisMembers,
    bytes_codec,
    chunk_columns,
    compress_frame,
    frame_chunk_key,
    frames_codecs,
    is_directory_target,
    is_url,
)

CODED_MEMBERS = ("stream", "axis_stream", "frames", "axis_frames")  # compressed already: stored in a zip as they are


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
    through zarr, whose import is a noticeable part of a short fit (docs/performance.md,
    design measurements).
    """
    scalars = {name: _json_value(value) for name, value in members.items() if name not in SMALL_ARRAYS}
    scalars["frame_shape"] = [int(v) for v in members["frame_shape"]]
    scalars["frame_names"] = [str(v) for v in members["frame_names"]]
    scalars["format_version"] = int(members.get("format_version", FORMAT_VERSION))
    small = dict.fromkeys(SMALL_ARRAYS)
    if encoded is not None:
        scalars["frame_store"] = encoded.description
        small["groups"] = group_table(encoded)
        small.update(encoded.arrays)
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
        entries[f"{name}/zarr.json"] = array_metadata(array.shape, array.dtype, array.shape, [bytes_codec(array.dtype)])
        if np.any(array):
            entries[f"{name}/c/" + "/".join("0" * array.ndim)] = array.tobytes()
    if encoded is None:
        frames_chunks = (1, chunk_columns(d))
        entries["frames/zarr.json"] = array_metadata((n, d), dtype, frames_chunks, frames_codecs(dtype))
    else:
        entries.update(_stream_metadata("stream", encoded.nbytes))
    return dict(sorted(entries.items()))


def stream_chunk(size: int) -> int:
    """The chunk of a stream of `size` bytes: at most ``STREAM_CHUNK``, and as even as the
    count of chunks allows, since zarr pads the last chunk to a whole one (a stream of 1.1
    chunks padded to 2 stored nearly a chunk of zeros)."""
    count = -(-max(size, 1) // STREAM_CHUNK)
    return -(-max(size, 1) // count)


def _stream_metadata(name: str, size: int) -> dict[str, bytes]:
    """The ``zarr.json`` of a 1-D uint8 array of `size` bytes of H.264 groups."""
    chunks = (stream_chunk(size),)
    return {f"{name}/zarr.json": array_metadata((size,), np.uint8, chunks, [bytes_codec(np.dtype(np.uint8))])}


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
    step = stream_chunk(len(data))
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
        The frames as H.264 groups (:mod:`kpcacli.modelfile.framecodec`), stored instead of Blosc chunks;
        `frames` must be what they decode to.
    axes : AxisMembers, optional
        The distance solver's linear-PCA axes (:mod:`kpcacli.modelfile.axes`).
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
    an error, Ctrl-C or SIGKILL leaves the previous model and nothing else.

    The coded frames are stored as they are; the metadata and the small arrays (the n x n
    Gram, the mean frame) are deflated by the zip itself, which every zip reader undoes: it
    halves the Gram and takes the mean frame to about a quarter (docs/model-format.md)."""
    check_place(path)  # the anonymous file's creation names the model when it fails (write)
    with AnonymousFile(path.parent, prefix=f".{path.stem}-") as temporary:
        with zipfile.ZipFile(temporary.file, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:

            def put(key: str, data: bytes) -> None:
                info = zipfile.ZipInfo(key, date_time=FIXED_TIMESTAMP)
                if key.split("/", 1)[0] not in CODED_MEMBERS:
                    info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)

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
