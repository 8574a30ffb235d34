"""Workflows: files in, model / codes / frames out. What each ``kpca`` command runs.

Each function takes paths and parameters, streams frames through the frame store or the
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
from .checks import check_int, frame_size
from .errors import InputError, KpcaError, ParameterError
from .estimator import KernelPCA
from .landmarks import choose_landmarks
from .modelfile import save as save_state
from .modelfile import saved
from .outputs import check_frame_target, read_codes, write_frames, write_matrix
from .sources import Frame, expand_sources, iter_frames
from .store import FrameStore
from .zarrmodel import FrameCompressor, is_directory_target, is_url


def refuse_overwriting_inputs(outputs: Iterable[str | None], inputs: Iterable[str], force: bool) -> None:
    """Refuse (a usage error) an output that is one of the inputs or the folder holding one,
    unless `force`."""
    if force:
        return
    try:
        sources = [Path(path).resolve() for path in expand_sources(inputs) if path != "-"]
    except KpcaError:
        return  # the inputs' own error is reported when they are read
    for output in outputs:
        if output in (None, "-"):
            continue
        target = Path(output).resolve()
        for source in sources:
            if target == source or (target.is_dir() and source.parent == target):
                raise ParameterError(
                    f"output '{output}' would overwrite the input '{source}'; choose another output or add --force"
                )


@contextlib.contextmanager
def stored_frames(
    sources: Iterable[str], resize=None, progress: bool = False, directory=None, stdin=None, tap=None
) -> Iterator[FrameStore]:
    """The frames of `sources` in a temporary frame store (one size, checked), removed after.

    `tap`, if given, sees every frame on its way into the store (``tap(frames)`` yields them).
    """
    with FrameStore(directory if directory is not None else tempfile.gettempdir()) as store:
        frames = iter_frames(sources, resize=resize, stdin=stdin)
        store.extend(tap(frames) if tap is not None else frames, progress=progress)
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
            )
    else:
        codes = _fit_here(model, sources, model_path, folder, resize, stdin, landmarks, landmark_method, codes_path)
    if codes is not None:
        write_matrix(codes, codes_path)
    model.state_ = saved(model.state_, model_path)  # the store is gone; the model holds the frames
    return model


def _fit_here(model, sources, model_path, folder, resize, stdin, landmarks, landmark_method, codes_path):
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
        stored_frames(sources, resize, model.progress, directory=folder, stdin=stdin, tap=tap) as every,
    ):
        store = every
        try:
            if landmarks is not None and landmarks < every.frames.shape[0]:
                chosen = choose_landmarks(every.frames, landmarks, landmark_method)
                store = FrameStore(every.directory)
                rows = (Frame(every.names[i], np.asarray(every.frames[i]).reshape(every.frame_shape)) for i in chosen)
                store.extend(rows)
            model.fit(store.frames, frame_shape=store.frame_shape, names=store.names)
            if codes_path is not None:
                codes = encode_rows(model, every.frames)
            save_state(model.state_, model_path, progress=model.progress, compressor=compressor)
        finally:
            if store is not every:
                store.remove()
    return codes


# -- encode -------------------------------------------------------------------------------
def encode_sources(
    model_path, sources, output=None, resize=None, progress=False, stdin=None, scheduler=None
) -> np.ndarray:
    """``kpca encode``: codes of every frame of `sources`, written to `output` (text on
    standard output when None or ``-``); on the workers of `scheduler` when given."""
    model = KernelPCA.load(model_path, progress=progress)
    if scheduler is not None:
        from .cluster import Cluster

        with Cluster(scheduler, progress=progress) as cluster:
            codes = cluster.encode_sources(model.state_, sources, resize=resize)
    else:
        codes = encode_frames(model, iter_frames(sources, resize=resize, stdin=stdin))
    write_matrix(codes, output)
    return codes


# -- decode -------------------------------------------------------------------------------
def decode_codes(
    model_path, codes_source, output=None, solver=None, neighbours=None, fps=25.0, stdin=None, scheduler=None
):
    """``kpca decode``: frames (or point rows) from a codes file, written to `output`; solved
    on the workers of `scheduler` when given.

    Images default to one PNG on standard output; folders and videos are written one frame at
    a time, so a long clip never sits in memory.
    """
    model = KernelPCA.load(model_path)
    state = model.state_
    codes = state.check_codes(read_codes(codes_source, stdin=stdin))
    if not state.is_points:
        output = "-" if output is None else output
        check_frame_target(output, len(codes), points=False)
    with contextlib.ExitStack() as stack:
        if scheduler is not None:
            from .cluster import Cluster

            cluster = stack.enter_context(Cluster(scheduler))
            frames = cluster.decode_iter(state, codes, solver, neighbours)
        else:
            frames = model.decode_iter(codes, solver=solver, neighbours=neighbours)
        if state.is_points:
            write_matrix(np.stack(list(frames)), output)
        else:
            write_frames(frames, output, fps=fps, count=len(codes))


# -- denoise ------------------------------------------------------------------------------
@dataclass
class DenoiseResult:
    """What ``kpca denoise`` did: samples written and solves that did not converge."""

    samples: int
    not_converged: int


def denoise_sources(
    model_path, sources, output=None, solver=None, neighbours=None, resize=None, progress=False, stdin=None
) -> DenoiseResult:
    """``kpca denoise``: encode the samples of `sources`, decode them with the solver started at
    each input, write them to `output`. Point data keeps its text format (.csv in, .csv out)."""
    model = KernelPCA.load(model_path, progress=progress)
    state = model.state_
    frames = [frame.pixels for frame in iter_frames(sources, resize=resize, stdin=stdin)]
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
        write_frames(denoised, output)
    return DenoiseResult(len(preimages), sum(not p.converged for p in preimages))


# -- eval and sweep -------------------------------------------------------------------------
def evaluate_sources(sources, resize=None, progress=False, stdin=None, scheduler=None, **options):
    """``kpca eval``: the frames of `sources` through :func:`kpcacli.evaluation.evaluate`; with
    `scheduler`, loaded on its workers and the training frames' Gram computed there."""
    from .evaluation import evaluate

    if scheduler is None:
        with stored_frames(sources, resize, progress, stdin=stdin) as store:
            return evaluate(store.frames, frame_shape=store.frame_shape, progress=progress, **options)
    from .cluster import Cluster

    with Cluster(scheduler, progress=progress) as cluster, FrameStore(tempfile.gettempdir()) as store:
        loaded = cluster.load(sources, resize)
        store.extend(cluster.gather(loaded), progress=False)
        return evaluate(
            store.frames,
            frame_shape=store.frame_shape,
            linear_gram_of=lambda rows: cluster.linear_gram(loaded, rows),
            progress=progress,
            **options,
        )


def sweep_sources(sources, resize=None, progress=False, stdin=None, **options):
    """``kpca sweep``: the samples of `sources` through :func:`kpcacli.sweep.sweep`."""
    from .sweep import sweep

    with stored_frames(sources, resize, progress, stdin=stdin) as store:
        return sweep(np.asarray(store.frames), frame_shape=store.frame_shape, **options)


# -- compare ------------------------------------------------------------------------------
@dataclass
class Comparison:
    """``kpca compare``: PSNR of a reconstruction, and of the model's mean frame for reference."""

    psnr: float
    mean_frame_psnr: float | None

    def format_text(self) -> str:
        lines = [f"reconstruction       PSNR {self.psnr:6.2f} dB"]
        if self.mean_frame_psnr is not None:
            lines.append(f"mean training frame  PSNR {self.mean_frame_psnr:6.2f} dB")
        return "\n".join(lines)


def compare_frames(original: str, reconstruction: str, model_path=None, output=None, stdin=None) -> Comparison:
    """Compare the first frame of `reconstruction` with the first frame of `original`;
    optionally write them side by side to `output`."""
    from .metrics import psnr
    from .report import side_by_side

    reference = next(iter(iter_frames([original], stdin=stdin))).pixels
    estimate = next(iter(iter_frames([reconstruction], stdin=stdin))).pixels
    if reference.shape != estimate.shape:
        raise InputError(
            f"'{original}' is {frame_size(reference.shape)} but '{reconstruction}' is {frame_size(estimate.shape)}"
        )
    mean_psnr = None
    if model_path is not None:
        state = KernelPCA.load(model_path).state_
        if state.frame_shape != reference.shape:
            raise InputError(
                f"model '{model_path}' has frames of {frame_size(state.frame_shape)}, "
                f"'{original}' is {frame_size(reference.shape)}"
            )
        mean_psnr = psnr(reference, state.mean_frame())
    if output is not None:
        write_frames(side_by_side(reference, estimate.astype(reference.dtype))[np.newaxis], output)
    return Comparison(psnr(reference, estimate), mean_psnr)
