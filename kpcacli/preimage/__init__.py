"""Pre-image solvers: from k codes back to a frame (García-González et al. 2021, section 4).

Every solver implements :class:`~kpcacli.preimage.base.PreimageSolver` and is registered under
the name the command line's ``--solver`` option takes. Most solvers look for the pre-image as a
weighted sum of training frames, ``x* = Σ_j w_j x^j`` (eq. 31), restricted to the training
samples nearest to the code in reduced space, and work from the linear Gram alone; pixels are
touched once, to form the weighted sum.
"""

from .base import (
    DEFAULT_SOLVER,
    SOLVERS,
    Preimage,
    PreimageSolver,
    Start,
    applicable_solvers,
    default_solver,
    get_solver,
    prepared_solver,
    register,
)
from .discrepancy import DiscrepancySolver
from .distance import DistanceSolver
from .fixed_point import FixedPointSolver
from .gradient import GradientSolver
from .learned import LearnedSolver
from .linear import LinearSolver
from .log import LogDiscrepancySolver
from .nearest import NearestSolver


def default_denoise_solver(kernel: str) -> str:
    """Mika's fixed point for the Gaussian (Mika et al. 1999), Schölkopf's gradient otherwise
    (Schölkopf et al. 1998): both start at the input."""
    return "fixed-point" if kernel == "rbf" else "gradient"


def solver_help() -> str:
    """One line per solver from its own summary, for ``--solver``'s help."""
    return "; ".join(f"{name}: {SOLVERS[name].summary}" for name in sorted(SOLVERS))


__all__ = [
    "DEFAULT_SOLVER",
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
    "Start",
    "applicable_solvers",
    "default_denoise_solver",
    "default_solver",
    "get_solver",
    "prepared_solver",
    "register",
    "solver_help",
]
