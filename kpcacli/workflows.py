"""Workflows: files in, model / codes / frames out. What each ``kpca`` command runs.

Each function takes paths and parameters, what it reads first and then the model
(``fit_sources(sources, model_path)``, ``encode_sources(sources, model_path, output)``,
``decode_codes(codes, model_path, output)``), streams frames through the frame store or the
estimator in bounded batches, and writes its outputs atomically. The click layer only parses
options, calls one of these and reports.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .atomic import check_target
from .batches import encode_frames, encode_rows
from .checks import check_choice, check_int, frame_size
from .comparison import Comparison, FrameScore
from .errors import InputError, ParameterError, param
from .estimator import KernelPCA
from .landmarks import choose_landmarks
from .modelfile import save as save_state
from .modelfile import saved
from .novelty import Novelty
from .outputs import (
    check_frame_target,
    check_video_options,
    codes_header,
    read_codes_file,
    write_frames,
    write_matrix,
)
from .progress import counted, progress_bar
from .sources import (
    DEFAULT_FPS,
    Frame,
    estimate_frames,
    expand_sources,
    iter_frames,
    source_frame_rate,
    source_provenance,
)
from .state import FittedState
from .store import FrameStore
from .zarrmodel import FrameCompressor, is_directory_target, is_url


@contextlib.contextmanager
def stored_frames(
    sources: Iterable[str],
    resize=None,
    progress: bool = False,
    directory=None,
    stdin=None,
    tap=None,
    selection=None,
    colour: bool = False,
) -> Iterator[FrameStore]:
    """The frames of `sources` (those `selection` chooses; RGB with `colour`) in a temporary
    frame store (one size, checked), removed after.

    `tap`, if given, sees every frame on its way into the store (``tap(frames)`` yields them).
    """
    with FrameStore(directory if directory is not None else tempfile.gettempdir()) as store:
        frames = iter_frames(sources, resize=resize, stdin=stdin, selection=selection, colour=colour)
        total = estimate_frames(sources, selection) if progress else None
        store.extend(tap(frames) if tap is not None else frames, progress=progress, total=total)
        yield store


# -- fit ----------------------------------------------------------------------------------
def fit_sources(
    sources: Iterable[str],
    model_path: str | os.PathLike,
    resize: tuple[int, int] | None = None,
    stdin=None,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    codes_path: str | None = None,
    scheduler: str | None = None,
    selection=None,
    colour: bool = False,
    **params,
) -> KernelPCA:
    """Load `sources` into a temporary frame store, fit, and save the model to `model_path`
    (a file, a directory or a URL: :mod:`kpcacli.modelfile`).

    The store is anonymous and lives beside a local model (on the file system that will hold
    it), else in the temporary folder; it disappears whatever happens.

    Parameters
    ----------
    landmarks : int, optional
        Fit on this many frames chosen across the clip (:mod:`kpcacli.landmarks`); the model
        keeps only them.
    landmark_method : {"uniform", "farthest"}
    codes_path : str, optional
        Also write the codes of every input frame, in input order (landmarks or not), as
        ``kpca encode`` would.
    scheduler : str, optional
        A dask.distributed scheduler's address: load, compute the Gram and encode on its
        workers (:mod:`kpcacli.cluster`); the model is the same.
    selection : FrameSelection, optional
        Fit on these frames of the sources only (``--frames``).
    **params
        :class:`KernelPCA`'s parameters.
    """
    local = not is_url(model_path)
    if local and not is_directory_target(model_path):
        check_target(model_path)
    model = KernelPCA(**params)
    model.check_parameters()  # before reading any frame
    if landmarks is not None:
        check_int("landmarks", landmarks, 2)
    folder = Path(str(model_path).rstrip("/")).parent if local else None
    if scheduler is not None:
        from .cluster import Cluster

        with Cluster(scheduler, progress=model.progress) as cluster:
            codes = cluster.fit(
                model,
                sources,
                model_path,
                folder if folder is not None else tempfile.gettempdir(),
                resize=resize,
                landmarks=landmarks,
                landmark_method=landmark_method,
                codes=codes_path is not None,
                selection=selection,
                colour=colour,
            )
    else:
        codes = _fit_here(
            model, sources, model_path, folder, resize, stdin, landmarks, landmark_method, codes_path, selection, colour
        )
    model.state_ = saved(model.state_, model_path)  # the store is gone; the model holds the frames
    if codes is not None:  # named by the model, as encode names them
        write_matrix(codes, codes_path, header=codes_header(model.state_.fingerprint, model.state_.n_components))
    return model


def _fit_here(
    model, sources, model_path, folder, resize, stdin, landmarks, landmark_method, codes_path, selection, colour
):
    """:func:`fit_sources` in this process: the model saved, the codes returned (or None)."""
    codes = None
    # Compress the frames while they load, unless only landmarks among them go into the model.
    # The Gram waits for the last frame: computing it strip by strip while the frames load
    # (exact, tried) made the fit slower on two cores, which decoding and compressing already
    # keep busy: 1.44 s against 1.33 s for 132 frames of 720p from an mp4, 1.55 s against 1.35 s
    # for 69 PNG frames of 1080p (medians of 9 and 7 alternating runs).
    compressor = FrameCompressor() if landmarks is None else None
    tap = compressor.tap if compressor is not None else None
    with (
        compressor if compressor is not None else contextlib.nullcontext(),
        stored_frames(
            sources,
            resize,
            model.progress,
            directory=folder,
            stdin=stdin,
            tap=tap,
            selection=selection,
            colour=colour,
        ) as every,
    ):
        store = every
        try:
            if landmarks is not None and landmarks < every.frames.shape[0]:
                chosen = choose_landmarks(every.frames, landmarks, landmark_method)
                store = FrameStore(every.directory)
                rows = (
                    Frame(every.names[i], np.asarray(every.frames[i]).reshape(every.frame_shape), every.indices[i])
                    for i in chosen
                )
                store.extend(rows)
            provenance = source_provenance(sources, store.indices, selection, len(every.names))
            model.fit(store.frames, frame_shape=store.frame_shape, names=store.names, provenance=provenance)
            if codes_path is not None:
                codes = encode_rows(model, every.frames)
            save_state(model.state_, model_path, progress=model.progress, compressor=compressor)
        finally:
            if store is not every:
                store.remove()
    return codes


# -- encode -------------------------------------------------------------------------------
CODE_DTYPES = ("float64", "float32")


@dataclass
class EncodeResult:
    """What ``kpca encode`` wrote, and how far its frames lie from the training frames."""

    codes: np.ndarray
    novelty: Novelty


def encode_sources(
    sources,
    model_path,
    output=None,
    resize=None,
    progress=False,
    stdin=None,
    scheduler=None,
    selection=None,
    dtype="float64",
) -> EncodeResult:
    """``kpca encode``: codes of every frame of `sources` (those `selection` chooses), written
    to `output` (text on standard output when None or ``-``) in `dtype`; on the workers of
    `scheduler` when given. Text starts with the model's fingerprint (:func:`codes_header`).

    float64 codes decode exactly as encoded; float32 halves their size, and moves a decoded
    frame by far less than a grey level (``tests/test_trust.py``).
    """
    dtype = check_choice("dtype", dtype, CODE_DTYPES)
    model = KernelPCA.load(model_path, progress=progress)
    state = model.state_
    if scheduler is not None:
        from .cluster import Cluster

        with Cluster(scheduler, progress=progress) as cluster:
            codes, distances = cluster.encode_sources(state, sources, resize=resize, selection=selection)
    else:
        frames = iter_frames(sources, resize=resize, stdin=stdin, selection=selection, colour=state.is_colour)
        total = estimate_frames(sources, selection) if progress else None
        codes, distances = encode_frames(model, frames, total=total)
    codes = codes.astype(dtype)
    write_matrix(codes, output, header=codes_header(state.fingerprint, state.n_components))
    return EncodeResult(codes, Novelty.of("frames", distances, state.frame_reach))


# -- decode -------------------------------------------------------------------------------
def video_rate(fps: float | None, state: FittedState | None = None, sources=None) -> float:
    """The frame rate a video output plays at: `fps` when given, else the first video among
    `sources`, else the video the model was fitted on (:mod:`kpcacli.provenance`), else
    :data:`kpcacli.sources.DEFAULT_FPS`."""
    if fps is not None:
        return fps
    rate = source_frame_rate(sources) if sources is not None else None
    if rate is None and state is not None and state.provenance is not None:
        rate = state.provenance.frame_rate
    return rate if rate is not None else DEFAULT_FPS


def decode_codes(
    codes_source,
    model_path,
    output=None,
    solver=None,
    neighbours=None,
    fps=None,
    stdin=None,
    scheduler=None,
    crf=None,
    force=False,
    warn=None,
    progress=False,
):
    """``kpca decode``: frames (or point rows) from a codes file, written to `output`; solved
    on the workers of `scheduler` when given.

    Text codes that name another model (:func:`codes_header`) are refused unless `force`.
    Codes far from every training code (:mod:`kpcacli.novelty`) are decoded, after one line to
    `warn` (a callable taking the message), before any solving.

    Images default to one PNG on standard output; folders and videos are written one frame at
    a time, so a long clip never sits in memory. A video plays at `fps`, by default the frame
    rate of the video the model was fitted on (:func:`video_rate`), at the quality `crf`.
    """
    model = KernelPCA.load(model_path)
    state = model.state_
    check_video_options(output, fps, crf)
    codes, fingerprint = read_codes_file(codes_source, stdin=stdin)
    if fingerprint is not None and fingerprint != state.fingerprint and not force:
        raise InputError(
            f"the codes were written by another model ({fingerprint}; '{model_path}' is {state.fingerprint}): "
            f"decoded with this one they give meaningless frames; {param('force')} decodes them anyway"
        )
    codes = state.check_codes(codes)
    if not state.is_points:
        output = "-" if output is None else output
        check_frame_target(output, len(codes), points=False)
    message = Novelty.of("codes", state.neighbours.nearest_distances(codes), state.neighbours.code_reach).warning()
    if message is not None and warn is not None:
        warn(message)
    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            from .cluster import Cluster

            cluster = stack.enter_context(Cluster(scheduler))
            frames = cluster.decode_iter(state, codes, solver, neighbours)
        else:
            frames = model.decode_iter(codes, solver=solver, neighbours=neighbours)
        bar = stack.enter_context(progress_bar(progress, desc="decoding", total=len(codes), unit="frame"))
        frames = counted(frames, bar)
        if state.is_points:
            write_matrix(np.stack(list(frames)), output)
        else:
            write_frames(frames, output, fps=video_rate(fps, state), count=len(codes), crf=crf)


# -- denoise ------------------------------------------------------------------------------
@dataclass
class DenoiseResult:
    """What ``kpca denoise`` did: samples written and solves that did not converge."""

    samples: int
    not_converged: int


def denoise_sources(
    sources,
    model_path,
    output=None,
    solver=None,
    neighbours=None,
    resize=None,
    progress=False,
    stdin=None,
    selection=None,
    fps=None,
    crf=None,
) -> DenoiseResult:
    """``kpca denoise``: encode the samples of `sources`, decode them with the solver started at
    each input, write them to `output`. Point data keeps its text format (.csv in, .csv out);
    a video plays at `fps`, by default the source video's rate (:func:`video_rate`)."""
    model = KernelPCA.load(model_path, progress=progress)
    state = model.state_
    check_video_options(output, fps, crf)
    loaded = list(iter_frames(sources, resize=resize, stdin=stdin, selection=selection, colour=state.is_colour))
    frames = [frame.pixels for frame in loaded]
    if not frames:
        raise InputError("the sources hold no samples")
    if output is None and not state.is_points:
        output = "-"
    check_frame_target(output, len(frames), points=state.is_points)
    denoised, preimages = model.denoise(frames, solver=solver, neighbours=neighbours)
    if state.is_points:
        first = expand_sources(sources)[0]
        delimiter = "," if output is None and first.lower().endswith(".csv") else None
        write_matrix(denoised, output, delimiter=delimiter)
    else:
        denoised_frames = [Frame(frame.name, pixels) for frame, pixels in zip(loaded, denoised)]
        write_frames(denoised_frames, output, fps=video_rate(fps, state, sources), crf=crf)
    return DenoiseResult(len(preimages), sum(not p.converged for p in preimages))


# -- eval and sweep -------------------------------------------------------------------------
def evaluate_sources(
    sources, resize=None, progress=False, stdin=None, scheduler=None, selection=None, colour=False, **options
):
    """``kpca eval``: the frames of `sources` through :func:`kpcacli.evaluation.evaluate`; with
    `scheduler`, loaded on its workers and the training frames' Gram computed there."""
    from .evaluation import evaluate

    if scheduler is None:
        with stored_frames(sources, resize, progress, stdin=stdin, selection=selection, colour=colour) as store:
            return evaluate(store.frames, frame_shape=store.frame_shape, progress=progress, **options)
    from .cluster import Cluster

    with Cluster(scheduler, progress=progress) as cluster, FrameStore(tempfile.gettempdir()) as store:
        loaded = cluster.load(sources, resize, selection, colour=colour)
        store.extend(cluster.gather(loaded), progress=False)
        return evaluate(
            store.frames,
            frame_shape=store.frame_shape,
            linear_gram_of=lambda rows: cluster.linear_gram(loaded, rows),
            progress=progress,
            **options,
        )


def sweep_sources(sources, resize=None, progress=False, stdin=None, selection=None, **options):
    """``kpca sweep``: the samples of `sources` (those `selection` chooses) through
    :func:`kpcacli.sweep.sweep`."""
    from .sweep import sweep

    with stored_frames(sources, resize, progress, stdin=stdin, selection=selection) as store:
        return sweep(np.asarray(store.frames), frame_shape=store.frame_shape, progress=progress, **options)


# -- compare ------------------------------------------------------------------------------
# Frame pairs scored together on threads: enough to keep both cores busy, few enough that two
# sequences of megapixel frames stream through in a bounded amount of memory.
COMPARE_CHUNK = 8


def compare_sequences(
    original: str, other: str, model_path=None, output=None, stdin=None, selection=None, progress=False
) -> Comparison:
    """``kpca compare``: PSNR and SSIM of every frame of `other` against the same frame of
    `original` (each a video, folder, glob, image or ``-``; `selection` chooses frames of both
    alike), summarised as :mod:`kpcacli.comparison` states; with `model_path`, the training
    and held-out frames apart (when the model records its frames, and they are `original`'s);
    the worst pair written to `output` as original | other | amplified difference.

    Frames stream in pairs, a few at a time, so two long clips never sit in memory.
    """
    from .metrics import data_range, mean_psnr, mse, psnr_of_mse, ssim
    from .parallel import available_cores, ordered_map, single_threaded_blas
    from .report import triptych
    from .sources import count_frames

    if original == "-" and other == "-":
        raise ParameterError("only one of the two sequences can come from standard input")
    if output is not None:
        check_frame_target(output, 1, points=False)
    totals = {}
    for source in (original, other):
        if source != "-":
            totals[source] = count_frames([source], selection)
    if len(totals) == 2 and totals[original] != totals[other]:
        raise InputError(f"'{original}' has {totals[original]} frames but '{other}' has {totals[other]}")
    mean_frame, training, split_note = None, None, None
    if model_path is not None:
        state = KernelPCA.load(model_path).state_
        mean_frame = state.mean_frame()
        training, split_note = _training_frames(state, original, model_path)

    def score(pair):
        first, second = pair
        if first.pixels.shape != second.pixels.shape:
            raise InputError(
                f"'{first.name}' is {frame_size(first.pixels.shape)} but '{second.name}' is "
                f"{frame_size(second.pixels.shape)}"
            )
        reference = first.pixels
        estimate = second.pixels.astype(reference.dtype, copy=False)
        error = mse(reference, estimate)
        return FrameScore(
            first.index,
            first.name,
            second.name,
            error,
            psnr_of_mse(error, data_range(reference.dtype)),
            ssim(reference, estimate),
        )

    firsts = iter_frames([original], stdin=stdin, selection=selection)
    seconds = iter_frames([other], stdin=stdin, selection=selection)
    scores: list[FrameScore] = []
    worst = None  # (PSNR, original, other) of the worst pair so far
    mean_frame_scores = []
    total = next(iter(totals.values()), None)
    with single_threaded_blas(), progress_bar(progress, desc="comparing", total=total, unit="frame") as bar:
        while True:
            chunk = []
            for first in firsts:
                second = next(seconds, None)
                if second is None:
                    raise InputError(f"'{other}' has fewer frames than '{original}' ({len(scores) + len(chunk)})")
                chunk.append((first, second))
                if len(chunk) == COMPARE_CHUNK:
                    break
            if not chunk:
                break
            for pair, result in zip(chunk, ordered_map(score, chunk, available_cores())):
                scores.append(result)
                if worst is None or result.psnr < worst[0]:
                    worst = (result.psnr, pair[0].pixels, pair[1].pixels)
                if mean_frame is not None:
                    mean_frame_scores.append(_mean_frame_psnr(pair[0], mean_frame, model_path))
            bar.update(len(chunk))
        if next(seconds, None) is not None:
            raise InputError(f"'{original}' has fewer frames than '{other}' ({len(scores)})")
    if not scores:
        raise InputError(f"'{original}' holds no frames")
    if output is not None:
        _, reference, estimate = worst
        write_frames(triptych(reference, estimate.astype(reference.dtype, copy=False))[np.newaxis], output)
    return Comparison(
        scores,
        peak=data_range(worst[1].dtype),
        training=training,
        split_note=split_note,
        mean_frame_psnr=mean_psnr(mean_frame_scores) if mean_frame_scores else None,
    )


def _training_frames(state: FittedState, original: str, model_path) -> tuple[frozenset[int] | None, str | None]:
    """The numbers of the frames `state` was fitted on, when they are frames of `original`; else
    None and why not."""
    from .sources import count_frames

    provenance = state.provenance
    if provenance is None:
        return None, f"not told apart: '{model_path}' does not record its training frames"
    if original == "-":
        return None, "not told apart: standard input's frames cannot be matched to the model's"
    total = count_frames([original], None)
    if provenance.source_frames is not None and total != provenance.source_frames:
        return None, (
            f"not told apart: '{model_path}' was fitted on a sequence of {provenance.source_frames} frames, "
            f"'{original}' has {total}"
        )
    return frozenset(provenance.frame_indices), None


def _mean_frame_psnr(frame: Frame, mean_frame: np.ndarray, model_path) -> float:
    from .metrics import psnr

    if mean_frame.shape != frame.pixels.shape:
        raise InputError(
            f"model '{model_path}' has frames of {frame_size(mean_frame.shape)}, "
            f"'{frame.name}' is {frame_size(frame.pixels.shape)}"
        )
    return psnr(frame.pixels, mean_frame)


# -- extract ------------------------------------------------------------------------------
def extract_frames(
    sources, output, resize=None, stdin=None, selection=None, fps=None, crf=None, colour=False
) -> list[str]:
    """``kpca extract``: write exactly the frames ``kpca encode`` would see (same sources,
    ``--frames`` and ``--resize``) to `output`: one PNG, a folder (the frames keep their
    names: :func:`kpcacli.outputs.png_name`) or a video, at `fps` (default: the first video
    source's frame rate, else 25) and the quality `crf`."""
    from .sources import count_frames

    frames = iter_frames(sources, resize=resize, stdin=stdin, selection=selection, colour=colour)
    if "-" in expand_sources(sources):  # no header to count standard input's frames from
        frames = list(frames)
        count = len(frames)
    else:
        count = count_frames(sources, selection)
    # write_frames checks the target against `count` before it reads the first frame.
    return write_frames(_images(frames), output, fps=video_rate(fps, sources=sources), count=count, crf=crf)


def _images(frames: Iterable[Frame]) -> Iterator[Frame]:
    for frame in frames:
        if frame.pixels.ndim == 1:
            raise InputError(f"'{frame.name}' is a point, not an image: extract writes frames")
        yield frame
