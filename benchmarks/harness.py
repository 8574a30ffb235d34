"""What the benchmarks measure with: each command in its own process (benchmarks/measure.py),
timed after a warm-up run, alternating with its reference where the ratio is the target, and
the stand-in frames they run on (rendered once into $KPCA_BENCH_DIR, default the system temp
folder). What they print and where the figures go is benchmarks/report.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("KPCA_BENCH_DIR") or Path(tempfile.gettempdir()) / "kpca-bench")
RESULTS = ROOT / "benchmarks" / "results"
PYTHON = sys.executable
KPCA = [PYTHON, "-m", "kpcacli"]
REFERENCE = [PYTHON, "-m", "benchmarks.references"]
REPEATS = 3


def sequence(height: int, width: int, frames: int) -> tuple[Path, Path]:
    """A rendered hand sequence: (folder of the training frames, the held-out middle frame)."""
    folder = CACHE / f"hand_{height}x{width}_{frames}"
    if not (folder / ".complete").exists():
        print(f"rendering {frames} frames of {height} x {width} into {folder} ...", flush=True)
        subprocess.run(
            [
                PYTHON,
                str(ROOT / "sample_data" / "make_hand.py"),
                "-o",
                str(folder / "all"),
                "--height",
                str(height),
                "--width",
                str(width),
                "--frames",
                str(frames),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        train = folder / "train"
        train.mkdir(exist_ok=True)
        paths = sorted((folder / "all").glob("*.png"))
        middle = len(paths) // 2
        for index, path in enumerate(paths):
            target = folder / "held_out.png" if index == middle else train / path.name
            if not target.exists():
                target.symlink_to(path)
        (folder / ".complete").touch()
    return folder / "train", folder / "held_out.png"


# Commands run as an installed Python runs them, caching compiled modules (pip compiles them at
# install): this machine's environment sets PYTHONDONTWRITEBYTECODE, which made every kpca
# command compile its 60 modules again (0.065 s of each run). The warm-up run writes the cache.
AS_INSTALLED = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def runs(command: list, count: int, warm_up: bool = True) -> list[dict]:
    """Wall time and peak RSS of `count` runs of `command`, each in its own process
    (benchmarks/measure.py), after one warm-up run that fills the page cache."""
    results = []
    for attempt in range(count + warm_up):
        output = subprocess.run(
            [PYTHON, "-m", "benchmarks.measure", "--", *map(str, command)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env=AS_INSTALLED,
        )
        result = json.loads(output.stdout.strip().splitlines()[-1])
        if result["status"] != 0:
            raise SystemExit(f"{' '.join(map(str, command))} failed: {result['stderr']}")
        if attempt or not warm_up:
            results.append(result)
    return results


def medians(measured: list[dict]) -> dict:
    """Median wall time and peak RSS of some runs."""
    return {
        "seconds": float(np.median([r["seconds"] for r in measured])),
        "peak_mb": float(np.median([r["peak_mb"] for r in measured])),
    }


def measure(command: list, repeats: int = REPEATS) -> dict:
    """Median wall time and peak RSS of `command` over `repeats` runs (after one warm-up)."""
    return medians(runs(command, repeats))


def measure_side_by_side(command: list, reference: list, repeats: int = 2 * REPEATS + 1) -> tuple[dict, dict]:
    """`command` and `reference` measured in alternation (after one warm-up run each), so a
    slow moment of the machine falls on both: the medians of `repeats` runs each."""
    return tuple(measure_alternating([command, reference], repeats))


def measure_alternating(commands: list[list], repeats: int = 2 * REPEATS + 1) -> list[dict]:
    """Each of `commands` run in turn, `repeats` times round (after one warm-up run each): the
    medians of each command's runs."""
    for command in commands:
        runs(command, 0)  # warm-up only
    rounds = [[runs(command, 1, warm_up=False)[0] for command in commands] for _ in range(repeats)]
    return [medians([measured[column] for measured in rounds]) for column in range(len(commands))]


def video_clip(frames: int = 132, height: int = 720, width: int = 1280, period: int | None = None) -> Path:
    """An H.264 clip (crf 20): a real photograph (scikit-image's coffee, enlarged) panned along
    a there-and-back path (one per `period` frames; default the whole clip) with sub-pixel
    motion and sensor noise (sigma 2). 1280 x 720 by default."""
    period = period or frames
    name = f"pan_720p_{frames}.mp4" if (height, width, period) == (720, 1280, frames) else None
    path = CACHE / (name or f"pan_{width}x{height}_{frames}_{period}.mp4")
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    import av
    from scipy import ndimage
    from skimage import data

    print(f"encoding {frames} frames of {width} x {height} into {path} ...", flush=True)
    scale = width / 1280
    photo = Image.fromarray(data.coffee()).convert("L")
    photo = photo.resize((round(2100 * scale), round(1400 * scale)), Image.Resampling.BICUBIC)
    photo = np.asarray(photo, dtype=np.float64)
    rng = np.random.default_rng(0)
    temporary = path.with_suffix(".tmp.mp4")
    with av.open(str(temporary), "w") as container:
        stream = container.add_stream("libx264", rate=30)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = {"crf": "20"}
        for index in range(frames):
            phase = 0.5 - 0.5 * np.cos(2 * np.pi * index / period)
            top, left = scale * (200 + 80 * np.sin(np.pi * phase)), scale * (100 + 500 * phase)
            window = photo[int(top) : int(top) + height + 2, int(left) : int(left) + width + 2]
            frame = ndimage.shift(window, (-(top % 1), -(left % 1)), order=1)[:height, :width]
            frame = np.clip(np.rint(frame + rng.normal(0, 2, frame.shape)), 0, 255).astype(np.uint8)
            image = av.VideoFrame.from_ndarray(np.repeat(frame[..., None], 3, axis=2), format="rgb24")
            for packet in stream.encode(image):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    temporary.rename(path)
    return path
