"""The pre-image solver a model decodes with when none is named (``auto``): chosen by measurement.

No solver is the best on every sequence (docs/quality.md), so a fit measures which one
reconstructs training frames it held back best (:func:`with_solver_choice`, the last step of
:meth:`FrameModel.fit`); the model file records the choice and its scores (``solver_choice``),
and ``kpca fit`` and ``kpca info`` print them.

The protocol, in weight space from the n x n linear Gram but for the one solver whose
pre-image is not a weighted sum of training frames (transport):

* the training frames (at most ``MAX_POPULATION`` of them, evenly spaced) are cut into
  ``FOLDS`` interleaved folds (frame i in fold ``i mod FOLDS``), so that a held-back frame's
  neighbours in time stay in the model that decodes it;
* for each fold, a model of the other frames is fitted from the Gram's rows and columns
  (:func:`kpcacli.model.spectralfit.spectral_fit`: same kernel, same centring, same k), up to
  ``HELD_BACK / FOLDS`` of the fold's frames, spread over the clip (:func:`_interleaved`), are
  encoded from their Gram rows, and every candidate decodes them as it would (its default
  neighbours);
* a pre-image ``Σ_j w_j x_j`` (plus the distance solver's moves along its linear axes, which
  are weighted sums of training frames too) lies at squared distance ``(w − e_h)ᵀ L (w −
  e_h)`` from the held-back frame h; the transport solver's pre-image (its neighbours moved
  along the optical flow between them) is formed in pixels, at every s-th pixel each way
  (:func:`kpcacli.numerics.displacement.scoring_grid`, at least ``SCORED_PIXELS``), and its
  squared distance to the frame there scaled to the whole frame, reading only its two
  neighbours and the held-back frame; the score is the mean over the frames of their PSNR, the
  figure ``kpca eval`` and ``kpca compare`` report for decoded frames (a frame decoded exactly
  left out, :func:`kpcacli.numerics.metrics.mean_psnr`). The PSNR of the mean squared error,
  the score before, is decided by the few frames every solver fails on (a jolt of the camera):
  on mire-2 it ranked the distance solver above transport at k = 3, 20 and 40 where decoding
  met transport well above it (docs/quality.md, "Scored as decoding is"). Points (no frames to
  score one by one) keep the PSNR of the mean squared error, the figure of scikit-learn's
  gallery.
* Two optical flows a frame make the transport solver the costliest candidate to score by far:
  it decodes ``PIXEL_HELD_BACK`` of the held-back frames, spread over the clip too, and is
  compared with the blends' choice on the same frames.

The kernel's rule (:func:`rule_solver`) is kept unless another solver scores ``MARGIN_DB``
above it: a held-back frame is twice as far from its nearest training frames as a frame
between two training frames is, and the ranking at that spacing favours smooth maps more than
the ranking between frames does. The transport solver is the other way round (its neighbours
twice as far apart, the flow between them is harder to find, and it loses more than the blends
do), so it needs no margin: it is chosen when it scores at least the blends' choice on the
frames it decoded. Points (1-D samples) are in no order, and holding a quarter back leaves the
others as dense as they were: the best score wins.

Denoising is measured apart (``kpca denoise``, :meth:`FrameModel.denoise`): the held-back
frames denoised, each solver started at the frame where it takes a start, and the best wins,
no margin. Denoise takes a new frame's noise out of its kernel arguments (the
``σ² d`` white noise adds to every squared distance in expectation,
:func:`kpcacli.model.noise.noise_free_arguments`), so a noisy frame is denoised from nearly
the kernel values of the clean one, and the held-back frames are scored as they are: with
noise added and taken out again they would score the same. A frame the model holds is
denoised without its own copies among its neighbours, its other views kept
(:meth:`kpcacli.model.neighbours.NeighbourSearch.nearest`'s ``exclude_copies_of``), as a
held-back frame is decoded beside its neighbours in time; but the learned map was fitted on
it, and denoises it by its in-sample fit, which no held-back frame meets. So such frames have
their own denoiser (:func:`own_frame_denoiser`), chosen from the held-back errors and the
learned map's in-sample error, estimated by Stein's unbiased risk estimate, each against the
clean frame with the frames' noise estimated from their pixels
(:func:`_own_frame_errors`, :func:`kpcacli.model.noise.pixel_noise`; Stein 1981, Donoho and
Johnstone 1994).

Noisy training frames are scored against themselves: the noise adds the same ``σ²`` to every
candidate's error, provided a pre-image cannot hold the held-back frame's own noise. A frame's
k codes carry a vanishing share of the noise of its pixels; a point's codes may carry all of
it, and a solver that gives them back would score as if the noise were signal. So points are
scored feature by feature: half the features make the code, the other half is scored, and the
other way round (J-invariance); the solver that denoises best wins.

References
----------
Mika et al. 1999 (denoising by the fixed point); Batson and Royer 2019, *Noise2Self*
(J-invariance). Figures: docs/quality.md, "The default solver (auto)" and "Denoising the
frames a model was fitted on".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..model.noise import pixel_noise
from ..model.spectralfit import spectral_fit
from ..model.state import FittedState
from ..numerics.gram import CrossProducts, LinearGram
from ..numerics.landmarks import evenly_spaced
from ..numerics.metrics import data_range, mean_psnr, psnr_of_mse
from ..utils.checks import check_choice
from ..utils.errors import KpcaError
from ..utils.progress import progress_bar
from .base import DEFAULT_SOLVER, SOLVERS, Preimage, Start, check_solver_options, prepared_solver, scoring_solver
from .distance import linear_axes
from .synthesis import preimage_vectors

AUTO = "auto"  # the name --solver and solver= take for the measured choice
FOLDS = 4
HELD_BACK = 40  # training frames held back and decoded, at most, over all folds
MARGIN_DB = 1.5  # what another blend must gain over the rule's to be chosen
# Solvers that form pixels (two optical flows a frame): scored on this many of the held-back
# frames, and chosen when at least the blends' choice on the same frames, with no margin: they
# score worse held back than between frames (docs/quality.md, the choice and its cost).
PIXEL_SOLVERS = ("transport",)
PIXEL_HELD_BACK = 16
# The candidates: every solver that decodes in weight space, and the transport solver (frames
# only), scored at a grid of pixels. Left out: the gradient solver (L-BFGS in pixel space, a
# pass over every training frame per step) and the discrepancy solver (best on no sequence in
# docs/quality.md, and the slowest to score).
CANDIDATES = ("distance", "log", "learned", "fixed-point", "nearest", "linear", "transport")
STARTED = ("fixed-point",)  # candidates that start at the input when denoising
# An estimated error of denoising a frame the model holds is kept at least the noise's squared
# error over this (a hundredth of it): an estimate of σ a little high must not make a frame look
# denoised without error, which would outweigh every other frame in a mean PSNR.
OWN_ERROR_FLOOR = 100.0
LEARNED_MAX_SAMPLES = 1200  # the ridge map's leave-one-out search: eight n x n eigenproblems
# A model of more training frames measures on this many of them, evenly spaced: each fold's
# model is an n x n eigenproblem, and so is the distance solver's calibration.
MAX_POPULATION = 2000
ARPACK_FROM = 500  # a fold's model of more frames than this computes only its k eigenpairs
# Points of at least this many features are scored feature by feature (_split_feature_errors):
# with few features a code holds a sample's own noise, and a solver that gives it back scores
# as if it were signal (the distance solver on noisy digits at k = 128 over 64 values).
# Shorter points (2-D and 3-D point sets) keep the rules: nothing tells noise from signal.
MIN_SPLIT_FEATURES = 8


def rule_solver(state: FittedState) -> str:
    """The solver the kernel names: distance for the Gaussian kernel, log otherwise, and the
    discrepancy solver (eq. 33, which takes centred kernel values) for
    a centred kernel (the default of models fitted before the choice was measured, and of
    models too small to hold frames back)."""
    if state.centred:
        return "discrepancy"
    return DEFAULT_SOLVER if state.kernel.name == "rbf" else "log"


def default_denoise_solver(kernel: str) -> str:
    """The papers' denoising rule: Mika's fixed point for the Gaussian (Mika et al. 1999),
    Schölkopf's gradient otherwise (Schölkopf et al. 1998); both start at the input."""
    return "fixed-point" if kernel == "rbf" else "gradient"


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

    @classmethod
    def of_rule(cls, state: FittedState) -> SolverChoice:
        """The kernel's rule, unmeasured."""
        return cls(rule_solver(state), rule_solver(state))

    @classmethod
    def of_name(cls, state: FittedState, name: str) -> SolverChoice:
        """`name`, named at fit (``kpca fit --solver``): the model's default for decoding and,
        for frames, denoising, as if every later command named it; nothing is measured but the
        training frames' noise (:func:`kpcacli.model.noise.pixel_noise`, as the measured choice
        estimates it), which denoising new frames takes out. Refused (a
        :class:`kpcacli.utils.errors.KpcaError`) when the solver cannot decode `state`."""
        SOLVERS[check_choice("solver", name, sorted(SOLVERS))]().check(state)
        if state.is_points:  # points denoise by the papers' rule (solver_for)
            return cls(name, rule_solver(state), named=True)
        noise = pixel_noise(state, evenly_spaced(state.n_samples, MAX_POPULATION))
        return cls(name, rule_solver(state), denoiser=name, own_denoiser=name, noise=noise, named=True)

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

    def summary(self) -> str:
        """``auto: distance, 44.1 dB on 40 held-back training frames; log 43.9, learned 43.6``; a
        solver scored on some of the frames (``PIXEL_SOLVERS``) with what it was compared with
        there, and the rule it was chosen by: ``auto: transport, 45.1 dB on 16 held-back
        training frames, where the blends' choice, distance, scored 39.6 (...); the blends on
        every held-back frame: distance 39.8, learned 39.5``."""
        if self.named:
            return f"{self.solver} (named at fit, not measured)"
        if not self.scores:
            return f"{self.solver} (the kernel's rule, not measured)"
        frames = int(self.compared.get("frames", 0))
        against = next((name for name in self.compared if name not in PIXEL_SOLVERS and name != "frames"), None)
        there = f"{against} {self.compared[against]:.1f}" if against else ""

        def scored(name: str) -> str:
            if name in PIXEL_SOLVERS and there:
                return f"{name} {self.scores[name]:.1f} on {frames} of them ({there} on those)"
            return f"{name} {self.scores[name]:.1f}"

        others = ", ".join(
            scored(name) for name in sorted(self.scores, key=lambda name: -self.scores[name]) if name != self.solver
        )
        blends = {name: score for name, score in self.scores.items() if name not in PIXEL_SOLVERS}
        best = max(blends, key=lambda name: blends[name])
        if self.solver in PIXEL_SOLVERS and against:
            why = f" (the kernel's rule: no blend scored {MARGIN_DB} dB above it)" if best != against else ""
            return (
                f"auto: {self.solver}, {self.scores[self.solver]:.1f} dB on {self.held_back} held-back training "
                f"frames, where the blends' choice, {against}{why}, scored {self.compared[against]:.1f} (a solver that "
                f"moves pixels is chosen where it scores at least the blends' choice on the frames it decoded)"
                + (f"; the blends on every held-back frame: {others}" if others else "")
            )
        if self.solver in PIXEL_SOLVERS:
            note = ""
        elif best != self.solver:
            note = (
                f" ({best} scored {blends[best] - blends[self.solver]:.1f} dB above it, less than the "
                f"{MARGIN_DB} dB over the rule's {self.rule} a frame held back calls for)"
            )
        else:
            note = ""
        return (
            f"auto: {self.solver}, {self.scores[self.solver]:.1f} dB on {self.held_back} held-back training "
            f"frames{note}" + (f"; {others}" if others else "")
        )

    def denoising_summary(self) -> str | None:
        """``auto: fixed-point, 26.9 dB denoising 20 held-back training frames; distance 24.2``;
        None when denoising was not measured."""
        if self.denoiser is None:
            return None
        if self.named:
            return f"{self.denoiser} (named at fit, not measured; noise σ ≈ {self.noise:.2g} in the training frames)"
        fewer = self.denoiser not in PIXEL_SOLVERS  # the pixel solvers denoise fewer frames
        others = ", ".join(
            f"{name} {score:.1f}" + (" (on fewer)" if fewer and name in PIXEL_SOLVERS else "")
            for name, score in sorted(self.denoising.items(), key=lambda item: -item[1])
            if name != self.denoiser
        )
        more = "; on more frames: " if not fewer else "; "
        own = ""
        if self.own_denoiser is not None:
            own = (
                f"; frames the model holds (noise σ ≈ {self.noise:.2g}, estimated from their pixels): "
                f"{self.own_denoiser}, {self.own_denoising[self.own_denoiser]:.1f} dB against the clean frames, estimated"
            )
        return (
            f"auto: {self.denoiser}, {self.denoising[self.denoiser]:.1f} dB denoising {self.denoised} held-back "
            "training frames" + (f"{more}{others}" if others else "") + own
        )


def _rounded(scores: dict[str, float]) -> dict[str, float]:
    return {name: round(float(value), 2) for name, value in scores.items()}


def with_solver_choice(state: FittedState, progress: bool = False, solver: str | None = None) -> FittedState:
    """`state` with its solver choice recorded: `solver` when one is named (not ``auto``:
    :meth:`SolverChoice.of_name`, nothing measured), else measured (:func:`measure_solvers`, a
    progress bar when `progress`). The step of a fit that prepares decoding, so that saving
    and decoding measure nothing."""
    if solver is not None and solver != AUTO:
        return dataclasses.replace(state, solver_choice=SolverChoice.of_name(state, solver).as_attributes())
    return dataclasses.replace(state, solver_choice=measure_solvers(state, progress=progress).as_attributes())


def solver_choice(state: FittedState) -> SolverChoice:
    """The choice `state` records (every fitted or loaded model does), else the one measured
    now for a state derived without a fit (:meth:`FrameModel.with_components`: a sweep's cells)."""
    if state.solver_choice is not None:
        return SolverChoice.from_attributes(state.solver_choice)
    return measure_solvers(state)


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
    noise = solver_choice(state).noise if state.solver_choice is not None else None
    return noise if noise is not None else pixel_noise(state, np.arange(state.n_samples))


def checked_solver(state: FittedState, name: str | None, neighbours: int | None, denoising: bool = False) -> str:
    """:func:`solver_for`'s solver after :func:`kpcacli.preimage.base.check_solver_options`'
    checks, which a workflow makes before any work: `neighbours` given to a solver that takes
    none is refused when `name` named it, and warned of when it is the model's choice."""
    resolved = solver_for(state, name, denoising)
    check_solver_options(state, resolved, neighbours, named=name is not None and name != AUTO)
    return resolved


def measure_solvers(state: FittedState, peak: float | None = None, progress: bool = False) -> SolverChoice:
    """The solver `state` decodes best by the protocol of the module docstring; the kernel's
    rule, unmeasured, when the model is too small to hold frames back (fewer than ``2 *
    FOLDS`` training frames) or of points too short to split (fewer than
    ``MIN_SPLIT_FEATURES`` values: their codes hold their noise).

    `peak` is the PSNR's peak value (default: 255 for 8-bit frames, 65535 for 16-bit, 1 for
    other numbers). `progress`: a bar counting each candidate's pass over each fold."""
    n, d = state.frames.shape
    if n < 2 * FOLDS or (state.is_points and d < MIN_SPLIT_FEATURES):
        return SolverChoice.of_rule(state)
    rule = rule_solver(state)
    candidates = [name for name in CANDIDATES if _applies(name, state)]
    # Squared errors by candidate and held-back frame, decoding and denoising.
    errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    denoising_errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    peak = peak if peak is not None else data_range(state.frames.dtype)
    rows = evenly_spaced(n, MAX_POPULATION)
    split = state.is_points and d >= MIN_SPLIT_FEATURES
    with progress_bar(progress, desc="choosing the solver", total=FOLDS * len(candidates), unit="solve") as bar:
        for fold in range(FOLDS):
            _measure_fold(state, fold, rows, candidates, split, errors, denoising_errors, bar)
    score = _Score(d, peak, by_frame=not state.is_points)
    scores = {name: score(by_frame.values()) for name, by_frame in errors.items()}
    chosen, compared = _chosen(scores, errors, rule, 0.0 if state.is_points else MARGIN_DB, score)  # points: no order
    if split:  # points denoise by the papers' rule (solver_for)
        return SolverChoice(chosen, rule, scores, len(errors[chosen]))
    denoising = {name: score(by_frame.values()) for name, by_frame in denoising_errors.items()}
    denoiser = _best_denoiser(candidates, denoising_errors, _scored_by(denoising_errors, score))
    denoised = len(denoising_errors[denoiser])
    noise = pixel_noise(state, rows)
    own = _own_frame_errors(state, denoising_errors, noise)
    own_scores = {name: score(by_frame.values()) for name, by_frame in own.items()}
    own_denoiser = _best_denoiser(candidates, denoising_errors, _scored_by(own, score))
    return SolverChoice(
        chosen,
        rule,
        scores,
        len(errors[chosen]),
        denoiser,
        denoising,
        denoised,
        compared,
        own_denoiser,
        own_scores,
        noise,
    )


def _best_denoiser(candidates: list[str], denoising_errors: dict, scored) -> str:
    """The best blend by ``scored(name, None)`` (its score on every frame it denoised; on a tie,
    the first in ``CANDIDATES``), then a solver scored on some of the frames (``PIXEL_SOLVERS``)
    if ``scored(name, frames)`` is at least that blend's on the frames it denoised (those of
    `denoising_errors`)."""
    best = max(
        (name for name in candidates if name not in PIXEL_SOLVERS),
        key=lambda name: (scored(name, None), -CANDIDATES.index(name)),
    )
    for name in candidates:
        if name in PIXEL_SOLVERS:
            frames = list(denoising_errors[name])
            if scored(name, frames) >= scored(best, frames):
                best = name
    return best


def _own_frame_errors(state: FittedState, errors: dict[str, dict[int, float]], noise: float) -> dict:
    """Each candidate's squared errors denoising frames the model holds against the clean frames,
    estimated, by frame. A neighbour solver leaves the frame's own copies out, as holding it back
    does, so its held-back error (`errors`, against the noisy frame) stands, less the noise's own
    ``σ² d``; the learned map was fitted on every training frame, the frame's own included, and
    denoises it by its in-sample fit ``Σ_j H_hj y_j``, whose error is estimated by Stein's
    unbiased risk estimate, ``|x* − y_h|² − σ² d + 2 σ² d H_hh`` (Stein 1981). σ is `noise`,
    estimated from the pixels (:func:`kpcacli.model.noise.pixel_noise`). Every estimate is kept
    at least ``σ² d`` over ``OWN_ERROR_FLOOR`` (an estimated σ a little high must not make a
    frame look denoised without error). Scored against the clean frames, as denoising is: the
    noise adds the same ``σ² d`` to every candidate's error against the noisy frames, which
    leaves their mean squared error's ranking as it is but not their mean PSNR's, and hides a
    solver that denoises most frames better and fails on a few (the learned map on ViSP's cube,
    fitted on its frames with 8% noise)."""
    n, d = state.frames.shape
    floor = noise**2 * d / OWN_ERROR_FLOOR
    clean = {
        name: {frame: max(error - noise**2 * d, floor) for frame, error in by_frame.items()}
        for name, by_frame in errors.items()
    }
    if "learned" not in errors:
        return clean
    ridge_map = prepared_solver(state, "learned", None)[0].prepared
    everything = np.arange(n)
    for frame in errors["learned"]:
        weights = ridge_map.weights(state.codes[frame])
        preimage = Preimage(indices=everything, weights=weights, objective=0.0, converged=True, iterations=0)
        in_sample = _squared_error(state, everything, preimage, frame, None)
        clean["learned"][frame] = max(in_sample - noise**2 * d + 2.0 * noise**2 * d * weights[frame], floor)
    return clean


def _measure_fold(state, fold: int, rows, candidates, split: bool, errors: dict, denoising_errors: dict, bar):
    """One fold of :func:`measure_solvers`: the model of the other folds' frames, and each
    candidate's squared errors on this fold's held-back frames added to `errors` (and, for
    frames, `denoising_errors`), `bar` counting each candidate."""
    kept, held = rows[np.arange(len(rows)) % FOLDS != fold], rows[np.arange(len(rows)) % FOLDS == fold]
    held = held[_interleaved(HELD_BACK // FOLDS, held, fold, state.n_samples)]
    model = _fitted_without(state, kept)
    if split:
        halves = _split_feature_codes(state, model, held)  # the same codes for every candidate
        for name in candidates:
            errors[name].update(zip(held.tolist(), _split_feature_errors(model, name, halves)))
            bar.update()
        return
    codes, arguments = _codes(state, model, kept, held)
    axis_weights = linear_axes(model).frame_weights() if "distance" in candidates else None
    # The pixel solvers decode some of the held-back frames (PIXEL_HELD_BACK), spread over the
    # clip. Every solver denoises the frames it decodes: as it decodes them, but a solver that
    # starts at the input, which solves again started at the frame.
    spread = _interleaved(PIXEL_HELD_BACK // FOLDS, held, fold, state.n_samples)
    for name in candidates:
        method = scoring_solver(model, name)
        decoded = spread if name in PIXEL_SOLVERS else np.arange(len(held))
        for i in decoded:
            preimage = method.preimage(model, codes[i])
            errors[name][int(held[i])] = _squared_error(state, kept, preimage, int(held[i]), axis_weights)
        if name in STARTED:
            started = _started_errors(
                state, model, kept, held[decoded], codes[decoded], arguments[decoded], method, axis_weights
            )
            denoising_errors[name].update(zip(held[decoded].tolist(), started))
        else:
            denoising_errors[name].update({int(held[i]): errors[name][int(held[i])] for i in decoded})
        bar.update()


def _interleaved(count: int, values: np.ndarray, fold: int, n: int) -> np.ndarray:
    """Positions in `values` (a fold's rows of the n training frames, increasing) of at most
    `count` of them: all when there are no more, else those nearest the middles of the clip's
    ``FOLDS · count`` equal parts ``fold``, ``fold + FOLDS``, …. The folds' rows interleave in
    time, so their picks do too, and over the folds they lie at ``FOLDS · count`` places in the
    clip, not at `count` places ``FOLDS`` times: spaced by position in each fold, the 40
    held-back frames were ten runs of four consecutive frames, and the transport solver's 16
    four runs, the clip's first frames always among them (a solver's score hung on four
    moments of the clip)."""
    if len(values) <= count:
        return np.arange(len(values))
    parts = FOLDS * count
    middles = (np.arange(fold, parts, FOLDS) + 0.5) * n / parts
    return np.unique(np.abs(values[None, :] - middles[:, None]).argmin(axis=1))


def _scored_by(errors: dict[str, dict[int, float]], score: _Score):
    """``scored(name, frames)``: `score` of `name`'s `errors` on `frames` (None: every frame)."""
    return lambda name, frames: score(errors[name].values() if frames is None else [errors[name][f] for f in frames])


def _chosen(scores: dict[str, float], errors: dict[str, dict[int, float]], rule: str, margin: float, score) -> tuple:
    """Among the blends, the best of `scores` once every one but the rule has given up `margin`
    dB (on a tie, the first in ``CANDIDATES``); then a solver scored on some of the frames
    (``PIXEL_SOLVERS``) if it scores at least that one on those frames (`errors` by frame). Also
    what that was compared on: {"frames": how many, name: PSNR on them for both}, or {} when
    none was scored."""
    adjusted = {name: score - (0.0 if name == rule else margin) for name, score in scores.items()}
    chosen = max(
        (name for name in scores if name not in PIXEL_SOLVERS),
        key=lambda name: (adjusted[name], -CANDIDATES.index(name)),
    )
    compared = {}
    for name in scores:
        if name in PIXEL_SOLVERS:
            frames = list(errors[name])
            paired = {other: score([errors[other][f] for f in frames]) for other in (name, chosen)}
            compared = {"frames": len(frames), **{other: round(paired[other], 2) for other in paired}}
            if paired[name] >= paired[chosen]:
                chosen = name
    return chosen, compared


def _started_errors(state, model, kept, held, codes, arguments, method, axis_weights) -> list[float]:
    """``|x* − x_h|²`` of the held-back frames `held` (their `codes` and kernel `arguments` in
    `model`) denoised by `method`, a solver that takes a start, started at the frame as ``kpca
    denoise`` starts it at its input, where it reads only the frame's kernel arguments (weight
    space: frames of more values than the model has frames); tiny frames start at their
    neighbours."""
    d = state.frames.shape[1]
    errors = []
    for code, argument, frame in zip(codes, arguments, held):
        start = Start(None, argument) if method.name in STARTED and d > model.n_samples else None
        preimage = method.preimage(model, code, start)
        errors.append(_squared_error(state, kept, preimage, int(frame), axis_weights))
    return errors


@dataclass(frozen=True)
class _Score:
    """The score (dB) of samples' squared errors, each summed over its `d` values: for frames
    (`by_frame`) the mean of their PSNRs, as decoded frames are scored (a frame decoded exactly
    left out); for points the PSNR of the mean squared error. Finite: when every error is
    zero, the PSNR of an error of 10⁻³⁰."""

    d: int
    peak: float
    by_frame: bool

    def __call__(self, squared_errors) -> float:
        errors = np.asarray(list(squared_errors), dtype=np.float64)
        if self.by_frame and np.any(errors > 0):
            return mean_psnr(psnr_of_mse(float(error) / self.d, self.peak) for error in errors)
        return psnr_of_mse(max(float(np.mean(errors)), 1e-30) / self.d, self.peak)


def _split_feature_codes(state: FittedState, model: FittedState, held: np.ndarray) -> list[tuple]:
    """For each half of the features: the codes in `model` of the held-back samples `held` made
    from that half alone (scaled to the whole), the other half's columns, and the samples'
    values there, which the pre-images of those codes are scored against."""
    rows, training = state.float_rows[held], model.float_rows
    d = rows.shape[1]
    halves = (np.arange(0, d, 2), np.arange(1, d, 2))
    coded_halves = []
    for coded, scored in (halves, halves[::-1]):
        scale = d / len(coded)
        half, half_training = rows[:, coded], training[:, coded]
        if model.kernel.uses_distance:
            arguments = (
                (half * half).sum(1)[:, None] + (half_training**2).sum(1)[None, :] - 2.0 * half @ half_training.T
            )
            arguments = np.maximum(arguments, 0.0) * scale
        else:
            arguments = scale * half @ half_training.T
        coded_halves.append((model.codes_of_arguments(arguments), scored, rows[:, scored]))
    return coded_halves


def _split_feature_errors(model: FittedState, name: str, coded_halves: list[tuple]) -> list[float]:
    """``|x* − x_h|²`` of the held-back samples, each feature scored by a pre-image of a code
    made from the other half of the features (:func:`_split_feature_codes`), so that it cannot
    hold that feature's own noise (Batson and Royer 2019, J-invariance)."""
    method, _ = prepared_solver(model, name, None)
    errors = np.zeros(len(coded_halves[0][0]))
    for codes, scored, targets in coded_halves:
        preimages = [method.preimage(model, code) for code in codes]
        difference = preimage_vectors(model, preimages)[:, scored] - targets
        errors += np.einsum("ij,ij->i", difference, difference)
    return list(errors)


def _applies(name: str, state: FittedState) -> bool:
    if name == "learned" and state.n_samples > LEARNED_MAX_SAMPLES:
        return False
    if name == "log" and rule_solver(state) == "distance":
        # The distance solver reads the same completed kernel values as distances and refines
        # them along the linear axes: never the margin below log on any sequence and k of
        # docs/quality.md, and log is the slowest candidate to score (a line search per code).
        return False
    try:
        SOLVERS[name]().check(state)
    except KpcaError:
        return False
    return True


class _Rows:
    """Rows `indices` of `frames`, read only when a pre-image is formed in pixels: while the
    choice is measured, the transport solver's two neighbours of each held-back frame (every
    other candidate's error comes from the Gram)."""

    ndim = 2

    def __init__(self, frames, indices: np.ndarray):
        self.frames, self.indices = frames, indices
        self.shape = (len(indices), frames.shape[1])
        self.dtype = frames.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self.frames[int(self.indices[key])]
        return np.asarray(self)[key]

    def __array__(self, dtype=None, copy=None):
        rows = np.stack([np.asarray(self.frames[int(row)]) for row in self.indices])
        return rows if dtype is None else rows.astype(dtype)


def _fitted_without(state: FittedState, kept: np.ndarray) -> FittedState:
    """The model of the training frames `kept` alone, from the linear Gram's rows and columns."""
    gram = state.linear_gram
    linear = LinearGram(gram.shifted[np.ix_(kept, kept)], gram.origin, gram.origin_dots[kept], gram.origin_norm2)
    k = min(state.n_components, len(kept) - 1)
    names = tuple(state.frame_names[row] for row in kept)
    frames = state.frames[kept] if state.is_points else _Rows(state.frames, kept)
    # The leading k eigenpairs alone (Lanczos) once the fold's model is large: a dense solve is
    # O(n³), and the choice makes four.
    eigen_solver = "arpack" if len(kept) > ARPACK_FROM and k < len(kept) // 10 else "dense"
    # A tie at the cut is the whole model's to warn of, once, not each fold's.
    return spectral_fit(
        frames,
        state.frame_shape,
        names,
        linear,
        state.kernel,
        state.centred,
        k,
        None,
        eigen_solver=eigen_solver,
        warn_of_ties=False,
    )


def _codes(state: FittedState, model: FittedState, kept: np.ndarray, held: np.ndarray) -> tuple:
    """Codes (m, k) of the training frames `held` in `model` (fitted on `kept`), and their
    kernel arguments against `model`'s frames (m, n_kept), from the Gram."""
    gram = state.linear_gram
    products = CrossProducts(
        model.linear_gram, gram.shifted[np.ix_(held, kept)], np.diag(gram.shifted)[held].copy(), gram.origin_dots[held]
    )
    arguments = model.kernel_arguments_of(products)
    return model.codes_of_arguments(arguments), arguments


def pixel_squared_error(frame: np.ndarray, preimage) -> float:
    """``|x* − x|²`` summed over `frame` (d values) of a pre-image that formed pixels: all of
    them, or those at its grid (``preimage.sampled``), their error scaled to the frame."""
    frame = np.asarray(frame, dtype=np.float64).reshape(-1)
    target = frame if preimage.sampled is None else frame[preimage.sampled]
    difference = np.asarray(preimage.pixels, dtype=np.float64) - target
    return float(difference @ difference) * (len(frame) / len(difference))


def _squared_error(state: FittedState, kept: np.ndarray, preimage, held: int, axis_weights) -> float:
    """``|x* − x_h|²`` summed over the frame: in weight space (the axes' frames as weights
    `axis_weights` over `kept`), or in pixels for a solver that gave them (points, the
    transport solver); from the pixels it formed, scaled to the frame, where it formed some."""
    if preimage.pixels is not None:
        return pixel_squared_error(np.asarray(state.frames[held]), preimage)
    weights = np.zeros(state.n_samples)
    np.add.at(weights, kept[np.asarray(preimage.indices)], preimage.weights)
    if preimage.move is not None:
        weights[kept] += preimage.move @ axis_weights
    weights[held] -= 1.0
    gram, total = state.linear_gram, weights.sum()
    value = weights @ gram.shifted @ weights + 2.0 * total * (gram.origin_dots @ weights) + total**2 * gram.origin_norm2
    return max(float(value), 0.0)
