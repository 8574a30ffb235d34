"""The model's frame store, chosen at fit: lossless H.264, or H.264 at a constant rate factor
chosen per model by measuring what the store's noise costs frames the model never saw.

A model keeps its training frames, and what they cost is most of the model. Lossless H.264
(:mod:`kpcacli.framecodec`) keeps them bit-exact in a quarter of their raw bytes; a lossy
store keeps them in a few per cent, but its noise reaches every decoded frame, and how much
that matters depends on the clip: on a grainy clip whose held-out frames decode at 24 dB the
noise of CRF 20 is invisible (it even removes grain), on a clean clip whose held-out frames
decode at 36 dB far better stores already cost half a decibel. So the rate factor is chosen
per model, by measurement:

1. **Calibration windows**, ``WINDOWS`` runs of ``WINDOW`` consecutive training frames spread
   over the clip, are split into their even frames (a model's training frames) and their odd
   ones (frames that model never saw, half-way between two of its frames, as a clip's other
   frames are between the training frames).
2. A model with the user's parameters is fitted to the even frames as they are, and to the
   even frames through H.264 at a candidate rate factor; each encodes and decodes the odd
   frames with the default solver, and the mean PSNR against the true odd frames is measured.
3. The largest rate factor (the smallest store) whose held-out PSNR is within ``BUDGET_DB``
   of the lossless one is chosen, by bisection over ``1 … MAX_CHOSEN_CRF``: x264's size falls
   monotonically with the rate factor, and the measured loss grows with it but for noise.

The budget is well under the 0.5 dB a user would notice in a table because the windows'
models hold few frames and decode their held-out frames less well than the whole model does
its own, so they feel the store's noise less: at the same rate factor the loss on the windows
was a half to a third of the loss on the clip's own held-out frames. Measured with
``python benchmarks/compression.py store`` (the clips' odd frames, models of their even frames,
-k 8), held-out PSNR lost against the lossless store and model size against the source:

========================  ======================  ======================  ======================
budget on the windows     0.10 dB                 0.13 dB (chosen)        0.15 dB
========================  ======================  ======================  ======================
the sample hand, mp4      CRF 5: 0.34 dB, 2.7 x   CRF 6: 0.41 dB, 2.6 x   CRF 7: 0.51 dB, 2.5 x
640 x 272 stand-in        CRF 14: 0.34 dB, 3.0 x  CRF 16: 0.32 dB, 2.4 x  CRF 16: 0.32 dB, 2.4 x
========================  ======================  ======================  ======================

(on the grainy stand-in the loss hardly depends on the rate factor, and x264 drops the grain
at CRF 16, hence the jump in size). Then every training frame is coded at that rate factor, the model is
fitted to the frames *as stored* (the Gram and every code come from them, so fit → encode →
decode of a training frame returns it as stored), and the model records the choice and the
store's PSNR against the frames it was given (``kpca info``). ``store_crf`` sets the rate
factor instead (0: lossless).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .checks import check_choice, check_int
from .errors import ParameterError, param
from .estimator import FrameModel
from .framecodec import MAX_CRF, EncodedFrames, FrameCodec, codable, encode_frames, groups
from .metrics import mean_psnr, mse, psnr_of_mse
from .parallel import available_cores, ordered_map
from .preimage import applicable_solvers, default_solver
from .progress import progress_bar
from .sources import Frame
from .store import FrameStore

STORES = ("compact", "lossless")
BUDGET_DB = 0.13  # held-out PSNR the compact store may cost on the calibration windows (see above)
WINDOWS, WINDOW = 4, 8  # runs of consecutive training frames measured: their even frames fit, their odd held out
MIN_WINDOW = 8  # below this many training frames nothing can be measured: lossless
MAX_CHOSEN_CRF = 30  # beyond, x264's blocks show whatever the measure says
PEAK = 255.0


def check_store(store: str, store_crf: int | None) -> tuple[str, int | None]:
    """The store and its rate factor as asked: a CRF in [0, 51] with the compact store only."""
    store = check_choice(param("store"), store, STORES)
    if store_crf is not None:
        store_crf = check_int(param("store_crf"), store_crf, 0, MAX_CRF)
        if store == "lossless" and store_crf != 0:
            raise ParameterError(
                f"{param('store_crf')} sets the compact store's rate factor; the lossless store has none"
            )
    return store, store_crf


@dataclass
class StoredFrames:
    """The training frames as the model will store them.

    Attributes
    ----------
    frames : (n, d) ndarray or memory map
        The frames as stored: what the model is fitted to.
    encoded : EncodedFrames or None
        Their H.264 groups for the model file; None for frames kept by Blosc (points, 16-bit
        and float frames), which are stored exactly.
    exact : bool
        Whether `frames` are the frames given, bit for bit.
    """

    frames: np.ndarray
    encoded: EncodedFrames | None
    exact: bool


@contextlib.contextmanager
def coded_store(
    store: FrameStore,
    model: FrameModel,
    kind: str = "compact",
    crf: int | None = None,
    progress: bool = False,
) -> Iterator[StoredFrames]:
    """The frames of `store` coded for the model file, as the module docstring tells; a lossy
    store's decoded frames live in a temporary store beside `store`, removed on leaving."""
    kind, crf = check_store(kind, crf)
    frames, shape = store.frames, store.frame_shape
    if not codable(shape, frames.dtype):
        yield StoredFrames(frames, None, True)
        return
    colour = len(shape) == 3
    if kind == "lossless":
        crf, description = 0, {"codec": "h264", "crf": 0, "choice": "lossless"}
    elif crf is not None:
        description = {"codec": "h264", "crf": crf, "choice": "given"}
    else:
        crf, description = choose_crf(frames, shape, model, progress)
    encoded = encode_frames(frames, shape, FrameCodec(crf, colour), description, progress)
    if crf == 0:
        yield StoredFrames(frames, encoded, True)
        return
    with FrameStore(store.directory) as decoded:
        decoded.extend(_decoded(encoded, store), progress=progress, total=frames.shape[0])
        description["psnr"] = round(psnr_of_mse(_mean_squared_error(frames, decoded.frames), PEAK), 2)
        yield StoredFrames(decoded.frames, encoded, False)


def _decoded(encoded: EncodedFrames, store: FrameStore) -> Iterator[Frame]:
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


# -- choosing the rate factor --------------------------------------------------------------
def choose_crf(frames, frame_shape: tuple[int, ...], model: FrameModel, progress: bool = False) -> tuple[int, dict]:
    """The largest rate factor whose store costs at most ``BUDGET_DB`` of held-out PSNR on the
    calibration windows, and the description the model records of the choice."""
    n = frames.shape[0]
    if n < MIN_WINDOW:
        return 0, {"codec": "h264", "crf": 0, "choice": f"lossless: fewer than {MIN_WINDOW} frames to measure"}
    windows = calibration_windows(n)
    train = [np.asarray(frames[window.start : window.stop : 2]) for window in windows]
    held_out = np.concatenate([np.asarray(frames[window.start + 1 : window.stop : 2]) for window in windows])
    reference = held_out_psnr(model, np.concatenate(train), held_out, frame_shape)
    if not np.isfinite(reference):  # the held-out frames decode exactly: keep the frames so
        return 0, {"codec": "h264", "crf": 0, "choice": "lossless: held-out frames decode exactly"}
    colour = len(frame_shape) == 3
    low, high, best = 1, MAX_CHOSEN_CRF, 0
    with progress_bar(progress, desc="choosing the store", total=5, unit="trial") as bar:
        while low <= high:
            middle = (low + high) // 2
            codec = FrameCodec(middle, colour)

            def through_codec(rows: np.ndarray, codec=codec) -> np.ndarray:
                stream = codec.encode(rows.reshape((len(rows), *frame_shape)))
                return codec.decode(stream, len(rows), frame_shape)

            stored = np.concatenate(list(ordered_map(through_codec, train, available_cores())))
            if reference - held_out_psnr(model, stored, held_out, frame_shape) <= BUDGET_DB:
                best, low = middle, middle + 1
            else:
                high = middle - 1
            bar.update()
    # The trials' PSNRs are not recorded: computed with whatever BLAS threads this process has,
    # they may differ in the last digits between a fit here and on a cluster, whose model files
    # must be the same bytes.
    description = {
        "codec": "h264",
        "crf": best,
        "choice": f"calibration windows' held-out frames lose at most {BUDGET_DB} dB",
        "windows": [[window.start, window.stop] for window in windows],
    }
    return best, description


def calibration_windows(n: int) -> list[range]:
    """``WINDOWS`` runs of ``WINDOW`` consecutive frames spread evenly over `n` frames (all
    `n` as one run when there are too few): a clip's motion varies along it, and one window
    in the middle of a there-and-back pan measures only its slow turning point."""
    if n < WINDOWS * WINDOW:
        return [range(0, n)]
    starts = np.linspace(0, n - WINDOW, WINDOWS).round().astype(int)
    return [range(int(start), int(start) + WINDOW) for start in starts]


def held_out_psnr(model: FrameModel, train: np.ndarray, held_out: np.ndarray, frame_shape: tuple[int, ...]) -> float:
    """PSNR of the mean squared error of `held_out` (rows) encoded and decoded by a model with
    `model`'s parameters fitted to `train` (rows), with the solver decode uses by default (the
    first that applies, for a kernel the default does not take)."""
    trial = copy.copy(model)
    trial.progress = False
    if trial.n_components is not None:
        trial.n_components = min(trial.n_components, len(train) - 1)
    trial.fit(train, frame_shape=frame_shape)
    solver = applicable_solvers(trial.state_, default_solver(trial.state_))[0][0]
    decoded = trial.decode(trial.encode(held_out.reshape((len(held_out), *frame_shape))), solver=solver)
    return mean_psnr([psnr_of_mse(mse(row, back.ravel()), PEAK) for row, back in zip(held_out, decoded)])
