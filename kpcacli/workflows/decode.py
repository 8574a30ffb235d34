"""``kpca decode``: codes in, frames (or point rows) out, over an engine."""

from __future__ import annotations

import warnings

from ..io.codes import read_codes_file
from ..io.outputs import FrameTarget, check_video_options
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..model.validation import check_codes
from ..modelfile import load as load_state
from ..numerics.novelty import Novelty
from ..preimage import SOLVERS, checked_solver
from ..utils.errors import InputError, ParameterWarning, param
from .running import checked_device, engine_for, write_decoded


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
    device: str | None = None,
) -> None:
    """``kpca decode``: frames (or point rows) from a codes file (``-``: `stdin`), written to
    `output`.

    Text codes that name another model (:func:`codes_header`) are refused unless `force`.
    Codes far from every training code (:mod:`kpcacli.numerics.novelty`) are decoded, after one line to
    `warn` (a callable taking the message), before any solving.

    Images default to one PNG on standard output; folders and videos are written one frame at
    a time, so a long clip never sits in memory. A video is written at `video`
    (:class:`kpcacli.io.videowriter.VideoSettings`), by default at the frame rate of the video the
    model was fitted on (:func:`at_source_rate`). `device` (``cuda``): the pixel sums of the
    pre-images on a GPU (:func:`kpcacli.numerics.backend.backend_for`).
    """
    backend = checked_device(scheduler, device)
    state = load_state(model_path)
    check_video_options(output, video)
    resolved = checked_solver(state, solver, neighbours)
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
    if backend.on_device and SOLVERS[resolved].forms_pixels:
        message = f"the {resolved} solver forms its frames' pixels on the CPU: {param('device')} {device} runs none of this decode"
        warnings.warn(message, ParameterWarning, stacklevel=2)
    message = Novelty.of("codes", state.neighbours.nearest_distances(codes), state.neighbours.code_reach).warning()
    if message is not None and warn is not None:
        warn(message)
    with engine_for(scheduler, progress, backend) as engine:
        write_decoded(state, engine.decode(state, codes, solver, neighbours), len(codes), output, video, progress)
