"""Held-out reconstruction quality against k: every decoder beside linear PCA, per k.

    python benchmarks/quality.py                      # the sample hand
    python benchmarks/quality.py clip.mp4 frames/     # plus any videos or folders
    python benchmarks/quality.py --standins           # plus the stand-in clips (scikit-image)
    python benchmarks/quality.py --real --standins    # and the real footage first (make bench-data)
    python benchmarks/quality.py --standins --plot benchmarks/results/quality_vs_k.png
    python benchmarks/quality.py --real --unseen --pan-720p --ks 3,8,20,40 --no-sample   # the defaults' check

Two protocols (`--holdout`): even frames train and odd frames are held out (each half-way
between two training frames), and every third frame is held out (a third of the way). For each
k in {3, 8, 20, 40, n/2} (n training frames; a k at or above n or the kernel's rank is skipped)
one table: mean held-out PSNR of the default (``auto``: the solver the model chose by
measuring training frames it held back, kpcacli/preimage/measurement.py, named beside it) and of
each solver it chooses from (distance, log, the learned pre-image of Bakır et al. 2004, Mika's
fixed point, the nearest training frame, transport), linear PCA with the same k and the least-squares
oracle over 10 neighbours. The summary checks the bar of the default on every sequence: at
every k within 0.3 dB of the best named solver, at least linear PCA and Mika's fixed point,
the nearest training frame + 1 dB, and non-decreasing in k (within 0.1 dB).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpcacli.estimators.estimator import FrameModel  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.preimage import solver_choice  # noqa: E402
from kpcacli.utils.errors import KpcaError  # noqa: E402
from kpcacli.workflows.evaluation import evaluate, split  # noqa: E402

KS = (3, 8, 20, 40, "n/2")
SOLVERS = ["distance", "log", "learned", "fixed-point", "nearest", "transport"]  # what auto chooses from, for frames
TOLERANCE = 0.1  # dB: the non-decreasing test
BEST_MARGIN = 0.3  # dB: how far below the best named solver the default may be


def load(source: str) -> np.ndarray:
    return np.stack([frame.pixels for frame in iter_frames([source])])


def ks_for(frames: np.ndarray, holdout: str, ks=KS) -> list[int]:
    n = len(split(len(frames), holdout)[0])
    chosen = sorted({n // 2 if k == "n/2" else k for k in ks})
    return [k for k in chosen if k < n]


def measure(frames: np.ndarray, holdout: str, ks=KS) -> dict[int, dict]:
    """{k: {method: mean held-out PSNR, "auto": the default's, "auto is": its solver}}."""
    curve = {}
    for k in ks_for(frames, holdout, ks):
        try:
            result = evaluate(frames, FrameModel(n_components=k), holdout=holdout, solvers=SOLVERS)
        except KpcaError as error:  # k above the kernel's rank: say so and go on
            print(f"   k = {k}: skipped ({error})", file=sys.stderr)
            continue
        row = {score.method: score.mean_psnr for score in result.scores}
        choice = solver_choice(result.state)
        # What the choice measured on held-back training frames, beside what decoding met.
        curve[k] = {**row, "auto": row[choice.solver], "auto is": choice.solver, "choice": choice.as_attributes()}
    return curve


def check_bar(curve: dict[int, dict[str, float]]) -> list[str]:
    """What the default decoder misses of the bar on one sequence (empty: all met)."""
    misses, previous = [], None  # previous: the best value at a smaller k
    for k, row in curve.items():
        value = row["auto"]
        best = max(SOLVERS, key=lambda name: row[name])
        if value < row[best] - BEST_MARGIN:
            misses.append(
                f"k={k}: {value:.2f} ({row['auto is']}) more than {BEST_MARGIN} dB below {best} {row[best]:.2f}"
            )
        for reference, margin in (("linear PCA", 0.0), ("fixed-point", 0.0), ("nearest", 1.0)):
            if value < row[reference] + margin:
                misses.append(
                    f"k={k}: {value:.2f} < {reference}{f' + {margin:g}' if margin else ''} {row[reference] + margin:.2f}"
                )
        if previous is not None and value < previous - TOLERANCE:
            misses.append(f"k={k}: {value:.2f} below {previous:.2f}, the best at a smaller k")
        previous = value if previous is None else max(previous, value)
    return misses


def print_tables(results: dict[str, dict[int, dict[str, float]]], holdout: str) -> None:
    methods = ["auto", *SOLVERS, "linear PCA", "oracle"]
    width = max(len(name) for name in results) + 2
    for k in sorted({k for curve in results.values() for k in curve}):
        print(f"== {holdout} hold-out, k = {k}: mean held-out PSNR (dB); auto is the default")
        print(f"{'sequence':<{width}}{'auto is':>12}" + "".join(f"{m:>12}" for m in methods))
        for name, curve in results.items():
            if k in curve:
                row = curve[k]
                print(f"{name:<{width}}{row['auto is']:>12}" + "".join(f"{row[m]:>12.2f}" for m in methods))
        print()


def plot(all_results: dict[str, dict[str, dict[int, dict[str, float]]]], path: str) -> None:
    """Held-out PSNR against k, one panel per sequence: default, log, learned, transport and
    linear PCA."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(next(iter(all_results.values())))
    columns = 4
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3 * rows), squeeze=False)
    styles = {"odd": "-", "third": ":"}
    for axis, name in zip(axes.flat, names):
        for holdout, results in all_results.items():
            curve = results[name]
            ks = list(curve)
            for method, colour in (
                ("auto", "C0"),
                ("log", "C1"),
                ("learned", "C3"),
                ("transport", "C4"),
                ("linear PCA", "C2"),
            ):
                axis.plot(
                    ks,
                    [curve[k][method] for k in ks],
                    styles[holdout],
                    color=colour,
                    marker="o",
                    markersize=3,
                    label=f"{method} ({holdout})",
                )
        axis.set_title(name, fontsize="small")
        axis.set_xlabel("k")
        axis.set_ylabel("held-out PSNR (dB)")
    for axis in list(axes.flat)[len(names) :]:
        axis.axis("off")
    axes.flat[0].legend(fontsize="x-small")
    figure.tight_layout()
    figure.savefig(path, dpi=90)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="videos or folders of frames")
    parser.add_argument("--standins", action="store_true", help="also the photographs moved frame by frame")
    parser.add_argument("--real", action="store_true", help="also the real footage of benchmarks/real.py")
    parser.add_argument("--unseen", action="store_true", help="also the real footage no choice was tuned on")
    parser.add_argument("--pan-720p", action="store_true", help="also the 720p stand-in (132 frames, H.264)")
    parser.add_argument("--no-sample", action="store_true", help="leave out the sample hand")
    parser.add_argument("--ks", help="comma-separated k (n/2 allowed); default 3,8,20,40,n/2")
    parser.add_argument("--holdout", choices=["odd", "third"], action="append", help="default: both")
    parser.add_argument("--plot", help="write the PSNR-against-k picture here (needs matplotlib)")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)

    sequences = [] if args.no_sample else [("sample hand", lambda: load(str(ROOT / "sample_data" / "hand")))]
    ks = KS if args.ks is None else tuple(k if k == "n/2" else int(k) for k in args.ks.split(","))
    sequences += [(source, lambda source=source: load(source)) for source in args.sources]
    if args.real:
        from benchmarks.real import real_sequences

        sequences += [
            (f"real {name}", lambda folder=folder: load(str(folder))) for name, folder in real_sequences().items()
        ]
    if args.unseen:
        from benchmarks.real import real_sequences

        sequences += [
            (f"unseen {name}", lambda place=place: load(str(place)))
            for name, place in real_sequences(unseen=True).items()
        ]
    if args.pan_720p:
        from benchmarks.harness import video_clip

        sequences.append(("720p stand-in", lambda: load(str(video_clip()))))
    if args.standins:
        from benchmarks.sequences import SEQUENCES

        sequences += list(SEQUENCES.items())
    frames = {name: make() for name, make in sequences}

    all_results = {}
    for holdout in args.holdout or ["odd", "third"]:
        results = {}
        for name, clip in frames.items():
            print(f"-- {name} ({holdout})", file=sys.stderr, flush=True)
            results[name] = measure(clip, holdout, ks)
        all_results[holdout] = results
        print_tables(results, holdout)
        failing = {name: check_bar(curve) for name, curve in results.items()}
        met = [name for name, misses in failing.items() if not misses]
        print(f"== {holdout} hold-out: the bar for the default (auto) is met on {len(met)} of {len(results)} sequences")
        for name, misses in failing.items():
            for miss in misses:
                print(f"   {name}: {miss}")
        print()
    if args.plot:
        plot(all_results, args.plot)
        print(f"plot -> {args.plot}")
    if args.json:
        Path(args.json).write_text(json.dumps(all_results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
