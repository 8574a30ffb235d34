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
    assert isinstance(model.frames_, np.memmap) and str(model.frames_.filename) == str(model_path.resolve())
    np.testing.assert_array_equal(np.asarray(model.frames_).reshape(small_frames.shape), small_frames)


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
        (lambda p, t: rewrite(p, t, replace={"kernel": np.str_("cubic")}), "unknown kernel"),
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
    import zlib

    from kpcacli import fit_sources
    from kpcacli.modelfile import crc32_combine

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
    np.testing.assert_array_equal(np.asarray(first.frames_).reshape(small_frames.shape), small_frames)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz", "b.npz", "frames"]  # no store left
    assert crc32_combine(zlib.crc32(b"head"), zlib.crc32(b"tail data"), 9) == zlib.crc32(b"headtail data")


def test_saving_elsewhere_copies_the_frames_last(tmp_path, small_frames):
    model = KernelPCA(n_components=2).fit(small_frames)
    model.save(tmp_path / "copy.npz")
    with zipfile.ZipFile(tmp_path / "copy.npz") as archive:
        assert archive.infolist()[-1].filename == "frames.npy" and archive.testzip() is None
