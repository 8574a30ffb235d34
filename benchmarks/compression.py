"""A compressed clip against the clip: the model's size, its quality, decoding speed, and the
rate-distortion picture beside H.264, each figure beside a reference measured in the same run.

    python benchmarks/compression.py              # everything (first run renders the stand-ins)
    python benchmarks/compression.py store speed  # some of: store speed growth rd

The clips are real camera footage first (the sequences of benchmarks/real.py as H.264 clips,
``make bench-data``), then the stand-ins of benchmarks/performance.py (H.264 clips of a grainy
panned photograph: 132 frames of 1280 x 720 and 250 of 640 x 272) and the sample hand as a
29.97 fps mp4 (the README's walkthrough). Every model is fitted on the even frames with -k 8, as
``kpca fit CLIP --frames ::2 -k 8``; "held-out" is the mean PSNR of the odd frames, encoded and
decoded by that model, against the clip (``kpca compare CLIP DECODED -m MODEL``). Every command
runs in its own process. Results go to benchmarks/results/compression.json, the plot to
docs/rate-distortion.png.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.harness import (  # noqa: E402  (after the path is set)
    CACHE,
    KPCA,
    REFERENCE,
    measure,
    measure_alternating,
    measure_side_by_side,
    video_clip,
)
from benchmarks.report import header, row, run_benchmarks  # noqa: E402

PLOT = ROOT / "docs" / "rate-distortion.png"
K = 8


def clips() -> dict[str, Path]:
    """The clips every table is measured on, by name: the real sequences first (their H.264
    clips, benchmarks/real.py), then the stand-ins."""
    from benchmarks.real import real_clip, real_sequences

    CACHE.mkdir(parents=True, exist_ok=True)
    hand = CACHE / "hand.mp4"
    if not hand.exists():
        run("extract", ROOT / "sample_data" / "hand", "-o", hand, "--fps", "29.97")
    real = {f"real {name}": real_clip(name) for name in real_sequences()}
    return {**real, "hand": hand, "640x272": video_clip(250, 272, 640, 250), "720p": video_clip()}


def run(*arguments, quiet_warnings: bool = True) -> str:
    """One kpca command; its standard output. Warnings (held-out frames flagged as far) are
    not the benchmark's subject and are dropped."""
    result = subprocess.run([*KPCA, *map(str, arguments)], capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"kpca {' '.join(map(str, arguments))} failed: {result.stderr.strip()}")
    if not quiet_warnings and result.stderr:
        print(result.stderr.strip())
    return result.stdout


def fitted(clip: Path, name: str, *options) -> Path:
    """A model of the clip's even frames, -k 8 unless `options` say otherwise."""
    model = CACHE / f"{clip.stem}-{name}.npz"
    run("fit", clip, "--frames", "::2", "-m", model, "-q", "--force", *(options or ("-k", K)))
    return model


def held_out(clip: Path, model: Path) -> dict:
    """The model's codes of every frame of the clip, decoded losslessly and compared: the mean
    PSNR of the held-out (odd) frames and of the training ones, and the codes' bytes."""
    codes, decoded = CACHE / f"{model.stem}-codes.npy", CACHE / f"{model.stem}-decoded.mkv"
    run("encode", clip, "-m", model, "-o", codes, "--dtype", "float32", "-q", "--force")
    run("decode", codes, "-m", model, "-o", decoded, "-q", "--force")
    scores = json.loads(run("compare", clip, decoded, "-m", model, "--json"))
    frames = scores["frames"]
    k = int(np.load(codes).shape[1])
    return {
        "held_out_psnr": scores["held_out"]["mean_psnr"],
        "training_psnr": scores["training"]["mean_psnr"],
        "training_exact": scores["training"]["identical_frames"] == scores["training"]["frames"],
        "frames": frames,
        "code_bytes": 4 * k * frames,  # float32 codes, without the .npy header
    }


def raw_bytes(clip: Path, step: int = 2) -> int:
    """Bytes of the clip's training frames (every `step`-th) as 8-bit grey."""
    from kpcacli.io.video import grey_frames

    return sum(frame.nbytes for index, frame in enumerate(grey_frames(str(clip))) if index % step == 0)


def store_bytes(model: Path) -> int:
    """Bytes of a model's frame store alone: its H.264 groups, without the axes and the rest."""
    from kpcacli.modelfile import load

    return int(load(model).frames.table[:, 3].sum())


# -- 1. the store ------------------------------------------------------------------------
def bench_store(results: dict) -> None:
    """Model / source and model / raw training frames for the default (exact) store, the clip's
    own packets where it can be copied, whether every training frame comes back bit for bit
    through its code, and the held-out PSNR; beside it a lossy store the user may ask for
    (``--store-crf 24``) and what it costs."""
    header(
        "the default store (exact: the clip's packets) and --store-crf 24, fit --frames ::2 -k 8",
        ("default", "--store-crf 24", "difference"),
    )
    table = {}
    for name, clip in clips().items():
        source, raw = clip.stat().st_size, raw_bytes(clip)
        exact, lossy = fitted(clip, "lossless"), fitted(clip, "crf24", "-k", K, "--store-crf", "24")
        scores = {store: held_out(clip, model) for store, model in (("lossless", exact), ("crf24", lossy))}
        sizes = {"lossless": exact.stat().st_size, "crf24": lossy.stat().st_size}
        loss = scores["lossless"]["held_out_psnr"] - scores["crf24"]["held_out_psnr"]
        print(f"{name} ({scores['lossless']['frames']} frames, source {source / 1024:.1f} KiB)")
        row("  model / source", f"{sizes['lossless'] / source:.1f} x", f"{sizes['crf24'] / source:.1f} x", "", "")
        stores = {"lossless": store_bytes(exact), "crf24": store_bytes(lossy)}
        row(
            "  store / raw training frames",
            f"{stores['lossless'] / raw:.1%}",
            f"{stores['crf24'] / raw:.1%}",
            "",
            "",
        )
        row("  model / raw (store + axes)", f"{sizes['lossless'] / raw:.1%}", f"{sizes['crf24'] / raw:.1%}", "", "")
        row(
            "  training frames back",
            "bit for bit" if scores["lossless"]["training_exact"] else "NOT EXACT",
            f"{scores['crf24']['training_psnr']:.2f} dB",
            "",
            "default bit for bit",
        )
        row(
            "  held-out PSNR",
            f"{scores['lossless']['held_out_psnr']:.2f} dB",
            f"{scores['crf24']['held_out_psnr']:.2f} dB",
            f"{-loss:+.2f} dB",
            "",
        )
        table[name] = {
            "source_bytes": source,
            "raw_bytes": raw,
            "model_bytes": sizes,
            "store_bytes": stores,
            "scores": scores,
        }
    results["store"] = table


# -- 2. decoding at video speed ------------------------------------------------------------
def bench_speed(results: dict) -> None:
    """Every code of a clip decoded to .mkv, .mp4 and a PNG folder (start-up and model loading
    included), each measured in alternation with PyAV decoding the source clip to grey: the
    largest real clip (mbt-cube, 640 x 480) first, then the 720p stand-in."""
    from benchmarks.real import real_clip, real_sequences

    clips_ = {"real mbt-cube": real_clip("mbt-cube")} if "mbt-cube" in real_sequences() else {}
    clips_["720p stand-in"] = clips()["720p"]
    results["speed"] = {name: _speed(name, clip) for name, clip in clips_.items()}


def _speed(name: str, clip: Path) -> dict:
    model = fitted(clip, "lossless")
    codes = CACHE / f"speed-codes-{clip.stem}.npy"
    run("encode", clip, "-m", model, "-o", codes, "-q", "--force")
    count = len(np.load(codes))
    header(
        f"decoding {count} codes of {name} (a model of the even frames, k = {K}), 2 cores",
        ("kpca decode", "PyAV, source", "ratio"),
    )
    table = {}
    for label, output, target in (
        ("to .mkv", "speed.mkv", 60),
        ("to .mp4", "speed.mp4", 30),
        ("to a PNG folder", "speed-png/", 25),
    ):
        ours, theirs = measure_side_by_side(
            [*KPCA, "decode", codes, "-m", model, "-o", f"{CACHE}/{output}", "-q", "--force"],
            [*REFERENCE, "grey", clip],
        )
        fps, reference = count / ours["seconds"], count / theirs["seconds"]
        row(
            f"  {label}",
            f"{fps:.0f} fps",
            f"{reference:.0f} fps",
            f"{fps / reference:.2f}x",
            f">= {target} fps, >= 0.25x",
        )
        table[output] = {"kpca": ours, "pyav_source": theirs, "fps": fps, "pyav_fps": reference}
    return table


# -- 3. one frame against the training set's size ------------------------------------------
GROWTH_FRAMES = (50, 250)


REAL_GROWTH = ("0:264:12", "0:264:2")  # 22 and 132 frames of the same real clip: 6 x the frames
REAL_GROWTH_CODES = "1:264:26"  # ten frames neither model holds


def bench_real_growth(results: dict) -> None:
    """Ten codes decoded from models of 22 and of 132 frames of the real mire-2 clip (6 x the
    frames), alternating: decoding reads the codes' neighbours and the prepared axes, so its
    cost should not grow with the training set (target: at most 1.3 x)."""
    from benchmarks.real import real_clip

    clip = real_clip("mire-2")
    commands, table = [], {}
    for selection in REAL_GROWTH:
        name = selection.replace(":", "-")
        model, codes = CACHE / f"real-growth{name}.npz", CACHE / f"real-growth{name}.npy"
        run("fit", clip, "--frames", selection, "-m", model, "-k", K, "-q", "--force")
        run("encode", clip, "--frames", REAL_GROWTH_CODES, "-m", model, "-o", codes, "-q", "--force")
        commands.append([*KPCA, "decode", codes, "-m", model, "-o", f"{CACHE}/real-growth{name}/", "-q", "--force"])
        table[selection] = {"model_bytes": model.stat().st_size}
    small, large = measure_alternating(commands)
    header("real footage: ten codes of 384 x 288 (mire-2) decoded to PNGs, models of 22 and 132 frames, k = 8")
    row(
        "  from 132 training frames",
        f"{large['seconds']:.2f} s",
        f"{small['seconds']:.2f} s (22 frames)",
        f"{large['seconds'] / small['seconds']:.2f}x",
        "<= 1.3x",
    )
    table[REAL_GROWTH[0]]["decode"], table[REAL_GROWTH[1]]["decode"] = small, large
    results["real_growth"] = table


def bench_growth(results: dict) -> None:
    """One frame decoded from models of 50 and of 250 frames of the same 720p clip: decoding
    reads the frame's neighbours and the model's prepared axes, never every training frame."""
    clip = video_clip(max(GROWTH_FRAMES), 720, 1280, 125)
    header("one frame of 1280 x 720 decoded to PNG from models of the same clip, k = 8")
    table = {}
    for frames in GROWTH_FRAMES:
        model = CACHE / f"growth-{frames}.npz"
        step = max(GROWTH_FRAMES) // frames
        run("fit", clip, "--frames", f"::{step}", "-m", model, "-k", K, "-q", "--force")
        code = CACHE / f"growth-{frames}.npy"  # the same frame, held out of the smaller model
        run("encode", clip, "--frames", "3", "-m", model, "-o", code, "-q", "--force")
        table[frames] = {
            "decode": measure([*KPCA, "decode", code, "-m", model, "-o", CACHE / "growth.png", "-q", "--force"], 5),
            "model_bytes": model.stat().st_size,
        }
    small, large = (table[frames]["decode"]["seconds"] for frames in GROWTH_FRAMES)
    row(
        f"  from {GROWTH_FRAMES[1]} training frames",
        f"{large:.2f} s",
        f"{small:.2f} s ({GROWTH_FRAMES[0]} frames)",
        f"{large / small:.2f}x",
        "<= 1.3x",
    )
    results["growth"] = table


# -- 4. rate and distortion ------------------------------------------------------------------
RD_K = (3, 8, 16)
RD_STORES = (("default", ()), ("crf 24", ("--store-crf", "24")))  # default: exact (the clip's packets)
H264_CRF = (8, 14, 20, 26, 32, 38)


def bench_rd(results: dict) -> None:
    """Held-out PSNR against bytes per frame, the model amortised over the clip, for kpca at
    several k and stores, beside H.264 (x264, medium preset, grey in full-range luma) at
    several CRF on the same frames."""
    table = {}
    for name, clip in clips().items():
        frames = _grey(clip)
        points = []
        for k in RD_K:
            for store, options in RD_STORES:
                model = fitted(clip, f"rd-{k}-{store.replace(' ', '')}", "-k", k, *options)
                scores = held_out(clip, model)
                size = model.stat().st_size + scores["code_bytes"]
                points.append({"k": k, "store": store, "bytes_per_frame": size / len(frames), **scores})
        h264 = [_h264_point(frames, crf) for crf in H264_CRF]
        table[name] = {"kpca": points, "h264": h264}
        header(
            f"rate and distortion, {name}: bytes a frame (model and codes over the clip's {len(frames)} frames) and held-out PSNR"
        )
        for point in points:
            print(
                f"  kpca k = {point['k']:<3} {point['store']:<10}{point['bytes_per_frame']:>10.0f} B a frame{point['held_out_psnr']:>9.2f} dB"
            )
        for point in h264:
            print(
                f"  H.264 CRF {point['crf']:<12}{point['bytes_per_frame']:>10.0f} B a frame{point['held_out_psnr']:>9.2f} dB"
            )
    results["rd"] = table
    try:
        plot_rd(table)
    except ImportError:
        print("(the plot needs matplotlib: pip install -e '.[bench]')")


def _grey(clip: Path) -> list[np.ndarray]:
    from kpcacli.io.video import grey_frames

    return list(grey_frames(str(clip)))


def _h264_point(frames: list[np.ndarray], crf: int) -> dict:
    """The frames through x264 (medium preset: H.264 at its usual efficiency, not kpca's fast
    writer), grey in a full-range luma plane: bytes a frame and the odd frames' mean PSNR."""
    import av

    from kpcacli.numerics.metrics import psnr

    path = CACHE / f"rd-h264-{crf}.mp4"
    height, width = frames[0].shape
    with av.open(str(path), "w") as container:
        stream = container.add_stream("libx264", rate=30, options={"crf": str(crf), "preset": "medium"})
        stream.width, stream.height, stream.pix_fmt = width, height, "gray" if height % 2 or width % 2 else "yuv420p"
        stream.codec_context.color_range = 2
        for frame in frames:
            picture = av.VideoFrame.from_ndarray(np.repeat(frame[..., None], 3, axis=2), format="rgb24")
            picture = (
                picture.reformat(format=stream.pix_fmt, dst_color_range=2) if stream.pix_fmt != "gray" else picture
            )
            for packet in stream.encode(picture):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    back = _grey(path)
    scores = [psnr(a, b) for a, b in zip(frames[1::2], back[1::2])]
    return {"crf": crf, "bytes_per_frame": path.stat().st_size / len(frames), "held_out_psnr": float(np.mean(scores))}


def plot_rd(table: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = min(4, len(table))
    rows = -(-len(table) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
    for ax in axes.ravel()[len(table) :]:
        ax.axis("off")
    for ax, (name, points) in zip(axes.ravel(), table.items()):
        for store, marker in zip([store for store, _ in RD_STORES], "os^"):
            chosen = [p for p in points["kpca"] if p["store"] == store]
            ax.semilogx(
                [p["bytes_per_frame"] for p in chosen],
                [p["held_out_psnr"] for p in chosen],
                marker=marker,
                label=f"kpca, {store} store (k = {', '.join(str(p['k']) for p in chosen)})",
            )
        ax.semilogx(
            [p["bytes_per_frame"] for p in points["h264"]],
            [p["held_out_psnr"] for p in points["h264"]],
            "k--",
            marker="x",
            label=f"H.264 medium, CRF {H264_CRF[-1]}–{H264_CRF[0]}",
        )
        ax.set_title(name)
        ax.set_xlabel("bytes a frame (model and codes, amortised over the clip)")
        ax.set_ylabel("held-out PSNR (dB)")
        ax.grid(True, which="both", linewidth=0.3)
        ax.legend(fontsize="x-small")
    figure.suptitle(f"kpca against H.264, fit on the even frames, scored on the odd ones ({time.strftime('%Y-%m-%d')})")
    figure.tight_layout()
    figure.savefig(PLOT, dpi=90)


BENCHMARKS = {
    "store": bench_store,
    "speed": bench_speed,
    "real-growth": bench_real_growth,
    "growth": bench_growth,
    "rd": bench_rd,
}


def main(argv=None) -> int:
    run_benchmarks(BENCHMARKS, argv, "compression.json")
    shutil.rmtree(CACHE / "speed-png", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
