"""Pre-images that move pixels: the transport solver beside the blends, on real footage first.

    python benchmarks/transport.py            # the real sequences present, the hand, a moving blob
    python benchmarks/transport.py --ks 3 8   # other k

Even frames train, odd frames are held out (each half-way between two training frames). For
each sequence and k: the mean held-out PSNR (dB, PSNR of each frame's MSE, identical frames
left out of the mean) of the model's default (auto), the distance solver (the blend with its
linear-axis correction), the nearest training frame, the transport solver, and the
flow-interpolation reference: the held-out frame's two temporal neighbours moved half-way
toward each other along their optical flow and averaged (what a frame interpolator that knows
the time does; kpca knows only the code). Then the transport solver's decode speed on the
720p stand-in, to a .mkv, as a user runs it; the travelling pulse predicted from parameters;
what scoring it among the candidates of the solver choice costs a fit; DIS's presets compared
(kpcacli.numerics.displacement.FLOW_PRESET). Results go to benchmarks/results/transport.json.
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

from benchmarks.harness import CACHE, KPCA, measure, video_clip  # noqa: E402
from benchmarks.real import real_sequences  # noqa: E402
from kpcacli import FrameModel  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.numerics.displacement import displacement, flow_view, transported_frames, view_range  # noqa: E402
from kpcacli.numerics.metrics import mse, psnr_of_mse  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
SOLVERS = ("distance", "nearest", "transport")


def blob_frames(count: int = 61) -> np.ndarray:
    """A bright blob crossing a dark 96 x 128 frame, 2 pixels a frame (σ = 4)."""
    rows, columns = np.mgrid[:96, :128]
    return np.stack(
        [np.rint(30 + 200 * np.exp(-((columns - 4 - 2 * i) ** 2 + (rows - 48) ** 2) / 32.0)) for i in range(count)]
    ).astype(np.uint8)


def sequences() -> dict[str, np.ndarray]:
    found = {f"real {name}": folder for name, folder in real_sequences().items()}
    found["sample hand"] = ROOT / "sample_data" / "hand"
    frames = {name: np.stack([f.pixels for f in iter_frames([str(path)])]) for name, path in found.items()}
    frames["moving blob"] = blob_frames()
    return frames


def mean_psnr(reference: np.ndarray, decoded: np.ndarray) -> float:
    scores = [psnr_of_mse(mse(a, b), 255) for a, b in zip(reference, decoded)]
    return float(np.mean([s for s in scores if np.isfinite(s)]))


def flow_reference(training: np.ndarray, count: int) -> np.ndarray:
    """Held-out frame i (odd frame 2i + 1) from training frames i and i + 1, moved half-way."""
    out = []
    for i in range(count):
        pair = training[[i, min(i + 1, len(training) - 1)]]
        low, high = view_range(pair)
        views = [flow_view(frame, low, high) for frame in pair]
        fields = {(0, 1): displacement(views[0], views[1]), (1, 0): displacement(views[1], views[0])}
        moved = transported_frames(pair, np.array([0.5, 0.5]), lambda i_, j_, fields=fields: fields[i_, j_])
        out.append(np.clip(np.rint(moved), 0, 255).astype(np.uint8))
    return np.stack(out)


def table(ks) -> dict:
    results: dict = {}
    header = f"{'sequence':<18}{'k':>4}{'auto is':>12}{'auto':>9}" + "".join(f"{s:>11}" for s in SOLVERS)
    print(header + f"{'flow ref':>11}{'transport ms':>14}")
    for name, frames in sequences().items():
        training, held = frames[::2], frames[1::2]
        reference = mean_psnr(held, flow_reference(training, len(held)))
        for k in ks:
            if k >= len(training):
                continue
            model = FrameModel(n_components=k).fit(training)
            codes = model.encode(held)
            row = {"auto is": model.state_.solver_choice.solver, "flow reference": reference}
            for solver in SOLVERS:  # timed before auto decodes: transport's fields computed here
                started = time.perf_counter()
                decoded = model.decode(codes, solver=solver)
                row[f"{solver} ms"] = 1e3 * (time.perf_counter() - started) / len(codes)
                row[solver] = mean_psnr(held, decoded)
            row["auto"] = mean_psnr(held, model.decode(codes))
            results.setdefault(name, {})[k] = row
            print(
                f"{name:<18}{k:>4}{row['auto is']:>12}{row['auto']:>9.2f}"
                + "".join(f"{row[s]:>11.2f}" for s in SOLVERS)
                + f"{reference:>11.2f}{row['transport ms']:>14.1f}",
                flush=True,
            )
    return results


def travelling_pulse() -> dict:
    """EZyRB's third tutorial's problem: a Gaussian pulse (σ = 0.2) on
    x in [0, 11], 256 points, centres linspace(0.75, 10.25, 20); a model fitted with its
    centres as parameters on every other pulse (1 x 256 16-bit frames), the others predicted:
    mean relative L2 error by solver and k (the last centre lies beyond the training range)."""
    x = np.linspace(0, 11, 256)
    centres = np.linspace(0.75, 10.25, 20)
    pulses = np.stack([np.rint(60000 * np.exp(-((x - c) ** 2) / 0.08))[np.newaxis] for c in centres]).astype(np.uint16)
    truth = pulses[1::2, 0].astype(np.float64)
    out = {}
    print("\ntravelling pulse, predicted from its centre: mean relative L2 error (inside the range / all)")
    for k in (1, 3, 5):
        model = FrameModel(n_components=k).fit(pulses[::2], params=centres[::2, None], param_names=["centre"])
        row = {}
        for solver in SOLVERS:
            predicted = model.predict(centres[1::2, None], solver=solver)[:, 0].astype(np.float64)
            errors = np.linalg.norm(predicted - truth, axis=1) / np.linalg.norm(truth, axis=1)
            row[solver] = {"inside": float(errors[:-1].mean()), "all": float(errors.mean())}
        out[k] = row
        print(f"k = {k}: " + ", ".join(f"{s} {row[s]['inside']:.3f} / {row[s]['all']:.3f}" for s in SOLVERS))
    return out


def choice_cost() -> dict:
    """What scoring the transport solver in the solver choice costs a fit: FrameModel.fit
    timed with the candidates without it and as they are (with it), alternately, three times
    each (medians)."""
    from kpcacli.preimage import measurement as choice

    cases = {"1080 x 1920 hand, 69 frames": sequence_frames(CACHE / "hand_1080x1920_70" / "train")}
    cases.update({f"real {name}": sequence_frames(path) for name, path in real_sequences(["mbt-cube"]).items()})
    out = {}
    without = tuple(name for name in choice.CANDIDATES if name != "transport")
    print("\nfit, k = 8, without transport among the candidates / with it (the default)")
    for name, frames in cases.items():
        if frames is None:
            continue
        timings = {}
        for _ in range(3):  # alternating; the median of three of each
            for label, candidates in (("without transport", without), ("with transport", choice.CANDIDATES)):
                original, choice.CANDIDATES = choice.CANDIDATES, candidates
                try:
                    started = time.perf_counter()
                    model = FrameModel(n_components=8).fit(frames)
                    seconds = time.perf_counter() - started
                finally:
                    choice.CANDIDATES = original
                timing = timings.setdefault(label, {"runs": [], "chose": model.state_.solver_choice.as_attributes()})
                timing["runs"].append(seconds)
                timing["seconds"] = float(np.median(timing["runs"]))
        out[name] = timings
        chose = timings["with transport"]["chose"]
        print(
            f"{name}: {timings['without transport']['seconds']:.2f} s / {timings['with transport']['seconds']:.2f} s; "
            f"with transport it chose {chose['solver']} ({', '.join(f'{s} {v}' for s, v in chose['scores'].items())})"
        )
    return out


def sequence_frames(path: Path) -> np.ndarray | None:
    return np.stack([f.pixels for f in iter_frames([str(path)])]) if Path(path).is_dir() else None


PRESETS = ("ULTRAFAST", "FAST", "MEDIUM")


def flow_presets(k: int = 8) -> dict:
    """The transport solver's held-out PSNR and milliseconds a frame (fields computed) with each
    of DIS's presets, on every sequence of :func:`table` at k = 8."""
    from kpcacli.numerics import displacement as module

    print(f"\nDIS preset, k = {k}: transport's mean held-out PSNR (dB) and ms a frame")
    print(f"{'sequence':<18}" + "".join(f"{preset:>22}" for preset in PRESETS))
    out, original = {}, module.FLOW_PRESET
    try:
        for name, frames in sequences().items():
            training, held = frames[::2], frames[1::2]
            codes, row = None, {}
            for preset in PRESETS:
                module.FLOW_PRESET = preset
                model = FrameModel(n_components=k).fit(training)  # its own fields
                codes = model.encode(held) if codes is None else codes
                started = time.perf_counter()
                decoded = model.decode(codes, solver="transport")
                row[preset] = {
                    "psnr": mean_psnr(held, decoded),
                    "ms": 1e3 * (time.perf_counter() - started) / len(codes),
                }
            out[name] = row
            print(f"{name:<18}" + "".join(f"{row[p]['psnr']:>14.2f} ({row[p]['ms']:>4.1f} ms)" for p in PRESETS))
    finally:
        module.FLOW_PRESET = original
    return out


def decode_speed() -> dict:
    """`kpca decode --solver transport` of the 720p stand-in's odd frames to .mkv, k = 8."""
    clip = video_clip()
    model, codes = CACHE / "transport-720p.npz", CACHE / "transport-720p-codes.npy"
    measure([*KPCA, "fit", clip, "--frames", "::2", "-m", model, "-k", "8", "-q", "--force"], repeats=1)
    measure([*KPCA, "encode", clip, "--frames", "1::2", "-m", model, "-o", codes, "-q", "--force"], repeats=1)
    frames = len(np.load(codes))
    out = {}
    for solver in ("distance", "transport"):
        target = CACHE / f"transport-720p-{solver}.mkv"
        command = [*KPCA, "decode", codes, "-m", model, "-o", target, "--solver", solver, "-q", "--force"]
        out[solver] = measure(command)
        print(
            f"decode {frames} frames of 1280 x 720 to .mkv, {solver:<9}: {frames / out[solver]['seconds']:.1f} frames/s"
        )
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ks", type=int, nargs="+", default=[3, 8, 20])
    args = parser.parse_args(argv)
    results = {
        "quality": table(args.ks),
        "pulse": travelling_pulse(),
        "choice_cost": choice_cost(),
        "presets": flow_presets(),
        "decode_720p": decode_speed(),
        "date": time.strftime("%Y-%m-%d"),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "transport.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
