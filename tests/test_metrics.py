"""PSNR and SSIM against their definitions computed the plain way, in float64."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from kpcacli.numerics.metrics import psnr, ssim, ssim_many


def reference_ssim(reference: np.ndarray, estimate: np.ndarray, peak: float) -> float:
    """Wang et al. (2004) with scikit-image's gaussian_weights=True conventions, in float64
    with scipy's filter: the definition kpcacli's strip-wise float32 computation must match."""
    x = np.atleast_2d(reference.astype(np.float64))
    y = np.atleast_2d(estimate.astype(np.float64))

    def blur(image):
        return gaussian_filter(image, sigma=1.5, truncate=3.5, mode="reflect")

    c = 121 / 120
    mx, my = blur(x), blur(y)
    vx, vy, cov = c * (blur(x * x) - mx * mx), c * (blur(y * y) - my * my), c * (blur(x * y) - mx * my)
    c1, c2 = (0.01 * peak) ** 2, (0.03 * peak) ** 2
    index = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
    if index.shape[0] > 10 and index.shape[1] > 10:
        index = index[5:-5, 5:-5]
    return float(index.mean())


@pytest.mark.parametrize("shape", [(300, 517), (180, 320), (140, 24), (12, 16), (11, 11), (8, 30), (3, 3), (50,)])
@pytest.mark.parametrize("kind", ["uint8", "float"])
def test_ssim_is_the_float64_definition(shape, kind):
    """Strips (300 rows: three, the last partial), borders kept or reflected, images and points."""
    rng = np.random.default_rng(sum(shape))
    smooth = gaussian_filter(rng.uniform(0, 1, shape), 2.0)
    truth = (smooth - smooth.min()) / (np.ptp(smooth) + 1e-12)
    noisy = np.clip(truth + rng.normal(0, 0.05, shape), 0, 1)
    if kind == "uint8":
        truth, noisy, peak = np.rint(255 * truth).astype(np.uint8), np.rint(255 * noisy).astype(np.uint8), 255.0
    else:
        peak = 1.0
    assert ssim(truth, noisy) == pytest.approx(reference_ssim(truth, noisy, peak), abs=1e-6)
    assert ssim(truth, truth) == pytest.approx(1.0, abs=1e-6)


def test_ssim_many_is_ssim_of_each_and_refuses_other_shapes(hand):
    truth, estimates = hand[0], [hand[1], hand[0], hand[40]]
    assert ssim_many(truth, estimates) == pytest.approx([ssim(truth, e) for e in estimates], abs=1e-12)
    with pytest.raises(ValueError, match="reference"):
        ssim_many(truth, [hand[1][:-1]])


def test_psnr_is_the_definition(hand):
    error = np.mean((hand[0].astype(np.float64) - hand[1]) ** 2)
    assert psnr(hand[0], hand[1]) == pytest.approx(10 * np.log10(255**2 / error), rel=1e-12)
    assert psnr(hand[0], hand[0]) == float("inf")


@pytest.mark.parametrize("colour", [False, True])
def test_ssim_is_scikit_images(hand, colour):
    """kpca's SSIM against scikit-image's structural_similarity with the paper's settings
    (gaussian_weights, σ = 1.5, sample covariances, the data range given), on the sample hand's
    frames and a noisy copy, grey and colour (channel by channel, averaged). scikit-image is a
    benchmark dependency: skipped where it is not installed. Within 1e-5 (1.5e-7 measured: kpca
    computes in float32)."""
    metrics = pytest.importorskip("skimage.metrics")
    rng = np.random.default_rng(7)
    reference = hand[10] if not colour else np.stack([hand[10], hand[20], hand[30]], axis=-1)
    noisy = np.clip(np.rint(reference + rng.normal(0, 12, reference.shape)), 0, 255).astype(np.uint8)
    expected = metrics.structural_similarity(
        reference,
        noisy,
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=True,
        data_range=255,
        channel_axis=-1 if colour else None,
    )
    assert ssim(reference, noisy) == pytest.approx(expected, abs=1e-5)
