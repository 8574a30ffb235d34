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
