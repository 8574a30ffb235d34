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

import time
from dataclasses import dataclass, field

import numpy as np

from .checks import check_choice, check_int
from .errors import InputError
from .estimator import KernelPCA
from .landmarks import choose_landmarks
from .metrics import psnr, ssim
from .preimage import Preimage, applicable_solvers, default_solver, prepared_solver
from .state import FittedState

ORACLE_NEIGHBOURS = 10

HOLDOUTS = ("odd", "third", "middle")


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
    reconstructions: list[np.ndarray] = field(repr=False, default_factory=list)
    distances: list[float] = field(default_factory=list)

    @property
    def mean_psnr(self) -> float:
        return float(np.mean(self.psnr)) if self.psnr else float("nan")

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
            "mean_psnr": self.mean_psnr,
            "worst_psnr": self.worst_psnr,
            "mean_ssim": self.mean_ssim,
            "ms_per_frame": self.milliseconds,
            "psnr": self.psnr,
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
    left_out: list[str] = field(default_factory=list)  # solvers skipped for the frame size

    def as_dict(self) -> dict:
        return {
            "frames": int(self.total),
            "train": len(self.train),
            "held_out": len(self.held_out),
            "k": self.state.n_components,
            "kernel": self.state.kernel.name,
            "kernel_params": self.state.kernel.params(),
            "centred": bool(self.state.centred),
            "explained_variance": self.state.explained_variance_ratio,
            "results": [score.as_dict() for score in self.scores],
        }

    def format_table(self) -> str:
        """The table `kpca eval` prints (PSNR and SSIM for images, distances for points)."""
        state = self.state
        params = ", ".join(f"{key}={value:.4g}" for key, value in state.kernel.params().items())
        kind = "samples" if state.is_points else "frames"
        lines = [
            f"{self.total} {kind}: {len(self.train)} train, "
            f"{len(self.held_out)} held out; {state.kernel.name}"
            + (f" ({params})" if params else "")
            + (", centred" if state.centred else ", uncentred")
            + f"; k = {state.n_components} ({100 * state.explained_variance_ratio:.1f}% of the variance)",
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
                lines.append(
                    f"{score.method:<14}{score.mean_psnr:>11.2f}{score.worst_psnr:>12.2f}"
                    f"{score.mean_ssim:>11.4f}{ms:>10}"
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
    frame_shape: tuple[int, ...] | None = None,
    holdout: str = "odd",
    solvers: list[str] | None = None,
    neighbours: int | None = None,
    baselines: bool = True,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
    linear_gram_of=None,
    **params,
) -> Evaluation:
    """Fit on the training split, decode the held-out frames with each solver and score them.

    Parameters
    ----------
    frames : (n, ...) array-like
        All frames, as for :meth:`KernelPCA.fit`.
    holdout : {"odd", "middle"}
        Which frames are held out.
    solvers : list of str, optional
        Default: every solver that applies to the model.
    neighbours : int, optional
        M for every solver; default: each solver's own.
    baselines : bool
        Add the linear-PCA and oracle rows.
    landmarks : int, optional
        Fit on this many of the training frames, chosen by `landmark_method`
        (:mod:`kpcacli.landmarks`), to measure what the shortcut costs.
    linear_gram_of : callable, optional
        ``linear_gram_of(indices)`` gives the :class:`kpcacli.gram.LinearGram` of the frames
        at `indices` computed elsewhere (on a cluster: :mod:`kpcacli.cluster`).
    **params
        Model parameters (kernel, n_components, eps, beta, ...).
    """
    rows = frames.reshape(len(frames), -1) if frame_shape is None and np.ndim(frames) > 2 else frames
    shape = tuple(frame_shape) if frame_shape is not None else tuple(frames.shape[1:])
    train, held_out = split(len(rows), holdout)
    KernelPCA(**params).check_parameters()
    if neighbours is not None:
        check_int("neighbours", neighbours, 1)
    if landmarks is not None:
        train = train[
            choose_landmarks(
                rows[train] if isinstance(rows, np.ndarray) else np.asarray(rows[train]), landmarks, landmark_method
            )
        ]
    training = np.asarray(rows[train])
    originals = np.asarray(rows[held_out])
    gram = linear_gram_of(train) if linear_gram_of is not None else None
    model = KernelPCA(**params).fit(training, frame_shape=shape, gram=gram)
    state = model.state_
    codes = model.encode(originals)
    left_out: list[str] = []
    if solvers:
        names = list(solvers)
    else:
        names, left_out = applicable_solvers(state, default_solver(state))
    scores = []
    _ = state.neighbours.code_spacing  # computed once, outside the timing
    for name in names:
        solver, count = prepared_solver(state, name, neighbours)
        started = time.perf_counter()
        preimages = [solver.solve(state, code, state.neighbours.nearest(code, count)) for code in codes]
        elapsed = (time.perf_counter() - started) * 1000.0 / len(codes)
        scores.append(_score(name, state, preimages, originals, elapsed))
    if baselines:
        scores.append(_linear_pca(training, originals, shape, state.n_components, state.linear_gram))
        scores.append(_oracle(state, codes, originals, max(ORACLE_NEIGHBOURS, neighbours or 0)))
    originals = originals.reshape((len(held_out),) + shape)
    return Evaluation(state, train, held_out, codes, scores, originals, len(rows), left_out)


def _score(name, state: FittedState, preimages: list[Preimage], originals, milliseconds) -> Score:
    reconstructions = [state.to_frame_dtype(p.vector(state)) for p in preimages]
    return _measure(name, state, reconstructions, originals, milliseconds)


def _measure(name, state: FittedState, reconstructions, originals, milliseconds) -> Score:
    if state.is_points:
        distances = [
            float(np.linalg.norm(np.asarray(o, dtype=np.float64) - r)) for o, r in zip(originals, reconstructions)
        ]
        return Score(name, [], [], milliseconds, list(reconstructions), distances)
    shape = state.frame_shape
    frames = [r.reshape(shape) for r in reconstructions]
    truths = [o.reshape(shape) for o in originals]
    return Score(
        name,
        [psnr(t, r) for t, r in zip(truths, frames)],
        [ssim(t, r) for t, r in zip(truths, frames)],
        milliseconds,
        frames,
    )


def _linear_pca(training, originals, shape, k, gram) -> Score:
    # The same linear Gram: linear PCA needs no second pass over the pixels.
    model = KernelPCA(kernel="linear", n_components=k, center=True).fit(training, frame_shape=shape, gram=gram)
    started = time.perf_counter()
    preimages = model.solve_preimages(model.encode(originals), solver="linear")
    elapsed = (time.perf_counter() - started) * 1000.0 / len(originals)
    return _score("linear PCA", model.state_, preimages, originals, elapsed)


def _oracle(state: FittedState, codes, originals, neighbours) -> Score:
    """Least-squares best combination of the M nearest training samples, using the true frame."""
    gram = state.linear_gram
    dots = gram.cross(state.frames, originals).dots()  # (m, n): true frame · training frames
    reconstructions = []
    for row, code in enumerate(codes):
        chosen = state.neighbours.nearest(code, neighbours, distinct=False)
        weights = np.linalg.lstsq(gram.dots_among(chosen), dots[row, chosen], rcond=None)[0]
        reconstructions.append(state.to_frame_dtype(state.weighted_sum(chosen, weights)))
    return _measure("oracle", state, reconstructions, originals, None)
