"""Frames for parameter values never computed: a parameter map's codes through the pre-image.

The reduced model of García-González et al. (2021, section 1) used as its field uses it:
snapshots at parameter values p_i are reduced to codes z_i, the map p -> z
(:mod:`kpcacli.numerics.parametermap`) gives the codes at a new p, and the model's default
pre-image gives the snapshot (González et al. 2018; Díez et al. 2021).

How good the map is, is measured at fit on the training frames themselves, each left out of
the map in turn: the leave-one-out codes in code units, and the frames predicted from them
against the true frames (the pre-image then builds each frame from the others only:
:meth:`kpcacli.model.neighbours.NeighbourSearch.nearest`'s ``exclude_view_of``). The codes
and the pre-image's eigenvectors are still the whole model's: the figure is a little kinder
than a model refitted without the frame would give.

The same left-out frames choose the solver ``predict`` uses by default: each candidate
predicts them as ``predict`` would, the blends by decoding the map's leave-one-out codes and
the transport solver by moving the frames nearest in parameter space (the left-out frame not
among them), and the best mean PSNR wins, the transport solver within
``TRANSPORT_ALLOWANCE_DB`` of it. The model's decoding choice is made by decoding
held-back frames from their codes, and a code does not say where a frame lies as exactly as
its parameters do: pulses that do not overlap are placed by their parameters, not by their
codes (EZyRB's travelling pulse: docs/parameters.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from ..model.parameters import Parameters, check_parameter_rows, check_parameter_values, ranked_psnr
from ..model.solverchoice import PIXEL_SOLVERS
from ..model.state import FittedState
from ..numerics.landmarks import evenly_spaced
from ..numerics.metrics import data_range, mean_psnr, psnr, psnr_of_mse
from ..numerics.parametermap import MAP_KINDS
from ..preimage import AUTO, Preimage, decoded_frames, prepared_solver, solver_choice, solver_for
from ..preimage.base import scoring_solver
from ..preimage.decoding import batched_frames
from ..preimage.heldout import pixel_squared_error
from ..preimage.log import barycentric_weights
from ..preimage.measurement import CANDIDATES
from ..preimage.synthesis import preimage_frames
from ..utils.checks import check_choice
from ..utils.errors import InputError, param

LOO_FRAMES = 40  # training frames decoded from their leave-one-out codes at fit, spread evenly
# What the transport solver may score below the best blend on the frames left out and still be
# chosen to predict: left out, a frame's neighbours in parameter space are twice as far apart
# as a new row's, and the flow between them is harder to find; the blends lose less there,
# and the learned map still holds the frame left out (docs/parameters.md, predict's default).
TRANSPORT_ALLOWANCE_DB = 1.5


def with_parameters(state: FittedState, values, names=None) -> FittedState:
    """`state` with the parameters `values` of its training frames (one row each; `names`
    default to ``param1``, …), both maps fitted and the chosen one's leave-one-out error
    measured in code units, and the solver ``predict`` uses by default chosen by predicting up
    to :data:`LOO_FRAMES` of the frames left out (:func:`prediction_scores`)."""
    values, names = check_parameter_values(values, names, state.n_samples)
    try:
        parameters, loo_codes = Parameters.fitted(names, values, state.codes)
    except ValueError as error:
        raise InputError(f"no map from these parameters to codes could be fitted: {error}") from None
    with_map = dataclasses.replace(state, parameters=parameters)
    scores, count = prediction_scores(with_map, loo_codes)
    solver = chosen_predictor(scores)
    chosen = dataclasses.replace(
        parameters, loo_psnr=scores[solver], loo_frames=count, solver=solver, solver_scores=scores
    )
    return dataclasses.replace(state, parameters=chosen)


def chosen_predictor(scores: dict[str, float | None]) -> str:
    """The solver ``predict`` uses by default, from each candidate's leave-one-out PSNR
    (:func:`prediction_scores`): the best blend (on a tie, the first candidate), unless the
    transport solver scores within ``TRANSPORT_ALLOWANCE_DB`` of it."""
    blends = [name for name in scores if name != "transport"]
    best = max(blends, key=lambda name: ranked_psnr(scores[name]))
    if "transport" in scores and ranked_psnr(scores["transport"]) >= ranked_psnr(scores[best]) - TRANSPORT_ALLOWANCE_DB:
        return "transport"
    return best


def prediction_candidates(state: FittedState) -> list[str]:
    """The solvers a parameter model's prediction is chosen from: the model's decoding choice,
    the blend that scored best in it (when another), and the transport solver for frames."""
    choice = solver_choice(state)
    names = [choice.solver]
    blends = {name: score for name, score in choice.scores.items() if name not in PIXEL_SOLVERS}
    if blends:
        names.append(max(blends, key=lambda name: (blends[name], -CANDIDATES.index(name))))
    if not state.is_points:
        names.append("transport")
    return list(dict.fromkeys(names))


def prediction_scores(state: FittedState, loo_codes: np.ndarray) -> tuple[dict[str, float | None], int]:
    """Each candidate's mean PSNR predicting training frames left out (None: every one exact),
    by name in :func:`prediction_candidates`' order, and how many frames: up to
    :data:`LOO_FRAMES`, evenly spread, each predicted without itself. `loo_codes` are the map's
    leave-one-out codes (n, k)."""
    n = state.n_samples
    chosen = evenly_spaced(n, LOO_FRAMES)
    scores = {}
    for name in prediction_candidates(state):
        if name == "transport":
            values = _transported_psnrs(state, chosen)
        else:
            method, _ = prepared_solver(state, name, None)
            preimages = [method.preimage(state, loo_codes[i], exclude_view_of=int(i)) for i in chosen]
            decoded = preimage_frames(state, preimages)
            values = [psnr(np.asarray(state.frames[i]), frame.reshape(-1)) for i, frame in zip(chosen, decoded)]
        result = mean_psnr(values)
        scores[name] = float(result) if np.isfinite(result) else None
    return scores, len(chosen)


def _transported_psnrs(state: FittedState, chosen: np.ndarray) -> list[float]:
    """The PSNR of each training frame `chosen` predicted by the transport solver from its
    parameters, the frame itself left out of its neighbours; scored at the solver choice's grid
    of pixels (:meth:`kpcacli.preimage.transport.TransportSolver.prepare_scoring`), as the
    decoding choice scores it."""
    method = scoring_solver(state, "transport")
    training = state.parameters.box.scaled(state.parameters.values)
    count = min(_transport_count(state, None), state.n_samples - 1)
    peak, d = data_range(state.frames.dtype), state.frames.shape[1]
    values = []
    for i in chosen:
        others = np.delete(np.arange(state.n_samples), i)
        nearest, weights = parameter_neighbours(training[others], training[i], count)
        preimage = method.solver.transported(state, others[nearest], weights, method.prepared)
        values.append(psnr_of_mse(pixel_squared_error(state.frames[int(i)], preimage) / d, peak))
    return values


def prediction_solver(state: FittedState, name: str | None) -> str:
    """`name`, or where it is None or ``auto`` the solver the model's prediction chose at fit
    (a model fitted before it was chosen: its decoding choice)."""
    if name is not None and name != AUTO:
        return name
    return state.parameters.solver or solver_for(state, None)


def predicted_codes(state: FittedState, rows, kind: str | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The codes the map `kind` (default: the model's) gives at the parameter `rows`, (m, k),
    and their standard deviations where the map gives them (the Gaussian process), else None."""
    rows = check_parameter_rows(state.parameters, rows)
    kind = map_kind(state.parameters, kind)
    points = state.parameters.box.scaled(rows)
    mapping = state.parameters.map(state.codes, kind)
    return mapping.codes(points), mapping.std(points)


def predicted_frames(
    state: FittedState, rows, kind: str | None = None, solver: str | None = None, neighbours: int | None = None
) -> Iterator[np.ndarray]:
    """Frames at the parameter `rows`, in order, a batch at a time (checked before this
    returns): the codes of the map `kind` decoded by `solver` (None or ``auto``: the model's
    prediction choice, :func:`prediction_solver`; :func:`kpcacli.preimage.decoding.decoded_frames`).

    The transport solver takes its neighbours and weights in parameter space instead
    (:func:`parameter_neighbours`), which say exactly where between the training frames a row
    lies where a code says it only roughly (transported snapshot interpolation: Nair and
    Balajewicz 2019).
    """
    name = prediction_solver(state, solver)
    if name != "transport":
        return decoded_frames(state, predicted_codes(state, rows, kind)[0], name, neighbours)
    rows = check_parameter_rows(state.parameters, rows)
    map_kind(state.parameters, kind)  # a map that was asked for must exist, though none is used
    method, _ = prepared_solver(state, name, _transport_count(state, neighbours))
    training, points = _scaled(state, rows)

    def preimage(point: np.ndarray) -> Preimage:
        nearest, weights = parameter_neighbours(training, point, method.count)
        return method.solver.transported(state, nearest, weights, method.prepared)

    return batched_frames(state, points, preimage)


def transported_codes(state: FittedState, rows, neighbours: int | None = None) -> np.ndarray:
    """The codes a transport prediction at the parameter `rows` stands for, (m, k): the codes
    of the training frames it moves (:func:`parameter_neighbours`), weighted as their frames
    are, ``Σ_i w_i z_i``. No map gives them; a point inside the training range decodes back
    to the predicted frame where its neighbours in reduced space are the same frames."""
    rows = check_parameter_rows(state.parameters, rows)
    training, points = _scaled(state, rows)
    count = min(_transport_count(state, neighbours), state.n_samples)
    codes = np.empty((len(points), state.n_components))
    for row, point in enumerate(points):
        nearest, weights = parameter_neighbours(training, point, count)
        codes[row] = weights @ state.codes[nearest]
    return codes


def _transport_count(state: FittedState, neighbours: int | None) -> int:
    """M for a transport prediction: by default one more than the parameters, a segment for
    one, a triangle for two, ..."""
    return neighbours if neighbours is not None else state.parameters.count + 1


def _scaled(state: FittedState, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The training parameters and `rows` in the unit box's scaled units."""
    box = state.parameters.box
    return box.scaled(state.parameters.values), box.scaled(rows)


def parameter_neighbours(training: np.ndarray, point: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The training rows a prediction at `point` is moved from, and their weights (summing to
    one), in the scaled parameter units of `training` (n, p).

    One parameter and two neighbours (the default): the nearest training value at or below the
    point and the nearest above, weighted by where the point lies between them; beyond the
    training range, the two nearest, the weights extrapolating along them (one negative: the
    nearest frame is moved on, away from the other). Otherwise the `count` nearest rows and the
    point's barycentric weights among them (the nearest point of their hull).
    """
    if training.shape[1] == 1 and count == 2 and len(training) > 1:
        values, value = training[:, 0], float(point[0])
        below, above = np.flatnonzero(values <= value), np.flatnonzero(values > value)
        if len(below) and len(above):
            pair = np.array([below[np.argmax(values[below])], above[np.argmin(values[above])]])
        else:
            pair = np.argsort(np.abs(values - value), kind="stable")[1::-1]  # the next nearest, the nearest
        span = float(values[pair[1]] - values[pair[0]])
        t = (value - float(values[pair[0]])) / span if span != 0.0 else 1.0
        return pair, np.array([1.0 - t, t])
    nearest = np.argsort(np.linalg.norm(training - point, axis=1), kind="stable")[:count]
    return nearest, (barycentric_weights(training[nearest], point) if len(nearest) > 1 else np.ones(1))


def map_kind(parameters: Parameters, kind: str | None) -> str:
    """The map `kind` names (None or ``auto``: the model's), refused when unknown or not fitted."""
    if kind is None or kind == "auto":
        return parameters.kind
    kind = check_choice(param("map"), kind, ("auto", *MAP_KINDS))
    if kind not in parameters.available():
        raise InputError(f"this model has no {kind} map: it could not be fitted to the training parameters")
    return kind


def outside_range(state: FittedState, rows) -> str | None:
    """One line when parameter `rows` lie outside the training range (the map extrapolates
    there), else None."""
    parameters = state.parameters
    rows = check_parameter_rows(parameters, rows)
    outside = parameters.box.outside(rows)
    if not outside.any():
        return None
    which = "the parameter row" if len(rows) == 1 else f"{int(outside.sum())} of {len(rows)} parameter rows"
    return f"{which} {'lies' if outside.sum() == 1 else 'lie'} outside the training range ({parameters.ranges()}): extrapolated"
