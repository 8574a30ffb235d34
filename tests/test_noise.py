"""New noisy frames are denoised from the kernel values of the clean ones: what white noise adds
to every squared distance is estimated from the frame's pixels and taken out
(kpcacli/model/noise.py)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import noisy_copy

from kpcacli import FrameModel
from kpcacli.model.noise import noise_free_arguments, pixel_noise, row_noise, training_copies
from kpcacli.numerics.metrics import mean_psnr, psnr


def with_noise(frames: np.ndarray, sigma: float) -> np.ndarray:
    return noisy_copy(frames, sigma, seed=2)


@pytest.fixture(scope="module")
def clean_model(hand):
    """The hand's even frames fitted clean; its odd frames are new."""
    return FrameModel(n_components=8).fit(hand[::2])


def test_noise_adds_sigma_squared_d_to_every_squared_distance(hand):
    """What the correction removes, white noise of standard deviation σ adds σ² d to each
    squared distance to a training frame, in expectation: within 5% here (3.6% at most over the
    hand's frames at σ = 10, d = 57,600; the cross term 2 n·(x − x_i) grows with the distance,
    and the seeded noise is the same on every machine)."""
    frames = hand.reshape(len(hand), -1).astype(np.float64)
    noisy = frames[0] + np.random.default_rng(3).normal(0, 10.0, frames.shape[1])
    added = np.sum((noisy - frames[1:]) ** 2, axis=1) - np.sum((frames[0] - frames[1:]) ** 2, axis=1)
    np.testing.assert_allclose(added, 100.0 * frames.shape[1], rtol=0.05)


def test_the_codes_of_noisy_frames_come_back_near_the_clean_ones(hand, clean_model):
    """Noise of 10 grey levels moves the hand's odd frames' codes by 2.3 to 2.9 times the
    spacing of the training codes (the kernel values shrink); with it taken out of their kernel
    arguments, each code's error is at most a fifth of that and under half the spacing (measured:
    0.11 of it at most, 0.27 of the spacing)."""
    state = clean_model.state_
    clean = hand[1::2].reshape(35, -1)
    noisy = with_noise(hand[1::2], 10.0).reshape(35, -1)
    raw = state.kernel_arguments(noisy)
    freed = noise_free_arguments(state, raw, row_noise(state, noisy), pixel_noise(state, np.arange(state.n_samples)))
    truth = state.codes_of_arguments(state.kernel_arguments(clean))
    moved = np.linalg.norm(state.codes_of_arguments(raw) - truth, axis=1)
    left = np.linalg.norm(state.codes_of_arguments(freed) - truth, axis=1)
    spacing = state.neighbours.code_spacing
    assert np.min(moved) > 2.0 * spacing
    assert np.all(left < 0.2 * moved) and np.all(left < 0.5 * spacing)


def test_frames_without_noise_and_kernels_of_dot_products_are_left_as_they_are(hand, clean_model):
    """A clean new frame's estimated noise is the training frames' (the hand's are synthetic:
    none), so nothing is taken out; dot products gain nothing from noise in expectation."""
    state = clean_model.state_
    clean = hand[1::2].reshape(35, -1)
    raw = state.kernel_arguments(clean)
    np.testing.assert_allclose(noise_free_arguments(state, raw, row_noise(state, clean), 0.0), raw, rtol=1e-6)
    poly = FrameModel(kernel="poly", n_components=4).fit(hand[::2]).state_
    noisy = with_noise(hand[1::2], 10.0).reshape(35, -1)
    assert row_noise(poly, noisy) is None
    dots = poly.kernel_arguments(noisy)
    assert noise_free_arguments(poly, dots, None, 0.0) is dots


def test_a_training_frame_given_again_is_told_from_a_new_noisy_one(hand, clean_model):
    """Fitted on noisy frames, each given again is a copy (at zero from itself), whatever its
    own noise estimate; a new frame, noisy or clean, is not: it lies at least its noise, or the
    training frames', from its nearest training frame."""
    noisy = with_noise(hand, 10.0)
    state = FrameModel(n_components=8).fit(noisy).state_
    rows = noisy.reshape(len(noisy), -1)
    own = pixel_noise(state, np.arange(state.n_samples))
    assert training_copies(state, state.kernel_arguments(rows), row_noise(state, rows), own).all()
    state = clean_model.state_
    for frames in (hand[1::2], with_noise(hand[1::2], 5.0)):
        rows = frames.reshape(len(frames), -1)
        arguments = state.kernel_arguments(rows)
        assert not training_copies(state, arguments, row_noise(state, rows), 0.0).any()


@pytest.mark.parametrize("solver", [None, "transport", "distance"])
def test_new_noisy_frames_denoise_as_well_as_clean_ones(hand, clean_model, solver):
    """Denoising the hand's odd frames with noise of 10 and 20 grey levels gives within 1.5 dB of
    denoising them clean (measured, the default: 50.7 and 50.6 dB against 50.2 clean; 42.8 and
    32.6 with the noise left in the kernel values)."""
    clean = hand[1::2]

    def denoised(frames):
        return mean_psnr(psnr(a, b) for a, b in zip(clean, clean_model.denoise(frames, solver=solver)[0]))

    reference = denoised(clean)
    for sigma in (10.0, 20.0):
        assert denoised(with_noise(clean, sigma)) > reference - 1.5, sigma
