"""Model invariants: encode/decode consistency, determinism, persistence, decode quality."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kpcacli import FrameModel, KpcaError, ParameterError
from kpcacli.modelfile.storedframes import VideoFrames
from kpcacli.numerics.metrics import psnr
from kpcacli.utils.budgets import BUDGETS
from kpcacli.utils.hyperparameters import KERNELS

KERNEL_CASES = [
    ("rbf", False),
    ("rbf", True),
    ("poly", False),
    ("poly", True),
    ("linear", False),
    ("linear", True),
    ("sigmoid", True),
]


@pytest.mark.parametrize(("kernel", "center"), KERNEL_CASES)
@pytest.mark.parametrize("kind", ["image", "points"])
def test_encoding_a_training_frame_gives_its_stored_code(kernel, center, kind, small_frames):
    frames = small_frames if kind == "image" else np.random.default_rng(0).normal(size=(30, 3))
    if kernel == "sigmoid" and kind == "points":
        # tanh of signed dot products is far from positive semi-definite: refused, not fitted.
        with pytest.raises(KpcaError, match="significant negative eigenvalues"):
            FrameModel(kernel=kernel, n_components=2, center=center).fit(frames)
        return
    model = FrameModel(kernel=kernel, n_components=2, center=center).fit(frames)
    codes = model.encode(frames)
    scale = np.abs(model.state_.codes).max()
    np.testing.assert_allclose(codes, model.state_.codes, atol=1e-9 * scale)


@pytest.mark.parametrize(("kernel", "center"), KERNEL_CASES)
def test_fit_is_deterministic_and_save_load_round_trips(kernel, center, small_frames, tmp_path):
    first = FrameModel(kernel=kernel, eps=0.2, center=center).fit(small_frames)
    second = FrameModel(kernel=kernel, eps=0.2, center=center).fit(small_frames)
    first.save(tmp_path / "a.npz")
    second.save(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    loaded = FrameModel.load(tmp_path / "a.npz")
    frames = loaded.state_.frames
    assert isinstance(frames, VideoFrames) and "matrix" not in vars(frames)  # not read at load
    for name in ("eigenvalues", "eigenvectors", "codes", "gram_row_means", "kernel_gram"):
        np.testing.assert_array_equal(getattr(loaded.state_, name), getattr(first.state_, name))
    assert loaded.state_.kernel == first.state_.kernel and loaded.state_.centred == center
    assert loaded.state_.frame_shape == (12, 16)
    np.testing.assert_array_equal(frames[5].reshape(12, 16), small_frames[5])  # one frame alone
    np.testing.assert_array_equal(np.asarray(frames).reshape(small_frames.shape), small_frames)
    np.testing.assert_array_equal(loaded.encode(small_frames[:3]), first.encode(small_frames[:3]))


def test_default_beta_is_inverse_median_squared_distance(small_frames):
    model = FrameModel(n_components=2).fit(small_frames)
    rows = small_frames.reshape(12, -1).astype(float)
    distances = [np.sum((a - b) ** 2) for i, a in enumerate(rows) for b in rows[i + 1 :]]
    assert model.state_.kernel.beta == pytest.approx(1.0 / np.median(distances), rel=1e-12)


def test_decoding_training_codes_returns_the_frames_when_k_is_full(hand_split):
    """With k = n − 1 the codes keep (almost) the whole kernel vector, so eq. 35's minimum is
    the training frame itself: decoding must give it back to within rounding."""
    train = hand_split[0][::3]  # 23 frames keep the test fast
    model = FrameModel(n_components=len(train) - 1).fit(train)
    decoded = model.decode(model.state_.codes[::4])
    for frame, original in zip(decoded, train[::4]):
        assert psnr(original, frame) > 50.0


def test_decoding_training_codes_at_k3_is_close(hand_model, hand_split):
    """At k = 3 the codes hold 71% of the variance: the decode of a training frame's code must
    be much closer to that frame than the mean frame is (40 dB ≈ 2.6 grey levels RMS; the mean
    frame scores ≈ 27 dB)."""
    train = hand_split[0]
    decoded = hand_model.decode(hand_model.state_.codes[::6])
    scores = [psnr(original, frame) for frame, original in zip(decoded, train[::6])]
    assert min(scores) > 33.0 and np.mean(scores) > 36.0


def test_held_out_frame_decodes_better_than_mean_frame(hand_model, hand_split):
    train, held_out = hand_split
    reconstruction = hand_model.decode(hand_model.encode(held_out))[0]
    assert reconstruction.dtype == np.uint8 and reconstruction.shape == held_out.shape
    assert psnr(held_out, reconstruction) > psnr(held_out, train.mean(axis=0)) + 8.0


def test_decode_solver_works_from_the_gram_only(hand_model):
    """The solver part reads no pixels: it runs with the frames replaced by a sentinel."""

    class NoPixels:
        shape = hand_model.state_.frames.shape
        dtype = hand_model.state_.frames.dtype

        def __getitem__(self, key):
            raise AssertionError("the solver read pixels")

    blind = FrameModel.from_state(dataclasses.replace(hand_model.state_, frames=NoPixels()))
    for solver in ("distance", "log"):
        preimages = blind.solve_preimages(hand_model.state_.codes[:2], solver=solver)
        assert all(p.pixels is None and np.isclose(p.weights.sum(), 1) for p in preimages)


def test_log_solver_refuses_centred_models(small_frames):
    model = FrameModel(n_components=2, center=True).fit(small_frames)
    with pytest.raises(KpcaError, match="uncentred"):
        model.decode(model.state_.codes[:1], solver="log")


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_decodes_uncentred_training_codes_to_their_frames(kernel, small_frames):
    """A training frame's code decodes to that frame, within one grey level, with the default
    solver of every kernel: fit, encode, decode returns what was fitted."""
    model = FrameModel(kernel=kernel, n_components=2).fit(small_frames)
    decoded = model.decode(model.state_.codes)
    assert decoded.shape == small_frames.shape and decoded.dtype == np.uint8
    assert np.abs(decoded.astype(int) - small_frames).max() <= 1


def test_point_data_round_trip_keeps_float_dtype():
    rng = np.random.default_rng(2)
    angle = rng.uniform(0, np.pi, 60)
    points = np.c_[np.cos(angle), np.sin(angle)] + rng.normal(scale=0.02, size=(60, 2))
    model = FrameModel(n_components=2, beta=2.0).fit(points)
    decoded = model.decode(model.encode(points[:5]))
    assert decoded.dtype == np.float64 and decoded.shape == (5, 2)
    assert np.mean(np.linalg.norm(decoded - points[:5], axis=1)) < 0.1


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_components": 0}, "n_components must be"),
        ({"n_components": 13}, "at most the number of frames"),
        ({"eps": 1.0}, "eps must be"),
        ({"eps": 0.2, "n_components": 2}, "not both"),
        ({"beta": -1.0, "n_components": 2}, "beta must be"),
        ({"beta": float("nan"), "n_components": 2}, "beta must be"),
        ({"kernel": "cubic", "n_components": 2}, "kernel must be"),
        ({"kernel": "poly", "degree": 0, "n_components": 2}, "degree must be"),
    ],
)
def test_bad_parameters_are_refused_with_the_parameter_named(params, message, small_frames):
    with pytest.raises(ParameterError, match=message):
        FrameModel(**params).fit(small_frames)


def test_codes_are_checked(hand_model):
    with pytest.raises(KpcaError, match="2 columns but the model has k = 3"):
        hand_model.decode(np.zeros((1, 2)))
    with pytest.raises(KpcaError, match="NaN or infinite value in row 1"):
        hand_model.decode(np.array([[0.0, 0, 0], [np.nan, 0, 0]]))


def test_a_single_frame_is_not_a_model(small_frames):
    with pytest.raises(KpcaError, match="at least two frames"):
        FrameModel(n_components=1).fit(small_frames[:1])


def test_decode_iter_solves_one_batch_at_a_time(hand_model, monkeypatch):
    """decode_iter is lazy: a long clip is decoded and written a batch at a time, the batch
    bounded by the bytes of its float64 sums, the first of one frame (the writer starts at
    once), then growing."""
    from kpcacli.preimage.distance import DistanceSolver

    pixels = int(np.prod(hand_model.state_.frame_shape))
    monkeypatch.setattr(BUDGETS, "synthesis_batch", 2 * 8 * pixels)  # two frames a batch
    calls = []
    original = DistanceSolver.solve
    monkeypatch.setattr(DistanceSolver, "solve", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    frames = hand_model.decode_iter(hand_model.state_.codes[:5], solver="distance")
    assert calls == []
    first = next(frames)
    assert len(calls) == 1 and first.shape == hand_model.state_.frame_shape and first.dtype == np.uint8
    second = next(frames)
    assert len(calls) == 3  # the next batch: two frames, the budget's
    np.testing.assert_array_equal(
        np.stack([first, second, *frames]), hand_model.decode(hand_model.state_.codes[:5], solver="distance")
    )
    assert len(calls) == 5 + 5  # the rest in a batch of two, and the whole decode
    with pytest.raises(KpcaError, match="columns"):
        hand_model.decode_iter(np.zeros((1, 2)))  # checked before the first frame


@pytest.mark.parametrize(("kernel", "center"), [("rbf", False), ("rbf", True), ("poly", False), ("linear", True)])
def test_a_frames_codes_do_not_depend_on_its_batch(kernel, center, hand):
    """Bit-identical codes for the same 8-bit frame alone, in a small batch (the row pass) and
    in a large one (the column-blocked pass), at any position; and a training frame encodes to
    exactly its stored code."""
    train, new = hand[::2][:20], hand[1::2][:12]
    model = FrameModel(kernel=kernel, n_components=4, center=center).fit(train)
    alone = np.concatenate([model.encode(frame) for frame in new])
    for batch in (new[:3], new[::-1], new, np.concatenate([new, train])):
        codes = model.encode(batch)
        for frame, code in zip(batch[: len(new)], codes):
            index = next(i for i, other in enumerate(new) if np.array_equal(other, frame))
            np.testing.assert_array_equal(code, alone[index])
    np.testing.assert_array_equal(model.encode(train), model.state_.codes)
    np.testing.assert_array_equal(model.encode(train[5]), model.state_.codes[5:6])
