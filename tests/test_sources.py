"""Loading every source kind of the command-line contract, and the dtype rule."""

from __future__ import annotations

import io

import numpy as np
import pytest
from helpers import open_descriptors
from PIL import Image

from kpcacli import InputError
from kpcacli.io.outputs import write_video
from kpcacli.io.sources import count_frames, iter_frames, natural_key, parse_size
from kpcacli.io.trainingstore import TrainingStore


def grey(value: int, size=(8, 6)) -> np.ndarray:
    return np.full((size[1], size[0]), value, dtype=np.uint8)


def save(path, array, mode=None):
    Image.fromarray(array, mode=mode).save(path)
    return str(path)


def pixels(sources, **kwargs):
    return [frame.pixels for frame in iter_frames(sources, **kwargs)]


def test_folder_is_read_in_natural_order(tmp_path):
    for index in (10, 2, 1):
        save(tmp_path / f"frame{index}.png", grey(index))
    (tmp_path / "notes.txt").write_text("not an image")
    frames = list(iter_frames([str(tmp_path)]))
    assert [f.pixels[0, 0] for f in frames] == [1, 2, 10]
    assert sorted(["f10", "f2", "f1"], key=natural_key) == ["f1", "f2", "f10"]


def test_glob_pattern_and_explicit_files_keep_order(tmp_path):
    for index in (3, 1, 2):
        save(tmp_path / f"a{index}.png", grey(index))
    assert [p[0, 0] for p in pixels([str(tmp_path / "a*.png")])] == [1, 2, 3]
    assert [p[0, 0] for p in pixels([str(tmp_path / "a3.png"), str(tmp_path / "a1.png")])] == [3, 1]


def test_colour_and_alpha_become_pillow_luma(tmp_path):
    rgb = np.zeros((4, 5, 3), dtype=np.uint8)
    rgb[..., 0], rgb[..., 1], rgb[..., 2] = 200, 100, 50
    save(tmp_path / "rgb.png", rgb)
    rgba = np.dstack([rgb, np.full((4, 5), 128, dtype=np.uint8)])
    save(tmp_path / "rgba.png", rgba)
    expected = np.asarray(Image.fromarray(rgb).convert("L"))
    for name in ("rgb.png", "rgba.png"):
        (frame,) = pixels([str(tmp_path / name)])
        assert frame.dtype == np.uint8
        np.testing.assert_array_equal(frame, expected)


def test_sixteen_bit_images_keep_their_range(tmp_path):
    deep = (np.arange(30, dtype=np.uint16).reshape(5, 6) * 2000).astype(np.uint16)
    Image.fromarray(deep).save(tmp_path / "deep.png")
    (frame,) = pixels([str(tmp_path / "deep.png")])
    assert frame.dtype == np.uint16
    np.testing.assert_array_equal(frame, deep)


def test_multi_frame_tiff(tmp_path):
    pages = [Image.fromarray(grey(v)) for v in (5, 6, 7)]
    pages[0].save(tmp_path / "stack.tif", save_all=True, append_images=pages[1:])
    assert [p[0, 0] for p in pixels([str(tmp_path / "stack.tif")])] == [5, 6, 7]


@pytest.mark.parametrize("extension", ["mp4", "avi", "gif"])
def test_video_frames_are_read_in_order(tmp_path, extension):
    ramp = np.stack([np.full((16, 24), 40 + 40 * i, dtype=np.uint8) for i in range(4)])
    path = tmp_path / f"clip.{extension}"
    write_video(ramp, str(path))
    frames = pixels([str(path)])
    assert len(frames) == 4 and frames[0].shape == (16, 24)
    # Lossy codecs: the mean grey level survives to within a few levels.
    assert [round(float(f.mean()) / 40) for f in frames] == [1, 2, 3, 4]


@pytest.mark.parametrize(("extension", "codec"), [("mpeg", "mpeg1video"), ("mpg", "mpeg2video")])
def test_streams_kpca_does_not_write_are_read_as_videos(tmp_path, extension, codec):
    """An MPEG program stream (ViSP's cube.mpeg) was taken for an image: 'damaged or truncated'."""
    import av

    path = tmp_path / f"clip.{extension}"
    with av.open(str(path), "w", format="mpeg") as output:
        stream = output.add_stream(codec, rate=25)
        stream.width, stream.height, stream.pix_fmt = 32, 16, "yuv420p"
        for level in (40, 80, 120, 160):
            rgb = np.full((16, 32, 3), level, dtype=np.uint8)
            output.mux(stream.encode(av.VideoFrame.from_ndarray(rgb, format="rgb24")))
        output.mux(stream.encode())
    frames = pixels([str(path)])
    assert [round(float(f.mean()) / 40) for f in frames] == [1, 2, 3, 4]
    assert count_frames([str(path)]) == 4


def test_count_frames_reads_headers_and_agrees_with_loading(tmp_path):
    """What a cluster counts before loading (to place uniform landmarks) is what loads."""
    pages = [Image.fromarray(grey(v)) for v in (5, 6, 7)]
    pages[0].save(tmp_path / "a_stack.tif", save_all=True, append_images=pages[1:])
    Image.fromarray(grey(9)).save(tmp_path / "b_one.png")
    write_video(np.stack([grey(40 * i) for i in range(5)]), str(tmp_path / "c_clip.mp4"))
    write_video(np.stack([grey(40 * i) for i in range(3)]), str(tmp_path / "d_clip.gif"))
    np.save(tmp_path / "e_stack.npy", np.zeros((4, 6, 8), dtype=np.uint8))
    sources = sorted(str(path) for path in tmp_path.iterdir())
    assert count_frames(sources) == len(pixels(sources)) == 3 + 1 + 5 + 3 + 4


def test_matrices_are_rows_of_points(tmp_path):
    data = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "p.npy", data)
    np.savetxt(tmp_path / "p.csv", data, delimiter=",")
    np.savetxt(tmp_path / "p.txt", data)
    for name in ("p.npy", "p.csv", "p.txt"):
        rows = pixels([str(tmp_path / name)])
        assert len(rows) == 4 and rows[0].dtype == np.float64
        np.testing.assert_array_equal(np.stack(rows), data)


def test_three_dimensional_npy_is_a_stack_of_frames(tmp_path):
    stack = np.random.default_rng(0).integers(0, 256, size=(3, 5, 7), dtype=np.uint8)
    np.save(tmp_path / "stack.npy", stack)
    frames = pixels([str(tmp_path / "stack.npy")])
    assert len(frames) == 3 and frames[0].dtype == np.uint8
    np.testing.assert_array_equal(np.stack(frames), stack)


@pytest.mark.parametrize("kind", ["png", "npy", "text"])
def test_standard_input(kind):
    if kind == "png":
        buffer = io.BytesIO()
        Image.fromarray(grey(9)).save(buffer, format="PNG")
        expected = [grey(9)]
    elif kind == "npy":
        buffer = io.BytesIO()
        np.save(buffer, np.ones((2, 3)))
        expected = [np.ones(3), np.ones(3)]
    else:
        buffer = io.BytesIO(b"1 2 3\n4 5 6\n")
        expected = [np.array([1.0, 2, 3]), np.array([4.0, 5, 6])]
    buffer.seek(0)
    frames = pixels(["-"], stdin=buffer)
    assert len(frames) == len(expected)
    for frame, want in zip(frames, expected):
        np.testing.assert_array_equal(frame, want)


def test_resize_brings_frames_to_one_size(tmp_path):
    save(tmp_path / "a.png", grey(50, (8, 6)))
    save(tmp_path / "b.png", grey(50, (16, 12)))
    frames = pixels([str(tmp_path)], resize=(4, 3))
    assert [f.shape for f in frames] == [(3, 4), (3, 4)]


def test_mixed_sizes_name_the_first_offending_file(tmp_path, store_kind):
    save(tmp_path / "a1.png", grey(1))
    save(tmp_path / "a2.png", grey(2))
    save(tmp_path / "a3.png", grey(3, (9, 6)))
    save(tmp_path / "a4.png", grey(4, (10, 6)))
    before = open_descriptors(tmp_path)
    with (
        TrainingStore(tmp_path) as store,
        pytest.raises(InputError, match=r"a3\.png' is 9x6 pixels .*a1\.png.*use resize WxH"),
    ):
        store.extend(iter_frames([str(tmp_path)]))
        assert (store.path is None) == (store_kind == "anonymous")  # the kind asked for
    # Nothing left: no named store file, no open descriptor holding an anonymous one.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a1.png", "a2.png", "a3.png", "a4.png"]
    assert open_descriptors(tmp_path) == before == []


def test_an_error_waits_for_the_readers_still_reading(tmp_path, monkeypatch):
    """When a frame of the wrong size is met, the files read ahead of it are finished and
    closed before the error reaches the caller. a3.png (the wrong size) is handed over only once
    a4.png's read has started, and a4.png takes 0.3 s: without the join, the error arrives while
    a4.png is still open."""
    import threading
    import time

    from kpcacli.io import sources

    for index, size in enumerate([(10, 6), (10, 6), (9, 6), (10, 6)], start=1):
        save(tmp_path / f"a{index}.png", grey(index, size))
    fourth_started = threading.Event()
    finished = []
    reader = sources.frames_from_path

    def slow_reader(path, conversion):
        if path.endswith("a4.png"):
            fourth_started.set()
            time.sleep(0.3)
        if path.endswith("a3.png"):
            assert fourth_started.wait(timeout=10)
        frames = list(reader(path, conversion))
        finished.append(path)
        return frames

    monkeypatch.setattr(sources, "frames_from_path", slow_reader)
    with pytest.raises(InputError), TrainingStore(tmp_path) as store:
        store.extend(iter_frames([str(tmp_path)], workers=2))
    assert any(path.endswith("a4.png") for path in finished)


def make_folder(directory, files=()):
    directory.mkdir()
    for name in files:
        (directory / name).write_text("x")
    return str(directory)


def make_file(path, content: bytes):
    path.write_bytes(content)
    return str(path)


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda d: str(d / "missing.png"), "does not exist"),
        (lambda d: make_folder(d / "empty"), "is empty"),
        (lambda d: make_folder(d / "docs", ["a.txt"]), "contains no images"),
        (lambda d: make_file(d / "zero.png", b""), "0 bytes"),
        (lambda d: make_file(d / "fake.png", b"hello"), "not an image"),
        (lambda d: str(d / "nothing*.png"), "no file matches"),
    ],
    ids=["missing", "empty-folder", "no-images", "zero-bytes", "not-an-image", "empty-glob"],
)
def test_bad_sources_are_refused(tmp_path, setup, message):
    with pytest.raises(InputError, match=message):
        list(iter_frames([setup(tmp_path)]))


def test_truncated_png_is_refused(tmp_path):
    buffer = io.BytesIO()
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64), dtype=np.uint8)).save(buffer, format="PNG")
    (tmp_path / "cut.png").write_bytes(buffer.getvalue()[:300])
    with pytest.raises(InputError, match="cut.png"):
        list(iter_frames([str(tmp_path / "cut.png")]))


def test_nan_in_point_data_is_refused(tmp_path):
    (tmp_path / "p.csv").write_text("1,2\n3,nan\n")
    with pytest.raises(InputError, match="NaN or infinite value in row 1"):
        list(iter_frames([str(tmp_path / "p.csv")]))


@pytest.mark.parametrize(("text", "size"), [("640x360", (640, 360)), (" 8X6 ", (8, 6)), ("1x2", (1, 2))])
def test_parse_size(text, size):
    assert parse_size(text) == size
