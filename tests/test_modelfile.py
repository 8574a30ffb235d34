"""The model: layout (format 3, a Zarr group with the frames as H.264 or Blosc chunks),
formats 1 and 2 still read, refusal of damaged, forged or unsafe models, and the three kinds
of location (file, directory, URL)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kpcacli import FrameModel, ModelFileError
from kpcacli.io.provenance import Provenance
from kpcacli.io.request import FrameRequest
from kpcacli.modelfile import REQUIRED
from kpcacli.modelfile.framecodec import FrameCodec
from kpcacli.modelfile.gramstorage import packed_gram, unpacked_gram
from kpcacli.modelfile.integrity import check_state
from kpcacli.modelfile.storedframes import CompressedFrames, VideoFrames
from kpcacli.modelfile.zarrlayout import SMALL_ARRAYS, encode_chunk, frame_chunk_key, frames_codecs
from kpcacli.modelfile.zarrwrite import metadata_entries

DATA = Path(__file__).parent / "data"


@pytest.fixture
def model_path(small_model_bytes, tmp_path):
    """``FrameModel(n_components=2)`` of the small frames, saved (conftest: fitted once)."""
    path = tmp_path / "model.npz"
    path.write_bytes(small_model_bytes)
    return path


def read_members(path) -> tuple[dict, dict, np.ndarray | None]:
    """(attributes, arrays, Blosc frames) of a format-2 or 3 model file, read with zarr itself;
    the H.264 store's ``stream`` and ``groups`` are among the arrays, and frames is None then."""
    from zarr.storage import ZipStore

    from kpcacli.modelfile.zarrlayout import quiet_numcodecs

    with quiet_numcodecs() as zarr:
        group = zarr.open_group(ZipStore(path, mode="r"), mode="r")
        arrays = {name: np.asarray(group[name][...]) for name in group.array_keys() if name != "frames"}
        frames = np.asarray(group["frames"][...]) if "frames" in group.array_keys() else None
        return dict(group.attrs), arrays, frames


def rewrite(path, target, replace=None, drop=()):
    """A copy of a model, written by zarr itself, with some members replaced or dropped."""
    import warnings

    import zarr
    from zarr.storage import ZipStore

    attributes, arrays, frames = read_members(path)
    for name, value in (replace or {}).items():
        if name in arrays:
            arrays[name] = np.asarray(value)
        else:
            attributes[name] = np.asarray(value).tolist()
    store = ZipStore(target, mode="w")
    root = zarr.create_group(store, attributes={k: v for k, v in attributes.items() if k not in drop})
    for name, array in arrays.items():
        if name not in drop:
            root.create_array(name, data=array, chunks=array.shape)
    if frames is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            root.create_array("frames", data=frames, chunks=(1, frames.shape[1]))
    store.close()
    return target


# Format 3 stores 8-bit images as H.264 (stream, groups and the frame_store attribute) instead
# of the frames array.
AXES = {"axis_eigenvectors", "axis_eigenvalues", "axis_centred_norms", "axis_scales", "linear_axes"}
REQUIRED_CODED = sorted(
    {
        *REQUIRED,
        *AXES,
        "stream",
        "groups",
        "axis_stream",
        "axis_groups",
        "frame_store",
        "solver_choice",
        "frame_digests",
    }
    - {"frames"}
)


def test_file_holds_every_documented_member(small_frames, tmp_path):
    """Every member a model may hold, the distance solver's axes among them (named at fit: a
    model stores them where a default solver uses them)."""
    model_path = tmp_path / "model.npz"
    FrameModel(n_components=2, solver="distance").fit(small_frames).save(model_path)
    attributes, arrays, frames = read_members(model_path)
    assert sorted([*attributes, *arrays]) == REQUIRED_CODED and attributes["format_version"] == 3
    assert frames is None and attributes["frame_store"] == {
        "codec": "h264",
        "crf": 0,
        "choice": "lossless",
        "why": "the frames were given as arrays",
    }
    digests = [hashlib.sha256(frame.tobytes()).digest() for frame in small_frames]  # each frame's, in row order
    assert arrays["frame_digests"].tobytes() == b"".join(digests)
    table = arrays["groups"]  # first frame, frames, byte offset, byte length, CRC-32
    assert table[:, :2].tolist() == [[0, 12]] and table[0, 2:4].tolist() == [0, table[0, 3]]
    stored = FrameModel.load(model_path).state_.frames
    assert isinstance(stored, VideoFrames)
    np.testing.assert_array_equal(np.asarray(stored).reshape(small_frames.shape), small_frames)  # lossless
    with zipfile.ZipFile(model_path) as archive:
        assert archive.testzip() is None


def test_frames_that_are_not_8_bit_images_keep_the_blosc_chunks(small_frames, tmp_path):
    frames = small_frames.astype(np.uint16) * 257
    FrameModel(n_components=2, solver="distance").fit(frames).save(tmp_path / "wide.npz")
    attributes, arrays, stored = read_members(tmp_path / "wide.npz")
    assert sorted([*attributes, *arrays, "frames"]) == sorted({*REQUIRED, *AXES, "axis_frames", "solver_choice"})
    assert attributes["format_version"] == 3 and attributes["linear_axes"] == {"codec": "float32"}
    np.testing.assert_array_equal(stored.reshape(frames.shape), frames)
    with zipfile.ZipFile(tmp_path / "wide.npz") as archive:
        names = archive.namelist()
        chunk = archive.read(frame_chunk_key(4, 0))
    assert [name for name in names if name.startswith("frames/c/")] == [frame_chunk_key(i, 0) for i in range(12)]
    assert chunk == encode_chunk(frames[4].ravel())  # the chunks are compressed as zarr's codecs say
    assert len(chunk) < frames[4].nbytes


def zarr_codecs(zarr, dtype) -> dict:
    """The frames' codecs as zarr-python objects, for zarr to write with."""
    from zarr.codecs import BloscCodec
    from zarr.codecs.numcodecs import Delta

    codecs = {codec["name"]: codec.get("configuration", {}) for codec in frames_codecs(dtype)}
    filters = [Delta(**codecs["numcodecs.delta"])] if "numcodecs.delta" in codecs else None
    return {"filters": filters, "compressors": [BloscCodec(**codecs["blosc"])]}


def zarr_metadata_entries(members: dict, n: int, d: int, dtype) -> dict[str, bytes]:
    """What zarr-python itself writes for a model's group, but the frame chunks."""
    from zarr.storage import MemoryStore

    from kpcacli.modelfile.zarrlayout import chunk_columns, quiet_numcodecs
    from kpcacli.modelfile.zarrwrite import _json_value

    scalars = {name: _json_value(value) for name, value in members.items() if name not in SMALL_ARRAYS}
    scalars["frame_shape"] = [int(v) for v in members["frame_shape"]]
    scalars["frame_names"] = [str(v) for v in members["frame_names"]]
    contents: dict = {}
    with quiet_numcodecs() as zarr:
        root = zarr.create_group(MemoryStore(contents), attributes=scalars, zarr_format=3)
        for name in SMALL_ARRAYS:
            array = np.ascontiguousarray(members[name])
            root.create_array(name, data=array, chunks=array.shape, compressors=None, fill_value=0)
        codecs = zarr_codecs(zarr, dtype)
        root.create_array("frames", shape=(n, d), dtype=dtype, chunks=(1, chunk_columns(d)), fill_value=0, **codecs)
    return {key: buffer.to_bytes() for key, buffer in sorted(contents.items())}


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_our_metadata_is_the_bytes_zarr_writes(small_frames, dtype, kernel):
    """The group's metadata is written without zarr (its import slows a fit): it must be
    zarr's own, for every frame dtype, with NaN parameters, all-zero arrays and any name."""
    from kpcacli.modelfile import members

    frames = small_frames.reshape(12, -1).astype(dtype)
    model = FrameModel(kernel=kernel, n_components=2, center=kernel == "rbf")
    model.fit(frames, frame_shape=small_frames.shape[1:], names=[f"frame {i} – ü.png" for i in range(12)])
    values = members(model.state_)
    values["format_version"] = 2
    ours = metadata_entries(values, *frames.shape, frames.dtype)
    assert ours == zarr_metadata_entries(values, *frames.shape, frames.dtype)


def test_provenance_round_trips_and_its_metadata_is_zarrs(small_frames, tmp_path):
    """The frames' origin (:mod:`kpcacli.io.provenance`) is one nested attribute: written as zarr
    writes it, read back equal, kept by with_components, and absent from older models."""
    from helpers import ok, run

    from kpcacli.modelfile import members

    frames = small_frames.reshape(12, -1)
    provenance = Provenance(tuple(range(3, 27, 2)), 40, "3::2", 29.97, 123456)
    model = FrameModel(n_components=2).fit(frames, frame_shape=small_frames.shape[1:], provenance=provenance)
    values = members(model.state_)
    values["format_version"] = 2
    assert metadata_entries(values, *frames.shape, frames.dtype) == zarr_metadata_entries(
        values, *frames.shape, frames.dtype
    )
    for location in (tmp_path / "m.npz", f"{tmp_path}/m.zarr/"):
        model.save(location)
        assert FrameModel.load(location).state_.provenance == provenance
    assert model.with_components(3).state_.provenance == provenance
    older = json.loads(ok(run(["info", "-m", DATA / "format1.npz", "--json"])).stdout)
    assert older["frame_indices"] is None and older["frame_rate"] is None and older["sizes"]["source_bytes"] is None
    assert "source" not in ok(run(["info", "-m", DATA / "format1.npz"])).stdout


def test_our_chunks_are_the_bytes_zarr_writes(small_frames):
    """The frames are compressed on our own threads: the bytes must be zarr's own."""
    from zarr.storage import MemoryStore

    from kpcacli.modelfile.zarrlayout import quiet_numcodecs

    for frames in (small_frames.reshape(12, -1), small_frames.reshape(12, -1).astype(np.uint16) * 257):
        for dtype in (frames.dtype, np.float32):
            rows = frames.astype(dtype)
            contents: dict = {}
            with quiet_numcodecs() as zarr:
                array = zarr.create_array(
                    MemoryStore(contents),
                    shape=rows.shape,
                    dtype=rows.dtype,
                    chunks=(1, rows.shape[1]),
                    fill_value=0,
                    **zarr_codecs(zarr, rows.dtype),
                )
                array[...] = rows
            assert contents["c/3/0"].to_bytes() == encode_chunk(rows[3])


def test_decode_reads_only_the_frames_it_needs(model_path, small_frames):
    model = FrameModel.load(model_path)
    frames = model.state_.frames
    assert isinstance(frames, VideoFrames)
    model.decode(model.state_.codes[3:4])
    assert "matrix" not in vars(frames)  # two neighbours read, not the whole matrix
    model.encode(small_frames[:2])
    np.testing.assert_array_equal(np.asarray(frames).reshape(small_frames.shape), small_frames)


def test_a_format_1_model_still_loads_memory_mapped(small_frames):
    """A model written by kpca 0.1 (format 1, committed as a fixture) loads and encodes as it did."""
    path = DATA / "format1.npz"
    model = FrameModel.load(path)
    assert isinstance(model.state_.frames, np.memmap) and str(model.state_.frames.filename) == str(path.resolve())
    np.testing.assert_array_equal(np.asarray(model.state_.frames).reshape(small_frames.shape), small_frames)
    np.testing.assert_allclose(model.encode(small_frames[:3]), np.load(DATA / "format1-codes.npy"), rtol=1e-12)
    assert model.state_.centred and model.n_components_ == 2


class RunsCode:
    """Unpickling this would create a marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_pickled_object_arrays_in_format_1_are_refused_without_unpickling(tmp_path):
    marker = tmp_path / "pwned"
    evil = np.empty(1, dtype=object)
    evil[0] = RunsCode(marker)
    for member in ("codes", "frames"):
        target = tmp_path / f"evil-{member}.npz"
        with np.load(DATA / "format1.npz", allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        arrays[member] = evil
        np.savez(target, **arrays)  # numpy pickles the object array into the file
        assert pickle.dumps(evil)  # sanity: the payload is picklable
        with pytest.raises(ModelFileError, match="pickled objects"):
            FrameModel.load(target)
        assert not marker.exists()


def with_codec(path, target, member, codecs):
    """A copy of a model whose `member` array declares other codecs (and holds a pickle)."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == f"{member}/zarr.json":
                metadata = json.loads(data)
                metadata["codecs"] = codecs
                data = json.dumps(metadata).encode()
            elif info.filename.startswith(f"{member}/c/"):
                data = pickle.dumps(RunsCode(Path(target).parent / "pwned"))
            out.writestr(info, data)
    return target


@pytest.mark.parametrize(
    "codecs",
    [
        [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.pickle"}],
        [{"name": "numcodecs.pickle", "configuration": {"protocol": 5}}],
        [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
    ],
    ids=["pickle-after-bytes", "pickle-alone", "gzip"],
)
@pytest.mark.parametrize("member", ["codes", "stream"])
def test_codecs_outside_the_allow_list_are_refused_before_any_chunk_is_read(model_path, tmp_path, member, codecs):
    target = with_codec(model_path, tmp_path / "evil.npz", member, codecs)
    with pytest.raises(ModelFileError) as caught:
        FrameModel.load(target)
    assert "evil.npz" in str(caught.value) and "\n" not in str(caught.value)
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p, t: t.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]), "truncated|damaged|not a zip"),
        (lambda p, t: t.write_bytes(p.read_bytes()[:-50]), "truncated|damaged|not a zip"),
        (lambda p, t: t.write_text("just text"), "not a kpca model"),
        (lambda p, t: rewrite(p, t, drop=("eigenvectors",)), "lacks eigenvectors"),
        (lambda p, t: rewrite(p, t, drop=("gram_mean",)), "lacks gram_mean"),
        (lambda p, t: rewrite(p, t, replace={"format_version": 99}), "version 99.*reads versions 1, 2 and 3"),
        (lambda p, t: rewrite(p, t, replace={"codes": np.zeros((3, 2))}), "codes"),
        (lambda p, t: rewrite(p, t, replace={"codes": np.zeros((400, 2))}), "codes must fit 12 frames"),
        (lambda p, t: rewrite(p, t, replace={"linear_gram": np.zeros((12, 12), dtype=np.int32)}), "linear_gram"),
        (lambda p, t: rewrite(p, t, replace={"frame_shape": np.array([5, 5])}), "frame_shape"),
        (lambda p, t: rewrite(p, t, replace={"kernel": "cubic"}), "kernel must be one of"),
        (lambda p, t: rewrite(p, t, replace={"frame_names": "abc"}), "frame_names must be a list"),
        (
            lambda p, t: rewrite(
                p, t, replace={"solver_choice": {"solver": "magic", "rule": "distance", "scores": {}, "held_back": 0}}
            ),
            "solver_choice must name a known solver",
        ),
        (
            lambda p, t: rewrite(
                p,
                t,
                replace={
                    "solver_choice": {"solver": "log", "rule": "distance", "scores": {"log": "x"}, "held_back": 4}
                },
            ),
            "solver_choice must name a known solver",
        ),
    ],
    ids=[
        "half",
        "tail-cut",
        "text",
        "missing-array",
        "missing-scalar",
        "version",
        "codes-shape",
        "codes-huge",
        "gram-dtype",
        "frame-shape",
        "kernel",
        "names-not-list",
        "solver-unknown",
        "solver-score-text",
    ],
)
def test_damaged_model_files_are_refused(model_path, tmp_path, change, message):
    target = tmp_path / "bad.npz"
    change(model_path, target)
    with pytest.raises(ModelFileError, match=message):
        FrameModel.load(target)


@pytest.mark.parametrize(
    "damage",
    [lambda data: data[:10], lambda data: data[:100] + bytes([data[100] ^ 1]) + data[101:]],
    ids=["cut", "one-bit"],
)
def test_a_damaged_frame_store_is_one_line_when_read(model_path, tmp_path, damage):
    """A cut chunk, or one flipped bit in the H.264 bytes (which a decoder could turn into a
    wrong picture without a word), is one error naming the frames, read alone or all at once."""
    target = tmp_path / "bad.npz"
    with zipfile.ZipFile(model_path) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            out.writestr(info, damage(data) if info.filename == "stream/c/0" else data)
    model = FrameModel.load(target)
    with pytest.raises(ModelFileError, match="frames 0–11 are damaged") as caught:
        model.state_.frames[3]
    assert "\n" not in str(caught.value)
    with pytest.raises(ModelFileError, match="damaged"):
        np.asarray(model.state_.frames)


def test_a_damaged_blosc_chunk_is_one_line_when_read(small_frames, tmp_path):
    FrameModel(n_components=2).fit(small_frames.astype(np.uint16)).save(tmp_path / "wide.npz")
    target = tmp_path / "bad.npz"
    with zipfile.ZipFile(tmp_path / "wide.npz") as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            out.writestr(info, data[:10] if info.filename == frame_chunk_key(2, 0) else data)
    model = FrameModel.load(target)
    with pytest.raises(ModelFileError, match="damaged"):
        np.asarray(model.state_.frames)


def test_a_format_2_model_still_loads_and_decodes_as_it_did():
    """A model written by format 2 (Blosc frames; committed as a fixture) decodes its codes to
    the frame it gave then."""
    model = FrameModel.load(DATA / "format2.npz")
    assert isinstance(model.state_.frames, CompressedFrames) and model.state_.frame_store is None
    np.testing.assert_array_equal(
        model.decode(np.load(DATA / "format2-codes.npy")), np.load(DATA / "format2-decoded.npy")
    )


def test_a_format_3_model_of_groups_of_16_still_loads_and_decodes_as_it_did():
    """A model written before the store's groups grew to 32 frames (groups of 16, one reference
    frame; committed as a fixture: 40 frames of 64 x 36) reads the same frames, bit for bit, and
    decodes its codes to the frames it gave then."""
    import hashlib

    model = FrameModel.load(DATA / "format3-groups16.npz")
    frames = model.state_.frames
    assert isinstance(frames, VideoFrames) and list(frames.table[:, 1]) == [16, 16, 8]
    digest = hashlib.sha256(np.ascontiguousarray(np.asarray(frames)).tobytes()).hexdigest()
    assert digest == "39c5e163eadf6fb566c0f4b930d4d4255e1a45c8905145f4029d7f8124d49623"  # as it read then
    np.testing.assert_array_equal(
        model.decode(np.load(DATA / "format3-groups16-codes.npy")), np.load(DATA / "format3-groups16-decoded.npy")
    )


def test_missing_model_file_says_how_to_make_one(tmp_path):
    with pytest.raises(ModelFileError, match="does not exist.*kpca fit"):
        FrameModel.load(tmp_path / "none.npz")


def test_fit_writes_an_identical_file_and_leaves_nothing_beside_it(tmp_path, small_frames):
    from PIL import Image

    from kpcacli.workflows import fit_sources

    frames_dir = tmp_path / "frames"
    frames_dir.mkdir()
    for index, frame in enumerate(small_frames):
        Image.fromarray(frame).save(frames_dir / f"f{index:02d}.png")
    first = fit_sources(FrameRequest.of([str(frames_dir)]), tmp_path / "a.npz", model=FrameModel(n_components=2))
    fit_sources(FrameRequest.of([str(frames_dir)]), tmp_path / "b.npz", model=FrameModel(n_components=2))
    assert first.state_.frame_store["choice"] == "lossless"  # the default store is exact
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npz", "b.npz", "frames"]  # no store left
    # A lossy store the same way twice: x264 without its macroblock tree, which made the same
    # frames two streams when the cores were busy.
    assert "mbtree=0" in FrameCodec(20).options()["x264-params"]
    for name in ("c.npz", "d.npz"):
        fit_sources(FrameRequest.of([str(frames_dir)]), tmp_path / name, model=FrameModel(n_components=2), store_crf=20)
    assert (tmp_path / "c.npz").read_bytes() == (tmp_path / "d.npz").read_bytes()


def test_a_fit_from_files_is_the_fit_in_memory(tmp_path, hand):
    """Through the command's workflow (frames through the store, compressed while they load)
    the model file is the one an in-memory fit writes, but for why the store is lossless H.264
    (the files were weighed against it; arrays have no files)."""
    from PIL import Image

    from kpcacli.workflows import fit_sources

    folder = tmp_path / "frames"
    folder.mkdir()
    names = []
    for index, frame in enumerate(hand[:40]):
        names.append(str(folder / f"f{index:02d}.png"))
        Image.fromarray(frame).save(names[-1])
    fit_sources(FrameRequest.of([str(folder)]), tmp_path / "streamed.npz", model=FrameModel(n_components=4))
    provenance = Provenance(tuple(range(40)), 40, source_bytes=sum(Path(name).stat().st_size for name in names))
    FrameModel(n_components=4).fit(hand[:40], names=names, provenance=provenance).save(tmp_path / "memory.npz")
    with zipfile.ZipFile(tmp_path / "streamed.npz") as streamed, zipfile.ZipFile(tmp_path / "memory.npz") as memory:
        assert streamed.namelist() == memory.namelist()
        for name in streamed.namelist():
            if name != "zarr.json":
                assert streamed.read(name) == memory.read(name), name
        attributes = [json.loads(archive.read("zarr.json"))["attributes"] for archive in (streamed, memory)]
    whys = [attributes[0]["frame_store"].pop("why"), attributes[1]["frame_store"].pop("why")]
    assert attributes[0] == attributes[1]
    assert "the 40 image files take" in whys[0] and whys[1] == "the frames were given as arrays"


@pytest.mark.parametrize("kind", ["directory", "zarr-suffix", "file-url"])
def test_a_model_can_be_a_directory_or_a_url(tmp_path, small_frames, kind):
    location = {
        "directory": f"{tmp_path}/model/",
        "zarr-suffix": str(tmp_path / "model.zarr"),
        "file-url": f"file://{tmp_path}/remote.zarr",
    }[kind]
    model = FrameModel(n_components=2).fit(small_frames)
    model.save(location)
    loaded = FrameModel.load(location)
    np.testing.assert_array_equal(loaded.encode(small_frames[:3]), model.encode(small_frames[:3]))
    np.testing.assert_array_equal(np.asarray(loaded.state_.frames).reshape(small_frames.shape), small_frames)
    model.with_components(1).save(location)  # overwriting replaces the model whole
    assert FrameModel.load(location).n_components_ == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == [Path(location.rstrip("/")).name]


def test_a_folder_that_is_not_a_model_is_never_overwritten(tmp_path, small_frames):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "keep.png").write_bytes(b"x")
    with pytest.raises(ModelFileError, match="not a kpca model directory"):
        FrameModel(n_components=2).fit(small_frames).save(folder)
    assert (folder / "keep.png").read_bytes() == b"x"


def forge(path, target, **members):
    """A hand-edited copy of a model file: the named members replaced, everything else kept."""
    return rewrite(path, target, replace=members)


def edited(path, name, change):
    return change(read_members(path)[1][name].copy())


def with_value(array, index, value):
    array[index] = value
    return array


FORGERIES = {
    "negative-beta": (lambda p: {"beta": np.float64(-3.0)}, "beta must be a float in the range (0.0, inf). Got -3.0"),
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
        lambda p: {"linear_gram": edited(p, "linear_gram", lambda a: with_value(unpacked_gram(a, 12), (0, 1), 1.5))},
        "linear_gram must be symmetric",
    ),
    "row-means-uncentred": (
        lambda p: {"gram_row_means": np.ones(12)},
        "must be zero for an uncentred model",
    ),
    "provenance-not-mapping": (lambda p: {"provenance": [1, 2]}, "provenance must be a mapping"),
    "provenance-count": (
        lambda p: {"provenance": {"frame_indices": [0, 1]}},
        "provenance.frame_indices must be 12 non-negative integers",
    ),
    "provenance-beyond-source": (
        lambda p: {"provenance": {"frame_indices": list(range(12)), "source_frames": 5}},
        "provenance.frame_indices must be below source_frames (5). Got 11",
    ),
    "provenance-rate": (
        lambda p: {"provenance": {"frame_indices": list(range(12)), "frame_rate": -25}},
        "provenance.frame_rate must be a positive number or null. Got -25",
    ),
    "provenance-bytes": (
        lambda p: {"provenance": {"frame_indices": list(range(12)), "source_bytes": "big"}},
        "provenance.source_bytes must be a non-negative integer or null",
    ),
}


@pytest.mark.parametrize("case", sorted(FORGERIES))
def test_forged_members_are_refused_at_load_naming_the_member(model_path, tmp_path, case):
    """A hand-edited model is refused when it is loaded, before any use, with one line
    naming the member and what it must be."""
    members, message = FORGERIES[case]
    target = forge(model_path, tmp_path / "forged.npz", **members(model_path))
    with pytest.raises(ModelFileError) as caught:
        FrameModel.load(target)
    text = str(caught.value)
    assert message in text and "forged.npz" in text and "\n" not in text, text


@pytest.mark.parametrize("command", [["info"], ["encode", "{frames}"], ["decode", "{codes}", "-o", "{out}"]])
def test_a_forged_model_is_one_line_and_exit_1_for_every_command(model_path, tmp_path, small_frames, command):
    from helpers import one_line_error, run

    target = forge(model_path, tmp_path / "forged.npz", beta=np.float64(-3.0))
    np.save(tmp_path / "frames.npy", small_frames[:2])
    np.save(tmp_path / "codes.npy", np.zeros((1, 2)))
    values = {"frames": tmp_path / "frames.npy", "codes": tmp_path / "codes.npy", "out": tmp_path / "back.png"}
    args = [str(part).format(**values) for part in command]
    one_line_error(run([*args, "-m", target]), 1, "forged.npz", "beta must be a float in the range (0.0, inf)")
    assert not (tmp_path / "back.png").exists()


def test_a_valid_model_passes_every_check(model_path):
    check_state(FrameModel.load(model_path).state_)  # no error: the checks accept what fit writes


def test_info_tells_the_format_and_the_size_against_the_raw_frames(model_path):
    from helpers import ok, run

    from kpcacli.workflows.summary import human_size

    assert [human_size(v) for v in (812, 1536, 52140919, 3 * 2**30)] == ["812 B", "1.5 KiB", "49.7 MiB", "3.0 GiB"]
    text = ok(run(["info", "-m", str(DATA / "format1.npz")])).output
    assert "format 1" in text and "of the frames' raw 2.2 KiB" in text
    text = ok(run(["info", "-m", str(model_path)])).output
    assert "format 3" in text and "of the frames' raw 2.2 KiB" in text


def test_frames_compressed_while_loading_give_the_same_file(tmp_path, small_frames):
    """16-bit frames (kept by Blosc) compressed as they load give the file compressed at save."""
    from kpcacli.io.readers import Frame
    from kpcacli.modelfile import save
    from kpcacli.modelfile.zarrwrite import FrameCompressor

    frames = small_frames.astype(np.uint16) * 257
    model = FrameModel(n_components=2).fit(frames)
    with FrameCompressor() as compressor:
        passed = list(compressor.tap(Frame(str(i), frame) for i, frame in enumerate(frames)))
        assert [frame.name for frame in passed] == [str(i) for i in range(12)]
        assert compressor.chunks_for(model.state_.frames) is not None
        save(model.state_, tmp_path / "tapped.npz", compressor=compressor)
        assert compressor.chunks_for(model.state_.frames[:5]) is None  # other frames: not used
    save(model.state_, tmp_path / "plain.npz")
    assert (tmp_path / "tapped.npz").read_bytes() == (tmp_path / "plain.npz").read_bytes()


def test_8_bit_images_are_not_compressed_while_loading(small_frames):
    """8-bit images go to the H.264 store: Blosc-compressing them as they load was work thrown
    away (a third of a core's time on the megapixel fit)."""
    from kpcacli.io.readers import Frame
    from kpcacli.modelfile.zarrwrite import FrameCompressor

    with FrameCompressor() as compressor:
        passed = list(compressor.tap(Frame(str(i), frame) for i, frame in enumerate(small_frames)))
        assert len(passed) == 12 and compressor.chunks_for(small_frames.reshape(12, -1)) is None


def test_zarr_and_numcodecs_are_imported_one_thread_at_a_time():
    """zarr is imported on a background thread while frames load and are compressed on another;
    their modules import each other, and two threads importing them at once failed in CI
    ("partially initialized module"). Every import goes through zarrlayout's lock: no module
    of the package imports them any other way."""
    import ast

    from helpers import syntax_nodes

    package = Path(__file__).resolve().parent.parent / "kpcacli"
    offenders = []
    for path in package.rglob("*.py"):
        for node in syntax_nodes(path):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module]
            offenders += [f"{path.name}:{node.lineno}" for name in names if name.split(".")[0] in ("zarr", "numcodecs")]
    assert offenders == []


def open_files_named(path) -> list[str]:
    """The descriptors this process holds on `path`, without collecting garbage first."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                found.append(fd)
    return found


@pytest.mark.parametrize("case", ["refused", "used"])
def test_a_model_file_is_closed_by_kpca_not_by_the_garbage_collector(model_path, tmp_path, case):
    """A refused model left its zip open, held by the error's traceback until the garbage
    collector closed it with a ResourceWarning (an error in whichever later test it ran in).
    Now a refused model is closed before the error leaves kpca, and a used one when the last
    object reading it goes, whether or not it sits in a reference cycle."""
    import gc

    gc.disable()
    try:
        if case == "refused":
            target = forge(model_path, tmp_path / "forged.npz", kernel="cubic")
            with pytest.raises(ModelFileError) as caught:
                FrameModel.load(target)
            assert caught.value.__traceback__ is not None and open_files_named(target) == []
        else:
            model = FrameModel.load(model_path)
            model.decode(model.state_.codes[:2])
            assert open_files_named(model_path) != []  # read on demand while the model is in use
            model.itself = model  # a cycle: only the garbage collector frees it
            del model
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                gc.collect()
            assert open_files_named(model_path) == []
    finally:
        gc.enable()


@pytest.mark.parametrize("target", ["model.npz", "model.zarr"])
def test_kpca_reads_its_own_files_as_zarr_reads_them(tmp_path, hand, target):
    """kpcacli.modelfile.zarrread (no zarr import) reads a format-3 model, H.264 frames and axes
    included, to the same members as zarr-python does; a model with Blosc frames (16-bit) is
    left to zarr."""
    from kpcacli.modelfile import zarrread as zarrread
    from kpcacli.modelfile.zarrformat import _open_group, _read_group
    from kpcacli.modelfile.zarrlayout import quiet_numcodecs

    path = tmp_path / target
    FrameModel(n_components=3, solver="distance").fit(hand[:24]).save(path)  # axes worth storing
    group, store = zarrread.open_group(path)
    ours, our_frames = _read_group(group, path)
    with quiet_numcodecs() as zarr:
        their_group, their_store = _open_group(zarr, path)
    theirs, their_frames = _read_group(their_group, path)
    assert ours.keys() == theirs.keys() and "linear_axes" in ours
    for name, value in ours.items():
        if name == "linear_axes":
            assert value.keys() == theirs[name].keys()
            for key, member in value.items():
                if key == "frames":
                    np.testing.assert_array_equal(np.asarray(member), np.asarray(theirs[name][key]))
                else:
                    np.testing.assert_array_equal(member, theirs[name][key])
        elif isinstance(value, np.ndarray):
            assert value.dtype == theirs[name].dtype
            np.testing.assert_array_equal(value, theirs[name])
        else:
            assert value == theirs[name]
    np.testing.assert_array_equal(np.asarray(our_frames), np.asarray(their_frames))
    np.testing.assert_array_equal(our_frames[5], hand[5].ravel())
    store.close()
    their_store.close()

    deep = tmp_path / f"deep-{target}"
    FrameModel(n_components=3).fit(hand[:12].astype(np.uint16) * 257).save(deep)
    group, store = zarrread.open_group(deep)
    with pytest.raises(zarrread.NeedsZarr):
        _read_group(group, deep)
    store.close()


def test_a_group_is_decoded_only_as_far_as_its_frames_are_asked_for(small_frames):
    """GroupDecoder: frame 2 of a group decodes frames 0 to 2, frame 9 then goes on from
    there, never back to the start, and every frame is the one coded (lossless)."""
    from kpcacli.modelfile.framecodec import GroupDecoder

    frames = np.concatenate([small_frames, small_frames[::-1]])[:16]
    codec = FrameCodec(0)
    decoder = GroupDecoder(codec, codec.encode(frames), 16, frames.shape[1:])
    np.testing.assert_array_equal(decoder.frame(2), frames[2].ravel())
    assert len(decoder.decoded) == 3
    np.testing.assert_array_equal(decoder.frame(9), frames[9].ravel())
    assert len(decoder.decoded) == 10
    np.testing.assert_array_equal(decoder.frame(1), frames[1].ravel())
    np.testing.assert_array_equal(decoder.every_frame(), frames.reshape(16, -1))


def test_rows_of_several_groups_are_read_a_group_a_task(small_frames, tmp_path, monkeypatch):
    """VideoFrames.rows: the frames asked for, as reading them one by one gives them, read in
    one task per group, so that groups decode side by side (a task per row queued a group's
    rows behind its lock)."""
    import kpcacli.modelfile.storedframes as storedframes
    from kpcacli.modelfile.framecodec import GROUP_FRAMES

    frames = np.concatenate([small_frames] * (2 * GROUP_FRAMES // len(small_frames) + 1))[: 2 * GROUP_FRAMES + 5]
    path = tmp_path / "m.npz"
    FrameModel(n_components=2).fit(frames).save(path)
    stored = FrameModel.load(path).state_.frames
    assert isinstance(stored, VideoFrames) and len(stored.table) == 3
    tasks = []
    original = storedframes.ordered_map

    def recording(function, items, workers):
        items = list(items)
        tasks.extend(items)
        return original(function, items, workers)

    monkeypatch.setattr(storedframes, "ordered_map", recording)
    wanted = np.array([1, 3, GROUP_FRAMES + 2, GROUP_FRAMES + 3, 2 * GROUP_FRAMES + 4])
    np.testing.assert_array_equal(stored.rows(wanted, 2), frames.reshape(len(frames), -1)[wanted])
    assert [list(task) for task in tasks] == [[0, 1], [2, 3], [4]]  # positions in `wanted`, by group


@pytest.mark.parametrize("kind", ["integers", "floats", "asymmetric"])
def test_the_gram_is_stored_as_its_upper_triangle_and_read_back_bit_for_bit(kind):
    rng = np.random.default_rng(3)
    values = rng.integers(-(2**40), 2**40, size=(7, 7)).astype(np.float64)
    if kind == "floats":
        values = values / 3.0
    gram = values if kind == "asymmetric" else values + values.T
    member = packed_gram(gram)
    assert member.shape == ((7, 7) if kind == "asymmetric" else (28,))
    assert member.dtype == (np.int64 if kind == "integers" else np.float64)
    assert unpacked_gram(member, 7).tobytes() == gram.tobytes()
    with pytest.raises(ModelFileError, match="upper triangle"):
        unpacked_gram(np.zeros(27), 7)
