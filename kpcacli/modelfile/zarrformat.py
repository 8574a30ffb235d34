"""Reading a model's Zarr store (:mod:`kpcacli.modelfile.zarrlayout` describes it): its
format version and size, its members checked before any chunk is decoded (never unpickling:
every array's codecs must be in ``ALLOWED_CODECS``), and its frames left on disk until asked
for (:mod:`kpcacli.modelfile.storedframes`).
"""

from __future__ import annotations

import contextlib
import json
import weakref
import zipfile
from pathlib import Path

import numpy as np

from ..utils.checks import FRAME_DTYPES
from ..utils.errors import ModelFileError
from .gramstorage import unpacked_gram
from .sourcestore import SOURCE_ARRAYS
from .storedframes import CompressedFrames, FramesOnDemand, VideoFrames
from .zarrlayout import (
    ALLOWED_CODECS,
    AXIS_ARRAYS,
    READ_VERSIONS,
    SMALL_ARRAYS,
    imported_module,
    is_url,
    quiet_numcodecs,
)
from .zarrread import Group as LightGroup
from .zarrread import NeedsZarr, opened_group
from .zarrread import open_group as open_light_group

STORE_ARRAYS = ("frame_digests", *SOURCE_ARRAYS)  # a coded store's arrays beside stream and groups


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
    storage = imported_module("zarr.storage")
    FsspecStore, LocalStore, ZipStore = storage.FsspecStore, storage.LocalStore, storage.ZipStore

    text = str(location)
    if is_url(text):
        try:
            store = FsspecStore.from_url(text, read_only=True)
        except ImportError as error:
            # A missing module names itself; an fsspec too old for zarr says so in its message.
            needs = f"needs {error.name}: pip install it" if error.name else f"fails: {error}"
            raise ModelFileError(f"reading '{text}' {needs}") from None
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
    kpcacli.modelfile.zarrread's :class:`~kpcacli.modelfile.zarrread.Group`, which raises ``NeedsZarr`` for an
    array only zarr reads)."""
    lite = isinstance(group, LightGroup)
    with contextlib.nullcontext() if lite else quiet_numcodecs():
        attributes = dict(group.attrs)
        arrays, coded, axes = _arrays_of(group, attributes, location)
    if coded:
        extras = {name: arrays.pop(name) for name in STORE_ARRAYS if name in arrays}
        frames = VideoFrames.of(
            arrays.pop("stream"),
            arrays.pop("groups"),
            attributes["frame_store"],
            attributes.get("frame_shape"),
            extras=extras,
        )
    else:
        frames = arrays.pop("frames")
    n, d = frames.shape if len(frames.shape) == 2 else (0, 0)
    if len(frames.shape) != 2 or n < 2 or np.dtype(frames.dtype) not in FRAME_DTYPES:
        raise ModelFileError(f"frames must be an (n, d) array of numbers. Got {frames.shape} {frames.dtype} instead.")
    if coded and arrays["origin"].shape != (d,):  # the frames' size comes from frame_shape alone
        raise ModelFileError(
            f"frame_shape must hold the frame length {arrays['origin'].shape[0]}. Got {attributes['frame_shape']} instead."
        )
    members = _members(arrays, attributes, location, (n, d), coded, axes)
    return members, frames if coded else CompressedFrames(frames)


def _arrays_of(group, attributes: dict, location) -> tuple[dict, bool, bool]:
    """The group's arrays a model of its format version holds, their metadata checked before
    any chunk is read; and whether its frames are coded (H.264) and it stores linear axes."""
    version = attributes.get("format_version")
    if version not in READ_VERSIONS:
        raise ModelFileError(f"'{location}' has model format version {version}; this kpca reads versions 1, 2 and 3")
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
        (*AXIS_ARRAYS, *(("axis_stream", "axis_groups") if axis_codec == "h264" else ("axis_frames",))) if axes else ()
    )
    arrays = {}
    source = (
        coded and isinstance(attributes["frame_store"], dict) and attributes["frame_store"].get("codec") == "source"
    )
    store_names = ("stream", "groups", *STORE_ARRAYS) if coded else ("frames",)
    for name in (*SMALL_ARRAYS, *store_names, *axis_names):
        try:
            arrays[name] = group[name]
        except KeyError:
            if name == "frame_digests" or (name in SOURCE_ARRAYS and not source):
                continue  # optional: models written before 2026-11-28 have no digests
            raise ModelFileError(f"'{location}' is not a kpca model: it lacks {name}") from None
        _check_array_metadata(name, arrays[name])
    return arrays, coded, axes


def _members(arrays: dict, attributes: dict, location, shape: tuple[int, int], coded: bool, axes: bool) -> dict:
    """Every member of the model: its arrays read, each within the bounds (n, d) = `shape`
    allows, and its attributes checked to be there."""
    n, d = shape
    limits = {"linear_gram": (n, n), "eigenvectors": (n, n), "codes": (n, n), "origin": (d,)}
    members = {}
    if axes:
        members["linear_axes"] = _axis_members(arrays, attributes, (n, d))
    for name, array in arrays.items():
        bound = limits.get(name, (n,))
        if name == "linear_gram" and len(array.shape) == 1:
            bound = (n * (n + 1) // 2,)  # its upper triangle (since 2026-11-28)
        if len(array.shape) != len(bound) or any(size > limit for size, limit in zip(array.shape, bound)):
            raise ModelFileError(f"{name} must fit {n} frames of {d} values. Got shape {array.shape} instead.")
        members[name] = np.asarray(array[...])
    members["linear_gram"] = unpacked_gram(members["linear_gram"], n)
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
    members["parameters"] = attributes.get("parameters")  # optional: a model fitted with parameters
    members["frame_store"] = attributes.get("frame_store") if coded else None
    return members


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
