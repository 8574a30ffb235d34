"""``kpca eval``: frames in, every pre-image solver measured on the held-out ones
(:mod:`.evaluation`, or :mod:`.masking` for frames completed from part of them).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence

from ..estimators.estimator import FrameModel
from ..io.request import FrameRequest
from ..numerics.landmarks import check_landmarks
from ..utils.checks import check_real
from ..utils.errors import ParameterError, param
from .evaluation import evaluate
from .masking import evaluate_masked_frames
from .running import engine_for


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
