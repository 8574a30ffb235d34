"""Whole frames from part of them: which estimate of a frame's codes, from its observed pixels
only, decodes its hidden pixels best. A design measurement before the encoding is built (it
uses the model's internals; the command and API will not).

    python benchmarks/partial.py              # the real sequences present, k = 8
    python benchmarks/partial.py --k 20
    python benchmarks/partial.py --rounds 2   # fewer encode-decode-refill rounds

Even frames train a FrameModel (Gaussian kernel, its default width and solver); eight odd
frames of each sequence, evenly spaced among those that are not a copy of a training frame
(mbt-cube's first frames are: their hidden pixels come back to rounding), are held out, each with square blocks (a sixth of the
frame's shorter side) hidden at random until 25% or 50% of its area is. Scored: the PSNR of the
hidden pixels only (grey levels in [0, 1]), mean over the frames, for

* ``nearest``: the training frame nearest on the observed pixels, through the model (encoded
  and decoded): what a reduced model gives without encoding from part of a frame;
* ``restricted``: the codes from the kernel on the observed pixels, each squared distance to a
  training frame scaled by (all pixels / observed pixels) to estimate the whole one, then decoded;
* ``alternating``: the hidden pixels filled from ``nearest``'s frame, then eight (``--rounds``) rounds of
  encode the whole frame, decode, refill the hidden pixels (gappy POD's iteration, through a
  kernel model and its pre-images);
* OpenCV's Telea inpainting and scikit-image's biharmonic inpainting of the same holes.

Results go to benchmarks/results/partial.json, under the k asked for.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.real import real_sequences  # noqa: E402
from kpcacli import FrameModel  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.model.state import row_blocks  # noqa: E402
from kpcacli.numerics.metrics import psnr  # noqa: E402
from kpcacli.preimage.choice import solver_choice  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
FRACTIONS = (0.25, 0.5)
HELD_OUT = 8
ROUNDS = 8  # the default of --rounds


def block_mask(shape: tuple[int, int], fraction: float, rng: np.random.Generator) -> np.ndarray:
    """True where observed: square blocks (a sixth of the shorter side) hidden at random until
    `fraction` of the frame is."""
    height, width = shape
    size = min(height, width) // 6
    observed = np.ones(shape, dtype=bool)
    while (~observed).mean() < fraction:
        row, col = rng.integers(0, height - size), rng.integers(0, width - size)
        observed[row : row + size, col : col + size] = False
    return observed


def estimates(model: FrameModel, training: np.ndarray, frame: np.ndarray, observed: np.ndarray, rounds: int) -> dict:
    """Every candidate's whole frame for `frame` seen at `observed` (True where seen)."""
    import cv2
    from skimage.restoration import inpaint_biharmonic

    state = model.state_
    seen = np.flatnonzero(observed.ravel())
    hidden = ~observed
    gaps = ((training[:, seen] - frame.ravel()[seen]) ** 2).sum(axis=1)
    nearest = model.decode(model.encode(training[np.argmin(gaps)].reshape(1, *frame.shape)))[0]
    restricted = model.decode(state.codes_of_arguments(gaps[None, :] * (frame.size / len(seen))))[0]
    filled = frame.copy()
    filled[hidden] = nearest[hidden]
    for _ in range(rounds):
        filled[hidden] = model.decode(model.encode(filled[None]))[0][hidden]
    grey = np.round(frame * 255).astype(np.uint8)
    telea = cv2.inpaint(grey, hidden.astype(np.uint8) * 255, 3, cv2.INPAINT_TELEA) / 255.0
    biharmonic = inpaint_biharmonic(frame, hidden)
    return {
        "nearest": nearest,
        "restricted": restricted,
        "alternating": filled,
        "telea": telea,
        "biharmonic": biharmonic,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args(argv)
    found = real_sequences()
    if not found:
        sys.exit("no real sequences: run `make bench-data`")
    print(f"hidden pixels' PSNR (dB), mean of {HELD_OUT} held-out frames, k = {args.k}, {args.rounds} rounds")
    table = []
    for name, path in found.items():
        frames = np.stack([f.pixels for f in iter_frames([str(path)])]).astype(np.float64) / 255.0
        train, held = frames[::2], frames[1::2]
        k = min(args.k, len(train) - 1)  # line's 17 training frames allow 16
        model = FrameModel(n_components=k).fit(train)
        training = np.concatenate(list(row_blocks(model.state_.frames)))
        solver = solver_choice(model.state_).solver
        distinct = np.flatnonzero([not (train == frame).all(axis=(1, 2)).any() for frame in held])
        rng = np.random.default_rng(0)
        for fraction in FRACTIONS:
            scores: dict[str, list[float]] = {}
            started = time.perf_counter()
            for index in distinct[np.linspace(0, len(distinct) - 1, HELD_OUT).round().astype(int)]:
                observed = block_mask(held[index].shape, fraction, rng)
                hidden = ~observed
                for method, estimate in estimates(model, training, held[index], observed, args.rounds).items():
                    scores.setdefault(method, []).append(psnr(held[index][hidden], estimate[hidden], peak=1.0))
            means = {method: float(np.mean(values)) for method, values in scores.items()}
            print(
                f"{name:<10} {fraction:>4.0%} hidden (k = {k}, {solver}): "
                + ", ".join(f"{method} {value:.2f}" for method, value in means.items())
                + f"  [{time.perf_counter() - started:.0f} s]"
            )
            table.append({"sequence": name, "hidden": fraction, "k": k, "solver": solver, **means})
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "partial.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    key = f"k = {args.k}" + (f", {args.rounds} rounds" if args.rounds != ROUNDS else "")
    results[key] = {"date": time.strftime("%Y-%m-%d"), "table": table}  # each k its own run
    path.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
