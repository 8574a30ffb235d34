"""Whole frames from part of them (``FrameModel.reconstruct``, ``kpca reconstruct``): the
hidden pixels of held-out real frames, against the model's decode of the nearest training frame
and two inpaintings, and whether the error estimate ranks frames by their true error.

    python benchmarks/reconstruct.py              # the real sequences present, k = 8
    python benchmarks/reconstruct.py --k 20
    python benchmarks/reconstruct.py --rounds 2   # fewer encode-decode-refill rounds
    python benchmarks/reconstruct.py lookup       # against the nearest frame, frame by frame
    python benchmarks/reconstruct.py readings     # whole frames from 200 sensors' readings
    python benchmarks/reconstruct.py speed        # frames a second at 1280 x 720
    python benchmarks/reconstruct.py picture      # docs/reconstruct.png

Even frames (8-bit, as ``kpca fit`` reads them) train a FrameModel (Gaussian kernel, its default
width and solver); eight odd frames of each sequence, evenly spaced among those that are not a
copy of a training frame (mbt-cube's first frames are: their hidden pixels come back to rounding),
are held out, each with square blocks (a sixth of the frame's shorter side) hidden at random
until 25% or 50% of its area is (the masks of ``kpca eval --mask-fraction``:
``kpcacli.workflows.masking.block_masks``). Scored: the PSNR of the hidden pixels only, mean over the
frames, for

* ``kpca``: ``FrameModel.reconstruct`` (the hidden pixels filled from the training frame nearest
  on the observed ones, then rounds of encode, decode, refill until they settle);
* ``nearest``: the training frame nearest on the observed pixels, through the model (encoded
  and decoded): what a reduced model gives without encoding from part of a frame;
* ``restricted``: the codes from the kernel on the observed pixels, each squared distance to a
  training frame scaled by (all pixels / observed pixels) to estimate the whole one, then
  decoded (the other encoding the design weighed);
* OpenCV's Telea inpainting and scikit-image's biharmonic inpainting of the same holes.

The error estimate (``Reconstruction.estimate``) is scored by Spearman's rank correlation with
the true root-mean-square error of the hidden pixels, over each sequence's 16 held-out frames
(both fractions) and over all of them.

``lookup``: the completion against what a user would try first, the training frame nearest
on the observed pixels itself (not through the model), frame by frame, on the real sequences
and on those kept for checking (``benchmarks.real.UNSEEN``: nothing was tuned on them). Three
masks: square blocks hiding 25% and 50%, and a centred rectangle hiding a third of the frame
(its sides the frame's over √3). Sixteen held-out odd frames of each sequence, as above. A
cell passes when the mean hidden-pixel PSNR is at least 1 dB above the lookup's, no frame is
more than 0.5 dB below its lookup, and the worst frame is at least the lookup's worst.

``readings``: 200 sensors (``FrameModel.sensors``) of each sequence's model, read from the
same sixteen held-out frames, the whole frames reconstructed from the readings; scored on the
whole frame against the training frame nearest on the readings, on the same sequences.

``speed``: mbt-cube's frames brought to 1280 x 720 (bilinear), a model of its even frames, and
16 odd frames reconstructed with 25% hidden, one ``FrameModel.reconstruct`` call a frame (the
latency of one frame; ``kpca reconstruct`` completes batches of frames, a core each).

``picture``: a held-out frame of mire-2 with half of it hidden: the frame, what is observed,
kpca's reconstruction, Telea's and the biharmonic inpainting, side by side, to docs/reconstruct.png.

Results go to benchmarks/results/reconstruct.json, under the k asked for.
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
from kpcacli.estimators.reconstruction import DEFAULT_ROUNDS, nearest_on_observed  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.model.state import row_blocks  # noqa: E402
from kpcacli.numerics.metrics import psnr  # noqa: E402
from kpcacli.preimage.choice import solver_choice  # noqa: E402
from kpcacli.workflows.masking import block_masks  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
FRACTIONS = (0.25, 0.5)
HELD_OUT = 8
LOOKUP_HELD_OUT = 16
SENSOR_COUNT = 200
# The lookup protocol's bars (issue text in the module docstring): dB
MEAN_GAIN, FRAME_LOSS = 1.0, 0.5


def estimates(model: FrameModel, frame: np.ndarray, observed: np.ndarray, rounds: int) -> tuple[dict, float]:
    """Every candidate's whole frame for `frame` (8-bit) seen at `observed` (True where seen),
    and kpca's error estimate."""
    import cv2
    from skimage.restoration import inpaint_biharmonic

    state = model.state_
    rows = frame.reshape(1, -1).astype(np.float64)
    seen = observed.reshape(1, -1)
    hidden = ~observed
    reconstruction = model.reconstruct(frame, observed, rounds=rounds)
    columns = np.flatnonzero(seen[0])
    gaps = np.concatenate(
        [((block[:, columns] - rows[0, columns]) ** 2).sum(axis=1) for block in row_blocks(state.frames)]
    )
    nearest = model.decode(model.encode(np.asarray(state.frames[np.argmin(gaps)]).reshape(frame.shape)))[0]
    restricted = model.decode(state.codes_of_arguments(gaps[None, :] * (frame.size / len(columns))))[0]
    telea = cv2.inpaint(frame, hidden.astype(np.uint8) * 255, 3, cv2.INPAINT_TELEA)
    biharmonic = inpaint_biharmonic(frame / 255.0, hidden) * 255.0
    candidates = {
        "kpca": reconstruction.frames[0],
        "nearest": nearest,
        "restricted": restricted,
        "telea": telea,
        "biharmonic": biharmonic,
    }
    return candidates, float(reconstruction.estimate[0])


def spearman(first, second) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(first, second).statistic)


def quality(args) -> int:
    found = real_sequences()
    if not found:
        sys.exit("no real sequences: run `make bench-data`")
    print(f"hidden pixels' PSNR (dB), mean of {HELD_OUT} held-out frames, k = {args.k}, at most {args.rounds} rounds")
    table, ranks, pooled = [], [], ([], [])
    for name, path in found.items():
        frames = np.stack([f.pixels for f in iter_frames([str(path)])])
        train, held = frames[::2], frames[1::2]
        k = min(args.k, len(train) - 1)  # line's 17 training frames allow 16
        model = FrameModel(n_components=k).fit(train)
        solver = solver_choice(model.state_).solver
        guessed, true = [], []
        for fraction in FRACTIONS:
            scores: dict[str, list[float]] = {}
            started = time.perf_counter()
            chosen = held_out(train, held, HELD_OUT)
            for index, observed in zip(chosen, block_masks(held[0].shape, HELD_OUT, fraction)):
                hidden = ~observed
                candidates, estimate = estimates(model, held[index], observed, args.rounds)
                for method, whole in candidates.items():
                    scores.setdefault(method, []).append(psnr(held[index][hidden], whole[hidden], peak=255.0))
                error = held[index][hidden].astype(np.float64) - candidates["kpca"][hidden]
                guessed.append(estimate)
                true.append(float(np.sqrt(np.mean(error**2))))
            means = {method: float(np.mean(values)) for method, values in scores.items()}
            print(
                f"{name:<10} {fraction:>4.0%} hidden (k = {k}, {solver}): "
                + ", ".join(f"{method} {value:.2f}" for method, value in means.items())
                + f"  [{time.perf_counter() - started:.0f} s]"
            )
            table.append({"sequence": name, "hidden": fraction, "k": k, "solver": solver, **means})
        ranks.append({"sequence": name, "spearman": spearman(guessed, true), "estimate": guessed, "error": true})
        pooled[0].extend(guessed)
        pooled[1].extend(true)
        print(f"{name:<10} error estimate against the true RMS error: Spearman {ranks[-1]['spearman']:.2f}")
    overall = spearman(*pooled)
    print(f"all sequences' {len(pooled[0])} frames: Spearman {overall:.2f}")
    key = f"k = {args.k}" + (f", {args.rounds} rounds" if args.rounds != DEFAULT_ROUNDS else "")
    record(key, {"table": table, "estimate": {"spearman": overall, "sequences": ranks}})
    return 0


def checked_sequences() -> dict:
    """The real sequences and those kept for checking, by name; exits when there are none."""
    sequences = {**real_sequences(), **real_sequences(unseen=True)}
    if not sequences:
        sys.exit("no real sequences: run `make bench-data`")
    return sequences


def fitted_halves(path, k: int) -> tuple:
    """The even frames (8-bit) of the sequence at `path`, the odd ones, and a FrameModel of the
    even ones (Gaussian, k components or one fewer than the frames, its default width)."""
    frames = np.stack([f.pixels for f in iter_frames([str(path)])])
    train, held = frames[::2], frames[1::2]
    return train, held, FrameModel(n_components=min(k, len(train) - 1)).fit(train)


def held_out(train: np.ndarray, held: np.ndarray, count: int) -> np.ndarray:
    """`count` indices into `held`, evenly spaced among the frames that are not a copy of a
    training frame (mbt-cube's first frames are: their hidden pixels come back to rounding)."""
    distinct = np.flatnonzero([not (train == frame).all(axis=(1, 2)).any() for frame in held])
    return distinct[np.linspace(0, len(distinct) - 1, count).round().astype(int)]


def readings(args) -> int:
    sequences = checked_sequences()
    print(
        f"whole frames' PSNR (dB) from {SENSOR_COUNT} sensors' readings, {LOOKUP_HELD_OUT} held-out frames, "
        f"k = {args.k}: kpca against the training frame nearest on the readings"
    )
    print(f"{'sequence':<12}{'kpca':>7}{'lookup':>8}{'gain':>7}{'worst frame':>13}   kept")
    table = []
    for name, path in sequences.items():
        train, held, model = fitted_halves(path, args.k)
        chosen = held_out(train, held, LOOKUP_HELD_OUT)
        observed = np.zeros(held[0].size, dtype=bool)
        observed[model.sensors(SENSOR_COUNT)] = True
        observed = observed.reshape(held[0].shape)
        result = model.reconstruct(held[chosen], observed, rounds=args.rounds)
        nearest = train[nearest_on_observed(model.state_, held[chosen], observed)]
        ours, theirs = (
            np.array([psnr(t, f, peak=255.0) for t, f in zip(held[chosen], guess)])
            for guess in (result.frames, nearest)
        )
        gain = ours - theirs
        kinds = {kind: int(np.sum(result.kept == kind)) for kind in dict.fromkeys(result.kept.tolist())}
        print(
            f"{name:<12}{ours.mean():>7.2f}{theirs.mean():>8.2f}{gain.mean():>+7.2f}{gain.min():>+13.2f}   "
            + ", ".join(f"{kind} {count}" for kind, count in kinds.items()),
            flush=True,
        )
        table.append(
            {
                "sequence": name,
                "kpca": ours.tolist(),
                "lookup": theirs.tolist(),
                "mean_gain": float(gain.mean()),
                "kept": kinds,
            }
        )
    record(f"readings, {SENSOR_COUNT} sensors, k = {args.k}", {"table": table})
    return 0


def centred_third(shape: tuple[int, int]) -> np.ndarray:
    """True where observed: a centred rectangle hiding a third of a frame of `shape`, its
    sides the frame's over √3."""
    height, width = shape
    rows, columns = round(height / np.sqrt(3)), round(width / np.sqrt(3))
    observed = np.ones(shape, dtype=bool)
    top, left = (height - rows) // 2, (width - columns) // 2
    observed[top : top + rows, left : left + columns] = False
    return observed


def lookup(args) -> int:
    sequences = checked_sequences()
    print(
        f"hidden pixels' PSNR (dB), {LOOKUP_HELD_OUT} held-out frames, k = {args.k}: kpca against the training "
        "frame nearest on the observed pixels"
    )
    print(f"{'sequence':<12}{'mask':<10}{'kpca':>7}{'lookup':>8}{'gain':>7}{'worst frame':>13}{'worst':>15}")
    table, misses = [], []
    for name, path in sequences.items():
        train, held, model = fitted_halves(path, args.k)
        chosen = held_out(train, held, LOOKUP_HELD_OUT)
        masks = {
            "blocks25": block_masks(held[0].shape, len(chosen), 0.25),
            "blocks50": block_masks(held[0].shape, len(chosen), 0.5),
            "centre": np.repeat(centred_third(held[0].shape)[None], len(chosen), axis=0),
        }
        for label, observed in masks.items():
            completed = model.reconstruct(held[chosen], observed, rounds=args.rounds).frames
            nearest = train[nearest_on_observed(model.state_, held[chosen], observed)]
            ours, theirs = (
                np.array([psnr(t[~o], f[~o], peak=255.0) for t, f, o in zip(held[chosen], guess, observed)])
                for guess in (completed, nearest)
            )
            gain = ours - theirs
            passed = gain.mean() >= MEAN_GAIN and gain.min() >= -FRAME_LOSS and ours.min() >= theirs.min()
            if not passed:
                misses.append(f"{name} {label}")
            print(
                f"{name:<12}{label:<10}{ours.mean():>7.2f}{theirs.mean():>8.2f}{gain.mean():>+7.2f}{gain.min():>+13.2f}"
                f"{ours.min():>8.2f} /{theirs.min():>6.2f}" + ("" if passed else "  MISS"),
                flush=True,
            )
            table.append(
                {
                    "sequence": name,
                    "mask": label,
                    "kpca": ours.tolist(),
                    "lookup": theirs.tolist(),
                    "mean_gain": float(gain.mean()),
                    "worst_frame_gain": float(gain.min()),
                    "passed": bool(passed),
                }
            )
    print(
        f"== {len(table) - len(misses)} of {len(table)} cells pass"
        + (": misses " + ", ".join(misses) if misses else "")
    )
    record(f"lookup, k = {args.k}", {"table": table})
    return 0


def speed(args) -> int:
    from PIL import Image

    found = real_sequences(["mbt-cube"])
    if not found:
        sys.exit("no mbt-cube: run `make bench-data`")
    frames = np.stack(
        [
            np.asarray(Image.fromarray(f.pixels).resize((1280, 720), Image.BILINEAR))
            for f in iter_frames([str(found["mbt-cube"])])
        ]
    )
    train, held = frames[::2], frames[1::2][-16:]  # the last odd frames: a hand over the cube
    model = FrameModel(n_components=args.k).fit(train)
    masks = block_masks(held[0].shape, len(held), 0.25)
    model.reconstruct(held[0], masks[0], rounds=args.rounds)  # first touch of the store
    started = time.perf_counter()
    rounds = [int(model.reconstruct(frame, mask, rounds=args.rounds).rounds[0]) for frame, mask in zip(held, masks)]
    seconds = time.perf_counter() - started
    rate = len(held) / seconds
    print(
        f"1280 x 720, 25% hidden, k = {args.k}, {solver_choice(model.state_).solver}: {rate:.1f} frames/s "
        f"({len(held)} frames, {seconds:.2f} s, rounds {rounds})"
    )
    record(f"speed, k = {args.k}", {"frames_per_second": rate, "frames": len(held), "rounds": rounds})
    return 0


def picture(args) -> int:
    from PIL import Image, ImageDraw

    found = real_sequences(["mire-2"])
    if not found:
        sys.exit("no mire-2: run `make bench-data`")
    frames = np.stack([f.pixels for f in iter_frames([str(found["mire-2"])])])
    train, held = frames[::2], frames[1::2]
    model = FrameModel(n_components=args.k).fit(train)
    frame = held[len(held) // 2]
    observed = block_masks(frame.shape, 1, 0.5, seed=1)[0]
    candidates, _ = estimates(model, frame, observed, args.rounds)
    hidden = ~observed
    panels = [("frame", frame), ("observed (50% hidden)", np.where(observed, frame, 0))]
    for label, method in (
        ("kpca reconstruct", "kpca"),
        ("OpenCV Telea", "telea"),
        ("scikit-image biharmonic", "biharmonic"),
    ):
        score = psnr(frame[hidden], candidates[method][hidden], peak=255.0)
        panels.append((f"{label}: {score:.1f} dB", candidates[method]))
    height, width = frame.shape
    sheet = Image.new("L", (width * len(panels), height + 18), 255)
    draw = ImageDraw.Draw(sheet)
    for index, (label, pixels) in enumerate(panels):
        sheet.paste(Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8)), (index * width, 18))
        draw.text((index * width + 4, 3), label, fill=0)
    target = ROOT / "docs" / "reconstruct.png"
    sheet.save(target, optimize=True)
    print(f"wrote {target.relative_to(ROOT)}")
    return 0


def record(key: str, value: dict) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "reconstruct.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    results[key] = {"date": time.strftime("%Y-%m-%d"), **value}
    path.write_text(json.dumps(results, indent=2))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "what", nargs="?", choices=("quality", "lookup", "readings", "speed", "picture"), default="quality"
    )
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    args = parser.parse_args(argv)
    return {"quality": quality, "lookup": lookup, "readings": readings, "speed": speed, "picture": picture}[args.what](
        args
    )


if __name__ == "__main__":
    raise SystemExit(main())
