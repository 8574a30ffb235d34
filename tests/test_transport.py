"""The transport pre-image (kpcacli.preimage.transport): the code's neighbours moved along the
displacement between them, then blended, so that what moves between two training frames lands
once, in between, instead of twice, faded. Images through optical flow, one-row signals
through exact 1-D optimal transport (kpcacli.numerics.displacement)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ok, one_line_error, run
from scipy.spatial.distance import pdist

from kpcacli import FrameModel, KpcaError
from kpcacli.model.solverchoice import MARGIN_DB
from kpcacli.numerics.displacement import signal_barycentre
from kpcacli.numerics.metrics import mse, psnr_of_mse
from kpcacli.utils.errors import KpcaWarning

HEIGHT, WIDTH = 48, 64
POSITIONS = 12.0 + 2.0 * np.arange(21)  # a blob every 2 pixels; training frames 4 pixels apart


def blob(x: float, colour: bool = False) -> np.ndarray:
    """A bright Gaussian blob (σ = 3) centred at column `x`, row 24, on a dark ground; in
    colour, red only, on a ground of green and blue that differs by channel."""
    rows, columns = np.mgrid[:HEIGHT, :WIDTH]
    spot = 180.0 * np.exp(-((columns - x) ** 2 + (rows - 24.0) ** 2) / 18.0)
    if not colour:
        return np.rint(40.0 + spot).astype(np.uint8)
    return np.rint(np.stack([40.0 + spot, np.full_like(spot, 90.0), np.full_like(spot, 150.0)], axis=-1)).astype(
        np.uint8
    )


def centre(frame: np.ndarray) -> float:
    """The column of the blob's centre of mass above the ground."""
    values = frame.astype(np.float64) - 40.0
    columns = np.arange(frame.shape[1])
    return float((values.sum(axis=0) * columns).sum() / values.sum())


@pytest.fixture(scope="module")
def blob_model():
    frames = np.stack([blob(x) for x in POSITIONS])
    return FrameModel(n_components=3).fit(frames[::2]), frames[1::2], POSITIONS[1::2]


def test_a_blob_moved_between_two_frames_lands_once_in_between(blob_model):
    """Held-out blobs, 2 pixels from the training blobs on each side: the transport pre-image
    puts one blob within half a pixel of the true centre (measured: 0.17 at most away from
    the ends), at nearly full height (measured: 99.4% of it at least), and scores 6 dB above
    the nearest frame and the distance solver's blend (measured: 22.5 and 14.7 dB above)."""
    model, held, positions = blob_model
    codes = model.encode(held)
    moved = model.decode(codes, solver="transport")
    blended = model.decode(codes, solver="nearest")
    inner = slice(2, -2)  # the outermost held-out blobs lie near the frame's edge
    for frame, position in zip(moved[inner], positions[inner]):
        assert abs(centre(frame) - position) < 0.5
    for frame, truth in zip(moved, held):
        assert frame.max() >= truth.max() - 0.1 * (int(truth.max()) - 40)
    moved_psnr = psnr_of_mse(mse(held[inner], moved[inner]), 255)
    assert moved_psnr >= psnr_of_mse(mse(held[inner], blended[inner]), 255) + 6
    assert moved_psnr >= psnr_of_mse(mse(held[inner], model.decode(codes[inner], solver="distance")), 255) + 6


def test_each_channel_of_a_colour_frame_moves(blob_model):
    frames = np.stack([blob(x, colour=True) for x in POSITIONS])
    model = FrameModel(n_components=3).fit(frames[::2])
    held = frames[1::2][3:6]
    moved = model.decode(model.encode(held), solver="transport")
    assert moved.shape == held.shape
    for frame, position in zip(moved, POSITIONS[1::2][3:6]):
        assert abs(centre(frame[..., 0]) - position) < 0.5
        green, blue = frame[..., 1].astype(int), frame[..., 2].astype(int)
        assert np.all(np.abs(green - 90) <= 1) and np.all(np.abs(blue - 150) <= 1)


def pulse(centre_: float, size: int = 256, width: float = 5.0) -> np.ndarray:
    return np.exp(-0.5 * ((np.arange(size) - centre_) / width) ** 2)


def test_the_signal_barycentre_of_two_pulses_is_the_pulse_in_between():
    """1-D optimal transport is exact: the barycentre of pulses at 60 and 140 with weights 0.7
    and 0.3 is the pulse at 84 (relative L2 error 0.001 measured), not two smaller pulses
    (their blend: 1.26)."""
    result = signal_barycentre(np.stack([pulse(60.0), pulse(140.0)]), np.array([0.7, 0.3]))
    truth = pulse(84.0)
    assert np.linalg.norm(result - truth) / np.linalg.norm(truth) < 0.03
    blend = 0.7 * pulse(60.0) + 0.3 * pulse(140.0)
    assert np.linalg.norm(blend - truth) / np.linalg.norm(truth) > 0.5


def test_one_row_frames_move_by_optimal_transport():
    """A travelling pulse as 1 x 256 16-bit frames (σ = 5, training pulses 8 apart, held out
    halfway): decoded within a relative L2 error of 0.1 (measured 0.021) where the distance
    solver's blend stays above 0.15 (measured 0.24)."""
    centres = 40.0 + 4.0 * np.arange(41)
    frames = np.stack([np.rint(60000 * pulse(c))[np.newaxis, :] for c in centres]).astype(np.uint16)
    model = FrameModel(n_components=3).fit(frames[::2])
    held = frames[1::2][2:-2].astype(np.float64)
    codes = model.encode(frames[1::2][2:-2])

    def error(decoded) -> float:
        return float(np.mean(np.linalg.norm((decoded - held)[:, 0], axis=1) / np.linalg.norm(held[:, 0], axis=1)))

    assert error(model.decode(codes, solver="transport")) < 0.1
    assert error(model.decode(codes, solver="distance")) > 0.15


def test_a_frame_decodes_to_the_same_bytes_alone_in_a_batch_and_from_the_file(blob_model, tmp_path):
    model, held, _ = blob_model
    codes = model.encode(held)
    together = model.decode(codes, solver="transport")
    alone = np.stack([model.decode(code[np.newaxis], solver="transport")[0] for code in codes[::-1]])[::-1]
    np.testing.assert_array_equal(alone, together)
    model.save(tmp_path / "m.npz")
    np.testing.assert_array_equal(FrameModel.load(tmp_path / "m.npz").decode(codes, solver="transport"), together)


def test_a_frame_of_zero_weight_is_not_read(blob_model):
    """A training frame's own code lies on its frame: its pair's other frame gets weight 0 and
    is neither moved nor read (from a store it may cost the decoding of another group), and
    the pre-image is the frame itself."""
    import dataclasses

    from kpcacli.preimage import prepared_solver

    model, _, _ = blob_model
    state = model.state_

    class Reads:
        def __init__(self, frames):
            self.frames, self.shape, self.dtype, self.read = frames, frames.shape, frames.dtype, []

        def __getitem__(self, index):
            self.read.append(int(index))
            return self.frames[index]

    method, _ = prepared_solver(state, "transport", None)
    frames = Reads(np.asarray(state.frames))
    preimage = method.preimage(dataclasses.replace(state, frames=frames), state.codes[4])
    assert list(preimage.indices[preimage.weights == 0]) and frames.read == [4]
    np.testing.assert_array_equal(
        preimage.pixels.reshape(state.frame_shape), state.frames[4].reshape(state.frame_shape)
    )


def test_a_point_model_refuses_the_transport_solver_in_one_line(tmp_path):
    points = tmp_path / "points.csv"
    rng = np.random.default_rng(3)
    np.savetxt(points, rng.normal(size=(30, 3)), delimiter=",")
    ok(run(["fit", points, "-m", tmp_path / "p.npz", "-k", "2", "-q"]))
    ok(run(["encode", points, "-m", tmp_path / "p.npz", "-o", tmp_path / "codes.npy", "-q"]))
    result = run(["decode", tmp_path / "codes.npy", "-m", tmp_path / "p.npz", "--solver", "transport"])
    one_line_error(result, 1, "transport", "point model")
    assert not any(tmp_path.glob("*.png"))


def test_the_command_line_decodes_with_it(blob_model, tmp_path):
    model, held, positions = blob_model
    model.save(tmp_path / "m.npz")
    np.save(tmp_path / "codes.npy", model.encode(held[4:5]))
    ok(
        run(
            [
                "decode",
                tmp_path / "codes.npy",
                "-m",
                tmp_path / "m.npz",
                "--solver",
                "transport",
                "-o",
                tmp_path / "b.png",
            ]
        )
    )
    from PIL import Image

    assert abs(centre(np.asarray(Image.open(tmp_path / "b.png"))) - positions[4]) < 0.5


def test_the_pair_brackets_the_code_and_skips_a_twin_of_the_nearest():
    from kpcacli.preimage.transport import bracketing_pair

    codes = np.array([[0.0, 0.0], [0.02, 0.01], [1.0, 0.0], [-1.0, 0.0]])  # 1: a twin of 0
    assert bracketing_pair(codes, np.array([0.4, 0.1]), np.array([0, 1, 2, 3])).tolist() == [0, 2]
    assert bracketing_pair(codes, np.array([-0.3, 0.0]), np.array([0, 1, 3, 2])).tolist() == [0, 3]
    # Beyond the ends (no segment brackets it): the two nearest, as before.
    assert bracketing_pair(codes, np.array([0.0, 2.0]), np.array([0, 1, 2, 3])).tolist() == [0, 1]


def test_a_clip_that_comes_back_is_decoded_between_its_neighbours_and_not_onto_a_twin(hand):
    """The hand closing then opening again (its first 36 frames, then back, with noise of half a
    grey level): every held-out frame has two training frames of nearly one view on each side,
    and its two nearest were one view twice, so the transport pre-image was the nearest frame
    (measured: 0.6 dB above it); moving the frames that bracket it gives 8.4 dB more."""
    rng = np.random.default_rng(0)
    back = np.clip(np.rint(hand[34::-1] + rng.normal(0.0, 0.5, hand[34::-1].shape)), 0, 255).astype(np.uint8)
    clip = np.concatenate([hand[:36], back])
    model = FrameModel(n_components=3).fit(clip[::2])
    codes = model.encode(clip[1::2])

    def decoded_psnr(solver):
        frames = model.decode(codes, solver=solver).astype(np.float64)
        return np.mean([psnr_of_mse(mse(a, b), 255) for a, b in zip(frames, clip[1::2].astype(np.float64))])

    assert decoded_psnr("transport") > decoded_psnr("nearest") + 5.0  # dB: measured 9.0


def test_a_pulse_predicted_from_its_centre_lands_there_inside_and_beyond_the_range():
    """EZyRB's travelling pulse (σ = 0.2 on [0, 11], 256 values, 20 centres; every other one
    fitted with its centre as the parameter): the transport solver takes its pair and weights
    in parameter space, so each predicted pulse lies where its centre says, the last one
    beyond the training range too (relative L2 error at most 0.05; measured 0.005), where the
    distance solver's blend of the map's code stays above 1."""
    x = np.linspace(0, 11, 256)
    centres = np.linspace(0.75, 10.25, 20)
    pulses = np.stack([np.rint(60000 * np.exp(-((x - c) ** 2) / 0.08))[np.newaxis] for c in centres]).astype(np.uint16)
    model = FrameModel(n_components=3).fit(pulses[::2], params=centres[::2, None], param_names=["centre"])
    truth = pulses[1::2, 0].astype(np.float64)

    def errors(solver):
        predicted = model.predict(centres[1::2, None], solver=solver)[:, 0].astype(np.float64)
        return np.linalg.norm(predicted - truth, axis=1) / np.linalg.norm(truth, axis=1)

    assert np.all(errors("transport") < 0.05)
    assert np.mean(errors("distance")) > 1.0
    # The default is chosen by predicting left-out pulses from their centres, as predict does:
    # it was the decoding choice (relative L2 1.09), which placed pulses by their codes.
    parameters = model.state_.parameters
    assert parameters.solver == "transport"
    assert (
        parameters.solver_scores["transport"]
        > max(score for name, score in parameters.solver_scores.items() if name != "transport") + 20
    )  # dB: measured 67.2 against 29.3 at most
    assert np.all(errors(None) < 0.055)


def test_the_parameter_pair_brackets_the_value_and_extrapolates_beyond_the_range():
    from kpcacli.estimators.parametric import parameter_neighbours

    training = np.array([[0.0], [1.0], [2.0], [3.0]])
    pair, weights = parameter_neighbours(training, np.array([1.25]), 2)
    assert list(pair) == [1, 2] and np.allclose(weights, [0.75, 0.25])
    pair, weights = parameter_neighbours(training, np.array([2.0]), 2)
    assert list(pair) == [2, 3] and np.allclose(weights, [1.0, 0.0])
    pair, weights = parameter_neighbours(training, np.array([3.5]), 2)
    assert list(pair) == [2, 3] and np.allclose(weights, [-0.5, 1.5])
    pair, weights = parameter_neighbours(training, np.array([-1.0]), 2)
    assert list(pair) == [1, 0] and np.allclose(weights, [-1.0, 2.0])


def test_kpca_predict_moves_the_frames_nearest_in_parameter_space(tmp_path):
    from PIL import Image

    folder = tmp_path / "frames"
    folder.mkdir()
    for number, x in enumerate(POSITIONS[::2]):
        Image.fromarray(blob(x)).save(folder / f"blob_{number:02d}.png")
    table = tmp_path / "positions.csv"
    table.write_text("x\n" + "\n".join(f"{x:g}" for x in POSITIONS[::2]) + "\n")
    ok(run(["fit", folder, "-m", tmp_path / "m.npz", "-k", "3", "--params", table, "-q"]))
    target = POSITIONS[9]  # between two training blobs
    output = tmp_path / "p.png"
    ok(run(["predict", "--param", f"x={target:g}", "-m", tmp_path / "m.npz", "--solver", "transport", "-o", output]))
    assert abs(centre(np.asarray(Image.open(output))) - target) < 0.5


def test_predict_with_transport_names_the_codes_it_used_and_no_map(tmp_path):
    """--map gaussian-process and --map thin-plate wrote the same frames with the transport
    solver (it uses no map) and --codes wrote a map's codes the frames were not decoded from.
    Now a map named beside --solver transport is refused, one named beside the model's choice
    of transport is warned of as unused, and --codes holds the codes of the frames it moved,
    weighted as they were: decoding them by transport gives the frames predict wrote."""
    from PIL import Image

    folder = tmp_path / "frames"
    folder.mkdir()
    for number, x in enumerate(POSITIONS):
        Image.fromarray(blob(x)).save(folder / f"blob_{number:02d}.png")
    table = tmp_path / "positions.csv"
    table.write_text("x\n" + "\n".join(f"{x:g}" for x in POSITIONS) + "\n")
    model = tmp_path / "m.npz"
    ok(run(["fit", folder, "-m", model, "-k", "3", "--params", table, "-q"]))
    assert FrameModel.load(model).state_.solver_choice.solver == "transport"
    queries = tmp_path / "q.csv"
    queries.write_text("x\n" + "\n".join(f"{x + 1:g}" for x in POSITIONS[4:-4]) + "\n")
    base = ["predict", queries, "-m", model, "-q"]
    refused = run([*base, "--solver", "transport", "--map", "thin-plate", "-o", f"{tmp_path}/a/"])
    one_line_error(refused, 2, "--map thin-plate does not apply: the transport solver predicts", "--solver")
    warned = ok(run([*base, "--map", "thin-plate", "-o", f"{tmp_path}/b/", "--codes", tmp_path / "c.npy"]))
    assert "Warning: --map thin-plate is not used: the transport solver" in warned.stderr
    assert "the codes are theirs, weighted as their frames were" in warned.stderr
    codes = np.load(tmp_path / "c.npy")
    state = FrameModel.load(model).state_
    pairs = [(i, i + 1) for i in range(4, 4 + len(codes))]  # each query lies halfway between blobs i and i + 1
    np.testing.assert_allclose(codes, [0.5 * (state.codes[i] + state.codes[j]) for i, j in pairs], atol=1e-12)
    ok(run(["decode", tmp_path / "c.npy", "-m", model, "--solver", "transport", "-o", f"{tmp_path}/d/", "-q"]))
    for predicted, decoded in zip(sorted((tmp_path / "b").iterdir()), sorted((tmp_path / "d").iterdir())):
        assert np.array_equal(np.asarray(Image.open(predicted)), np.asarray(Image.open(decoded)))
    other = ok(run([*base, "--solver", "distance", "--map", "thin-plate", "-o", f"{tmp_path}/e/"]))
    assert "Warning" not in other.stderr


def test_opencv_runs_on_the_cores_a_pass_may_use():
    """OpenCV's thread pool is held to the pass's thread budget (a cluster task's one thread,
    the cores a fit leaves beside its store coding), and the field does not depend on it."""
    import cv2

    from kpcacli.numerics.displacement import displacement
    from kpcacli.utils.cores import available_cores
    from kpcacli.utils.parallel import thread_budget

    source, target = blob(20.0), blob(26.0)
    with thread_budget(1):
        alone = displacement(source, target)
        assert cv2.getNumThreads() == 1
    shared = displacement(source, target)
    assert cv2.getNumThreads() == available_cores()
    np.testing.assert_array_equal(alone, shared)


def test_kernel_pca_moves_pixels_of_samples_given_a_frame_shape(blob_model):
    """KernelPCA(frame_shape=...) holds its samples as frames: inverse_transform with the
    transport solver moves their pixels, and returns rows of features as scikit-learn does.

    gamma is the median rule's: scikit-learn's default, 1 / 3072 features, makes every kernel
    value between two of these 8-bit blobs below e^-200, so the kernel matrix is the identity,
    every eigenvalue 1 and every new blob's codes 0, and LAPACK's arbitrary basis of that
    eigenspace chose the frame (another blob on each CPU; the fit now warns of it). Here the
    eigenvalues are 1.28, 1.13 and 0.90 and each held-out code's third-nearest training code
    is at least 25% farther than its second (measured), so the neighbours are no near-tie."""
    pytest.importorskip("sklearn")
    from kpcacli import KernelPCA

    _, held, positions = blob_model
    rows = np.stack([blob(x) for x in POSITIONS[::2]]).reshape(len(POSITIONS[::2]), -1)
    gamma = 1.0 / np.median(pdist(rows.astype(np.float64), "sqeuclidean"))
    settings = {"kernel": "rbf", "gamma": gamma, "solver": "transport", "fit_inverse_transform": True}
    kpca = KernelPCA(n_components=3, frame_shape=(HEIGHT, WIDTH), **settings).fit(rows)
    codes = kpca.transform(held.reshape(len(held), -1))
    distances = np.sort(np.linalg.norm(kpca.transform(rows)[:, None] - codes[None], axis=2), axis=0)
    assert np.all(distances[2] >= 1.2 * distances[1])  # the pair each code is moved between is no near-tie
    back = kpca.inverse_transform(codes)
    assert back.shape == (len(held), HEIGHT * WIDTH)
    for frame, position in zip(back, positions):  # measured: 0.33 pixel at most
        assert abs(centre(frame.reshape(HEIGHT, WIDTH)) - position) < 0.5
    with pytest.raises(ValueError, match="transport solver moves the pixels of frames"):
        KernelPCA(n_components=3, **settings).fit(rows)


def test_a_kernel_that_tells_no_samples_apart_is_warned_of():
    """scikit-learn's default gamma on 8-bit frames: the kernel matrix is the identity to
    rounding, its eigenvalues all equal, and the k kept are chosen by the CPU's rounding."""
    pytest.importorskip("sklearn")
    from kpcacli import KernelPCA

    rows = np.stack([blob(x) for x in POSITIONS[::2]]).reshape(len(POSITIONS[::2]), -1)
    with pytest.warns(KpcaWarning, match="every eigenvalue is the same.*too narrow"):
        KernelPCA(n_components=3, frame_shape=(HEIGHT, WIDTH), kernel="rbf", solver="transport").fit(rows)
    with pytest.warns(KpcaWarning, match="depends on the CPU's rounding"):
        FrameModel(n_components=3, beta=1.0).fit(rows.reshape(-1, HEIGHT, WIDTH))


@pytest.mark.parametrize("shape", [(-48, -64), (48, 64, 2), (48.0, 64.0), (1, 1, 1, 3072), "48x64"])
def test_a_frame_shape_that_is_no_frame_shape_is_refused(shape):
    with pytest.raises(KpcaError, match="frame_shape must be"):
        FrameModel(n_components=2).fit(np.zeros((4, 3072), dtype=np.uint8) + np.arange(4)[:, None], frame_shape=shape)


def test_the_choice_picks_it_where_things_move_and_not_where_nothing_does():
    """A blob 2 pixels from its neighbours on each side: held back, the transport pre-image
    scores above every blend by more than the choice's margin (measured: 40.2 dB against 35.8
    for the rule's distance solver and 38.7 for the learned map), so it decodes and denoises
    by default. Frames of noise, in which nothing moves: it is not chosen."""
    moving = FrameModel(n_components=3).fit(np.stack([blob(x) for x in POSITIONS])).state_.solver_choice
    scores = moving.scores
    assert scores["transport"] >= scores["distance"] + MARGIN_DB + 1.0
    assert scores["transport"] >= max(score for name, score in scores.items() if name != "transport") + 0.5
    assert moving.solver == "transport" and moving.denoiser == "transport"
    noise = np.random.default_rng(0).integers(0, 256, size=(24, HEIGHT, WIDTH), dtype=np.uint8)
    assert FrameModel(n_components=3).fit(noise).state_.solver_choice.solver != "transport"


@pytest.mark.parametrize("kind", ["grey", "colour", "flow scaled up"])
def test_the_choice_forms_the_pre_images_it_scores_at_a_grid_of_their_pixels(kind, monkeypatch):
    """Prepared for scoring, the transport solver forms a pre-image at every s-th pixel each way
    (SCORED_PIXELS lowered to 64: s = 6 on 48 x 64 frames, 3 on 24 x 32, the largest that
    leaves 64 pixels): the decoded pre-image's values there, exactly
    where the flow is at the frame's size; within 0.1 grey level where it is computed on frames
    scaled up (a shorter side below FLOW_MIN_SIDE: the field read bilinearly at the pixels
    rather than scaled whole). The squared error from them is scaled to the whole frame."""
    from kpcacli.numerics import displacement
    from kpcacli.preimage.base import prepared_solver, scoring_solver

    frames = np.stack([blob(x, colour=kind == "colour") for x in POSITIONS])
    if kind == "flow scaled up":
        frames = frames[:, 12:36, 16:48]
    model = FrameModel(n_components=3).fit(frames[::2])
    state, codes = model.state_, model.encode(frames[1::2])
    monkeypatch.setattr(displacement, "SCORED_PIXELS", 64)
    scored, _ = scoring_solver(state, "transport"), monkeypatch.undo()
    decoding, _ = prepared_solver(state, "transport", None)
    height, width = frames.shape[1:3]
    step = 3 if kind == "flow scaled up" else 6
    for code in codes:
        sample, whole = scored.preimage(state, code), decoding.preimage(state, code)
        grid = len(range(step // 2, height, step)) * len(range(step // 2, width, step))
        assert len(sample.sampled) == grid * (3 if kind == "colour" else 1)
        difference = np.abs(sample.pixels - whole.pixels[sample.sampled])
        assert difference.max() <= (0.0 if kind != "flow scaled up" else 0.1)
        with pytest.raises(ValueError, match="some of its pixels only"):
            sample.vector(state)
