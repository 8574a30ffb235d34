"""Pre-image solvers: from k codes back to a frame (García-González et al. 2021, section 4),
layer 3 (docs/architecture.md): they read the fitted state (layer 2), never the estimators.

Every solver implements :class:`~kpcacli.preimage.base.PreimageSolver` and is registered under
the name the command line's ``--solver`` option takes. Most solvers look for the pre-image as a
weighted sum of training frames, ``x* = Σ_j w_j x^j`` (eq. 31), restricted to the training
samples nearest to the code in reduced space, and work from the linear Gram alone; pixels are
touched once, to form the weighted sum.
"""

from ..model.solverchoice import AUTO, SolverChoice
from .base import (
    SOLVERS,
    Preimage,
    PreimageSolver,
    Start,
    applicable_solvers,
    check_solver_options,
    get_solver,
    neighbours_help,
    prepared_solver,
    register,
)
from .choice import DECODING, DENOISING, OWN_FRAMES, checked_solver, prepared_for, solver_choice, solver_for
from .decoding import decoded_frames, solve_codes
from .discrepancy import DiscrepancySolver
from .distance import DistanceSolver
from .fixed_point import FixedPointSolver
from .gradient import GradientSolver
from .learned import LearnedSolver
from .linear import LinearSolver
from .log import LogDiscrepancySolver
from .measurement import named_choice, with_solver_choice
from .nearest import NearestSolver
from .rules import default_denoise_solver, rule_choice, rule_solver
from .transport import TransportSolver


def solver_help() -> str:
    """One line per solver from its own summary, for ``--solver``'s help."""
    return "; ".join(f"{name}: {SOLVERS[name].summary}" for name in sorted(SOLVERS))


__all__ = [
    "AUTO",
    "DECODING",
    "DENOISING",
    "OWN_FRAMES",
    "DiscrepancySolver",
    "DistanceSolver",
    "FixedPointSolver",
    "GradientSolver",
    "LearnedSolver",
    "LinearSolver",
    "LogDiscrepancySolver",
    "NearestSolver",
    "Preimage",
    "PreimageSolver",
    "SOLVERS",
    "SolverChoice",
    "TransportSolver",
    "Start",
    "applicable_solvers",
    "default_denoise_solver",
    "get_solver",
    "neighbours_help",
    "check_solver_options",
    "checked_solver",
    "prepared_for",
    "prepared_solver",
    "register",
    "rule_choice",
    "rule_solver",
    "named_choice",
    "solver_choice",
    "decoded_frames",
    "solve_codes",
    "with_solver_choice",
    "solver_for",
    "solver_help",
]
