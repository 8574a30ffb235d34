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

from .errors import InputError, KpcaError, ParameterError
from .metrics import psnr, ssim
from .model import KernelPCA
from .preimage import SOLVERS, Preimage, get_solver

ORACLE_NEIGHBOURS = 10

HOLDOUTS = ("odd", "middle")


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

    model: KernelPCA
    train: np.ndarray  # indices of the training frames
    held_out: np.ndarray  # indices of the held-out frames
    codes: np.ndarray  # (m, k) codes of the held-out frames
    scores: list[Score]
    originals: np.ndarray = field(repr=False)  # the held-out frames, (m, *frame_shape)
    total: int = 0  # frames in the clip (more than train + held out with landmarks)

    def as_dict(self) -> dict:
        return {
            "frames": int(self.total),
            "train": len(self.train),
            "held_out": len(self.held_out),
            "k": int(self.model.n_components_),
            "kernel": self.model.kernel_.name,
            "kernel_params": self.model.kernel_.params(),
            "centred": bool(self.model.centred_),
            "explained_variance": self.model.explained_variance_ratio_,
            "results": [score.as_dict() for score in self.scores],
        }


def split(n: int, holdout: str = "odd") -> tuple[np.ndarray, np.ndarray]:
    """Training and held-out frame indices: odd frames held out, or the middle one (seed 000)."""
    if holdout not in HOLDOUTS:
        raise ParameterError(f"holdout must be one of {', '.join(HOLDOUTS)}. Got {holdout!r} instead.")
    if n < 3:
        raise InputError(f"evaluation needs at least three frames; got {n}")
    everything = np.arange(n)
    held_out = everything[1::2] if holdout == "odd" else np.array([n // 2])
    return np.setdiff1d(everything, held_out), held_out


# The pixel-space gradient solver makes two passes over the frames per iteration (about 17 s a
# frame at 1080 x 1920): above this many pixels it runs only when asked for with --solver.
GRADIENT_DEFAULT_MAX_PIXELS = 250_000


def applicable_solvers(model: KernelPCA) -> list[str]:
    """Every registered solver that accepts `model`, default first (gradient only on small frames)."""
    names = []
    for name in ["log", *sorted(SOLVERS)]:
        if name in names:
            continue
        if name == "gradient" and model.frames_.shape[1] > GRADIENT_DEFAULT_MAX_PIXELS:
            continue
        try:
            get_solver(name).check(model)
        except KpcaError:
            continue
        names.append(name)
    return names


def evaluate(
    frames: np.ndarray,
    frame_shape: tuple[int, ...] | None = None,
    holdout: str = "odd",
    solvers: list[str] | None = None,
    neighbours: int | None = None,
    baselines: bool = True,
    landmarks: int | None = None,
    landmark_method: str = "uniform",
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
    **params
        Model parameters (kernel, n_components, eps, beta, ...).
    """
    rows = frames.reshape(len(frames), -1) if frame_shape is None and np.ndim(frames) > 2 else frames
    shape = tuple(frame_shape) if frame_shape is not None else tuple(frames.shape[1:])
    train, held_out = split(len(rows), holdout)
    if landmarks is not None:
        from .landmarks import choose_landmarks

        train = train[
            choose_landmarks(
                rows[train] if isinstance(rows, np.ndarray) else np.asarray(rows[train]), landmarks, landmark_method
            )
        ]
    training = np.asarray(rows[train])
    originals = np.asarray(rows[held_out])
    model = KernelPCA(**params).fit(training, frame_shape=shape)
    codes = model.encode(originals)
    names = solvers if solvers else applicable_solvers(model)
    scores = []
    for name in names:
        solver = get_solver(name)
        solver.check(model)
        count = neighbours or solver.default_neighbours
        _ = model.code_spacing_  # computed once, outside the timing
        started = time.perf_counter()
        preimages = [solver.solve(model, code, model.neighbours(code, count)) for code in codes]
        elapsed = (time.perf_counter() - started) * 1000.0 / len(codes)
        scores.append(_score(name, model, preimages, originals, elapsed))
    if baselines:
        scores.append(_linear_pca(training, originals, shape, model.n_components_))
        scores.append(_oracle(model, codes, originals, max(ORACLE_NEIGHBOURS, neighbours or 0)))
    return Evaluation(model, train, held_out, codes, scores, originals.reshape((len(held_out),) + shape), len(rows))


def _score(name, model, preimages: list[Preimage], originals, milliseconds) -> Score:
    reconstructions = [model.to_frame_dtype(model.assemble(p)) for p in preimages]
    return _measure(name, model, reconstructions, originals, milliseconds)


def _measure(name, model, reconstructions, originals, milliseconds) -> Score:
    if model.is_points:
        distances = [
            float(np.linalg.norm(np.asarray(o, dtype=np.float64) - r)) for o, r in zip(originals, reconstructions)
        ]
        return Score(name, [], [], milliseconds, list(reconstructions), distances)
    shape = tuple(model.frame_shape_)
    frames = [r.reshape(shape) for r in reconstructions]
    truths = [o.reshape(shape) for o in originals]
    return Score(
        name,
        [psnr(t, r) for t, r in zip(truths, frames)],
        [ssim(t, r) for t, r in zip(truths, frames)],
        milliseconds,
        frames,
    )


def _linear_pca(training, originals, shape, k) -> Score:
    model = KernelPCA(kernel="linear", n_components=k, center=True).fit(training, frame_shape=shape)
    started = time.perf_counter()
    preimages = model.solve_preimages(model.encode(originals), solver="linear")
    elapsed = (time.perf_counter() - started) * 1000.0 / len(originals)
    return _score("linear PCA", model, preimages, originals, elapsed)


def _oracle(model, codes, originals, neighbours) -> Score:
    """Least-squares best combination of the M nearest training samples, using the true frame."""
    gram = model.linear_gram_
    products = gram.cross(model.frames_, originals)
    dots = products.dots()  # (m, n): true frame · training frames
    reconstructions = []
    for row, code in enumerate(codes):
        chosen = model.neighbours(code, neighbours, distinct=False)
        weights = np.linalg.lstsq(gram.dots_among(chosen), dots[row, chosen], rcond=None)[0]
        reconstructions.append(model.to_frame_dtype(model.assemble(Preimage(chosen, weights, 0.0, True, 0))))
    return _measure("oracle", model, reconstructions, originals, None)
