"""Frames for parameter values never seen, side by side in one run on three data sets.

    python benchmarks/parameters.py               # hand, field, real, sklearn, timing, picture
    python benchmarks/parameters.py hand field    # some of them

For each data set, frames at parameter values the model never saw are predicted by:

* kpca: kernel PCA, the map from parameters to codes chosen at fit, the default pre-image
  (``FrameModel.fit(frames, params=...)``, ``model.predict``);
* the true codes: the true frames encoded and decoded by the same model (what a perfect map
  would give: the difference is the map's share of the error);
* POD + the same map: linear PCA of the snapshots (the mean and k modes), the same two maps
  fitted on its coefficients and chosen the same way (EZyRB's method, written here with numpy);
* the nearest-parameter snapshot, and the linear blend of the two nearest (weights by their
  distance in the unit box of the training range).

Data sets: the hand of sample_data/make_hand.py (35 training phases evenly spaced, 34 test
phases drawn at random inside their range, 180 x 320); a Gaussian plume (a point source in a
steady wind, the source moved by one parameter and its diffusivity set by the other: 100
training snapshots of 256 x 256 at random parameters, 50 test points inside the range and 10
outside); real footage (ViSP's mire-2, its first 240 frames: the even ones kept, with the
frame number as the parameter, the odd ones predicted). Then the time to predict one
1080 x 1920 frame (35 rendered phases), beside the time to decode one code with the same
model, the Gaussian process's standard deviation against the test points' errors, and the
Gaussian process against scikit-learn's (``sklearn``: needs the bench extra).

Results go to benchmarks/results/parameters.json and the picture to docs/parameters.png.
"""

from __future__ import annotations

import importlib.util
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "sample_data"))

from make_hand import render_frame  # noqa: E402

from benchmarks.real import real_sequences  # noqa: E402
from kpcacli import FrameModel  # noqa: E402
from kpcacli.estimators.parametric import outside_range  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.numerics.metrics import mean_psnr, psnr  # noqa: E402
from kpcacli.numerics.parametermap import Box, build_map, fit_map  # noqa: E402

CACHE = Path(os.environ.get("KPCA_BENCH_DIR") or Path(tempfile.gettempdir()) / "kpca-bench")
RESULTS = ROOT / "benchmarks" / "results"
KS = (3, 8)
SEED = 20261125


# -- the data sets ----------------------------------------------------------------------------
def _render(job):
    phase, height, width = job
    return render_frame(phase, height, width)


def rendered(phases, height: int, width: int) -> np.ndarray:
    jobs = [(float(phase), height, width) for phase in phases]
    if height * width > 200_000:
        with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
            return np.stack(pool.map(_render, jobs))
    return np.stack([_render(job) for job in jobs])


def hand_set(height: int = 180, width: int = 320):
    """35 training phases evenly spaced over one close-and-open, 34 test phases at random
    inside their range."""
    train = np.arange(35) / 35
    test = np.sort(np.random.default_rng(SEED).uniform(0, train[-1], 34))
    return (rendered(train, height, width), train[:, None], rendered(test, height, width), test[:, None], ["phase"])


def plume(source: float, diffusivity: float, size: int = 256) -> np.ndarray:
    """A Gaussian plume: a point source in a steady wind along x, at x0 = 0.15 + 0.3 `source`,
    y0 = 0.35 + 0.3 `source`, spreading as sqrt(s0² + 2 D x / u) with D from `diffusivity`
    (both in [0, 1] inside the training range); concentration scaled to 8 bits."""
    ys, xs = np.mgrid[0:size, 0:size] / size
    x0, y0 = 0.15 + 0.3 * source, 0.35 + 0.3 * source
    s0, spread = 0.02, 0.004 + 0.02 * diffusivity
    downwind = np.maximum(xs - x0, 0.0)
    width = np.sqrt(s0**2 + spread * downwind)
    concentration = (s0 / width) * np.exp(-((ys - y0) ** 2) / (2 * width**2))
    concentration *= np.exp(-(np.minimum(xs - x0, 0.0) ** 2) / (2 * s0**2))  # upwind of the source
    return np.clip(np.rint(255 * concentration), 0, 255).astype(np.uint8)


def field_set():
    rng = np.random.default_rng(SEED)
    train = rng.random((100, 2))
    inside = rng.uniform(0.05, 0.95, (50, 2))
    outside = np.c_[rng.uniform(1.02, 1.15, 10), rng.uniform(0.1, 0.9, 10)]
    outside[1::2] = outside[1::2, ::-1]  # half beyond the source's range, half beyond the diffusivity's
    test = np.vstack([inside, outside])
    frames = lambda params: np.stack([plume(a, b) for a, b in params])  # noqa: E731
    return frames(train), train, frames(test), test, ["source", "diffusivity"]


def real_set(name: str = "mire-2", count: int = 240):
    folder = real_sequences([name]).get(name)
    if folder is None:
        return None
    frames = np.stack([frame.pixels for _, frame in zip(range(count), iter_frames([str(folder)]))])
    numbers = np.arange(len(frames), dtype=np.float64)
    kept, skipped = np.arange(0, len(frames), 2), np.arange(1, len(frames) - 1, 2)
    return frames[kept], numbers[kept, None], frames[skipped], numbers[skipped, None], ["frame"]


# -- the methods ------------------------------------------------------------------------------
def pod_with_map(train: np.ndarray, params: np.ndarray, test_params: np.ndarray, k: int) -> np.ndarray:
    """Linear POD (the mean and k modes of the snapshots, from their Gram) with the same maps,
    chosen by the same leave-one-out error, on its coefficients."""
    rows = train.reshape(len(train), -1).astype(np.float64)
    mean = rows.mean(axis=0)
    centred = rows - mean
    values, vectors = np.linalg.eigh(centred @ centred.T)
    order = np.argsort(values)[::-1][:k]
    modes = centred.T @ vectors[:, order] / np.sqrt(values[order])  # (d, k), orthonormal
    coefficients = centred @ modes
    box = Box.of(params)
    fitted = fit_map(box.scaled(params), coefficients)
    hyper = fitted.hyperparameters[fitted.kind]
    predicted = build_map(fitted.kind, box.scaled(params), coefficients, hyper).codes(box.scaled(test_params))
    frames = mean + predicted @ modes.T
    return np.clip(np.rint(frames), 0, 255).astype(np.uint8).reshape(len(test_params), *train.shape[1:])


def neighbours(train_params, test_params):
    box = Box.of(train_params)
    distances = np.linalg.norm(box.scaled(test_params)[:, None, :] - box.scaled(train_params)[None], axis=2)
    order = np.argsort(distances, axis=1)[:, :2]
    return order, np.take_along_axis(distances, order, axis=1)


def nearest_snapshot(train, train_params, test_params):
    order, _ = neighbours(train_params, test_params)
    return train[order[:, 0]]


def blend_of_two(train, train_params, test_params):
    order, distances = neighbours(train_params, test_params)
    total = np.maximum(distances.sum(axis=1), 1e-12)
    first, second = distances[:, 1] / total, distances[:, 0] / total  # the nearer weighs more
    blend = first[:, None, None] * train[order[:, 0]] + second[:, None, None] * train[order[:, 1]]
    return np.clip(np.rint(blend), 0, 255).astype(np.uint8)


def score(truth, frames) -> float:
    return mean_psnr(psnr(a, b) for a, b in zip(truth, frames))


def compare(name, data, inside=None):
    """Every method at each k; `inside` selects the test points inside the range for the table
    (all of them by default), the others reported apart."""
    train, params, test, test_params, names = data
    inside = np.ones(len(test), dtype=bool) if inside is None else inside
    rows = {}
    for k in KS:
        clock = time.perf_counter()
        model = FrameModel(n_components=k).fit(train, params=params, param_names=names)
        fit_seconds = time.perf_counter() - clock
        clock = time.perf_counter()
        predicted = model.predict(test_params)
        per_frame = (time.perf_counter() - clock) / len(test_params)
        own = model.decode(model.encode(test))
        pod = pod_with_map(train, params, test_params, k)
        moved = model.predict(test_params, solver="transport")
        row = {
            "kpca": score(test[inside], predicted[inside]),
            "transport": score(test[inside], moved[inside]),
            "true codes": score(test[inside], own[inside]),
            "POD + map": score(test[inside], pod[inside]),
            "nearest": score(test[inside], nearest_snapshot(train, params, test_params)[inside]),
            "blend of two": score(test[inside], blend_of_two(train, params, test_params)[inside]),
            "map": model.state_.parameters.kind,
            "loo_rms": model.state_.parameters.loo_rms,
            "loo_psnr": model.state_.parameters.loo_psnr,
            "fit_s": fit_seconds,
            "predict_ms_per_frame": 1000 * per_frame,
        }
        if not inside.all():
            row["outside"] = {
                "kpca": score(test[~inside], predicted[~inside]),
                "transport": score(test[~inside], moved[~inside]),
                "true codes": score(test[~inside], own[~inside]),
                "POD + map": score(test[~inside], pod[~inside]),
                "nearest": score(test[~inside], nearest_snapshot(train, params, test_params)[~inside]),
                "blend of two": score(test[~inside], blend_of_two(train, params, test_params)[~inside]),
            }
            message = outside_range(model.state_, test_params)
            row["warned"] = message
        rows[k] = row
        print_row(name, k, row, len(train), int(inside.sum()))
        if k == KS[-1]:
            rows["model"] = model
    return rows


def print_row(name, k, row, n, m):
    methods = ("kpca", "transport", "true codes", "POD + map", "nearest", "blend of two")
    if k == KS[0]:
        print(f"\n== {name}: {n} training snapshots, {m} predicted (mean PSNR, dB)")
        print(f"{'k':>3}  " + "".join(f"{method:>13}" for method in methods) + "   map (leave-one-out)")
    figures = "".join(f"{row[method]:13.2f}" for method in methods)
    loo = f"{row['map']} ({row['loo_psnr']:.1f} dB)" if row["loo_psnr"] is not None else row["map"]
    print(f"{k:>3}  {figures}   {loo}; {row['predict_ms_per_frame']:.1f} ms a frame")
    if "outside" in row:
        outside = "".join(f"{row['outside'][method]:13.2f}" for method in methods)
        print(f"{'out':>3}  {outside}   (the points outside the range)")


def spearman_of_std(model, test, test_params) -> dict:
    """How the Gaussian process's standard deviation ranks the test points' errors: in code
    units (the error it models) and in pixels."""
    from scipy.stats import spearmanr

    codes, std = model.predict_codes(test_params, map="gaussian-process")
    true_codes = model.encode(test)
    code_error = np.linalg.norm(codes - true_codes, axis=1)
    frames = model.decode(codes)
    pixel_error = np.sqrt(np.mean((frames.astype(float) - test.astype(float)).reshape(len(test), -1) ** 2, axis=1))
    spread = np.linalg.norm(std, axis=1)
    return {
        "codes": float(spearmanr(spread, code_error).statistic),
        "pixels": float(spearmanr(spread, pixel_error).statistic),
    }


def against_scikit_learn(data, k: int = 8) -> dict:
    """kpca's Gaussian process against scikit-learn's GaussianProcessRegressor (the same
    Matérn 5/2 with a length scale per parameter plus a white-noise term, targets normalised,
    two restarts) on the same codes: the test codes' RMS error, the decoded frames' PSNR and
    the time to fit the map."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import Matern, WhiteKernel

    warnings.simplefilter("ignore", ConvergenceWarning)  # a hyperparameter at its bound: said by the figures

    train, params, test, test_params, names = data
    model = FrameModel(n_components=k).fit(train, params=params, param_names=names)
    box = model.state_.parameters.box
    true_codes = model.encode(test)
    clock = time.perf_counter()
    ours_fit = fit_map(box.scaled(params), model.state_.codes)
    ours_seconds = time.perf_counter() - clock
    ours = build_map(
        "gaussian-process", box.scaled(params), model.state_.codes, ours_fit.hyperparameters["gaussian-process"]
    )
    kernel = Matern(np.full(params.shape[1], 0.3), (1e-2, 1e1), nu=2.5) + WhiteKernel(
        1e-4, (1e-10, 1.0)
    )  # as kpca bounds them
    clock = time.perf_counter()
    theirs = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=2, random_state=0)
    theirs.fit(box.scaled(params), model.state_.codes)
    their_seconds = time.perf_counter() - clock
    result = {}
    for name, codes, seconds in (
        ("kpca", ours.codes(box.scaled(test_params)), ours_seconds),
        ("scikit-learn", theirs.predict(box.scaled(test_params)), their_seconds),
    ):
        result[name] = {
            "code_rms": float(np.sqrt(np.mean((codes - true_codes) ** 2))),
            "psnr": score(test, model.decode(codes)),
            "fit_s": seconds,
        }
    return result


# -- the megapixel frame ----------------------------------------------------------------------
def megapixel_timing() -> dict:
    """One 1080 x 1920 frame predicted end to end (``kpca predict`` from the model file to a
    PNG), beside ``kpca decode`` of one code with the same model, each the median of five
    alternating runs; and the same in memory (``model.predict`` against ``model.decode``)."""
    model_path = CACHE / "parameters-hand-1080p.npz"
    phases = np.arange(35) / 35
    if not model_path.exists():
        print("rendering 35 phases of 1080 x 1920 ...", flush=True)
        frames = rendered(phases, 1080, 1920)
        FrameModel(n_components=8).fit(frames, params=phases, param_names=["phase"]).save(model_path)
    model = FrameModel.load(model_path)
    code = model.predict_codes([0.4])[0]
    np.save(CACHE / "parameters-code.npy", code)
    kpca = [sys.executable, "-m", "kpcacli"]
    commands = {
        "predict": [
            *kpca,
            "predict",
            "--param",
            "phase=0.4",
            "-m",
            str(model_path),
            "-o",
            str(CACHE / "p.png"),
            "-q",
            "--force",
        ],
        "decode": [
            *kpca,
            "decode",
            str(CACHE / "parameters-code.npy"),
            "-m",
            str(model_path),
            "-o",
            str(CACHE / "d.png"),
            "-q",
            "--force",
        ],
    }
    times = {name: [] for name in commands}
    for _ in range(6):  # the first round warms the caches and is not counted
        for name, command in commands.items():
            clock = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            times[name].append(time.perf_counter() - clock)
    memory = {"predict": [], "decode": []}
    for _ in range(5):
        clock = time.perf_counter()
        model.predict([0.4])
        memory["predict"].append(time.perf_counter() - clock)
        clock = time.perf_counter()
        model.decode(code)
        memory["decode"].append(time.perf_counter() - clock)
    result = {
        "command_s": {name: float(np.median(values[1:])) for name, values in times.items()},
        "in_memory_s": {name: float(np.median(values)) for name, values in memory.items()},
    }
    print("\n== one 1080 x 1920 frame (35 training phases, k = 8), median of five")
    print(f"{'':<28}{'predict':>10}{'decode':>10}  target")
    print(
        f"{'kpca command, file to PNG':<28}{result['command_s']['predict']:9.2f}s{result['command_s']['decode']:9.2f}s  predict < 0.5 s"
    )
    print(f"{'in memory':<28}{result['in_memory_s']['predict']:9.3f}s{result['in_memory_s']['decode']:9.3f}s")
    return result


# -- the picture ------------------------------------------------------------------------------
def picture(hand_model, field_model, path: Path) -> None:
    """Frames along a parameter sweep: the hand at phases no training frame has (rendered truth
    above, kpca's prediction below), and the plume along its source parameter."""
    phases = np.array([0.05, 0.19, 0.33, 0.47, 0.61, 0.75, 0.89]) + 0.013
    hand_truth = rendered(phases, 180, 320)
    hand_predicted = hand_model.predict(phases)
    sweep = np.c_[np.linspace(0.05, 0.95, 7), np.full(7, 0.5)]
    field_truth = np.stack([plume(a, b) for a, b in sweep])
    field_predicted = field_model.predict(sweep)

    def strip(frames, height):
        tiles = [
            Image.fromarray(frame).resize((round(frame.shape[1] * height / frame.shape[0]), height)) for frame in frames
        ]
        canvas = Image.new("L", (sum(t.width for t in tiles) + 4 * (len(tiles) - 1), height), 255)
        x = 0
        for tile in tiles:
            canvas.paste(tile, (x, 0))
            x += tile.width + 4
        return canvas

    rows = [strip(hand_truth, 90), strip(hand_predicted, 90), strip(field_truth, 160), strip(field_predicted, 160)]
    width = max(row.width for row in rows)
    canvas = Image.new("L", (width, sum(row.height for row in rows) + 4 * 3 + 8), 255)
    y = 0
    for index, row in enumerate(rows):
        canvas.paste(row, (0, y))
        y += row.height + (12 if index == 1 else 4)
    canvas.save(path, optimize=True)
    print(f"\npicture: {path}")


def main(argv) -> None:
    chosen = set(argv) or {"hand", "field", "real", "sklearn", "timing", "picture"}
    results = {}
    models = {}
    if chosen & {"hand", "picture"}:
        hand = compare("hand (sample_data/make_hand.py, 180 x 320)", hand_set())
        models["hand"] = hand.pop("model")
        results["hand"] = hand
    if chosen & {"field", "picture"}:
        data = field_set()
        inside = np.arange(len(data[2])) < 50
        field = compare("Gaussian plume (256 x 256, two parameters)", data, inside=inside)
        models["field"] = field.pop("model")
        field["std_spearman"] = spearman_of_std(models["field"], data[2], data[3])
        field["outside_warned"] = int(models["field"].state_.parameters.box.outside(data[3]).sum())
        print(
            f"     Gaussian process's std against the errors of all 60 test points: Spearman "
            f"{field['std_spearman']['codes']:.2f} (codes), {field['std_spearman']['pixels']:.2f} (pixels); "
            f"points outside the range warned of: {field['outside_warned']} of 10"
        )
        results["field"] = field
    if "real" in chosen:
        data = real_set()
        if data is None:
            print("\n== real footage: mire-2 not found (make bench-data, or set KPCA_REAL_DATA)")
        else:
            real = compare("real mire-2 (first 240 frames; even kept, odd predicted, 384 x 288)", data)
            real.pop("model")
            results["real"] = real
    if "sklearn" in chosen and importlib.util.find_spec("sklearn") is None:
        print("\n== the Gaussian process against scikit-learn's: scikit-learn is not installed (the bench extra)")
    elif "sklearn" in chosen:
        results["sklearn_gp"] = {}
        print("\n== the Gaussian process: kpca's against scikit-learn's, k = 8")
        print(f"{'':<10}{'':<14}{'code RMS':>10}{'PSNR':>9}{'fit':>9}")
        for name, data in (("hand", hand_set()), ("plume", field_set())):
            if name == "plume":
                data = (data[0], data[1], data[2][:50], data[3][:50], data[4])  # the points inside the range
            result = against_scikit_learn(data)
            results["sklearn_gp"][name] = result
            for method, row in result.items():
                print(f"{name:<10}{method:<14}{row['code_rms']:10.2e}{row['psnr']:8.2f} dB{row['fit_s']:8.2f}s")
    if "timing" in chosen:
        results["megapixel"] = megapixel_timing()
    if "picture" in chosen:
        picture(models["hand"], models["field"], ROOT / "docs" / "parameters.png")
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "parameters.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    old.update({name: value for name, value in results.items()})
    path.write_text(json.dumps(old, indent=1, default=str) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
