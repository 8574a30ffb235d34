"""Speed and memory on megapixel frames, each figure beside a reference measured in the same run.

    python benchmarks/performance.py            # everything (first run renders ~1500 frames)
    python benchmarks/performance.py fit load   # some of: fit video video-output load sklearn gram codec growth

Frames come from sample_data/make_hand.py, rendered once into $KPCA_BENCH_DIR (default: the
system temp folder). Every command runs in its own process (benchmarks/measure.py) and is
timed three times (seven, alternating with its reference, where the ratio is the target); the median is reported, with its peak resident memory. The targets
are printed next to the figures. Results also go to benchmarks/results/performance.json, and
the growth plot to benchmarks/results/growth.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks.harness import (  # noqa: E402  (after the path is set)
    CACHE,
    KPCA,
    PYTHON,
    REFERENCE,
    REPEATS,
    measure,
    measure_alternating,
    runs,
    sequence,
    video_clip,
)
from benchmarks.report import header, plot_growth, row, run_benchmarks  # noqa: E402


def bench_fit(results: dict) -> None:
    """The megapixel fit (the default, lossless store) against only reading the frames."""
    train, _ = sequence(1080, 1920, 70)
    fit = [*KPCA, "fit", train, "-m", CACHE / "hd.npz", "-k", "3", "-q"]
    exact, read = measure_alternating([fit, [*REFERENCE, "read", train]])
    header("1. fit of 69 frames of 1080 x 1920 against only reading them")
    store_rows(exact, read, "read")
    row("peak RSS", f"{exact['peak_mb']:.0f} MB", f"{read['peak_mb']:.0f} MB", "", "")
    results["fit"] = {"kpca": exact, "read_only": read}


def bench_real_fit(results: dict) -> None:
    """Real footage (benchmarks/real.py): a fit of the mbt-cube sequence (218 frames of
    640 x 480, a hand moving past a cube) from its H.264 clip, against PyAV decoding the clip
    to grey, and against scikit-learn's KernelPCA with its learned inverse on the same frames."""
    from benchmarks.real import real_clip

    clip = real_clip("mbt-cube")
    fit = [*KPCA, "fit", clip, "-m", CACHE / "real-fit.npz", "-k", "8", "-q"]
    exact, decode = measure_alternating([fit, [*REFERENCE, "grey", clip]])
    theirs = measure([*REFERENCE, "sklearn-video", clip, "8"], repeats=1)
    header("1b. real footage: fit of mbt-cube's 218 frames of 640 x 480 from its H.264 clip, k = 8")
    store_rows(exact, decode, "PyAV grey")
    row(
        "against scikit-learn",
        f"{exact['seconds']:.2f} s",
        f"{theirs['seconds']:.2f} s",
        f"{theirs['seconds'] / exact['seconds']:.1f}x faster",
        ">= 4x",
    )
    row(
        "peak RSS",
        f"{exact['peak_mb']:.0f} MB",
        f"{theirs['peak_mb']:.0f} MB",
        f"{theirs['peak_mb'] / exact['peak_mb']:.1f}x less",
        ">= 6x",
    )
    results["real_fit"] = {"kpca": exact, "pyav_grey": decode, "sklearn": theirs}


def store_rows(fit: dict, reference: dict, name: str) -> None:
    """The wall-time row of a fit (the default store) against `reference`."""
    ratio = f"{fit['seconds'] / reference['seconds']:.2f}x"
    row("wall time", f"{fit['seconds']:.2f} s", f"{reference['seconds']:.2f} s ({name})", ratio, "<= 1.5x")


# A concurrent numpy load: multi-threaded matrix products, as a second kpca, a test suite or any
# numpy job beside the fit would make.
LOAD = "import numpy as np, time\na = np.ones((1500, 1500))\nwhile True:\n    a @ a"
LOAD_RUNS = 5


def bench_load(results: dict) -> None:
    train, _ = sequence(720, 1280, 67)
    command = [*KPCA, "fit", train, "-m", CACHE / "load.npz", "-k", "3", "-q"]
    idle = [r["seconds"] for r in runs(command, LOAD_RUNS)]
    load = subprocess.Popen([PYTHON, "-c", LOAD])
    try:
        time.sleep(1.0)
        loaded = [r["seconds"] for r in runs(command, LOAD_RUNS)]
    finally:
        load.kill()
        load.wait()
    reference = float(np.median(idle))
    header(f"fit of 66 frames of 720 x 1280 beside a numpy matrix-product load ({LOAD_RUNS} runs each)")
    row("idle, median", f"{reference:.2f} s", "", "", "the reference")
    row(
        "loaded, median",
        f"{np.median(loaded):.2f} s",
        f"{reference:.2f} s (idle)",
        f"{np.median(loaded) / reference:.2f}x",
        "",
    )
    row(
        "loaded, worst",
        f"{max(loaded):.2f} s",
        f"{reference:.2f} s (idle)",
        f"{max(loaded) / reference:.2f}x",
        "<= 2.5x (aim 2x)",
    )
    print(f"{'':<30}idle runs {' '.join(f'{t:.2f}' for t in idle)}; loaded runs {' '.join(f'{t:.2f}' for t in loaded)}")
    results["load"] = {"idle": idle, "loaded": loaded, "worst_ratio": max(loaded) / reference}


def bench_sklearn(results: dict) -> None:
    train, _ = sequence(1080, 1920, 70)
    ours = results.get("fit", {}).get("kpca") or measure([*KPCA, "fit", train, "-m", CACHE / "hd.npz", "-k", "3", "-q"])
    theirs = measure([*REFERENCE, "sklearn", train], repeats=1)
    header("2. against scikit-learn KernelPCA(rbf, fit_inverse_transform=True), float32, same frames")
    row(
        "end-to-end fit",
        f"{ours['seconds']:.2f} s",
        f"{theirs['seconds']:.2f} s",
        f"{theirs['seconds'] / ours['seconds']:.1f}x faster",
        ">= 4x",
    )
    row(
        "peak RSS",
        f"{ours['peak_mb']:.0f} MB",
        f"{theirs['peak_mb']:.0f} MB",
        f"{theirs['peak_mb'] / ours['peak_mb']:.1f}x less",
        ">= 6x",
    )
    results["sklearn"] = {"kpca": ours, "sklearn": theirs}


def bench_gram(results: dict) -> None:
    from kpcacli import FrameModel
    from kpcacli.numerics.gram import linear_gram

    train, _ = sequence(1080, 1920, 70)
    model = CACHE / "hd.npz"
    if not model.exists():
        subprocess.run([*KPCA, "fit", train, "-m", model, "-k", "3", "-q"], check=True)
    frames = FrameModel.load(model).state_.frames
    n, d = frames.shape
    linear_gram(frames)  # warm the page cache

    def timed(function) -> float:
        times = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            function()
            times.append(time.perf_counter() - started)
        return float(np.median(times))

    gram_seconds = timed(lambda: linear_gram(frames))
    gram_gflops = 2.0 * n * n * d / gram_seconds / 1e9
    square = np.random.default_rng(0).random((2000, 2000))
    dgemm = 2.0 * 2000**3 / timed(lambda: square @ square) / 1e9
    sgemm = 2.0 * 2000**3 / timed(lambda: square.astype(np.float32) @ square.astype(np.float32)) / 1e9
    header(f"3. the Gram pass ({n} x {d:,} uint8 frames, float64 products) against a plain GEMM")
    row(
        "GFLOP/s (2 n^2 d / time)",
        f"{gram_gflops:.1f}",
        f"{dgemm:.1f} (dgemm 2000)",
        f"{100 * gram_gflops / dgemm:.0f}%",
        ">= 50%",
    )
    row("time of the pass", f"{gram_seconds:.3f} s", f"sgemm 2000: {sgemm:.0f}", "", "")
    results["gram"] = {"seconds": gram_seconds, "gflops": gram_gflops, "dgemm_gflops": dgemm, "sgemm_gflops": sgemm}


def bench_codec(results: dict) -> None:
    from kpcacli import FrameModel

    train, held = sequence(1080, 1920, 70)
    model = CACHE / "hd.npz"
    if not model.exists():
        subprocess.run([*KPCA, "fit", train, "-m", model, "-k", "3", "-q"], check=True)
    codes, back = CACHE / "codes.npy", CACHE / "back.png"
    encode = measure([*KPCA, "encode", held, "-m", model, "-o", codes])
    one_pass = measure([*REFERENCE, "pass", model, held])
    # The default decoder (distance) sums every training frame; log sums two.
    decode = measure([*KPCA, "decode", codes, "-m", model, "-o", back])
    every_row = measure([*REFERENCE, "rows", model, CACHE / "ref.png"])
    decode_log = measure([*KPCA, "decode", codes, "-m", model, "-o", back, "--solver", "log"])
    reference = measure([*REFERENCE, "neighbours", model, CACHE / "ref.png"])
    batch = measure([*KPCA, "encode", train, "-m", model, "-o", CACHE / "all.npy"])
    fitted = FrameModel.load(model)
    code = np.load(codes)
    fitted.solve_preimages(code)  # warm
    started = time.perf_counter()
    for _ in range(50):
        fitted.solve_preimages(code)
    solver_ms = (time.perf_counter() - started) / 50 * 1000
    header("4. encode and decode one 1080 x 1920 frame")
    row(
        "encode one frame",
        f"{encode['seconds']:.2f} s",
        f"{one_pass['seconds']:.2f} s (read+pass)",
        f"{encode['seconds'] / one_pass['seconds']:.2f}x",
        "<= 2x",
    )
    row("  peak RSS", f"{encode['peak_mb']:.0f} MB", f"{one_pass['peak_mb']:.0f} MB", "", "")
    row(
        "decode one frame (distance)",
        f"{decode['seconds']:.2f} s",
        f"{every_row['seconds']:.2f} s (all rows+PNG)",
        f"{decode['seconds'] / every_row['seconds']:.2f}x",
        "dominated by I/O",
    )
    row(
        "decode one frame (--solver log)",
        f"{decode_log['seconds']:.2f} s",
        f"{reference['seconds']:.2f} s (2 rows+PNG)",
        f"{decode_log['seconds'] / reference['seconds']:.2f}x",
        "dominated by I/O",
    )
    row("  solver part", f"{solver_ms:.2f} ms", "", "", "milliseconds")
    row("  peak RSS", f"{decode['peak_mb']:.0f} MB", f"{reference['peak_mb']:.0f} MB", "", "")
    row("encode the 69 frames (batch)", f"{batch['seconds']:.2f} s", "", "", "one blocked GEMM")
    results["codec"] = {
        "encode": encode,
        "read_and_pass": one_pass,
        "decode": decode,
        "read_every_row_and_png": every_row,
        "decode_log": decode_log,
        "read_two_rows_and_png": reference,
        "solver_ms": solver_ms,
        "batch_encode_69": batch,
    }


GROWTH_N = (69, 276, 1104)
GROWTH_D = ((270, 480), (540, 960), (1080, 1920))


def bench_growth(results: dict) -> None:
    cases = [("n", n, (540, 960), n + 1) for n in GROWTH_N] + [("d", h * w, (h, w), 70) for h, w in GROWTH_D]
    table = []
    for axis, _size, (height, width), count in cases:
        train, held = sequence(height, width, count)
        model = CACHE / f"growth_{height}x{width}_{count}.npz"
        fit = measure([*KPCA, "fit", train, "-m", model, "-k", "3", "-q"], repeats=1 if count > 500 else REPEATS)
        encode = measure([*KPCA, "encode", held, "-m", model, "-o", CACHE / "g.npy"])
        decode = measure([*KPCA, "decode", CACHE / "g.npy", "-m", model, "-o", CACHE / "g.png"])
        table.append(
            {
                "axis": axis,
                "n": count - 1,
                "d": height * width,
                "size": f"{height}x{width}",
                "fit": fit,
                "encode": encode,
                "decode": decode,
            }
        )
    print("\n== 5. growth: time (s) and peak RSS (MB)")
    print(f"{'n':>6}{'frame':>11}{'fit s':>9}{'fit MB':>9}{'enc s':>8}{'enc MB':>8}{'dec s':>8}{'dec MB':>8}")
    for entry in table:
        print(
            f"{entry['n']:>6}{entry['size']:>11}{entry['fit']['seconds']:>9.2f}{entry['fit']['peak_mb']:>9.0f}"
            f"{entry['encode']['seconds']:>8.2f}{entry['encode']['peak_mb']:>8.0f}"
            f"{entry['decode']['seconds']:>8.2f}{entry['decode']['peak_mb']:>8.0f}"
        )
    exponents = {}
    for axis, key in (("n", "n"), ("d", "d")):
        chosen = [e for e in table if e["axis"] == axis]
        x = np.log([e[key] for e in chosen])
        for stage in ("fit", "encode", "decode"):
            exponents[f"{stage} vs {axis}"] = float(np.polyfit(x, np.log([e[stage]["seconds"] for e in chosen]), 1)[0])
    print("fitted exponents (time ∝ size^e): " + ", ".join(f"{k} {v:.2f}" for k, v in exponents.items()))
    big = next(e for e in table if e["axis"] == "n" and e["n"] == max(GROWTH_N))
    print(f"peak RSS of fit at n = {big['n']}: {big['fit']['peak_mb']:.0f} MB (target <= 1500 MB)")
    results["growth"] = {"table": table, "exponents": exponents}
    try:
        plot_growth(table, exponents)
    except ImportError:
        print("(the growth plot needs matplotlib: pip install -e '.[bench]')")


def bench_video(results: dict) -> None:
    """Fit from an mp4 against PyAV decoding it to grey; the model's size against the raw
    frames and against the same frames as PNG files."""
    import io

    from kpcacli.io.video import grey_frames

    clip = video_clip()
    model = CACHE / "video.npz"
    fit, decode = measure_alternating([[*KPCA, "fit", clip, "-m", model, "-q"], [*REFERENCE, "grey", clip]])
    frames = list(grey_frames(str(clip)))
    raw = sum(frame.nbytes for frame in frames)
    png = 0
    for frame in frames:
        buffer = io.BytesIO()
        Image.fromarray(frame).save(buffer, format="PNG")
        png += buffer.tell()
    size = model.stat().st_size
    codecs = compression_table(frames)
    header(f"fit from an mp4: {len(frames)} frames of 1280 x 720 (a panned photograph, H.264 crf 20)")
    store_rows(fit, decode, "PyAV grey")
    row("model size / raw frames", f"{size / raw:.1%}", f"{png / raw:.0%} (PNG files)", "", "<= 60%")
    results["video"] = {
        "kpca": fit,
        "pyav_grey": decode,
        "model_bytes": size,
        "raw_bytes": raw,
        "png_bytes": png,
        "codecs": codecs,
    }


def bench_decode(results: dict) -> None:
    """Decoding to video against decoding the source: every code of a clip decoded to .mkv
    (lossless FFV1, the default solver) against PyAV decoding the clip to grey, on the real
    mbt-cube clip and the 720p stand-in, alternating; and 10 codes (its odd frames 1 to 19)
    decoded by a model of the 720p stand-in's 132 frames against one of its first 22 (what a
    decode costs as the model grows)."""
    from benchmarks.real import real_clip

    header("decoding codes to video against PyAV decoding the source to grey", ("kpca", "reference", "ratio"))
    figures = {}
    for name, clip in (
        ("real mbt-cube, 218 of 640 x 480", real_clip("mbt-cube")),
        ("720p stand-in, 132", video_clip()),
    ):
        model, codes = CACHE / "decode.npz", CACHE / "decode-codes.npy"
        subprocess.run([*KPCA, "fit", clip, "-m", model, "-q", "--force"], check=True, capture_output=True)
        subprocess.run(
            [*KPCA, "encode", clip, "-m", model, "-o", codes, "-q", "--force"], check=True, capture_output=True
        )
        ours, theirs = measure_alternating(
            [
                [*KPCA, "decode", codes, "-m", model, "-o", CACHE / "decode.mkv", "-q", "--force"],
                [*REFERENCE, "grey", clip],
            ]
        )
        ratio = theirs["seconds"] / ours["seconds"]
        row(name, f"{ours['seconds']:.2f} s", f"{theirs['seconds']:.2f} s", f"{ratio:.2f}x", ">= 0.25x")
        figures[name] = {"kpca": ours, "pyav_grey": theirs, "ratio": ratio}
    clip = video_clip()
    ten = CACHE / "decode-ten.npy"
    subprocess.run(
        [*KPCA, "encode", clip, "-m", CACHE / "decode.npz", "--frames", "1:21:2", "-o", ten, "-q", "--force"],
        check=True,
    )
    small, small_codes = CACHE / "decode-22.npz", CACHE / "decode-ten-22.npy"
    subprocess.run(
        [*KPCA, "fit", clip, "--frames", ":22", "-m", small, "-q", "--force"], check=True, capture_output=True
    )
    subprocess.run(
        [*KPCA, "encode", clip, "-m", small, "--frames", "1:21:2", "-o", small_codes, "-q", "--force"], check=True
    )
    large_decode, small_decode = measure_alternating(
        [
            [*KPCA, "decode", ten, "-m", CACHE / "decode.npz", "-o", CACHE / "ten.mkv", "-q", "--force"],
            [*KPCA, "decode", small_codes, "-m", small, "-o", CACHE / "ten-22.mkv", "-q", "--force"],
        ]
    )
    growth = large_decode["seconds"] / small_decode["seconds"]
    row(
        "10 codes, 132 against 22 frames",
        f"{large_decode['seconds']:.2f} s",
        f"{small_decode['seconds']:.2f} s",
        f"{growth:.2f}x",
        "<= 1.3x",
    )
    figures["ten codes"] = {"model_132": large_decode, "model_22": small_decode, "ratio": growth}
    results["decode"] = figures


CHOICE_RUNS = 5


def bench_choice(results: dict) -> None:
    """The default solver's measurement (kpcacli/preimage/measurement.py) against the fit that makes
    it: its own time, in this process on the saved model with its frames in memory (the fit
    measures on its memory-mapped training store, beside the store's coding, so that its cost
    to the fit is at most this), median of five, against the fit's wall time, median of three,
    on the megapixel hand, the real mbt-cube clip and the 720p stand-in."""
    import dataclasses

    from benchmarks.real import real_clip
    from kpcacli.modelfile import load
    from kpcacli.preimage.measurement import measure_solvers
    from kpcacli.workflows.choicesummary import choice_summary, denoising_summary

    cases = {
        "69 frames of 1080 x 1920 (hand)": (sequence(1080, 1920, 70)[0], ["-k", "3"]),
        "real mbt-cube, 218 of 640 x 480": (real_clip("mbt-cube"), ["-k", "8"]),
        "720p stand-in, 132 of 1280 x 720": (video_clip(), []),
    }
    header("the default solver's choice against the fit that measures it", ("choice", "fit", "share"))
    figures = {}
    for name, (source, options) in cases.items():
        model = CACHE / "choice.npz"
        fit = measure([*KPCA, "fit", source, "-m", model, "-q", "--force", *options])
        state = load(model)
        state = dataclasses.replace(state, frames=np.asarray(state.frames))  # as the fit's store
        seconds = []
        for _ in range(CHOICE_RUNS):
            start = time.perf_counter()
            choice = measure_solvers(state)
            seconds.append(time.perf_counter() - start)
        share = float(np.median(seconds)) / fit["seconds"]
        row(name, f"{np.median(seconds):.2f} s", f"{fit['seconds']:.2f} s", f"{share:.1%}", "<= 20%")
        print(f"{'':<30}{choice_summary(choice)}")
        print(f"{'':<30}denoiser {denoising_summary(choice)}")
        figures[name] = {"choice_seconds": seconds, "fit": fit, "share": share, "choice": choice.as_attributes()}
    results["choice"] = figures


def bench_video_output(results: dict) -> None:
    """Decoded frames written as video by kpca (each container's default) against a general
    writer (imageio's PyAV plugin, grey as RGB, its default quality: kpca's writer before it
    had its own), read back and scored against the exact frames: the 250 frames of a grainy
    640 x 272 clip decoded from a model of its even frames at k = 8."""
    import imageio.v3 as iio

    from kpcacli.io.outputs import write_video
    from kpcacli.io.sources import iter_frames
    from kpcacli.io.videowriter import VideoSettings
    from kpcacli.numerics.metrics import psnr

    clip = video_clip(250, 272, 640, 250)
    work = Path(tempfile.mkdtemp(prefix="kpca-video-output-"))
    model, codes = work / "model.npz", work / "codes.npy"
    subprocess.run([*KPCA, "fit", clip, "--frames", "::2", "-k", "8", "-m", model, "-q"], check=True)
    subprocess.run([*KPCA, "encode", clip, "-m", model, "-o", codes, "-q"], check=True)
    subprocess.run([*KPCA, "decode", codes, "-m", model, "-o", f"{work}/png/"], check=True)
    frames = [frame.pixels for frame in iter_frames([work / "png"])]

    def scored(path: Path, seconds: float) -> dict:
        back = [frame.pixels for frame in iter_frames([path])]
        scores = [min(psnr(a, b), 99.0) for a, b in zip(frames, back)]
        return {
            "bytes": path.stat().st_size,
            "seconds": seconds,
            "mean_psnr": float(np.mean(scores)),
            "min_psnr": float(np.min(scores)),
            "frames": len(back),
        }

    def timed(write, path: Path) -> dict:
        start = time.perf_counter()
        write(path)
        return scored(path, time.perf_counter() - start)

    general_codecs = {".mp4": "libx264", ".webm": "libvpx-vp9", ".mkv": "libx264", ".avi": "mpeg4"}

    def summary(figures: dict, seconds: bool = False) -> str:
        text = f"{figures['min_psnr']:.1f}/{figures['mean_psnr']:.1f} dB {figures['bytes'] / 2**20:.1f} MiB"
        return text + (f" {figures['seconds']:.1f} s" if seconds else "")

    def general(path: Path) -> None:
        if path.suffix == ".gif":
            iio.imwrite(path, np.stack(frames), extension=".gif", duration=1000.0 / 30, loop=0)
            return
        with iio.imopen(path, "w", plugin="pyav") as video:
            video.init_video_stream(general_codecs[path.suffix], fps=30)
            for frame in frames:
                video.write_frame(np.repeat(frame[..., None], 3, axis=-1))

    header(f"video output: {len(frames)} decoded frames of 640 x 272, read back against the PNG decode")
    print("  each: worst frame's PSNR, mean PSNR, size, seconds to write (99 dB: identical)")
    measured = {}
    for suffix in (".mp4", ".webm", ".mkv", ".avi", ".gif"):
        ours = timed(lambda path: write_video(iter(frames), str(path), VideoSettings(fps=30.0)), work / f"kpca{suffix}")
        theirs = timed(general, work / f"general{suffix}")
        measured[suffix] = {"kpca": ours, "general": theirs}
        row(suffix, summary(ours, True), summary(theirs), "", ">= 45 dB")
    smaller = timed(
        lambda path: write_video(iter(frames), str(path), VideoSettings(fps=30.0, crf=18)), work / "crf18.mp4"
    )
    measured[".mp4 --crf 18"] = {"kpca": smaller}
    row(".mp4 --crf 18", summary(smaller, True), "", "", "")
    results["video_output"] = measured


def compression_table(frames: list) -> dict:
    """Lossless codecs for the model's frames, on these frames, one core: the share of the raw
    bytes kept and the time to compress and decompress a frame (the choice in kpcacli.modelfile.zarrformat)."""
    import numcodecs

    numcodecs.blosc.use_threads = False
    delta = numcodecs.Delta(dtype="|u1")
    from kpcacli.modelfile.zarrlayout import BLOSC as blosc

    candidates = {
        "zstd 1": (False, numcodecs.Zstd(level=1)),
        "delta, zstd 1": (True, numcodecs.Zstd(level=1)),
        "delta, zstd 3": (True, numcodecs.Zstd(level=3)),
        "delta, Blosc zstd 1 bitshuffle": (True, numcodecs.Blosc(shuffle=numcodecs.Blosc.BITSHUFFLE, **blosc)),
        "delta, Blosc lz4 bitshuffle": (
            True,
            numcodecs.Blosc(cname="lz4", clevel=1, shuffle=numcodecs.Blosc.BITSHUFFLE),
        ),
    }
    raw = sum(frame.nbytes for frame in frames)
    table = {}
    print(f"\n   {'frames codec':<34}{'raw kept':>10}{'compress':>14}{'decompress':>14}")
    for name, (delta_coded, codec) in candidates.items():
        started = time.perf_counter()
        chunks = [codec.encode(delta.encode(f.ravel()) if delta_coded else f.ravel()) for f in frames]
        compress = (time.perf_counter() - started) / len(frames)
        started = time.perf_counter()
        for chunk in chunks:
            data = codec.decode(chunk)
            if delta_coded:
                delta.decode(data)
        decompress = (time.perf_counter() - started) / len(frames)
        kept = sum(len(chunk) for chunk in chunks) / raw
        table[name] = {"kept": kept, "compress_ms": compress * 1e3, "decompress_ms": decompress * 1e3}
        print(f"   {name:<34}{kept:>10.0%}{compress * 1e3:>11.1f} ms{decompress * 1e3:>11.1f} ms")
    return table


def bench_pipeline(results: dict) -> None:
    """`kpca encode | kpca decode` on one 1080 x 1920 frame against the two commands run one
    after the other through a codes file: two processes at once must not fight."""
    train, held_out = sequence(1080, 1920, 70)
    model = CACHE / "pipeline.npz"
    if not model.exists():
        subprocess.run([*KPCA, "fit", train, "-m", model, "-k", "3", "-q"], check=True)
    kpca = " ".join(map(str, KPCA))
    codes, out = CACHE / "pipeline-codes.txt", CACHE / "pipeline-out.png"
    piped = f"set -o pipefail; {kpca} encode {held_out} -m {model} -q | {kpca} decode - -m {model} -o {out}"
    sequential = f"{kpca} encode {held_out} -m {model} -q -o {codes} && {kpca} decode {codes} -m {model} -o {out}"
    pipe = measure(["bash", "-c", piped])
    one_by_one = measure(["bash", "-c", sequential])
    header("encode | decode, one frame of 1080 x 1920")
    row(
        "wall time",
        f"{pipe['seconds']:.2f} s",
        f"{one_by_one['seconds']:.2f} s (sequential)",
        f"{pipe['seconds'] / one_by_one['seconds']:.2f}x",
        "<= 1x",
    )
    results["pipeline"] = {"piped": pipe, "sequential": one_by_one}


LONG_FRAMES, LONG_HEIGHT, LONG_WIDTH, LONG_LANDMARKS = 5000, 360, 640, 500
HOUR_FRAMES, HOUR_PIXELS = 108_000, 1080 * 1920  # one hour of 1080p at 30 frames per second


def bench_long(results: dict) -> None:
    """A long clip, fitted with landmarks and coded in-process and on a local cluster of two
    worker processes: throughput per phase, peak memory, equality, and an extrapolation."""
    from distributed import Client, LocalCluster

    from kpcacli.engines.cluster import Cluster
    from kpcacli.engines.engine import training_store
    from kpcacli.estimators.batches import encode_rows
    from kpcacli.estimators.estimator import FrameModel
    from kpcacli.io.request import FrameRequest
    from kpcacli.modelfile import save as save_state
    from kpcacli.numerics.landmarks import uniform_landmarks

    clip = video_clip(LONG_FRAMES, LONG_HEIGHT, LONG_WIDTH, period=1000)
    n, m = LONG_FRAMES, LONG_LANDMARKS
    # Started first: Linux counts a forked process's inherited pages in its peak RSS, so
    # workers forked from this process after the in-process phases would report its size.
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0")
    options = ["--landmarks", m, "-k", "8", "-q"]
    local_model, local_codes = CACHE / "long-local.npz", CACHE / "long-local.npy"
    (local_run,) = runs([*KPCA, "fit", clip, "-m", local_model, "--codes", local_codes, *options], 1)
    # The same phases in this process, timed one by one (two threads, as the command uses).
    phases = {}
    clock = time.perf_counter()
    request = FrameRequest.of([str(clip)])
    with training_store(request, CACHE) as store:
        phases["loading"] = time.perf_counter() - clock
        chosen = uniform_landmarks(n, m)
        clock = time.perf_counter()
        model = FrameModel(n_components=8).fit(np.asarray(store.frames[chosen]), frame_shape=store.frame_shape)
        phases["gram"] = time.perf_counter() - clock
        clock = time.perf_counter()
        encode_rows(model.state_, store.frames)
        phases["encoding"] = time.perf_counter() - clock
    with cluster:
        address = cluster.scheduler_address
        cluster_model, cluster_codes = CACHE / "long-cluster.npz", CACHE / "long-cluster.npy"
        (cluster_run,) = runs(
            [*KPCA, "fit", clip, "-m", cluster_model, "--codes", cluster_codes, *options, "--scheduler", address], 1
        )
        # The same phases on the cluster: loading, gathering, the Gram and encoding timed by
        # the engine (Cluster.timings), the client's eigenproblem and saving here.
        with Cluster(address) as engine, engine.training(request, CACHE, landmarks=m) as training:
            gram = training.linear_gram()
            clock = time.perf_counter()
            fitted = FrameModel(n_components=8).fit(
                training.store.frames, frame_shape=training.store.frame_shape, gram=gram
            )
            fitting = time.perf_counter() - clock
            training.codes_of_all(fitted.state_)
            clock = time.perf_counter()
            save_state(fitted.state_, CACHE / "long-phases.npz", compressor=training.compressor)
            saving = time.perf_counter() - clock
            timings = {**engine.timings, "model": engine.timings["gathering"] + fitting, "saving": saving}
        with Client(address) as client:
            worker_peaks = list(client.run(_peak_rss_mb).values())
    same = cluster_model.read_bytes() == local_model.read_bytes() and np.array_equal(
        np.load(cluster_codes), np.load(local_codes)
    )
    header(f"long clip: {n} frames of {LONG_WIDTH} x {LONG_HEIGHT} (H.264), fit --landmarks {m} --codes")
    row("fit, in-process", f"{local_run['seconds']:.1f} s", f"{local_run['peak_mb']:.0f} MB peak", "", "")
    row(
        "fit, 2 worker processes",
        f"{cluster_run['seconds']:.1f} s",
        f"{local_run['seconds']:.1f} s in-process",
        f"{local_run['seconds'] / cluster_run['seconds']:.2f}x faster",
        "",
    )
    row("cluster model and codes", "identical" if same else "DIFFERENT", "in-process", "", "equal")
    row("peak memory per worker", f"{max(worker_peaks):.0f} MB", f"client {cluster_run['peak_mb']:.0f} MB", "", "")
    print(f"\n{'frames per second':<30}{'in-process':>14}{'2 workers':>24}")
    for phase, count in (("loading", n), ("gram", m), ("encoding", n)):
        print(f"{phase:<30}{count / phases[phase]:>14.0f}{count / timings[phase]:>24.0f}")
    print(f"{'(client: model + gather)':<30}{'':>14}{timings['model']:>22.1f} s")
    hour = extrapolate(timings, n, m, LONG_HEIGHT * LONG_WIDTH)
    print(f"\none hour of 1080p ({HOUR_FRAMES} frames), fit --landmarks {m} --codes, extrapolated:")
    for workers, seconds in hour.items():
        print(f"  {workers:>3} worker threads: {seconds / 3600:6.2f} h")
    results["long"] = {
        "frames": n,
        "landmarks": m,
        "size": [LONG_HEIGHT, LONG_WIDTH],
        "in_process": local_run,
        "cluster": cluster_run,
        "identical": bool(same),
        "worker_peak_mb": worker_peaks,
        "in_process_phases_s": phases,
        "cluster_phases_s": timings,
        "hour_1080p_seconds": hour,
    }


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def extrapolate(timings: dict, n: int, m: int, pixels: int) -> dict[int, float]:
    """Seconds for one hour of 1080p on 1, 8 and 64 worker threads, from the two-worker
    phases: loading and encoding scale with frames x pixels, the Gram of the m landmarks with
    pixels; all three divide among workers; the client's part (gathering the landmarks,
    the eigenproblem, writing the model) scales with pixels and does not."""
    scale = HOUR_PIXELS / pixels
    per_frame = 2 * (timings["loading"] + timings["encoding"]) / n  # one worker thread's seconds
    gram = 2 * timings["gram"]
    client = timings["model"] + timings["saving"]
    return {
        workers: (HOUR_FRAMES * per_frame * scale + gram * scale) / workers + client * scale for workers in (1, 8, 64)
    }


# -- what a model costs against the clip it describes ---------------------------------------------
def footage_clip(name: str, sequence: str, frames: int, width: int, height: int, crf: int = 23) -> Path:
    """A long H.264 clip made from the real sequence `sequence` (benchmarks/real.py): its frames
    forward, then backward, and so on to `frames`, resized to `width` x `height` (Lanczos), coded
    by x264 at `crf`, preset medium, a keyframe every 250 frames (x264's defaults, as a camera or
    ffmpeg writes a clip), yuv420p, 30 fps. Made once, in $KPCA_BENCH_DIR."""
    import av

    from benchmarks.real import real_sequences

    path = CACHE / f"{name}.mp4"
    if path.exists():
        return path
    folder = real_sequences([sequence]).get(sequence)
    if folder is None:
        raise SystemExit(f"no real sequence {sequence!r}: run `make bench-data` or set KPCA_REAL_DATA")
    names = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".pgm", ".png", ".jpg", ".ppm"))
    order = []
    while len(order) < frames:
        order += [*range(len(names)), *range(len(names) - 2, 0, -1)]
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"encoding {frames} frames of {width} x {height} from {sequence} into {path} ...", flush=True)
    with av.open(str(path), "w") as output:
        stream = output.add_stream("libx264", rate=30, options={"crf": str(crf), "preset": "medium"})
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        for number in order[:frames]:
            image = Image.open(names[number]).convert("RGB").resize((width, height), Image.Resampling.LANCZOS)
            picture = av.VideoFrame.from_image(image).reformat(format="yuv420p")
            for packet in stream.encode(picture):
                output.mux(packet)
        for packet in stream.encode():
            output.mux(packet)
    return path


def cost_clips() -> list[tuple[str, Path, str]]:
    """The clips a model's cost is measured on: ViSP's five sequences as H.264 clips (CRF 18, how
    benchmarks/real.py codes them), a 1080p clip of 300 frames made from mbt-cube and a 720p
    one of 600 made from mire-2, and the sample hand as its PNG files."""
    from benchmarks.real import real_clip, real_sequences

    clips = [(name, real_clip(name), "video") for name in real_sequences()]
    clips.append(("mbt-cube 1080p x 300", footage_clip("cost-1080p-300", "mbt-cube", 300, 1920, 1080), "video"))
    clips.append(("mire-2 720p x 600", footage_clip("cost-720p-600", "mire-2", 600, 1280, 720), "video"))
    clips.append(("sample hand PNGs", ROOT / "sample_data" / "hand", "images"))
    return clips


def source_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size


def bench_cost(results: dict) -> None:
    """The default fit (``kpca fit CLIP -m M -k 8 -q``) against decoding the same frames (PyAV
    to grey for a clip, Pillow for PNGs), the model's bytes against the clip's, and the fit's
    peak memory against the raw frames' bytes; for the long clips, decoding every training
    frame's codes to .mkv with the default model against one with the lossless store."""
    header("cost: the default fit against decoding its frames; the model against its clip")
    print(f"{'clip':<24}{'frames':>8}{'fit':>9}{'decode':>9}{'ratio':>7}{'clip':>11}{'model':>11}{'ratio':>7}"
          f"{'peak':>9}{'raw':>9}  store")  # fmt: skip
    table = {}
    for name, clip, kind in cost_clips():
        model = CACHE / f"cost-{name.replace(' ', '-')}.npz"
        fit = [*KPCA, "fit", clip, "-m", model, "-k", "8", "-q"]
        reference = [*REFERENCE, "grey" if kind == "video" else "read", clip]
        ours, decode = measure_alternating([fit, reference], repeats=3)
        info = json.loads(subprocess.run([*KPCA, "info", "-m", model, "--json"], capture_output=True, text=True,
                                         check=True).stdout)  # fmt: skip
        n, d = info["frames"], info["frame_size"]["width"] * info["frame_size"]["height"]
        clip_bytes, model_bytes, raw = source_bytes(clip), model.stat().st_size, n * d
        described = info.get("frame_store") or {}
        store = f"{described.get('source_codec', described.get('codec', 'blosc'))}: {described.get('why', '')}"
        figures = {
            "frames": n,
            "fit_s": ours["seconds"],
            "decode_s": decode["seconds"],
            "fit_ratio": ours["seconds"] / decode["seconds"],
            "clip_bytes": clip_bytes,
            "model_bytes": model_bytes,
            "size_ratio": model_bytes / clip_bytes,
            "peak_mb": ours["peak_mb"],
            "raw_mb": raw / 2**20,
            "store": store,
        }
        if n >= 300:
            figures["decode_mkv"] = _decode_every_code(clip, model)
        table[name] = figures
        print(
            f"{name:<24}{n:>8}{ours['seconds']:>8.2f}s{decode['seconds']:>8.2f}s{figures['fit_ratio']:>6.1f}x"
            f"{clip_bytes / 2**20:>9.2f}Mi{model_bytes / 2**20:>9.2f}Mi{figures['size_ratio']:>6.2f}x"
            f"{ours['peak_mb']:>7.0f}MB{raw / 2**20:>7.0f}Mi  {store[:60]}"
        )
        if "decode_mkv" in figures:
            mkv = figures["decode_mkv"]
            print(f"{'':<24}decoding every code to .mkv: {mkv['default_s']:.2f} s (default store), "
                  f"{mkv['lossless_s']:.2f} s (--store lossless)")  # fmt: skip
    print("targets: fit <= 2x decoding on the long clips; model <= 1.5x a clip of 1 MiB or more, <= 2x a smaller one;")
    print("         peak memory of the 1080p fit <= its raw frames; decoding to .mkv no slower than the lossless store")
    results["cost"] = table


def _decode_every_code(clip: Path, model: Path) -> dict:
    """Decoding every training frame's codes to .mkv: with the default model, and with one
    whose frames are in the lossless store (the store before source packets), side by side."""
    lossless = model.with_name(model.stem + "-lossless.npz")
    codes = model.with_name(model.stem + "-codes.npy")
    subprocess.run([*KPCA, "fit", clip, "-m", lossless, "-k", "8", "-q", "--store", "lossless"], check=True)
    subprocess.run([*KPCA, "encode", clip, "-m", model, "-o", codes, "-q", "--force"], check=True)
    outputs = [model.with_name(model.stem + f"-{kind}.mkv") for kind in ("default", "lossless")]
    commands = [
        [*KPCA, "decode", codes, "-m", used, "-o", out, "--force", "-q"]
        for used, out in zip((model, lossless), outputs)
    ]
    default, coded = measure_alternating(commands, repeats=3)
    return {"default_s": default["seconds"], "lossless_s": coded["seconds"]}


BENCHMARKS = {
    "cost": bench_cost,
    "fit": bench_fit,
    "real-fit": bench_real_fit,
    "video": bench_video,
    "video-output": bench_video_output,
    "choice": bench_choice,
    "decode": bench_decode,
    "load": bench_load,
    "sklearn": bench_sklearn,
    "gram": bench_gram,
    "codec": bench_codec,
    "growth": bench_growth,
    "pipeline": bench_pipeline,
    "long": bench_long,
}


def main(argv=None) -> int:
    run_benchmarks(BENCHMARKS, argv, "performance.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
