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
    parameters `fixed` by the command (``solver`` for fit), after refusing an option given
    that would change nothing (:func:`refuse_options_without_effect`)."""
    from ..estimators.estimator import FrameModel

    refuse_options_without_effect(click.get_current_context())
    return FrameModel(**{name: options.pop(name) for name in MODEL_PARAMETERS}, progress=progress, **fixed)


def refuse_options_without_effect(context: click.Context) -> None:
    """Refuse, in one line, a model option typed on the command line that the model would
    ignore: a kernel hyperparameter the chosen kernel does not take
    (``KERNEL_HYPERPARAMETERS``: ``--beta`` with ``--kernel poly``, ``--degree`` with the
    Gaussian), and ``--landmark-method`` without ``--landmarks``. The Python API ignores
    them, as scikit-learn's KernelPCA does; a command says so rather than fit as if they
    had not been given."""
    from click.core import ParameterSource

    from ..numerics.kernels import KERNEL_HYPERPARAMETERS
    from ..utils.errors import ParameterError, param

    def given(name: str) -> bool:
        return context.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)

    kernel = context.params["kernel"]
    takes = [param(name) for name in KERNEL_HYPERPARAMETERS[kernel]]
    for name in ("beta", "gamma", "degree", "coef0"):
        if given(name) and name not in KERNEL_HYPERPARAMETERS[kernel]:
            listed = " and ".join(filter(None, [", ".join(takes[:-1]), *takes[-1:]]))
            takes_instead = f"it takes {listed}" if takes else "it has no parameter"
            raise ParameterError(f"{param(name)} does not apply to the {kernel} kernel: {takes_instead}")
    if given("landmark_method") and context.params.get("landmarks") is None:
        raise ParameterError(f"{param('landmark_method')} chooses the frames {param('landmarks')} asks for: give both")


def note(message: str) -> None:
    click.echo(f"Note: {message}", err=True)


def warn(message: str) -> None:
    click.echo(f"Warning: {message}", err=True)
