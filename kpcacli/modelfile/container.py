"""The model: a :class:`~kpcacli.model.state.FittedState` on disk, written in format 3, read in 1, 2 or 3.

Formats 2 and 3 (:mod:`kpcacli.modelfile.zarrformat`) are a Zarr v3 group with compressed, chunked frames:
one zip file by default, or a directory (a name ending in ``/`` or ``.zarr``), or an fsspec URL
(``file://``, ``s3://`` with s3fs). Format 3 stores 8-bit grey and colour frames as groups of
H.264 (:mod:`kpcacli.modelfile.framecodec`), lossless unless the fit chose a lossy store
(:mod:`kpcacli.modelfile.storechoice`); format 2 compressed every frame alone with Blosc. Format 1,
written by kpca 0.1, is an ``.npz`` of plain ``.npy`` members with the frames stored raw
(memory-mapped on reading); it still loads.

The members, by name, are :mod:`kpcacli.modelfile.schema`'s; format 1's reader is
:mod:`kpcacli.modelfile.legacy`.

Writing is atomic and deterministic: identical input gives an identical file. Reading never
unpickles (``allow_pickle=False`` for format 1; an allow-list of codecs for format 2). Every
member is checked on reading (:meth:`FittedState.validate`): a damaged or hand-edited model
is refused with one line naming the member.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import zipfile
from functools import cached_property
from pathlib import Path

import numpy as np

from ..io.provenance import Provenance
from ..io.trainingstore import frame_digests
from ..model.framerows import RowsOnDemand, read_rows
from ..model.parameters import parameters_of_attributes
from ..model.solverchoice import check_solver_choice
from ..model.state import FittedState
from ..numerics.gram import LinearGram
from ..numerics.kernels import Kernel
from ..numerics.linearaxes import AxisFrames, LinearAxes
from ..preimage import SOLVERS, rule_choice
from ..utils.checks import check_array, check_int, check_real
from ..utils.errors import DAMAGED_FILE_ERRORS, ModelFileError, ParameterError
from .axes import axis_members, worth_storing
from .framecodec import (
    GIVEN_AS_ARRAYS,
    LOSSLESS_STORE,
    EncodedFrames,
    FrameCodec,
    PendingStore,
    codable,
    encode_frames,
    finished,
)
from .gramstorage import packed_gram
from .integrity import check_state
from .legacy import FORMAT_1, read_format_1
from .schema import SCALAR_KINDS
from .storedframes import VideoFrames
from .zarrformat import close_store, holds_zarr
from .zarrformat import format_version as zarr_format_version
from .zarrformat import read as read_format_2
from .zarrlayout import FORMAT_VERSION, is_url
from .zarrwrite import write as write_store


def members(state: FittedState) -> dict:
    """Every member but the frames, in file order."""
    kernel = state.kernel
    return {
        "format_version": np.int64(FORMAT_VERSION),
        "kernel": np.str_(kernel.name),
        "beta": np.float64(np.nan if kernel.beta is None else kernel.beta),
        "gamma": np.float64(np.nan if kernel.gamma is None else kernel.gamma),
        "degree": np.int64(kernel.degree),
        "coef0": np.float64(kernel.coef0),
        "centred": np.bool_(state.centred),
        "frame_shape": np.asarray(state.frame_shape, dtype=np.int64),
        "frame_names": np.asarray([str(name) for name in state.frame_names], dtype=np.str_),
        "eigenvalues": np.asarray(state.eigenvalues, dtype=np.float64),
        "eigenvectors": np.asarray(state.eigenvectors, dtype=np.float64),
        "codes": np.asarray(state.codes, dtype=np.float64),
        "linear_gram": packed_gram(state.linear_gram.shifted),
        "origin": state.linear_gram.origin,
        "origin_dots": state.linear_gram.origin_dots,
        "origin_norm2": np.float64(state.linear_gram.origin_norm2),
        "gram_row_means": np.asarray(state.gram_row_means, dtype=np.float64),
        "gram_mean": np.float64(state.gram_mean),
        **({"provenance": state.provenance.as_attributes()} if state.provenance is not None else {}),
        # As the state records it: measured by the fit; a state derived without one (and a
        # model older than the choice) records the kernel's rule, unmeasured.
        "solver_choice": (state.solver_choice or rule_choice(state)).as_attributes(),
        **({"parameters": state.parameters.as_attributes()} if state.parameters is not None else {}),
    }


def save(
    state: FittedState,
    location: str | os.PathLike,
    progress: bool = False,
    compressor=None,
    encoded: EncodedFrames | PendingStore | None = None,
) -> FittedState:
    """Write `state` to `location` (a file, a directory or a URL) atomically, in format 3.

    8-bit grey and colour frames are stored as the fit kept them: `encoded` when the fit coded
    them already or codes them still (the source's own bytes, lossless or lossy H.264), a loaded
    model's store as it is, losslessly here otherwise. Other frames are compressed with Blosc,
    by `compressor` (a :class:`kpcacli.modelfile.zarrwrite.FrameCompressor` that saw them load)
    when given. Everything else is written as the state holds it: the solver choice and the
    distance solver's axes the fit prepared (:mod:`kpcacli.modelfile.axes`), these where they
    are worth their bytes beside the frames' (:func:`kpcacli.modelfile.axes.worth_storing`);
    saving measures nothing. Returns `state` as written: without its axes where they were not.
    """
    stored = state.frames.frames if isinstance(state.frames, SavedModelFrames) else state.frames
    if encoded is None and isinstance(stored, VideoFrames) and state.frame_store is not None:
        encoded = stored.encoded(state.frame_store)  # a loaded model's store, written again as it is
    if encoded is None and codable(state.frame_shape, state.frames.dtype):
        codec = FrameCodec(0, state.is_colour)
        description = {**LOSSLESS_STORE, "why": GIVEN_AS_ARRAYS}
        encoded = encode_frames(state.frames, state.frame_shape, codec, description, progress)
        encoded.arrays["frame_digests"] = frame_digests(state.frames)
    compressed = compressor.chunks_for(state.frames) if compressor is not None and encoded is None else None
    encoded = finished(encoded, progress)
    axes = axis_members(state.linear_axes, state.frame_shape)
    if not worth_storing(axes, encoded):  # formed from every frame at decode instead
        axes, state = None, dataclasses.replace(state, linear_axes=None)
    write_store(
        members(state),
        state.frames,
        location,
        progress=progress,
        compressed=compressed,
        encoded=encoded,
        axes=axes,
    )
    return state


class SavedModelFrames(RowsOnDemand):
    """The training frames of a model just saved, read back from it only when first used
    (:class:`kpcacli.model.framerows.RowsOnDemand`).

    After a fit the store's memory map is gone; the fitted state keeps these instead, so
    ``kpca fit`` reports its result without reading the model back, which would import zarr
    and open the store.
    """

    def __init__(self, location: str | os.PathLike, shape: tuple[int, int], dtype: np.dtype):
        self.location = location
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)

    @cached_property
    def frames(self):
        return load(self.location).frames

    def __getitem__(self, key):
        return self.frames[key]

    def rows(self, indices, threads: int) -> np.ndarray:
        """The frames at `indices` (increasing), as the loaded model's frames read them."""
        return read_rows(self.frames, indices, threads)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.frames, dtype=dtype)


def with_saved_frames(
    state: FittedState,
    location: str | os.PathLike,
    encoded: EncodedFrames | None = None,
) -> FittedState:
    """`state`, once saved to `location` (its frames as `encoded`, when given), with its
    frames read from there (:class:`SavedModelFrames`)."""
    return dataclasses.replace(
        state,
        frames=SavedModelFrames(location, state.frames.shape, state.frames.dtype),
        frame_store=encoded.description if encoded is not None else state.frame_store,
    )


def load(location: str | os.PathLike) -> FittedState:
    """Read and validate a model (format 1 or 2, file, directory or URL).

    Format-1 frames are memory-mapped; format-2 frames are read on demand
    (:class:`kpcacli.modelfile.storedframes.CompressedFrames`).

    Raises
    ------
    ModelFileError
        When the model is missing, not a kpca model, truncated or damaged, of another format
        version, holds pickled objects or a codec that could run code, or has a member that
        is missing, misshapen, out of range or inconsistent with the others.
    """
    path = Path(location)
    if not is_url(location):
        if not path.exists():
            raise ModelFileError(
                f"model file '{path}' does not exist; fit one first (kpca fit, or FrameModel.fit and save)"
            )
        if path.is_dir() and not (path / "zarr.json").is_file():
            raise ModelFileError(f"model path '{path}' is a folder, not a kpca model")
        if path.is_file() and not zipfile.is_zipfile(path):
            with open(path, "rb") as handle:
                cut_short = handle.read(4) == b"PK\x03\x04"  # a zip's start without its directory at the end
            if cut_short:
                raise ModelFileError(
                    f"'{path}' is damaged: a zip file cut short ({path.stat().st_size:,} bytes, its directory "
                    "missing); copy or write the model again"
                )
            raise ModelFileError(f"'{path}' is not a kpca model (not a zip file)")
    try:
        with contextlib.ExitStack() as on_error:
            if format_version(location) != FORMAT_1:
                arrays, frames = read_format_2(location)
                on_error.callback(close_store, frames)  # a refused model is closed now, not when collected
            else:
                arrays, frames = read_format_1(path)
            state = _state(arrays, frames)
            check_state(state)
            on_error.pop_all()
    except ModelFileError as error:
        message = str(error)
        raise ModelFileError(
            message if str(location) in message else f"'{location}' is not a valid kpca model: {message}"
        ) from None
    except ParameterError as error:  # the kernel's own check of its parameters
        raise ModelFileError(f"'{location}' is not a valid kpca model: {error}") from None
    except DAMAGED_FILE_ERRORS as error:  # zarr's own errors derive from ValueError
        raise ModelFileError(f"'{location}' is damaged or truncated ({type(error).__name__}: {error})") from None
    return state


def format_version(location: str | os.PathLike) -> int:
    """The format of a model that :func:`load` accepted: 1 (an ``.npz``), 2 or 3 (Zarr)."""
    path = Path(location)
    if not (is_url(location) or path.is_dir() or holds_zarr(path)):
        return FORMAT_1
    return zarr_format_version(location)


def _state(arrays: dict, frames: np.ndarray) -> FittedState:
    """Build the state from the members, checking each scalar's shape and kind on the way
    (ranges and consistency are :meth:`FittedState.validate`'s)."""
    error = ModelFileError
    for name, kinds in SCALAR_KINDS.items():
        check_array(name, arrays[name], (), kinds=kinds, finite=False, error=error)
    check_array("frame_shape", arrays["frame_shape"], (None,), kinds="iu", error=error)
    check_array("frame_names", arrays["frame_names"], (None,), kinds="U", error=error)
    kernel = Kernel(
        str(arrays["kernel"]),
        beta=_optional(arrays["beta"]),
        gamma=_optional(arrays["gamma"]),
        degree=int(arrays["degree"]),
        coef0=float(arrays["coef0"]),
    )
    state = FittedState(
        kernel=kernel,
        centred=bool(arrays["centred"]),
        frames=frames,
        frame_shape=tuple(check_int("frame_shape", int(v), 1, error=error) for v in arrays["frame_shape"]),
        frame_names=tuple(str(name) for name in arrays["frame_names"]),
        linear_gram=LinearGram(
            arrays["linear_gram"],
            arrays["origin"],
            arrays["origin_dots"],
            float(arrays["origin_norm2"]),
        ),
        gram_row_means=arrays["gram_row_means"],
        gram_mean=float(arrays["gram_mean"]),
        eigenvalues=arrays["eigenvalues"],
        eigenvectors=arrays["eigenvectors"],
        codes=arrays["codes"],
        provenance=(
            Provenance.from_attributes(arrays["provenance"], len(frames))
            if arrays.get("provenance") is not None
            else None
        ),
        frame_store=arrays.get("frame_store") if isinstance(frames, VideoFrames) else None,
        linear_axes=_linear_axes(arrays.get("linear_axes")),
        solver_choice=check_solver_choice(arrays.get("solver_choice"), sorted(SOLVERS), error=error),
        parameters=parameters_of_attributes(arrays.get("parameters"), frames.shape[0], error=error),
    )
    if state.solver_choice is None:  # a model older than the measured choice keeps its kernel's rule
        state = dataclasses.replace(state, solver_choice=rule_choice(state))
    return state


def _linear_axes(members: dict | None) -> LinearAxes | None:
    """The stored axes (:func:`kpcacli.modelfile.zarrformat.read`'s ``linear_axes`` members), their
    frames read when a decode first needs them; values are checked by :func:`check_state`."""
    if members is None:
        return None
    description = members["description"]
    offset = description.get("offset", 0.0) if description.get("codec") == "h264" else 0.0
    offset = check_real("linear_axes offset", offset, error=ModelFileError)  # the frames' converter needs a number
    stored = members["frames"]
    frames = AxisFrames(stored, members["axis_scales"], offset, description, stored=stored)
    return LinearAxes(members["axis_eigenvectors"], members["axis_eigenvalues"], members["axis_centred_norms"], frames)


def _optional(value: np.ndarray) -> float | None:
    """NaN marks a parameter the kernel does not use."""
    return None if np.isnan(value) else float(value)
