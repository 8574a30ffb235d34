"""How the pixels of one frame travel to another, and frames moved part of the way: the
displacement interpolation behind the ``transport`` pre-image (:mod:`kpcacli.preimage.transport`).

A weighted sum of two frames in which something moves shows it twice, faded. Displacement
interpolation (Bonneel, van de Panne, Paris and Heidrich 2011) moves each frame along the
displacement that carries it onto the other, part of the way, and only then blends: with
weights ``w`` over frames ``x_i`` and ``F_ij`` the field carrying ``x_i`` onto ``x_j``,

    x* = Σ_i w_i · x_i moved by Σ_j w_j F_ij,

which for two frames and ``w = (1 − t, t)`` is ``x_a`` moved by ``t F_ab`` and ``x_b`` moved by
``(1 − t) F_ba``, blended ``1 − t : t``: what a frame interpolator does with optical flow.

* Images: the field is the dense optical flow of DIS (Kroeger, Timofte, Dai and Van Gool 2016,
  OpenCV's ``DISOpticalFlow`` at its fast preset), computed on grey 8-bit views of the two
  frames at most ``FLOW_MAX_SIDE`` pixels on their longer side (the field is smooth; it is
  scaled back to the frame), and a frame is moved by backward bicubic warping (a pixel takes
  the value where its displacement came from).
* One-row (or one-column) frames, signals: in one dimension the optimal transport between two
  non-negative signals is exact and cheap, the monotone rearrangement of their cumulative
  sums, and the weighted barycentre of several signals averages their quantile functions
  (:func:`signal_barycentre`): a pulse at μ_a and one at μ_b give the pulse at
  ``(1 − t) μ_a + t μ_b``, not two half pulses.

OpenCV is imported when a field is first computed: ``kpca --help`` and the other solvers never
load it. Fields are a function of the two frames alone (DIS's stripes are independent), the
same bytes whatever the threads; not whatever the CPU: OpenCV's code for one instruction set
rounds differently from another's, and a moved frame may differ by a grey level in a few
pixels between them (docs/quality.md).
"""

from __future__ import annotations

import functools

import numpy as np

from ..utils.cores import opencv
from .metrics import LUMA

FLOW_MAX_SIDE = 960  # the flow is computed on frames scaled to at most this longer side
FLOW_MIN_SIDE = 32  # and at least this shorter side (DIS's patches need room)
FLOW_PRESET = "FAST"  # DIS's preset (OpenCV's DISOPTICAL_FLOW_PRESET_*): docs/quality.md compares
WARP_INTERPOLATION = "CUBIC"  # how a moved frame is resampled (OpenCV's INTER_*): docs/quality.md compares
# A pre-image the solver choice scores is formed at every s-th pixel each way, s the largest step
# that leaves at least this many pixels (every pixel of a small frame): its error is the
# frame's to sampling, at a fraction of the warping (kpcacli/preimage/measurement.py).
SCORED_PIXELS = 1 << 16
QUANTILES_PER_VALUE = 16  # the 1-D quantile grid: this many points per value of the signal
FLOW_LUMA = LUMA.astype(np.float32)  # colour frames' grey view, in the flow's float32


def is_signal(frame_shape: tuple[int, ...]) -> bool:
    """Whether frames of this shape are one-dimensional signals (one row or one column of grey
    values), moved by 1-D optimal transport rather than optical flow."""
    return len(frame_shape) == 2 and min(frame_shape) == 1


def flow_view(frame: np.ndarray, low: float, high: float) -> np.ndarray:
    """The grey 8-bit view of `frame` (h, w) or (h, w, 3) the flow is computed on: colour as its
    luma, values mapped from [`low`, `high`] (the pair's common range) onto 0–255."""
    if frame.dtype == np.uint8 and frame.ndim == 2:
        return frame  # 8-bit grey: the frame itself
    values = np.asarray(frame, dtype=np.float32)
    if values.ndim == 3:
        values = values @ FLOW_LUMA
    if (low, high) != (0.0, 255.0):
        values = (values - np.float32(low)) * np.float32(255.0 / (high - low) if high > low else 0.0)
    return np.clip(np.rint(values), 0, 255).astype(np.uint8)


def view_range(frames: np.ndarray) -> tuple[float, float]:
    """The range a pair of frames' grey views map onto 0–255: 0–255 for 8-bit frames (as
    they are), else the pair's own minimum and maximum."""
    if frames.dtype == np.uint8:
        return 0.0, 255.0
    return float(np.min(frames)), float(np.max(frames))


def flow_scale(height: int, width: int) -> float:
    """The factor frames are resized by before the flow: the longer side at most
    ``FLOW_MAX_SIDE``, the shorter at least ``FLOW_MIN_SIDE``."""
    scale = min(1.0, FLOW_MAX_SIDE / max(height, width))
    return max(scale, FLOW_MIN_SIDE / min(height, width))


def displacement(source: np.ndarray, target: np.ndarray, at: np.ndarray | None = None) -> np.ndarray:
    """``F``, (h, w, 2) float32: where each pixel of the grey view `source` (h, w, uint8)
    moves to in `target` (x then y, in pixels), by DIS optical flow at ``flow_scale``; or,
    given positions `at` (..., 2) (x then y, :func:`scoring_grid`), ``F`` at those pixels only,
    (..., 2): the same values, without scaling the whole field to the frame."""
    cv2 = opencv()
    height, width = source.shape
    scale = flow_scale(height, width)
    if scale != 1.0:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        method = cv2.INTER_AREA if scale < 1.0 else cv2.INTER_LINEAR
        source, target = cv2.resize(source, size, interpolation=method), cv2.resize(target, size, interpolation=method)
    preset = getattr(cv2, f"DISOPTICAL_FLOW_PRESET_{FLOW_PRESET}")
    field = cv2.DISOpticalFlow_create(preset).calc(source, target, None)
    if scale == 1.0:
        field = field if at is None else at_pixels(field, at)
        return np.ascontiguousarray(field, dtype=np.float32)
    # The flow's pixels per frame pixel, each way; the field is scaled back as cv2.resize
    # scales (bilinear, pixel centres aligned), whole or at the positions asked.
    flow_height, flow_width = field.shape[:2]
    factors = np.array([flow_width / width, flow_height / height], dtype=np.float32)
    if at is None:
        field = cv2.resize(field, (width, height), interpolation=cv2.INTER_LINEAR)
    else:
        where = (at + np.float32(0.5)) * factors - np.float32(0.5)
        field = cv2.remap(field, where, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    field[..., 0] *= np.float32(width / flow_width)
    field[..., 1] *= np.float32(height / flow_height)
    return np.ascontiguousarray(field, dtype=np.float32)


def scoring_grid(height: int, width: int) -> np.ndarray:
    """Positions (x then y), (gh, gw, 2) float32, of every s-th pixel of an h x w frame each
    way from s // 2, s the largest step that leaves at least ``SCORED_PIXELS`` of them: where
    the solver choice forms the pre-images it scores."""
    step = max(1, int(np.sqrt(height * width / SCORED_PIXELS)))
    if step == 1:
        return _pixel_grid(height, width)  # every pixel: at_pixels knows it and takes them all
    grid = np.empty((len(range(step // 2, height, step)), len(range(step // 2, width, step)), 2), dtype=np.float32)
    grid[..., 0] = np.arange(step // 2, width, step, dtype=np.float32)
    grid[..., 1] = np.arange(step // 2, height, step, dtype=np.float32)[:, None]
    return grid


def at_pixels(image: np.ndarray, at: np.ndarray) -> np.ndarray:
    """`image` (h, w[, c]) at the whole-pixel positions `at` (..., 2), x then y: `image` itself
    when `at` is its every pixel (:func:`_pixel_grid`, what :func:`scoring_grid` gives a small
    frame), which gathering would copy value by value."""
    if at.shape[:-1] == image.shape[:2] and at is _pixel_grid(*image.shape[:2]):
        return image
    return image[at[..., 1].astype(np.intp), at[..., 0].astype(np.intp)]


def grid_values(grid: np.ndarray, frame_shape: tuple[int, ...]) -> np.ndarray:
    """The flat indices into a frame vector of shape `frame_shape` ((h, w) or (h, w, 3)) of
    the values at the positions `grid` (:func:`scoring_grid`), in the order a frame moved
    there holds them."""
    columns = grid[..., 0].astype(np.intp)
    pixels = grid[..., 1].astype(np.intp) * frame_shape[1] + columns
    if len(frame_shape) == 3:
        pixels = pixels[..., None] * frame_shape[2] + np.arange(frame_shape[2])
    return pixels.reshape(-1)


def moved(frame: np.ndarray, fields: list[tuple[float, np.ndarray]], at: np.ndarray | None = None) -> np.ndarray:
    """`frame` (h, w) or (h, w, 3), float32, moved along ``Σ w F`` for the (w, F) of `fields`
    (each F (h, w, 2)): the pixel at p takes the frame's value at ``p − Σ w F(p)`` (bicubic;
    the border extends the edge). Given positions `at` (..., 2) (:func:`scoring_grid`), the
    moved frame at those pixels only, each F given there."""
    cv2 = opencv()

    where = _pixel_grid(*frame.shape[:2]) if at is None else at
    for weight, field in fields:
        where = cv2.scaleAdd(field, -float(weight), where)  # OpenCV's threads, one pass each
    return cv2.remap(frame, where, None, getattr(cv2, f"INTER_{WARP_INTERPOLATION}"), borderMode=cv2.BORDER_REPLICATE)


@functools.lru_cache(maxsize=4)
def _pixel_grid(height: int, width: int) -> np.ndarray:
    """Every pixel's (x, y), (h, w, 2) float32, read-only: kept for the frame size in use."""
    grid = np.empty((height, width, 2), dtype=np.float32)
    grid[..., 0] = np.arange(width, dtype=np.float32)
    grid[..., 1] = np.arange(height, dtype=np.float32)[:, None]
    grid.flags.writeable = False
    return grid


def transported_frames(frames: np.ndarray, weights: np.ndarray, field, at: np.ndarray | None = None) -> np.ndarray:
    """``Σ_i w_i · x_i moved by Σ_j w_j F_ij`` (module docstring), float32, for `frames`
    (m, h, w[, 3]) and `weights` (m,) summing to one; ``field(i, j)`` gives ``F_ij`` (at the
    positions `at` only, when given: the result is then the frame at those pixels). A frame
    of zero weight is neither moved nor moved toward. Negative weights (a point beyond the
    frames, extrapolated) move the others away from their frames, but only frames of positive
    weight are blended, in proportion: a blend with a negative weight would subtract a picture.
    """
    cv2 = opencv()

    active = [i for i in range(len(frames)) if weights[i] != 0.0]
    blended = [i for i in active if weights[i] > 0.0]
    share = 1.0 / float(sum(weights[i] for i in blended))
    total = None
    for i in blended:
        frame = np.ascontiguousarray(frames[i], dtype=np.float32)
        fields = [(weights[j], field(i, j)) for j in active if j != i]
        if fields:
            part = moved(frame, fields, at)
        else:
            part = frame if at is None else at_pixels(frame, at)
        if total is None:
            total = part * np.float32(share * weights[i])  # numpy: cv2.multiply by a number scales one channel
        else:
            total = cv2.scaleAdd(part, share * float(weights[i]), total)
    return total


def signal_barycentre(signals: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The 1-D Wasserstein barycentre of `signals` (m, d) with `weights` (m,), float64 (d,).

    Each signal is taken above the floor they share (their common minimum), as a density of
    mass uniform within each value's cell; the barycentre's quantile function is the weighted
    mean of theirs (exact in one dimension), its mass the weighted mean of their masses. A
    signal without mass above the floor has nothing to move: then the signals are blended.
    """
    signals = np.asarray(signals, dtype=np.float64)
    floor = float(signals.min())
    excess = signals - floor
    masses = excess.sum(axis=1)
    if np.any(masses <= 0.0):
        return floor + weights @ excess
    d = signals.shape[1]
    edges = np.arange(d + 1, dtype=np.float64)
    levels = (np.arange(QUANTILES_PER_VALUE * d) + 0.5) / (QUANTILES_PER_VALUE * d)
    quantiles = np.zeros_like(levels)
    for weight, row, mass in zip(weights, excess, masses):
        cumulative = np.concatenate([[0.0], np.cumsum(row / mass)])
        cumulative[-1] = 1.0
        cell = np.clip(np.searchsorted(cumulative, levels, side="right") - 1, 0, d - 1)
        width = cumulative[cell + 1] - cumulative[cell]
        within = np.where(width > 0.0, (levels - cumulative[cell]) / np.where(width > 0.0, width, 1.0), 0.5)
        quantiles += weight * (cell + within)
    # With a negative weight (extrapolated) the mean may fold back on itself: keep it monotone.
    quantiles = np.maximum.accumulate(quantiles)
    cumulative = np.interp(edges, quantiles, levels, left=0.0, right=1.0)
    cumulative[0], cumulative[-1] = 0.0, 1.0
    return floor + max(float(weights @ masses), 0.0) * np.diff(cumulative)
