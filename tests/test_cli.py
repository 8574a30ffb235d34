"""The command line through click's CliRunner: every command over files and standard input."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import HAND, RBF_FRAME_SOLVERS, VIA_FILE_QUICK, ok, one_line_error, previous_model, run
from PIL import Image

from kpcacli.cli import main
from kpcacli.numerics.metrics import psnr


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The sample hand split as in the demo, and a k = 3 model fitted through the CLI."""
    root = tmp_path_factory.mktemp("cli")
    train = root / "train"
    train.mkdir()
    for path in sorted(HAND.glob("*.png"))[::2]:  # 35 frames keep the tests quick
        shutil.copy(path, train / path.name)
    shutil.copy(HAND / "hand_035.png", root / "held_out.png")
    result = CliRunner().invoke(main, ["fit", str(train), "-m", str(root / "model.npz"), "-k", "3", "-q"])
    assert result.exit_code == 0, result.output
    return root


def png_bytes(path) -> bytes:
    return (path).read_bytes()


def read_png(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)))


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_fit_from_files_and_standard_input(tmp_path, via):
    stack = np.stack([np.asarray(Image.open(p)) for p in sorted(HAND.glob("*.png"))[::5]])
    if via == "file":
        np.save(tmp_path / "stack.npy", stack)
        result = run(["fit", tmp_path / "stack.npy", "-m", tmp_path / "m.npz", "--eps", "0.5"])
    else:
        buffer = io.BytesIO()
        np.save(buffer, stack)
        result = run(["fit", "-", "-m", tmp_path / "m.npz", "--eps", "0.5"], input=buffer.getvalue())
    ok(result)
    assert "fitted 14 frames" in result.stderr
    info = json.loads(ok(run(["info", "-m", tmp_path / "m.npz", "--json"])).stdout)
    assert (
        info["frames"] == 14
        and info["frame_size"] == {"width": 320, "height": 180, "channels": 1}
        and info["kernel"] == "rbf"
    )


@pytest.mark.parametrize("via", ["file", "stdin"])
@pytest.mark.parametrize("suffix", [".npy", ".txt", ".csv"])
def test_encode_then_decode(workdir, tmp_path, via, suffix):
    model = workdir / "model.npz"
    held_out = workdir / "held_out.png"
    if via == "file":
        encoded = ok(run(["encode", held_out, "-m", model, "-o", tmp_path / f"codes{suffix}"]))
        assert encoded.stdout == ""
        decoded = ok(run(["decode", tmp_path / f"codes{suffix}", "-m", model, "-o", tmp_path / "back.png"]))
        back = np.asarray(Image.open(tmp_path / "back.png"))
    else:
        encoded = ok(run(["encode", "-", "-m", model], input=png_bytes(held_out)))
        codes = np.loadtxt(io.StringIO(encoded.stdout), ndmin=2)
        assert codes.shape == (1, 3)
        decoded = ok(run(["decode", "-", "-m", model, "-o", "-"], input=encoded.stdout_bytes))
        back = read_png(decoded.stdout_bytes)
    original = np.asarray(Image.open(held_out))
    assert back.shape == original.shape and back.dtype == np.uint8
    assert psnr(original, back) > 30.0


def test_encode_pipe_decode_equals_files(workdir, tmp_path):
    model, held_out = workdir / "model.npz", workdir / "held_out.png"
    ok(run(["encode", held_out, "-m", model, "-o", tmp_path / "codes.npy"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", model, "-o", tmp_path / "file.png"]))
    piped = ok(run(["encode", held_out, "-m", model]))
    ok(run(["decode", "-", "-m", model, "-o", tmp_path / "pipe.png"], input=piped.stdout_bytes))
    np.testing.assert_array_equal(
        np.asarray(Image.open(tmp_path / "file.png")), np.asarray(Image.open(tmp_path / "pipe.png"))
    )
    # Text codes carry 17 significant digits: the same codes as the .npy file.
    np.testing.assert_array_equal(np.loadtxt(io.StringIO(piped.stdout), ndmin=2), np.load(tmp_path / "codes.npy"))


def test_model_defaults_to_environment_variable(workdir, monkeypatch):
    monkeypatch.setenv("KPCA_MODEL", str(workdir / "model.npz"))
    assert json.loads(ok(run(["info", "--json"])).stdout)["k"] == 3


def test_video_in_codes_text_out_frames_folder(workdir, tmp_path):
    model = workdir / "model.npz"
    codes = ok(run(["encode", *sorted((workdir / "train").glob("*.png"))[:4], "-m", model, "-o", tmp_path / "c.npy"]))
    assert codes.exit_code == 0
    ok(run(["decode", tmp_path / "c.npy", "-m", model, "-o", tmp_path / "clip.mp4"]))
    ok(run(["encode", tmp_path / "clip.mp4", "-m", model, "-o", tmp_path / "codes.txt"]))
    assert np.loadtxt(tmp_path / "codes.txt").shape == (4, 3)
    ok(run(["decode", tmp_path / "codes.txt", "-m", model, "-o", f"{tmp_path / 'frames'}/"]))
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [f"{i:06d}.png" for i in range(4)]


def test_info_human_and_json(workdir):
    text = ok(run(["info", "-m", workdir / "model.npz"])).stdout
    for label in ("frames", "35 of 320x180 pixels", "kernel", "rbf (beta=", "k ", "eigenvalues"):
        assert label in text
    info = json.loads(ok(run(["info", "-m", workdir / "model.npz", "--json"])).stdout)
    assert info["k"] == 3 and 0 < info["explained_variance"] < 1 and len(info["eigenvalues"]) == 35  # all of them
    assert info["eigenvalues"] == sorted(info["eigenvalues"], reverse=True) and info["file_size"] > 0


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_compare_reports_psnr_and_mean_frame(workdir, tmp_path, via):
    ok(run(["encode", workdir / "held_out.png", "-m", workdir / "model.npz", "-o", tmp_path / "c.npy"]))
    ok(run(["decode", tmp_path / "c.npy", "-m", workdir / "model.npz", "-o", tmp_path / "back.png"]))
    if via == "stdin":
        result = ok(
            run(["compare", workdir / "held_out.png", "-", "--json"], input=(tmp_path / "back.png").read_bytes())
        )
        assert json.loads(result.stdout)["mean_psnr"] > 30.0
        return
    result = ok(
        run(
            [
                "compare",
                workdir / "held_out.png",
                tmp_path / "back.png",
                "-m",
                workdir / "model.npz",
                "-o",
                tmp_path / "side.png",
            ]
        )
    )
    assert "frames compared      1" in result.stdout and "mean training frame" in result.stdout
    with Image.open(tmp_path / "side.png") as side:
        assert side.size[0] > 2 * 320


def test_point_models_read_and_write_rows(tmp_path):
    rng = np.random.default_rng(0)
    angle = rng.uniform(0, np.pi, 80)
    points = np.c_[np.cos(angle), np.sin(angle)] + rng.normal(scale=0.05, size=(80, 2))
    np.savetxt(tmp_path / "train.csv", points, delimiter=",")
    ok(run(["fit", tmp_path / "train.csv", "-m", tmp_path / "toy.npz", "--beta", "2", "-k", "2"]))
    codes = ok(run(["encode", tmp_path / "train.csv", "-m", tmp_path / "toy.npz"]))
    ok(run(["decode", "-", "-m", tmp_path / "toy.npz", "-o", tmp_path / "back.csv"], input=codes.stdout_bytes))
    back = np.loadtxt(tmp_path / "back.csv", delimiter=",", skiprows=1)  # the names row x0,x1
    assert back.shape == (80, 2)
    assert np.mean(np.linalg.norm(back - points, axis=1)) < 0.15


@pytest.mark.parametrize(
    "command", ["fit", "encode", "decode", "info", "compare", "eval", "denoise", "sweep", "plot components"]
)
def test_every_command_has_help_with_an_example(command):
    text = ok(run([*command.split(), "--help"])).stdout
    assert "Example" in text and f"kpca {command}" in text


def test_python_dash_m_runs_the_cli():
    result = subprocess.run([sys.executable, "-m", "kpcacli", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "encode" in result.stdout


# -- bad input: one line on standard error, status 1 or 2, nothing written ------------------
def test_missing_source(tmp_path):
    one_line_error(run(["fit", tmp_path / "nope", "-m", tmp_path / "m.npz"]), 1, "nope", "does not exist")
    assert not (tmp_path / "m.npz").exists()


def test_empty_folder_and_folder_without_images(tmp_path):
    (tmp_path / "empty").mkdir()
    one_line_error(run(["fit", tmp_path / "empty", "-m", tmp_path / "m.npz"]), 1, "is empty")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "readme.txt").write_text("hi")
    one_line_error(run(["fit", tmp_path / "docs", "-m", tmp_path / "m.npz"]), 1, "no images")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "empty"]


def test_mixed_frame_sizes_name_the_file_and_leave_the_old_model(workdir, tmp_path):
    frames = tmp_path / "frames"
    frames.mkdir()
    for name in ("f1.png", "f2.png"):
        shutil.copy(workdir / "held_out.png", frames / name)
    Image.new("L", (100, 50)).save(frames / "f3.png")
    model = tmp_path / "m.npz"
    before = previous_model(model)
    one_line_error(run(["fit", frames, "-m", model]), 1, "f3.png", "100x50", "--resize")
    assert model.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frames", "m.npz"]  # no store, no temp file
    ok(run(["fit", frames, "-m", model, "--resize", "64x36", "-k", "1"]))
    # encode needs the same --resize, and its message gives the value (it said "use --resize")
    one_line_error(run(["encode", frames / "f1.png", "-m", model]), 1, "f1.png", "--resize 64x36")
    ok(run(["encode", frames / "f1.png", "-m", model, "--resize", "64x36"]))


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_wrong_code_width(workdir, tmp_path, via):
    out = tmp_path / "back.png"
    if via == "file":
        (tmp_path / "codes.txt").write_text("1 2\n")
        result = run(["decode", tmp_path / "codes.txt", "-m", workdir / "model.npz", "-o", out])
    else:
        result = run(["decode", "-", "-m", workdir / "model.npz", "-o", out], input=b"1 2\n")
    one_line_error(result, 1, "2 columns", "k = 3")
    assert not out.exists()


@pytest.mark.parametrize("command", [["encode", "x.png"], ["decode", "c.npy"], ["info"]])
def test_missing_model(tmp_path, command, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Image.new("L", (8, 8)).save(tmp_path / "x.png")
    np.save(tmp_path / "c.npy", np.zeros((1, 3)))
    one_line_error(run([*command, "-m", "absent.npz"]), 1, "absent.npz", "does not exist")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["-k", "0"], "k must be"),
        (["-k", "99"], "at most the number of frames"),
        (["--eps", "1.5"], "eps must be"),
        (["-k", "2", "--eps", "0.5"], "not both"),
        (["--beta", "-1"], "beta must be"),
        (["--beta", "nan"], "beta must be"),
        (["--kernel", "cubic"], "cubic"),
        (["--resize", "big"], "WxH"),
    ],
)
def test_bad_fit_options_are_usage_errors(workdir, tmp_path, args, fragment):
    one_line_error(run(["fit", workdir / "train", "-m", tmp_path / "m.npz", *args]), 2, fragment)
    assert not (tmp_path / "m.npz").exists()


def test_output_in_missing_folder_and_too_many_frames_for_one_image(workdir, tmp_path):
    np.save(tmp_path / "c.npy", np.zeros((2, 3)))
    one_line_error(
        run(["decode", tmp_path / "c.npy", "-m", workdir / "model.npz", "-o", tmp_path / "no" / "x.png"]),
        1,
        "does not exist",
    )
    one_line_error(
        run(["decode", tmp_path / "c.npy", "-m", workdir / "model.npz", "-o", tmp_path / "x.png"]),
        1,
        "2 frames",
        "one image",
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.npy"]


def test_damaged_model_is_one_line(tmp_path):
    (tmp_path / "m.npz").write_bytes(b"PK\x03\x04 garbage")
    one_line_error(run(["info", "-m", tmp_path / "m.npz"]), 1, "m.npz")


def test_empty_codes(workdir, tmp_path):
    (tmp_path / "c.txt").write_text("")
    one_line_error(run(["decode", tmp_path / "c.txt", "-m", workdir / "model.npz"]), 1, "empty")


# -- kpca eval ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def quarter_hand(tmp_path_factory):
    """24 frames of the sample hand at a quarter size, as a .npy stack."""
    frames = np.stack([np.asarray(Image.open(p))[::4, ::4] for p in sorted(HAND.glob("*.png"))[::3]])
    path = tmp_path_factory.mktemp("eval") / "hand.npy"
    np.save(path, frames)
    return path


@pytest.mark.parametrize("via", VIA_FILE_QUICK)
def test_eval_prints_one_table_with_baselines(quarter_hand, via, monkeypatch):
    from kpcacli.workflows import evaluation

    monkeypatch.setattr(evaluation, "SOLVER_SECONDS", float("inf"))  # every solver, however loaded the machine
    if via == "file":
        result = ok(run(["eval", quarter_hand, "-k", "3", "-q"]))
    else:
        result = ok(run(["eval", "-", "-k", "3", "-q"], input=quarter_hand.read_bytes()))
    lines = result.stdout.splitlines()
    assert "24 frames: 12 train, 12 held out" in lines[0] and "k = 3" in lines[0]
    assert lines[1].startswith("default solver auto: ")  # what the model chose, and its scores
    chosen = lines[1].split()[3].rstrip(",")
    header = lines[3].split()
    assert header[:2] == ["method", "mean"] and "ms/frame" in header
    methods = [line.split()[0] for line in lines[4:]]
    assert methods[0] == chosen  # the default first, then the others by name
    assert sorted(methods[:8]) == RBF_FRAME_SOLVERS
    assert methods[8:] == ["linear", "oracle"] and methods[1:8] == sorted(methods[1:8])


@pytest.mark.slow
def test_eval_leaves_out_slow_solvers_of_the_default_set_and_says_so(quarter_hand, monkeypatch):
    """A solver projected (from its first two solves) to take longer than the limit is left out
    of the default set with a note naming it; named with --solver, it runs whatever it costs."""
    from kpcacli.workflows import evaluation

    monkeypatch.setattr(evaluation, "SOLVER_SECONDS", 0.0)
    result = ok(run(["eval", quarter_hand, "-k", "3"]))
    methods = [line.split()[0] for line in result.stdout.splitlines()[4:]]
    assert methods == ["linear", "oracle"]
    notes = [line for line in result.stderr.splitlines() if "left out" in line]
    assert len(notes) == 8 and all("would take about" in note and "add --solver" in note for note in notes)
    named = ok(run(["eval", quarter_hand, "-k", "3", "--solver", "gradient"]))
    assert [line.split()[0] for line in named.stdout.splitlines()[4:]] == ["gradient", "linear", "oracle"]


def test_eval_json_and_chosen_solvers(quarter_hand):
    result = ok(run(["eval", quarter_hand, "-k", "2", "--solver", "log", "--solver", "nearest", "--json"]))
    report = json.loads(result.stdout)
    assert report["k"] == 2 and report["held_out"] == 12
    methods = [row["method"] for row in report["results"]]
    assert methods == ["log", "nearest", "linear PCA", "oracle"]
    log = report["results"][0]
    assert log["mean_psnr"] >= log["worst_psnr"] and 0 < log["mean_ssim"] <= 1 and log["ms_per_frame"] > 0
    assert len(log["psnr"]) == 12


@pytest.mark.slow
def test_eval_middle_holdout_and_report(quarter_hand, tmp_path):
    result = ok(
        run(
            ["eval", quarter_hand, "-k", "3", "--holdout", "middle", "--solver", "log", "--report", tmp_path / "report"]
        )
    )
    assert "23 train, 1 held out" in result.stdout
    files = sorted(p.name for p in (tmp_path / "report").iterdir())
    # One held-out frame: one picture per method, not a median and a worst that are the same.
    assert files == ["codes.png", "linear-PCA.png", "log.png", "oracle.png"]
    with Image.open(tmp_path / "report" / "log.png") as picture:
        pixels = np.asarray(picture)
    assert picture.size[0] > 3 * 80  # original | reconstruction | error
    caption = pixels[:8]  # the white band above the pictures holds dark text
    assert caption.max() == 255 and caption.min() < 64


def test_eval_leaves_frames_decoded_exactly_out_of_the_mean_and_says_so(tmp_path):
    """A held-out frame equal to a training frame (a camera that stood still) decodes exactly:
    its infinite PSNR is left out of the mean, the table says how many, and JSON holds null
    where strict JSON has no infinity."""
    frames = sorted(HAND.glob("*.png"))[:12]
    clip = tmp_path / "clip"
    clip.mkdir()
    for index, path in enumerate(frames):
        shutil.copy(frames[0] if index == 1 else path, clip / f"f{index:02d}.png")  # frame 1 = frame 0
    text = ok(run(["eval", clip, "-k", "3", "--solver", "nearest", "-q"])).stdout
    nearest = next(line for line in text.splitlines() if line.startswith("nearest"))
    assert "1 exact, left out of the mean" in nearest and "inf" not in nearest
    document = json.loads(ok(run(["eval", clip, "-k", "3", "--solver", "nearest", "-q", "--json"])).stdout)
    scores = next(result for result in document["results"] if result["method"] == "nearest")
    assert scores["psnr"][0] is None and np.isfinite(scores["mean_psnr"])


def test_eval_report_pictures_are_distinct_and_captioned(quarter_hand, tmp_path):
    ok(run(["eval", quarter_hand, "-k", "3", "--solver", "nearest", "--report", tmp_path / "r"]))
    median = np.asarray(Image.open(tmp_path / "r" / "nearest_median.png"))
    worst = np.asarray(Image.open(tmp_path / "r" / "nearest_worst.png"))
    below = 20  # the caption band is above
    assert not np.array_equal(median[below:, : 3 * 80], worst[below:, : 3 * 80])
    assert median[:8].min() < 64 and worst[:8].min() < 64


@pytest.mark.slow
def test_eval_report_sets_the_blend_beside_the_transport_pre_image(quarter_hand, tmp_path):
    """With the transport solver scored beside another, the report shows the frame the other
    decodes worst as original | its pre-image | the transport pre-image; without it, no such
    picture. Transport first (the model's choice) wrote none: now the best-scoring other solver
    is set beside it."""
    ok(
        run(
            [
                "eval",
                quarter_hand,
                "-k",
                "3",
                "--solver",
                "distance",
                "--solver",
                "transport",
                "--report",
                tmp_path / "r",
            ]
        )
    )
    picture = np.asarray(Image.open(tmp_path / "r" / "distance_against_transport.png"))
    panel_width = 80  # the quarter hand's frames
    assert picture.shape[1] >= 3 * panel_width and picture[:8].min() < 64  # three panels, a title
    ok(run(["eval", quarter_hand, "-k", "3", "--solver", "distance", "--report", tmp_path / "alone"]))
    assert not list((tmp_path / "alone").glob("*against*"))
    # Transport first (as when it is the model's choice): the best-scoring other solver beside it.
    ok(run(["eval", quarter_hand, "-k", "3", "--solver", "transport", "--solver", "nearest", "--solver", "distance",
            "--report", tmp_path / "first", "--json", "-q"]))  # fmt: skip
    table = json.loads(ok(run(["eval", quarter_hand, "-k", "3", "--solver", "nearest", "--solver", "distance",
                               "--json", "-q"])).stdout)["results"]  # fmt: skip
    best = max((row for row in table if row["method"] in ("nearest", "distance")), key=lambda row: row["mean_psnr"])
    assert [path.name for path in (tmp_path / "first").glob("*against*")] == [f"{best['method']}_against_transport.png"]


@pytest.mark.parametrize("width", [320, 1920])
def test_each_panel_is_named_above_it_in_letters_that_grow_with_the_frame(width):
    """eval --report and compare -o: a title over the three panels and each panel's name over
    it, in letters of 1/40 of the frame's width (14 at least): 14 pixels over a 320-pixel frame,
    48 over a 1080p one; the panels themselves unchanged below."""
    from kpcacli.workflows.report import label_size, labelled_triptych

    height = width * 9 // 16
    original = np.tile(np.linspace(60, 200, width).astype(np.uint8), (height, 1))
    other = original[:, ::-1].copy()
    picture = labelled_triptych(original, other, "a title", ("first", "second", "third"))
    bands = picture.shape[0] - height
    assert label_size(width) == max(14, width // 40) and bands >= 2 * label_size(width)
    np.testing.assert_array_equal(picture[bands:, :width], original)
    gap = max(2, width // 100)
    title, names = picture[: bands // 2], picture[bands // 2 : bands]
    assert title.min() < 64
    for panel in range(3):
        left = panel * (width + gap)
        assert names[:, left : left + width].min() < 64, panel  # a name over every panel


@pytest.mark.parametrize(
    ("command", "output"),
    [(["eval"], ["--report", "r"]), (["sweep"], ["--plot", "sw.png"]), (["plot", "components"], ["-o", "c.png"])],
    ids=["eval", "sweep", "plot"],
)
def test_a_plot_asked_for_without_matplotlib_is_one_line_and_nothing_runs(
    command, output, quarter_hand, tmp_path, monkeypatch
):
    """eval --report, sweep --plot and plot components alike: exit 1, the install hint, no
    picture and no table (sweep --plot exited 0 with no file, eval --report wrote a report
    without its code plot)."""
    import builtins

    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    points = tmp_path / "points.csv"
    np.savetxt(points, np.random.default_rng(0).normal(size=(30, 2)), delimiter=",")
    ok(run(["fit", points, "-m", tmp_path / "p.npz", "-k", "2", "-q"]))
    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    inputs = ["-m", tmp_path / "p.npz"] if command[0] == "plot" else [quarter_hand, "-k", "3", "-q"]
    result = run([*command, *inputs, output[0], tmp_path / output[1]])
    one_line_error(result, 1, "pip install 'kpcacli[plot]'")
    assert result.stdout == "" and not (tmp_path / output[1]).exists()


def test_eval_refuses_a_solver_that_does_not_apply(quarter_hand):
    one_line_error(run(["eval", quarter_hand, "-k", "3", "--center", "--solver", "log"]), 1, "uncentred")


# -- kpca denoise, sweep, plot components --------------------------------------------------
@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """The three sources of Schölkopf et al. (1998): training and noisy test points as .csv, a centred model."""
    root = tmp_path_factory.mktemp("toy")
    rng = np.random.default_rng(0)
    sources = np.array([[-0.5, -0.1], [0.0, 0.7], [0.5, 0.1]])
    np.savetxt(root / "train.csv", np.concatenate([s + rng.normal(0, 0.1, (100, 2)) for s in sources]), delimiter=",")
    noisy = np.concatenate([s + rng.normal(0, 0.1, (20, 2)) for s in sources])
    np.savetxt(root / "noisy.csv", noisy, delimiter=",")
    ok(
        run(
            [
                "fit",
                root / "train.csv",
                "-m",
                root / "toy.npz",
                "--kernel",
                "rbf",
                "--beta",
                "10",
                "-k",
                "2",
                "--center",
            ]
        )
    )
    return root, np.repeat(sources, 20, axis=0), noisy


@pytest.mark.parametrize("via", ["file", "stdin"])
@pytest.mark.parametrize("solver", ["fixed-point", "gradient"])
def test_denoise_points_keeps_the_format(toy, tmp_path, via, solver):
    root, truth, noisy = toy
    if via == "file":
        ok(
            run(
                [
                    "denoise",
                    root / "noisy.csv",
                    "-m",
                    root / "toy.npz",
                    "-o",
                    tmp_path / "clean.csv",
                    "--solver",
                    solver,
                ]
            )
        )
        clean = np.loadtxt(tmp_path / "clean.csv", delimiter=",", skiprows=1)
    else:
        result = ok(
            run(["denoise", "-", "-m", root / "toy.npz", "--solver", solver], input=(root / "noisy.csv").read_bytes())
        )
        clean = np.loadtxt(io.StringIO(result.stdout))
    assert clean.shape == noisy.shape
    before = np.mean(np.linalg.norm(noisy - truth, axis=1))
    after = np.mean(np.linalg.norm(clean - truth, axis=1))
    assert after < 0.5 * before


def test_denoise_csv_to_stdout_stays_csv(toy):
    root, _, _ = toy
    result = ok(run(["denoise", root / "noisy.csv", "-m", root / "toy.npz"]))
    assert "," in result.stdout.splitlines()[0]


def test_denoise_images_to_a_folder(workdir, tmp_path):
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    rng = np.random.default_rng(1)
    originals = []
    for i, path in enumerate(sorted((workdir / "train").glob("*.png"))[:3]):
        frame = np.asarray(Image.open(path), dtype=np.float64)
        originals.append(frame)
        Image.fromarray(np.clip(np.rint(frame + rng.normal(0, 20, frame.shape)), 0, 255).astype(np.uint8)).save(
            noisy / f"n{i}.png"
        )
    ok(run(["denoise", noisy, "-m", workdir / "model.npz", "-o", f"{tmp_path / 'clean'}/"]))
    cleaned = [np.asarray(Image.open(tmp_path / "clean" / f"n{i}.png")) for i in range(3)]  # names kept
    for original, frame, i in zip(originals, cleaned, range(3)):
        noisy_frame = np.asarray(Image.open(noisy / f"n{i}.png"))
        assert psnr(original.astype(np.uint8), frame) > psnr(original.astype(np.uint8), noisy_frame) + 5


def test_denoise_reports_solves_that_did_not_converge(toy, monkeypatch):
    from kpcacli.preimage import fixed_point

    monkeypatch.setattr(fixed_point, "MAX_ITERATIONS", 1)
    root, _, _ = toy
    result = ok(run(["denoise", root / "noisy.csv", "-m", root / "toy.npz", "-o", "-"]))
    assert "did not converge" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_sweep_table_marks_the_best_beta(toy, via):
    root, _, _ = toy
    args = ["sweep", "-k", "2", "-k", "4", "--beta-range", "1:100:5", "--noise", "0.1"]
    if via == "file":
        result = ok(run([*args, root / "train.csv"]))
    else:
        result = ok(run([*args, "-"], input=(root / "train.csv").read_bytes()))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("denoising: mean distance")
    assert lines[2].split() == ["beta", "k", "=", "2", "k", "=", "4"]
    assert sum("*" in line for line in lines[3:8]) == 1
    assert lines[-1].startswith("best: beta = ")


@pytest.mark.slow
def test_a_sweep_of_points_decodes_with_each_model_s_measured_choice(tmp_path, monkeypatch):
    """90 points of 10 values (the --help example): without --solver each (β, k) model decodes
    with the solver it measures best (auto), as decode would, not the centred models' rule,
    the discrepancy solver (9,180 L-BFGS-B runs to a tolerance of 1e-15 for the default
    grid), which is never called; the table is the one --solver auto gives (which was refused)."""
    from kpcacli.preimage.discrepancy import DiscrepancySolver

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 10))
    points = np.concatenate([centre + 0.1 * rng.normal(size=(30, 10)) for centre in centres])
    np.savetxt(tmp_path / "points.csv", points, delimiter=",")

    def refused(*args, **kwargs):
        raise AssertionError("the discrepancy solver was called")

    monkeypatch.setattr(DiscrepancySolver, "solve", refused)
    args = ["sweep", tmp_path / "points.csv", "-k", "2", "-k", "4", "--beta-range", "0.01:1:3", "--json"]
    default = json.loads(ok(run(args)).stdout)
    assert default["rows"] == json.loads(ok(run([*args, "--solver", "auto"])).stdout)["rows"]
    assert len(default["rows"]) == 6


def test_sweep_json_and_plot(toy, tmp_path):
    root, _, _ = toy
    result = ok(
        run(
            ["sweep", root / "train.csv", "-k", "2", "--beta-range", "1:100:4", "--holdout", "middle"]
            + ["--json", "--plot", tmp_path / "s.png"]
        )
    )
    report = json.loads(result.stdout)
    assert len(report["rows"]) == 4 and report["measure"] == "mean_distance"
    assert report["best"]["mse"] == min(row["mse"] for row in report["rows"])
    assert (tmp_path / "s.png").stat().st_size > 0
    said = result.stderr.strip().splitlines()
    assert said[-1] == f"wrote the error against β -> {tmp_path / 's.png'}"  # says what it wrote
    assert all(line.startswith("Warning: the best beta") for line in said[:-1])  # here at the edge of 1:100


@pytest.mark.slow
def test_plot_components(toy, tmp_path):
    root, _, _ = toy
    ok(run(["plot", "components", "-m", root / "toy.npz", "-o", tmp_path / "levels.png", "-n", "5"]))
    with Image.open(tmp_path / "levels.png") as picture:
        assert picture.size[0] > 500


def test_plot_components_needs_2d_points(workdir, tmp_path):
    one_line_error(run(["plot", "components", "-m", workdir / "model.npz", "-o", tmp_path / "x.png"]), 1, "2-D points")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("bad", ["1:2", "0:1:3", "a:b:c", "5:1:3"])
def test_sweep_bad_beta_range_is_a_usage_error(toy, bad):
    root, _, _ = toy
    one_line_error(run(["sweep", root / "train.csv", "--beta-range", bad]), 2, "LO:HI:N")


def test_eval_scores_points_by_distance(toy):
    root, _, _ = toy
    result = ok(run(["eval", root / "train.csv", "-k", "2", "--center", "--solver", "fixed-point", "--json"]))
    report = json.loads(result.stdout)
    rows = {row["method"]: row for row in report["results"]}
    assert set(rows["fixed-point"]) >= {"mean_distance", "worst_distance", "ms_per_frame"}
    assert "mean_psnr" not in rows["fixed-point"]
    assert rows["linear PCA"]["mean_distance"] < 1e-9  # 2-D points, k = 2: linear PCA is exact
    table = ok(run(["eval", root / "train.csv", "-k", "2", "--center", "--solver", "nearest"])).stdout
    assert "300 samples" in table and "mean distance" in table


@pytest.mark.parametrize("kind", ["directory", "url"])
def test_a_model_directory_or_url_works_with_every_command(tmp_path, kind):
    location = str(tmp_path / "hand.zarr") if kind == "directory" else f"file://{tmp_path}/hand.zarr"
    frames = sorted(HAND.glob("*.png"))[::7]
    ok(run(["fit", *frames, "-m", location, "-k", "2", "-q"]))
    assert "format 3" in ok(run(["info", "-m", location])).output
    ok(run(["encode", frames[3], "-m", location, "-o", tmp_path / "codes.npy"]))
    ok(run(["decode", tmp_path / "codes.npy", "-m", location, "-o", tmp_path / "back.png"]))
    with Image.open(tmp_path / "back.png") as back, Image.open(frames[3]) as original:
        assert back.size == original.size
    one_line_error(run(["info", "-m", tmp_path]), 1, "is a folder, not a kpca model")
