"""The pre-image solvers: recovery of training frames, held-out quality, the fixed point's
centring correction, and the default solver against its baselines."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import RBF_FRAME_SOLVERS

from kpcacli import FrameModel, KpcaError
from kpcacli.numerics.metrics import psnr
from kpcacli.preimage import SOLVERS, applicable_solvers, get_solver
from kpcacli.preimage.expansion import expansion_coefficients
from kpcacli.preimage.gradient import feature_distance
from kpcacli.preimage.log import barycentric_weights
from kpcacli.preimage.synthesis import weighted_frame_sum
from kpcacli.workflows.evaluation import evaluate


@pytest.fixture(scope="module")
def small_hand(hand):
    """35 frames of the sample hand at half resolution (90 x 160): quick for pixel solvers."""
    return hand[::2, ::2, ::2]


# Exact by construction at k = 3: a training frame's own code makes the objective zero at
# w = e_j (log: its completed target is the frame's exact kernel column; discrepancy: eq. 33's
# residual vanishes; nearest: distance 0). Only rounding to 8 bits remains, hence 60 dB.
# distance: the completed kernel vector is the frame's exact column, so the distances are exact
# and both Kwok and Tsang's point and the linear-axes estimate are the frame itself.
EXACT_AT_K3 = ["distance", "log", "discrepancy", "nearest"]
# Mika's objective and ρ(z) are maximised at the training frame only when P Φ(x_j) = Φ(x_j),
# i.e. as k approaches n; at k = n − 1 the projection keeps all but the smallest direction, so
# the frame must come back to within a grey level or two (40 dB ≈ 2.6 levels RMS).
NEAR_EXACT_AT_FULL_K = ["fixed-point", "gradient"]


@pytest.mark.parametrize("solver", EXACT_AT_K3)
def test_solver_recovers_training_frames_exactly_at_k3(solver, small_hand):
    model = FrameModel(n_components=3).fit(small_hand)
    decoded = model.decode(model.state_.codes[::5], solver=solver)
    assert min(psnr(o, d) for o, d in zip(small_hand[::5], decoded)) >= 60.0


@pytest.mark.parametrize("solver", NEAR_EXACT_AT_FULL_K)
@pytest.mark.parametrize("center", [False, True])
def test_projection_solvers_recover_training_frames_at_full_k(solver, center, small_hand):
    frames = small_hand[::2]
    model = FrameModel(n_components=len(frames) - 2, center=center).fit(frames)
    decoded = model.decode(model.state_.codes[::6], solver=solver)
    assert min(psnr(o, d) for o, d in zip(frames[::6], decoded)) > 40.0


@pytest.mark.parametrize("center", [False, True])
def test_linear_solver_is_pca_reconstruction(center, small_hand):
    """The linear kernel's decode equals the explicit projection onto the k leading principal
    directions (computed here by SVD of the frames, independently of the library)."""
    frames = small_hand[::2].reshape(18, -1).astype(np.float64)
    k = 5
    model = FrameModel(kernel="linear", n_components=k, center=center).fit(frames)
    new = small_hand[1::2][:4].reshape(4, -1).astype(np.float64)
    origin = frames.mean(axis=0) if center else np.zeros(frames.shape[1])
    _, _, vt = np.linalg.svd(frames - origin, full_matrices=False)
    expected = origin + (new - origin) @ vt[:k].T @ vt[:k]
    solved = [p.vector(model.state_) for p in model.solve_preimages(model.encode(new), solver="linear")]
    np.testing.assert_allclose(np.stack(solved), expected, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("holdout", ["odd", "third"])
def test_eval_reference_rows_are_linear_pca_and_the_oracle_computed_from_pixels(small_hand, holdout):
    """eval forms its reference rows in weight space from products it already has; they must
    be linear PCA's decode (an SVD of the pixels) and the least-squares oracle over the true
    frame's pixels, to within a grey level where a sum falls on a rounding tie."""
    frames = small_hand.reshape(len(small_hand), -1)
    result = evaluate(small_hand, FrameModel(n_components=4), holdout=holdout, solvers=["nearest"])
    rows = {score.method: np.stack(score.frames).reshape(len(result.held_out), -1) for score in result.scores}
    train, held = frames[result.train].astype(np.float64), frames[result.held_out].astype(np.float64)
    mean = train.mean(axis=0)
    _, _, vt = np.linalg.svd(train - mean, full_matrices=False)
    linear = mean + (held - mean) @ vt[:4].T @ vt[:4]
    oracle = []
    for code, truth in zip(result.codes, held):
        chosen = result.state.neighbours.nearest(code, 10, distinct=False)
        weights = np.linalg.lstsq(train[chosen].T, truth, rcond=None)[0]
        oracle.append(train[chosen].T @ weights)
    for name, expected in (("linear PCA", linear), ("oracle", np.stack(oracle))):
        difference = rows[name].astype(np.int16) - np.clip(np.rint(expected), 0, 255)
        assert np.abs(difference).max() <= 1 and np.count_nonzero(difference) < 1e-3 * difference.size, name


@pytest.fixture(scope="module")
def held_out_scores(small_hand):
    """Every solver on the held-out (odd) frames of the half-size hand, k = 3. No time budget:
    the default set leaves out solvers projected to be slow, and under load (two test workers
    on two cores) the gradient solver's projection can cross it."""
    unlimited = float("inf")
    uncentred = evaluate(small_hand, FrameModel(n_components=3), solver_seconds=unlimited)
    centred = evaluate(small_hand, FrameModel(n_components=3, center=True), baselines=False, solver_seconds=unlimited)
    linear = evaluate(
        small_hand, FrameModel(n_components=3, kernel="linear", center=True), baselines=False, solver_seconds=unlimited
    )
    return uncentred, centred, linear


def mean_frame_psnr(evaluation) -> float:
    train = evaluation.state.frames.mean(axis=0).reshape(evaluation.originals.shape[1:])
    return float(np.mean([psnr(o, train) for o in evaluation.originals]))


@pytest.mark.parametrize("which", [0, 1, 2], ids=["uncentred-rbf", "centred-rbf", "linear"])
@pytest.mark.slow
def test_every_solver_beats_the_mean_training_frame_on_held_out_frames(held_out_scores, which):
    evaluation = held_out_scores[which]
    floor = mean_frame_psnr(evaluation)
    assert evaluation.scores  # every applicable solver was run
    for score in evaluation.scores:
        assert score.mean_psnr > floor + 3.0, (score.method, score.mean_psnr, floor)


@pytest.mark.slow
def test_all_solvers_apply_where_they_should(held_out_scores):
    uncentred, centred, linear = held_out_scores
    names = [[s.method for s in result.scores if s.method in SOLVERS] for result in held_out_scores]  # no baselines
    for each in names:  # the model's default (auto) first, then the others in order of name
        assert each[1:] == sorted(each[1:])
    assert sorted(names[0]) == RBF_FRAME_SOLVERS
    assert "log" not in names[1] and "distance" not in names[1] and "learned" in names[1]
    assert sorted(names[2]) == ["discrepancy", "gradient", "learned", "linear", "nearest", "transport"]
    assert sorted(SOLVERS) == sorted([*RBF_FRAME_SOLVERS, "linear"])


def test_learned_leave_one_out_error_is_the_refit_error(small_frames):
    """The closed-form leave-one-out error that chooses the learned solver's bandwidth and ridge
    (Bakır et al. 2004) equals refitting the ridge regression without each frame in turn and
    measuring its prediction of that frame's pixels."""
    from kpcacli.preimage.learned import RidgeMap

    state = FrameModel(n_components=4).fit(small_frames).state_
    dots = state.linear_gram.dots_among(np.arange(state.n_samples))
    chosen = RidgeMap.fit(state.codes, dots)
    assert chosen.bandwidth > 0 and chosen.ridge > 0
    pixels = small_frames.reshape(len(small_frames), -1).astype(np.float64)
    errors = []
    for i in range(len(pixels)):
        rest = np.delete(np.arange(len(pixels)), i)
        codes = state.codes[rest]
        gram = np.exp(-np.sum((codes[:, None] - codes[None]) ** 2, axis=2) / chosen.bandwidth)
        vector = np.exp(-np.sum((codes - state.codes[i]) ** 2, axis=1) / chosen.bandwidth)
        weights = np.linalg.solve(gram + chosen.ridge * np.eye(len(rest)), vector)
        errors.append(np.sum((pixels[i] - weights @ pixels[rest]) ** 2))
    assert chosen.loo_error == pytest.approx(np.mean(errors), rel=1e-6)


def test_log_beats_nearest_and_linear_pca_on_the_sample_hand(hand):
    """The quality bar on the sample hand at k = 3 (even frames train, odd held out):
    log ≥ linear PCA + 3 dB and ≥ nearest training frame + 1 dB (measured: +12.3 and +6.3)."""
    result = evaluate(hand, FrameModel(n_components=3), solvers=["log", "nearest"])
    scores = {s.method: s.mean_psnr for s in result.scores}
    assert scores["log"] >= scores["linear PCA"] + 3.0
    assert scores["log"] >= scores["nearest"] + 1.0
    assert scores["log"] <= scores["oracle"] + 0.5  # sanity: the oracle bounds weighted sums


def test_log_places_the_preimage_between_its_neighbours(small_hand):
    """Held-out frames a third of the way between training frames get unequal weights, heavier
    on the nearer frame: the solver reads the position from the code, not a fixed 50/50 blend."""
    train = small_hand[::3]
    model = FrameModel(n_components=3).fit(train)
    heavier_on_nearer = 0
    for index in range(1, len(small_hand) - 3, 3):
        code = model.encode(small_hand[index])[0]
        (preimage,) = model.solve_preimages(code[None])
        nearer = index // 3  # training frame at 3 * (index // 3), one step away
        weights = dict(zip(preimage.indices.tolist(), preimage.weights))
        heavier_on_nearer += weights.get(nearer, 0.0) > 0.5
    assert heavier_on_nearer >= 8  # of 11


def test_fixed_point_centring_correction_hand_computed():
    """Two points ±a on a line, Gaussian kernel, centred, k = 1.

    By hand: Ḡ = (1 − G12)/2 [[1, −1], [−1, 1]], so v = (1, −1)/√2 and λ = 1 − G12. The code
    of x1 is z = vᵀ ḡ(x1) = λ/√2, hence γ = v z / λ = (1/2, −1/2), Σγ = 0, and the corrected
    γ̃ = γ + (1 − Σγ)/n = (1, 0): the projection plus the mean is exactly Φ(x1), so the fixed
    point z = Σ γ̃_i κ_i x_i / Σ γ̃_i κ_i is x1 itself. Without the correction, z = x1 would
    give (x1 − G12 x2) / (1 − G12) ≠ x1. The mean code (z = 0) gives γ̃ = (1/2, 1/2) and, by
    symmetry, the midpoint (to within the solver's convergence test: a step below 1e-6 of the
    kernel's length scale, here 1/√β = 1).
    """
    a, beta = 0.5, 1.0
    points = np.array([[-a, 0.0], [a, 0.0]])
    model = FrameModel(n_components=1, beta=beta, center=True).fit(points)
    g12 = np.exp(-beta * (2 * a) ** 2)
    code = model.state_.codes[0]
    assert abs(code[0]) == pytest.approx((1 - g12) / np.sqrt(2), rel=1e-12)
    np.testing.assert_allclose(expansion_coefficients(model.state_, code), [1.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(model.decode(code[None], solver="fixed-point")[0], points[0], atol=1e-12)
    np.testing.assert_allclose(expansion_coefficients(model.state_, np.zeros(1)), [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(model.decode(np.zeros((1, 1)), solver="fixed-point")[0], [0.0, 0.0], atol=1e-5)
    uncorrected = (points[0] - g12 * points[1]) / (1 - g12)
    assert np.linalg.norm(uncorrected - points[0]) > 0.5


def test_fixed_point_step_refuses_a_vanishing_denominator():
    """Σ γ̃_i κ_i that cancels exactly, or to within 1e-12 of its terms, is no step."""
    from kpcacli.preimage.fixed_point import FixedPointSolver

    assert FixedPointSolver._step(np.array([1.0, -1.0]), np.array([0.5, 0.5])) is None
    assert FixedPointSolver._step(np.array([1.0, -1.0 + 1e-14]), np.array([0.5, 0.5])) is None
    weights = FixedPointSolver._step(np.array([1.0, -0.5]), np.array([0.5, 0.5]))
    np.testing.assert_allclose(weights, [2.0, -1.0])


def test_fixed_point_restarts_deterministically_when_the_denominator_vanishes(monkeypatch):
    """When the denominator vanishes from the first start the solver restarts from the next
    neighbour and returns the same answer every time. The vanishing is forced (a cancellation
    that lands on zero depends on the BLAS and the library versions' rounding)."""
    from kpcacli.preimage.fixed_point import FixedPointSolver

    points = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, -1.0], [0.5, 0.5]])
    model = FrameModel(n_components=2, beta=1.0).fit(points)
    code = model.state_.codes[1]
    attempts = []  # (start, whether it failed) of every start, in order
    iterate, step = FixedPointSolver._input_space, FixedPointSolver._step

    def recorded(self, state, gamma, begin):
        attempts.append((begin, None))
        outcome = iterate(self, state, gamma, begin)
        attempts[-1] = (begin, outcome[0] is None)
        return outcome

    def vanishing_from_the_first_start(gamma, kernel_values):
        return None if len(attempts) == 1 else step(gamma, kernel_values)

    monkeypatch.setattr(FixedPointSolver, "_input_space", recorded)
    monkeypatch.setattr(FixedPointSolver, "_step", staticmethod(vanishing_from_the_first_start))
    results = []
    for _ in range(2):
        attempts.clear()
        results.append(model.solve_preimages(code[None], solver="fixed-point")[0])
        assert len(attempts) == 2 and attempts[0][1] and not attempts[1][1], attempts
        assert attempts[1][0] != attempts[0][0]  # restarted from another neighbour
    np.testing.assert_array_equal(results[0].pixels, results[1].pixels)
    assert np.all(np.isfinite(results[0].pixels)) and results[0].converged
    # The restart found what an unforced solve from that neighbour finds.
    monkeypatch.setattr(FixedPointSolver, "_step", staticmethod(step))
    direct = FixedPointSolver().solve(model.state_, code, np.array([attempts[1][0]]))
    np.testing.assert_allclose(results[0].pixels, direct.pixels, atol=1e-9)


def test_gradient_solver_improves_on_its_start(small_hand):
    """The pixel-space descent lowers ρ below its start, the best combination of the
    neighbours (kept in the result's indices and weights), and ends where it says it does."""
    model = FrameModel(n_components=3).fit(small_hand[::2])
    state = model.state_
    code = model.encode(small_hand[1])[0]
    result = get_solver("gradient").solve(state, code, state.neighbours.nearest(code, 10))
    assert result.iterations >= 1 and result.pixels is not None and result.pixels.shape == (90 * 160,)
    gamma = expansion_coefficients(state, code)
    start = np.clip(weighted_frame_sum(state.frames, result.weights, result.indices), 0, 255)
    rho_start, _ = feature_distance(state, gamma, start)
    rho_end, _ = feature_distance(state, gamma, result.pixels)
    assert rho_end == pytest.approx(result.objective, rel=1e-9)
    assert rho_end < rho_start - 1e-6 * abs(rho_start), (rho_start, rho_end)


def test_solvers_refuse_models_they_do_not_apply_to(small_frames):
    rbf_centred = FrameModel(n_components=2, center=True).fit(small_frames)
    poly = FrameModel(kernel="poly", n_components=2).fit(small_frames)
    with pytest.raises(KpcaError, match="uncentred"):
        rbf_centred.decode(rbf_centred.state_.codes[:1], solver="log")
    with pytest.raises(KpcaError, match="uncentred"):
        rbf_centred.decode(rbf_centred.state_.codes[:1], solver="distance")
    with pytest.raises(KpcaError, match="Gaussian"):
        poly.decode(poly.state_.codes[:1], solver="distance")
    with pytest.raises(KpcaError, match="Gaussian"):
        poly.decode(poly.state_.codes[:1], solver="fixed-point")
    with pytest.raises(KpcaError, match="linear kernel"):
        poly.decode(poly.state_.codes[:1], solver="linear")
    assert "fixed-point" not in applicable_solvers(poly.state_, "log")[0]


def test_barycentric_weights_find_the_nearest_point_of_the_hull():
    codes = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(barycentric_weights(codes, np.array([0.25, 0.25])), [0.5, 0.25, 0.25], atol=1e-6)
    np.testing.assert_allclose(barycentric_weights(codes, np.array([2.0, 0.0])), [0.0, 1.0, 0.0], atol=1e-6)


def test_distinct_neighbours_skip_duplicate_views(small_hand):
    frames = np.concatenate([small_hand[:10], small_hand[:10]])  # every view twice
    model = FrameModel(n_components=3).fit(frames)
    chosen = model.state_.neighbours.nearest(model.state_.codes[3], 2)
    assert len(chosen) == 2 and chosen[0] in (3, 13) and chosen[1] not in (3, 13)
    plain = model.state_.neighbours.nearest(model.state_.codes[3], 2, distinct=False)
    assert sorted(plain.tolist()) == [3, 13]


def test_gradient_is_left_out_of_the_default_set_for_large_frames(monkeypatch, small_frames):
    from kpcacli.preimage.gradient import GradientSolver

    state = FrameModel(n_components=2).fit(small_frames).state_
    assert applicable_solvers(state, "log") == (
        ["log", "discrepancy", "distance", "fixed-point", "gradient", "learned", "nearest", "transport"],
        [],
    )
    monkeypatch.setattr(GradientSolver, "default_max_pixels", 100)  # the frames have 192 pixels
    names, left_out = applicable_solvers(state, "log")
    assert "gradient" not in names and "log" in names and left_out == ["gradient"]
    assert "gradient" in applicable_solvers(state, "log", all_sizes=True)[0]


def test_a_states_solvers_are_kept_with_it_and_go_with_it(small_frames):
    """prepared_solver gives the same solver (and what it prepared) for the same state, and
    holds no state alive: the distance solver's calibration refers to its state weakly."""
    import gc
    import weakref

    from kpcacli.preimage.base import _SOLVERS, prepared_solver

    model = FrameModel(n_components=2).fit(small_frames)
    first, _ = prepared_solver(model.state_, "distance", None)
    model.decode(model.state_.codes[:2], solver="distance")
    again, _ = prepared_solver(model.state_, "distance", None)
    assert again is first and first.prepared is not None
    alive = weakref.ref(model.state_)
    del model, first, again
    gc.collect()
    assert alive() is None and all(state is not None for state in _SOLVERS.keys())


@pytest.mark.parametrize("name", ["fixed-point", "learned", "linear", "nearest"])
def test_neighbours_given_to_a_solver_that_takes_none_are_refused_or_warned_of(name, small_frames, tmp_path):
    """fixed-point, learned, linear and nearest build their pre-images without M nearest
    frames (2, 3, 10 and 60 neighbours gave the same bytes): named with --neighbours they
    are refused in one line; reached as the model's choice, --neighbours is warned of as
    unused."""
    from helpers import one_line_error, run

    from kpcacli.preimage import prepared_solver
    from kpcacli.utils.errors import ParameterError, ParameterWarning

    kernel = "linear" if name == "linear" else "rbf"
    model = FrameModel(n_components=3, kernel=kernel).fit(small_frames)
    codes = model.encode(small_frames[:2])
    assert not SOLVERS[name].takes_neighbours
    with pytest.raises(ParameterError, match=f"neighbours does not apply to the {name} solver"):
        model.decode(codes, solver=name, neighbours=4)
    with pytest.warns(ParameterWarning, match=f"neighbours 4 is not used by the {name} solver"):
        prepared, count = prepared_solver(model.state_, name, 4)
    assert count == SOLVERS[name].default_neighbours
    model.save(tmp_path / "m.npz")
    np.save(tmp_path / "c.npy", codes)
    result = run(["decode", tmp_path / "c.npy", "-m", tmp_path / "m.npz", "--solver", name, "--neighbours", "4"])
    one_line_error(result, 2, f"--neighbours does not apply to the {name} solver")


def test_the_neighbours_help_gives_each_solvers_own_default():
    """The help said "others: 10" where the transport solver's default is 2."""
    from helpers import ok, run

    text = " ".join(ok(run(["decode", "--help"])).stdout.split())
    defaults = ", ".join(
        f"{name}: {solver.default_neighbours}" for name, solver in sorted(SOLVERS.items()) if solver.takes_neighbours
    )
    assert f"Default: the solver's own ({defaults}; fixed-point, learned, linear and nearest take none)" in text
    assert "transport: 2" in defaults and "others" not in text
