"""The model's frame store (kpcacli/modelfile/storechoice.py): lossless H.264, the default, keeps the
frames bit for bit; a compact store is the user's rate factor, and the model is fitted to the
frames as stored, so a training frame's codes decode to it as stored."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import HAND, ok, one_line_error, run
from PIL import Image

from kpcacli import FrameModel
from kpcacli.numerics.metrics import psnr


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """The sample hand's 70 frames at half size, as PNG files."""
    folder = tmp_path_factory.mktemp("hand")
    for path in sorted(HAND.glob("*.png")):
        Image.open(path).resize((160, 90)).save(folder / path.name)
    return folder


def frames_of(folder) -> np.ndarray:
    return np.stack([np.asarray(Image.open(path)) for path in sorted(folder.glob("*.png"))])


def test_the_lossless_store_keeps_every_frame_and_is_smaller_than_raw(clip, tmp_path):
    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "4", "-q", "--store", "lossless"]))
    model = FrameModel.load(tmp_path / "m.npz")
    original = frames_of(clip)
    assert model.state_.frame_store == {
        "codec": "h264",
        "crf": 0,
        "choice": "lossless",
        "why": "asked for (--store lossless)",
    }
    np.testing.assert_array_equal(np.asarray(model.state_.frames).reshape(original.shape), original)
    assert (tmp_path / "m.npz").stat().st_size < 0.5 * original.nbytes
    assert "H.264, lossless" in ok(run(["info", "-m", tmp_path / "m.npz"])).output


@pytest.mark.parametrize("store", [["--store-crf", "24"], ["--store", "compact", "--store-crf", "30"]])
def test_a_compact_model_is_fitted_to_its_frames_as_stored(clip, tmp_path, store):
    """Smaller than the lossless model, its PSNR against the frames recorded and true, and the
    codes of a training frame (as stored) decode back to that frame."""
    ok(run(["fit", clip, "--frames", "::2", "-m", tmp_path / "lossless.npz", "-k", "4", "-q"]))
    ok(run(["fit", clip, "--frames", "::2", "-m", tmp_path / "compact.npz", "-k", "4", "-q", *store]))
    model = FrameModel.load(tmp_path / "compact.npz")
    description = model.state_.frame_store
    stored = np.asarray(model.state_.frames).reshape(-1, 90, 160)
    original = frames_of(clip)[::2]
    assert description["crf"] == int(store[-1]) and description["choice"] == "given"
    error = np.mean((stored.astype(float) - original) ** 2)
    assert description["psnr"] == pytest.approx(10 * np.log10(255**2 / error), abs=0.01)
    assert (tmp_path / "compact.npz").stat().st_size < (tmp_path / "lossless.npz").stat().st_size
    back = model.decode(model.encode(stored[[3, 10]]))
    assert min(psnr(a, b) for a, b in zip(stored[[3, 10]], back)) > 50
    info = ok(run(["info", "-m", tmp_path / "compact.npz"])).output
    assert f"H.264 CRF {description['crf']}" in info and f"{description['psnr']:.2f} dB against the frames" in info


def test_the_default_store_gives_every_training_frame_back_bit_for_bit(clip, tmp_path):
    """The store never costs the decode: a training frame, encoded and decoded, is itself
    (the measured lossy store that was the default lost real footage up to 2.8 dB)."""
    ok(run(["fit", clip, "--frames", "::2", "-m", tmp_path / "m.npz", "-k", "6", "-q"]))
    model = FrameModel.load(tmp_path / "m.npz")
    assert model.state_.frame_store["choice"] == "lossless"
    training = frames_of(clip)[::2]
    np.testing.assert_array_equal(np.asarray(model.state_.frames).reshape(training.shape), training)


@pytest.mark.parametrize("store", [[], ["--store-crf", "24"]])
def test_stored_frames_read_one_at_a_time_on_one_thread_or_two_are_the_same(clip, tmp_path, store):
    """A group's decoder runs on the cores the pass may use (frame threads): each frame read
    alone, in order and out of it, and the rows read side by side, are the same bytes as on
    one thread."""
    from kpcacli.utils.parallel import thread_budget

    ok(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "4", "-q", *store]))
    with thread_budget(1):
        one = np.asarray(FrameModel.load(tmp_path / "m.npz").state_.frames)
    frames = FrameModel.load(tmp_path / "m.npz").state_.frames
    order = [*range(0, 70, 3), 69, 5, 40, 1]
    with thread_budget(2):
        for index in order:
            np.testing.assert_array_equal(np.asarray(frames[index]), one[index])
        np.testing.assert_array_equal(frames.rows(np.arange(0, 70, 2), 2), one[::2])


def test_store_options_are_checked_before_any_frame_is_read(clip, tmp_path):
    one_line_error(
        run(["fit", clip, "-m", tmp_path / "m.npz", "--store", "lossless", "--store-crf", "18"]), 2, "--store-crf"
    )
    one_line_error(run(["fit", clip, "-m", tmp_path / "m.npz", "--store-crf", "52"]), 2, "--store-crf")
    one_line_error(run(["fit", clip, "-m", tmp_path / "m.npz", "--store", "tiny"]), 2, "--store")
    one_line_error(run(["fit", clip, "-m", tmp_path / "m.npz", "--store", "compact"]), 2, "--store-crf N")
    assert not (tmp_path / "m.npz").exists()


def test_points_keep_the_lossless_blosc_store(tmp_path):
    points = np.random.default_rng(0).normal(size=(30, 3))
    np.save(tmp_path / "points.npy", points)
    ok(run(["fit", tmp_path / "points.npy", "-m", tmp_path / "m.npz", "-k", "2", "-q"]))
    model = FrameModel.load(tmp_path / "m.npz")
    assert model.state_.frame_store is None
    np.testing.assert_array_equal(np.asarray(model.state_.frames), points)


@pytest.mark.slow
def test_the_store_coded_beside_the_fit_is_the_store_coded_alone(clip, tmp_path, monkeypatch):
    """On two cores the lossless store is coded on one while the Gram and the axes take the
    other (framecodec.BackgroundCoding); the model file is the same bytes as a fit on one
    core, which codes the store first."""
    import kpcacli.modelfile.storechoice as compactstore

    ok(run(["fit", clip, "-m", tmp_path / "beside.npz", "-k", "4", "-q"]))
    monkeypatch.setattr(compactstore, "available_cores", lambda: 1)
    ok(run(["fit", clip, "-m", tmp_path / "alone.npz", "-k", "4", "-q"]))
    assert (tmp_path / "beside.npz").read_bytes() == (tmp_path / "alone.npz").read_bytes()


def test_a_failure_of_the_coding_beside_the_fit_is_one_line_and_leaves_no_model(clip, tmp_path, monkeypatch):
    """The coding thread's error is raised in the fit, where the model is written: one line,
    and no model file."""
    from kpcacli.modelfile.framecodec import FrameCodec
    from kpcacli.utils.errors import KpcaError

    coding = FrameCodec.encode

    def failing(self, frames):  # the store's lossless groups only, not the lossy axes
        if self.crf == 0:
            raise KpcaError("x264 refused the frames")
        return coding(self, frames)

    monkeypatch.setattr(FrameCodec, "encode", failing)
    one_line_error(run(["fit", clip, "-m", tmp_path / "m.npz", "-k", "4", "-q"]), 1, "x264 refused the frames")
    assert not (tmp_path / "m.npz").exists()


def test_leaving_early_stops_the_coding_after_the_group_in_hand(small_frames):
    """An error or Ctrl-C in the fit leaves the block: the coding thread stops at its next
    group instead of coding the rest, and is joined."""
    import threading

    from kpcacli.modelfile.framecodec import BackgroundCoding, FrameCodec

    started, release, coded = threading.Event(), threading.Event(), []

    class Slow(FrameCodec):
        def encode(self, frames):
            started.set()
            release.wait(10)
            coded.append(len(frames))
            return b""

    frames = np.concatenate([small_frames] * 8).reshape(96, -1)  # three groups of 32
    with pytest.raises(KeyboardInterrupt):
        with BackgroundCoding(frames, small_frames.shape[1:], Slow(0), {}, threads=1) as coding:
            started.wait(10)
            threading.Timer(0.05, release.set).start()
            raise KeyboardInterrupt
    assert not any(thread.is_alive() for thread in coding.threads) and coded == [32]  # the group in hand, then stopped


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="resident memory read from Linux's /proc")
def test_the_training_store_lets_go_of_the_pages_its_passes_read(tmp_path):
    """A pass over the memory-mapped store leaves its pages mapped, counted in the fit's
    resident memory; the store releases them as it goes (kept in the page cache), so a fit's
    peak stays under its raw frames. 64 MiB read whole: at most a quarter still mapped after a
    release, and the frames read the same after it."""
    from kpcacli.io.readers import Frame
    from kpcacli.io.trainingstore import TrainingStore
    from kpcacli.utils.budgets import release_pages

    def mapped_mib() -> float:
        line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith("RssFile"))
        return int(line.split()[1]) / 1024

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (1024, 1024), dtype=np.uint8) for _ in range(64)]
    with TrainingStore(tmp_path) as store:
        store.extend(Frame(f"f{i}", frame) for i, frame in enumerate(frames))
        assert store.release.thread.is_alive()  # releasing while the store is open
        store.release.stop()  # released here by hand: the thread's timing is not the test's
        before = mapped_mib()
        total = int(np.asarray(store.frames[:, ::4096], dtype=np.int64).sum())  # every page read
        assert mapped_mib() - before > 48
        release_pages(store.frames[3:5])  # a view leads to its mapping
        assert mapped_mib() - before < 16
        assert int(np.asarray(store.frames[:, ::4096], dtype=np.int64).sum()) == total
        np.testing.assert_array_equal(store.frames[7], frames[7].ravel())
