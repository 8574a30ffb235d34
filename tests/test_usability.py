"""The small things a user meets first: help summaries that are whole, a README synopsis that
lists every option --help shows, progress totals, messages that count rows and columns from 1,
every eigenvalue in info --json, and the sample-data script's visible defaults."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import click
import numpy as np
import pytest
from helpers import HAND, ROOT, ok, one_line_error, run

from kpcacli.cli import main
from kpcacli.io.sources import FrameSelection, estimate_frames

COMMANDS = sorted(name for name in main.commands if name != "plot")


def synopsis() -> dict[str, str]:
    """The README's command synopsis, one text per command (continuation lines joined; a line
    for ``kpca a|b ...`` counts for each)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## The commands", 1)[1].split("```", 2)[1]
    entries: dict[str, str] = {}
    current: list[str] = []
    for line in block.splitlines():
        match = re.match(r"kpca ([a-z|]+)", line)
        if match:
            current = match.group(1).split("|")
        if match or (line.startswith(" ") and current):
            for name in current:
                entries[name] = entries.get(name, "") + " " + line
        else:
            current = []
    return entries


def listed(option: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text) is not None


def test_top_level_help_shows_every_summary_whole():
    text = ok(run(["--help"])).stdout
    for name in [*COMMANDS, "plot"]:
        command = main.commands[name]
        assert command.short_help and len(command.short_help) <= 65, name
        assert f"  {name}" in text and command.short_help in text, name
    assert "..." not in text.split("Commands:")[1]


@pytest.mark.parametrize("name", COMMANDS)
def test_the_readme_synopsis_lists_every_option(name):
    text = synopsis()[name]
    options = [param.opts for param in main.commands[name].params if isinstance(param, click.Option)]
    missing = [max(opts, key=len) for opts in options if not any(listed(opt, text) for opt in opts)]
    assert not missing, f"README synopsis of kpca {name} lacks {missing}"


def test_progress_totals_come_from_headers(tmp_path):
    from test_video import textured_frames, write_clip

    write_clip(tmp_path / "clip.mp4", textured_frames(12, 16, 24))
    assert estimate_frames([HAND]) == 70
    assert estimate_frames([HAND], FrameSelection.parse("::2")) == 35
    assert estimate_frames([HAND, tmp_path / "clip.mp4"]) == 82
    assert estimate_frames(["-"]) is None


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("1 2 3\n4 x 6\n", ["row 1, column 1", "'x'", "line 2"]),
        ("# a comment\n1 2 3\n4 5\n", ["row 1 has 2 values", "line 3"]),
        ("1,2,3\n4,5,nan\n", ["NaN or infinite value in row 1"]),
    ],
)
def test_text_errors_count_rows_and_columns_from_one(tmp_path, text, fragments):
    ok(run(["fit", HAND, "--frames", "::10", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    one_line_error(run(["decode", "-", "-m", tmp_path / "m.npz", "-o", tmp_path / "x.png"], input=text), 1, *fragments)


def test_info_json_lists_every_eigenvalue(tmp_path):
    ok(run(["fit", HAND, "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    info = json.loads(ok(run(["info", "-m", tmp_path / "m.npz", "--json"])).stdout)
    assert len(info["eigenvalues"]) == info["frames"] == 70


@pytest.mark.parametrize("quiet", [False, True])
def test_decode_and_sweep_take_quiet(tmp_path, monkeypatch, quiet):
    """On a terminal, decode and sweep draw their bars, and -q silences them."""
    monkeypatch.setattr("kpcacli.utils.progress.on_terminal", lambda stream: True)
    flag = ["-q"] if quiet else []
    ok(run(["fit", HAND, "--frames", "::5", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    codes = "\n".join([" ".join(["0.5"] * 3)] * 3)
    decoded = ok(run(["decode", "-", "-m", tmp_path / "m.npz", "-o", f"{tmp_path / 'x'}/", *flag], input=codes))
    swept = ok(run(["sweep", HAND, "--frames", "::5", "-k", "2", "--beta-range", "1e-8:1e-7:2", *flag]))
    assert ("decoding" in decoded.stderr) is not quiet, decoded.stderr
    assert ("sweeping" in swept.stderr) is not quiet, swept.stderr


def test_make_hand_shows_its_defaults_and_needs_an_output():
    script = ROOT / "sample_data" / "make_hand.py"
    shown = subprocess.run([sys.executable, script, "--help"], capture_output=True, text=True, check=True).stdout
    assert "(default: 180)" in shown and "(default: 320)" in shown and "(default: 70)" in shown
    refused = subprocess.run([sys.executable, script], capture_output=True, text=True)
    assert refused.returncode == 2 and "-o/--output" in refused.stderr


# -- small things a stranger met --------------------------------------------------------------
@pytest.mark.parametrize("via", ["file", "stdin"])
def test_a_frame_given_to_a_point_model_is_not_told_to_resize(tmp_path, via):
    rows = np.random.default_rng(0).normal(size=(20, 2))
    np.savetxt(tmp_path / "pts.csv", rows, delimiter=",")
    ok(run(["fit", tmp_path / "pts.csv", "-m", tmp_path / "pts.npz", "-k", "2", "--beta", "1", "-q"]))
    frame = HAND / "hand_000.png"
    args = ["encode", "-" if via == "stdin" else frame, "-m", tmp_path / "pts.npz"]
    result = run(args, input=frame.read_bytes() if via == "stdin" else None)
    one_line_error(result, 1, "give rows of 2 values")
    assert "--resize" not in result.stderr


def test_more_neighbours_than_training_frames_is_said(tmp_path):
    ok(run(["fit", HAND, "--frames", "::5", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    codes = ok(run(["encode", HAND / "hand_003.png", "-m", tmp_path / "m.npz"])).stdout
    result = ok(
        run(["decode", "-", "-m", tmp_path / "m.npz", "-o", tmp_path / "x.png", "--neighbours", "1000000"], codes)
    )
    assert result.stderr.strip().splitlines() == [
        "Warning: neighbours = 1000000 is more than the model's 14 training frames: all 14 are used, each decode "
        "reading every one"
    ]
    assert (
        ok(run(["decode", "-", "-m", tmp_path / "m.npz", "-o", tmp_path / "y.png", "--neighbours", "5"], codes)).stderr
        == ""
    )


def test_an_output_folder_with_no_parent_is_refused_by_decode_and_eval_alike(tmp_path):
    ok(run(["fit", HAND, "--frames", "::5", "-m", tmp_path / "m.npz", "-k", "3", "-q"]))
    missing = tmp_path / "nodir" / "out"
    one_line_error(run(["decode", "-", "-m", tmp_path / "m.npz", "-o", f"{missing}/"], "0 0 0"), 1, "does not exist")
    result = run(["eval", HAND, "--frames", "::5", "-k", "2", "--solver", "nearest", "--report", f"{missing}/", "-q"])
    one_line_error(result, 1, "does not exist")
    assert not (tmp_path / "nodir").exists()


def test_a_device_is_never_replaced(tmp_path):
    one_line_error(run(["fit", HAND, "--frames", "::5", "-m", "/dev/null", "-q", "--force"]), 2, "regular files")


def test_extract_help_says_what_colour_does_there():
    extract = run(["extract", "--help"]).stdout
    assert "Write the frames in RGB" in extract and "Model RGB frames" not in extract
    assert "Model RGB frames" in run(["fit", "--help"]).stdout


def test_the_readme_is_a_front_door_and_every_link_in_the_docs_resolves():
    """README under 300 lines; every relative link of the README and docs/ names a file that
    exists (the docs were cut out of the README: a stale link is easy to leave)."""
    readme = ROOT / "README.md"
    assert len(readme.read_text().splitlines()) <= 300
    pages = [readme, *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) >= 8
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


@pytest.mark.slow
def test_the_readme_walkthrough_runs_as_written_and_prints_what_it_quotes(tmp_path, monkeypatch):
    """Every command of the README's walkthrough ("Compressing a clip"), run as written from a
    folder beside the sample data, succeeds; every line the README quotes from info and
    compare is one the commands print."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Compressing a clip", 1)[1].split("## ", 1)[0]
    blocks = section.split("```")[1::2]
    commands = [line.split("#", 1)[0].split() for line in blocks[0].splitlines() if line.startswith("kpca ")]
    assert [command[1] for command in commands] == ["extract", "fit", "info", "encode", "decode", "compare"]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    printed = {}
    for command in commands:
        result = ok(run(command[1:]))
        printed[command[1]] = result.stdout + result.stderr
    # Every line quoted, not a chosen few: a stale line (a solver that left the candidates) is
    # what a reader meets first.
    quoted_info = [line for line in blocks[1].splitlines() if line.strip()]
    quoted_compare = [line for line in blocks[2].splitlines() if line.strip()]
    assert len(quoted_info) >= 10 and len(quoted_compare) >= 10
    commands_page = (ROOT / "docs" / "commands.md").read_text().split("On the README's walkthrough", 1)[1]
    quoted_info += [line for line in commands_page.split("```")[1].splitlines() if line.strip() not in ("", "...")]
    format_page = (ROOT / "docs" / "model-format.md").read_text().split("`kpca info` prints both:", 1)[1]
    quoted_info += [line for line in format_page.split("```")[1].splitlines() if line.strip()]
    for line in quoted_info:
        # A line quoted up to "…" is checked up to there: the learned map's in-sample figure
        # for noiseless frames turns on the last bits of a solve (48.0 or 48.1 dB by the CPU).
        expected = " ".join(line.split()).removesuffix("…").rstrip()
        assert expected in " ".join(printed["info"].split()), line
    for line in quoted_compare:
        assert " ".join(line.split()) in " ".join(printed["compare"].split()), line
    # What the video writer costs, against the PNG decode the README names.
    writer = re.search(r"\(`(kpca decode [^`]*)`\) is\s+([\d.]+) dB on average, ([\d.]+) dB at worst", section)
    ok(run(writer.group(1).split()[1:]))
    scores = json.loads(ok(run(["compare", "back/", "back.mp4", "--json"])).stdout)
    assert (f"{scores['mean_psnr']:.2f}", f"{scores['min_psnr']:.2f}") == writer.group(2, 3)


@pytest.mark.slow
def test_the_readme_python_example_prints_what_it_quotes(capsys):
    """The README's scikit-learn example runs as written, denoises (it did not: its gamma and k
    made the digits worse), and prints the figures its last comment quotes."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    quoted = [line[2:] for line in block.splitlines() if line.startswith("# ")]
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out.strip().splitlines()
    assert quoted and printed == quoted
    before, after = (float(part.split()[0]) for part in quoted[0].split(": ", 1)[1].split(", "))
    assert after < 0.5 * before


def makefile_recipe(target: str) -> list[str]:
    """The command lines of a Makefile target, as make would run them (``@`` and ``$$`` undone)."""
    lines = (ROOT / "Makefile").read_text().split(f"\n{target}:", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    return [line.strip().lstrip("@").replace("$$", "$") for line in lines if line.startswith("\t")]


@pytest.mark.slow  # the whole demo, as the README's other run-as-written checks (make test-slow)
def test_make_demo_prints_what_the_readme_quotes(tmp_path, monkeypatch):
    """Every line the README quotes from `make demo` is printed by the Makefile's own demo
    commands, run here as make runs them (kpca in this process; the shell steps in a shell)."""
    import shlex

    readme = (ROOT / "README.md").read_text()
    quoted_block = readme.split("`make demo` fits", 1)[1].split("```", 2)[1]
    quoted = [line for line in quoted_block.splitlines() if line.strip() and line.strip() != "..."]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    printed = []
    for line in makefile_recipe("demo"):
        if line.startswith("$(KPCA) "):
            result = ok(run(shlex.split(line)[1:]))
            printed.append(result.stdout + result.stderr)
        elif not line.startswith("echo"):
            subprocess.run(["bash", "-c", line], check=True)
    output = " ".join("".join(printed).split())
    assert len(quoted) >= 6
    for line in quoted:
        assert " ".join(line.split()) in output, line
