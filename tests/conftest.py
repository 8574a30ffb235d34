"""Shared fixtures: the sample hand sequence, small random frame sets, fitted models."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from kpcacli import KernelPCA
from kpcacli.sources import iter_frames

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "sample_data" / "hand"

# CI runs a fixed set of examples so a failure is reproducible; local runs explore.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def hand() -> np.ndarray:
    """The 70 sample hand frames, (70, 180, 320) uint8."""
    return np.stack([frame.pixels for frame in iter_frames([str(HAND)])])


@pytest.fixture(scope="session")
def hand_split(hand):
    """The seed's numerical test: the middle frame held out, the other 69 for training."""
    return np.delete(hand, 35, axis=0), hand[35]


@pytest.fixture(scope="session")
def hand_model(hand_split) -> KernelPCA:
    """Gaussian kernel, uncentred, k = 3, fitted on the 69 training frames."""
    return KernelPCA(n_components=3).fit(hand_split[0])


@pytest.fixture
def small_frames() -> np.ndarray:
    """Twelve smooth 12 x 16 uint8 frames of a moving blob (a 1-D manifold), deterministic."""
    ys, xs = np.mgrid[0:12, 0:16]
    frames = []
    for t in np.linspace(0.0, 1.0, 12):
        cx, cy = 3 + 10 * t, 4 + 4 * np.sin(np.pi * t)
        frames.append(40 + 180 * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / 8.0))
    return np.rint(np.stack(frames)).astype(np.uint8)
