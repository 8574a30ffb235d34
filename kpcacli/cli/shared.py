"""What the commands share: checking their outputs before any work, building the frame request
and the estimator from their options, and the one-line notes and warnings they print."""

from __future__ import annotations

import click


def check_outputs(outputs, inputs, force: bool) -> None:
    """Before any work: no output is an input, and each replaces only what kpca wrote as its
    kind, unless --force (:mod:`kpcacli.io.ownership`). `outputs` holds (target, kind, option);
    a kind of None is a frames output, or rows when the target names a .npy, .txt or .csv."""
    from ..io.ownership import check_outputs as check
    from ..io.ownership import output_kind

    check([(target, kind or output_kind(target), option) for target, kind, option in outputs], inputs, force)


MODEL_PARAMETERS = ("kernel", "n_components", "eps", "beta", "gamma", "degree", "coef0", "center")


def frame_request(sources, selection=None, resize=None, colour=False):
    """The frames a command reads (:class:`kpcacli.io.request.FrameRequest`), built once here."""
    from ..io.request import FrameRequest

    return FrameRequest.of(sources, selection=selection, resize=resize, colour=colour)


def estimator_of(options: dict, progress: bool = False, **fixed):
    """The unfitted estimator the model options describe (taken out of `options`), with the
    parameters `fixed` by the command (``solver`` for fit)."""
    from ..estimators.estimator import FrameModel

    return FrameModel(**{name: options.pop(name) for name in MODEL_PARAMETERS}, progress=progress, **fixed)


def note(message: str) -> None:
    click.echo(f"Note: {message}", err=True)


def warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)
