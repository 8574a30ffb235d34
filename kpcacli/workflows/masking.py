"""``kpca eval --mask-fraction F``: held-out frames with part of them hidden, completed.

The split and the fit are :func:`kpcacli.workflows.evaluation.evaluate`'s; each held-out frame
then has square blocks (a sixth of its shorter side) hidden at random until F of it is (a
random F of the values for point models; seeded, so a run is repeatable), and is completed
from the rest (:meth:`kpcacli.FrameModel.reconstruct`). Scored on the hidden values only,
beside

* ``nearest frame``: the model's decode of the training frame nearest on the observed values,
  what a reduced model gives without encoding from part of a frame;
* ``OpenCV Telea`` and ``scikit-image biharmonic``: inpainting of the same holes from the frame
  alone (grey frames; scikit-image when installed, as in the bench extra).

The error estimate of each completed frame (:attr:`kpcacli.estimators.reconstruction.Reconstruction.estimate`)
is set beside its true error: Spearman's rank correlation over the held-out frames says how
well it ranks them.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from ..estimators.estimator import FrameModel
from ..estimators.reconstruction import nearest_on_observed
from ..model.state import FittedState
from ..numerics.metrics import data_range, finite_or_none, psnr
from ..utils.checks import check_real
from ..utils.errors import param
from ..utils.progress import progress_bar
from .evaluation import Score, split

BLOCK_FRACTION = 6  # a block's side: the frame's shorter side over this


def block_masks(shape: tuple[int, ...], count: int, fraction: float, seed: int = 0) -> np.ndarray:
    """`count` masks of frames of `shape`, True where observed: square blocks hidden at random
    until `fraction` of each frame is (colour frames: every channel of a pixel); for 1-D
    samples, a random `fraction` of the values."""
    rng = np.random.default_rng(seed)
    if len(shape) == 1:
        masks = np.ones((count, *shape), dtype=bool)
        hidden = max(1, min(shape[0] - 1, round(fraction * shape[0])))
        for mask in masks:
            mask[rng.choice(shape[0], hidden, replace=False)] = False
        return masks
    height, width = shape[:2]
    size = max(1, min(height, width) // BLOCK_FRACTION)
    masks = np.ones((count, height, width), dtype=bool)
    for mask in masks:
        while (~mask).mean() < fraction:
            row, col = rng.integers(0, height - size + 1), rng.integers(0, width - size + 1)
            mask[row : row + size, col : col + size] = False
    return np.repeat(masks[..., np.newaxis], shape[2], axis=-1) if len(shape) == 3 else masks


@dataclass
class MaskedEvaluation:
    """The outcome of :func:`evaluate_masked_frames`."""

    state: FittedState
    train: np.ndarray
    held_out: np.ndarray
    fraction: float
    originals: np.ndarray = field(repr=False)  # (m, *frame_shape)
    masks: np.ndarray = field(repr=False)  # (m, *frame_shape), True where observed
    scores: list[Score] = field(default_factory=list)
    estimate: list[float] = field(default_factory=list)  # kpca's error estimate, per frame
    error: list[float] = field(default_factory=list)  # kpca's true RMS error at the hidden values
    total: int = 0
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def spearman(self) -> float | None:
        """Spearman's rank correlation of the estimate with the true error (None: fewer than
        three frames, or one of them constant)."""
        if len(self.estimate) < 3 or np.ptp(self.estimate) == 0 or np.ptp(self.error) == 0:
            return None
        from scipy.stats import spearmanr

        return float(spearmanr(self.estimate, self.error).statistic)

    def as_dict(self) -> dict:
        key = "distance" if self.state.is_points else "psnr"
        return {
            "frames": int(self.total),
            "train": len(self.train),
            "held_out": len(self.held_out),
            "k": self.state.n_components,
            "hidden": self.fraction,
            "results": [
                {
                    "method": score.method,
                    f"mean_{key}": finite_or_none(_mean(score, self.state.is_points)),
                    "ms_per_frame": score.milliseconds,
                    key: [finite_or_none(v) for v in (score.distances if self.state.is_points else score.psnr)],
                }
                for score in self.scores
            ],
            "estimate": self.estimate,
            "error": self.error,
            "estimate_spearman": self.spearman,
            "left_out": self.left_out,
        }

    def format_table(self) -> str:
        state = self.state
        kind = "samples" if state.is_points else "frames"
        what = "values" if state.is_points else "pixels"
        lines = [
            f"{self.total} {kind}: {len(self.train)} train, {len(self.held_out)} held out, "
            f"{100 * self.fraction:.0f}% of each hidden ({'random values' if state.is_points else 'square blocks'}); "
            f"k = {state.n_components}",
            f"scored on the hidden {what} only",
            "",
        ]
        if state.is_points:
            lines.append(f"{'method':<26}{'mean distance':>15}{'worst distance':>16}{'ms/sample':>11}")
        else:
            lines.append(f"{'method':<26}{'mean PSNR':>11}{'worst PSNR':>12}{'ms/frame':>10}")
        for score in self.scores:
            ms = f"{score.milliseconds:.2f}" if score.milliseconds is not None else "-"
            if state.is_points:
                values = score.distances
                lines.append(f"{score.method:<26}{np.mean(values):>15.4g}{np.max(values):>16.4g}{ms:>11}")
            else:
                lines.append(f"{score.method:<26}{score.mean_psnr:>11.2f}{score.worst_psnr:>12.2f}{ms:>10}")
        rank = self.spearman
        lines.append("")
        lines.append(
            "error estimate against the true error: "
            + (
                f"Spearman {rank:.2f} over {len(self.estimate)} frames"
                if rank is not None
                else "not ranked (too few frames)"
            )
        )
        return "\n".join(lines)


def _mean(score: Score, points: bool) -> float:
    return float(np.mean(score.distances)) if points else score.mean_psnr


def evaluate_masked_frames(
    frames: np.ndarray,
    model: FrameModel,
    fraction: float,
    *,
    frame_shape: tuple[int, ...],
    holdout: str = "odd",
    solvers: list[str] | None = None,
    neighbours: int | None = None,
    linear_gram_of=None,
    progress: bool = False,
) -> MaskedEvaluation:
    """``kpca eval --mask-fraction``: `frames` (n, d) split as :func:`kpcacli.workflows.evaluation.split`
    does, `model` (unfitted; a copy is fitted) fitted on the training frames, and the held-out
    frames completed from part of them (:func:`_evaluate_masked`)."""
    fraction = check_real(param("mask_fraction"), fraction, open_unit=True)
    train, held_out = split(len(frames), holdout)
    model = copy.copy(model)
    model.check_parameters()
    gram = linear_gram_of(train) if linear_gram_of is not None else None
    model.fit(np.asarray(frames[train]), frame_shape=frame_shape, gram=gram)
    originals = np.asarray(frames[held_out]).reshape(len(held_out), *model.state_.frame_shape)
    return _evaluate_masked(
        model,
        train,
        held_out,
        originals,
        fraction,
        solvers=solvers,
        neighbours=neighbours,
        total=len(frames),
        progress=progress,
    )


def _evaluate_masked(
    model: FrameModel,
    train: np.ndarray,
    held_out: np.ndarray,
    originals: np.ndarray,
    fraction: float,
    *,
    solvers: list[str] | None = None,
    neighbours: int | None = None,
    total: int = 0,
    progress: bool = False,
) -> MaskedEvaluation:
    """The held-out `originals` (m, *frame_shape) of the fitted `model`, each with `fraction`
    of it hidden (:func:`block_masks`; `fraction` checked by :func:`evaluate_masked_frames`),
    completed by `model` (one row per solver of `solvers`, default the model's own) and by the
    references (module docstring)."""
    state = model.state_
    masks = block_masks(state.frame_shape, len(originals), fraction)
    hidden = ~masks.reshape(len(originals), -1)
    truths = originals.reshape(len(originals), -1).astype(np.float64)
    result = MaskedEvaluation(state, train, held_out, fraction, originals, masks, total=total)
    for solver in solvers or [None]:
        name = "kpca reconstruct" + (f" ({solver})" if solver else "")
        with progress_bar(progress, desc=name, total=1, unit="batch") as bar:
            started = time.perf_counter()
            completed = model.reconstruct(originals, masks, solver=solver, neighbours=neighbours)
            milliseconds = (time.perf_counter() - started) * 1000.0 / len(originals)
            bar.update(1)
        result.scores.append(_score(name, completed.frames, truths, hidden, state, milliseconds))
        if not result.estimate:
            wrong = completed.frames.reshape(len(originals), -1).astype(np.float64) - truths
            result.estimate = [float(v) for v in completed.estimate]
            result.error = [float(np.sqrt(np.mean(row[gap] ** 2))) for row, gap in zip(wrong, hidden)]
    result.scores.append(_score("nearest frame", _nearest_frames(model, originals, masks), truths, hidden, state, None))
    if not state.is_points and not state.is_colour:
        for name, inpaint in _inpaintings(result.left_out).items():
            started = time.perf_counter()
            frames = np.stack([inpaint(frame, ~mask) for frame, mask in zip(originals, masks)])
            milliseconds = (time.perf_counter() - started) * 1000.0 / len(originals)
            result.scores.append(_score(name, frames, truths, hidden, state, milliseconds))
    return result


def _score(name, frames, truths, hidden, state: FittedState, milliseconds) -> Score:
    """A method's frames scored at the hidden values: PSNR for images, distance for points."""
    rows = np.asarray(frames).reshape(len(truths), -1).astype(np.float64)
    as_frames = list(np.asarray(frames).reshape(len(truths), *state.frame_shape))
    if state.is_points:
        distances = [float(np.linalg.norm(row[gap] - truth[gap])) for row, truth, gap in zip(rows, truths, hidden)]
        return Score(name, [], [], milliseconds, as_frames, distances)
    peak = data_range(state.frames.dtype)
    values = [psnr(truth[gap], row[gap], peak=peak) for row, truth, gap in zip(rows, truths, hidden)]
    return Score(name, values, [], milliseconds, as_frames)


def _nearest_frames(model: FrameModel, originals: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The model's decode of each frame's training frame nearest on its observed values."""
    state = model.state_
    nearest = nearest_on_observed(state, originals, masks)
    return model.decode(model.encode(np.asarray(state.frames[nearest]).reshape(len(nearest), *state.frame_shape)))


def _inpaintings(left_out: dict) -> dict:
    """The inpainting references that can run here, by name; those that cannot are noted in
    `left_out`."""
    methods = {}
    try:
        import cv2
    except ImportError:
        left_out["OpenCV Telea"] = "OpenCV is not installed"
    else:

        def telea(frame: np.ndarray, hidden: np.ndarray) -> np.ndarray:
            scale = 255.0 / data_range(frame.dtype)
            grey = np.clip(np.rint(frame * scale), 0, 255).astype(np.uint8)
            filled = cv2.inpaint(grey, hidden.astype(np.uint8) * 255, 3, cv2.INPAINT_TELEA)
            return (filled / scale).astype(frame.dtype) if frame.dtype.kind == "f" else filled.astype(frame.dtype)

        methods["OpenCV Telea"] = telea
    try:
        from skimage.restoration import inpaint_biharmonic
    except ImportError:
        left_out["scikit-image biharmonic"] = "scikit-image is not installed (pip install 'kpcacli[bench]')"
    else:

        def biharmonic(frame: np.ndarray, hidden: np.ndarray) -> np.ndarray:
            peak = data_range(frame.dtype)
            return inpaint_biharmonic(frame.astype(np.float64) / peak, hidden) * peak

        methods["scikit-image biharmonic"] = biharmonic
    return methods
