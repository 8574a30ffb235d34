"""The papers' rules for a model's default pre-image solvers, which need no measurement: the
solver the kernel names for decoding (:func:`rule_solver`), the one for denoising
(:func:`default_denoise_solver`), and the choice that records the rule alone
(:func:`rule_choice`: models too small to hold frames back, states derived without a fit,
model files older than the measured choice).
"""

from __future__ import annotations

from ..model.solverchoice import SolverChoice
from ..model.state import FittedState

# The kernel's rule for the Gaussian kernel (what auto is measured against, and the default
# where nothing is measured): the distance pre-image keeps eq. 35's quality at small k and
# improves as k grows, where eq. 35 levels off (docs/quality.md). The paper's log solver is
# the rule for the other kernels, whose values are not distances.
GAUSSIAN_RULE = "distance"


def rule_solver(state: FittedState) -> str:
    """The solver the kernel names: distance for the Gaussian kernel, log otherwise, and the
    discrepancy solver (eq. 33, which takes centred kernel values) for
    a centred kernel (the default of models fitted before the choice was measured, and of
    models too small to hold frames back)."""
    if state.centred:
        return "discrepancy"
    return GAUSSIAN_RULE if state.kernel.name == "rbf" else "log"


def default_denoise_solver(kernel: str) -> str:
    """The papers' denoising rule: Mika's fixed point for the Gaussian (Mika et al. 1999),
    Schölkopf's gradient otherwise (Schölkopf et al. 1998); both start at the input."""
    return "fixed-point" if kernel == "rbf" else "gradient"


def rule_choice(state: FittedState) -> SolverChoice:
    """The kernel's rule as `state`'s choice, unmeasured."""
    return SolverChoice(rule_solver(state), rule_solver(state))
