"""The default solver (``auto``): measured on training frames held back, recorded in the model,
printed by fit and info, and used by every decode that names none (kpcacli/preimage/measurement.py,
looked up by kpcacli/preimage/choice.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from helpers import noisy_copy, ok, one_line_error, run

from kpcacli import FrameModel
from kpcacli.preimage import DENOISING, OWN_FRAMES, SOLVERS, SolverChoice, rule_solver, solver_choice, solver_for
from kpcacli.preimage.base import prepared_solver
from kpcacli.preimage.distance import linear_axes
from kpcacli.preimage.heldout import fitted_without, held_back_codes, squared_error
from kpcacli.preimage.measurement import CANDIDATES, measure_solvers
from kpcacli.workflows.choicesummary import choice_summary

DATA = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize(("kernel", "center"), [("rbf", False), ("poly", False), ("rbf", True)])
def test_the_weight_space_error_is_the_error_in_pixels(hand, kernel, center):
    """Every candidate's squared error on a held-back frame, from the linear Gram alone, is
    |x* − x_h|² of the pre-image formed in pixels (to rounding)."""
    train = hand[::2][:24]
    state = FrameModel(kernel=kernel, n_components=4, center=center).fit(train).state_
    rows = np.arange(state.n_samples)
    kept, held = rows[rows % 4 != 1], rows[rows % 4 == 1][:3]
    model = fitted_without(state, kept)
    codes, _ = held_back_codes(state, model, kept, held)
    checked = 0
    for name in CANDIDATES:
        try:
            SOLVERS[name]().check(model)
        except Exception:
            continue
        method, count = prepared_solver(model, name, None)
        for code, frame in zip(codes, held):
            preimage = method.solve(model, code, model.neighbours.nearest(code, count))
            axis_weights = linear_axes(model).frame_weights() if preimage.move is not None else None
            weight_space = squared_error(state, kept, preimage, int(frame), axis_weights)
            pixels = preimage.vector(model) - train[frame].reshape(-1).astype(np.float64)
            assert weight_space == pytest.approx(float(pixels @ pixels), rel=1e-6, abs=1e-3), name
            checked += 1
    assert checked >= 3 * 3  # three frames, at least three solvers


def test_the_choice_is_the_best_score_unless_the_rule_is_within_the_margin(hand):
    """The hand at k = 3: every candidate scored; among the blends, the rule's solver kept
    unless another scored the margin above it; the transport solver, scored on 16 of the 35
    held-back frames, chosen if it scores at least that choice on those frames; the record
    round-trips."""
    state = FrameModel(n_components=3).fit(hand[::2]).state_
    choice = measure_solvers(state)
    assert choice.rule == rule_solver(state) == "distance"
    assert set(choice.scores) == {"distance", "learned", "fixed-point", "nearest", "transport"}  # log: see _applies
    assert all(np.isfinite(score) and 20 < score < 70 for score in choice.scores.values())
    blends = {name: score - (0.0 if name == "distance" else 1.5) for name, score in choice.scores.items()}
    del blends["transport"]
    assert sorted(blends.values())[-1] - sorted(blends.values())[-2] > 0.05  # no tie for the rounding to break
    blend = max(blends, key=blends.get)
    assert set(choice.compared) == {"frames", "transport", blend} and choice.compared["frames"] == 16
    gain = choice.compared["transport"] - choice.compared[blend]  # no margin
    assert abs(gain) > 0.05
    assert choice.solver == ("transport" if gain > 0 else blend)
    assert choice.held_back == (16 if choice.solver == "transport" else 35)  # 35: fewer than 10 in each fold
    assert SolverChoice.from_attributes(choice.as_attributes()) == dataclasses.replace(
        choice,
        scores={name: round(score, 2) for name, score in choice.scores.items()},
        denoising={name: round(score, 2) for name, score in choice.denoising.items()},
        own_denoising={name: round(score, 2) for name, score in choice.own_denoising.items()},
        noise=round(choice.noise, 4),
    )
    assert measure_solvers(state) == choice  # deterministic


def test_the_choice_says_its_rule_and_counts_on_a_bar(hand, monkeypatch, capsys):
    """The fit's line listed a blend first and picked transport below it with no word of the
    rule, and the choice, a large part of a fit, had no progress bar."""
    import kpcacli.utils.progress as progress

    monkeypatch.setattr(progress, "on_terminal", lambda stream: True)
    state = FrameModel(n_components=3, progress=True).fit(hand[::2]).state_
    assert "choosing the solver" in capsys.readouterr().err
    choice = solver_choice(state)
    line = choice_summary(choice)
    if choice.solver == "transport":
        blend = next(name for name in choice.compared if name not in ("frames", "transport"))
        best = max((name for name in choice.scores if name != "transport"), key=choice.scores.get)
        why = " (the kernel's rule: no blend scored 1.5 dB above it)" if best != blend else ""
        assert f"where the blends' choice, {blend}{why}, scored {choice.compared[blend]:.1f}" in line
        assert "chosen where it scores at least the blends' choice on the frames it decoded" in line
        assert "; the blends on every held-back frame: " in line
    else:
        assert line.startswith(f"auto: {choice.solver}, ")


def test_a_model_too_small_to_hold_frames_back_keeps_the_rule(small_frames):
    state = FrameModel(n_components=2).fit(small_frames[:7]).state_
    choice = solver_choice(state)
    assert (choice.solver, choice.scores, choice.held_back) == ("distance", {}, 0)
    assert "the kernel's rule, not measured" in choice_summary(choice)


def test_a_model_too_small_to_measure_denoises_by_the_papers_rule_in_memory_and_loaded(small_frames, tmp_path):
    """Unmeasured, a model denoises with Mika's fixed point from the input, whether it was just
    fitted or read back from its file (which records the unmeasured choice)."""
    model = FrameModel(n_components=2).fit(small_frames[:7])
    assert solver_for(model.state_, None, DENOISING) == "fixed-point"
    assert solver_for(model.state_, None) == "distance"
    model.save(tmp_path / "m.npz")
    assert solver_for(FrameModel.load(tmp_path / "m.npz").state_, None, DENOISING) == "fixed-point"


@pytest.mark.slow
def test_noisy_samples_lead_the_choice_to_a_solver_that_denoises():
    """Digits with noise of 0.3: the default does not give the noise back (the distance
    solver would, at k = 128 over 64 values) and denoises better than the rule's solver."""
    from sklearn.datasets import load_digits

    from kpcacli import KernelPCA

    digits = load_digits().data / 16.0
    rng = np.random.default_rng(1)
    noisy = digits + rng.normal(scale=0.3, size=digits.shape)
    kpca = KernelPCA(128, kernel="rbf", gamma=0.1, centre=False, fit_inverse_transform=True).fit(noisy[:400])
    choice = solver_choice(kpca.model_.state_)
    assert choice.solver in ("fixed-point", "learned")
    codes = kpca.transform(noisy[1000:1200])
    default = np.mean((kpca.inverse_transform(codes) - digits[1000:1200]) ** 2)
    paper = codes * np.sqrt(kpca.eigenvalues_)  # the model's own codes (docs/sklearn.md)
    rule = np.mean((kpca.model_.decode(paper, solver="distance") - digits[1000:1200]) ** 2)
    assert default < 0.7 * rule


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_fit_records_the_choice_and_decode_uses_it(tmp_path, hand, source):
    """``kpca fit`` prints the choice, the model records it, ``info`` prints it again, and a
    decode that names no solver (or names auto) gives the chosen solver's frames, byte for byte."""
    from PIL import Image

    folder = tmp_path / "train"
    folder.mkdir()
    for index, frame in enumerate(hand[::2][:20]):
        Image.fromarray(frame).save(folder / f"frame_{index:03d}.png")
    fitted = ok(run(["fit", str(folder), "-m", str(tmp_path / "m.npz"), "-k", "4", "-q"]))
    state = FrameModel.load(tmp_path / "m.npz").state_
    choice = state.solver_choice
    assert choice.scores and f"solver auto: {choice.solver}," in fitted.output
    assert f"auto: {choice.solver}," in ok(run(["info", "-m", str(tmp_path / "m.npz")])).output
    codes = tmp_path / "codes.txt"
    ok(run(["encode", str(folder / "frame_003.png"), "-m", str(tmp_path / "m.npz"), "-o", str(codes)]))
    outputs = {}
    for name in (None, "auto", choice.solver):
        target = tmp_path / f"{name}.png"
        arguments = ["decode", "-" if source == "stdin" else str(codes), "-m", str(tmp_path / "m.npz")]
        arguments += ["-o", str(target)] + (["--solver", name] if name else [])
        ok(run(arguments, input=codes.read_text() if source == "stdin" else None))
        outputs[name] = target.read_bytes()
    assert outputs[None] == outputs["auto"] == outputs[choice.solver]


def test_a_model_older_than_the_choice_keeps_its_kernels_rule():
    """A model written before the choice was measured (a committed fixture) decodes with the
    kernel's rule, and info says so."""
    state = FrameModel.load(DATA / "format3-groups16.npz").state_
    assert solver_for(state, None) == solver_for(state, "auto") == rule_solver(state)
    assert solver_choice(state).scores == {}
    assert "(the kernel's rule, not measured)" in ok(run(["info", "-m", str(DATA / "format3-groups16.npz")])).output


def test_the_fit_measures_the_choice_and_saving_measures_nothing(hand, tmp_path, monkeypatch):
    """The choice is the fit's last step: the state records it, decoding reads it, and saving
    (twice: the same bytes) writes it without measuring again."""
    from kpcacli.preimage import measurement

    model = FrameModel(n_components=3).fit(hand[::3])
    recorded = model.state_.solver_choice
    assert recorded is not None and recorded == measure_solvers(model.state_).as_recorded()

    def refused(state, peak=None):
        raise AssertionError("measured after the fit")

    monkeypatch.setattr(measurement, "measure_solvers", refused)
    model.decode(model.encode(hand[1:2]))
    model.save(tmp_path / "a.npz")
    model.save(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    assert FrameModel.load(tmp_path / "a.npz").state_.solver_choice == recorded


# -- denoising ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def noisy_hand(hand):
    """Mika et al.'s use: the hand with white noise of 10 grey levels (28.13 dB against the clean
    frames), a model fitted on the noisy frames themselves."""
    noisy = noisy_copy(hand, 10.0)
    return noisy, FrameModel(n_components=8).fit(noisy)


@pytest.mark.parametrize("source", ["file", "stdin"])
@pytest.mark.slow
def test_denoising_the_frames_a_model_was_fitted_on_gains_with_the_defaults(hand, noisy_hand, tmp_path, source):
    """kpca fit noisy/ then kpca denoise noisy/ with the defaults: at least 3 dB gained (7.7 dB
    measured: 28.13 -> 35.8), where the default decoder gave the frames back unchanged."""
    from PIL import Image

    from kpcacli.numerics.metrics import mean_psnr, psnr

    noisy, _ = noisy_hand
    folder = tmp_path / "noisy"
    folder.mkdir()
    for index, frame in enumerate(noisy):
        Image.fromarray(frame).save(folder / f"frame_{index:03d}.png")
    ok(run(["fit", folder, "-m", tmp_path / "m.npz", "-k", "8", "-q"]))
    if source == "file":
        ok(run(["denoise", folder, "-m", tmp_path / "m.npz", "-o", f"{tmp_path / 'clean'}/", "-q"]))
        denoised = np.stack([np.asarray(Image.open(tmp_path / "clean" / f"frame_{i:03d}.png")) for i in range(70)])
    else:
        first = (folder / "frame_000.png").read_bytes()
        ok(run(["denoise", "-", "-m", tmp_path / "m.npz", "-o", tmp_path / "one.png", "-q"], input=first))
        denoised, noisy, hand = np.asarray(Image.open(tmp_path / "one.png"))[None], noisy[:1], hand[:1]
    before = mean_psnr(psnr(a, b) for a, b in zip(hand, noisy))
    after = mean_psnr(psnr(a, b) for a, b in zip(hand, denoised))
    assert after >= before + 3.0, (before, after)


@pytest.mark.slow
def test_the_frames_a_model_holds_are_denoised_by_the_solver_measured_for_them(hand, noisy_hand):
    """Fitted on the noisy frames, the learned map denoises each by its in-sample fit, which a
    held-back frame never meets: scored by Stein's unbiased risk estimate it is chosen for the
    frames the model holds, and denoises them at the best named solver's PSNR (measured: 35.97
    dB, the fixed point 35.80, transport 31.67, distance 30.62), within 0.3 dB."""
    from kpcacli.numerics.metrics import mean_psnr, psnr

    noisy, model = noisy_hand
    choice = solver_choice(model.state_)
    assert abs(choice.noise - 10.0) < 1.0  # grey levels: estimated from the pixels (measured 10.38)

    def denoised_psnr(solver):
        return mean_psnr(psnr(a, b) for a, b in zip(hand, model.denoise(noisy, solver=solver)[0]))

    named = {name: denoised_psnr(name) for name in ("distance", "learned", "fixed-point", "transport")}
    assert denoised_psnr(None) >= max(named.values()) - 0.3, named
    assert solver_for(model.state_, None, OWN_FRAMES) == choice.own_denoiser
    assert solver_for(model.state_, "distance", OWN_FRAMES) == "distance"  # a named solver is kept


def test_frames_a_model_holds_are_scored_against_the_clean_frames(noisy_hand):
    """Their errors against the noisy frames less the noise's σ² d, as denoising is scored (a
    constant under every candidate reorders a mean PSNR), never below 1% of σ² d."""
    from kpcacli.preimage.measurement import OWN_ERROR_FLOOR, _own_frame_errors

    state = noisy_hand[1].state_
    d = state.frames.shape[1]
    errors = {"distance": {0: 150.0 * d, 1: 100.5 * d}, "nearest": {0: 50.0 * d}}
    own = _own_frame_errors(state, errors, 10.0)
    assert own["distance"][0] == pytest.approx(50.0 * d)
    assert own["distance"][1] == own["nearest"][0] == pytest.approx(100.0 * d / OWN_ERROR_FLOOR)


def test_the_noise_of_frames_is_estimated_from_their_pixels():
    from kpcacli.model.noise import pixel_noise

    rng = np.random.default_rng(1)
    ramp = np.add.outer(np.arange(64.0), np.arange(96.0))  # smooth: no texture to take for noise
    frames = np.stack([ramp + rng.normal(0.0, 6.0, ramp.shape) for _ in range(10)])
    state = FrameModel(n_components=3).fit(frames.astype(np.float32)).state_
    assert abs(pixel_noise(state, np.arange(10)) - 6.0) < 0.3


@pytest.mark.parametrize("solver", ["distance", "nearest", "learned", "log", "fixed-point", None])
def test_no_solver_gives_a_noisy_training_frame_back_unchanged(noisy_hand, solver):
    """A frame the model holds is denoised without its own copy among its neighbours: every
    neighbour solver gave the noisy frame back bit for bit."""
    noisy, model = noisy_hand
    denoised, _ = model.denoise(noisy[::7], solver=solver)
    unchanged = [i for i, (a, b) in enumerate(zip(denoised, noisy[::7])) if np.array_equal(a, b)]
    assert unchanged == []


def test_a_training_frame_held_twice_is_not_denoised_into_its_copy(noisy_hand):
    """Its copies hold its noise and are left out of its neighbours; its other views, with noise
    of their own, are not (the nearest solver gives back the next frame in time)."""
    noisy, _ = noisy_hand
    frames = np.concatenate([noisy[:30:2], noisy[10:11]])  # frame 10 twice, as rows 5 and 15
    model = FrameModel(n_components=6).fit(frames)
    denoised, _ = model.denoise(noisy[10:11], solver="nearest")
    assert not np.array_equal(denoised[0], noisy[10])
    assert any(np.array_equal(denoised[0], noisy[i]) for i in (8, 12))


def test_the_denoising_choice_is_measured_recorded_and_used(noisy_hand, tmp_path):
    """The model measures denoising apart from decoding, records it, and denoise uses it; a
    record without it (a model written before) denoises by the papers' rule."""
    _, model = noisy_hand
    choice = solver_choice(model.state_)
    assert choice.denoiser in choice.denoising and set(choice.denoising) == set(choice.scores)
    assert choice.denoising[choice.denoiser] == max(choice.denoising.values())
    assert solver_for(model.state_, None, DENOISING) == choice.denoiser
    model.save(tmp_path / "m.npz")
    loaded = FrameModel.load(tmp_path / "m.npz").state_.solver_choice
    assert loaded.denoiser == choice.denoiser
    older = {key: value for key, value in choice.as_attributes().items() if key != "denoising"}
    assert SolverChoice.from_attributes(older).denoiser is None
    info = ok(run(["info", "-m", tmp_path / "m.npz"])).stdout
    assert f"denoiser     auto: {choice.denoiser}," in info


@pytest.mark.parametrize(
    "denoising",
    [
        {"solver": "distance", "scores": {}, "held_back": 4},
        {"solver": "nope", "scores": {"nope": 1.0}, "held_back": 4},
        {"scores": {"distance": "x"}, "held_back": 4},
        {"solver": "distance", "scores": {"distance": 30.0}},
        {"solver": "distance", "scores": {"distance": 30.0}, "held_back": True},
    ],
)
def test_a_malformed_denoising_record_is_a_model_file_error(denoising):
    from kpcacli import ModelFileError
    from kpcacli.model.solverchoice import check_solver_choice

    record = {"solver": "distance", "rule": "distance", "scores": {"distance": 30.0}, "held_back": 8}
    assert check_solver_choice(record, sorted(SOLVERS)) == SolverChoice.from_attributes(record)
    with pytest.raises(ModelFileError, match="denoising solver"):
        check_solver_choice({**record, "denoising": denoising}, sorted(SOLVERS))


def test_a_solver_named_at_fit_is_recorded_unmeasured_and_decodes_as_named(hand, monkeypatch, tmp_path):
    """``FrameModel(solver=NAME)`` (``kpca fit --solver``) measures nothing, records the name,
    keeps it through the model file, and decodes and denoises as a measured model does when
    every command names that solver (integer frames: the same bytes)."""
    train = hand[::2][:24]
    measured = FrameModel(n_components=6).fit(train)

    def refused(*args, **kwargs):
        raise AssertionError("a solver named at fit is not measured")

    monkeypatch.setattr("kpcacli.preimage.measurement.measure_solvers", refused)
    named = FrameModel(n_components=6, solver="transport").fit(train)
    choice = solver_choice(named.state_)
    assert choice.named and choice_summary(choice) == "transport (named at fit, not measured)"
    assert (choice.solver, choice.denoiser, choice.own_denoiser) == ("transport",) * 3
    named.save(tmp_path / "named.npz")
    loaded = FrameModel.load(tmp_path / "named.npz")
    assert solver_choice(loaded.state_).as_attributes() == choice.as_attributes()
    codes = measured.encode(hand[1:12:2])
    assert np.array_equal(loaded.decode(codes), measured.decode(codes, solver="transport"))
    noisy = noisy_copy(hand[1:6:2], 10.0)
    assert np.array_equal(loaded.denoise(noisy)[0], measured.denoise(noisy, solver="transport")[0])


@pytest.mark.parametrize(
    "change",
    [
        {"named": "yes"},
        {"named": True, "scores": {"transport": 40.0}},
        {"named": True, "held_back": 4},
        {"named": True, "denoising": {"solver": "transport", "scores": {"transport": 1.0}, "held_back": 0}},
        {"named": True, "denoising": {"solver": "magic", "scores": {}, "held_back": 0}},
    ],
)
def test_a_malformed_named_record_is_a_model_file_error(change):
    """A solver named at fit has no scores and no frames held back, nor has its denoiser."""
    from kpcacli import ModelFileError
    from kpcacli.model.solverchoice import check_solver_choice

    record = {
        "solver": "transport",
        "rule": "distance",
        "scores": {},
        "held_back": 0,
        "named": True,
        "denoising": {"solver": "transport", "scores": {}, "held_back": 0},
    }
    assert check_solver_choice(record, sorted(SOLVERS)) == SolverChoice.from_attributes(record)
    with pytest.raises(ModelFileError, match="solver_choice must name a known solver"):
        check_solver_choice({**record, **change}, sorted(SOLVERS))


def test_fit_refuses_a_named_solver_that_cannot_decode_its_frames_and_writes_nothing(tmp_path):
    points = tmp_path / "points.csv"
    angle = np.linspace(0, 6, 40)
    np.savetxt(points, np.c_[np.cos(angle), np.sin(angle)], delimiter=",")
    result = run(["fit", points, "-m", tmp_path / "points.npz", "-k", "2", "--solver", "transport", "-q"])
    one_line_error(result, 1, "the transport solver moves the pixels of frames; a point model has none")
    assert not (tmp_path / "points.npz").exists()
    named = ok(run(["fit", points, "-m", tmp_path / "points.npz", "-k", "2", "--solver", "fixed-point", "-q"]))
    assert "solver fixed-point (named at fit, not measured)" in named.stdout + named.stderr
