"""What a new user met on a fresh clone and real footage, each found by running it: every
figure a command prints true, every output named as the user named it, one line for every
mistake, and files that round-trip with the tools beside kpca (pandas)."""

from __future__ import annotations

import time
from pathlib import Path

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
