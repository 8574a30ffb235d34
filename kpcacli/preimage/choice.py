"""The pre-image solver a command uses when none is named (``auto``): the one the model measured
at fit (:mod:`kpcacli.preimage.measurement`) and records (:class:`SolverChoice`), resolved by
one function (:func:`solver_for`) for every decode, denoise and completion, then checked
against the options given (:func:`checked_solver`) and prepared (:func:`prepared_for`).
"""

from __future__ import annotations

import numpy as np

from ..model.noise import pixel_noise
from ..model.solverchoice import AUTO, SolverChoice
from ..model.state import FittedState
from .base import PreparedSolver, check_solver_options, prepared_solver
from .measurement import with_solver_choice
from .rules import default_denoise_solver

# What a solver is resolved for: decoding codes, denoising new frames, or denoising frames
# the model holds (their codes are a training frame's own view: fit on noisy frames, denoise
# them), each with a default of its own.
DECODING, DENOISING, OWN_FRAMES = "decoding", "denoising", "own frames"


def solver_choice(state: FittedState) -> SolverChoice:
    """The choice `state` records (every fitted or loaded model does), else the one measured
    now for a state derived without a fit (:meth:`FrameModel.with_components`: a sweep's
    cells), as a fit records it (:func:`kpcacli.preimage.measurement.with_solver_choice`)."""
    if state.solver_choice is not None:
        return state.solver_choice
    return with_solver_choice(state).solver_choice


def solver_for(state: FittedState, name: str | None, use: str = DECODING) -> str:
    """The solver `name` means for `use`: `name` itself, or the model's default when it is
    None or ``auto`` (:func:`solver_choice`'s), the one function that resolves a name.

    Decoding: the solver measured for held-back frames. Denoising (a solver may start at the
    input): the denoiser measured for frames; for points, or with denoising left unmeasured,
    the papers' rule, Mika's fixed point for the Gaussian kernel and Schölkopf's gradient
    otherwise, both started at the input, a point's own position being the better start (Mika
    et al. 1999; docs/commands.md, denoise). Own frames: the one measured for frames the model
    holds, else the denoiser."""
    if name is not None and name != AUTO:
        return name
    if use != DECODING and state.is_points:
        return default_denoise_solver(state.kernel.name)
    choice = solver_choice(state)
    if use == DECODING:
        return choice.solver
    if use == OWN_FRAMES and choice.own_denoiser is not None:
        return choice.own_denoiser
    # measured as denoising, else (unmeasured, or a model older than it) the rule
    return choice.denoiser or default_denoise_solver(state.kernel.name)


def training_noise(state: FittedState) -> float:
    """The standard deviation of white noise in the training frames (value units): the one the
    choice recorded, else estimated now (:func:`kpcacli.model.noise.pixel_noise`; a model too
    small to measure, or written before the estimate was recorded)."""
    noise = state.solver_choice.noise if state.solver_choice is not None else None
    return noise if noise is not None else pixel_noise(state, np.arange(state.n_samples))


def checked_solver(state: FittedState, name: str | None, neighbours: int | None, use: str = DECODING) -> str:
    """:func:`solver_for`'s solver after :func:`kpcacli.preimage.base.check_solver_options`'
    checks, which a workflow makes before any work: `neighbours` given to a solver that takes
    none is refused when `name` named it, and warned of when it is the model's choice."""
    resolved = solver_for(state, name, use)
    check_solver_options(state, resolved, neighbours, named=name is not None and name != AUTO)
    return resolved


def prepared_for(state: FittedState, name: str | None, neighbours: int | None, use: str = DECODING) -> PreparedSolver:
    """The solver a command uses for `use`: `name`, or the model's choice when it is None or
    ``auto`` (:func:`solver_for`), checked against the options given (:func:`checked_solver`)
    and prepared once for `state` and M (:func:`kpcacli.preimage.base.prepared_solver`). Where
    ``auto`` becomes a solver for every decode, denoise and completion, in this process or
    before a cluster's tasks."""
    return prepared_solver(state, checked_solver(state, name, neighbours, use), neighbours)[0]
