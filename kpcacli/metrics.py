"""Image quality measures."""

from __future__ import annotations

import numpy as np


def data_range(dtype: np.dtype) -> float:
    """Peak value for PSNR: the dtype's maximum for integer frames, 1.0 for float frames."""
    dtype = np.dtype(dtype)
    return float(np.iinfo(dtype).max) if dtype.kind == "u" else 1.0


def psnr(reference: np.ndarray, estimate: np.ndarray, peak: float | None = None) -> float:
    """Peak signal-to-noise ratio in dB, ``10 log10(peak² / MSE)``; ``inf`` when identical.

    Parameters
    ----------
    reference, estimate : ndarray
        Same shape; any numeric dtype.
    peak : float, optional
        The data range; default from `reference`'s dtype (255 for uint8).
    """
    reference = np.asarray(reference)
    if peak is None:
        peak = data_range(reference.dtype)
    error = np.mean((reference.astype(np.float64) - np.asarray(estimate, dtype=np.float64)) ** 2)
    if error == 0:
        return float("inf")
    return float(10.0 * np.log10(peak**2 / error))


def ssim(reference: np.ndarray, estimate: np.ndarray, peak: float | None = None) -> float:
    """Mean structural similarity (Wang et al. 2004) with an 11-tap Gaussian window, σ = 1.5.

    The same constants as the paper and scikit-image's ``gaussian_weights=True`` mode:
    ``K1 = 0.01``, ``K2 = 0.03``, sample covariances. 1-D inputs (points) are compared as one row.
    """
    from scipy.ndimage import gaussian_filter

    reference = np.asarray(reference)
    if peak is None:
        peak = data_range(reference.dtype)
    x = np.atleast_2d(reference.astype(np.float64))
    y = np.atleast_2d(np.asarray(estimate, dtype=np.float64))

    def blur(image):
        return gaussian_filter(image, sigma=1.5, truncate=3.5, mode="reflect")

    count = 121  # window size, for the unbiased covariance as in scikit-image
    correction = count / (count - 1)
    mx, my = blur(x), blur(y)
    vx = correction * (blur(x * x) - mx * mx)
    vy = correction * (blur(y * y) - my * my)
    cov = correction * (blur(x * y) - mx * my)
    c1, c2 = (0.01 * peak) ** 2, (0.03 * peak) ** 2
    index = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
    pad = 5  # scikit-image crops the border where the window is incomplete
    if index.shape[0] > 2 * pad and index.shape[1] > 2 * pad:
        index = index[pad:-pad, pad:-pad]
    return float(index.mean())
