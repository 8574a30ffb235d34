"""Held-out evaluation of the pre-image solvers: what `kpca eval` and the benchmarks report.

The frames are split (default: even frames train, odd frames are held out), a model is fitted
on the training frames, the held-out frames are encoded and decoded with every solver asked
for, and each reconstruction is scored against the true frame. Two reference rows frame the
results:

* ``linear PCA``: linear PCA with the same k (a linear-kernel, centred model decoded exactly);
* ``oracle``: the least-squares best combination of the same M neighbours the solvers use,
  computed with the true frame: an upper bound for any weighted-sum pre-image over them.

Timings are the solver part only (everything before the final ``Σ_j w_j x^j``), per frame.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from ..estimators.estimator import FrameModel
from ..model.spectralfit import spectral_fit
from ..model.state import FittedState
from ..model.validation import check_rows
from ..numerics.kernels import Kernel
from ..numerics.landmarks import choose_landmarks
from ..numerics.metrics import finite_or_none, mean_psnr, psnr, ssim_many
from ..preimage import SOLVERS, Preimage, applicable_solvers, prepared_solver, solver_choice, solver_for
from ..preimage.synthesis import preimage_frames
from ..utils.blas import single_threaded_blas
from ..utils.checks import check_choice, percent
from ..utils.cores import available_cores
from ..utils.errors import InputError, ParameterError, param
from ..utils.hyperparameters import check
from ..utils.parallel import ordered_map
from ..utils.progress import progress_bar
from .choicesummary import choice_summary

ORACLE_NEIGHBOURS = 10
# A solver of the default set is left out when it would take longer than this on the clip.
SOLVER_SECONDS = 10.0

HOLDOUTS = ("odd", "third", "middle")
LINEAR_PCA, ORACLE = "linear PCA", "oracle"  # the reference rows, beside the model's solvers
REFERENCE_ROWS = (LINEAR_PCA, ORACLE)


@dataclass
class Score:
    """Scores of one method over the held-out samples.

    Images are scored by PSNR and SSIM; points (1-D samples) by their Euclidean distance to
    the true sample, and their ``psnr``/``ssim`` lists are empty.
    """

    method: str
    psnr: list[float]
    ssim: list[float]
    milliseconds: float | None
    frames: list[np.ndarray] = field(repr=False, default_factory=list)  # the method's frames, one a sample
    distances: list[float] = field(default_factory=list)

    @property
    def mean_psnr(self) -> float:
        """Over the frames decoded with an error (:func:`kpcacli.numerics.metrics.mean_psnr`): a
        held-out frame equal to a training frame, decoded exactly, would make it infinite."""
        return mean_psnr(self.psnr)

    @property
    def exact(self) -> int:
        """Held-out frames decoded exactly (infinite PSNR)."""
        return int(np.sum(np.isinf(self.psnr)))

    @property
    def worst_psnr(self) -> float:
        return float(np.min(self.psnr)) if self.psnr else float("nan")

    @property
    def mean_ssim(self) -> float:
        return float(np.mean(self.ssim)) if self.ssim else float("nan")

    def as_dict(self) -> dict:
        if self.distances:
            return {
                "method": self.method,
                "mean_distance": float(np.mean(self.distances)),
                "worst_distance": float(np.max(self.distances)),
                "ms_per_frame": self.milliseconds,
                "distance": self.distances,
            }
        return {
            "method": self.method,
            "mean_psnr": finite_or_none(self.mean_psnr),  # null: every frame decoded exactly
            "worst_psnr": finite_or_none(self.worst_psnr),
            "mean_ssim": self.mean_ssim,
            "ms_per_frame": self.milliseconds,
            "psnr": [finite_or_none(value) for value in self.psnr],  # null: decoded exactly
        }


@dataclass
class Evaluation:
    """The outcome of :func:`evaluate`."""

    state: FittedState  # the model fitted on the training frames
    train: np.ndarray  # indices of the training frames
    held_out: np.ndarray  # indices of the held-out frames
    codes: np.ndarray  # (m, k) codes of the held-out frames
    scores: list[Score]
    originals: np.ndarray = field(repr=False)  # the held-out frames, (m, *frame_shape)
    total: int = 0  # frames in the clip (more than train + held out with landmarks)
    left_out: dict[str, str] = field(default_factory=dict)  # solvers of the default set left out, and why

    def as_dict(self) -> dict:
        return {
            "frames": int(self.total),
            "train": len(self.train),
            "held_out": len(self.held_out),
            "k": self.state.n_components,
            "kernel": self.state.kernel.name,
            "kernel_params": self.state.kernel.hyperparameters(),
            "centred": bool(self.state.centred),
            "explained_variance": self.state.explained_variance_ratio,
            "solver_choice": solver_choice(self.state).as_attributes(),
            "results": [score.as_dict() for score in self.scores],
            "same_frames": [list(pair) for pair in self.same_frames()],
        }

    def same_frames(self) -> list[tuple[str, str]]:
        """Pairs of solvers whose frames all lie within one grey level of each other: the same
        pre-images by other routes (the gradient and fixed-point solvers both minimise
        ``|PΦ(x) − Φ(z)|²``, Schölkopf et al. 1998, eq. 11, and stop at its stationary point)."""
        solved = [s for s in self.scores if s.method not in REFERENCE_ROWS and s.frames and not self.state.is_points]
        close = lambda a, b: all(np.abs(np.asarray(x, np.float64) - y).max() <= 1 for x, y in zip(a.frames, b.frames))  # noqa: E731
        return [(a.method, b.method) for i, a in enumerate(solved) for b in solved[i + 1 :] if close(a, b)]

    def format_table(self) -> str:
        """The table `kpca eval` prints (PSNR and SSIM for images, distances for points)."""
        state = self.state
        params = ", ".join(f"{key}={value:.4g}" for key, value in state.kernel.hyperparameters().items())
        kind = "samples" if state.is_points else "frames"
        lines = [
            f"{self.total} {kind}: {len(self.train)} train, "
            f"{len(self.held_out)} held out; {state.kernel.name}"
            + (f" ({params})" if params else "")
            + (", centred" if state.centred else ", uncentred")
            + f"; k = {state.n_components} ({percent(state.explained_variance_ratio)} of the variance)",
            f"default solver {choice_summary(solver_choice(state))}",
            "",
        ]
        if state.is_points:
            lines.append(f"{'method':<14}{'mean distance':>15}{'worst distance':>16}{'ms/sample':>11}")
        else:
            lines.append(f"{'method':<14}{'mean PSNR':>11}{'worst PSNR':>12}{'mean SSIM':>11}{'ms/frame':>10}")
        for score in self.scores:
            ms = f"{score.milliseconds:.2f}" if score.milliseconds is not None else "-"
            if state.is_points:
                mean, worst = np.mean(score.distances), np.max(score.distances)
                lines.append(f"{score.method:<14}{mean:>15.4g}{worst:>16.4g}{ms:>11}")
            else:
                exact = f"  {score.exact} exact, left out of the mean" if score.exact else ""
                lines.append(
                    f"{score.method:<14}{score.mean_psnr:>11.2f}{score.worst_psnr:>12.2f}"
                    f"{score.mean_ssim:>11.4f}{ms:>10}{exact}"
                )
        return "\n".join(lines)


def split(n: int, holdout: str = "odd") -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out frame indices: odd frames held out (each between two training
    frames), every third frame from the second (held-out frames a third of the way from a
    training frame), or the middle one (as García-González et al. 2021, section 5)."""
    check_choice("holdout", holdout, HOLDOUTS)
    if n < 3:
        raise InputError(f"evaluation needs at least three frames; got {n}")
    everything = np.arange(n)
    held_out = {"odd": everything[1::2], "third": everything[1::3], "middle": np.array([n // 2])}[holdout]
    return np.setdiff1d(everything, held_out), held_out


def evaluate(
    frames: np.ndarray,
    model: FrameModel | None = None,
    *,
    frame_shape: tuple[int, ...] | None = None,
    holdout: str = "odd",
    solvers: list[str] | None = None,
    neighbours: int | None = None,
    baselines: bool = True,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    linear_gram_of=None,
    progress: bool = False,
    solver_seconds: float | None = None,
) -> Evaluation:
    """Fit on the training split, decode the held-out frames with each solver and score them.

    Pixels are read three times: the Gram pass of the fit, one pass encoding the held-out
    frames (whose products with the training frames also give linear PCA's codes and the
    oracle's targets), and one pass per batch forming every method's frames. Everything
    else happens in weight space.

    Parameters
    ----------
    frames : (n, ...) array-like
        All frames, as for :meth:`FrameModel.fit`.
    model : FrameModel, optional
        The parameters to fit with (an unfitted estimator; default parameters when None). It
        is not changed: a copy is fitted.
    holdout : {"odd", "third", "middle"}
        Which frames are held out (:func:`split`).
    solvers : list of str, optional
        Default: every solver that applies to the model, except those that would take more
        than `solver_seconds` on these frames (listed in :attr:`Evaluation.left_out`).
    neighbours : int, optional
        M for every solver; default: each solver's own.
    baselines : bool
        Add the linear-PCA and oracle rows.
    landmarks : int, optional
        Fit on this many of the training frames, chosen by `landmark_method`
        (:mod:`kpcacli.numerics.landmarks`), to measure what the shortcut costs.
    linear_gram_of : callable, optional
        ``linear_gram_of(indices)`` gives the :class:`kpcacli.numerics.gram.LinearGram` of the frames
        at `indices` computed elsewhere (on a cluster: :mod:`kpcacli.engines.cluster`).
    progress : bool
        A progress bar per solver and one for scoring, on standard error.
    solver_seconds : float, optional
        The time a solver of the default set may take on the held-out frames, projected from
        its first solves; default ``SOLVER_SECONDS``.
    """
    rows = frames.reshape(len(frames), -1) if frame_shape is None and np.ndim(frames) > 2 else frames
    shape = tuple(frame_shape) if frame_shape is not None else tuple(frames.shape[1:])
    train, held_out = split(len(rows), holdout)
    model = copy.copy(model) if model is not None else FrameModel()
    model.check_parameters()
    check("neighbours", neighbours)
    known = [SOLVERS[name] for name in solvers or () if name in SOLVERS]
    if neighbours is not None and known and not any(solver.takes_neighbours for solver in known):
        raise ParameterError(
            f"{param('neighbours')} applies to none of the solvers named: "
            + "; ".join(f"{solver.name}: {solver.uses_instead}" for solver in known)
        )
    if landmarks is not None:
        train = train[
            choose_landmarks(
                rows[train] if isinstance(rows, np.ndarray) else np.asarray(rows[train]), landmarks, landmark_method
            )
        ]
    training = np.asarray(rows[train])
    originals = np.asarray(rows[held_out])
    gram = linear_gram_of(train) if linear_gram_of is not None else None
    model.fit(training, frame_shape=shape, gram=gram)
    state = model.state_
    products = state.linear_gram.cross(state.frames, check_rows(state, originals), progress=progress)
    codes = state.codes_of_products(products)
    left_out: dict[str, str] = {}
    if solvers:
        names, limit = list(solvers), None
    else:
        names, too_large = applicable_solvers(state, solver_for(state, None))
        left_out.update((name, "for frames this large") for name in too_large)
        limit = SOLVER_SECONDS if solver_seconds is None else solver_seconds
    _ = state.neighbours.code_spacing  # computed once, outside the timing
    methods: list[Method] = []
    for name in names:
        solver, _ = prepared_solver(state, name, neighbours if SOLVERS[name].takes_neighbours else None)
        method, reason = _solve_all(name, state, codes, solver, limit, progress)
        if method is None:
            left_out[name] = reason
        else:
            methods.append(method)
    if baselines:
        methods.append(_linear_pca(state, products))
        methods.append(_oracle(state, codes, products, max(ORACLE_NEIGHBOURS, neighbours or 0)))
    scores = _score_all(methods, originals, progress)
    originals = originals.reshape((len(held_out),) + shape)
    return Evaluation(state, train, held_out, codes, scores, originals, len(rows), left_out)


@dataclass
class Method:
    """One row of the table before scoring: a pre-image per held-out code, in the weight
    space of `state` (linear PCA has a state of its own)."""

    name: str
    state: FittedState
    preimages: list[Preimage]
    milliseconds: float | None


def _solve_all(name, state, codes, solver, limit: float | None, progress: bool) -> tuple[Method | None, str]:
    """Every code through the prepared `solver` (its M nearest neighbours), timed; None and
    the reason when the projected time exceeds `limit` seconds.

    The projection is renewed after every solve from the second on: the time spent so far and
    the mean of the solves since the first (which may include a one-off preparation, the
    distance solver's calibration) for each one left: projected once from the second solve, a
    machine that became busy later ran the solver to the end, far past its allowance.
    """
    preimages, seconds = [], []
    with progress_bar(progress, desc=name, total=len(codes), unit="frame") as bar:
        for index, code in enumerate(codes):
            started = time.perf_counter()
            preimages.append(solver.preimage(state, code))
            seconds.append(time.perf_counter() - started)
            bar.update(1)
            if limit is not None and index >= 1:
                each = sum(seconds[1:]) / index
                projected = sum(seconds) + each * (len(codes) - index - 1)
                if projected > limit:
                    return None, f"it would take about {projected:.0f} s on {len(codes)} frames ({each:.2f} s a frame)"
    return Method(name, state, preimages, sum(seconds) * 1000.0 / len(codes)), ""


def _linear_pca(state: FittedState, products) -> Method:
    """Linear PCA with the same k, in weight space: a centred linear-kernel model fitted on the
    same linear Gram, its codes from the held-out frames' products already computed, decoded
    exactly (:class:`kpcacli.preimage.linear.LinearSolver`). No pixel is read here."""
    # The linear model decodes with the linear solver alone: no solver choice to measure.
    linear = spectral_fit(
        state.frames,
        state.frame_shape,
        state.frame_names,
        state.linear_gram,
        Kernel("linear"),
        True,
        state.n_components,
        None,
    )
    codes = linear.codes_of_products(products)
    solver, _ = prepared_solver(linear, "linear", None)
    method, _ = _solve_all(LINEAR_PCA, linear, codes, solver, None, False)
    return method


def _oracle(state: FittedState, codes, products, neighbours) -> Method:
    """Least-squares best combination of the M nearest training samples, using the true frame:
    the normal equations from the linear Gram and the held-out frames' products."""
    gram = state.linear_gram
    dots = products.dots()  # (m, n): true frame · training frames
    preimages = []
    for row, code in enumerate(codes):
        chosen = state.neighbours.nearest(code, neighbours, distinct=False)
        weights = np.linalg.lstsq(gram.dots_among(chosen), dots[row, chosen], rcond=None)[0]
        preimages.append(Preimage(indices=chosen, weights=weights, objective=0.0, converged=True, iterations=0))
    return Method(ORACLE, state, preimages, None)


def _score_all(methods: list[Method], originals: np.ndarray, progress: bool) -> list[Score]:
    """Every method's frames (:mod:`kpcacli.preimage.synthesis`), scored against the true frames: PSNR
    and SSIM for images, the Euclidean distance for points.

    Frames are scored on threads (the SSIM filters release the GIL), each true frame's SSIM
    statistics computed once for every method."""
    if not methods:
        return []
    state = methods[0].state
    m, shape = len(originals), state.frame_shape
    # Every method's frames, formed at once: the report keeps them anyway. Forming them is part
    # of decoding a frame (the blends' weighted sums of training frames), so it is timed with
    # the solve: ms/frame is what a frame's decode costs, whichever step does the work.
    formed = {}
    for method in methods:
        started = time.perf_counter()
        formed[method.name] = preimage_frames(method.state, method.preimages).reshape(m, -1)
        if method.milliseconds is not None:
            method.milliseconds += (time.perf_counter() - started) * 1000.0 / m
    psnrs = {method.name: [0.0] * m for method in methods}
    ssims = {method.name: [0.0] * m for method in methods}
    distances = {method.name: [0.0] * m for method in methods}

    def score(row: int) -> None:
        truth = originals[row]
        if state.is_points:
            for method in methods:
                error = np.asarray(truth, dtype=np.float64) - formed[method.name][row]
                distances[method.name][row] = float(np.linalg.norm(error))
            return
        estimates = [formed[method.name][row] for method in methods]
        indices = ssim_many(truth.reshape(shape), [estimate.reshape(shape) for estimate in estimates])
        for method, estimate, index in zip(methods, estimates, indices):
            psnrs[method.name][row] = psnr(truth, estimate)
            ssims[method.name][row] = index

    # BLAS single-threaded beside the scoring threads (PSNR's dot product): its spinning
    # threads otherwise take the second core.
    with progress_bar(progress, desc="scoring", total=m, unit="frame") as bar, single_threaded_blas():
        for _ in ordered_map(score, range(m), available_cores()):
            bar.update(1)
    scores = []
    for method in methods:
        frames = list(formed[method.name].reshape((m,) + shape))
        if state.is_points:
            scores.append(Score(method.name, [], [], method.milliseconds, frames, distances[method.name]))
        else:
            scores.append(Score(method.name, psnrs[method.name], ssims[method.name], method.milliseconds, frames))
    return scores
