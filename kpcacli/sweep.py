"""Held-out reconstruction (or denoising) error against the kernel width β and k.

As seed 001 figure 7: too small a β makes every point its own cluster (far points fall towards
the origin), too large a β makes the kernel nearly linear; the error has an interior minimum.
The linear Gram and the products with the held-out samples are computed once; each β costs
one n x n eigendecomposition, each k a truncation of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import ParameterError
from .evaluation import split
from .kernels import Kernel
from .metrics import psnr
from .model import KernelPCA, default_denoise_solver

NOISE_SEED = 20231214


@dataclass
class SweepRow:
    beta: float
    k: int
    mse: float  # mean squared error per value against the clean held-out samples
    mean_distance: float  # mean Euclidean distance per sample
    psnr: float | None  # images only
    not_converged: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


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


def sweep(
    frames,
    frame_shape=None,
    betas=None,
    ks=(1, 2, 4, 8),
    noise: float | None = None,
    holdout: str = "odd",
    center: bool = True,
    solver: str | None = None,
) -> tuple[list[SweepRow], list[float]]:
    """Error of held-out samples against β and k.

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
    center : bool
        Centre the kernel (seeds 001, 002, 004 do).
    solver : str, optional
        Default: the denoising solver (fixed-point for rbf) with ``noise``; otherwise ``log``
        for uncentred and ``discrepancy`` for centred models.

    Returns
    -------
    rows : list of SweepRow
    betas : list of float
    """
    rows_all = np.asarray(frames)
    shape = tuple(frame_shape) if frame_shape is not None else tuple(rows_all.shape[1:])
    rows_all = rows_all.reshape(len(rows_all), -1)
    train, held_out = split(len(rows_all), holdout)
    clean = rows_all[held_out].astype(np.float64)
    inputs = rows_all[held_out]
    if noise is not None:
        if not (np.isfinite(noise) and noise > 0):
            raise ParameterError(f"noise must be a finite number > 0. Got {noise!r} instead.")
        generator = np.random.default_rng(NOISE_SEED)
        noisy = clean + generator.normal(0.0, noise, size=clean.shape)
        if rows_all.dtype.kind == "u":
            noisy = np.clip(np.rint(noisy), 0, np.iinfo(rows_all.dtype).max)
        inputs = noisy.astype(rows_all.dtype)
    base = KernelPCA(kernel="rbf", n_components=1, center=center).fit(rows_all[train], frame_shape=shape)
    if betas is None:
        betas = base.kernel_.beta * np.logspace(-3, 1, 17)
    ks = sorted({int(k) for k in ks if 1 <= int(k) < len(train)})
    if not ks:
        raise ParameterError(f"no k to try: every k must be in [1, {len(train) - 1}]")
    products = base.linear_gram_.cross(base.frames_, inputs.reshape(len(inputs), -1))
    arguments = products.squared_distances()
    peak = float(np.iinfo(rows_all.dtype).max) if rows_all.dtype.kind == "u" else None
    results = []
    for beta in betas:
        model = base.with_components(max(ks), kernel=Kernel("rbf", beta=float(beta)))
        for k in ks:
            truncated = model.with_components(k)
            codes = truncated._codes(truncated.kernel_.value(arguments))
            if noise is not None:
                method = solver or default_denoise_solver("rbf")
                starts = [(row, argument) for row, argument in zip(inputs.astype(np.float64), arguments)]
            else:
                method = solver or ("discrepancy" if center else "log")
                starts = [None] * len(codes)
            outputs, not_converged = _solve(truncated, codes, method, starts)
            error = outputs - clean
            results.append(
                SweepRow(
                    beta=float(beta),
                    k=k,
                    mse=float(np.mean(error**2)),
                    mean_distance=float(np.mean(np.linalg.norm(error, axis=1))),
                    psnr=float(np.mean([psnr(c.astype(rows_all.dtype), o, peak) for c, o in zip(clean, outputs)]))
                    if peak is not None
                    else None,
                    not_converged=not_converged,
                )
            )
    return results, [float(b) for b in betas]


def _solve(model: KernelPCA, codes, method: str, starts) -> tuple[np.ndarray, int]:
    from .preimage import Start, get_solver

    solver = get_solver(method)
    solver.check(model)
    outputs, failures = [], 0
    for code, start in zip(codes, starts):
        begin = Start(*start) if start is not None else None
        preimage = solver.solve(model, code, model.neighbours(code, solver.default_neighbours), begin)
        failures += not preimage.converged
        outputs.append(model.assemble(preimage))
    return np.stack(outputs), failures


def best(rows: list[SweepRow]) -> SweepRow:
    """The row with the lowest mean squared error."""
    return min(rows, key=lambda row: row.mse)
