"""kpca on a GPU against the CPU, in one short run: what docs/performance.md's GPU rows need.

    python benchmarks/gpu.py                 # every part, at the sizes of the targets
    python benchmarks/gpu.py gram kernelpca  # some parts
    python benchmarks/gpu.py --dry-run       # tiny sizes, array-api-strict standing in for the GPU
    python benchmarks/gpu.py --dry-run torch # the same through PyTorch's own functions, on its CPU

Parts (each prints its rows; all of them go to benchmarks/results/gpu.json, or --out):

* ``gram``: the exact linear Gram of --frames uint8 frames of 1080 x 1920 (default 2,000) on
  the GPU (kpcacli.numerics.arraybackend: the frames held there, sent from host memory a block of
  whole frames at a time; and, as for a clip too large for the device, sent a block of pixel
  columns at a time; and the held pass's sending alone), against the CPU's
  (kpcacli.numerics.gram on every core): seconds, and whether they are the same bit for bit.
* ``kernelpca``: ``KernelPCA(kernel="rbf", n_components=None)`` fit + transform of --samples x
  784 (default 20,000) CuPy (or PyTorch) arrays under array_api_dispatch, timed on the GPU, and
  the kernel ridge inverse (fit_inverse_transform=True) there; then at --compared-samples
  (default 4,000, where numpy's dense eigensolver on the CPU takes seconds, not minutes) the
  GPU's codes against numpy's on every core, compared on the components whose eigenvalues stand
  apart (a relative gap above 1e-6: elsewhere any basis of the eigenspace is right); and the
  same for ``n_components=64, eigen_solver="randomized"`` (its products, QR and SVD on the GPU).
* ``decode``: a model of --decode-frames uint8 frames of 1080 x 1920 (default 300, fitted on
  the GPU) decodes --codes codes of new frames (default 64) in this process, by the ``learned``
  solver (every training frame weighed: a dense product of the codes' weights with all the
  frames) and by ``log`` (two training frames a code), on the GPU (``FrameModel(device="cuda")``,
  kpcacli.numerics.arraybackend.ArrayBackend.weighted_sums) and on every CPU core: seconds, and whether
  the frames are the same bit for bit.
* ``fit``: ``kpca fit --device cuda`` on a 1080p clip of --clip-frames frames (default 500, a
  multi-frame TIFF written first) against ``kpca fit``, the same options, both on two CPU cores
  (taskset), and ``--device cuda`` again on every core: wall seconds of each, and whether the
  models' Grams are the same bit for bit.

The GPU machine needs kpcacli's dependencies that its image lacks, carried as wheels
(benchmarks/gpu_wheels.sh downloads them into .whl/).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

os.environ.setdefault("SCIPY_ARRAY_API", "1")  # scikit-learn's array API dispatch needs it before scipy loads

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpcacli.utils.arrays import Accelerator, accelerator, to_numpy  # noqa: E402

PARTS = ("gram", "kernelpca", "fit", "decode")


def device_in_use(dry_run: str | None) -> Accelerator:
    """The GPU (CuPy, else PyTorch), or for a dry run array-api-strict's second device
    (``strict``) or PyTorch's CPU (``torch``: the library's own functions), which then also
    serves ``device="cuda"`` in this process."""
    if dry_run is None:
        return accelerator("cuda")
    from kpcacli.utils import arrays

    if dry_run == "torch":
        import torch
        from array_api_compat import torch as xp

        stand_in = Accelerator("torch (CPU)", xp, torch.device("cpu"))
    else:
        import array_api_strict

        stand_in = Accelerator("array-api-strict", array_api_strict, array_api_strict.Device("device1"))
    arrays._gpu = lambda name, index: stand_in
    return stand_in


def synchronised(on: Accelerator) -> None:
    """Wait for the device's queued work, so that a timer read next counts it."""
    name = getattr(on.xp, "__name__", "")
    if "cupy" in name:
        import cupy

        cupy.cuda.Device().synchronize()
    elif "torch" in name and on.device.type == "cuda":
        import torch

        torch.cuda.synchronize()


def device_name(on: Accelerator) -> str:
    name = getattr(on.xp, "__name__", "")
    if "cupy" in name:
        import cupy

        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    if "torch" in name and on.device.type == "cuda":
        import torch

        return torch.cuda.get_device_name(0)
    return on.name


NOISE_FIELDS = 8  # noisy backgrounds drawn, each frame taking one: thousands of 1080p frames in seconds


def frames_1080p(count: int, height: int, width: int, seed: int = 0) -> np.ndarray:
    """`count` uint8 frames: a bright disc moving across a noisy gradient (every value of 0 to
    255 occurs: the Gram's sums are as large as 8-bit frames make them)."""
    rng = np.random.default_rng(seed)
    gradient = (np.arange(width) * 200 // max(1, width - 1)).astype(np.int16)[None, :]
    noise = rng.integers(-15, 16, (NOISE_FIELDS, height, width), dtype=np.int16)
    backgrounds = np.clip(gradient + noise, 0, 255).astype(np.uint8)
    discs = np.clip(240 + noise, 0, 255).astype(np.uint8)
    radius = max(1, height // 5)
    top, bottom = max(0, height // 2 - radius), min(height, height // 2 + radius + 1)
    rows = np.arange(top, bottom)[:, None]
    frames = np.empty((count, height, width), dtype=np.uint8)
    for index in range(count):
        field = index % NOISE_FIELDS
        frames[index] = backgrounds[field]
        x = int(width * (0.2 + 0.6 * index / max(1, count - 1)))
        left, right = max(0, x - radius), min(width, x + radius + 1)
        inside = (rows - height // 2) ** 2 + (np.arange(left, right)[None, :] - x) ** 2 < radius**2
        box = frames[index, top:bottom, left:right]
        box[inside] = discs[field, top:bottom, left:right][inside]
    return frames


def gram_part(on: Accelerator, count: int, height: int, width: int) -> dict:
    from kpcacli.numerics.arraybackend import ArrayBackend, held_on_device
    from kpcacli.numerics.gram import linear_gram
    from kpcacli.utils.budgets import BUDGETS

    rows = frames_1080p(count, height, width).reshape(count, -1)
    backend = ArrayBackend(on)
    backend.linear_gram(rows[: min(count, 64)])  # warm-up: the libraries' first calls
    seconds: dict = {"gpu_seconds": [], "gpu_streamed_seconds": []}
    grams, held = [], BUDGETS.device_frames
    for label, budget in (("gpu_seconds", held), ("gpu_streamed_seconds", 0)):
        BUDGETS.device_frames = budget  # 0: the frames sent a block of pixel columns at a time
        for _ in range(3):
            start = time.perf_counter()
            grams.append(backend.linear_gram(rows))
            seconds[label].append(time.perf_counter() - start)
    BUDGETS.device_frames = held
    for _ in range(3):  # of the held pass: the frames' journey to the device alone
        start = time.perf_counter()
        sent = held_on_device(rows, on)
        synchronised(on)
        seconds.setdefault("gpu_send_seconds", []).append(time.perf_counter() - start)
        del sent
    start = time.perf_counter()
    cpu = linear_gram(rows)
    cpu_seconds = time.perf_counter() - start
    same = all(
        np.array_equal(getattr(device, name), getattr(cpu, name))
        for device in grams
        for name in ("shifted", "origin", "origin_dots", "origin_norm2")
    )
    return {
        "frames": count,
        "frame": f"{height} x {width}",
        **{label: sorted(values) for label, values in seconds.items()},
        "cpu_seconds": cpu_seconds,
        "cpu_cores": os.cpu_count(),
        "same_bits": same,
    }


def digits_like(samples: int, seed: int = 0) -> np.ndarray:
    """`samples` x 784 values in [0, 1]: scikit-learn's 8 x 8 digits brought to 28 x 28, each a
    random digit with noise (a spectrum that decays as real images' do)."""
    from sklearn.datasets import load_digits

    digits = load_digits().images / 16.0
    large = np.kron(digits, np.ones((3, 3)))  # 24 x 24
    large = np.pad(large, ((0, 0), (2, 2), (2, 2))).reshape(len(digits), -1)
    rng = np.random.default_rng(seed)
    picked = large[rng.integers(0, len(large), samples)]
    return np.clip(picked + rng.normal(0, 0.05, picked.shape), 0, 1)


def separated(eigenvalues: np.ndarray, gap: float = 1e-6) -> np.ndarray:
    """The components whose eigenvalue stands apart from both neighbours by more than `gap` of
    the largest, and above rounding: their eigenvectors, and so their codes, are unique."""
    values = np.asarray(eigenvalues, dtype=np.float64)
    scale = values[0]
    apart = np.ones(len(values), dtype=bool)
    apart[1:] &= (values[:-1] - values[1:]) > gap * scale
    apart[:-1] &= (values[:-1] - values[1:]) > gap * scale
    return np.flatnonzero(apart & (values > 1e-10 * scale))


def gpu_fit_transform(
    on: Accelerator, X: np.ndarray, queries: np.ndarray, **parameters
) -> tuple[float, np.ndarray, np.ndarray]:
    """``KernelPCA(kernel="rbf", **parameters)`` (default: every component) fitted on `X` and
    transforming `queries` on the GPU: seconds, the eigenvalues and the codes (numpy)."""
    import sklearn

    from kpcacli import KernelPCA

    with sklearn.config_context(array_api_dispatch=True):
        X_device, queries_device = on.xp.asarray(X, device=on.device), on.xp.asarray(queries, device=on.device)
        synchronised(on)
        start = time.perf_counter()
        fitted = KernelPCA(kernel="rbf", **parameters).fit(X_device)
        codes = fitted.transform(queries_device)
        synchronised(on)
        seconds = time.perf_counter() - start
        return seconds, to_numpy(fitted.eigenvalues_), to_numpy(codes)


RANDOMIZED_COMPONENTS = 64  # the kernelpca part's fit by the randomized method


def kernelpca_part(on: Accelerator, samples: int, compared_samples: int) -> dict:
    """The GPU's fit + transform timed at `samples`; its codes compared with numpy's (every
    CPU core) at `compared_samples`, where the CPU's dense eigensolver takes seconds rather
    than the ten minutes it takes at 20,000 (n³)."""
    import sklearn

    from kpcacli import KernelPCA

    X = digits_like(samples)
    queries = X[: min(2000, samples)]
    result: dict = {"samples": samples, "features": X.shape[1], "cpu_cores": os.cpu_count()}
    with sklearn.config_context(array_api_dispatch=True):  # warm-up: the libraries' first calls
        KernelPCA(kernel="rbf", n_components=2).fit(on.xp.asarray(X[:256], device=on.device))
    result["gpu_fit_transform_seconds"], _, _ = gpu_fit_transform(on, X, queries)
    with sklearn.config_context(array_api_dispatch=True):
        X_device, queries_device = on.xp.asarray(X, device=on.device), on.xp.asarray(queries, device=on.device)
        start = time.perf_counter()
        ridge = KernelPCA(kernel="rbf", n_components=256, fit_inverse_transform=True).fit(X_device)
        back = ridge.inverse_transform(ridge.transform(queries_device))
        synchronised(on)
        result["gpu_ridge_fit_and_inverse_seconds"] = time.perf_counter() - start
        result["gpu_ridge_mse"] = float(np.mean((to_numpy(back) - queries) ** 2))
        del ridge, back, X_device, queries_device
    small, small_queries = X[:compared_samples], queries[: min(len(queries), compared_samples)]
    result["compared_samples"] = len(small)
    result["gpu_compared_seconds"], eigenvalues, codes = gpu_fit_transform(on, small, small_queries)
    start = time.perf_counter()
    reference = KernelPCA(kernel="rbf").fit(small)
    cpu_codes = reference.transform(small_queries)
    result["cpu_compared_seconds"] = time.perf_counter() - start
    compared = separated(reference.eigenvalues_)[: len(eigenvalues)]
    scale = np.abs(cpu_codes[:, compared]).max()
    result["components"] = int(len(reference.eigenvalues_))
    result["components_compared"] = int(len(compared))
    result["largest_code_difference"] = float(np.abs(codes[:, compared] - cpu_codes[:, compared]).max() / scale)
    randomized = {"n_components": RANDOMIZED_COMPONENTS, "eigen_solver": "randomized"}
    result["gpu_randomized_seconds"], _, _ = gpu_fit_transform(on, X, queries, **randomized)
    _, _, codes = gpu_fit_transform(on, small, small_queries, **randomized)
    start = time.perf_counter()
    cpu_codes = KernelPCA(kernel="rbf", **randomized).fit(small).transform(small_queries)
    result["cpu_randomized_compared_seconds"] = time.perf_counter() - start
    result["randomized_largest_code_difference"] = float(np.abs(codes - cpu_codes).max() / np.abs(cpu_codes).max())
    return result


def decode_part(count: int, codes: int, height: int, width: int) -> dict:
    """Decoding in this process on the GPU and on every CPU core, by a dense solver and a
    sparse one, from one model fitted on the GPU."""
    from kpcacli import FrameModel

    gpu = FrameModel(n_components=8, solver="learned", device="cuda").fit(frames_1080p(count, height, width, seed=2))
    cpu = FrameModel.from_state(gpu.state_)
    new_codes = gpu.encode(frames_1080p(codes, height, width, seed=3))
    result: dict = {
        "training_frames": count,
        "codes": codes,
        "frame": f"{height} x {width}",
        "cpu_cores": os.cpu_count(),
    }
    for solver in ("learned", "log"):
        gpu.decode(new_codes[:1], solver=solver)  # warm-up: the libraries' first calls
        seconds = {}
        for label, model in (("gpu", gpu), ("cpu", cpu)):
            start = time.perf_counter()
            frames = model.decode(new_codes, solver=solver)
            seconds[label] = time.perf_counter() - start
            if label == "gpu":
                gpu_frames = frames
        result[solver] = {f"{label}_seconds": value for label, value in seconds.items()}
        result[solver]["same_bits"] = bool(np.array_equal(gpu_frames, frames))
    return result


def fit_part(device: str, count: int, height: int, width: int, folder: Path) -> dict:
    """``kpca fit`` of a clip as a user runs it: with the GPU and without, both on two CPU cores
    (taskset, two threads), so that the difference is the GPU's; then with the GPU and every
    core, as a user of that machine sees it."""
    from PIL import Image

    clip = folder / "clip.tif"
    frames = frames_1080p(count, height, width, seed=1)
    Image.fromarray(frames[0]).save(clip, save_all=True, append_images=[Image.fromarray(f) for f in frames[1:]])
    del frames
    command = [sys.executable, "-m", "kpcacli", "fit", str(clip), "-k", "8", "--solver", "distance", "-q", "--force"]
    two_cores = ["taskset", "-c", "0,1"] if sys.platform.startswith("linux") else []
    # kpcacli first, then whatever the caller's path holds (the GPU machine's carried wheels).
    every_core = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    two_threads = {**every_core, "OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2"}
    runs = {}
    labels = ("gpu_2_cores", "cpu_2_cores", "gpu_all_cores")
    for label, prefix, suffix, environment in zip(
        labels,
        (two_cores, two_cores, []),
        (["--device", device], [], ["--device", device]),
        (two_threads, two_threads, every_core),
    ):
        model = folder / f"{label}.npz"
        start = time.perf_counter()
        ran = subprocess.run([*prefix, *command, "-m", str(model), *suffix], env=environment, capture_output=True)
        if ran.returncode:
            raise RuntimeError(f"kpca fit ({label}) failed: {ran.stderr.decode()[-2000:]}")
        runs[f"{label}_seconds"] = time.perf_counter() - start
    from kpcacli import FrameModel

    grams = [FrameModel.load(folder / f"{label}.npz").state_.linear_gram.shifted for label in labels]
    return {
        "frames": count,
        "frame": f"{height} x {width}",
        **runs,
        "same_gram_bits": all(np.array_equal(gram, grams[1]) for gram in grams),
    }


def run_part(part: str, on: Accelerator, args, height: int, width: int) -> dict:
    """The row of one part, at the sizes of `args`."""
    if part == "gram":
        return gram_part(on, args.frames, height, width)
    if part == "kernelpca":
        return kernelpca_part(on, args.samples, args.compared_samples)
    if part == "decode":
        return decode_part(args.decode_frames, args.codes, height, width)
    with tempfile.TemporaryDirectory() as folder:
        return fit_part("cpu" if args.dry_run else "cuda", args.clip_frames, height, width, Path(folder))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parts", nargs="*", help=f"any of {', '.join(PARTS)} (default: all)")
    parser.add_argument("--frames", type=int, default=2000, help="frames of the gram part")
    parser.add_argument("--samples", type=int, default=20_000, help="samples of the kernelpca part's GPU timing")
    parser.add_argument(
        "--compared-samples", type=int, default=4000, help="samples at which the kernelpca part compares with the CPU"
    )
    parser.add_argument("--decode-frames", type=int, default=300, help="training frames of the decode part")
    parser.add_argument("--codes", type=int, default=64, help="codes the decode part decodes")
    parser.add_argument("--clip-frames", type=int, default=500, help="frames of the fit part's clip")
    parser.add_argument(
        "--dry-run",
        nargs="?",
        const="strict",
        choices=("strict", "torch"),
        help="tiny sizes, array-api-strict (or PyTorch's CPU: --dry-run torch) for the GPU",
    )
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "gpu.json")
    args = parser.parse_args()
    if unknown := sorted(set(args.parts) - set(PARTS)):
        parser.error(f"unknown parts {unknown}: choose among {', '.join(PARTS)}")
    height, width = (36, 64) if args.dry_run else (1080, 1920)
    if args.dry_run:
        args.frames, args.samples, args.clip_frames, args.decode_frames, args.codes = 80, 300, 20, 40, 6
        args.compared_samples = 200
    on = device_in_use(args.dry_run)
    results = {"device": device_name(on), "parts": {}}
    print(f"device: {results['device']}", flush=True)
    for part in args.parts or PARTS:
        try:
            row = run_part(part, on, args, height, width)
        except Exception as error:  # the lent minutes are few: a part that fails leaves the others to run
            traceback.print_exc()
            row = {"error": f"{type(error).__name__}: {error}"}
        results["parts"][part] = row
        print(part, json.dumps(row), flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")  # after each part: a run cut short keeps them


if __name__ == "__main__":
    main()
