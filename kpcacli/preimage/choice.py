"""The pre-image solver a command uses when none is named (``auto``): the one the model measured
at fit (:mod:`kpcacli.preimage.measurement`) and records (:class:`SolverChoice`), looked up
here by every decode, denoise and completion, and checked against the options given.
"""

from __future__ import annotations

import numpy as np

from ..model.noise import pixel_noise
from ..model.solverchoice import AUTO, SolverChoice
from ..model.state import FittedState
from .base import PreparedSolver, check_solver_options, prepared_solver
from .measurement import with_solver_choice
from .rules import default_denoise_solver


def solver_choice(state: FittedState) -> SolverChoice:
    """The choice `state` records (every fitted or loaded model does), else the one measured
    now for a state derived without a fit (:meth:`FrameModel.with_components`: a sweep's
    cells), as a fit records it (:func:`kpcacli.preimage.measurement.with_solver_choice`)."""
    if state.solver_choice is not None:
        return state.solver_choice
    return with_solver_choice(state).solver_choice


def default_solver(state: FittedState) -> str:
    """The solver used when none is named (``auto``): :func:`solver_choice`'s."""
    return solver_choice(state).solver


def solver_for(state: FittedState, name: str | None, denoising: bool = False) -> str:
    """`name`, or the model's default when it is None or ``auto``: :func:`solver_choice`'s.

    `denoising` (a solver may start at the input): the denoiser the model measured for frames;
    for points, or with denoising left unmeasured, the papers' rule, Mika's fixed point for the
    Gaussian kernel and Schölkopf's gradient otherwise, both started at the input, a point's
    own position being the better start (Mika et al. 1999; docs/commands.md, denoise)."""
    if name is not None and name != AUTO:
        return name
    if denoising and state.is_points:
        return default_denoise_solver(state.kernel.name)
    choice = solver_choice(state)
    if denoising:  # measured as denoising, else (unmeasured, or a model older than it) the rule
        return choice.denoiser or default_denoise_solver(state.kernel.name)
    return choice.solver


def own_frame_denoiser(state: FittedState, name: str | None) -> str:
    """The solver that denoises a frame the model holds (its code is a training frame's own
    view: fit on noisy frames, denoise them): `name` when one is named, else the one measured
    for such frames, else :func:`solver_for`'s denoiser."""
    if name is not None and name != AUTO:
        return name
    if not state.is_points and (own := solver_choice(state).own_denoiser) is not None:
        return own
    return solver_for(state, name, denoising=True)


def training_noise(state: FittedState) -> float:
    """The standard deviation of white noise in the training frames (value units): the one the
    choice recorded, else estimated now (:func:`kpcacli.model.noise.pixel_noise`; a model too
    small to measure, or written before the estimate was recorded)."""
    noise = state.solver_choice.noise if state.solver_choice is not None else None
    return noise if noise is not None else pixel_noise(state, np.arange(state.n_samples))


def checked_solver(state: FittedState, name: str | None, neighbours: int | None, denoising: bool = False) -> str:
    """:func:`solver_for`'s solver after :func:`kpcacli.preimage.base.check_solver_options`'
    checks, which a workflow makes before any work: `neighbours` given to a solver that takes
    none is refused when `name` named it, and warned of when it is the model's choice."""
    resolved = solver_for(state, name, denoising)
    check_solver_options(state, resolved, neighbours, named=name is not None and name != AUTO)
    return resolved


def prepared_for(
    state: FittedState, name: str | None, neighbours: int | None, denoising: bool = False
) -> PreparedSolver:
    """The solver a command decodes with (or, `denoising`, denoises with): `name`, or the
    model's choice when it is None or ``auto`` (:func:`solver_for`), checked against the options
    given (:func:`checked_solver`) and prepared once for `state` and M
    (:func:`kpcacli.preimage.base.prepared_solver`). Where ``auto`` becomes a solver for every
    decode, denoise and completion, in this process or before a cluster's tasks."""
    return prepared_solver(state, checked_solver(state, name, neighbours, denoising), neighbours)[0]
