"""Plots for `kpca sweep --plot` and `kpca plot components` (matplotlib, an optional extra)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io.ownership import SOFTWARE
from ..utils.atomic import atomic_file
from ..utils.checks import check_int, frame_size
from ..utils.errors import KpcaError
from .report import require_matplotlib


def plot_components(model, path: str | Path, n: int = 8, resolution: int = 120) -> str:
    """Lines of constant value of the first n kernel principal components over 2-D points.

    As Schölkopf et al. (1998), figure 1, and Dhir (2023), figure 2, next to the first linear
    principal component (whose level lines are straight).

    Parameters
    ----------
    model : FrameModel
        A model fitted on 2-D points.
    """
    state = model.state_
    check_int("n", n, 1)
    if state.frame_shape != (2,):
        raise KpcaError(
            f"plot components needs a model of 2-D points; this model has samples of {frame_size(state.frame_shape)}"
        )
    plt = require_matplotlib()
    eigenvalues = state.eigenvalues
    rank = int(np.count_nonzero(eigenvalues > eigenvalues[0] * 1e-12))
    n = max(1, min(int(n), rank, state.n_samples - 1))
    full = model.with_components(n)
    points = np.asarray(state.frames, dtype=np.float64)
    low, high = points.min(axis=0), points.max(axis=0)
    margin = 0.15 * (high - low)
    xs = np.linspace(low[0] - margin[0], high[0] + margin[0], resolution)
    ys = np.linspace(low[1] - margin[1], high[1] + margin[1], resolution)
    grid_x, grid_y = np.meshgrid(xs, ys)
    grid = np.column_stack([grid_x.ravel(), grid_y.ravel()])
    codes = full.encode(grid)
    mean = points.mean(axis=0)
    _, _, vt = np.linalg.svd(points - mean, full_matrices=False)
    linear = (grid - mean) @ vt[0]

    columns = 3
    rows = int(np.ceil((n + 1) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 3.0 * rows), squeeze=False)
    panels = [("linear PCA, component 1", linear)] + [
        (f"kernel PC {c + 1} (λ = {eigenvalues[c]:.3g})", codes[:, c]) for c in range(n)
    ]
    for axis, (title, values) in zip(axes.ravel(), panels):
        axis.contour(grid_x, grid_y, values.reshape(grid_x.shape), levels=12, linewidths=0.8, cmap="viridis")
        axis.scatter(points[:, 0], points[:, 1], s=3, color="black")
        axis.set_title(title, fontsize="small")
        axis.set_xticks([])
        axis.set_yticks([])
    for axis in axes.ravel()[len(panels) :]:
        axis.axis("off")
    figure.tight_layout()
    with atomic_file(path) as out:
        figure.savefig(out, format="png", dpi=100, metadata={"Software": SOFTWARE})
    plt.close(figure)
    return str(path)


def plot_sweep(result, path: str | Path) -> str:
    """Error against β (log scale), one line per k, the best point marked (Dhir 2023, figure 7).

    Parameters
    ----------
    result : SweepResult
    """
    rows, measure, best = result.rows, result.measure, result.best
    plt = require_matplotlib()
    figure, axis = plt.subplots(figsize=(6, 4))
    for k in sorted({row.k for row in rows}):
        chosen = [row for row in rows if row.k == k]
        axis.plot([row.beta for row in chosen], [getattr(row, measure) for row in chosen], marker="o", label=f"k = {k}")
    axis.scatter([best.beta], [getattr(best, measure)], s=120, facecolors="none", edgecolors="red", label="best")
    axis.set_xscale("log")
    axis.set_xlabel("β")
    axis.set_ylabel("mean distance to the clean samples" if result.points else "mean PSNR (dB)")
    axis.set_title(
        f"{'denoising' if result.denoising else 'reconstruction'} of the held-out samples; solver: {result.solvers}",
        fontsize="small",
    )
    axis.legend(fontsize="small")
    figure.tight_layout()
    with atomic_file(path) as out:
        figure.savefig(out, format="png", dpi=100, metadata={"Software": SOFTWARE})
    plt.close(figure)
    return str(path)
