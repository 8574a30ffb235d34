"""Frames for parameter values never computed: a parameter map's codes through the pre-image.

The reduced model of García-González et al. (2021, section 1) used as its field uses it:
snapshots at parameter values p_i are reduced to codes z_i, the map p -> z
(:mod:`kpcacli.numerics.parametermap`) gives the codes at a new p, and the model's default
pre-image gives the snapshot (González et al. 2018; Díez et al. 2021).

How good the map is, is measured at fit on the training frames themselves, each left out of
the map in turn: the leave-one-out codes in code units, and the frames decoded from them
against the true frames (the pre-image then builds each frame from the others only:
:meth:`kpcacli.model.neighbours.NeighbourSearch.nearest`'s ``exclude_view_of``). The codes
and the pre-image's eigenvectors are still the whole model's: the figure is a little kinder
than a model refitted without the frame would give.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..model.parameters import Parameters, check_parameter_rows, check_parameter_values
from ..model.state import FittedState
from ..numerics.metrics import mean_psnr, psnr
from ..numerics.parametermap import MAP_KINDS
from ..preimage import prepared_solver, solver_for
from ..preimage.synthesis import preimage_frames
from ..utils.checks import check_choice
from ..utils.errors import InputError, param

LOO_FRAMES = 40  # training frames decoded from their leave-one-out codes at fit, spread evenly


def with_parameters(state: FittedState, values, names=None) -> FittedState:
    """`state` with the parameters `values` of its training frames (one row each; `names`
    default to ``param1``, …), both maps fitted and the chosen one's leave-one-out error
    measured in code units and on up to :data:`LOO_FRAMES` decoded frames."""
    values, names = check_parameter_values(values, names, state.n_samples)
    try:
        parameters, loo_codes = Parameters.fitted(names, values, state.codes)
    except ValueError as error:
        raise InputError(f"no map from these parameters to codes could be fitted: {error}") from None
    psnr_value, count = _leave_one_out_psnr(state, loo_codes)
    return dataclasses.replace(state, parameters=dataclasses.replace(parameters, loo_psnr=psnr_value, loo_frames=count))


def _leave_one_out_psnr(state: FittedState, loo_codes: np.ndarray) -> tuple[float | None, int]:
    """The mean PSNR of training frames decoded from their leave-one-out codes, each from
    the other frames only (None when every one is exact), and how many were decoded."""
    n = state.n_samples
    chosen = np.unique(np.rint(np.linspace(0, n - 1, min(n, LOO_FRAMES))).astype(int))
    method, _ = prepared_solver(state, solver_for(state, None), None)
    preimages = [method.preimage(state, loo_codes[i], exclude_view_of=int(i)) for i in chosen]
    decoded = preimage_frames(state, preimages)
    values = [psnr(np.asarray(state.frames[i]), frame.reshape(-1)) for i, frame in zip(chosen, decoded)]
    result = mean_psnr(values)
    return (float(result) if np.isfinite(result) else None), len(chosen)


def predicted_codes(state: FittedState, rows, kind: str | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The codes the map `kind` (default: the model's) gives at the parameter `rows`, (m, k),
    and their standard deviations where the map gives them (the Gaussian process), else None."""
    rows = check_parameter_rows(state.parameters, rows)
    kind = _map_kind(state.parameters, kind)
    points = state.parameters.box.scaled(rows)
    mapping = state.parameters.map(state.codes, kind)
    return mapping.codes(points), mapping.std(points)


def _map_kind(parameters: Parameters, kind: str | None) -> str:
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
