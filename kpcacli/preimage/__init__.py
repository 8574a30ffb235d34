"""Pre-image solvers: from k codes back to a frame (seed 000, section 4).

Every solver implements :class:`~kpcacli.preimage.base.PreimageSolver` and is registered under
the name the command line's ``--solver`` option takes. Most solvers look for the pre-image as a
weighted sum of training frames, ``x* = Σ_j w_j x^j`` (eq. 31), restricted to the training
samples nearest to the code in reduced space, and work from the linear Gram alone; pixels are
touched once, to form the weighted sum.
"""

from .base import SOLVERS, Preimage, PreimageSolver, Start, get_solver, register
from .discrepancy import DiscrepancySolver
from .fixed_point import FixedPointSolver
from .gradient import GradientSolver
from .linear import LinearSolver
from .log import LogDiscrepancySolver
from .nearest import NearestSolver

DEFAULT_SOLVER = "log"

__all__ = [
    "DEFAULT_SOLVER",
    "DiscrepancySolver",
    "FixedPointSolver",
    "GradientSolver",
    "LinearSolver",
    "LogDiscrepancySolver",
    "NearestSolver",
    "Preimage",
    "PreimageSolver",
    "SOLVERS",
    "Start",
    "get_solver",
    "register",
]
