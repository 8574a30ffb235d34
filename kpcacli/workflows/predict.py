"""``kpca predict``: frames for parameter values never seen (:mod:`kpcacli.estimators.parametric`),
written as ``decode`` writes them."""

from __future__ import annotations

import warnings

from ..estimators.parametric import map_kind, outside_range, predicted_codes, prediction_solver, transported_codes
from ..io.codes import codes_header, write_matrix
from ..io.outputs import FrameTarget, check_video_options
from ..io.parametertable import parse_assignments, read_parameter_table
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..model.parameters import ordered_rows
from ..modelfile import load as load_state
from ..preimage import AUTO
from ..utils.atomic import check_target
from ..utils.errors import ParameterError, ParameterWarning, param
from .running import engine_for, write_decoded


def predict_frames(
    source: str | None,
    model_path,
    *,
    output=None,
    assignments=(),
    codes_path=None,
    std_path=None,
    map: str | None = None,
    solver: str | None = None,
    neighbours: int | None = None,
    video: VideoSettings = DEFAULT_VIDEO,
    warn=None,
    note=None,
    stdin=None,
    progress: bool = False,
) -> int:
    """``kpca predict``: frames (or point rows) at the parameter values of the table `source`
    (a file or ``-``: `stdin`) or of `assignments` (``name=value``, one row), through the
    model's map and default pre-image, written to `output` as ``decode`` writes them; the
    codes to `codes_path` and their standard deviations to `std_path` when asked (with the
    thin-plate map chosen by the fit, the Gaussian process's, said in one line to `note`). Values
    outside the training range are predicted after one line to `warn`. Returns the count.

    The transport solver uses no map: it moves the training frames nearest in parameter space
    (:func:`kpcacli.estimators.parametric.predicted_frames`). A `map` named beside it is refused
    when the solver was named too, else warned of as unused; the codes written are those of
    the frames it moved, weighted as they were (:func:`transported_codes`), said to `note`."""
    if source is None and not assignments:
        raise ParameterError(
            f"give the parameters: a table PARAMS (- for standard input), or {param('param')} name=value"
        )
    if source is not None and assignments:
        raise ParameterError(f"give the parameters as a table or as {param('param')} name=value, not both")
    state = load_state(model_path)
    check_video_options(output, video)
    for path in (codes_path, std_path):
        if path is not None:
            check_target(path)
    values, names = parse_assignments(assignments) if assignments else read_parameter_table(source, stdin=stdin)
    rows = ordered_rows(state.parameters, values, names)
    transport = prediction_solver(state, solver) == "transport"  # ordered_rows refused a model without parameters
    if transport:
        _check_map_unused(state, map, solver)
        codes, std = transported_codes(state, rows, neighbours), None
        if note is not None and (codes_path is not None or std_path is not None):
            note(
                "the transport solver moved the training frames nearest in parameter space, without a map: the codes "
                "are theirs, weighted as their frames were"
                + ("; the standard deviations are the Gaussian process's at these parameters" if std_path else "")
            )
    else:
        codes, std = predicted_codes(state, rows, map)
    if std_path is not None and std is None:
        std = _process_std(state, rows, None if transport else map)
        if note is not None and not transport:
            note(
                "the thin-plate map (the model's choice) predicted the codes; the standard deviations are the "
                "Gaussian process's, fitted beside it"
            )
    if not state.is_points:
        output = FrameTarget.of(output)
        output.check(len(rows))
    message = outside_range(state, rows)
    if message is not None and warn is not None:
        warn(message)
    with engine_for(None, progress) as engine:
        write_decoded(state, engine.predict(state, rows, map, solver, neighbours), len(rows), output, video, progress)
    if codes_path is not None:
        write_matrix(codes, codes_path, header=codes_header(state.fingerprint, state.n_components), column="z")
    if std_path is not None:
        write_matrix(
            std, std_path, header=f"kpca standard deviations of the codes of model {state.fingerprint}", column="z"
        )
    return len(rows)


def _check_map_unused(state, map: str | None, solver: str | None) -> None:
    """Refuse a map named beside a named transport solver, which uses none; warn of one named
    when transport is the model's choice."""
    if map in (None, "auto"):
        return
    map_kind(state.parameters, map)  # a map that was asked for must exist
    why = (
        f"the transport solver predicts from the training frames nearest in parameter space, without a map; "
        f"name another {param('solver')} to decode the {map} map's codes"
    )
    if solver not in (None, AUTO):
        raise ParameterError(f"{param('map')} {map} does not apply: {why}")
    warnings.warn(f"{param('map')} {map} is not used: {why}", ParameterWarning, stacklevel=3)


def _process_std(state, rows, map: str | None):
    """The Gaussian process's standard deviations at `rows` for a prediction whose map gives
    none: the model's own choice of the thin-plate map leaves the process beside it; a map the
    user named (``--map thin-plate``) is what they asked for, and has none."""
    if map in (None, "auto") and "gaussian-process" in state.parameters.available():
        return predicted_codes(state, rows, "gaussian-process")[1]
    kind = state.parameters.kind if map in (None, "auto") else map
    raise ParameterError(
        f"the {kind} map gives no standard deviation: {param('map')} gaussian-process predicts with one"
    )
