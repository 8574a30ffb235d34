"""Image quality measures."""

from __future__ import annotations

import threading

import numpy as np

# ITU-R BT.601 luma weights of R, G and B: a colour frame's grey, as Pillow's ``L`` without its rounding.
LUMA = np.array([0.299, 0.587, 0.114])


def wavelet_noise(frame: np.ndarray) -> float:
    """The standard deviation of white noise in a frame (or one-row signal), in its value
    units: the median absolute finest diagonal wavelet coefficient over 0.6745 (Donoho and
    Johnstone 1994), the Haar coefficient ``(a − b − c + d) / 2`` of each 2 x 2 block (a
    signal: ``(a − b) / √2`` of each pair); 0 for a frame too small to hold one."""
    frame = np.asarray(frame, dtype=np.float64)
    if frame.ndim == 1 or frame.shape[0] < 2:
        signal = frame.reshape(-1)[: frame.size // 2 * 2]
        coefficients = (signal[0::2] - signal[1::2]) / np.sqrt(2)
    else:
        frame = frame[: frame.shape[0] // 2 * 2, : frame.shape[1] // 2 * 2]
        coefficients = (frame[0::2, 0::2] - frame[0::2, 1::2] - frame[1::2, 0::2] + frame[1::2, 1::2]) / 2.0
    return float(np.median(np.abs(coefficients))) / 0.6745 if coefficients.size else 0.0


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
    return psnr_of_mse(mse(reference, estimate), peak)


def mse(reference: np.ndarray, estimate: np.ndarray) -> float:
    """Mean squared error per value, in float64."""
    difference = np.subtract(reference, estimate, dtype=np.float64).ravel()
    return float((difference @ difference) / max(difference.size, 1))


def psnr_of_mse(error: float, peak: float) -> float:
    """``10 log10(peak² / error)`` in dB; ``inf`` for no error."""
    return float("inf") if error == 0 else float(10.0 * np.log10(peak**2 / error))


def finite_or_none(value: float | None) -> float | None:
    """A figure as JSON holds it: None (null) for an infinite PSNR (identical frames), which
    strict JSON cannot write."""
    return None if value is None or not np.isfinite(value) else float(value)


def mean_psnr(values) -> float:
    """The mean of per-frame PSNRs over the frames that differ (finite PSNR): one identical
    frame would make the plain mean infinite while the others differ. ``inf`` only when every
    frame is identical; ``nan`` for no frames."""
    values = np.asarray(list(values), dtype=np.float64)
    finite = values[np.isfinite(values)]
    if finite.size:
        return float(finite.mean())
    return float("inf") if values.size else float("nan")


# SSIM's window (Wang et al. 2004): a Gaussian of σ = 1.5 cut at 3.5 σ, 11 taps either way.
SSIM_RADIUS = 5
SSIM_TAPS = np.exp(-0.5 * (np.arange(-SSIM_RADIUS, SSIM_RADIUS + 1) / 1.5) ** 2)
SSIM_TAPS /= SSIM_TAPS.sum()
TAPS32 = SSIM_TAPS.astype(np.float32)
CORRECTION = np.float32(121 / 120)  # sample covariances over the 121-pixel window

# SSIM is computed in strips of this many rows, with scratch arrays per thread, reused from
# strip to strip and image to image (a fresh megapixel array costs a page fault per page).
STRIP_ROWS = 128
_SCRATCH = threading.local()


def _scratch(width: int) -> dict[str, np.ndarray]:
    """This thread's scratch arrays for strips of images `width` pixels wide (zeros at first:
    the columns past the window's reach hold finite values, never read as results)."""
    pool = getattr(_SCRATCH, "pool", None)
    if pool is None or pool["width"] != width:
        tall, short = (STRIP_ROWS + 2 * SSIM_RADIUS, width), (STRIP_ROWS, width)
        pool = {
            "width": width,
            **{name: np.zeros(tall, np.float32) for name in ("x", "y", "product", "wide", "wide_pair")},
        }
        names = ("pair", "mx", "contrast", "twice_mean", "luminance", "my", "square", "cov", "work")
        pool.update((name, np.zeros(short, np.float32)) for name in names)
        _SCRATCH.pool = pool
    return pool


def _blur(image: np.ndarray, out: np.ndarray, scratch: dict[str, np.ndarray]) -> np.ndarray:
    """The separable Gaussian window: `image`, (h, w) float32 C-contiguous, into `out`,
    (h − 10, w), whose first w − 10 columns are the window over the pixels it fits in
    ("valid"); the last 10 columns are wrapped windows, to be left out.

    Both passes run on the flattened arrays, every operand contiguous: the horizontal pass
    shifts by one element per tap (windows running past a row's end land in the left-out
    columns), the vertical pass by one row. Symmetric taps are paired: six multiplies a pass.
    """
    r, (height, width) = SSIM_RADIUS, image.shape
    flat, size = image.reshape(-1), image.size - 2 * r
    wide, pair = scratch["wide"][:height].reshape(-1), scratch["wide_pair"][:height].reshape(-1)
    np.multiply(flat[r : r + size], TAPS32[r], out=wide[:size])
    for offset in range(r):
        np.add(flat[offset : offset + size], flat[2 * r - offset : 2 * r - offset + size], out=pair[:size])
        pair[:size] *= TAPS32[offset]
        wide[:size] += pair[:size]
    rows = (height - 2 * r) * width
    result, pair = out.reshape(-1), scratch["pair"][: height - 2 * r].reshape(-1)
    np.multiply(wide[r * width : r * width + rows], TAPS32[r], out=result)
    for offset in range(r):
        low, high = offset * width, (2 * r - offset) * width
        np.add(wide[low : low + rows], wide[high : high + rows], out=pair)
        pair *= TAPS32[offset]
        result += pair
    return out


def ssim_many(reference: np.ndarray, estimates, peak: float | None = None) -> list[float]:
    """Mean structural similarity (Wang et al. 2004) of each estimate against one reference.

    An 11-tap Gaussian window, σ = 1.5, as the paper and scikit-image's
    ``gaussian_weights=True`` mode: ``K1 = 0.01``, ``K2 = 0.03``, sample covariances, the
    border where the window is incomplete left out (images of more than 10 pixels each way;
    smaller ones are reflected at the border). 1-D inputs (points) are compared as one row;
    colour images, (h, w, 3), channel by channel, and the three means averaged.

    Computed strip by strip (``STRIP_ROWS`` rows), the reference's local statistics once per
    strip for every estimate, in float32 on values shifted by half the peak (variances are
    shift-invariant and the squares stay below (peak/2)²): the mean SSIM agrees with a
    float64 computation within 1e-6 (tests check it, and against scikit-image). Scratch arrays are
    per thread, so threads may score frames side by side.
    """
    reference = np.asarray(reference)
    peak = data_range(reference.dtype) if peak is None else float(peak)
    estimates = [np.asarray(estimate) for estimate in estimates]
    for estimate in estimates:
        if estimate.shape != reference.shape:
            raise ValueError(f"SSIM of a {estimate.shape} image against a {reference.shape} reference")
    if reference.ndim == 3:  # colour: the mean over the channels, as scikit-image's channel_axis
        channels = [
            ssim_many(reference[..., c], [estimate[..., c] for estimate in estimates], peak)
            for c in range(reference.shape[2])
        ]
        return [float(np.mean(values)) for values in zip(*channels)]
    shift = np.float32(peak / 2)
    c1, c2 = np.float32((0.01 * peak) ** 2), np.float32((0.03 * peak) ** 2)
    x_all = np.ascontiguousarray(_padded(reference))
    y_all = [np.ascontiguousarray(_padded(estimate)) for estimate in estimates]
    scratch = _scratch(x_all.shape[1])
    r = SSIM_RADIUS
    height = x_all.shape[0] - 2 * r
    totals = [0.0] * len(estimates)
    for top in range(0, height, STRIP_ROWS):
        count = min(STRIP_ROWS, height - top)
        rows = slice(top, top + count + 2 * r)
        x = np.subtract(x_all[rows], shift, out=scratch["x"][: count + 2 * r], dtype=np.float32)
        product = scratch["product"][: count + 2 * r]
        # The reference's terms: μx, 2 μx (unshifted), μx² + C1, (121/120) σx² + C2.
        mx = _blur(x, scratch["mx"][:count], scratch)
        contrast = _blur(np.multiply(x, x, out=product), scratch["contrast"][:count], scratch)
        contrast -= mx * mx
        contrast *= CORRECTION
        contrast += c2
        twice_mean = np.add(mx, shift, out=scratch["twice_mean"][:count])
        luminance = np.multiply(twice_mean, twice_mean, out=scratch["luminance"][:count])
        luminance += c1
        twice_mean *= 2
        for number, y_rows in enumerate(y_all):
            y = np.subtract(y_rows[rows], shift, out=scratch["y"][: count + 2 * r], dtype=np.float32)
            my = _blur(y, scratch["my"][:count], scratch)
            square = _blur(np.multiply(y, y, out=product), scratch["square"][:count], scratch)  # σy², then denominator
            cov = _blur(np.multiply(y, x, out=product), scratch["cov"][:count], scratch)  # σxy, then numerator
            work = scratch["work"][:count]
            square -= np.multiply(my, my, out=work)
            cov -= np.multiply(mx, my, out=work)
            cov *= 2 * CORRECTION
            cov += c2
            my += shift
            work = np.multiply(my, twice_mean, out=work)
            work += c1
            cov *= work  # (2 μx μy + C1)(2 σxy + C2)
            square *= CORRECTION
            square += contrast
            work = np.multiply(my, my, out=work)
            work += luminance
            square *= work  # (μx² + μy² + C1)(σx² + σy² + C2)
            cov /= square
            totals[number] += float(np.sum(cov[:, : x_all.shape[1] - 2 * r], dtype=np.float64))
    size = height * (x_all.shape[1] - 2 * r)
    return [total / size for total in totals]


def _padded(image: np.ndarray) -> np.ndarray:
    """The image as 2-D; too small to leave the border out, reflected at the border."""
    values = np.atleast_2d(image)
    if min(values.shape) <= 2 * SSIM_RADIUS:
        values = np.pad(values.astype(np.float64), SSIM_RADIUS, mode="symmetric")
    return values


def ssim(reference: np.ndarray, estimate: np.ndarray, peak: float | None = None) -> float:
    """Mean structural similarity (Wang et al. 2004) of `estimate` against `reference`: see
    :func:`ssim_many`."""
    return ssim_many(reference, [estimate], peak)[0]
