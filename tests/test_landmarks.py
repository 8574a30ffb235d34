"""Landmarks for long clips: choosing them, fitting on them, and what eval says they cost."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from kpcacli import FrameModel, ParameterError
from kpcacli.cli import main
from kpcacli.numerics.landmarks import choose_landmarks


def test_uniform_landmarks_span_the_clip():
    frames = np.zeros((100, 4))
    chosen = choose_landmarks(frames, 5, "uniform")
    assert chosen.tolist() == [0, 25, 50, 74, 99]
    assert choose_landmarks(frames, 200).tolist() == list(range(100))


def test_farthest_point_landmarks_cover_every_cluster():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    points = np.concatenate([c + rng.normal(0, 0.1, (50, 2)) for c in centres])
    chosen = choose_landmarks(points, 4, "farthest")
    assert sorted(set((chosen // 50).tolist())) == [0, 1, 2, 3]  # one landmark in each cluster
    assert chosen.tolist() == sorted(chosen.tolist())


@pytest.mark.parametrize(("count", "method"), [(1, "uniform"), (3, "random")])
def test_bad_landmark_requests(count, method):
    with pytest.raises(ParameterError):
        choose_landmarks(np.zeros((10, 2)), count, method)


def test_fit_on_landmarks_writes_codes_of_every_frame(hand, tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    for index, frame in enumerate(hand[::2, ::2, ::2]):
        Image.fromarray(frame).save(frames / f"f{index:02d}.png")
    runner = CliRunner()
    args = [
        "fit",
        str(frames),
        "-m",
        str(tmp_path / "m.npz"),
        "-k",
        "3",
        "--landmarks",
        "12",
        "--codes",
        str(tmp_path / "codes.npy"),
    ]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.stderr
    info = json.loads(runner.invoke(main, ["info", "-m", str(tmp_path / "m.npz"), "--json"]).stdout)
    assert info["frames"] == 12
    codes = np.load(tmp_path / "codes.npy")
    assert codes.shape == (35, 3)
    encoded = runner.invoke(main, ["encode", str(frames / "f10.png"), "-m", str(tmp_path / "m.npz")])
    np.testing.assert_allclose(np.loadtxt(encoded.stdout.splitlines()), codes[10], rtol=1e-9)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["codes.npy", "frames", "m.npz"]


@pytest.mark.slow
def test_eval_reports_the_cost_of_landmarks(hand):
    from kpcacli.workflows.evaluation import evaluate

    full = evaluate(hand[:, ::2, ::2], FrameModel(n_components=3), solvers=["log"], baselines=False)
    few = evaluate(hand[:, ::2, ::2], FrameModel(n_components=3), solvers=["log"], baselines=False, landmarks=10)
    assert len(few.train) == 10 and few.total == 70 and len(few.held_out) == 35
    assert few.scores[0].mean_psnr < full.scores[0].mean_psnr - 3.0  # 36.8 against 46.2 dB measured
