"""The array algebra on an accelerator (kpcacli.numerics.arraybackend, ``--device``), checked without
a GPU: array-api-strict stands in for CuPy and PyTorch, on a device of its own (its
``device1``, which refuses to mix with arrays elsewhere), so that every array the passes make
is in the namespace and on the device they were given; where PyTorch or CuPy is installed, the
same tests run on it too (helpers.accelerators: its GPU where there is one, else PyTorch's
CPU). Integer frames give the CPU's Gram and codes bit for bit (every product and sum is an
exact integer in float64); float frames agree to rounding."""

from __future__ import annotations

import warnings

import array_api_strict
import numpy as np
import pytest
from helpers import accelerators, ok, one_line_error, run

from kpcacli import FrameModel
from kpcacli.numerics import arraybackend as device_module
from kpcacli.numerics.arraybackend import ArrayBackend
from kpcacli.numerics.gram import linear_gram
from kpcacli.utils import arrays
from kpcacli.utils.arrays import Accelerator
from kpcacli.utils.budgets import BUDGETS


@pytest.fixture(params=accelerators())
def gpu(request, monkeypatch) -> Accelerator:
    """``device="cuda"`` served by each accelerator of helpers.accelerators in turn, and
    device blocks small enough that a pass over the sample frames takes several."""
    monkeypatch.setattr(arrays, "_gpu", lambda name, index: request.param)
    monkeypatch.setattr(BUDGETS, "device_block", 8 * 70 * 1000)
    return request.param


@pytest.mark.parametrize("held", ["held", "over the budget", "over half the free memory"])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_the_device_gram_and_products_are_the_cpus_bit_for_bit_for_integer_frames(dtype, held, gpu, monkeypatch):
    """Frames that fit the device are sent once, a block of whole frames at a time (uint16:
    two blocks), their columns taken there; others a block of pixel columns at a time."""
    if held == "over the budget":
        monkeypatch.setattr(BUDGETS, "device_frames", 70 * 5000 * np.dtype(dtype).itemsize - 1)
    elif held == "over half the free memory":
        monkeypatch.setattr(
            device_module, "free_device_memory", lambda on: 2 * 70 * 5000 * np.dtype(dtype).itemsize - 1
        )
    widths = []
    original = device_module._sent
    monkeypatch.setattr(
        device_module, "_sent", lambda values, *rest: widths.append(values.shape) or original(values, *rest)
    )
    rng = np.random.default_rng(0)
    high = np.iinfo(dtype).max
    frames = rng.integers(0, high, size=(70, 5000), endpoint=True).astype(dtype)
    new = rng.integers(0, high, size=(9, 5000), endpoint=True).astype(dtype)
    cpu, device = linear_gram(frames), ArrayBackend(gpu).linear_gram(frames)
    for name in ("shifted", "origin", "origin_dots", "origin_norm2"):
        assert np.array_equal(getattr(device, name), getattr(cpu, name)), name
    here, there = cpu.cross(frames, new), ArrayBackend(gpu).cross(cpu, frames, new)
    for name in ("shifted", "norms", "origin_dots"):
        assert np.array_equal(getattr(there, name), getattr(here, name)), name
    if held == "held":  # the training frames for the Gram, again for the products, then the new ones
        training = [(70, 5000)] if dtype == np.uint8 else [(56, 5000), (14, 5000)]
        assert widths == training + training + [(9, 5000)]
    else:  # the new frames (9 rows) are within either limit: held
        assert widths.count((9, 5000)) == 1 and len(widths) > 2
        assert all(width < 5000 for rows, width in widths if rows == 70)


class StrictBut:
    """array-api-strict but for what a subclass defines: a library that differs from the
    standard's minimum in one function, as PyTorch's do."""

    def __getattr__(self, name):
        return getattr(array_api_strict, name)


def test_the_device_gram_takes_numpys_mean_whatever_the_librarys_mean_rounds():
    """98 frames whose column means are a + 0.5 for every 8-bit a: a library whose mean
    multiplies the sum by 1/98 (as PyTorch's reduction does) is an ulp off numpy's true
    division for 79 of them, and rounding such a mean to the origin would move it; the Gram
    and its origin stay the CPU's bit for bit."""

    class ReciprocalMean(StrictBut):  # its mean as a reduction by a factor
        @staticmethod
        def mean(x, axis=None):
            return array_api_strict.sum(x, axis=axis) * (1.0 / x.shape[axis])

    rng = np.random.default_rng(4)
    levels = np.arange(255)
    frames = np.stack([rng.permutation(np.repeat([a, a + 1], 49)) for a in levels], axis=1).astype(np.uint8)
    sums = frames.sum(axis=0, dtype=np.float64)
    assert np.count_nonzero(np.rint(sums * (1.0 / 98)) != np.rint(sums / 98)) == 79  # the trap is set
    device = ArrayBackend(Accelerator("cuda", ReciprocalMean(), array_api_strict.Device("device1"))).linear_gram(frames)
    cpu = linear_gram(frames)
    for name in ("shifted", "origin", "origin_dots", "origin_norm2"):
        assert np.array_equal(getattr(device, name), getattr(cpu, name)), name


def test_a_library_that_warns_of_read_only_arrays_is_sent_the_frame_store_as_it_is(tmp_path, monkeypatch):
    """PyTorch warns when it is given a read-only numpy array, as a memory-mapped frame store
    is, and a command takes any warning for an error; the store is sent as it is (nothing
    writes into a sent array) and the fit and codes are the CPU's."""

    class WarnsOfReadOnly(StrictBut):  # warning as PyTorch's asarray does
        @staticmethod
        def asarray(values, **options):
            if isinstance(values, np.ndarray) and not values.flags.writeable:
                warnings.warn(
                    "The given NumPy array is not writable, and PyTorch does not support", UserWarning, stacklevel=2
                )
            return array_api_strict.asarray(values, **options)

    library = Accelerator("cuda", WarnsOfReadOnly(), array_api_strict.Device("device1"))
    monkeypatch.setattr(arrays, "_gpu", lambda name, index: library)
    for device in ("cpu", "cuda"):
        ok(run(["fit", "sample_data/hand", "--frames", "::2", "-k", "4", "--solver", "distance", "-q",
                "--device", device, "-m", tmp_path / f"{device}.npz"]))  # fmt: skip
        ok(run(["encode", "sample_data/hand", "--frames", "1::8", "-m", tmp_path / "cpu.npz", "-q",
                "--device", device, "-o", tmp_path / f"{device}.npy"]))  # fmt: skip
    cpu, cuda = FrameModel.load(tmp_path / "cpu.npz").state_, FrameModel.load(tmp_path / "cuda.npz").state_
    assert np.array_equal(cuda.linear_gram.shifted, cpu.linear_gram.shifted)
    assert np.array_equal(np.load(tmp_path / "cuda.npy"), np.load(tmp_path / "cpu.npy"))


def test_the_device_gram_of_float_frames_agrees_to_rounding(gpu):
    frames = np.random.default_rng(1).normal(size=(40, 3000))
    cpu, device = linear_gram(frames), ArrayBackend(gpu).linear_gram(frames)
    assert np.allclose(device.shifted, cpu.shifted, rtol=0, atol=1e-12 * np.abs(cpu.shifted).max())


def test_the_device_eigenpairs_are_the_eigenpairs(gpu):
    a = np.random.default_rng(2).normal(size=(30, 30))
    symmetric = a @ a.T
    values, vectors = ArrayBackend(gpu).eigh(symmetric)
    assert isinstance(values, np.ndarray) and isinstance(vectors, np.ndarray)
    assert np.allclose(symmetric @ vectors, vectors * values, atol=1e-10)


def test_a_model_fitted_and_encoding_on_a_device_is_the_cpus(hand, gpu):
    """The Gram bit for bit, the eigenpairs and the codes to 1e-12 of their largest (another
    solver on a real GPU: rounding); the state holds numpy arrays only."""
    train, new = hand[::2], hand[1::2][:5]
    cpu = FrameModel(n_components=6, solver="distance").fit(train)
    device = FrameModel(n_components=6, solver="distance", device="cuda").fit(train)
    assert np.array_equal(device.state_.linear_gram.shifted, cpu.state_.linear_gram.shifted)
    assert type(device.state_.eigenvectors) is np.ndarray
    assert np.allclose(device.state_.eigenvalues, cpu.state_.eigenvalues, rtol=1e-12)
    assert np.allclose(device.state_.codes, cpu.state_.codes, rtol=0, atol=1e-12 * np.abs(cpu.state_.codes).max())
    codes = device.encode(new)
    assert np.allclose(codes, cpu.encode(new), rtol=0, atol=1e-12 * np.abs(codes).max())


def test_a_model_fitted_by_the_randomized_method_on_a_device_is_the_cpus(hand, gpu, monkeypatch):
    """The randomized method's products on the device, normalised by QR where the CPU's use LU
    (the same subspace): the eigenpairs and codes to 1e-12 of their largest."""
    sketched = []
    original = ArrayBackend.randomized_sketch
    monkeypatch.setattr(ArrayBackend, "randomized_sketch", lambda *args: sketched.append(1) or original(*args))
    cpu = FrameModel(n_components=5, solver="distance", eigen_solver="randomized").fit(hand[::2])
    device = FrameModel(n_components=5, solver="distance", eigen_solver="randomized", device="cuda").fit(hand[::2])
    assert sketched == [1]
    assert np.allclose(device.state_.eigenvalues, cpu.state_.eigenvalues, rtol=1e-12)
    assert np.allclose(device.state_.codes, cpu.state_.codes, rtol=0, atol=1e-12 * np.abs(cpu.state_.codes).max())


@pytest.mark.parametrize("solver", ["log", "learned", "distance"])
def test_frames_decoded_and_denoised_on_a_device_are_the_cpus_bit_for_bit(hand, gpu, monkeypatch, solver):
    """The pre-images' sums of training frames (eq. 31) on the device: two rows a code (log),
    every row (learned), rows and the model's linear-PCA axis frames (distance); their weights
    on the grid of exact sums, so 8-bit frames come back the CPU's bytes."""
    cpu = FrameModel(n_components=6, solver=solver).fit(hand[::2])
    device = FrameModel.from_state(cpu.state_)
    device.device = "cuda"
    passes, gathered = [], []
    original = ArrayBackend.weighted_sums
    monkeypatch.setattr(ArrayBackend, "weighted_sums", lambda *args: passes.append(1) or original(*args))
    sent = device_module._sent  # frames go whole to the device, never a block of columns gathered here
    monkeypatch.setattr(device_module, "_sent", lambda values, *rest: gathered.append(values) or sent(values, *rest))
    codes = cpu.encode(hand[1::2][:5])
    decoded = device.decode(codes)
    assert passes and np.array_equal(decoded, cpu.decode(codes))
    frames_sent = [v.shape for v in gathered if isinstance(v, np.ndarray) and v.dtype == hand.dtype]  # not weights
    assert frames_sent and all(width == hand[0].size for _, width in frames_sent), frames_sent
    noisy = np.clip(hand[1::2][5:9] + np.random.default_rng(3).normal(0, 12, (4, *hand.shape[1:])), 0, 255)
    noisy = noisy.astype(np.uint8)
    assert np.array_equal(device.denoise(noisy, solver=solver)[0], cpu.denoise(noisy, solver=solver)[0])


def test_a_long_decode_on_a_device_sends_each_training_frame_at_most_twice(hand, gpu, monkeypatch):
    """35 codes in batches of up to three, each weighing every training frame (learned): the
    first batch's rows are sent, then every frame is held on the device for the rest
    (DeviceRows), not sent again for each of the dozen batches; the frames are the CPU's."""
    cpu = FrameModel(n_components=6, solver="learned").fit(hand[::2])
    device = FrameModel.from_state(cpu.state_)
    device.device = "cuda"
    monkeypatch.setattr(BUDGETS, "synthesis_batch", 8 * hand[0].size * 3)
    rows = []
    sent = device_module._sent
    monkeypatch.setattr(
        device_module,
        "_sent",
        lambda values, *rest: (
            rows.append(len(values) if isinstance(values, np.ndarray) and values.dtype == hand.dtype else 0)
            or sent(values, *rest)
        ),
    )
    codes = cpu.encode(hand[1::2])
    assert np.array_equal(device.decode(codes), cpu.decode(codes))
    assert sum(rows) == 2 * cpu.state_.n_samples  # the first batch's, then every frame once


def test_every_command_with_a_device_writes_the_cpus_bytes(tmp_path, gpu):
    hand = "sample_data/hand"
    for device in ("cpu", "cuda"):
        ok(run(["fit", hand, "--frames", "::2", "-k", "4", "--solver", "distance", "-q", "--device", device,
                "-m", tmp_path / f"{device}.npz"]))  # fmt: skip
        ok(run(["encode", f"{hand}/hand_001.png", "-m", tmp_path / "cpu.npz", "-q", "--device", device,
                "-o", tmp_path / f"{device}.npy"]))  # fmt: skip
        ok(run(["decode", tmp_path / "cpu.npy", "-m", tmp_path / "cpu.npz", "-q", "--device", device,
                "-o", tmp_path / f"{device}.png"]))  # fmt: skip
        ok(run(["denoise", f"{hand}/hand_003.png", "-m", tmp_path / "cpu.npz", "-q", "--device", device,
                "-o", tmp_path / f"{device}-denoised.png"]))  # fmt: skip
    assert np.array_equal(np.load(tmp_path / "cuda.npy"), np.load(tmp_path / "cpu.npy"))  # 8-bit: exact products
    cpu, cuda = FrameModel.load(tmp_path / "cpu.npz").state_, FrameModel.load(tmp_path / "cuda.npz").state_
    assert np.array_equal(cuda.linear_gram.shifted, cpu.linear_gram.shifted)
    for name in ("{}.png", "{}-denoised.png"):
        assert (tmp_path / name.format("cuda")).read_bytes() == (tmp_path / name.format("cpu")).read_bytes(), name


def test_a_clip_encoded_in_batches_on_a_device_sends_the_training_frames_once(tmp_path, gpu, monkeypatch):
    """``kpca encode --device`` of more frames than a batch holds: the training frames go to
    the device once for every batch, the codes are the CPU's bit for bit."""
    model = tmp_path / "m.npz"
    ok(run(["fit", "sample_data/hand", "--frames", "::2", "-k", "4", "-q", "-m", model, "--solver", "distance"]))
    n = FrameModel.load(model).state_.n_samples
    monkeypatch.setattr(BUDGETS, "encode_batch", 8 * 180 * 320 * 10)  # ten frames a batch: four batches
    rows = []
    original = device_module._sent
    monkeypatch.setattr(
        device_module, "_sent", lambda values, *rest: rows.append(len(values)) or original(values, *rest)
    )
    for device in ("cpu", "cuda"):
        command = ["encode", "sample_data/hand", "--frames", "1::2", "-m", model, "-q", "--device", device]
        ok(run([*command, "-o", tmp_path / f"{device}.npy"]))
    assert sum(rows) == n + 35  # the training frames once, then the 35 new ones
    assert np.array_equal(np.load(tmp_path / "cuda.npy"), np.load(tmp_path / "cpu.npy"))


def test_a_decode_whose_solver_forms_its_pixels_says_the_device_runs_none_of_it(tmp_path, gpu):
    model, codes = tmp_path / "m.npz", tmp_path / "codes.npy"
    ok(run(["fit", "sample_data/hand", "--frames", "::3", "-k", "3", "-q", "-m", model, "--solver", "transport"]))
    np.save(codes, FrameModel.load(model).state_.codes[:2])
    for device in ("cpu", "cuda"):
        result = ok(run(["decode", codes, "-m", model, "-q", "--device", device, "-o", f"{tmp_path}/{device}/"]))
        said = (
            "Warning: the transport solver forms its frames' pixels on the CPU: --device cuda runs none of this decode"
        )
        assert (said in result.stderr) == (device == "cuda"), result.stderr
    for name in ("000000.png", "000001.png"):
        assert (tmp_path / "cuda" / name).read_bytes() == (tmp_path / "cpu" / name).read_bytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "tpu"], "--device must be cpu, cuda or cuda:N. Got 'tpu' instead."),
        (["--device", "cuda:x"], "--device must be cpu, cuda or cuda:N. Got 'cuda:x' instead."),
        (["--device", "cuda"], "--device cuda needs an NVIDIA GPU and CuPy (pip install 'kpcacli[gpu]') or a CUDA"),
    ],
)
def test_a_device_that_is_not_there_is_one_line_before_any_frame_is_read(tmp_path, monkeypatch, args, message):
    def no_gpu(name, index):  # as on a machine without one, whatever this one has
        raise arrays.ParameterError(f"{arrays.param('device')} {name} needs an NVIDIA GPU and CuPy (pip install "
                                    "'kpcacli[gpu]') or a CUDA build of PyTorch; neither found one")  # fmt: skip

    model = tmp_path / "m.npz"
    ok(run(["fit", "sample_data/hand", "-k", "2", "-q", "-m", model, "--solver", "distance"]))
    monkeypatch.setattr(arrays, "_gpu", no_gpu)
    out = tmp_path / "out"
    out.mkdir()
    codes = tmp_path / "codes.npy"
    np.save(codes, FrameModel.load(model).state_.codes[:2])
    for command in (["fit", "sample_data/hand", "-k", "2", "-m", out / "m.npz"],
                    ["encode", "sample_data/hand/hand_001.png", "-m", model, "-o", out / "c.npy"],
                    ["decode", codes, "-m", model, "-o", out / "d.png"],
                    ["denoise", "sample_data/hand/hand_001.png", "-m", model, "-o", out / "n.png"]):  # fmt: skip
        one_line_error(run([*command, *args]), 2, message)
    assert not list(out.iterdir())


def test_a_device_with_a_cluster_is_refused(tmp_path, gpu):
    model = tmp_path / "m.npz"
    ok(run(["fit", "sample_data/hand", "-k", "2", "-q", "-m", model, "--solver", "distance"]))
    np.save(tmp_path / "codes.npy", FrameModel.load(model).state_.codes[:2])
    for command in (["encode", "sample_data/hand/hand_001.png", "-o", tmp_path / "c.npy"],
                    ["decode", tmp_path / "codes.npy", "-o", tmp_path / "d.png"],
                    ["denoise", "sample_data/hand/hand_001.png", "-o", tmp_path / "n.png"]):  # fmt: skip
        result = run([*command, "-m", model, "--device", "cuda", "--scheduler", "tcp://127.0.0.1:1"])
        one_line_error(result, 2, "--device cuda runs in this process; a cluster's workers use their own CPUs")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["codes.npy", "m.npz"]


def test_a_device_models_sweep_cells_keep_its_device(hand, gpu, monkeypatch):
    """FrameModel.with_components (a sweep's cells) solves its eigenproblem where the model's
    fit did, and the cell keeps the device."""
    model = FrameModel(n_components=4, solver="distance", device="cuda").fit(hand[::3])
    solved = []
    original = ArrayBackend.eigh
    monkeypatch.setattr(ArrayBackend, "eigh", lambda *args: solved.append(1) or original(*args))
    cell = model.with_components(2)
    assert solved and cell.device == "cuda"
    assert np.allclose(cell.state_.codes, FrameModel(n_components=2, solver="distance").fit(hand[::3]).state_.codes,
                       rtol=0, atol=1e-12 * np.abs(cell.state_.codes).max())  # fmt: skip
