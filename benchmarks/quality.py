"""Held-out reconstruction quality of every solver, side by side (the `kpca eval` table).

    python benchmarks/quality.py                      # the sample hand
    python benchmarks/quality.py clip.mp4 frames/     # plus any videos or folders
    python benchmarks/quality.py --standins           # plus the stand-in clips (scikit-image)

Each sequence: even frames train, odd frames held out, k = 3, default kernel (rbf, uncentred).
The summary checks the quality bar for the default solver: mean held-out PSNR at least
linear PCA + 3 dB and nearest training frame + 1 dB.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kpcacli.evaluation import evaluate  # noqa: E402
from kpcacli.sources import iter_frames  # noqa: E402


def load(source: str) -> np.ndarray:
    return np.stack([frame.pixels for frame in iter_frames([source])])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="*", help="videos or folders of frames")
    parser.add_argument("-k", type=int, default=3)
    parser.add_argument("--standins", action="store_true", help="also the photographs moved frame by frame")
    args = parser.parse_args(argv)

    sequences = [("sample hand", lambda: load(str(ROOT / "sample_data" / "hand")))]
    sequences += [(source, lambda source=source: load(source)) for source in args.sources]
    if args.standins:
        from benchmarks.sequences import SEQUENCES

        sequences += list(SEQUENCES.items())

    summary = {}
    for name, make in sequences:
        result = evaluate(make(), n_components=args.k)
        print(f"== {name}")
        print(result.format_table())
        print()
        summary[name] = {score.method: score.mean_psnr for score in result.scores}

    methods = list(next(iter(summary.values())))
    width = max(len(name) for name in summary) + 2
    print("== mean held-out PSNR (dB)")
    print(f"{'sequence':<{width}}" + "".join(f"{m:>13}" for m in methods) + f"{'log-linear':>12}{'log-nearest':>12}")
    for name, row in summary.items():
        cells = "".join(f"{row[m]:>13.2f}" for m in methods)
        print(f"{name:<{width}}{cells}{row['log'] - row['linear PCA']:>12.2f}{row['log'] - row['nearest']:>12.2f}")
    means = {m: np.mean([row[m] for row in summary.values()]) for m in methods}
    print(f"{'mean':<{width}}" + "".join(f"{means[m]:>13.2f}" for m in methods))
    passed = [n for n, r in summary.items() if r["log"] >= r["linear PCA"] + 3 and r["log"] >= r["nearest"] + 1]
    print(f"\nlog >= linear PCA + 3 dB and >= nearest + 1 dB on {len(passed)} of {len(summary)} sequences")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
