"""What a new user met on a fresh clone and real footage, each found by running it: every
figure a command prints true, every output named as the user named it, one line for every
mistake, and files that round-trip with the tools beside kpca (pandas)."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run

from kpcacli import FrameModel


@pytest.fixture(scope="module")
def small_hand_model(tmp_path_factory):
    """A model of the sample hand's first 12 frames, k = 2."""
    path = tmp_path_factory.mktemp("stranger") / "hand.npz"
    ok(run(["fit", HAND, "--frames", "0:12", "-k", "2", "-q", "-m", path]))
    return path


def test_eval_times_the_whole_frame_not_only_the_solve(hand, monkeypatch):
    """ms/frame is what a frame's decode costs: a blend's weighted sum of training frames is
    formed after its solve, and is counted (here made to take at least 20 ms for the frames)."""
    from kpcacli.workflows import evaluation

    pause, formed = 0.02, evaluation.preimage_frames

    def formed_slowly(state, preimages):
        time.sleep(pause)
        return formed(state, preimages)

    monkeypatch.setattr(evaluation, "preimage_frames", formed_slowly)
    result = evaluation.evaluate(hand[:12, ::4, ::4], FrameModel(n_components=3), solvers=["distance"], baselines=False)
    assert result.scores[0].milliseconds >= 1000.0 * pause / len(result.held_out)


UNWRITABLE = Path("/proc")  # a folder no process can create a file in, root included


@pytest.mark.skipif(not (UNWRITABLE / "self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize(
    "command",
    [
        ["fit", HAND, "--frames", "0:6", "-k", "2", "-q", "-m", "{out}/o.npz"],
        ["fit", HAND, "--frames", "0:6", "-k", "2", "-q", "-m", "{out}/o.zarr/"],
        ["encode", HAND / "hand_001.png", "-m", "{model}", "-o", "{out}/c.npy"],
        ["encode", HAND / "hand_001.png", "-m", "{model}", "-o", "{out}/c.txt"],
        ["extract", HAND, "--frames", "0:2", "-o", "{out}/e.mp4"],
        ["extract", HAND, "--frames", "0:2", "-o", "{out}/e/"],
        ["denoise", HAND / "hand_001.png", "-m", "{model}", "-o", "{out}/d.png"],
        ["eval", HAND, "--frames", "0:12", "-k", "2", "-q", "--report", "{out}/r/"],
    ],
    ids=lambda command: " ".join(str(part) for part in command[:1] + command[-1:]),
)
def test_an_unwritable_output_is_named_as_the_user_gave_it(command, small_hand_model):
    """Not kpca's temporary file beside it (".kpca-store-….tmp", ".c.….tmp.npy"), and before
    any frame is read."""
    args = [str(part).format(out=UNWRITABLE, model=small_hand_model) for part in command]
    target = args[args.index("-m" if command[0] == "fit" else "-o" if "-o" in args else "--report") + 1]
    result = run(args)
    one_line_error(result, 1, f"cannot write '{target.rstrip('/')}'")
    assert ".tmp" not in result.stderr and ".kpca-" not in result.stderr


def test_kpca_alone_prints_its_help_as_help():
    """Not the whole help squashed into one "Error: Usage: …" line of 1,300 characters with
    exit 2: the help, as --help prints it, and exit 0."""
    alone, asked = run([]), run(["--help"])
    assert alone.exit_code == 0 and alone.stderr == ""
    assert alone.stdout == asked.stdout and alone.stdout.count("\n") > 20 and "Commands:" in alone.stdout
    plot = run(["plot"])
    assert plot.exit_code == 0 and "plot [OPTIONS] COMMAND" in plot.stdout.splitlines()[0]


def test_every_command_that_writes_takes_quiet():
    """-q wherever a command that reads frames writes an output (extract had none); plots draw
    at once, with no progress bar to silence."""
    import click

    from kpcacli.cli import main

    def commands(group, prefix=()):
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                yield from commands(command, (*prefix, name))
            else:
                yield " ".join((*prefix, name)), command

    writing = {
        name: command
        for name, command in commands(main)
        if any(p.name == "output" for p in command.params) and not name.startswith("plot ")
    }
    assert "extract" in writing and len(writing) >= 8
    assert [name for name, command in writing.items() if not any(p.name == "quiet" for p in command.params)] == []


def test_codes_as_csv_round_trip_with_pandas(small_hand_model, tmp_path):
    """kpca's CSV codes start with a row naming their columns, which pandas reads as its header
    (a "# kpca…" line was read as the header); codes pandas wrote, with named or numbered
    columns, decode as kpca's own do. kpca replaces its own CSV (and one of the same names and
    numbers, which no mark tells from it), not a user's table."""
    pd = pytest.importorskip("pandas")
    model, own, npy = small_hand_model, tmp_path / "own.csv", tmp_path / "own.npy"
    for target in (own, npy):
        ok(run(["encode", HAND, "--frames", "0:4", "-m", model, "-o", target, "-q"]))
    # pandas 3 reads floats exactly by default (and deprecates asking); before, only when asked.
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    frame = pd.read_csv(own, **exact)
    assert list(frame.columns) == ["z0", "z1"] and np.array_equal(frame.to_numpy(), np.load(npy))
    frame.to_csv(tmp_path / "named.csv", index=False)
    pd.DataFrame(frame.to_numpy()).to_csv(tmp_path / "numbered.csv", index=False)  # header 0,1
    decoded = {}
    for name in ("own.npy", "own.csv", "named.csv", "numbered.csv"):
        ok(run(["decode", tmp_path / name, "-m", model, "-o", tmp_path / f"{name}.npy", "-q"]))
        decoded[name] = np.load(tmp_path / f"{name}.npy")
    assert all(np.array_equal(values, decoded["own.npy"]) for values in decoded.values())
    ok(run(["encode", HAND, "--frames", "0:2", "-m", model, "-o", own, "-q"]))  # its own: replaced
    assert len(pd.read_csv(own)) == 2
    pd.DataFrame(frame.to_numpy(), columns=["width", "height"]).to_csv(tmp_path / "mine.csv", index=False)
    refused = run(["encode", HAND, "--frames", "0:2", "-m", model, "-o", tmp_path / "mine.csv", "-q"])
    assert refused.exit_code != 0 and "--force" in refused.stderr  # a user's table: kept
    assert pd.read_csv(tmp_path / "mine.csv").shape == (4, 2)


def test_kernel_pca_without_scikit_learn_says_what_to_install():
    """One message naming the extra, not a bare ModuleNotFoundError from deep in the import;
    FrameModel and the command line need no scikit-learn."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "sys.modules['sklearn'] = None  # as where scikit-learn is not installed\n"
        "import kpcacli\n"
        "from kpcacli import FrameModel\n"
        "try:\n"
        "    from kpcacli import KernelPCA\n"
        "except ImportError as error:\n"
        "    print(type(error).__name__, error.__cause__ is None, error)\n"
    )
    shown = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert shown.startswith("ImportError True kpcacli.KernelPCA needs scikit-learn")
    assert shown.endswith("pip install 'kpcacli[sklearn]'") and "\n" not in shown


def test_ctrl_c_while_kpca_starts_is_one_line_and_exit_130():
    """Ctrl-C while numpy, click and the commands load printed a traceback of some forty lines,
    exit -2. The console script's module loads none of them before its
    handler is in place (its window is the interpreter's own start), and an interrupt inside
    that import is the line every later interrupt gives. The interrupt is raised by the import
    of numpy itself, so that no timing decides the test."""
    import subprocess
    import sys

    light = subprocess.run(
        [sys.executable, "-c", "import sys, kpcacli.cli.entry; print(sorted({'numpy', 'click'} & set(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert light.stdout.strip() == "[]"
    script = (
        "import sys\n"
        "class Interrupting:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupting())\n"
        "sys.argv = ['kpca', 'fit', 'frames/', '-m', 'm.npz']\n"
        "from kpcacli.cli.entry import run\n"
        "run()\n"
    )
    interrupted = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert interrupted.returncode == 130 and interrupted.stderr == "Error: interrupted\n"


def test_a_colour_gif_says_it_is_not_exact(tmp_path):
    """decode --help said ".gif is always lossless"; a colour GIF is a palette of 256 colours a
    frame. The help says so, and writing one warns once; a grey GIF stays exact and silent."""
    colour_clip = HAND.parent / "hand_colour.mp4"
    colour = ok(run(["extract", colour_clip, "--colour", "--frames", "0:3", "-o", tmp_path / "c.gif"]))
    warned = [line for line in colour.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warned) == 1 and "256 colours" in warned[0]
    grey = ok(run(["extract", colour_clip, "--frames", "0:3", "-o", tmp_path / "g.gif"]))
    assert "Warning" not in grey.stderr
    helped = " ".join(ok(run(["decode", "--help"])).stdout.split())
    assert ".gif is lossless for grey frames and a palette of 256 colours" in helped


def test_grey_frames_fitted_in_colour_are_told_so(tmp_path):
    """castel's PGMs with --colour made a model of three times the values, silently: a warning
    says the frames are grey; colour footage gets none."""
    ok(run(["extract", HAND, "--frames", "0:8", "--colour", "-o", tmp_path / "grey_rgb.mkv"]))
    fitted = ok(run(["fit", tmp_path / "grey_rgb.mkv", "--colour", "-k", "2", "-q", "-m", tmp_path / "g.npz"]))
    warned = [line for line in fitted.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warned) == 1 and "the frames are grey" in warned[0] and "--colour" in warned[0]
    colour_clip = HAND.parent / "hand_colour.mp4"
    colour = ok(run(["fit", colour_clip, "--colour", "--frames", "0:8", "-k", "2", "-q", "-m", tmp_path / "c.npz"]))
    assert "Warning" not in colour.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["encode", HAND / "hand_001.png", "-m", "{model}", "-o", "-1"],
        ["fit", HAND, "--frames", "0:6", "-k", "2", "-m", "{out}/m.npz", "--codes", "-0.5"],
        ["decode", "{out}/codes.npy", "-m", "{model}", "-o", "-2"],
    ],
    ids=["encode", "fit --codes", "decode"],
)
def test_an_output_named_like_a_negative_number_is_refused(command, small_hand_model, tmp_path, monkeypatch):
    """predict --std -1 wrote a file named -1 and exited 0: a value that missed its option. It
    is refused before any work; ./-1 still names such a file."""
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "codes.npy", np.zeros((1, 2)))
    args = [str(part).format(model=small_hand_model, out=tmp_path) for part in command]
    one_line_error(run(args), 2, "names a file after a negative number", f"./{args[-1]}")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["codes.npy"]


def test_sweep_says_when_its_best_beta_is_at_the_edge_and_its_plot_says_what_it_shows(hand, tmp_path, monkeypatch):
    """A best β at the end of the range tried gets a warning naming --beta-range (on castle
    the lowest was best, and a refit beyond it gained 0.5 dB) and best_at_edge in the JSON;
    one inside gets neither. The plot's axis has its unit, and its title the solver."""
    import json

    edge = ok(run(["sweep", HAND, "--frames", "::3", "-k", "2", "--beta-range", "1e-10:1e-9:3", "-q", "--json"]))
    warned = [line for line in edge.stderr.splitlines() if line.startswith("Warning:")]
    assert len(warned) == 1 and "is the highest tried" in warned[0] and "--beta-range" in warned[0]
    assert json.loads(edge.stdout)["best_at_edge"] == "highest"
    inside = ok(run(["sweep", HAND, "--frames", "::3", "-k", "2", "--beta-range", "1e-9:1e-8:3", "-q", "--json"]))
    assert "Warning" not in inside.stderr and json.loads(inside.stdout)["best_at_edge"] is None

    from kpcacli.workflows import plots, report

    plt = report.require_matplotlib()
    shown = {}
    monkeypatch.setattr(plt, "close", lambda figure: shown.setdefault("axis", figure.axes[0]))
    from kpcacli.workflows.sweep import sweep

    result = sweep(hand[::3], ks=[2], betas=[1e-9, 3e-9])
    plots.plot_sweep(result, tmp_path / "sw.png")
    axis = shown["axis"]
    assert axis.get_ylabel() == "mean PSNR (dB)" and f"solver: {result.solvers}" in axis.get_title()
    assert result.solvers in {row.solver for row in result.rows} or "measured choice" in result.solvers


def test_a_share_reads_as_neither_none_nor_all_unless_it_is():
    """reconstruct --sensors with 40 sensors said "100.0% of the values hidden"."""
    from kpcacli.utils.checks import percent

    assert percent(1 - 40 / 307_200) == "99.99%" and percent(40 / 307_200) == "0.01%"
    assert percent(1.0) == "100.0%" and percent(0.0) == "0.0%" and percent(0.926) == "92.6%"
    assert percent(1 - 1e-12) != "100.0%"


def test_k_may_be_n_for_an_uncentred_gram_whose_rank_is_n(hand, tmp_path):
    """-k equal to n was refused for the uncentred Gram too, whose rank is n: a model of every
    component fits, saves, loads and decodes; centred, k stays below n (its rank is n - 1)."""
    from kpcacli import ParameterError

    frames = hand[:6, ::4, ::4]
    model = FrameModel(n_components=6, center=False).fit(frames)
    assert model.state_.n_components == 6
    model.save(tmp_path / "m.npz")
    loaded = FrameModel.load(tmp_path / "m.npz")
    assert np.array_equal(loaded.decode(loaded.state_.codes[[2]]), frames[[2]])
    with pytest.raises(ParameterError, match="smaller than the number of frames"):
        FrameModel(n_components=6, center=True).fit(frames)
    with pytest.raises(ParameterError, match="at most the number of frames"):
        FrameModel(n_components=7, center=False).fit(frames)


def test_eval_says_when_two_solvers_give_the_same_frames(tmp_path):
    """The gradient solver gave the fixed-point solver's frames (22.86 dB and SSIM 0.8572 both)
    at thirteen times the time, unexplained: both minimise |PΦ(x) − Φ(z)|² and stop at its
    stationary point. eval says so, names the faster, and lists the pair in --json."""
    import json

    ok(run(["extract", HAND, "--frames", "0:24", "--resize", "80x45", "-o", tmp_path / "small.mkv"]))
    args = ["eval", tmp_path / "small.mkv", "-k", "4", "--solver", "gradient", "--solver", "fixed-point", "-q"]
    shown = ok(run([*args, "--solver", "distance"]))
    notes = [line for line in shown.stderr.splitlines() if "give the same frames" in line]
    assert len(notes) == 1 and notes[0].startswith("Note: gradient and fixed-point give the same frames")
    assert notes[0].endswith("takes less time")  # which, the timing decides
    assert json.loads(ok(run([*args, "--json"])).stdout)["same_frames"] == [["gradient", "fixed-point"]]


def test_the_readme_names_the_demo_picture_s_three_panels():
    """make demo's side_by_side.png is compare -o's picture: three panels, the third the
    absolute difference amplified ERROR_GAIN times; the README said "original | reconstruction"."""
    from kpcacli.workflows.report import ERROR_GAIN

    readme = " ".join((HAND.parent.parent / "README.md").read_text().split())
    assert (
        f"`demo/side_by_side.png` (held-out frame | reconstruction | their absolute difference x{ERROR_GAIN:g}"
        in readme
    )
    assert (
        "compare demo/held_out.png demo/reconstruction.png -m demo/model.npz -o demo/side_by_side.png"
        in (HAND.parent.parent / "Makefile").read_text()
    )


def test_docs_compression_no_longer_calls_the_compact_store_the_default():
    """docs/compression.md said "the default already chose CRF 30" and "the default chooses
    per clip" of the compact store, which has not been the default since 2026-11-25."""
    text = " ".join((HAND.parent.parent / "docs" / "compression.md").read_text().split())
    assert "the default already chose" not in text and "the default chooses per clip" not in text
    assert "two stores (the default, exact: the clip's own packets, and `--store-crf 24`)" in text
