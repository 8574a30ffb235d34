"""The Gram computed while the frames arrive equals the column pass's, bit for bit."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from kpcacli import KernelPCA
from kpcacli import streamed_gram as streamed_module
from kpcacli.errors import InputError
from kpcacli.gram import linear_gram
from kpcacli.sources import Frame
from kpcacli.store import FrameStore
from kpcacli.streamed_gram import StreamedGram


def extreme_frames(n: int, d: int, dtype=np.uint8) -> np.ndarray:
    """0 and 255 around a mean near 128: the 256-column float32 partial sums at their bound."""
    rng = np.random.default_rng(n + d)
    frames = np.where(rng.random((n, d)) < 0.5, 0, 255).astype(np.uint8)
    frames[::3] = rng.integers(0, 256, size=frames[::3].shape)
    return frames.astype(dtype) * (257 if dtype == np.uint16 else 1)


def streamed(frames: np.ndarray, tmp_path) -> tuple:
    """The streamed Gram of `frames` written one by one into a frame store, and the number
    of rows handed to the background thread while they were written."""
    rows = (Frame(f"f{i}", row.reshape(1, -1)) for i, row in enumerate(frames))
    with StreamedGram() as gram, FrameStore(tmp_path) as store:
        store.extend(rows, gram=gram)
        background = gram.done
        return gram.finish(store.frames), background


def assert_same_gram(ours, reference) -> None:
    np.testing.assert_array_equal(ours.shifted, reference.shifted)
    np.testing.assert_array_equal(ours.origin, reference.origin)
    assert ours.origin.dtype == reference.origin.dtype
    np.testing.assert_array_equal(ours.origin_dots, reference.origin_dots)
    assert ours.origin_norm2 == reference.origin_norm2


@pytest.mark.parametrize("n", [3, 16, 17, 90])
@pytest.mark.parametrize("block_bytes", [2**14, streamed_module.BLOCK_BYTES], ids=["many-blocks", "default-blocks"])
def test_the_streamed_gram_is_the_column_pass_bit_for_bit(n, block_bytes, tmp_path, monkeypatch):
    """Any n (fewer than one strip, exactly one, one more, many strips), column blocks that
    are and are not a whole number of 256-column products."""
    monkeypatch.setattr(streamed_module, "BLOCK_BYTES", block_bytes)
    frames = extreme_frames(n, 5000 + 37)
    ours, background = streamed(frames, tmp_path)
    assert_same_gram(ours, linear_gram(frames))
    exact = frames.astype(np.float64) @ frames.T.astype(np.float64)
    np.testing.assert_array_equal(ours.dots(), exact)
    if n >= streamed_module.MIN_STRIP:
        assert background >= streamed_module.MIN_STRIP  # streamed, not the fallback


@pytest.mark.parametrize("dtype", [np.uint16, np.float32, np.float64])
def test_other_dtypes_take_the_column_pass(dtype, tmp_path):
    frames = extreme_frames(40, 3000, dtype)
    ours, background = streamed(frames, tmp_path)
    assert background == 0
    assert_same_gram(ours, linear_gram(frames))


def test_a_fit_from_files_is_the_fit_in_memory(tmp_path, hand):
    """Through the command's workflow (frames streamed, Gram while they load, compression
    while they load) the model file is the one an in-memory fit writes."""
    from PIL import Image

    from kpcacli.workflows import fit_sources

    folder = tmp_path / "frames"
    folder.mkdir()
    names = []
    for index, frame in enumerate(hand[:40]):
        names.append(str(folder / f"f{index:02d}.png"))
        Image.fromarray(frame).save(names[-1])
    fit_sources([str(folder)], tmp_path / "streamed.npz", n_components=4)
    KernelPCA(n_components=4).fit(hand[:40], names=names).save(tmp_path / "memory.npz")
    assert (tmp_path / "streamed.npz").read_bytes() == (tmp_path / "memory.npz").read_bytes()


def test_a_failure_while_loading_stops_the_thread(tmp_path):
    """A frame of another size in the middle: one error, and no Gram thread left running."""
    frames = [Frame(f"f{i}", np.full((4, 300), i, np.uint8)) for i in range(40)]
    frames[30] = Frame("odd", np.zeros((5, 300), np.uint8))
    with pytest.raises(InputError, match="'odd' is 300x5 pixels"):
        with StreamedGram() as gram, FrameStore(tmp_path) as store:
            store.extend(iter(frames), gram=gram)
    assert not [thread for thread in threading.enumerate() if thread.name.startswith("kpca-gram")]
