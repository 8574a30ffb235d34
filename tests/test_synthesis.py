"""Pre-images formed in one pass over the training frames equal the frame-by-frame weighted sums."""

from __future__ import annotations

import numpy as np
import pytest

from kpcacli.estimators.estimator import FrameModel
from kpcacli.preimage import Preimage, synthesis
from kpcacli.utils.budgets import BUDGETS


def weights_of(kind: str, rng, m: int, n: int) -> np.ndarray:
    """Dense weights (every row used, as the distance solver's) or sparse ones (two rows a code,
    as the log solver's, some rows never used)."""
    if kind == "dense":
        weights = rng.normal(size=(m, n)) / n
        return weights - weights.mean(axis=1, keepdims=True) + 1.0 / n
    weights = np.zeros((m, n))
    for row in weights:
        first = rng.integers(0, n // 2)
        share = rng.uniform(0.1, 0.9)  # not a round share: no sum falls on a rounding tie
        row[[first, first + 1]] = (share, 1.0 - share)
    return weights


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("group_bytes", [BUDGETS.synthesis_group, 1])
def test_weighted_frame_sums_are_the_row_by_row_sums(hand, kind, group_bytes, monkeypatch):
    """Dense and sparse products, in one group or one row per group, on 8-bit frames."""
    monkeypatch.setattr(BUDGETS, "synthesis_group", group_bytes)
    rows = hand[:20].reshape(20, -1)
    weights = weights_of(kind, np.random.default_rng(1), 7, 20)
    expected = weights @ rows.astype(np.float64)
    np.testing.assert_allclose(synthesis.weighted_frame_sums(rows, weights), expected, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(synthesis.weighted_frame_sums(rows, weights, workers=1), expected, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("group_bytes", [BUDGETS.synthesis_group, 1])
def test_preimage_frames_match_each_preimage_vector(tmp_path, small_frames, kind, group_bytes, monkeypatch):
    """From a saved (compressed) model, in batches of three, the frames in one group or one row
    per group, with a pixel-space pre-image among weighted ones: each frame is the
    pre-image's own vector, rounded."""
    monkeypatch.setattr(BUDGETS, "synthesis_batch", 3 * 8 * small_frames[0].size)
    monkeypatch.setattr(BUDGETS, "synthesis_group", group_bytes)
    FrameModel(n_components=3).fit(small_frames).save(tmp_path / "model.kpca")
    state = FrameModel.load(tmp_path / "model.kpca").state_
    rng = np.random.default_rng(2)
    weights = weights_of(kind, rng, 8, len(small_frames))
    preimages = [
        Preimage(indices=np.flatnonzero(w), weights=w[w != 0], objective=0.0, converged=True, iterations=0)
        for w in weights
    ]
    preimages.insert(
        4,
        Preimage(
            indices=np.array([0]),
            weights=np.ones(1),
            objective=0.0,
            converged=True,
            iterations=0,
            pixels=rng.uniform(0, 255, small_frames[0].size),
        ),
    )
    frames = synthesis.preimage_frames(state, preimages)
    assert frames.shape == (9, *small_frames.shape[1:]) and frames.dtype == np.uint8
    for frame, preimage in zip(frames, preimages):
        np.testing.assert_array_equal(frame.ravel(), synthesis.to_frame_dtype(preimage.vector(state), frame.dtype))


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_a_frame_does_not_depend_on_its_batch_or_threads(hand, kind, monkeypatch):
    """The same weights give the same 8-bit frame bit for bit alone or beside others, on one
    thread or two, in one group of rows or several: a decode's bytes are a function of its
    codes and the model, wherever it runs (a cluster's batches are not the local ones)."""
    rows = hand.reshape(len(hand), -1)
    weights = weights_of(kind, np.random.default_rng(3), 24, len(hand))

    def rounded(sums):
        return synthesis.to_frame_dtype(sums, np.uint8)

    together = synthesis.weighted_frame_sums(rows, weights, convert=rounded)
    for index in range(len(weights)):
        alone = synthesis.weighted_frame_sums(rows, weights[index : index + 1], convert=rounded, workers=1)
        np.testing.assert_array_equal(alone[0], together[index])
    monkeypatch.setattr(BUDGETS, "synthesis_group", 3 * rows.shape[1])  # three rows a group
    np.testing.assert_array_equal(synthesis.weighted_frame_sums(rows, weights[::-1], convert=rounded)[::-1], together)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("group_bytes", [BUDGETS.synthesis_group, 1])
def test_float32_sums_are_the_float64_sums_rounded_and_do_not_depend_on_threads(hand, kind, group_bytes, monkeypatch):
    """The stored axes' precision: float32 sums within float32's rounding of the exact ones,
    the same bits on one thread as on several."""
    monkeypatch.setattr(BUDGETS, "synthesis_group", group_bytes)
    rows = hand[:20].reshape(20, -1)
    weights = weights_of(kind, np.random.default_rng(2), 6, 20)
    exact = weights @ rows.astype(np.float64)
    sums = synthesis.weighted_frame_sums(rows, weights, dtype=np.float32)
    assert sums.dtype == np.float32
    np.testing.assert_allclose(sums, exact, rtol=1e-5, atol=1e-3 * np.abs(exact).max())
    np.testing.assert_array_equal(synthesis.weighted_frame_sums(rows, weights, dtype=np.float32, workers=1), sums)
