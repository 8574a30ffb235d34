"""Bad input, faults and safety: one clear line, the right status, nothing left behind."""

from __future__ import annotations

import errno
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, open_descriptors, previous_model, run, syntax_nodes
from PIL import Image

from kpcacli.utils.errors import KpcaError


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    root = tmp_path_factory.mktemp("errors")
    frames = np.stack([np.asarray(Image.open(p))[::4, ::4] for p in sorted(HAND.glob("*.png"))[::4]])
    np.save(root / "frames.npy", frames)
    result = run(["fit", root / "frames.npy", "-m", root / "model.npz", "-k", "3", "-q"])
    assert result.exit_code == 0, result.stderr
    return root


# -- bit depths ----------------------------------------------------------------------------------
def mixed_depth_folder(frames, folder):
    """Four 8-bit PNGs and a fifth, f4.png, of 16 bits."""
    folder.mkdir()
    for index, frame in enumerate(frames[:4]):
        Image.fromarray(frame).save(folder / f"f{index}.png")
    Image.fromarray(frames[4].astype(np.uint16) * 257).save(folder / "f4.png")
    assert (folder / "f4.png").read_bytes()[24] == 16  # the PNG's bit depth (IHDR), however Pillow opens it
    return folder


def test_frames_of_two_bit_depths_are_refused_by_fit_and_encode_alike(model, tmp_path):
    """8- and 16-bit frames in one folder made one model, and fit and encode then disagreed
    about the 16-bit frame (fit scaled it to 8 bits, encode took its 16-bit values: code 0 and
    "far from every training frame"). Both refuse it, naming the file."""
    frames = np.load(model / "frames.npy")
    folder = mixed_depth_folder(frames, tmp_path / "mixed")
    deep = frames[4].astype(np.uint16) * 257
    one_line_error(run(["fit", folder, "-m", tmp_path / "m.npz", "-q"]), 1, "f4.png", "16-bit", "8-bit")
    assert not (tmp_path / "m.npz").exists()
    one_line_error(run(["encode", folder / "f4.png", "-m", model / "model.npz"]), 1, "f4.png", "16-bit")
    from kpcacli import FrameModel, InputError

    fitted = FrameModel.load(model / "model.npz")
    with pytest.raises(InputError, match="16-bit but the model was fitted on 8-bit"):
        fitted.encode(deep[np.newaxis])
    with pytest.raises(InputError, match="16-bit but the model was fitted on 8-bit"):
        fitted.encode([frames[0], deep])


# -- paths ------------------------------------------------------------------------------------
def test_zero_byte_and_directory_where_a_file_is_expected(model, tmp_path):
    (tmp_path / "empty.png").write_bytes(b"")
    one_line_error(run(["encode", tmp_path / "empty.png", "-m", model / "model.npz"]), 1, "empty (0 bytes)")
    (tmp_path / "dir.npy").mkdir()
    one_line_error(run(["decode", tmp_path / "dir.npy", "-m", model / "model.npz"]), 1, "is a folder")
    # a directory can be a model (format 2): a folder that is not one is a domain error, not a usage error
    one_line_error(run(["info", "-m", tmp_path]), 1, "is a folder, not a kpca model")


@pytest.mark.parametrize(
    "command",
    [
        ["encode", "{frames}", "-m", "{model}", "-o", "{frames}"],
        ["decode", "{codes}", "-m", "{model}", "-o", "{codes}"],
        ["denoise", "{frames}", "-m", "{model}", "-o", "{frames}"],
        ["fit", "{frames}", "-m", "{frames}"],
        ["encode", "{frames}", "-m", "{model}", "-o", "{model}"],
    ],
)
def test_output_equal_to_an_input_is_refused_unless_forced(model, tmp_path, command):
    np.save(tmp_path / "codes.npy", np.zeros((1, 3)))
    frames = tmp_path / "frames.npy"
    frames.write_bytes((model / "frames.npy").read_bytes())
    values = {"frames": frames, "model": tmp_path / "model.npz", "codes": tmp_path / "codes.npy"}
    (tmp_path / "model.npz").write_bytes((model / "model.npz").read_bytes())
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    args = [part.format(**values) for part in command]
    one_line_error(run(args), 2, "would overwrite the input", "--force")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_force_allows_overwriting(model, tmp_path):
    np.save(tmp_path / "codes.npy", np.zeros((1, 3)))
    codes = tmp_path / "codes.npy"
    result = run(["encode", model / "frames.npy", "-m", model / "model.npz", "-o", codes, "--force"])
    assert result.exit_code == 0 and np.load(codes).shape == (18, 3)


# -- images and video -------------------------------------------------------------------------
def test_video_that_cannot_be_decoded(model, tmp_path):
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + os.urandom(2000))
    one_line_error(run(["encode", tmp_path / "clip.mp4", "-m", model / "model.npz"]), 1, "clip.mp4")


def test_a_single_frame_is_not_enough(tmp_path):
    Image.fromarray(np.zeros((8, 8), dtype=np.uint8)).save(tmp_path / "one.png")
    one_line_error(run(["fit", tmp_path / "one.png", "-m", tmp_path / "m.npz", "-k", "1"]), 1, "at least two frames")
    assert not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("kind", ["16-bit", "RGBA"])
def test_sixteen_bit_and_rgba_are_accepted(tmp_path, kind):
    rng = np.random.default_rng(0)
    folder = tmp_path / "frames"
    folder.mkdir()
    for index in range(5):
        if kind == "16-bit":
            Image.fromarray(rng.integers(0, 65536, (12, 16), dtype=np.uint16)).save(folder / f"f{index}.png")
        else:
            Image.fromarray(rng.integers(0, 256, (12, 16, 4), dtype=np.uint8), mode="RGBA").save(
                folder / f"f{index}.png"
            )
    result = run(["fit", folder, "-m", tmp_path / "m.npz", "-k", "2"])
    assert result.exit_code == 0, result.stderr
    info = run(["info", "-m", tmp_path / "m.npz", "--json"]).stdout
    assert ('"uint16"' if kind == "16-bit" else '"uint8"') in info
    decoded = run(["decode", "-", "-m", tmp_path / "m.npz", "-o", tmp_path / "back.png"], input=b"0 0\n")
    assert decoded.exit_code == 0, decoded.stderr


# -- numbers ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["0", "-2", "inf", "nan"])
def test_beta_must_be_positive_and_finite(model, tmp_path, value):
    one_line_error(run(["fit", model / "frames.npy", "-m", tmp_path / "m.npz", "-k", "2", "--beta", value]), 2, "beta")


def test_kernel_with_significant_negative_eigenvalues_is_reported(tmp_path):
    np.savetxt(tmp_path / "p.csv", np.random.default_rng(0).normal(size=(40, 3)), delimiter=",")
    one_line_error(
        run(["fit", tmp_path / "p.csv", "-m", tmp_path / "m.npz", "--kernel", "sigmoid", "-k", "2"]),
        1,
        "negative eigenvalues",
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_values_in_data_and_codes(model, tmp_path, bad):
    points = np.ones((5, 3))
    points[3, 1] = bad
    np.save(tmp_path / "p.npy", points)
    one_line_error(run(["fit", tmp_path / "p.npy", "-m", tmp_path / "m.npz", "-k", "1"]), 1, "NaN or infinite", "row 3")
    codes = np.zeros((2, 3))
    codes[1, 2] = bad
    np.save(tmp_path / "c.npy", codes)
    one_line_error(run(["decode", tmp_path / "c.npy", "-m", model / "model.npz", "-o", tmp_path / "x/"]), 1, "row 1")
    assert not (tmp_path / "x").exists()


# -- model files through the CLI --------------------------------------------------------------
@pytest.mark.parametrize(
    ("damage", "fragment"),
    [
        (lambda data: data[: len(data) // 3], "is damaged: a zip file cut short"),
        (lambda data: b"not a zip at all", "not a kpca model"),
        (lambda data: b"", "not a kpca model"),
    ],
    ids=["truncated", "text", "empty"],
)
def test_damaged_model_files_are_one_line_for_every_command(model, tmp_path, damage, fragment):
    (tmp_path / "model.npz").write_bytes(damage((model / "model.npz").read_bytes()))
    np.save(tmp_path / "c.npy", np.zeros((1, 3)))
    for args in (
        ["info"],
        ["encode", model / "frames.npy"],
        ["decode", tmp_path / "c.npy"],
        ["denoise", model / "frames.npy"],
    ):
        one_line_error(run([*args, "-m", tmp_path / "model.npz"]), 1, fragment)


# -- faults -----------------------------------------------------------------------------------


def test_disk_full_while_writing_the_store_is_one_line(model, tmp_path, monkeypatch):
    from kpcacli.io import trainingstore as store

    real_fdopen = os.fdopen

    class FullDisk(io.RawIOBase):
        def __init__(self, handle):
            self.handle = real_fdopen(handle, "wb")
            self.written = 0

        def writable(self):
            return True

        def write(self, data):
            self.written += len(memoryview(data).cast("B"))
            if self.written > 20000:
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.handle.write(data)

        def close(self):
            self.handle.close()
            super().close()

    monkeypatch.setattr(store.os, "fdopen", lambda handle, mode: FullDisk(handle))
    result = run(["fit", model / "frames.npy", "-m", tmp_path / "m.npz", "-k", "2"])
    one_line_error(result, 1, "no space left on the device")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_disk_full_while_writing_the_model_is_one_line_naming_it(model, tmp_path, monkeypatch):
    """The store fits; the disk fills while the compressed model is written: the previous
    model stays as it was, nothing is left beside it."""
    import zipfile

    target = tmp_path / "m.npz"
    before = previous_model(target)
    real_writestr = zipfile.ZipFile.writestr

    def full(archive, info, data, *args, **kwargs):
        if len(archive.filelist) >= 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_writestr(archive, info, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", full)
    result = run(["fit", model / "frames.npy", "-m", target, "-k", "2"])
    one_line_error(result, 1, "no space left on the device", "m.npz")
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]


def test_disk_full_while_writing_an_output_leaves_nothing(model, tmp_path, monkeypatch):
    from kpcacli.modelfile import container as modelfile

    real_replace = os.replace

    def full(source, target):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(modelfile.os, "replace", full)
    result = run(["encode", model / "frames.npy", "-m", model / "model.npz", "-o", tmp_path / "codes.npy"])
    monkeypatch.setattr(modelfile.os, "replace", real_replace)
    one_line_error(result, 1, "no space left on the device", "codes.npy")
    assert list(tmp_path.iterdir()) == []


def slow_fit(folder: Path, model: Path) -> subprocess.Popen:
    """`kpca fit` on ~300 MB of frames in a child process (long enough to interrupt).

    SIGINT is restored to its default in the child: a shell running the tests in the
    background starts them with SIGINT ignored, and Python keeps an inherited SIG_IGN."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kpcacli",
            "fit",
            str(folder / "frames.npy"),
            "-m",
            str(model),
            "-k",
            "2",
            "-q",
            "--store",
            "lossless",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("big")
    rng = np.random.default_rng(0)
    frames = np.lib.format.open_memmap(root / "frames.npy", mode="w+", dtype=np.uint8, shape=(150, 1000, 2000))
    for index in range(150):
        frames[index] = rng.integers(0, 256, (1000, 2000), dtype=np.uint8)
    frames.flush()
    return root


def wait_for(condition, timeout=300.0):
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise AssertionError("timed out")
        time.sleep(0.01)


def store_size(pid: int, folder: Path) -> int:
    """Size of the largest file the process holds open in `folder`: its frame store (anonymous
    or named). Files elsewhere do not count: the 300 MB input, or descriptors a child inherits
    for the instant between fork and exec, would fire the trigger before the fit runs."""
    largest = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(folder)):
                largest = max(largest, os.stat(f"/proc/{pid}/fd/{fd}").st_size)
        except OSError:
            pass
    return largest


@pytest.mark.slow
def test_sigkill_during_the_gram_pass_leaves_the_previous_model_intact(big, tmp_path):
    model = tmp_path / "model.npz"
    before = previous_model(model)
    child = slow_fit(big, model)
    # The store is complete, so the Gram pass has begun, once it holds every frame.
    wait_for(lambda: child.poll() is None and store_size(child.pid, tmp_path) >= 4096 + 150 * 1000 * 2000)
    child.send_signal(signal.SIGKILL)
    child.communicate()
    assert child.returncode == -signal.SIGKILL
    assert model.read_bytes() == before
    # No partial model and no frame store: the store is an anonymous file until it is complete.
    assert [p.name for p in tmp_path.iterdir()] == ["model.npz"]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_fit_removes_the_store(big, tmp_path, signum):
    model = tmp_path / "model.npz"
    child = slow_fit(big, model)
    wait_for(lambda: child.poll() is None and store_size(child.pid, tmp_path) > 10_000_000)  # loading
    child.send_signal(signum)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 130, stderr
    assert stderr.decode() == "Error: interrupted\n"  # one line: no blank one before it (click's)
    assert list(tmp_path.iterdir()) == []


def test_temporary_store_is_removed_after_success_and_error(model, tmp_path, store_kind):
    """Anonymous (O_TMPFILE) or named, the store leaves no file and no open descriptor."""
    before = open_descriptors(tmp_path)
    ok(run(["fit", model / "frames.npy", "-m", tmp_path / "m.npz", "-k", "2"]))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz"]
    bad = tmp_path / "mixed"
    bad.mkdir()
    Image.new("L", (8, 8)).save(bad / "a.png")
    Image.new("L", (9, 8)).save(bad / "b.png")
    one_line_error(run(["fit", bad, "-m", tmp_path / "m2.npz"]), 1, "b.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.npz", "mixed"]
    assert sorted(p.name for p in bad.iterdir()) == ["a.png", "b.png"]
    assert open_descriptors(tmp_path) == before == []


@pytest.mark.parametrize(
    "codes", ["1e308 1e308 1e308", "1e200 -1e200 3", "-1e300 0 0"], ids=["huge", "opposed", "negative"]
)
def test_extreme_codes_never_print_a_numpy_warning(model, tmp_path, codes):
    """In a real process (no pytest warning filter): one line on standard error, exit 1, no
    `RuntimeWarning` text and no output file."""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    result = subprocess.run(
        [sys.executable, "-m", "kpcacli", "decode", "-", "-m", str(model / "model.npz"), "-o", str(tmp_path / "x.png")],
        input=codes.encode(),
        capture_output=True,
        env=env,
        check=False,
    )
    lines = result.stderr.decode().strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "Warning" not in result.stderr.decode() and not (tmp_path / "x.png").exists()


# -- library errors name parameters, the command line names flags ------------------------------
def test_no_library_error_names_a_command_line_flag():
    """Outside the click layer, an error names a parameter through errors.param, which the
    library spells as Python names it (resize, center=False) and the command line as its flag
    (--resize, --no-center): a Python caller who passed gamma= is not told about --gamma."""
    import ast

    package = Path(__file__).resolve().parent.parent / "kpcacli"
    flag = re.compile(r"(^|[\s(])--?[a-z][a-z-]*")
    found = []
    for path in sorted(package.rglob("*.py")):
        if "cli" in path.relative_to(package).parts:  # the click layer spells flags
            continue
        for node in syntax_nodes(path):
            if isinstance(node, ast.Raise):
                for part in ast.walk(node):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str) and flag.search(part.value):
                        found.append(f"{path.name}:{part.lineno}: {part.value!r}")
    assert found == []


def test_a_library_error_names_the_parameter_and_the_command_line_the_flag(tmp_path):
    from kpcacli import FrameModel, ParameterError

    with pytest.raises(ParameterError) as caught:
        FrameModel(n_components=2, eps=0.5).check_parameters()
    assert str(caught.value) == "give either n_components or eps, not both"
    one_line_error(
        run(["fit", HAND, "-k", "2", "--eps", "0.5", "-m", tmp_path / "m.npz"]), 2, "give either -k or --eps"
    )
    ok(run(["fit", HAND, "--frames", "::7", "-k", "2", "--center", "-m", tmp_path / "c.npz", "-q"]))
    result = run(["decode", "-", "-m", tmp_path / "c.npz", "--solver", "log", "-o", tmp_path / "x.png"], input="0 0")
    one_line_error(result, 1, "--no-center", "--solver")
    model = FrameModel.load(tmp_path / "c.npz")
    with pytest.raises(KpcaError, match="center=False") as caught:
        model.decode(np.zeros((1, 2)), solver="log")
    assert "--" not in str(caught.value)


@pytest.mark.parametrize(
    "command",
    [
        ["decode", "-", "-m", "{model}", "-o", "{out}"],
        ["denoise", "{frames}", "-m", "{model}", "-o", "{out}"],
        ["eval", "{frames}", "-k", "2"],
    ],
)
def test_neighbours_out_of_range_names_the_flag(model, tmp_path, command):
    """--neighbours -3 names --neighbours, as every other option's message names its flag."""
    values = {"model": model / "model.npz", "frames": model / "frames.npy", "out": tmp_path / "out.npy"}
    args = [part.format(**values) for part in command] + ["--neighbours", "-3"]
    result = run(args, input="0 0 0\n")
    one_line_error(result, 2, "--neighbours must be an int in the range [1, inf). Got -3 instead.")
    assert sorted(tmp_path.iterdir()) == []


# KernelPCA's scikit-learn parameters whose range is scikit-learn's, not kpca's: what it states
# for the value tested below (None: the value is in range there).
SCIKIT_LEARN_RANGES = {"degree": None, "gamma": "a float in the range [0.0, inf) or None"}


@pytest.mark.parametrize(
    ("name", "flag", "value", "options"),
    [
        ("n_components", "-k", 0, {}),
        ("eps", "--eps", 1.5, {}),
        ("degree", "--degree", 0, {"kernel": "poly"}),
        ("gamma", "--gamma", -1.0, {"kernel": "poly"}),
        ("neighbours", "--neighbours", -3, {}),
    ],
)
def test_the_three_surfaces_refuse_a_bad_value_in_the_same_words(model, tmp_path, name, flag, value, options):
    """One declaration (kpcacli.utils.hyperparameters) behind FrameModel, the command line and
    KernelPCA's own parameters: each names the value as its surface calls it and states the
    same range. KernelPCA's degree and gamma are scikit-learn's, with scikit-learn's ranges
    (``SCIKIT_LEARN_RANGES``): a degree of 0 is taken, gamma may be 0."""
    from kpcacli import FrameModel, KernelPCA
    from kpcacli.utils.hyperparameters import HYPERPARAMETERS

    requirement = HYPERPARAMETERS[name].accepts.describe()
    frames = np.load(model / "frames.npy")
    with pytest.raises(KpcaError) as python:
        if name == "neighbours":
            FrameModel.load(model / "model.npz").decode(np.zeros((1, 3)), neighbours=value)
        else:
            FrameModel(**{name: value, **options}).fit(frames)
    assert str(python.value) == f"{name} must be {requirement}. Got {value!r} instead."
    if name == "neighbours":
        result = run(
            ["decode", "-", "-m", model / "model.npz", "-o", tmp_path / "x.npy", flag, str(value)], input="0 0 0"
        )
    else:
        extra = [arg for key, option in options.items() for arg in (f"--{key}", option)]
        result = run(["fit", model / "frames.npy", "-m", tmp_path / "m.npz", *extra, flag, str(value)])
    one_line_error(result, 2, f"{flag} must be {requirement}. Got {value!r} instead.")
    samples = frames.reshape(len(frames), -1).astype(float)
    if name in SCIKIT_LEARN_RANGES and SCIKIT_LEARN_RANGES[name] is None:
        KernelPCA(**{name: value, **options}).fit(samples)  # scikit-learn takes it
    else:
        stated = SCIKIT_LEARN_RANGES.get(name, requirement)
        with pytest.raises(ValueError, match=re.escape(f"The '{name}' parameter of KernelPCA must be {stated}")):
            KernelPCA(**{name: value, **options}).fit(samples)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("command", "given", "message"),
    [
        ("fit", ["--degree", "2"], "--degree does not apply to the rbf kernel: it takes --beta"),
        ("fit", ["--coef0", "0.5"], "--coef0 does not apply to the rbf kernel: it takes --beta"),
        (
            "fit",
            ["--kernel", "poly", "--beta", "1e-6"],
            "--beta does not apply to the poly kernel: it takes --gamma, --degree and --coef0",
        ),
        (
            "fit",
            ["--kernel", "sigmoid", "--degree", "2"],
            "--degree does not apply to the sigmoid kernel: it takes --gamma and --coef0",
        ),
        ("fit", ["--kernel", "linear", "--gamma", "1"], "--gamma does not apply to the linear kernel: it has no param"),
        ("fit", ["--landmark-method", "farthest"], "--landmark-method chooses the frames --landmarks asks for"),
        ("eval", ["--gamma", "0.1"], "--gamma does not apply to the rbf kernel: it takes --beta"),
        ("eval", ["--landmark-method", "uniform"], "--landmark-method chooses the frames --landmarks asks for"),
    ],
)
def test_a_model_option_the_model_would_ignore_is_refused(model, tmp_path, command, given, message):
    """An option typed that would change nothing (a hyperparameter of another kernel, a way to
    choose landmarks with none asked for) is one line before any work, not a fit as if it had
    not been given (the Python API ignores it, as scikit-learn's KernelPCA does)."""
    output = ["-m", tmp_path / "m.npz"] if command == "fit" else ["--report", tmp_path / "report"]
    one_line_error(run([command, model / "frames.npy", "-k", "2", "-q", *output, *given]), 2, message)
    assert sorted(tmp_path.iterdir()) == []


def test_every_number_in_a_message_counts_from_zero(tmp_path):
    """Frames, rows, columns and sensors are counted from 0 in every message, as --frames, decode's
    000000.png and numpy count them; a text file's lines from 1, as editors count them, and
    called lines. (NaN at codes index 5 said "row 6", the last of 100 sensors "sensor 100",
    beside "frame 0 has no observed value".)"""
    from kpcacli import FrameModel
    from kpcacli.io.readers import load_text_matrix
    from kpcacli.io.sources import iter_frames
    from kpcacli.model.validation import check_codes, check_observed_rows, check_sensors, rows_from_readings

    frames = np.random.default_rng(0).integers(0, 256, (8, 12, 16), dtype=np.uint8)
    state = FrameModel(n_components=2).fit(frames).state_
    codes = np.zeros((7, 2))
    codes[5, 1] = np.nan
    readings = np.zeros((6, 3))
    readings[3, 0] = np.inf
    sensors = np.arange(100)
    sensors[99] = 12 * 16  # the last of 100, just outside
    masks = np.ones((3, 12, 16), dtype=bool)
    masks[2] = False
    absurd = np.zeros((4, 2))
    absurd[2, 1] = 1e12
    cases = [
        (lambda: check_codes(state, codes), "in row 5"),
        (lambda: check_codes(state, absurd), "the code in row 2, column 1"),
        (lambda: rows_from_readings(state, readings, np.arange(3)), "in row 3"),
        (lambda: check_sensors(state, sensors), "sensor 99 is at index 192"),
        (lambda: check_observed_rows(state, frames[:3], masks), "frame 2 has no observed value"),
        (lambda: load_text_matrix("1 2 3\n4 5 6\n7 x 9\n", "m"), "row 2, column 1 is 'x', not a number: line 3"),
        (lambda: list(iter_frames([str(tmp_path / "points.csv")])), "in row 2"),
    ]
    (tmp_path / "points.csv").write_text("1,2\n3,4\nnan,6\n")
    for call, fragment in cases:
        with pytest.raises(KpcaError) as raised:
            call()
        assert fragment in str(raised.value), (fragment, str(raised.value))


def test_many_codes_for_one_image_are_refused_before_any_is_decoded(model, tmp_path):
    """decode -o one.png of 132 codes said "132 frames decoded" before decoding any."""
    np.save(tmp_path / "codes.npy", np.zeros((5, 3)))
    for output, fragment in (
        (tmp_path / "one.png", f"'{tmp_path / 'one.png'}' names one image"),
        ("-", "standard output takes one PNG"),
    ):
        result = run(["decode", tmp_path / "codes.npy", "-m", model / "model.npz", "-o", output])
        one_line_error(result, 1, "5 frames to write but", fragment)
        assert "decoded" not in result.stderr
    assert not (tmp_path / "one.png").exists()
