"""The record of a model's default pre-image solver (``auto``): which solver decodes and which
denoises, the kernel's rule it was measured against, and the scores behind them, as the fitted
state holds it (:attr:`kpcacli.model.state.FittedState.solver_choice`), the model file keeps it
(``solver_choice``: :meth:`SolverChoice.as_attributes`, read back and checked by
:func:`check_solver_choice`): the record and its file form. ``kpca fit`` and ``kpca info``
print it in words (:mod:`kpcacli.workflows.choicesummary`).

A fit measures it (:mod:`kpcacli.preimage.measurement`); a decode looks it up
(:mod:`kpcacli.preimage.choice`); the kernel's rule is :mod:`kpcacli.preimage.rules`'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from ..utils.errors import ModelFileError

AUTO = "auto"  # the name --solver and solver= take for the measured choice
MARGIN_DB = 1.5  # what another blend must gain over the rule's to be chosen
# Solvers that form pixels (two optical flows a frame): scored on this many of the held-back
# frames, and chosen when at least the blends' choice on the same frames, with no margin: they
# score worse held back than between frames (docs/quality.md, the choice and its cost).
PIXEL_SOLVERS = ("transport",)


@dataclass(frozen=True)
class SolverChoice:
    """The solver a model decodes with by default, and what it was chosen on.

    Attributes
    ----------
    solver : str
    rule : str
        The solver the kernel's rule names, kept unless another blend scored ``MARGIN_DB``
        above it, or the transport solver at least the blends' choice.
    scores : dict of str to float
        PSNR (dB) of each candidate on the held-back training frames; empty when nothing was
        measured (a model fitted before the choice, or one too small to hold frames back).
    held_back : int
        Training frames held back and decoded.
    denoiser : str, optional
        The solver that denoised the held-back frames best (``kpca denoise``'s default for new
        frames); None when not measured.
    denoising : dict of str to float
        Mean PSNR (dB) of each candidate denoising the held-back frames.
    denoised : int
        Held-back frames the chosen denoiser denoised.
    compared : dict
        Where a solver was scored on some of the held-back frames (``PIXEL_SOLVERS``): how many
        (``frames``), and its PSNR and the best blend's on those frames, by name; empty otherwise.
    own_denoiser : str, optional
        The solver that denoises frames the model holds best (fit on noisy frames, denoise
        them), estimated against the clean frames; None when not measured.
    own_denoising : dict of str to float
        Its estimated PSNR (dB) and the other candidates'.
    noise : float, optional
        The standard deviation of white noise in the training frames (value units), estimated
        from their pixels (:func:`kpcacli.model.noise.pixel_noise`).
    named : bool
        Whether `solver` was named at fit (``kpca fit --solver``) rather than measured.
    """

    solver: str
    rule: str
    scores: dict[str, float] = field(default_factory=dict)
    held_back: int = 0
    denoiser: str | None = None
    denoising: dict[str, float] = field(default_factory=dict)
    denoised: int = 0
    compared: dict = field(default_factory=dict)
    own_denoiser: str | None = None
    own_denoising: dict[str, float] = field(default_factory=dict)
    noise: float | None = None
    named: bool = False

    def defaults(self) -> set[str]:
        """The solvers commands use when none is named: decoding's, denoising's (the kernel's
        rule where denoising was not measured) and, for frames the model holds, its own."""
        return {self.solver, self.denoiser or self.rule, self.own_denoiser or self.denoiser or self.rule}

    def as_recorded(self) -> SolverChoice:
        """This choice as the model file records it (:meth:`as_attributes`: scores to two decimals,
        the noise to 4 decimals), what a fitted state holds, so that a model prints and
        denoises the same before and after it is saved."""
        return SolverChoice.from_attributes(self.as_attributes())

    def as_attributes(self) -> dict:
        """What the model file records (JSON); ``denoising`` only when it was measured (models
        written before it was have none, and denoise by the papers' rule)."""
        attributes = {
            "solver": self.solver,
            "rule": self.rule,
            "scores": _rounded(self.scores),
            "held_back": int(self.held_back),
        }
        if self.named:
            attributes["named"] = True
        if self.compared:
            attributes["compared"] = {name: value for name, value in self.compared.items()}
        if self.denoiser is not None:
            attributes["denoising"] = {
                "solver": self.denoiser,
                "scores": _rounded(self.denoising),
                "held_back": int(self.denoised),
            }
            if self.own_denoiser is not None:
                attributes["denoising"]["own"] = {"solver": self.own_denoiser, "scores": _rounded(self.own_denoising)}
                attributes["denoising"]["noise"] = round(float(self.noise), 4)
        return attributes

    @classmethod
    def from_attributes(cls, attributes: dict) -> SolverChoice:
        denoising = attributes.get("denoising") or {}
        own = denoising.get("own") or {}
        return cls(
            str(attributes["solver"]),
            str(attributes["rule"]),
            {str(name): float(value) for name, value in attributes["scores"].items()},
            int(attributes["held_back"]),
            str(denoising["solver"]) if denoising else None,
            {str(name): float(value) for name, value in denoising.get("scores", {}).items()},
            int(denoising.get("held_back", 0)),
            {
                str(name): int(value) if name == "frames" else float(value)
                for name, value in attributes.get("compared", {}).items()
            },
            str(own["solver"]) if own else None,
            {str(name): float(value) for name, value in own.get("scores", {}).items()},
            float(denoising["noise"]) if "noise" in denoising else None,
            bool(attributes.get("named", False)),
        )


def _rounded(scores: dict[str, float]) -> dict[str, float]:
    return {name: round(float(value), 2) for name, value in scores.items()}


def check_solver_choice(choice, solvers, error=ModelFileError) -> SolverChoice | None:
    """A model file's ``solver_choice`` as its record (:class:`SolverChoice`): None (a model
    older than it), or a mapping of the chosen solver and the rule's, both among
    `solvers`, finite scores by solver name (none when nothing was measured, and then the
    rule's solver was chosen), the count of frames held back, and optionally the denoising
    choice (a solver among its own finite scores). A solver named at fit (``named``: true)
    has no scores and no frames held back, and neither has its denoising choice."""
    if choice is None:
        return None
    scores = choice.get("scores") if isinstance(choice, dict) else None
    held_back = choice.get("held_back") if isinstance(choice, dict) else None
    named = choice.get("named", False) if isinstance(choice, dict) else None
    valid = (
        isinstance(choice, dict)
        and isinstance(named, bool)
        and choice.get("solver") in solvers
        and choice.get("rule") in solvers
        and _valid_count(held_back, 0)
        and _valid_scores(scores, solvers)
        and (
            not scores and held_back == 0
            if named
            else (choice["solver"] in scores if scores else choice["solver"] == choice["rule"] and held_back == 0)
        )
        and _valid_denoising(choice.get("denoising"), solvers, named)
    )
    if not valid:
        raise error(
            "solver_choice must name a known solver, the rule's solver, the scores of the solvers "
            "measured, the count of frames held back and any denoising solver among its scores. "
            f"Got {json.dumps(choice)[:80]} instead."
        )
    return SolverChoice.from_attributes(choice)


def _valid_denoising(denoising, solvers, named: bool) -> bool:
    """The optional ``denoising`` of a solver choice: absent, or the chosen solver among finite
    scores by solver name, and the count of frames denoised (at least one); named at fit, a
    known solver with no scores and no frames denoised."""
    if denoising is None:
        return True
    if not isinstance(denoising, dict):
        return False
    scores = denoising.get("scores")
    if named:
        return denoising.get("solver") in solvers and scores == {} and denoising.get("held_back") == 0
    return (
        _valid_scores(scores, solvers)
        and denoising.get("solver") in scores
        and _valid_count(denoising.get("held_back"), 1)
    )


def _valid_scores(scores, solvers) -> bool:
    """A mapping of solver names among `solvers` to finite numbers."""
    return isinstance(scores, dict) and all(
        name in solvers and isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
        for name, value in scores.items()
    )


def _valid_count(count, low: int) -> bool:
    """An int (not a bool) of at least `low`."""
    return isinstance(count, int) and not isinstance(count, bool) and count >= low
