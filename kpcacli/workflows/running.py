"""Where a workflow runs and how its decoded frames are written: the engine (:func:`engine_for`,
the one place that tells this process from a cluster), a video's frame rate taken from its
source (:func:`at_source_rate`), and decoded frames streamed to their output
(:func:`write_decoded`), shared by decode, denoise, extract, predict and reconstruct.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..engines.engine import Engine, InProcess
from ..io.codes import write_matrix
from ..io.outputs import write_frames
from ..io.request import FrameRequest
from ..io.videowriter import VideoSettings
from ..model.state import FittedState
from ..numerics.backend import HOST, Backend, backend_for
from ..utils.errors import ParameterError, param
from ..utils.progress import counted, progress_bar


def engine_for(scheduler: str | None = None, progress: bool = False, backend: Backend = HOST) -> Engine:
    """The engine a workflow runs on: the dask.distributed cluster whose scheduler is at the
    address `scheduler` (:mod:`kpcacli.engines.cluster`, which imports Dask), else this process,
    its array algebra by the `backend` (:func:`checked_device`, which has refused a device
    beside a scheduler: a cluster's workers compute on their own CPUs)."""
    if scheduler is None:
        return InProcess(progress, backend)
    from ..engines.cluster import Cluster

    return Cluster(scheduler, progress=progress)


def checked_device(scheduler: str | None, device: str | None) -> Backend:
    """The backend `device` names (:func:`kpcacli.numerics.backend.backend_for`), refused in
    one line when it is not there or when it is a device beside a cluster's `scheduler`: what
    a workflow checks before it reads anything, as it checks its other options."""
    backend = backend_for(device)
    if backend.on_device and scheduler is not None:
        raise ParameterError(f"{param('device')} {device} runs in this process; a cluster's workers use their own CPUs")
    return backend


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
