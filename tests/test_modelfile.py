"""The model file: layout, memory mapping, and refusal of damaged or unsafe files."""

from __future__ import annotations

import pickle
import zipfile

import numpy as np
import pytest

from kpcacli import KernelPCA, ModelFileError
from kpcacli.modelfile import FORMAT_VERSION, REQUIRED


@pytest.fixture
def model_path(small_frames, tmp_path):
    path = tmp_path / "model.npz"
    KernelPCA(n_components=2).fit(small_frames).save(path)
    return path


def rewrite(path, target, replace=None, drop=()):
    """Copy a model file with some members replaced or dropped."""
    replace = replace or {}
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files if name not in drop}
    arrays.update(replace)
    np.savez(target, **arrays)
    return target


def test_file_holds_every_documented_member_uncompressed(model_path):
    with zipfile.ZipFile(model_path) as archive:
        names = [info.filename for info in archive.infolist()]
        assert all(info.compress_type == zipfile.ZIP_STORED for info in archive.infolist())
    assert sorted(names) == sorted(f"{name}.npy" for name in REQUIRED)
    assert names[-1] == "frames.npy"


def test_encode_and_decode_read_frames_through_a_memory_map(model_path, small_frames):
    model = KernelPCA.load(model_path)
    assert isinstance(model.state_.frames, np.memmap) and str(model.state_.frames.filename) == str(model_path.resolve())
    np.testing.assert_array_equal(np.asarray(model.state_.frames).reshape(small_frames.shape), small_frames)


class RunsCode:
    """Unpickling this would create a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_pickled_object_arrays_are_refused_without_unpickling(model_path, tmp_path):
    marker = tmp_path / "pwned"
    evil = np.empty(1, dtype=object)
    evil[0] = RunsCode(marker)
    for member in ("codes", "frames"):
        target = tmp_path / f"evil-{member}.npz"
        with np.load(model_path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        arrays[member] = evil
        np.savez(target, **arrays)  # numpy pickles the object array into the file
        assert pickle.dumps(evil)  # sanity: the payload is picklable
        with pytest.raises(ModelFileError, match="pickled objects"):
            KernelPCA.load(target)
        assert not marker.exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p, t: t.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "truncated|damaged|not an .npz"),
        (lambda p, t: t.write_bytes(p.read_bytes()[:-50]), "truncated|damaged"),
        (lambda p, t: t.write_text("just text"), "not a kpca model"),
        (lambda p, t: rewrite(p, t, drop=("eigenvectors",)), "lacks eigenvectors"),
        (
            lambda p, t: rewrite(p, t, replace={"format_version": np.int64(99)}),
            f"version 99.*reads version {FORMAT_VERSION}",
        ),
        (lambda p, t: rewrite(p, t, replace={"codes": np.zeros((3, 2))}), "codes"),
        (lambda p, t: rewrite(p, t, replace={"linear_gram": np.zeros((12, 12), dtype=np.int32)}), "linear_gram"),
        (lambda p, t: rewrite(p, t, replace={"frame_shape": np.array([5, 5])}), "frame_shape"),
        (lambda p, t: rewrite(p, t, replace={"kernel": np.str_("cubic")}), "kernel must be one of"),
    ],
    ids=["half", "tail-cut", "text", "missing-array", "version", "codes-shape", "gram-dtype", "frame-shape", "kernel"],
)
def test_damaged_model_files_are_refused(model_path, tmp_path, change, message):
    target = tmp_path / "bad.npz"
    change(model_path, target)
    with pytest.raises(ModelFileError, match=message):
        KernelPCA.load(target)


def test_missing_model_file_says_how_to_make_one(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist.*kpca fit"):
        KernelPCA.load(tmp_path / "none.npz")


def test_fit_turns_the_frame_store_into_the_model_file(tmp_path, small_frames):
    """fit_sources writes the frames once: the store becomes the model (frames first), a valid
    zip whose every member passes its CRC check, byte-identical from one fit to the next."""
    from kpcacli.workflows import fit_sources

    frames_dir = tmp_path / "frames"
    frames_dir.mkdir()
    from PIL import Image

    for index, frame in enumerate(small_frames):
        Image.fromarray(frame).save(frames_dir / f"f{index:02d}.png")
    first = fit_sources([str(frames_dir)], tmp_path / "a.npz", n_components=2)
    fit_sources([str(frames_dir)], tmp_path / "b.npz", n_components=2)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    with zipfile.ZipFile(tmp_path / "a.npz") as archive:
        assert archive.testzip() is None
        assert archive.infolist()[0].filename == "frames.npy"
        stored = np.lib.format.read_array(archive.open("frames.npy"))
    np.testing.assert_array_equal(stored.reshape(small_frames.shape), small_frames)
    np.testing.assert_array_equal(np.asarray(first.state_.frames).reshape(small_frames.shape), small_frames)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz", "b.npz", "frames"]  # no store left


def test_saving_elsewhere_copies_the_frames_last(tmp_path, small_frames):
    model = KernelPCA(n_components=2).fit(small_frames)
    model.save(tmp_path / "copy.npz")
    with zipfile.ZipFile(tmp_path / "copy.npz") as archive:
        assert archive.infolist()[-1].filename == "frames.npy" and archive.testzip() is None


def forge(path, target, **members):
    """A hand-edited copy of a model file: the named members replaced, everything else kept."""
    return rewrite(path, target, replace={name: np.asarray(value) for name, value in members.items()})


def edited(path, name, change):
    with np.load(path, allow_pickle=False) as archive:
        return change(archive[name].copy())


def with_value(array, index, value):
    array[index] = value
    return array


FORGERIES = {
    "negative-beta": (lambda p: {"beta": np.float64(-3.0)}, "beta must be a finite number > 0. Got -3.0"),
    "nan-eigenvectors": (
        lambda p: {"eigenvectors": edited(p, "eigenvectors", lambda a: with_value(a, (2, 1), np.nan))},
        "eigenvectors must be finite",
    ),
    "frame-shape": (lambda p: {"frame_shape": np.array([16, 12, 1])}, "frame_shape"),
    "frame-shape-length": (lambda p: {"frame_shape": np.array([8, 16])}, "frame_shape must hold the frame length 192"),
    "unsorted-eigenvalues": (
        lambda p: {"eigenvalues": edited(p, "eigenvalues", lambda a: a[::-1].copy())},
        "eigenvalues must be decreasing",
    ),
    "negative-eigenvalue": (
        lambda p: {"eigenvalues": edited(p, "eigenvalues", lambda a: with_value(a, -1, -1.0))},
        "eigenvalues must be decreasing, non-negative",
    ),
    "codes-not-from-gram": (
        lambda p: {"codes": edited(p, "codes", lambda a: a * 1.5)},
        "codes must be the training codes",
    ),
    "eigenvectors-not-orthonormal": (
        lambda p: {"eigenvectors": edited(p, "eigenvectors", lambda a: a * 2.0)},
        "orthonormal",
    ),
    "names-count": (lambda p: {"frame_names": np.array(["a", "b"])}, "frame_names must be 12 strings"),
    "degree-zero-poly": (
        lambda p: {"kernel": np.str_("poly"), "gamma": np.float64(1.0), "degree": np.int64(0)},
        "degree must be an int in the range [1, inf)",
    ),
    "centred-flag-type": (lambda p: {"centred": np.float64(1.0)}, "centred must hold booleans"),
    "gram-not-symmetric": (
        lambda p: {"linear_gram": edited(p, "linear_gram", lambda a: with_value(a, (0, 1), a[0, 1] + 1.0))},
        "linear_gram must be symmetric",
    ),
    "row-means-uncentred": (
        lambda p: {"gram_row_means": np.ones(12)},
        "must be zero for an uncentred model",
    ),
}


@pytest.mark.parametrize("case", sorted(FORGERIES))
def test_forged_members_are_refused_at_load_naming_the_member(model_path, tmp_path, case):
    """A hand-edited model is refused when it is loaded, before any use, with one line
    naming the member and what it must be."""
    members, message = FORGERIES[case]
    target = forge(model_path, tmp_path / "forged.npz", **members(model_path))
    with pytest.raises(ModelFileError) as caught:
        KernelPCA.load(target)
    text = str(caught.value)
    assert message in text and "forged.npz" in text and "\n" not in text, text


@pytest.mark.parametrize("command", [["info"], ["encode", "{frames}"], ["decode", "{codes}", "-o", "{out}"]])
def test_a_forged_model_is_one_line_and_exit_1_for_every_command(model_path, tmp_path, small_frames, command):
    from conftest import one_line_error, run

    target = forge(model_path, tmp_path / "forged.npz", beta=np.float64(-3.0))
    np.save(tmp_path / "frames.npy", small_frames[:2])
    np.save(tmp_path / "codes.npy", np.zeros((1, 2)))
    values = {"frames": tmp_path / "frames.npy", "codes": tmp_path / "codes.npy", "out": tmp_path / "back.png"}
    args = [str(part).format(**values) for part in command]
    one_line_error(run([*args, "-m", target]), 1, "forged.npz", "beta must be a finite number > 0")
    assert not (tmp_path / "back.png").exists()


def test_a_valid_model_passes_every_check(model_path):
    KernelPCA.load(model_path).state_.validate()  # no error: the checks accept what fit writes
