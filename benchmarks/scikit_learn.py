"""kpcacli.KernelPCA beside scikit-learn, in one run.

    python benchmarks/scikit_learn.py            # everything
    python benchmarks/scikit_learn.py denoise    # some of: denoise scale

* ``denoise``: scikit-learn's example "Image denoising using kernel PCA" on the digits it ships
  (``load_digits``, 8 x 8, scaled to [0, 1]): Gaussian noise of standard deviation 0.25 on
  every image; each method is fitted on 1,000 noisy images and reconstructs noisy images it has
  not seen, scored by the mean squared error against the clean ones. Every method is tuned on
  the same validation split over the same grid of n_components (and gamma for the kernels);
  scikit-learn's KernelPCA also over its ridge ``alpha``, kpca's over its pre-image solvers.
  The chosen settings are then scored once on the test split.
* ``scale``: 10,000 to 1,000,000 samples of 784 values (a smooth 3-D manifold through 784
  random sinusoids, plus noise), in a memory-mapped ``.npy``: fit time and peak memory of
  kpca with landmarks (and exact at 10,000), scikit-learn's ``KernelPCA`` with its inverse
  where its kernel matrix fits in memory, and ``Nystroem`` + ``PCA`` (no inverse), each in its
  own process; the reconstruction error of 1,000 held-out samples where there is an inverse.

Results go to benchmarks/results/scikit_learn.json; docs/sklearn.md quotes them.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.performance import CACHE, PYTHON, header, row, run_benchmarks, runs  # noqa: E402  (after the path is set)

NOISE = 0.25
TRAIN, VALIDATION = 1000, 300  # the rest of the 1,797 digits is the test split
COMPONENTS = (4, 8, 16, 32, 64, 128, 256)
GAMMAS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)
ALPHAS = (1e-3, 5e-3, 2e-2, 1e-1)  # scikit-learn's ridge for its learned inverse (its example: 5e-3)
SOLVERS = ("distance", "fixed-point", "learned")  # log, the default of other kernels, is the slowest and never chosen


def digits_splits(seed: int = 0) -> dict[str, np.ndarray]:
    """Clean and noisy train, validation and test digits, stratified by class."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    X, y = load_digits(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    train, rest, _, y_rest = train_test_split(X, y, train_size=TRAIN, stratify=y, random_state=seed)
    validation, test = train_test_split(rest, train_size=VALIDATION, stratify=y_rest, random_state=seed)
    rng = np.random.default_rng(seed)
    splits = {"train": train, "validation": validation, "test": test}
    for name, clean in list(splits.items()):
        splits[f"{name}_noisy"] = clean + rng.normal(scale=NOISE, size=clean.shape)
    return splits


def mse(estimate: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean((estimate - truth) ** 2))


def candidates():
    """(method, settings, make) for every point of every method's grid."""
    from sklearn.decomposition import PCA
    from sklearn.decomposition import KernelPCA as ScikitKernelPCA

    from kpcacli import KernelPCA

    for k in COMPONENTS:
        yield "PCA", {"n_components": k}, lambda k=k: PCA(n_components=k, random_state=0)
    for k, gamma, alpha in itertools.product(COMPONENTS, GAMMAS, ALPHAS):
        yield (
            "scikit-learn KernelPCA",
            {"n_components": k, "gamma": gamma, "alpha": alpha},
            lambda k=k, gamma=gamma, alpha=alpha: ScikitKernelPCA(
                n_components=k, kernel="rbf", gamma=gamma, alpha=alpha, fit_inverse_transform=True, random_state=0
            ),
        )
    for k, gamma, solver in itertools.product(COMPONENTS, GAMMAS, SOLVERS):
        yield (
            "kpca KernelPCA",
            {"n_components": k, "gamma": gamma, "solver": solver},
            lambda k=k, gamma=gamma, solver=solver: KernelPCA(n_components=k, gamma=gamma, solver=solver),
        )


def reconstruct(model, train: np.ndarray, noisy: np.ndarray) -> tuple[np.ndarray, float]:
    """`noisy` through `model` fitted on `train`, and the seconds it took."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a solver's non-convergence is scored, not reported
        model.fit(train)
        back = model.inverse_transform(model.transform(noisy))
    return back, time.perf_counter() - start


def bench_denoise(results: dict) -> None:
    splits = digits_splits()
    best: dict[str, tuple] = {}
    for method, settings, make in candidates():
        try:
            back, _ = reconstruct(make(), splits["train_noisy"], splits["validation_noisy"])
            error = mse(back, splits["validation"])
        except ValueError:  # k beyond the rank: not a candidate
            continue
        if method not in best or error < best[method][1]:
            best[method] = (settings, error, make)
    noisy = mse(splits["test_noisy"], splits["test"])
    header(
        f"denoising {len(splits['test'])} digits (noise {NOISE}), fitted on {TRAIN} noisy ones; "
        f"test MSE against the clean digits",
        ("test MSE", "validation MSE", "seconds"),
    )
    row("the noisy digits", f"{noisy:.4f}", "", "", "")
    figures = {"noisy_mse": noisy, "methods": {}}
    for method, (settings, validation, make) in best.items():
        back, seconds = reconstruct(make(), splits["train_noisy"], splits["test_noisy"])
        test = mse(back, splits["test"])
        row(method, f"{test:.4f}", f"{validation:.4f}", f"{seconds:.2f}", str(settings))
        figures["methods"][method] = {
            "settings": settings,
            "test_mse": test,
            "validation_mse": validation,
            "seconds": seconds,
        }
    results["denoise"] = figures


# -- scale ---------------------------------------------------------------------------------
SIZES = (10_000, 50_000, 200_000, 1_000_000)
FEATURES, LATENT, MANIFOLD_NOISE = 784, 3, 0.05
HELD_OUT = 1000
SCALE_K, SCALE_LANDMARKS = 8, 2000
EXACT_LIMIT = 10_000  # beyond, an n x n float64 kernel matrix (and its copies) outgrows 24 GB
DATA = CACHE / "manifold.npy"
HELD = CACHE / "manifold-held-out.npz"


def manifold_samples(rng: np.random.Generator, n: int, mixing: np.ndarray, phases: np.ndarray):
    """`n` clean samples and the same with noise, float32: a smooth 3-D manifold in 784 values."""
    latent = rng.uniform(size=(n, LATENT))
    clean = (0.5 + 0.4 * np.sin(latent @ mixing + phases)).astype(np.float32)
    return clean, clean + rng.normal(scale=MANIFOLD_NOISE, size=clean.shape).astype(np.float32)


def manifold_data() -> None:
    """The largest sample set, written once in blocks to a .npy (3.1 GB), and the held-out set."""
    if DATA.exists() and HELD.exists():
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    mixing, phases = rng.normal(scale=2.0, size=(LATENT, FEATURES)), rng.uniform(0, 2 * np.pi, FEATURES)
    partial = DATA.with_suffix(".partial.npy")
    out = np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32, shape=(max(SIZES), FEATURES))
    for start in range(0, max(SIZES), 50_000):
        out[start : start + 50_000] = manifold_samples(rng, 50_000, mixing, phases)[1]
    out.flush()
    del out
    partial.rename(DATA)
    clean, noisy = manifold_samples(rng, HELD_OUT, mixing, phases)
    np.savez(HELD, clean=clean, noisy=noisy)


def shared_gamma() -> float:
    """One Gaussian width for every method: kpca's default (1 / median pairwise squared
    distance) on the first 2,000 samples."""
    from kpcacli import KernelPCA

    return float(KernelPCA(n_components=SCALE_K).fit(np.load(DATA, mmap_mode="r")[:2000]).gamma_)


def scale_method(method: str, gamma: float):
    """The estimator `method` names, with Gaussian width `gamma`."""
    from sklearn.decomposition import PCA
    from sklearn.decomposition import KernelPCA as ScikitKernelPCA
    from sklearn.kernel_approximation import Nystroem
    from sklearn.pipeline import make_pipeline

    from kpcacli import KernelPCA

    if method == "kpca":
        return KernelPCA(n_components=SCALE_K, gamma=gamma)
    if method == "kpca-landmarks":
        return KernelPCA(n_components=SCALE_K, gamma=gamma, landmarks=SCALE_LANDMARKS)
    if method == "scikit-learn":
        return ScikitKernelPCA(n_components=SCALE_K, gamma=gamma, fit_inverse_transform=True, random_state=0)
    return make_pipeline(Nystroem(gamma=gamma, n_components=SCALE_LANDMARKS, random_state=0), PCA(SCALE_K))


def scale_child(method: str, n: int, gamma: float, out: str) -> None:
    """In its own process: fit `method` on the first `n` samples (memory-mapped), reconstruct
    the held-out samples when it has an inverse, and write the figures to `out`."""
    X = np.load(DATA, mmap_mode="r")[:n]
    model = scale_method(method, gamma)
    start = time.perf_counter()
    model.fit(X)
    figures = {"fit_seconds": time.perf_counter() - start}
    if hasattr(model, "inverse_transform") and method != "nystroem-pca":
        held = np.load(HELD)
        start = time.perf_counter()
        back = model.inverse_transform(model.transform(held["noisy"]))
        figures["inverse_seconds"] = time.perf_counter() - start
        figures["mse_to_clean"] = mse(back, held["clean"])
    Path(out).write_text(json.dumps(figures))


def bench_scale(results: dict) -> None:
    manifold_data()
    gamma = shared_gamma()
    header(
        f"fit k = {SCALE_K} on n samples of {FEATURES} values (memory-mapped float32), gamma {gamma:.3g}; "
        f"{HELD_OUT} held-out samples reconstructed, MSE against their clean values",
        ("fit s", "peak MB", "inverse s"),
    )
    figures = {"gamma": gamma, "runs": []}
    for n in SIZES:
        methods = ["kpca-landmarks", "nystroem-pca"] + (["kpca", "scikit-learn"] if n <= EXACT_LIMIT else [])
        for method in methods:
            out = CACHE / "scale-child.json"
            measured = runs(
                [PYTHON, "-m", "benchmarks.scikit_learn", "child", method, n, gamma, out], 1, warm_up=False
            )[0]
            child = json.loads(out.read_text())
            inverse = f"{child['inverse_seconds']:.2f}" if "inverse_seconds" in child else "no inverse"
            error = f"MSE {child['mse_to_clean']:.5f}" if "mse_to_clean" in child else ""
            row(f"{n:>9,} {method}", f"{child['fit_seconds']:.2f}", f"{measured['peak_mb']:.0f}", inverse, error)
            figures["runs"].append({"n": n, "method": method, **child, "peak_mb": measured["peak_mb"]})
    results["scale"] = figures


BENCHMARKS = {"denoise": bench_denoise, "scale": bench_scale}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["child"]:
        method, n, gamma, out = argv[1:]
        scale_child(method, int(n), float(gamma), out)
        return 0
    run_benchmarks(BENCHMARKS, argv, "scikit_learn.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
