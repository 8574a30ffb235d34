"""Held-out reconstruction (or denoising) error against the kernel width β and k.

As Dhir (2023), figure 7: too small a β makes every point its own cluster (far points fall towards
the origin), too large a β makes the kernel nearly linear; the error has an interior minimum.
The linear Gram and the products with the held-out samples are computed once; each β costs
one n x n eigendecomposition, each k a truncation of it.
"""

from __future__ import annotations

import re
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..estimators.estimator import FrameModel
from ..io.request import FrameRequest
from ..numerics.kernels import Kernel
from ..numerics.metrics import mean_psnr, psnr
from ..preimage import Start, default_denoise_solver, prepared_solver, solver_for
from ..preimage.synthesis import preimage_vectors
from ..utils.checks import check_int, check_real
from ..utils.errors import ParameterError, ParameterWarning, param
from ..utils.progress import progress_bar
from .evaluation import split
from .running import engine_for

NOISE_SEED = 20231214
DEFAULT_KS = (1, 2, 4, 8)  # the numbers of components a sweep measures unless it is given others


@dataclass
class SweepRow:
    beta: float
    k: int
    mse: float  # mean squared error per value against the clean held-out samples
    mean_distance: float  # mean Euclidean distance per sample
    psnr: float | None  # images only
    not_converged: int
    solver: str = ""  # the pre-image solver the cell's model decoded with

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class SweepResult:
    """The outcome of :func:`sweep`: one row per (β, k), the β values, what was measured."""

    rows: list[SweepRow]
    betas: list[float]
    points: bool  # samples are points (distances) rather than images (PSNR)
    denoising: bool

    @property
    def measure(self) -> str:
        return "mean_distance" if self.points else "psnr"

    @property
    def best(self) -> SweepRow:
        """The best row by the measure the table shows (:func:`best`)."""
        return best(self.rows, self.measure)

    @property
    def edge(self) -> str | None:
        """``"lowest"`` or ``"highest"`` when the best β is that end of the β tried (more than
        one): a better one may lie beyond the range; None when it lies inside."""
        if len(self.betas) < 2:
            return None
        beta = self.best.beta
        return "lowest" if beta == min(self.betas) else "highest" if beta == max(self.betas) else None

    @property
    def solvers(self) -> str:
        """The solver the cells decoded with: one name, or the best cell's when the models'
        measured choices differ."""
        names = sorted({row.solver for row in self.rows})
        return names[0] if len(names) == 1 else f"each model's measured choice ({self.best.solver} at the best)"

    def as_dict(self) -> dict:
        return {
            "measure": self.measure,
            "best": self.best.as_dict(),
            "best_at_edge": self.edge,
            "rows": [r.as_dict() for r in self.rows],
        }

    def format_table(self) -> str:
        """The table `kpca sweep` prints: β down, k across, the best cell marked with *."""
        ks = sorted({row.k for row in self.rows})
        top = self.best
        measure = self.measure
        label = "mean distance to the clean samples" if self.points else "mean PSNR (dB)"
        lines = [
            f"{'denoising' if self.denoising else 'reconstruction'}: {label}, held-out samples; * marks the best",
            "",
        ]
        lines.append(f"{'beta':>12}" + "".join(f"{'k = ' + str(k):>12}" for k in ks))
        for beta in self.betas:
            cells = []
            for k in ks:
                row = next(r for r in self.rows if r.beta == beta and r.k == k)
                cells.append(f"{getattr(row, measure):>11.4f}{'*' if row is top else ' '}")
            lines.append(f"{beta:>12.4g}" + "".join(cells))
        lines.append("")
        lines.append(f"best: beta = {top.beta:.4g}, k = {top.k} ({label} {getattr(top, measure):.4f})")
        failed = sum(row.not_converged for row in self.rows)
        if failed:
            lines.append(f"({failed} solves did not converge)")
        return "\n".join(lines)


def parse_beta_range(text: str) -> tuple[float, float, int]:
    """``LO:HI:N`` → (LO, HI, N); values are spaced logarithmically."""
    match = re.fullmatch(r"\s*([^:]+):([^:]+):(\d+)\s*", text or "")
    try:
        low, high, count = float(match.group(1)), float(match.group(2)), int(match.group(3))
    except (AttributeError, ValueError):
        raise ParameterError(f"beta range must be LO:HI:N, e.g. 0.1:100:13. Got {text!r} instead.") from None
    if not (0 < low <= high and np.isfinite(high) and count >= 1):
        raise ParameterError(f"beta range LO:HI:N needs 0 < LO <= HI and N >= 1. Got {text!r} instead.")
    return low, high, count


def betas_from_range(text: str | None) -> list[float] | None:
    """The β values of ``LO:HI:N`` (N values spaced logarithmically), or None for the default."""
    if text is None:
        return None
    low, high, count = parse_beta_range(text)
    return [float(b) for b in np.geomspace(low, high, count)]


def sweep(
    frames,
    frame_shape=None,
    betas=None,
    ks=DEFAULT_KS,
    noise: float | None = None,
    holdout: str = "odd",
    center: bool | None = None,
    solver: str | None = None,
    progress: bool = False,
) -> SweepResult:
    """Error of held-out samples against β and k (a progress bar over the cells with `progress`).

    Parameters
    ----------
    frames : (n, ...) array
        All samples; the held-out ones (default: odd) are reconstructed.
    betas : sequence of float, optional
        Default: 17 values from 0.001 to 10 times the default β (1 / median squared
        distance), spaced logarithmically.
    ks : sequence of int
        Numbers of components (those ≥ the number of training samples are skipped).
    noise : float, optional
        Add Gaussian noise of this standard deviation to the held-out samples (fixed seed)
        and denoise them: the error is then against the clean samples.
    center : bool, optional
        Centre the kernel. Default: centred for points (as Schölkopf et al. 1998, Mika et al.
        1999 and Dhir 2023 do), uncentred for images (for the log solver).
    solver : str, optional
        Default: the denoising solver (fixed-point for rbf) with ``noise``; otherwise ``auto``,
        the solver each (β, k) model measures best (:mod:`kpcacli.preimage.measurement`), as
        ``decode`` would use it.

    Returns
    -------
    SweepResult
    """
    rows_all = np.asarray(frames)
    shape = tuple(frame_shape) if frame_shape is not None else tuple(rows_all.shape[1:])
    points = len(shape) == 1
    center = points if center is None else center
    rows_all = rows_all.reshape(len(rows_all), -1)
    train, held_out = split(len(rows_all), holdout)
    ks = [check_int("k", k, 1) for k in ks]
    if betas is not None:
        betas = [check_real("beta", b, positive=True) for b in betas]
    clean = rows_all[held_out].astype(np.float64)
    inputs = rows_all[held_out]
    if noise is not None:
        noise = check_real("noise", noise, positive=True)
        generator = np.random.default_rng(NOISE_SEED)
        noisy = clean + generator.normal(0.0, noise, size=clean.shape)
        if rows_all.dtype.kind == "u":
            noisy = np.clip(np.rint(noisy), 0, np.iinfo(rows_all.dtype).max)
        inputs = noisy.astype(rows_all.dtype)
    base = FrameModel(kernel="rbf", n_components=1, center=center).fit(rows_all[train], frame_shape=shape)
    if betas is None:
        betas = base.state_.kernel.beta * np.logspace(-3, 1, 17)
    ks = sorted({k for k in ks if k < len(train)})
    if not ks:
        raise ParameterError(f"no k to try: every k must be in [1, {len(train) - 1}]")
    arguments = base.state_.kernel_arguments(inputs.reshape(len(inputs), -1))
    peak = float(np.iinfo(rows_all.dtype).max) if rows_all.dtype.kind == "u" else None
    results = []
    with progress_bar(progress, desc="sweeping", total=len(betas) * len(ks), unit="cell") as bar:
        for beta in betas:
            model = base.with_components(max(ks), kernel=Kernel("rbf", beta=float(beta)))
            for k in ks:
                truncated = model.with_components(k).state_
                codes = truncated.codes_of_arguments(arguments)
                if noise is not None:
                    method = solver or default_denoise_solver("rbf")
                    starts = [(row, argument) for row, argument in zip(inputs.astype(np.float64), arguments)]
                else:
                    method = solver_for(truncated, solver)  # auto: the model's measured choice
                    starts = [None] * len(codes)
                outputs, not_converged = _solve(truncated, codes, method, starts)
                error = outputs - clean
                results.append(
                    SweepRow(
                        beta=float(beta),
                        k=k,
                        mse=float(np.mean(error**2)),
                        mean_distance=float(np.mean(np.linalg.norm(error, axis=1))),
                        psnr=mean_psnr(psnr(c.astype(rows_all.dtype), o, peak) for c, o in zip(clean, outputs))
                        if peak is not None
                        else None,
                        not_converged=not_converged,
                        solver=method,
                    )
                )
                bar.update()
    return SweepResult(results, [float(b) for b in betas], points, noise is not None)


def _solve(state, codes, method: str, starts) -> tuple[np.ndarray, int]:
    solver, _ = prepared_solver(state, method, None)
    preimages = [
        solver.preimage(state, code, Start(*start) if start is not None else None) for code, start in zip(codes, starts)
    ]
    return preimage_vectors(state, preimages), sum(not preimage.converged for preimage in preimages)


def best(rows: list[SweepRow], measure: str = "psnr") -> SweepRow:
    """The best row by `measure`: the highest mean PSNR (``"psnr"``, images), or the lowest
    mean distance to the clean samples (``"mean_distance"``, points); the first of equals."""
    if measure == "psnr":
        return max(rows, key=lambda row: row.psnr)
    return min(rows, key=lambda row: getattr(row, measure))


def sweep_sources(
    request: FrameRequest,
    *,
    betas=None,
    ks: Sequence[int] = DEFAULT_KS,
    noise: float | None = None,
    holdout: str = "odd",
    center: bool | None = None,
    solver: str | None = None,
    progress: bool = False,
):
    """``kpca sweep``: the samples of `request` through :func:`kpcacli.workflows.sweep.sweep`."""
    # In this process: the sweep reads every sample again for each cell, from the store.
    with (
        engine_for(None, progress) as engine,
        engine.training(request, tempfile.gettempdir(), compress=False) as training,
    ):
        store = training.store
        result = sweep(
            np.asarray(store.frames),
            frame_shape=store.frame_shape,
            betas=betas,
            ks=ks,
            noise=noise,
            holdout=holdout,
            center=center,
            solver=solver,
            progress=progress,
        )
    if result.edge is not None:
        beyond = "lower" if result.edge == "lowest" else "higher"
        warnings.warn(
            f"the best beta, {result.best.beta:.4g}, is the {result.edge} tried: a {beyond} one may do better; "
            f"widen {param('beta_range')}",
            ParameterWarning,
            stacklevel=1,
        )
    return result
