"""The blocked linear Gram against a dense float64 reference."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from kpcacli.numerics import gram as gram_module
from kpcacli.numerics.gram import exact_runs, linear_gram
from kpcacli.utils.budgets import BUDGETS
from kpcacli.utils.parallel import thread_budget


def dense_squared_distances(frames: np.ndarray) -> np.ndarray:
    """Reference: differences taken first, then squared and summed, all in float64."""
    rows = frames.reshape(len(frames), -1).astype(np.float64)
    return np.array([[np.sum((a - b) ** 2) for b in rows] for a in rows])


def near_duplicates(dtype, rng) -> np.ndarray:
    """Bright frames with pairs that differ in one pixel by one level: the worst case for
    ``|x|² + |y|² − 2 x·y`` cancellation."""
    base = rng.integers(150, 256, size=(6, 40000)).astype(np.float64)
    frames = np.concatenate([base, base + 0.0])
    frames[6:, 123] -= 1.0  # each second copy differs by one level in one pixel
    frames[9, 7] -= 1.0
    if dtype == np.float64:
        frames = frames / 255.0 + 1e3  # far from the origin, as real data can be
    return frames.astype(dtype)


@pytest.fixture(params=[2**12, BUDGETS.gram_block], ids=["many-blocks", "default-blocks"])
def block_bytes(request, monkeypatch):
    monkeypatch.setattr(BUDGETS, "gram_block", request.param)
    return request.param


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32, np.float64])
def test_squared_distances_match_dense_reference(dtype, block_bytes):
    rng = np.random.default_rng(1)
    frames = (
        near_duplicates(dtype, rng)
        if dtype in (np.uint8, np.float64)
        else rng.integers(0, 200, (9, 5000)).astype(dtype)
    )
    reference = dense_squared_distances(frames)
    computed = linear_gram(frames).squared_distances()
    off_diagonal = ~np.eye(len(frames), dtype=bool)
    relative = np.abs(computed - reference)[off_diagonal] / reference[off_diagonal]
    assert relative.max() < 1e-6
    assert np.all(np.diag(computed) == 0)


def test_integer_frames_give_exact_integer_gram(block_bytes):
    frames = near_duplicates(np.uint8, np.random.default_rng(2))
    computed = linear_gram(frames)
    exact = dense_squared_distances(frames)
    assert np.array_equal(computed.squared_distances(), exact)
    assert np.array_equal(computed.dots(), frames.astype(np.float64) @ frames.T.astype(np.float64))


def test_memmap_store_gives_same_gram_as_array(tmp_path, block_bytes):
    frames = np.random.default_rng(3).integers(0, 256, size=(7, 3001), dtype=np.uint8)
    path = tmp_path / "store.raw"
    frames.tofile(path)
    mapped = np.memmap(path, dtype=np.uint8, mode="r", shape=frames.shape)
    assert np.array_equal(linear_gram(mapped).shifted, linear_gram(frames).shifted)


@pytest.mark.parametrize("dtype", [np.uint8, np.float64])
def test_cross_products_match_dense_reference(dtype, block_bytes):
    rng = np.random.default_rng(4)
    frames = rng.integers(0, 256, size=(8, 2500)).astype(dtype)
    new = rng.integers(0, 256, size=(3, 2500)).astype(dtype)
    products = linear_gram(frames).cross(frames, new)
    reference = np.array([[np.sum((a - b) ** 2) for b in frames.astype(float)] for a in new.astype(float)])
    np.testing.assert_allclose(products.squared_distances(), reference, rtol=1e-12)
    np.testing.assert_allclose(products.dots(), new.astype(float) @ frames.astype(float).T, rtol=1e-12)


class RecordingFrames:
    """An (n, d) array-like that records the width of every column slice read from it."""

    def __init__(self, frames):
        self.frames = frames
        self.shape = frames.shape
        self.dtype = frames.dtype
        self.widths = []

    def __getitem__(self, key):
        part = self.frames[key]
        self.widths.append(part.shape[1])
        return part


def test_no_block_holds_all_frames_in_float64(monkeypatch):
    """With a small budget, the pass reads (and converts) one narrow block at a time."""
    monkeypatch.setattr(BUDGETS, "gram_block", 8 * 10 * 300)
    frames = RecordingFrames(np.random.default_rng(5).integers(0, 256, size=(10, 5000), dtype=np.uint8))
    gram = linear_gram(frames)
    assert len(frames.widths) == 17 and max(frames.widths) == 300
    np.testing.assert_array_equal(gram.shifted, linear_gram(frames.frames).shifted)


def test_float_frames_are_not_modified():
    frames = np.random.default_rng(6).normal(size=(5, 100))
    before = frames.copy()
    linear_gram(frames)
    np.testing.assert_array_equal(frames, before)


@pytest.mark.slow
def test_float32_path_for_many_8bit_frames_is_bit_identical(monkeypatch):
    """Many 8-bit frames take exact float32 products; extreme values (0 and 255 around a mean
    of 128) put the partial sums of each run of columns (exact_runs) right at their bound."""
    rng = np.random.default_rng(7)
    frames = np.where(rng.random((300, 3000)) < 0.5, 0, 255).astype(np.uint8)
    frames[::2, :] = 255 - frames[::2, :]
    fast = linear_gram(frames)
    monkeypatch.setattr(gram_module, "FLOAT32_MIN_FRAMES", 10**9)  # force the float64 path
    reference = linear_gram(frames)
    np.testing.assert_array_equal(fast.shifted, reference.shifted)
    np.testing.assert_array_equal(fast.origin, reference.origin)
    np.testing.assert_array_equal(fast.origin_dots, reference.origin_dots)
    assert fast.origin_norm2 == reference.origin_norm2
    np.testing.assert_array_equal(fast.squared_distances(), dense_squared_distances(frames))
    np.testing.assert_array_equal(fast.dots(), frames.astype(np.float64) @ frames.T.astype(np.float64))


def test_exact_runs_are_as_wide_as_float32_sums_stay_exact():
    """Every run's bound on the partial sums (the widest value of each column, times itself or
    the mean's) is at most 2²⁴, the integers float32 holds exactly, and one column more would
    pass it; the runs cover the block in order."""
    rng = np.random.default_rng(8)
    for scale in (255, 128, 40, 3):
        block = rng.integers(-scale, scale + 1, (70, 5000)).astype(np.float32)
        mean = rng.integers(0, 256, 5000).astype(np.float32)
        runs = exact_runs(block, mean)
        assert runs[0].start == 0 and runs[-1].stop == 5000
        assert all(run.stop == after.start for run, after in zip(runs, runs[1:]))
        widest = np.abs(block).max(axis=0).astype(np.float64)
        bound = widest * np.maximum(widest, mean)
        assert all(bound[run].sum() <= 2**24 for run in runs)
        assert all(bound[run.start : run.stop + 1].sum() > 2**24 for run in runs[:-1])


@pytest.mark.parametrize("workers", [2, 3, 5])
def test_the_gram_is_the_same_on_any_number_of_threads(workers, monkeypatch):
    """Integer frames: every sum is exact, so the shares of any number of threads add up to
    the one-thread Gram bit for bit. Float frames: the same thread count gives the same Gram."""
    monkeypatch.setattr(BUDGETS, "gram_block", 2**12)  # many blocks to share
    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, size=(9, 5000), dtype=np.uint8)
    one = linear_gram(frames, workers=1)
    many = linear_gram(frames, workers=workers)
    np.testing.assert_array_equal(many.shifted, one.shifted)
    np.testing.assert_array_equal(many.origin, one.origin)
    np.testing.assert_array_equal(many.origin_dots, one.origin_dots)
    assert many.origin_norm2 == one.origin_norm2
    floats = rng.normal(size=(9, 5000))
    np.testing.assert_array_equal(
        linear_gram(floats, workers=workers).shifted, linear_gram(floats, workers=workers).shifted
    )
    np.testing.assert_allclose(
        linear_gram(floats, workers=workers).shifted, linear_gram(floats, workers=1).shifted, rtol=1e-12
    )


@pytest.mark.parametrize("threads", [2, 3])
def test_store_products_are_the_same_bytes_on_any_number_of_threads(threads, monkeypatch):
    """frame_products and frame_squares share bands of rows among threads; each row's sum runs
    over the same tiles in the same order whatever the threads, so float frames too give the
    one-thread bytes."""
    monkeypatch.setattr(BUDGETS, "tile", 2**12)  # many bands of rows to share
    monkeypatch.setattr(gram_module, "SHARED_PASS_MIN_VALUES", 1)
    rng = np.random.default_rng(4)
    for frames in (rng.integers(0, 256, size=(37, 3000), dtype=np.uint8), rng.normal(size=(37, 3000))):
        vectors, weights = rng.normal(size=(3000, 2)), rng.random(3000)
        with thread_budget(1):
            one = gram_module.frame_products(frames, vectors), gram_module.frame_squares(frames, weights)
        with thread_budget(threads):
            many = gram_module.frame_products(frames, vectors), gram_module.frame_squares(frames, weights)
        np.testing.assert_array_equal(many[0], one[0])
        np.testing.assert_array_equal(many[1], one[1])
        np.testing.assert_allclose(one[0], frames.astype(np.float64) @ vectors, rtol=1e-12)


def test_blas_runs_on_one_thread_inside_the_parallel_passes():
    from threadpoolctl import threadpool_info

    from kpcacli.utils.parallel import run_partitioned

    seen = run_partitioned(
        lambda index, count: [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"], 2
    )
    assert seen and all(threads == [1] * len(threads) and threads for threads in seen)


def test_blas_loaded_after_the_first_limit_is_held_too():
    """OpenCV brings its own OpenBLAS: loaded after a limit was first set (a fit, then the
    transport solver), it is held to one thread inside the parallel passes like the others.
    In a fresh process, since this one may have loaded OpenCV already."""
    pytest.importorskip("cv2")
    code = (
        "import json, numpy, scipy.linalg\n"
        "from threadpoolctl import threadpool_info\n"
        "from kpcacli.utils.blas import single_threaded_blas\n"
        "from kpcacli.utils.parallel import run_partitioned\n"
        "with single_threaded_blas():\n"
        "    pass\n"
        "import cv2\n"
        "blas = lambda i, c: [(p['filepath'], p['num_threads']) for p in threadpool_info() if p['user_api'] == 'blas']\n"
        "print(json.dumps(run_partitioned(blas, 2)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    for libraries in json.loads(out):
        assert any("opencv" in path for path, _ in libraries), libraries
        assert all(threads == 1 for _, threads in libraries), libraries
