"""The model's frame store, chosen at fit. By default it is exact (a training frame comes back
bit for bit), and the smallest exact store at hand:

* ``source``: the clip's own coded packets, copied (:mod:`kpcacli.modelfile.sourcestore`), when
  the frames come from one video whose packets can be copied (:mod:`kpcacli.io.packets` says
  when not, and why), about the clip's own bytes;
* ``lossless``: lossless H.264 in groups of 32 (:mod:`kpcacli.modelfile.framecodec`), for
  everything else, and where the frames kept are so few among the groups that hold them
  (landmarks over a long clip) that coding them is smaller than copying;

or lossy H.264 at a constant rate factor when the user asks for one (``--store-crf N``, as
ffmpeg's ``-crf``). ``--store source`` or ``--store lossless`` asks for one exact store: the
lossless store's short groups decode a single frame faster than a clip's long ones.

A model keeps its training frames, and what they cost is most of the model. Lossless H.264
(:mod:`kpcacli.modelfile.framecodec`) keeps them bit-exact; a lossy store keeps them in far
fewer bytes, but its noise reaches every decoded frame, by an amount that depends on the clip
and on k and that no measurement at fit predicts well (docs/compression.md). So the lossy
store is the user's choice alone. With it, every training
frame is coded at that rate factor, the model is fitted to the frames *as stored* (the Gram
and every code come from them, so fit → encode → decode of a training frame returns it as
stored), and the model records the store's PSNR against the frames it was given, which
``kpca fit`` and ``kpca info`` print.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..io.filecopy import FileCopy
from ..io.packets import SourceCopy
from ..io.readers import Frame
from ..io.trainingstore import TrainingStore, digest_table
from ..numerics.metrics import psnr_of_mse
from ..utils.checks import check_choice, check_int
from ..utils.cores import available_cores
from ..utils.errors import ParameterError, param
from ..utils.parallel import ordered_map, thread_budget
from .filestore import copied_files, files_decode_alike
from .framecodec import (
    GIVEN_AS_ARRAYS,
    LOSSLESS_STORE,
    MAX_CRF,
    BackgroundCoding,
    EncodedFrames,
    FrameCodec,
    PendingStore,
    codable,
    encode_frames,
    finished,
    groups,
)
from .sourcestore import copied_frames, decodes_alike

STORES = ("source", "lossless", "compact")
# A copy whose groups hold more than this many frames for each frame kept is compared with the
# lossless store (coded beside it), and the smaller is kept: lossless H.264 takes 10 to 40 times
# a lossy clip's bytes a frame (docs/model-format.md), so below this the copy always wins.
COPY_RATIO = 4
PEAK = 255.0


def check_store(store: str | None, store_crf: int | None) -> tuple[str | None, int | None]:
    """The store and its rate factor as asked: None (the smallest exact store) unless a store
    or a rate factor is given; the compact store needs one (kpca does not choose it: see the
    module docstring)."""
    if store_crf is not None:
        store_crf = check_int(param("store_crf"), store_crf, 0, MAX_CRF)
    if store is None:
        if store_crf is None:
            return None, None
        store = "lossless" if store_crf == 0 else "compact"
    store = check_choice(param("store"), store, STORES)
    if store in ("lossless", "source") and store_crf not in (None, 0):
        raise ParameterError(f"{param('store_crf')} sets a lossy store's rate factor; the {store} store has none")
    if store == "compact" and store_crf is None:
        raise ParameterError(
            f"the compact store needs its rate factor, {param('store_crf')} N (0 to {MAX_CRF}, x264's constant rate "
            "factor): kpca does not choose one for you (docs/compression.md)"
        )
    return store, store_crf


@dataclass
class ModelStore:
    """The training frames as the model will store them.

    Attributes
    ----------
    frames : (n, d) ndarray or memory map
        The frames as stored: what the model is fitted to.
    encoded : EncodedFrames, PendingStore or None
        Their H.264 groups or the clip's packets for the model file, or the lossless store
        still being coded beside the fit (:meth:`finished` waits for it); None for frames kept
        by Blosc (points, 16-bit and float frames), which are stored exactly.
    exact : bool
        Whether `frames` are the frames given, bit for bit.
    arrays : dict
        The store's arrays the fit adds: ``frame_digests``, each frame's SHA-256.
    """

    frames: np.ndarray
    encoded: EncodedFrames | PendingStore | None
    exact: bool
    arrays: dict = dataclasses.field(default_factory=dict)

    def finished(self, progress: bool = False) -> EncodedFrames | None:
        """The store as written: waited for if it is still being coded, with its other arrays
        (each frame's digest)."""
        encoded = finished(self.encoded, progress)
        if encoded is not None:
            encoded.arrays = {**self.arrays, **encoded.arrays}
        return encoded


@contextlib.contextmanager
def model_store(
    store: TrainingStore,
    kind: str | None = None,
    crf: int | None = None,
    progress: bool = False,
    source: SourceCopy | FileCopy | str | None = None,
) -> Iterator[ModelStore]:
    """The frames of `store` coded for the model file, as the module docstring tells; a lossy
    store's decoded frames live in a temporary store beside `store`, removed on leaving.

    `source` is the source's own bytes of the frames, a clip's packets
    (:mod:`kpcacli.io.packets`) or image files (:mod:`kpcacli.io.filecopy`), or why there is
    none. The lossless store is coded on threads of its own (:class:`BackgroundCoding`), half
    the cores, while the caller fits on the others, and on all of them once the coding is
    done: the fit never reads the lossless store, its frames being the frames given.

    Raises
    ------
    ParameterError
        For ``source`` asked of frames whose source's bytes cannot be kept.
    """
    kind, crf = check_store(kind, crf)
    frames, shape = store.frames, store.frame_shape
    if not codable(shape, frames.dtype):
        if kind == "source":
            raise ParameterError(
                f"{param('store')} source keeps a video's packets or image files; these frames are not 8-bit images"
            )
        yield ModelStore(frames, None, True)
        return
    digests = {"frame_digests": digest_table(store.digests)}
    colour = len(shape) == 3
    copy, why = _copy(source, store, kind)
    clip = isinstance(copy, SourceCopy)
    if copy is not None and (kind == "source" or (clip and copy.copied_frames <= COPY_RATIO * len(copy.indices))):
        description = {"choice": "source" if kind == "source" else "smallest", "why": copy_reason(copy)}
        yield ModelStore(frames, stored_copy(copy, shape, description), True, digests)
        return
    if kind in ("lossless", None):
        crf, description = 0, {**LOSSLESS_STORE, "why": "asked for (--store lossless)" if kind else why}
    else:
        description = {"codec": "h264", "crf": crf, "choice": "given"}
    cores = available_cores()
    if crf == 0 and cores >= 2:
        with BackgroundCoding(frames, shape, FrameCodec(0, colour), description, cores // 2) as coding:
            with thread_budget(lambda: cores - coding.busy_threads(), blas=False):
                pending = coding if copy is None else SmallerStore(coding, copy, shape)
                yield ModelStore(frames, pending, True, digests)
        return
    encoded = encode_frames(frames, shape, FrameCodec(crf, colour), description, progress)
    if crf == 0:
        encoded = encoded if copy is None else SmallerStore(encoded, copy, shape).result()
        yield ModelStore(frames, encoded, True, digests)
        return
    with TrainingStore(store.directory) as decoded:
        decoded.extend(_decoded(encoded, store), progress=progress, total=frames.shape[0])
        description["psnr"] = round(psnr_of_mse(_mean_squared_error(frames, decoded.frames), PEAK), 2)
        yield ModelStore(decoded.frames, encoded, False, {"frame_digests": digest_table(decoded.digests)})


def _decoded(encoded: EncodedFrames, store: TrainingStore) -> Iterator[Frame]:
    """The frames of `encoded`, decoded group by group on this process's cores, named and
    numbered as in `store`."""
    rows = groups(encoded.n_frames)
    for group, pixels in zip(rows, ordered_map(encoded.decode_group, range(len(rows)), available_cores())):
        for row, values in zip(group, pixels):
            yield Frame(store.names[row], values.reshape(encoded.frame_shape), store.indices[row])


def _mean_squared_error(reference, estimate) -> float:
    """Mean squared error over every pixel of two ``(n, d)`` uint8 matrices, a row at a time."""
    total = 0.0
    for row in range(reference.shape[0]):
        difference = np.asarray(reference[row], dtype=np.float64) - np.asarray(estimate[row], dtype=np.float64)
        total += float(difference @ difference)
    return total / (reference.shape[0] * reference.shape[1])


def _copy(
    source: SourceCopy | FileCopy | str | None, store: TrainingStore, kind: str | None
) -> tuple[SourceCopy | FileCopy | None, str]:
    """The copy of the source's own bytes (a clip's packets, image files) the store may keep,
    or None and why not.

    Raises
    ------
    ParameterError
        When ``source`` was asked for and there is no copy.
    """
    if kind not in ("source", None):
        return None, ""
    if source is None:
        why = GIVEN_AS_ARRAYS
    elif isinstance(source, str):
        why = source
    elif not source.decoded and not _decodes_alike(source, store.digests):
        why = "the source's bytes, copied, did not decode to the frames read (a decoder that differs)"
    else:
        return source, ""
    if kind == "source":
        raise ParameterError(f"{param('store')} source: the source's own bytes cannot be kept: {why}")
    return None, why


def _decodes_alike(copy: SourceCopy | FileCopy, digests: list[bytes]) -> bool:
    return decodes_alike(copy, digests) if isinstance(copy, SourceCopy) else files_decode_alike(copy, digests)


def stored_copy(copy: SourceCopy | FileCopy, shape: tuple[int, ...], description: dict) -> EncodedFrames:
    """`copy` as the model file stores it: the clip's packets, or the image files."""
    if isinstance(copy, SourceCopy):
        return copied_frames(copy, shape, description)
    return copied_files(copy, shape, description)


def copy_reason(copy: SourceCopy | FileCopy) -> str:
    """Why a copy was kept: the frames it holds for those it keeps."""
    if isinstance(copy, FileCopy):
        return f"asked for (--store source): the {len(copy.paths)} image files as they are"
    kept, held, count = len(copy.indices), copy.copied_frames, len(copy.groups)
    groups = "its group of pictures" if count == 1 else f"its {count} groups of pictures"
    if kept == held:
        return f"every frame of {groups} is a training frame"
    return f"{groups} {'holds' if count == 1 else 'hold'} {held} frames for the {kept} kept"


class SmallerStore(PendingStore):
    """The smaller of the lossless store (still being coded, or coded) and the source's own
    bytes: image files, or a clip's packets where the training frames are few among the
    groups that hold them."""

    def __init__(self, coding: EncodedFrames | PendingStore, copy: SourceCopy | FileCopy, shape: tuple[int, ...]):
        self.coding, self.copy, self.shape = coding, copy, shape

    def result(self, progress: bool = False) -> EncodedFrames:
        coded = finished(self.coding, progress)
        copied = self.copy.nbytes  # image files: a stat each
        why = _smaller(self.copy, copied, coded)
        if copied < coded.nbytes:
            return stored_copy(self.copy, self.shape, {"choice": "smallest", "why": why})
        coded.description = {**coded.description, "why": why}
        return coded


def _smaller(copy: SourceCopy | FileCopy, copied: int, coded: EncodedFrames) -> str:
    """Why the smaller store was kept: the copy's `copied` bytes beside the lossless store's."""
    lossless = f"the frames in lossless H.264 {coded.nbytes:,} bytes"
    if isinstance(copy, FileCopy):
        return f"the {len(copy.paths)} image files take {copied:,} bytes, {lossless}"
    groups = "group of pictures holds" if len(copy.groups) == 1 else "groups of pictures hold"
    return (
        f"{len(copy.indices)} frames kept of the {copy.copied_frames} their {groups}: "
        f"the clip's packets take {copied:,} bytes, {lossless}"
    )
