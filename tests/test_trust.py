"""Codes you can trust: text codes name the model that wrote them and decode refuses another
model's; frames and codes far from the training set are decoded with a one-line warning;
absurd codes are one line; float32 codes halve the size for a fraction of a grey level.

Models: the sample hand's even frames (k = 3) and a model of the same frames upside down
(same k, same frame size: its codes look plausible to the first model).
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from conftest import HAND, ok, one_line_error, run
from PIL import Image

from kpcacli import KernelPCA
from kpcacli.novelty import FAR_SPACINGS, Novelty


@pytest.fixture(scope="module")
def models(tmp_path_factory, hand):
    root = tmp_path_factory.mktemp("trust")
    ok(run(["fit", HAND, "--frames", "::2", "-m", root / "hand.npz", "-k", "3", "-q"]))
    flipped = root / "flipped"
    flipped.mkdir()
    for index, frame in enumerate(hand[::2]):
        Image.fromarray(frame[::-1]).save(flipped / f"f_{index:02d}.png")
    ok(run(["fit", flipped, "-m", root / "flipped.npz", "-k", "3", "-q"]))
    Image.fromarray(hand[35]).save(root / "held_out.png")
    Image.fromarray(hand[35][::-1]).save(root / "upside_down.png")
    return root


def png(path) -> bytes:
    return path.read_bytes()


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_text_codes_name_their_model_and_another_model_refuses_them(models, tmp_path, via):
    if via == "file":
        ok(run(["encode", models / "held_out.png", "-m", models / "hand.npz", "-o", tmp_path / "codes.txt"]))
        text = (tmp_path / "codes.txt").read_text()
    else:
        text = ok(run(["encode", "-", "-m", models / "hand.npz"], input=png(models / "held_out.png"))).stdout
        (tmp_path / "codes.txt").write_text(text)
    fingerprint = KernelPCA.load(models / "hand.npz").state_.fingerprint
    assert text.splitlines()[0] == f"# kpca codes of model {fingerprint} (k = 3)"
    source = ["-"] if via == "stdin" else [tmp_path / "codes.txt"]
    stdin = text if via == "stdin" else None
    ok(run(["decode", *source, "-m", models / "hand.npz", "-o", tmp_path / "back.png"], input=stdin))
    refused = run(["decode", *source, "-m", models / "flipped.npz", "-o", tmp_path / "wrong.png"], input=stdin)
    one_line_error(refused, 1, "written by another model", fingerprint, "--force")
    assert not (tmp_path / "wrong.png").exists()
    forced = ok(
        run(["decode", *source, "-m", models / "flipped.npz", "-o", tmp_path / "wrong.png", "--force"], input=stdin)
    )
    assert (tmp_path / "wrong.png").exists() and "Error" not in forced.stderr


def test_the_fingerprint_names_one_fitted_model(models, tmp_path):
    """Stable through save and load, different for another k, another kernel width, other frames."""
    model = KernelPCA.load(models / "hand.npz")
    again = KernelPCA.load(models / "hand.npz")
    assert model.state_.fingerprint == again.state_.fingerprint and len(model.state_.fingerprint) == 16
    others = [model.with_components(4), KernelPCA.load(models / "flipped.npz")]
    model.save(tmp_path / "copy.npz")
    assert KernelPCA.load(tmp_path / "copy.npz").state_.fingerprint == model.state_.fingerprint
    assert len({model.state_.fingerprint, *(other.state_.fingerprint for other in others)}) == 3


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_encode_warns_of_frames_unlike_every_training_frame(models, via):
    def encode(name):
        if via == "file":
            return ok(run(["encode", models / name, "-m", models / "hand.npz"]))
        return ok(run(["encode", "-", "-m", models / "hand.npz"], input=png(models / name)))

    assert encode("held_out.png").stderr == ""
    warned = encode("upside_down.png").stderr.strip().splitlines()
    assert len(warned) == 1 and warned[0].startswith("Warning: 1 of 1 frames lie far from every training frame")


@pytest.mark.parametrize("via", ["file", "stdin"])
def test_decode_warns_of_codes_far_from_every_training_code_and_still_decodes(models, tmp_path, via):
    state = KernelPCA.load(models / "hand.npz").state_
    codes = np.vstack([state.codes[4], np.zeros(3), state.codes[9] * 1.01])  # row 2: no frame's code
    np.save(tmp_path / "codes.npy", codes)
    buffer = io.BytesIO()
    np.save(buffer, codes)
    source = ["-"] if via == "stdin" else [tmp_path / "codes.npy"]
    stdin = buffer.getvalue() if via == "stdin" else None
    result = ok(run(["decode", *source, "-m", models / "hand.npz", "-o", f"{tmp_path}/out/"], input=stdin))
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Warning: 1 of 3 codes lie far from every training code")
    assert "codes row 2" in lines[0]
    assert len(list((tmp_path / "out").iterdir())) == 3
    quiet = ok(
        run(
            ["decode", "-", "-m", models / "hand.npz", "-o", tmp_path / "one.png"],
            input=" ".join(map(str, state.codes[7])),
        )
    )
    assert quiet.stderr == ""


def test_far_is_several_typical_spacings():
    novelty = Novelty.of("codes", np.array([0.5, FAR_SPACINGS * 2.0 + 0.1, 1.0]), 2.0)
    assert list(novelty.far) == [1] and "1 of 3 codes" in novelty.warning() and "codes row 2" in novelty.warning()
    assert Novelty.of("frames", np.array([0.5, 1.0]), 2.0).warning() is None


@pytest.mark.parametrize("codes", ["1e308 0 0", "0 -1e300 0", "0 0 4e12"])
def test_absurd_codes_are_one_line_and_nothing_is_written(models, tmp_path, codes):
    result = run(["decode", "-", "-m", models / "hand.npz", "-o", tmp_path / "x.png"], input=codes)
    one_line_error(result, 1, "not codes of this model", "row 1")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("suffix", [".npy", ".txt"])
def test_float32_codes_halve_the_size_and_decode_within_a_grey_level(models, tmp_path, suffix):
    wide, narrow = tmp_path / f"wide{suffix}", tmp_path / f"narrow{suffix}"
    ok(run(["encode", HAND, "--frames", "1::6", "-m", models / "hand.npz", "-o", wide]))
    ok(run(["encode", HAND, "--frames", "1::6", "-m", models / "hand.npz", "-o", narrow, "--dtype", "float32"]))
    if suffix == ".npy":
        assert np.load(narrow).dtype == np.float32 and np.load(wide).dtype == np.float64
        assert np.load(narrow).nbytes * 2 == np.load(wide).nbytes
    else:
        assert len(narrow.read_text()) < 0.7 * len(wide.read_text())
    ok(run(["decode", wide, "-m", models / "hand.npz", "-o", f"{tmp_path}/wide/"]))
    ok(run(["decode", narrow, "-m", models / "hand.npz", "-o", f"{tmp_path}/narrow/"]))
    for name in sorted(p.name for p in (tmp_path / "wide").iterdir()):
        a = np.asarray(Image.open(tmp_path / "wide" / name), dtype=np.int16)
        b = np.asarray(Image.open(tmp_path / "narrow" / name), dtype=np.int16)
        assert np.abs(a - b).max() <= 1
    one_line_error(run(["encode", HAND, "-m", models / "hand.npz", "--dtype", "float16"]), 2, "--dtype")
