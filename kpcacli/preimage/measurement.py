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

The kernel's rule (:func:`kpcacli.preimage.rules.rule_solver`) is kept unless another solver scores ``MARGIN_DB``
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
their own denoiser (:func:`kpcacli.preimage.choice.solver_for`), chosen from the held-back errors and the
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
import functools
from dataclasses import dataclass

import numpy as np

from ..model.noise import pixel_noise
from ..model.solverchoice import AUTO, MARGIN_DB, PIXEL_SOLVERS, SolverChoice
from ..model.state import FittedState
from ..numerics.landmarks import evenly_spaced
from ..numerics.metrics import data_range, mean_psnr, psnr_of_mse
from ..utils.checks import check_choice
from ..utils.errors import KpcaError
from ..utils.parallel import map_as_cores_allow
from ..utils.progress import progress_bar
from .base import SOLVERS, Preimage, Start, prepared_solver, scoring_solver
from .distance import linear_axes
from .heldout import fitted_without, held_back_codes, split_feature_codes, split_feature_errors, squared_error
from .rules import rule_choice, rule_solver

FOLDS = 4
HELD_BACK = 40  # training frames held back and decoded, at most, over all folds
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
# Points of at least this many features are scored feature by feature (_split_feature_errors):
# with few features a code holds a sample's own noise, and a solver that gives it back scores
# as if it were signal (the distance solver on noisy digits at k = 128 over 64 values).
# Shorter points (2-D and 3-D point sets) keep the rules: nothing tells noise from signal.
MIN_SPLIT_FEATURES = 8
# A model of more training frames measures on this many of them, evenly spaced: each fold's
# model is an n x n eigenproblem, and so is the distance solver's calibration.
MAX_POPULATION = 2000


def with_solver_choice(state: FittedState, progress: bool = False, solver: str | None = None) -> FittedState:
    """`state` with its solver choice recorded as the model file records it
    (:meth:`SolverChoice.as_recorded`): `solver` when one is named (not ``auto``:
    :func:`named_choice`, nothing measured), else measured (:func:`measure_solvers`, a progress
    bar when `progress`). The step of a fit that prepares decoding, so that saving and decoding
    measure nothing."""
    if solver is not None and solver != AUTO:
        return dataclasses.replace(state, solver_choice=named_choice(state, solver).as_recorded())
    return dataclasses.replace(state, solver_choice=measure_solvers(state, progress=progress).as_recorded())


def named_choice(state: FittedState, name: str) -> SolverChoice:
    """`name`, named at fit (``kpca fit --solver``): the default for decoding and, for frames,
    denoising; nothing measured but the training frames' noise (:func:`pixel_noise`), which
    denoising new frames takes out. A KpcaError when the solver cannot decode `state`."""
    SOLVERS[check_choice("solver", name, sorted(SOLVERS))]().check(state)
    if state.is_points:  # points denoise by the papers' rule (solver_for)
        return SolverChoice(name, rule_solver(state), named=True)
    noise = pixel_noise(state, evenly_spaced(state.n_samples, MAX_POPULATION))
    return SolverChoice(name, rule_solver(state), denoiser=name, own_denoiser=name, noise=noise, named=True)


def measure_solvers(state: FittedState, peak: float | None = None, progress: bool = False) -> SolverChoice:
    """The solver `state` decodes best by the protocol of the module docstring; the kernel's
    rule, unmeasured, when the model is too small to hold frames back (fewer than ``2 *
    FOLDS`` training frames) or of points too short to split (fewer than
    ``MIN_SPLIT_FEATURES`` values: their codes hold their noise).

    `peak` is the PSNR's peak value (default: 255 for 8-bit frames, 65535 for 16-bit, 1 for
    other numbers). `progress`: a bar counting each candidate's pass over each fold."""
    n, d = state.frames.shape
    if n < 2 * FOLDS or (state.is_points and d < MIN_SPLIT_FEATURES):
        return rule_choice(state)
    rule = rule_solver(state)
    candidates = [name for name in CANDIDATES if _applies(name, state)]
    # Squared errors by candidate and held-back frame, decoding and denoising.
    errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    denoising_errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    peak = peak if peak is not None else data_range(state.frames.dtype)
    rows = evenly_spaced(n, MAX_POPULATION)
    split = state.is_points and d >= MIN_SPLIT_FEATURES
    # The folds are independent, each fitted and scored as it would be alone: they run side by
    # side on the cores the fit leaves (the axes are formed beside them), their errors merged
    # in fold order; so does the model's own learned map, which the frames it holds need.
    with progress_bar(progress, desc="choosing the solver", total=FOLDS * len(candidates), unit="solve") as bar:
        jobs = [functools.partial(_measure_fold, state, fold, rows, candidates, split, bar) for fold in range(FOLDS)]
        if not split and "learned" in candidates:
            jobs.append(functools.partial(prepared_solver, state, "learned", None))  # kept for _own_frame_errors
        results = map_as_cores_allow(lambda job: job(), jobs)
    for fold_errors, fold_denoising in results[:FOLDS]:
        for name in candidates:
            errors[name].update(fold_errors[name])
            denoising_errors[name].update(fold_denoising[name])
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
        in_sample = squared_error(state, everything, preimage, frame, None)
        clean["learned"][frame] = max(in_sample - noise**2 * d + 2.0 * noise**2 * d * weights[frame], floor)
    return clean


def _measure_fold(state, fold: int, rows, candidates, split: bool, bar) -> tuple[dict, dict]:
    """One fold of :func:`measure_solvers`: the model of the other folds' frames, and each
    candidate's squared errors on this fold's held-back frames, decoding and (for frames)
    denoising, ``{name: {frame: error}}`` each, `bar` counting each candidate."""
    errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    denoising_errors: dict[str, dict[int, float]] = {name: {} for name in candidates}
    kept, held = rows[np.arange(len(rows)) % FOLDS != fold], rows[np.arange(len(rows)) % FOLDS == fold]
    held = held[_interleaved(HELD_BACK // FOLDS, held, fold, state.n_samples)]
    model = fitted_without(state, kept)
    if split:
        halves = split_feature_codes(state, model, held)  # the same codes for every candidate
        for name in candidates:
            errors[name].update(zip(held.tolist(), split_feature_errors(model, name, halves)))
            bar.update()
        return errors, denoising_errors
    codes, arguments = held_back_codes(state, model, kept, held)
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
            errors[name][int(held[i])] = squared_error(state, kept, preimage, int(held[i]), axis_weights)
        if name in STARTED:
            started = _started_errors(
                state, model, kept, held[decoded], codes[decoded], arguments[decoded], method, axis_weights
            )
            denoising_errors[name].update(zip(held[decoded].tolist(), started))
        else:
            denoising_errors[name].update({int(held[i]): errors[name][int(held[i])] for i in decoded})
        bar.update()
    return errors, denoising_errors


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
        errors.append(squared_error(state, kept, preimage, int(frame), axis_weights))
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
