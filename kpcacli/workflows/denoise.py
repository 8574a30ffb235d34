"""``kpca denoise``: frames or points in, each encoded and decoded from itself, over an engine."""

from __future__ import annotations

from dataclasses import dataclass

from ..io.codes import write_matrix
from ..io.outputs import FrameTarget, check_rows_target, check_video_options, write_frames
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..modelfile import load as load_state
from ..preimage import DENOISING, checked_solver
from ..utils.errors import InputError
from .running import at_source_rate, checked_device, engine_for


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
    device: str | None = None,
) -> DenoiseResult:
    """``kpca denoise``: encode the samples of `request`, decode them with the solver started
    at each input (on the engine `scheduler` names: :func:`engine_for`), write them to
    `output`. Point data keeps its text format (.csv in, .csv out); a video is written at
    `video`, by default at the source video's rate (:func:`at_source_rate`). `device`
    (``cuda``): the products with the training frames and the pixel sums of the pre-images on a
    GPU (:func:`kpcacli.numerics.backend.backend_for`)."""
    backend = checked_device(scheduler, device)
    state = load_state(model_path)
    check_video_options(output, video)
    checked_solver(state, solver, neighbours, DENOISING)
    loaded = list(request.in_colour(state.is_colour).frames())
    frames = [frame.pixels for frame in loaded]
    if not frames:
        raise InputError("the sources hold no samples")
    if state.is_points:
        check_rows_target(output)
    else:
        output = FrameTarget.of(output)
        output.check(len(frames))
    with engine_for(scheduler, progress, backend) as engine:
        denoised, preimages = engine.denoise(state, frames, solver, neighbours)
    if state.is_points:
        delimiter = "," if output is None and request.files()[0].lower().endswith(".csv") else None
        write_matrix(denoised, output, delimiter=delimiter)
    else:
        denoised_frames = [Frame(frame.name, pixels) for frame, pixels in zip(loaded, denoised)]
        write_frames(denoised_frames, output, video=at_source_rate(video, state, request))
    return DenoiseResult(len(preimages), sum(not p.converged for p in preimages))
