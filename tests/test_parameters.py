"""Frames for parameter values never seen: the maps from parameters to codes, the model's
parameters in the model file, FrameModel.predict, and kpca fit --params / kpca predict over
files and standard input, with every bad input one line."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import HAND, loaded_by, ok, one_line_error, run
from PIL import Image
from scipy.interpolate import RBFInterpolator

from kpcacli import FrameModel, ModelFileError
from kpcacli.estimators.parametric import transported_codes
from kpcacli.modelfile import load
from kpcacli.numerics.metrics import mean_psnr, psnr
from kpcacli.numerics.parametermap import (
    THIN_PLATE_SMOOTHING,
    Box,
    GaussianProcessMap,
    ThinPlateMap,
    fit_gaussian_process,
    fit_map,
    polynomial_determined,
    thin_plate_residuals,
)
from kpcacli.preimage import solver_for

PHASES = np.arange(70) / 70  # sample_data/make_hand.py renders frame i at phase i / 70
EVEN, ODD = np.arange(0, 70, 2), np.arange(1, 69, 2)  # odd frames inside the even ones' range


def smooth_pairs(count: int, dimensions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    points = rng.random((count, dimensions))
    codes = np.c_[np.sin(3 * points.sum(axis=1)), np.cos(2 * points[:, 0]), points[:, -1] ** 2]
    return points, codes + 0.01 * rng.normal(size=codes.shape)


# -- the maps -------------------------------------------------------------------------------
@pytest.mark.parametrize("dimensions", [1, 2])
@pytest.mark.parametrize("smoothing", [0.0, 1e-4, 0.1])
def test_rippa_leave_one_out_is_the_spline_refitted_without_each_point(dimensions, smoothing):
    points, codes = smooth_pairs(25, dimensions)
    residuals = thin_plate_residuals(points, codes, smoothing)
    refitted = [
        codes[i]
        - RBFInterpolator(
            np.delete(points, i, 0), np.delete(codes, i, 0), kernel="thin_plate_spline", smoothing=smoothing, degree=1
        )(points[i : i + 1])[0]
        for i in range(len(points))
    ]
    np.testing.assert_allclose(residuals, refitted, atol=1e-9)


@pytest.mark.parametrize("dimensions", [1, 2])
@pytest.mark.parametrize("smoothing", [0.0, 1e-3, 1.0])
def test_the_thin_plate_map_is_scipys_spline(dimensions, smoothing):
    points, codes = smooth_pairs(20, dimensions)
    queries = np.random.default_rng(1).uniform(-0.2, 1.2, (7, dimensions))  # inside and outside
    ours = ThinPlateMap(points, codes, smoothing).codes(queries)
    scipys = RBFInterpolator(points, codes, kernel="thin_plate_spline", smoothing=smoothing, degree=1)(queries)
    np.testing.assert_allclose(ours, scipys, atol=1e-9)


@pytest.mark.parametrize("dimensions", [1, 2])
def test_gaussian_process_leave_one_out_is_the_process_refitted_without_each_point(dimensions):
    points, codes = smooth_pairs(25, dimensions)
    process = fit_gaussian_process(points, codes)
    refitted = [
        codes[i]
        - GaussianProcessMap(
            np.delete(points, i, 0), np.delete(codes, i, 0), process.lengths, process.nugget, mean=process.mean
        ).codes(points[i : i + 1])[0]
        for i in range(len(points))
    ]
    np.testing.assert_allclose(process.residuals(), refitted, atol=1e-8)


def test_the_gaussian_process_is_sure_at_its_samples_and_unsure_far_from_them():
    points, codes = smooth_pairs(30, 1)
    process = fit_gaussian_process(points, codes)
    at_samples = process.std(points)
    far = process.std(np.array([[2.0], [3.0]]))
    assert np.all(at_samples >= 0) and np.all(np.isfinite(at_samples))
    assert far.min() > 10 * at_samples.max()
    assert np.all(far[1] >= far[0])  # farther, less sure


def test_a_map_is_deterministic_and_chosen_by_leave_one_out_error():
    points, codes = smooth_pairs(30, 2)
    first, second = fit_map(points, codes), fit_map(points, codes)
    assert (first.kind, first.hyperparameters, first.loo_rms) == (second.kind, second.hyperparameters, second.loo_rms)
    np.testing.assert_array_equal(first.residuals, second.residuals)
    chosen = first.loo_rms[first.kind]
    assert all(value is None or chosen <= value for value in first.loo_rms.values())


def test_a_spline_through_points_on_a_line_is_no_candidate_and_the_process_answers():
    points = np.c_[np.linspace(0, 1, 12), np.linspace(0, 1, 12)]  # two parameters that move together
    codes = np.c_[np.sin(3 * points[:, 0])]
    result = fit_map(points, codes)
    assert result.kind == "gaussian-process" and result.hyperparameters["thin-plate"] is None


def on_a_line(count: int, offset: float) -> np.ndarray:
    """`count` points on the diagonal of the unit square, every other one `offset` off it."""
    t = np.linspace(0, 1, count)
    return np.c_[t, t + offset * (np.arange(count) % 2)]


@pytest.mark.parametrize("smoothing", THIN_PLATE_SMOOTHING)
def test_whether_the_spline_exists_is_decided_by_the_points_not_by_rounding(smoothing):
    """The polynomial block's rank decides, with a margin of eight orders of magnitude below
    its threshold (1e-8 of the largest singular value): points on a line in 2-D or on a plane
    in 3-D have none (their smallest singular value is rounding, 1e-17 of the largest); every
    other point 1e-4 off the line (3e-5 of the largest) is a candidate with finite residuals."""
    codes = np.c_[np.linspace(0, 1, 12) ** 2]
    plane = np.c_[on_a_line(12, 0.3), np.zeros(12)]
    for points in (on_a_line(12, 0.0), plane, np.eye(2)):
        assert not polynomial_determined(points)
        assert thin_plate_residuals(points, codes[: len(points)], smoothing) is None
    near = on_a_line(12, 1e-4)
    assert polynomial_determined(near)
    assert np.all(np.isfinite(thin_plate_residuals(near, codes, smoothing)))


def test_a_repeated_point_needs_smoothing():
    points, codes = smooth_pairs(10, 2)
    points, codes = np.r_[points, points[:1]], np.r_[codes, codes[:1]]
    assert thin_plate_residuals(points, codes, 0.0) is None
    assert np.all(np.isfinite(thin_plate_residuals(points, codes, 1e-3)))


def test_the_box_scales_to_the_training_range_and_tells_what_lies_outside():
    box = Box.of(np.array([[0.0, 10.0], [2.0, 30.0]]))
    np.testing.assert_allclose(box.scaled(np.array([[1.0, 20.0]])), [[0.5, 0.5]])
    assert box.outside(np.array([[1.0, 20.0], [3.0, 20.0], [1.0, 5.0]])).tolist() == [False, True, True]


# -- the model ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def phase_model(hand) -> FrameModel:
    return FrameModel(n_components=8).fit(hand[EVEN], params=PHASES[EVEN], param_names=["phase"])


def scores(truth, frames) -> float:
    return mean_psnr(psnr(a, b) for a, b in zip(truth, frames))


@pytest.mark.slow
def test_predicted_frames_are_the_true_codes_decoded_and_beat_the_nearest_frame(hand, phase_model):
    """The odd frames of the hand from the even ones' phases: within 0.3 dB of decoding the
    odd frames' own codes, and far above the nearest training frame."""
    predicted = phase_model.predict(PHASES[ODD])
    own = phase_model.decode(phase_model.encode(hand[ODD]))
    nearest = hand[ODD - 1]
    assert scores(hand[ODD], predicted) >= scores(hand[ODD], own) - 0.3
    assert scores(hand[ODD], predicted) > scores(hand[ODD], nearest) + 3.0
    parameters = phase_model.state_.parameters
    assert parameters.names == ("phase",) and parameters.loo_frames == len(EVEN)
    assert parameters.loo_psnr is not None and parameters.loo_psnr > 35


def test_predict_defaults_to_the_solver_that_predicted_left_out_frames_best(hand, phase_model):
    """The default predicts as the candidates scored it, the frames left out one at a time
    predicted from their phases (the blends decoding the map's codes, transport moving the
    nearest phases' frames): on the hand, transport, within 0.3 dB of the best named solver on
    the odd frames; a model file fitted before the choice predicts with its decoding choice."""
    import dataclasses

    parameters = phase_model.state_.parameters
    assert list(parameters.solver_scores)[0] == phase_model.state_.solver_choice.solver
    assert "transport" in parameters.solver_scores and parameters.solver == "transport"
    assert parameters.loo_psnr == parameters.solver_scores[parameters.solver]
    named = {
        name: scores(hand[ODD], phase_model.predict(PHASES[ODD], solver=name)) for name in parameters.solver_scores
    }
    assert scores(hand[ODD], phase_model.predict(PHASES[ODD])) >= max(named.values()) - 0.3
    older = dataclasses.replace(parameters, solver=None, solver_scores={})
    state = dataclasses.replace(phase_model.state_, parameters=older)
    from kpcacli.estimators.parametric import prediction_solver

    assert prediction_solver(state, None) == prediction_solver(state, "auto") == state.solver_choice.solver
    assert prediction_solver(phase_model.state_, "nearest") == "nearest"


def test_the_prediction_choice_keeps_transport_within_its_allowance():
    from kpcacli.estimators.parametric import TRANSPORT_ALLOWANCE_DB, chosen_predictor

    assert chosen_predictor({"distance": 40.0, "learned": 41.0, "transport": 41.0 - TRANSPORT_ALLOWANCE_DB}) == (
        "transport"
    )
    assert chosen_predictor({"distance": 40.0, "learned": 41.0, "transport": 39.0 - TRANSPORT_ALLOWANCE_DB}) == (
        "learned"
    )
    assert chosen_predictor({"distance": None, "transport": 80.0}) == "distance"  # None: every frame exact
    assert chosen_predictor({"distance": 30.0, "learned": 30.0}) == "distance"  # a tie: the first


@pytest.mark.parametrize("kind", ["thin-plate", "gaussian-process"])
def test_both_maps_predict_and_only_the_process_gives_a_deviation(phase_model, kind):
    codes, std = phase_model.predict_codes(PHASES[ODD], map=kind)
    assert codes.shape == (len(ODD), 8)
    assert (std is None) == (kind == "thin-plate")
    if std is not None:
        assert std.shape == codes.shape and np.all(std >= 0)


def test_predictions_survive_the_model_file_bit_for_bit(tmp_path, phase_model):
    phase_model.save(tmp_path / "m.npz")
    loaded = FrameModel.load(tmp_path / "m.npz")
    assert loaded.state_.parameters.as_attributes() == phase_model.state_.parameters.as_attributes()
    for kind in ("thin-plate", "gaussian-process"):
        np.testing.assert_array_equal(
            loaded.predict_codes(PHASES[ODD], map=kind)[0], phase_model.predict_codes(PHASES[ODD], map=kind)[0]
        )
    np.testing.assert_array_equal(loaded.predict(PHASES[ODD][:3]), phase_model.predict(PHASES[ODD][:3]))


def test_a_model_without_parameters_cannot_predict(hand_model):
    with pytest.raises(Exception, match="fitted without parameters"):
        hand_model.predict_codes([0.5])


@pytest.mark.parametrize(
    "params, names, fragment",
    [
        (PHASES[EVEN][:-1], None, "has 34 rows but there are 35 frames"),
        (np.c_[PHASES[EVEN], np.ones(35)], ["phase", "light"], "light is 1 in every row"),
        (np.where(np.arange(35) == 4, np.nan, PHASES[EVEN]), None, "NaN or infinite value in row 4"),
        (PHASES[EVEN], ["a", "b"], "needs 1 names"),
        (np.c_[PHASES[EVEN], PHASES[EVEN] ** 2], ["a", "a"], "names a parameter twice"),
    ],
)
def test_bad_parameters_are_refused_before_the_fit(hand, params, names, fragment):
    with pytest.raises(Exception, match=fragment):
        FrameModel(n_components=3).fit(hand[EVEN], params=params, param_names=names)


def test_parameters_with_landmarks_are_those_of_the_kept_frames(tmp_path):
    """With --landmarks only some frames are kept: their rows of the table, by frame number."""
    table = tmp_path / "phases.csv"
    table.write_text("phase\n" + "\n".join(repr(float(value)) for value in PHASES[EVEN]) + "\n")
    ok(
        run(
            [
                "fit",
                HAND,
                "--frames",
                "::2",
                "--params",
                table,
                "-m",
                tmp_path / "m.npz",
                "-k",
                "3",
                "--landmarks",
                "12",
                "-q",
            ]
        )
    )
    state = load(tmp_path / "m.npz")
    numbers = np.asarray(state.provenance.frame_indices)
    np.testing.assert_array_equal(state.parameters.values[:, 0], PHASES[numbers])


def test_damaged_parameters_in_a_model_file_are_one_line(tmp_path, phase_model):
    from kpcacli.model.parameters import parameters_of_attributes

    good = phase_model.state_.parameters.as_attributes()
    for damaged in (
        {**good, "map": "spline"},
        {**good, "values": good["values"][:-1]},
        {
            **good,
            "hyperparameters": {**good["hyperparameters"], "gaussian-process": {"lengths": [-1.0], "nugget": 0.1}},
        },
        {**good, "loo_frames": 99},
        {**good, "solver": "transport", "solver_scores": {"distance": 30.0}},
        {**good, "solver_scores": {**good["solver_scores"], "distance": "high"}},
        [1, 2, 3],
    ):
        with pytest.raises(ModelFileError, match="parameters must hold"):
            parameters_of_attributes(damaged, 35)
    assert parameters_of_attributes(good, 35).kind == good["map"]
    older = {key: value for key, value in good.items() if key not in ("solver", "solver_scores")}
    assert parameters_of_attributes(older, 35).solver is None  # a model file fitted before the choice


# -- the command line -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A model of the even frames with their phases, fitted from the command line."""
    root = tmp_path_factory.mktemp("params")
    table = root / "train.csv"
    table.write_text("phase\n" + "\n".join(repr(float(value)) for value in PHASES[EVEN]) + "\n")
    result = ok(run(["fit", HAND, "--frames", "::2", "--params", table, "-m", root / "m.npz", "-k", "8"]))
    return root, result


def test_fit_and_info_print_the_map_and_its_leave_one_out_error(fitted):
    root, result = fitted
    assert "parameters phase 0 to 0.971429; map " in result.stderr and "leave-one-out error" in result.stderr
    assert "predictor auto: transport, " in result.stderr and "predicting 35 training frames each left out" in (
        result.stderr
    )
    info = ok(run(["info", "-m", root / "m.npz", "--json"]))
    facts = json.loads(info.stdout)["parameters"]
    assert facts["names"] == ["phase"] and facts["map"] in ("thin-plate", "gaussian-process")
    assert facts["lower"] == [0.0] and facts["upper"] == [PHASES[68]] and facts["loo_frames"] == 35
    assert facts["prediction_solver"] == "transport" and facts["predictor"].startswith("auto: transport, ")
    text = ok(run(["info", "-m", root / "m.npz"])).stdout
    assert "predictor    auto: transport, " in text


def test_fit_reads_the_parameters_from_standard_input_as_from_a_file(fitted, tmp_path):
    root, _ = fitted
    text = (root / "train.csv").read_text()
    ok(run(["fit", HAND, "--frames", "::2", "--params", "-", "-m", tmp_path / "m.npz", "-k", "8", "-q"], input=text))
    assert (tmp_path / "m.npz").read_bytes() == (root / "m.npz").read_bytes()


def test_predict_writes_what_the_python_api_predicts_from_file_stdin_and_options(fitted, tmp_path, phase_model):
    root, _ = fitted
    table = tmp_path / "odd.csv"
    table.write_text("phase\n" + "\n".join(repr(float(value)) for value in PHASES[ODD][:4]) + "\n")
    ok(run(["predict", table, "-m", root / "m.npz", "-o", tmp_path / "a.npy", "--codes", tmp_path / "c.npy"]))
    ok(run(["predict", "-", "-m", root / "m.npz", "-o", f"{tmp_path}/b/"], input=table.read_text()))
    ok(run(["predict", "--param", f"phase={float(PHASES[1])!r}", "-m", root / "m.npz", "-o", tmp_path / "one.png"]))
    model = FrameModel.load(root / "m.npz")
    expected = model.predict(PHASES[ODD][:4])
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), expected)
    # The model's solver moves frames nearest in parameter space: --codes holds theirs, weighted.
    assert solver_for(model.state_, None) == "transport"
    np.testing.assert_array_equal(np.load(tmp_path / "c.npy"), transported_codes(model.state_, PHASES[ODD][:4]))
    folder = sorted((tmp_path / "b").iterdir())
    assert [np.asarray(Image.open(path)).tolist() for path in folder] == expected.tolist()
    np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "one.png")), expected[0])


def test_predict_writes_the_processes_deviation_and_a_video(fitted, tmp_path):
    root, _ = fitted
    values = "\n".join(repr(float(value)) for value in PHASES[ODD][:6])
    result = ok(
        run(
            [
                "predict",
                "-",
                "-m",
                root / "m.npz",
                "-o",
                tmp_path / "clip.mkv",
                "--map",
                "gaussian-process",
                "--solver",
                "distance",
                "--std",
                tmp_path / "std.npy",
            ],
            input=values,
        )
    )
    assert np.load(tmp_path / "std.npy").shape == (6, 8) and (tmp_path / "clip.mkv").stat().st_size > 0
    assert "Warning" not in result.stderr


def test_values_outside_the_training_range_warn_in_one_line(fitted, tmp_path):
    root, _ = fitted
    result = ok(run(["predict", "-", "-m", root / "m.npz", "-o", tmp_path / "x.npy"], input="0.5\n1.2\n-0.1\n0.3\n"))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning")]
    assert warnings == [
        "Warning: 2 of 4 parameter rows lie outside the training range (phase 0 to 0.971429): extrapolated"
    ]


@pytest.mark.parametrize(
    "args, input, status, fragments",
    [
        (["predict", "-"], "phase\n0.1\nnan\n", 1, ["row 1", "NaN or infinite"]),
        (["predict", "-"], "opening\n0.1\n", 1, ["the parameters given are opening", "fitted on phase"]),
        (["predict", "-"], "0.1 0.2\n", 1, ["predicts from 1 parameter (phase) a row"]),
        (["predict", "-"], "", 1, ["holds no parameters"]),
        (["predict", "--param", "phase"], None, 2, ["--param takes name=value"]),
        (["predict", "-", "--param", "phase=0.1"], "0.1\n", 2, ["not both"]),
        (["predict"], None, 2, ["give the parameters"]),
        (["predict", "-", "--std", "STD"], "0.1\n", 2, ["--map gaussian-process predicts with one"]),
        (["predict", "-", "--map", "kriging"], "0.1\n", 2, ["kriging"]),
        (["predict", "nothere.csv"], None, 1, ["'nothere.csv' does not exist"]),
    ],
)
def test_bad_predictions_are_one_line_and_write_nothing(fitted, tmp_path, args, input, status, fragments):
    root, _ = fitted
    args = [arg.replace("STD", str(tmp_path / "std.npy")) for arg in args]
    if "--std" in args:
        args += ["--map", "thin-plate", "--solver", "distance"]  # the map without a deviation, named
    result = run([*args, "-m", root / "m.npz", "-o", tmp_path / "out.npy"], input=input)
    one_line_error(result, status, *fragments)
    assert sorted(tmp_path.iterdir()) == []


def test_std_with_the_thin_plate_map_chosen_is_the_process_s_and_says_so(phase_model, tmp_path):
    """The fit chose the thin-plate spline (forced here: which map wins is the fit's business):
    --std writes the Gaussian process's deviations, fitted beside it, and one line says which
    map predicted the codes."""
    import dataclasses

    state = phase_model.state_
    assert set(state.parameters.available()) == {"thin-plate", "gaussian-process"}
    spline = dataclasses.replace(state.parameters, kind="thin-plate")
    FrameModel.from_state(dataclasses.replace(state, parameters=spline)).save(tmp_path / "spline.npz")
    args = ["predict", "-", "-m", tmp_path / "spline.npz", "-o", tmp_path / "x.npy", "--std", tmp_path / "s.npy"]
    args += ["--solver", "distance"]  # a map's codes: the transport solver, the model's choice, uses none
    result = ok(run([*args, "--codes", tmp_path / "c.npy"], input="phase\n0.3\n0.61\n"))
    assert result.stderr.strip().splitlines() == [
        "Note: the thin-plate map (the model's choice) predicted the codes; the standard deviations are the "
        "Gaussian process's, fitted beside it"
    ]
    codes, std = phase_model.predict_codes([[0.3], [0.61]], map="gaussian-process")
    np.testing.assert_allclose(np.load(tmp_path / "s.npy"), std, rtol=1e-9, atol=1e-12)
    spline_codes, _ = phase_model.predict_codes([[0.3], [0.61]], map="thin-plate")
    np.testing.assert_allclose(np.load(tmp_path / "c.npy"), spline_codes, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("output", ["out.png", "out/", "out.mp4", "out.npy"])
@pytest.mark.parametrize("option", ["--codes", "--std"])
def test_a_rows_output_of_no_known_format_is_refused_before_any_frame_is_written(fitted, tmp_path, output, option):
    root, _ = fitted
    target = str(tmp_path / output) + ("/" if output.endswith("/") else "")
    result = run(["predict", "--param", "phase=0.5", "-m", root / "m.npz", "-o", target, option, tmp_path / "r.xyz"])
    one_line_error(result, 1, "cannot write rows to", "r.xyz")
    assert sorted(tmp_path.iterdir()) == []


def test_fit_refuses_a_codes_output_of_no_known_format_before_it_fits(tmp_path):
    args = ["fit", HAND, "--frames", "::4", "-m", tmp_path / "m.npz", "-k", "3", "-q", "--codes", tmp_path / "c.xyz"]
    one_line_error(run(args), 1, "cannot write rows to", "c.xyz")
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["thin-plate", "gaussian-process"])
@pytest.mark.slow
def test_a_prediction_from_the_command_line_loads_no_scipy(fitted, tmp_path, kind):
    """Building either map and predicting is numpy alone: scipy's import is 0.2 s of a
    one-frame prediction."""
    root, _ = fitted
    command = ["predict", "--param", "phase=0.4", "-m", root / "m.npz", "-o", tmp_path / "x.png", "--map", kind]
    assert loaded_by(command, ("scipy",)) == []


def test_predict_with_a_model_fitted_without_parameters_is_one_line(tmp_path):
    ok(run(["fit", HAND, "--frames", "::4", "-m", tmp_path / "plain.npz", "-k", "3", "-q"]))
    one_line_error(
        run(["predict", "--param", "phase=0.5", "-m", tmp_path / "plain.npz", "-o", tmp_path / "x.png"]),
        1,
        "fitted without parameters (--params)",
    )
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "table, input, status, fragments",
    [
        ("phase\n0.1\n0.2\n", None, 1, ["--params has 2 rows but there are 35 frames"]),
        ("phase,light\n" + "".join(f"{i / 70!r},1\n" for i in range(0, 70, 2)), None, 1, ["light is 1 in every row"]),
        ("phase\n" + "".join(f"{v}\n" for v in ["x", *range(1, 35)]), None, 1, ["row 0, column 0", "'x'"]),
        ("phase\n" + "".join(f"{v}\n" for v in ["inf", *range(1, 35)]), None, 1, ["NaN or infinite value in row 0"]),
        ("-", "0.1\n", 2, ["cannot both come from standard input"]),
        ("phase,phase\n" + "".join(f"{i / 70!r},{i}\n" for i in range(0, 70, 2)), None, 1, ["names a parameter twice"]),
    ],
)
def test_bad_fit_parameters_are_one_line_and_write_no_model(tmp_path, table, input, status, fragments):
    source = "-" if input is not None else HAND
    if table != "-":
        (tmp_path / "p.csv").write_text(table)
        table = tmp_path / "p.csv"
    stdin = None
    if source == "-":
        import io

        buffer = io.BytesIO()
        np.save(buffer, np.zeros((35, 4, 4), dtype=np.uint8))
        stdin = buffer.getvalue()
    args = ["fit", source, "--params", table, "-m", tmp_path / "m.npz", "-k", "3", "-q"]
    if source != "-":
        args[2:2] = ["--frames", "::2"]
    result = run(args, input=stdin)
    one_line_error(result, status, *fragments)
    assert not (tmp_path / "m.npz").exists()


def test_point_models_predict_rows(tmp_path):
    """Points (a curve in the plane, driven by one parameter) predict rows, as decode writes them."""
    angles = np.linspace(0, 2.5, 40)
    points = np.c_[np.cos(angles), np.sin(angles)] + 0.002 * np.random.default_rng(0).normal(size=(40, 2))
    np.savetxt(tmp_path / "curve.csv", points, delimiter=",")
    np.save(tmp_path / "angles.npy", angles)
    ok(
        run(
            [
                "fit",
                tmp_path / "curve.csv",
                "--params",
                tmp_path / "angles.npy",
                "-m",
                tmp_path / "m.npz",
                "-k",
                "2",
                "-q",
            ]
        )
    )
    result = ok(run(["predict", "--param", "param1=1.0", "-m", tmp_path / "m.npz", "-o", tmp_path / "p.csv"]))
    predicted = np.loadtxt(tmp_path / "p.csv", delimiter=",", ndmin=2, skiprows=1)
    assert predicted.shape == (1, 2) and "Warning" not in result.stderr
    assert np.linalg.norm(predicted[0] - [np.cos(1.0), np.sin(1.0)]) < 0.1


@pytest.mark.slow  # as the README's other run-as-written checks (make test-slow)
def test_the_readme_example_runs_as_written(tmp_path, monkeypatch):
    """The README's block on frames for parameters never seen, line by line, and the figure it
    states."""
    import shlex
    import subprocess
    import sys

    from helpers import ROOT

    text = (ROOT / "README.md").read_text()
    block = text.split("**Frames for parameter values never seen**", 1)[1].split("```", 2)[1]
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    result = None
    for line in block.strip().splitlines():
        command = line.split("  #", 1)[0].strip()
        if command.startswith("python "):
            script, target = command[len("python -c ") :].rsplit(">", 1)
            output = subprocess.run([sys.executable, "-c", shlex.split(script)[0]], capture_output=True, check=True)
            (tmp_path / target.strip()).write_bytes(output.stdout)
        else:
            result = ok(run(shlex.split(command)[1:]))
    stated = block.strip().splitlines()[-1].split("# mean PSNR ")[1]
    assert f"mean PSNR             {stated}" in result.stdout
