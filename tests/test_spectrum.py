"""Eigenproblem, the ε rule (eq. 3), sign convention and PSD checks."""

from __future__ import annotations

import numpy as np
import pytest

from kpcacli import FrameModel, KpcaError, ParameterError
from kpcacli.numerics.centring import centre_gram, centre_kernel_vectors
from kpcacli.numerics.components import choose_k
from kpcacli.numerics.signs import fix_signs
from kpcacli.numerics.spectrum import check_psd


@pytest.mark.parametrize(
    ("eps", "expected"),
    [(0.5, 1), (0.4, 2), (0.3, 2), (0.2, 3), (0.1, 4), (0.01, 5)],
)
def test_eps_rule_picks_smallest_k_meeting_eq3(eps, expected):
    # cumulative shares: 0.5, 0.75, 0.875, 0.95, 1.0
    eigenvalues = np.array([8.0, 4.0, 2.0, 1.2, 0.8, 0.0])
    assert choose_k(eigenvalues, eps=eps) == expected


def test_eps_rule_boundary_is_inclusive():
    eigenvalues = np.array([3.0, 1.0, 0.0])
    assert choose_k(eigenvalues, eps=0.25) == 1  # 3/4 ≥ 1 − 0.25 exactly


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_eps_out_of_range_is_refused(bad):
    with pytest.raises(ParameterError, match="eps"):
        choose_k(np.array([2.0, 1.0, 0.5]), eps=bad)


@pytest.mark.parametrize("bad", [0, -1, 3, 10])
def test_k_out_of_range_is_refused(bad):
    with pytest.raises(ParameterError, match="n_components must be (an int in the range|smaller than)"):
        choose_k(np.array([2.0, 1.0, 0.5]), n_components=bad)


def test_linear_kernel_reproduces_pca_scores():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(40, 6)) @ rng.normal(size=(6, 6)) + 3.0
    model = FrameModel(kernel="linear", n_components=3, center=True).fit(data)
    centred = data - data.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    scores = centred @ vt[:3].T  # PCA scores
    # The paper's codes are Z* = V*ᵀ Ḡ = Λ V*ᵀ: PCA scores scaled by the singular values.
    ours = model.state_.codes / singular[:3]
    for j in range(3):
        assert np.allclose(ours[:, j], scores[:, j], atol=1e-8) or np.allclose(ours[:, j], -scores[:, j], atol=1e-8)
    np.testing.assert_allclose(model.state_.eigenvalues[:6], singular**2, rtol=1e-9)


def test_sign_convention_makes_largest_entry_positive():
    vectors = np.array([[0.1, -0.9], [-0.8, 0.3], [0.2, 0.1]])
    fixed = fix_signs(vectors)
    assert fixed[1, 0] == 0.8 and fixed[0, 1] == 0.9
    assert np.array_equal(fix_signs(-vectors), fixed)


def test_tiny_negative_eigenvalues_are_clipped_and_large_ones_refused():
    assert np.array_equal(check_psd(np.array([5.0, 1.0, -1e-12])), [5.0, 1.0, 0.0])
    with pytest.raises(KpcaError, match="negative eigenvalues"):
        check_psd(np.array([5.0, 1.0, -0.5]))


def test_centring_matches_feature_space_definition():
    """With an explicit feature map (the linear kernel) eq. 24 equals centring the features."""
    rng = np.random.default_rng(1)
    features = rng.normal(size=(7, 4))
    centred, row_means, grand_mean = centre_gram(features @ features.T)
    mean_free = features - features.mean(axis=0)
    np.testing.assert_allclose(centred, mean_free @ mean_free.T, atol=1e-12)
    new = rng.normal(size=(2, 4))
    vectors = centre_kernel_vectors(new @ features.T, row_means, grand_mean)  # eq. 25
    np.testing.assert_allclose(vectors, (new - features.mean(axis=0)) @ mean_free.T, atol=1e-12)


def test_k_beyond_the_rank_of_the_kernel_matrix_is_refused():
    frames = np.outer(np.arange(1.0, 6.0), np.ones(4))  # five multiples of one vector: rank 1
    with pytest.raises(ParameterError, match="exceeds the rank"):
        FrameModel(kernel="linear", n_components=2).fit(frames)


@pytest.fixture
def lanczos_from_100(monkeypatch):
    """Large-n behaviour on small data: the leading eigenpairs only beyond 100 samples."""
    import kpcacli.numerics.linearaxes
    import kpcacli.numerics.spectrum

    monkeypatch.setattr(kpcacli.numerics.spectrum, "FULL_EIGENDECOMPOSITION_MAX", 100)
    monkeypatch.setattr(kpcacli.numerics.linearaxes, "FULL_EIGENDECOMPOSITION_MAX", 100)


def swiss_points(n: int = 600) -> np.ndarray:
    rng = np.random.default_rng(3)
    t = rng.uniform(1.5 * np.pi, 4.5 * np.pi, n)
    return np.column_stack([t * np.cos(t), rng.uniform(0, 10, n), t * np.sin(t)]) + rng.normal(scale=0.2, size=(n, 3))


@pytest.mark.parametrize(
    ("kernel", "center", "asked"),
    [("rbf", False, {"n_components": 5}), ("rbf", True, {"eps": 0.2}), ("poly", False, {"eps": 0.05})],
)
@pytest.mark.slow
def test_leading_eigenpairs_beyond_the_full_limit_match_the_full_ones(lanczos_from_100, kernel, center, asked):
    """Past FULL_EIGENDECOMPOSITION_MAX samples only the leading eigenpairs are computed
    (Lanczos): the same k, eigenvalues, codes, explained variance and pre-images as every
    eigenpair gives, and the model file keeps the leading eigenvalues it has."""
    import kpcacli.numerics.spectrum

    points = swiss_points()
    partial = FrameModel(kernel=kernel, center=center, **asked).fit(points)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kpcacli.numerics.spectrum, "FULL_EIGENDECOMPOSITION_MAX", 10_000)
        full = FrameModel(kernel=kernel, center=center, **asked).fit(points)
    a, b = partial.state_, full.state_
    assert len(a.eigenvalues) < len(b.eigenvalues) == 600
    assert a.n_components == b.n_components
    k = a.n_components
    np.testing.assert_allclose(a.eigenvalues[:k], b.eigenvalues[:k], rtol=1e-9)
    np.testing.assert_allclose(a.codes, b.codes, atol=1e-8 * np.abs(b.codes).max())
    assert a.explained_variance_ratio == pytest.approx(b.explained_variance_ratio, rel=1e-9)
    if not center:
        solver = "distance" if kernel == "rbf" else "log"
        np.testing.assert_allclose(
            partial.decode(a.codes[:20], solver=solver), full.decode(b.codes[:20], solver=solver), atol=1e-6
        )


def test_a_model_of_leading_eigenvalues_saves_and_loads(lanczos_from_100, tmp_path):
    model = FrameModel(n_components=4).fit(swiss_points())
    model.save(tmp_path / "points.npz")
    loaded = FrameModel.load(tmp_path / "points.npz")
    assert np.array_equal(loaded.state_.eigenvalues, model.state_.eigenvalues)
    assert loaded.state_.explained_variance_ratio == pytest.approx(model.state_.explained_variance_ratio)


@pytest.mark.parametrize("asked", [{"n_components": 4}, {"eps": 0.1}])
@pytest.mark.slow
def test_eigen_solver_arpack_matches_dense_on_few_samples(asked):
    """eigen_solver="arpack" forces the Lanczos path below 3,000 samples: same k, leading
    eigenvalues and codes as every eigenpair gives."""
    points = swiss_points(300)
    dense = FrameModel(eigen_solver="dense", **asked).fit(points).state_
    arpack = FrameModel(eigen_solver="arpack", **asked).fit(points).state_
    assert len(arpack.eigenvalues) < len(dense.eigenvalues) == 300
    assert arpack.n_components == dense.n_components
    np.testing.assert_allclose(arpack.codes, dense.codes, atol=1e-8 * np.abs(dense.codes).max())
    with pytest.raises(ParameterError, match="eigen_solver"):
        FrameModel(eigen_solver="lobpcg", n_components=2).fit(points)
