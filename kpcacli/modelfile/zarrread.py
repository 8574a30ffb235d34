"""Reading the Zarr v3 subset kpca writes, without zarr.

A format-3 model of 8-bit frames holds only uncompressed arrays: the small matrices (one
chunk each, left out when all zero), the H.264 ``stream`` of the frames and its ``groups``
table, and the same for the axes, all with the single codec ``bytes``
(:func:`kpcacli.modelfile.zarrwrite.metadata_entries` writes them). Reading them needs a JSON parser
and the zip file, not zarr, whose import is a noticeable part of a short command
(docs/performance.md, design measurements). :func:`open_group` reads a local zip file or directory so; any array with another
codec (Blosc frames: format 2, and 16-bit, float or point frames) raises
:class:`NeedsZarr`, and the caller reads the model through zarr instead. URLs are always
read through zarr. ``tests/test_modelfile.py`` checks that both readers give the same
members.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from ..utils.errors import ModelFileError

# The data types kpca writes (dtype names, as Zarr v3 spells them).
DATA_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64")


class NeedsZarr(Exception):
    """An array this reader does not decode (a codec other than ``bytes``, another chunk
    grid or key encoding): the model is read through zarr."""


class _Store:
    """The keys of a model: members of a zip file, or files under a directory."""

    def __init__(self, location: Path):
        self.directory = location if location.is_dir() else None
        self.archive = None if self.directory is not None else zipfile.ZipFile(location)

    def get(self, key: str) -> bytes | None:
        """The bytes under `key`; None when there are none."""
        if self.archive is not None:
            try:
                return self.archive.read(key)
            except KeyError:
                return None
        path = self.directory / key
        return path.read_bytes() if path.is_file() else None

    def close(self) -> None:
        if self.archive is not None:
            self.archive.close()


def _document(store: _Store, key: str, node_type: str) -> dict:
    data = store.get(key)
    if data is None:
        raise KeyError(key)
    document = json.loads(data)
    if not isinstance(document, dict) or document.get("zarr_format") != 3 or document.get("node_type") != node_type:
        raise ModelFileError(f"{key} is not the metadata of a Zarr v3 {node_type}")
    return document


class Array:
    """One array of the group, read chunk by chunk: ``array[...]``, ``array[i]`` (a row) and
    ``array[a:b]`` (rows, or bytes of a 1-D array) read only the chunks they need."""

    def __init__(self, store: _Store, name: str, document: dict):
        shape, dtype = document.get("shape"), document.get("data_type")
        grid = document.get("chunk_grid", {})
        keys = document.get("chunk_key_encoding", {})
        codecs = document.get("codecs")
        if not (isinstance(shape, list) and all(isinstance(v, int) and v >= 0 for v in shape)):
            raise ModelFileError(f"{name} has no valid shape")
        if dtype not in DATA_TYPES:
            raise ModelFileError(f"{name} must hold numbers. Got dtype {str(dtype)[:20]} instead.")
        chunks = grid.get("configuration", {}).get("chunk_shape") if grid.get("name") == "regular" else None
        if not (
            isinstance(chunks, list) and len(chunks) == len(shape) and all(isinstance(v, int) and v > 0 for v in chunks)
        ):
            raise NeedsZarr(name)
        if keys != {"name": "default", "configuration": {"separator": "/"}}:
            raise NeedsZarr(name)
        if not isinstance(codecs, list) or [codec.get("name") for codec in codecs if isinstance(codec, dict)] != [
            "bytes"
        ]:
            raise NeedsZarr(name)
        endian = (codecs[0].get("configuration") or {}).get("endian", "little")
        self.name = name
        self.store = store
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype).newbyteorder("<" if endian == "little" else ">")
        self.chunks = tuple(chunks)
        self.fill_value = document.get("fill_value", 0)
        self.codec_names = ["bytes"]

    def _chunk(self, index: tuple[int, ...]) -> np.ndarray:
        """Chunk `index`, whole (edge chunks are stored whole, as zarr stores them)."""
        data = self.store.get(f"{self.name}/c/" + "/".join(str(i) for i in index))
        if data is None:
            return np.full(self.chunks, self.fill_value or 0, dtype=self.dtype.newbyteorder("="))
        size = int(np.prod(self.chunks)) * self.dtype.itemsize
        if len(data) != size:
            raise ModelFileError(f"a chunk of {self.name} holds {len(data)} bytes where {size} belong")
        return np.frombuffer(data, dtype=self.dtype).reshape(self.chunks).astype(self.dtype.newbyteorder("="))

    def _rows(self, start: int, stop: int) -> np.ndarray:
        """Rows (first axis) `start` to `stop`, every column."""
        out = np.empty((max(stop - start, 0), *self.shape[1:]), dtype=self.dtype.newbyteorder("="))
        if out.size == 0:
            return out
        step = self.chunks[0]
        for first in range(start - start % step, stop, step):
            block = self._chunk_row(first // step)
            low, high = max(start, first), min(stop, first + step)
            out[low - start : high - start] = block[low - first : high - first]
        return out

    def _chunk_row(self, number: int) -> np.ndarray:
        """Every chunk of row-chunk `number`, side by side, cut to the array's shape."""
        if len(self.shape) == 1:
            return self._chunk((number,))
        if len(self.shape) != 2:
            raise NeedsZarr(self.name)
        columns = range(0, self.shape[1], self.chunks[1])
        block = np.concatenate([self._chunk((number, c // self.chunks[1])) for c in columns], axis=1)
        return block[:, : self.shape[1]]

    def __getitem__(self, key):
        if key is Ellipsis:
            if len(self.shape) == 0:
                raise NeedsZarr(self.name)
            return self._rows(0, self.shape[0])
        if isinstance(key, (int, np.integer)):
            index = int(key) + (self.shape[0] if key < 0 else 0)
            if not 0 <= index < self.shape[0]:
                raise IndexError(f"row {key} of {self.shape[0]}")
            return self._rows(index, index + 1)[0]
        if isinstance(key, slice) and key.step in (None, 1):
            start, stop, _ = key.indices(self.shape[0])
            return self._rows(start, stop)
        raise TypeError(f"{self.name}[{key!r}] is not read here")


class Group:
    """The root group: its attributes, and its arrays by name (``group[name]``, a KeyError
    for a missing one, as zarr's)."""

    def __init__(self, store: _Store):
        self.store = store
        attributes = _document(store, "zarr.json", "group").get("attributes", {})
        if not isinstance(attributes, dict):
            raise ModelFileError("the group's attributes are not a mapping")
        self.attrs = attributes

    def __getitem__(self, name: str) -> Array:
        return Array(self.store, name, _document(self.store, f"{name}/zarr.json", "array"))


def open_group(location) -> tuple[Group, _Store]:
    """The model at a local path (zip file or directory) and its store (to close).

    Raises
    ------
    ModelFileError
        When there is no Zarr group.
    """
    store = _Store(Path(location))
    return opened_group(store, lambda: Group(store), KeyError, location), store


def opened_group(store, open_root, missing: type[Exception], location):
    """``open_root()``, the root group of `store`; the store is closed if that fails, and
    `missing` (the reader's error for a store without a group) is a ModelFileError."""
    try:
        return open_root()
    except missing:
        store.close()
        raise ModelFileError(f"'{location}' is not a kpca model (no Zarr group)") from None
    except BaseException:
        store.close()
        raise
