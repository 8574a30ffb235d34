"""Property-based tests over small random frame sets, kernels and k."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kpcacli import FrameModel
from kpcacli.io.codes import read_codes_file, write_matrix

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def frame_sets(draw):
    n = draw(st.integers(4, 9))
    shape = (n, draw(st.integers(2, 5)), draw(st.integers(2, 5)))
    frames = draw(arrays(np.uint8, shape, elements=st.integers(0, 255)))
    # Frames spanning at least two directions even after centring (i and i² are not affinely
    # related), so k ≤ 2 never exceeds the rank of a linear Gram; rank-deficient input is
    # refused by design (tested in test_spectrum.py).
    index = np.arange(n)
    frames[:, 0, 0] = index * (255 // n)
    frames[:, 0, 1] = 3 * index**2
    return frames


@SETTINGS
@given(frame_sets(), st.sampled_from(["rbf", "poly", "linear"]), st.booleans(), st.integers(1, 2))
def test_encoding_training_frames_gives_stored_codes(frames, kernel, center, k):
    model = FrameModel(kernel=kernel, n_components=k, center=center).fit(frames)
    np.testing.assert_allclose(
        model.encode(frames), model.state_.codes, atol=1e-9 * max(1.0, np.abs(model.state_.codes).max())
    )


@pytest.mark.slow  # many fits; tests/test_model.py's determinism test runs quick
@SETTINGS
@given(frame_sets(), st.sampled_from(["rbf", "poly", "linear"]))
def test_repeat_fits_are_identical(frames, kernel):
    first = FrameModel(kernel=kernel, n_components=1).fit(frames)
    second = FrameModel(kernel=kernel, n_components=1).fit(frames.copy())
    np.testing.assert_array_equal(first.state_.codes, second.state_.codes)
    np.testing.assert_array_equal(first.state_.eigenvalues, second.state_.eigenvalues)


@SETTINGS
@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 5), st.integers(1, 4)), elements=st.floats(-1e300, 1e300, allow_nan=False)
    ),
    st.sampled_from([".npy", ".txt", ".csv", "-"]),
)
def test_codes_survive_npy_and_text_round_trips_exactly(tmp_path_factory, codes, suffix):
    if suffix == "-":
        buffer = io.BytesIO()
        write_matrix(codes, "-", stdout=buffer)
        back = read_codes_file("-", stdin=io.BytesIO(buffer.getvalue()))[0]
    else:
        path = tmp_path_factory.mktemp("codes") / f"codes{suffix}"
        write_matrix(codes, str(path))
        back = read_codes_file(str(path))[0]
    np.testing.assert_array_equal(back, codes)


@SETTINGS
@given(st.integers(3, 7).flatmap(lambda n: arrays(np.uint8, (n, 3, 4), elements=st.integers(0, 255))))
def test_linear_kernel_decodes_training_codes_to_the_frames(frames):
    """With the linear kernel, centred, and k = n − 1, the codes keep every direction of the
    frames, so the exact inverse returns each training frame (after rounding to 8 bits)."""
    from hypothesis import assume

    centred = frames.reshape(len(frames), -1).astype(float)
    centred -= centred.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)[: len(frames) - 1]
    # Affinely independent frames, by a margin: the smallest of the n − 1 singular values above
    # 1e-4 of the largest, where kpca's rank counts eigenvalues of the Gram above 1e-12 of the
    # largest (singular values above 1e-6). numpy's matrix_rank (1e-15) took frames whose
    # centring's rounding alone made them full rank, and kpca rightly refused k = n − 1.
    assume(singular[-1] > 1e-4 * singular[0])
    model = FrameModel(kernel="linear", n_components=len(frames) - 1, center=True).fit(frames)
    np.testing.assert_array_equal(model.decode(model.state_.codes, solver="linear"), frames)
