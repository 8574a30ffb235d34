"""Workflows: files in, model / codes / frames out. What each ``kpca`` command runs.

Each is written once, against an engine (:mod:`kpcacli.engines.engine`): this process, or a Dask
cluster when a `scheduler` is given (:func:`engine_for`, the one place that tells them apart).
Each takes what it reads first, a :class:`~kpcacli.io.request.FrameRequest` or a codes file, then
the model, then keyword-only options in one order (``fit_sources(request, model_path,
model=...)``, ``encode_sources(request, model_path, output=...)``, ``decode_codes(codes,
model_path, output=...)``); frames stream through the engine in bounded batches, and outputs
are written atomically. The click layer only builds the request and the unfitted estimator,
calls one of these and reports.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engines.engine import Engine, InProcess
from ..estimators.estimator import FrameModel
from ..io.codes import codes_header, read_codes_file, write_matrix
from ..io.outputs import FrameTarget, check_rows_target, check_video_options, write_frames
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..model.state import FittedState
from ..model.validation import check_codes
from ..modelfile import load as load_state
from ..modelfile import save as save_state
from ..modelfile import with_saved_frames
from ..modelfile.framecodec import finished
from ..modelfile.storechoice import check_store, model_store
from ..modelfile.zarrlayout import is_directory_target, is_url
from ..numerics.landmarks import check_landmarks
from ..numerics.novelty import Novelty
from ..preimage import checked_solver
from ..utils.atomic import check_target
from ..utils.checks import check_choice, check_real
from ..utils.errors import InputError, ParameterError, param
from ..utils.progress import counted, progress_bar
from .fitparameters import kept_rows, read_fit_parameters


def engine_for(scheduler: str | None = None, progress: bool = False) -> Engine:
    """The engine a workflow runs on: the dask.distributed cluster whose scheduler is at the
    address `scheduler` (:mod:`kpcacli.engines.cluster`, which imports Dask), else this process."""
    if scheduler is None:
        return InProcess(progress)
    from ..engines.cluster import Cluster

    return Cluster(scheduler, progress=progress)


# -- fit ----------------------------------------------------------------------------------
def fit_sources(
    request: FrameRequest,
    model_path,
    *,
    model: FrameModel | None = None,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    codes_path: str | None = None,
    scheduler: str | None = None,
    store: str | None = None,
    store_crf: int | None = None,
    params: str | None = None,
    stdin=None,
) -> FrameModel:
    """``kpca fit``: fit `model` (an unfitted :class:`FrameModel`: its parameters; default
    ones when None) to the frames of `request` and save it to `model_path` (a file, a directory
    or a URL: :mod:`kpcacli.modelfile`).

    The frames are held by the engine in a temporary store beside a local model (on the file
    system that will hold it), else in the temporary folder; it disappears whatever happens.

    Parameters
    ----------
    landmarks : int, optional
        Fit on this many frames chosen across the clip (:mod:`kpcacli.numerics.landmarks`); the model
        keeps only them.
    landmark_method : {"uniform", "farthest"}
    codes_path : str, optional
        Also write the codes of every chosen frame, in order (landmarks or not), as
        ``kpca encode`` would.
    scheduler : str, optional
        A dask.distributed scheduler's address: load, compute the Gram and encode on its
        workers; the model is the same file.
    store : {"lossless", "compact"}, optional
        How the model keeps 8-bit frames (:mod:`kpcacli.modelfile.storechoice`): lossless H.264 (the
        default, unless `store_crf` is given: training frames come back bit for bit), or lossy
        H.264 at `store_crf` ("compact" needs it). The model is fitted to the frames as stored.
    store_crf : int, optional
        A lossy store's rate factor, 0 (lossless) to 51.
    params : str, optional
        A table of the parameters each chosen frame was made at (a file or ``-``: `stdin`;
        :mod:`kpcacli.io.parametertable`): the model also fits a map from parameters to codes
        (:mod:`kpcacli.estimators.parametric`).
    """
    local = not is_url(model_path)
    if local and not is_directory_target(model_path):
        check_target(model_path)
    model = model if model is not None else FrameModel()
    model.check_parameters()  # before reading any frame
    check_landmarks(landmarks, landmark_method)
    check_store(store, store_crf)
    values, names = read_fit_parameters(params, request, stdin) if params is not None else (None, None)
    directory = Path(str(model_path).rstrip("/")).parent if local else tempfile.gettempdir()
    with (
        engine_for(scheduler, model.progress) as engine,
        engine.training(request, directory, landmarks=landmarks, landmark_method=landmark_method) as training,
    ):
        kept = training.store
        with model_store(kept, store, store_crf, model.progress) as stored:
            model.fit(
                stored.frames,
                frame_shape=kept.frame_shape,
                names=kept.names,
                gram=training.linear_gram() if stored.exact else None,  # else the stored frames' own
                provenance=request.provenance(training.indices, training.chosen, total=training.total),
                params=None
                if values is None
                else kept_rows(values, names, request, training.indices, training.chosen, training.total),
                param_names=names,
            )
            codes = training.codes_of_all(model.state_) if codes_path is not None else None
            save_state(
                model.state_,
                model_path,
                progress=model.progress,
                compressor=training.compressor,
                encoded=stored.encoded,
            )
    # The store is gone: the model holds the frames.
    model.state_ = with_saved_frames(model.state_, model_path, finished(stored.encoded))
    if codes is not None:  # named by the model, as encode names them
        write_matrix(codes, codes_path, header=codes_header(model.state_.fingerprint, model.state_.n_components))
    return model


# -- encode -------------------------------------------------------------------------------
CODE_DTYPES = ("float64", "float32")


@dataclass
class EncodeResult:
    """What ``kpca encode`` wrote, and how far its frames lie from the training frames."""

    codes: np.ndarray
    novelty: Novelty


def encode_sources(
    request: FrameRequest,
    model_path,
    *,
    output=None,
    dtype: str = "float64",
    scheduler: str | None = None,
    progress: bool = False,
) -> EncodeResult:
    """``kpca encode``: codes of every frame of `request` (converted as the model's frames
    were: grey, or RGB for a colour model), written to `output` (text on standard output when
    None or ``-``) in `dtype`. Text starts with the model's fingerprint (:func:`codes_header`).

    float64 codes decode exactly as encoded; float32 halves their size, and moves a decoded
    frame by far less than a grey level (``tests/test_trust.py``).
    """
    dtype = check_choice("dtype", dtype, CODE_DTYPES)
    state = load_state(model_path)
    with engine_for(scheduler, progress) as engine:
        codes, distances = engine.encode(state, request.in_colour(state.is_colour))
    codes = codes.astype(dtype)
    write_matrix(codes, output, header=codes_header(state.fingerprint, state.n_components))
    return EncodeResult(codes, Novelty.of("frames", distances, state.frame_reach))


# -- decode -------------------------------------------------------------------------------
def at_source_rate(
    video: VideoSettings, state: FittedState | None = None, request: FrameRequest | None = None
) -> VideoSettings:
    """`video` playing at its own rate when it has one, else at the first video's among the
    request's sources, else the video's the model was fitted on (:mod:`kpcacli.io.provenance`);
    without any, the writer's default."""
    if video.fps is not None:
        return video
    rate = request.frame_rate() if request is not None else None
    if rate is None and state is not None and state.provenance is not None:
        rate = state.provenance.frame_rate
    return video.at_rate(rate)


def decode_codes(
    codes_source,
    model_path,
    *,
    output=None,
    solver: str | None = None,
    neighbours: int | None = None,
    video: VideoSettings = DEFAULT_VIDEO,
    force: bool = False,
    warn=None,
    stdin=None,
    scheduler: str | None = None,
    progress: bool = False,
) -> None:
    """``kpca decode``: frames (or point rows) from a codes file (``-``: `stdin`), written to
    `output`.

    Text codes that name another model (:func:`codes_header`) are refused unless `force`.
    Codes far from every training code (:mod:`kpcacli.numerics.novelty`) are decoded, after one line to
    `warn` (a callable taking the message), before any solving.

    Images default to one PNG on standard output; folders and videos are written one frame at
    a time, so a long clip never sits in memory. A video is written at `video`
    (:class:`kpcacli.io.videowriter.VideoSettings`), by default at the frame rate of the video the
    model was fitted on (:func:`at_source_rate`).
    """
    state = load_state(model_path)
    check_video_options(output, video)
    checked_solver(state, solver, neighbours)
    codes, fingerprint = read_codes_file(codes_source, stdin=stdin)
    if fingerprint is not None and fingerprint != state.fingerprint and not force:
        raise InputError(
            f"the codes were written by another model ({fingerprint}; '{model_path}' is {state.fingerprint}): "
            f"decoded with this one they give meaningless frames; {param('force')} decodes them anyway"
        )
    codes = check_codes(state, codes)
    if not state.is_points:
        output = FrameTarget.of(output)
        output.check(len(codes))
    message = Novelty.of("codes", state.neighbours.nearest_distances(codes), state.neighbours.code_reach).warning()
    if message is not None and warn is not None:
        warn(message)
    with engine_for(scheduler, progress) as engine:
        write_decoded(state, engine.decode(state, codes, solver, neighbours), len(codes), output, video, progress)


def write_decoded(state: FittedState, frames: Iterator, count: int, output, video: VideoSettings, progress: bool):
    """Write the `count` decoded `frames` (streamed) to `output` (a checked
    :class:`FrameTarget`; rows for a point model) as they come, a video at `video`
    (:func:`at_source_rate`)."""
    with progress_bar(progress, desc="decoding", total=count, unit="frame") as bar:
        frames = counted(frames, bar)
        if state.is_points:
            write_matrix(np.stack(list(frames)), output)
        else:
            write_frames(frames, output, count=count, video=at_source_rate(video, state))


# -- denoise ------------------------------------------------------------------------------
@dataclass
class DenoiseResult:
    """What ``kpca denoise`` did: samples written and solves that did not converge."""

    samples: int
    not_converged: int


def denoise_sources(
    request: FrameRequest,
    model_path,
    *,
    output=None,
    solver: str | None = None,
    neighbours: int | None = None,
    video: VideoSettings = DEFAULT_VIDEO,
    scheduler: str | None = None,
    progress: bool = False,
) -> DenoiseResult:
    """``kpca denoise``: encode the samples of `request`, decode them with the solver started
    at each input (on the engine `scheduler` names: :func:`engine_for`), write them to
    `output`. Point data keeps its text format (.csv in, .csv out); a video is written at
    `video`, by default at the source video's rate (:func:`at_source_rate`)."""
    state = load_state(model_path)
    check_video_options(output, video)
    checked_solver(state, solver, neighbours, denoising=True)
    loaded = list(request.in_colour(state.is_colour).frames())
    frames = [frame.pixels for frame in loaded]
    if not frames:
        raise InputError("the sources hold no samples")
    if state.is_points:
        check_rows_target(output)
    else:
        output = FrameTarget.of(output)
        output.check(len(frames))
    with engine_for(scheduler, progress) as engine:
        denoised, preimages = engine.denoise(state, frames, solver, neighbours)
    if state.is_points:
        delimiter = "," if output is None and request.files()[0].lower().endswith(".csv") else None
        write_matrix(denoised, output, delimiter=delimiter)
    else:
        denoised_frames = [Frame(frame.name, pixels) for frame, pixels in zip(loaded, denoised)]
        write_frames(denoised_frames, output, video=at_source_rate(video, state, request))
    return DenoiseResult(len(preimages), sum(not p.converged for p in preimages))


# -- eval and sweep -------------------------------------------------------------------------
def evaluate_sources(
    request: FrameRequest,
    *,
    model: FrameModel | None = None,
    holdout: str = "odd",
    solvers: Sequence[str] | None = None,
    neighbours: int | None = None,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    mask_fraction: float | None = None,
    scheduler: str | None = None,
    progress: bool = False,
):
    """``kpca eval``: the frames of `request` through :func:`kpcacli.workflows.evaluation.evaluate` with
    `model`'s parameters, or with `mask_fraction` through
    :func:`kpcacli.workflows.masking.evaluate_masked_frames` (held-out frames completed from part
    of them); on a cluster, the training frames' Gram is computed where they were loaded."""
    from .evaluation import evaluate
    from .masking import evaluate_masked_frames

    model = model if model is not None else FrameModel()
    model.check_parameters()  # before reading any frame
    check_landmarks(landmarks, landmark_method)
    if mask_fraction is not None:
        check_real(param("mask_fraction"), mask_fraction, open_unit=True)
        if landmarks is not None:
            raise ParameterError(
                f"{param('mask_fraction')} fits on every training frame: leave out {param('landmarks')}"
            )
    with (
        engine_for(scheduler, progress) as engine,
        engine.training(request, tempfile.gettempdir(), compress=False) as training,
    ):
        store = training.store
        if mask_fraction is not None:
            return evaluate_masked_frames(
                store.frames,
                model,
                mask_fraction,
                frame_shape=store.frame_shape,
                holdout=holdout,
                solvers=list(solvers) if solvers else None,
                neighbours=neighbours,
                linear_gram_of=training.linear_gram_of,
                progress=progress,
            )
        return evaluate(
            store.frames,
            model,
            frame_shape=store.frame_shape,
            holdout=holdout,
            solvers=list(solvers) if solvers else None,
            neighbours=neighbours,
            landmarks=landmarks,
            landmark_method=landmark_method,
            linear_gram_of=training.linear_gram_of,
            progress=progress,
        )


def sweep_sources(
    request: FrameRequest,
    *,
    betas=None,
    ks: Sequence[int] = (1, 2, 4, 8),
    noise: float | None = None,
    holdout: str = "odd",
    center: bool | None = None,
    solver: str | None = None,
    progress: bool = False,
):
    """``kpca sweep``: the samples of `request` through :func:`kpcacli.workflows.sweep.sweep`."""
    from .sweep import sweep

    # In this process: the sweep reads every sample again for each cell, from the store.
    with (
        engine_for(None, progress) as engine,
        engine.training(request, tempfile.gettempdir(), compress=False) as training,
    ):
        store = training.store
        return sweep(
            np.asarray(store.frames),
            frame_shape=store.frame_shape,
            betas=betas,
            ks=ks,
            noise=noise,
            holdout=holdout,
            center=center,
            solver=solver,
            progress=progress,
        )


# -- compare ------------------------------------------------------------------------------
# Frame pairs scored together on threads: enough to keep both cores busy, few enough that two
# sequences of megapixel frames stream through in a bounded amount of memory.
# -- extract ------------------------------------------------------------------------------
def extract_frames(request: FrameRequest, output, *, video: VideoSettings = DEFAULT_VIDEO) -> int:
    """``kpca extract``: write exactly the frames ``kpca encode`` would see (same request) to
    `output`: one PNG, a folder (the frames keep their names: :func:`kpcacli.io.outputs.png_name`)
    or a video at `video` (by default at the first video source's frame rate, else 25).
    Returns how many frames were written."""
    frames = request.frames()
    if request.reads_stdin:  # no header to count standard input's frames from
        frames = list(frames)
        count = len(frames)
    else:
        count = request.count()
    # write_frames checks the target against `count` before it reads the first frame.
    write_frames(_images(frames), output, count=count, video=at_source_rate(video, request=request))
    return count


def _images(frames: Iterable[Frame]) -> Iterator[Frame]:
    for frame in frames:
        if frame.pixels.ndim == 1:
            raise InputError(f"'{frame.name}' is a point, not an image: extract writes frames")
        yield frame
