"""Denoising real footage: the default denoiser (``auto``) beside every solver it chooses from.

    python benchmarks/denoising.py                  # the five real sequences and the two unseen
    python benchmarks/denoising.py --levels 2,4,8,10 --k 8 --json out.json

White noise of each level (percent of the range: 2, 4, 8 and 10% are 5.1, 10.2, 20.4 and 25.5
grey levels) is added to the frames (seeded), and two uses are measured, each against the clean
frames, mean PSNR over the frames:

* **fitted on the noisy frames** (Mika et al. 1999): ``kpca fit noisy/ -k 8``, then ``kpca
  denoise noisy/``, every frame of each sequence;
* **fitted on clean frames, denoising new noisy ones**: the even frames fitted clean, the odd
  frames denoised with the noise added.

Each table row: the input's PSNR, the default's (the solver it is, named), and each candidate
of the choice (kpcacli/preimage/measurement.py). The summary counts the cells where the default is
more than 0.3 dB below the best named solver.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.quality import load  # noqa: E402
from benchmarks.real import real_sequences  # noqa: E402
from kpcacli.estimators.estimator import FrameModel  # noqa: E402
from kpcacli.numerics.metrics import mean_psnr, psnr  # noqa: E402
from kpcacli.preimage.choice import DENOISING, OWN_FRAMES, solver_for  # noqa: E402

SOLVERS = ["distance", "learned", "fixed-point", "nearest", "transport"]  # what auto denoises with
MARGIN = 0.3  # dB: how far below the best named solver the default may be


def noisy(frames: np.ndarray, level: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, level * 255.0, frames.shape)
    return np.clip(np.rint(frames + noise), 0, 255).astype(np.uint8)


def scores(model: FrameModel, inputs: np.ndarray, clean: np.ndarray) -> dict:
    row = {"input": mean_psnr(psnr(c, i, 255) for c, i in zip(clean, inputs))}
    for name in SOLVERS:
        denoised, _ = model.denoise(inputs, solver=name)
        row[name] = mean_psnr(psnr(c, d, 255) for c, d in zip(clean, denoised))
    denoised, _ = model.denoise(inputs)  # the default, as `kpca denoise` runs it
    row["auto"] = mean_psnr(psnr(c, d, 255) for c, d in zip(clean, denoised))
    state = model.state_
    held = all(state.neighbours.own_view(code) is not None for code in model.encode(inputs))
    row["auto is"] = solver_for(state, None, OWN_FRAMES if held else DENOISING)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--levels", default="2,4,8,10", help="noise levels, percent of the range")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--use", choices=["noisy", "clean"], action="append", help="default: both")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    levels = [float(level) / 100 for level in args.levels.split(",")]
    sequences = {f"real {name}": place for name, place in real_sequences().items()}
    sequences.update({f"unseen {name}": place for name, place in real_sequences(unseen=True).items()})
    results: dict = {}
    misses = []
    uses = {"noisy": "fitted on the noisy frames", "clean": "fitted clean, new noisy frames"}
    for use in [uses[name] for name in args.use or uses]:
        print(f"== {use}, k = {args.k}: mean PSNR against the clean frames (dB)")
        print(
            f"{'sequence':<18}{'noise':>7}{'input':>8}{'auto is':>13}{'auto':>8}" + "".join(f"{m:>12}" for m in SOLVERS)
        )
        for name, place in sequences.items():
            frames = load(str(place))
            together = use.startswith("fitted on the noisy")
            clean = frames if together else frames[1::2]
            for level in levels:
                inputs = noisy(clean, level)
                model = FrameModel(n_components=args.k).fit(inputs if together else frames[::2])
                row = scores(model, inputs, clean)
                results.setdefault(use, {}).setdefault(name, {})[f"{100 * level:g}%"] = row
                best = max(SOLVERS, key=lambda solver: row[solver])
                if row["auto"] < row[best] - MARGIN:
                    misses.append(
                        f"{use}: {name} at {100 * level:g}%: {row['auto']:.2f} ({row['auto is']}) < {best} {row[best]:.2f}"
                    )
                print(
                    f"{name:<18}{100 * level:>6g}%{row['input']:>8.2f}{row['auto is']:>13}{row['auto']:>8.2f}"
                    + "".join(f"{row[m]:>12.2f}" for m in SOLVERS),
                    flush=True,
                )
        print()
    cells = sum(len(by_level) for by_name in results.values() for by_level in by_name.values())
    print(f"== the default within {MARGIN} dB of the best named solver in {cells - len(misses)} of {cells} cells")
    for miss in misses:
        print(f"   {miss}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
