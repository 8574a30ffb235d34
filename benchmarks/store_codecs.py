"""Lossless frame stores measured on real camera footage: bytes against the raw frames and
seconds a frame to code and to decode, for the codecs a model could keep its training frames
in. Run: ``python benchmarks/store_codecs.py`` (needs ``make bench-data`` for the real
sequences, and imagecodecs and zstandard for JPEG XL and delta + zstd, the bench extra).

Every candidate codes the training frames (the even frames of each sequence, as ``kpca fit
--frames ::2`` keeps them; as recorded, and as decoded from the sequence made an H.264 clip,
which is how footage reaches most users; then every frame of the paper's megapixel hand, the
stand-in) in independent groups of ``GROUP`` frames, as the model's store must (a decode reads
a frame's group alone), on one thread, and is checked to decode bit for bit.
Times are the median of three passes, process CPU time, so that a busy machine changes them
little.
"""

from __future__ import annotations

import json
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import sequence  # noqa: E402
from benchmarks.real import real_clip, real_sequences  # noqa: E402
from kpcacli.io.sources import iter_frames  # noqa: E402
from kpcacli.modelfile.framecodec import GROUP_FRAMES, LOSSLESS_OPTIONS  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "store_codecs.json"
GROUP = GROUP_FRAMES


def x264(preset: str, params: str | None = None):
    """x264's lossless mode (QP 0) at `preset` (with `params`, x264's own option string),
    grey as 4:0:0, a group a stream."""
    import av

    def encode(frames: np.ndarray) -> bytes:
        context = av.CodecContext.create("libx264", "w")
        context.height, context.width = frames.shape[1:3]
        context.pix_fmt, context.time_base, context.thread_count = "gray", Fraction(1, 25), 1
        context.options = {"qp": "0", "preset": preset, **({"x264-params": params} if params else {})}
        packets = []
        for index, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="gray")
            frame.pts = index
            packets += [bytes(p) for p in context.encode(frame)]
        packets += [bytes(p) for p in context.encode(None)]
        return b"".join(packets)

    def decode(data: bytes, shape) -> np.ndarray:
        context = av.CodecContext.create("h264", "r")
        context.thread_count = 1
        frames = [f for p in context.parse(data) + context.parse(None) for f in context.decode(p)]
        frames += context.decode(None)
        out = []
        for frame in frames:
            plane = frame.planes[0]
            rows = np.frombuffer(plane, dtype=np.uint8).reshape(frame.height, plane.line_size)
            out.append(rows[:, : frame.width])
        return np.stack(out)

    return encode, decode


def ffv1():
    """FFV1 version 3 (intra only, context-adaptive range coder), a frame at a time."""
    import av

    def encode(frames: np.ndarray) -> bytes:
        context = av.CodecContext.create("ffv1", "w")
        context.height, context.width = frames.shape[1:3]
        context.pix_fmt, context.time_base, context.thread_count = "gray", Fraction(1, 25), 1
        context.options = {"level": "3", "coder": "range_def", "context": "1", "g": "1"}
        parts = []
        for index, pixels in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(pixels), format="gray")
            frame.pts = index
            packets = [bytes(p) for p in context.encode(frame)]
            parts.append(b"".join(packets))
        tail = b"".join(bytes(p) for p in context.encode(None))
        parts[-1] += tail
        header = bytes(context.extradata or b"")
        return _framed([header, *parts])

    def decode(data: bytes, shape) -> np.ndarray:
        header, *parts = _unframed(data)
        context = av.CodecContext.create("ffv1", "r")
        context.extradata = header
        context.height, context.width, context.pix_fmt = shape[1], shape[2], "gray"
        context.thread_count = 1
        out = []
        for part in parts:
            for frame in context.decode(av.Packet(part)):
                out.append(frame.to_ndarray())
        return np.stack(out)

    return encode, decode


def jpegxl(effort: int):
    import imagecodecs

    def encode(frames: np.ndarray) -> bytes:
        return _framed([imagecodecs.jpegxl_encode(frame, lossless=True, effort=effort) for frame in frames])

    def decode(data: bytes, shape) -> np.ndarray:
        return np.stack([imagecodecs.jpegxl_decode(part) for part in _unframed(data)])

    return encode, decode


def delta_zstd(level: int):
    """The group's first frame, then each frame's difference from the one before (mod 256),
    compressed together by zstd."""
    import zstandard

    def encode(frames: np.ndarray) -> bytes:
        deltas = np.diff(frames, axis=0, prepend=np.zeros_like(frames[:1]))
        return zstandard.ZstdCompressor(level=level).compress(deltas.tobytes())

    def decode(data: bytes, shape) -> np.ndarray:
        deltas = np.frombuffer(zstandard.ZstdDecompressor().decompress(data), dtype=np.uint8).reshape(shape)
        return np.cumsum(deltas, axis=0, dtype=np.uint8)

    return encode, decode


def png():
    import io

    from PIL import Image

    def encode(frames: np.ndarray) -> bytes:
        parts = []
        for frame in frames:
            buffer = io.BytesIO()
            Image.fromarray(frame).save(buffer, format="PNG", compress_level=6)
            parts.append(buffer.getvalue())
        return _framed(parts)

    def decode(data: bytes, shape) -> np.ndarray:
        return np.stack([np.asarray(Image.open(io.BytesIO(part))) for part in _unframed(data)])

    return encode, decode


def _framed(parts: list[bytes]) -> bytes:
    lengths = np.array([len(part) for part in parts], dtype=np.uint32)
    return len(parts).to_bytes(4, "little") + lengths.tobytes() + b"".join(parts)


def _unframed(data: bytes) -> list[bytes]:
    count = int.from_bytes(data[:4], "little")
    lengths = np.frombuffer(data[4 : 4 + 4 * count], dtype=np.uint32)
    parts, offset = [], 4 + 4 * count
    for length in lengths:
        parts.append(data[offset : offset + int(length)])
        offset += int(length)
    return parts


CANDIDATES = {
    "x264 lossless, ultrafast (CAVLC, whole-pixel motion)": lambda: x264("ultrafast"),
    "x264 lossless, ultrafast + CABAC + subme 1, groups of 16 (kpca's store before)": lambda: (
        *x264("ultrafast", "cabac=1:subme=1"),
        16,
    ),
    "x264 lossless, ultrafast + CABAC + subme 1": lambda: x264("ultrafast", "cabac=1:subme=1"),
    "x264 lossless, ultrafast + CABAC + subme 2 + 2 references (kpca's store)": lambda: x264(
        LOSSLESS_OPTIONS["preset"], LOSSLESS_OPTIONS["x264-params"]
    ),
    "x264 lossless, superfast": lambda: x264("superfast"),
    "x264 lossless, veryfast": lambda: x264("veryfast"),
    "x264 lossless, medium": lambda: x264("medium"),
    "x264 lossless, slower": lambda: x264("slower"),
    "FFV1 (intra)": ffv1,
    "JPEG XL lossless, effort 1": lambda: jpegxl(1),
    "JPEG XL lossless, effort 2": lambda: jpegxl(2),
    "JPEG XL lossless, effort 3": lambda: jpegxl(3),
    "delta + zstd 3": lambda: delta_zstd(3),
    "delta + zstd 9": lambda: delta_zstd(9),
    "PNG (zlib 6)": png,
}


def measure(frames: np.ndarray, encode, decode, group: int = GROUP) -> dict:
    groups = [frames[first : first + group] for first in range(0, len(frames), group)]
    coding, decoding, size = [], [], 0
    for _ in range(3):
        started = time.process_time()
        streams = [encode(group) for group in groups]
        coding.append(time.process_time() - started)
        started = time.process_time()
        back = [decode(stream, group.shape) for stream, group in zip(streams, groups)]
        decoding.append(time.process_time() - started)
        size = sum(len(stream) for stream in streams)
        if not all(np.array_equal(a, b) for a, b in zip(back, groups)):
            raise AssertionError("not lossless")
    n = len(frames)
    return {
        "of_raw": size / frames.nbytes,
        "code_ms_per_frame": 1000 * float(np.median(coding)) / n,
        "decode_ms_per_frame": 1000 * float(np.median(decoding)) / n,
    }


def main() -> None:
    sequences = real_sequences()
    if not sequences:
        sys.exit("no real sequences: run `make bench-data` (or set KPCA_REAL_DATA)")
    results = {}
    inputs = {f"{name}, as recorded (PGM)": folder for name, folder in sequences.items()}
    inputs.update({f"{name}, from its H.264 clip (CRF 18)": real_clip(name) for name in sequences})
    # The stand-in: the paper's megapixel hand (every frame: it is kpca fit's benchmark), second.
    inputs["hand, 1920 x 1080 (stand-in)"] = sequence(1080, 1920, 70)[0]
    for name, source in inputs.items():
        step = 1 if "stand-in" in name else 2
        frames = np.stack([frame.pixels for frame in iter_frames([str(source)])])[::step]
        print(f"{name}: {len(frames)} {'' if step == 1 else 'even '}frames of {frames.shape[2]} x {frames.shape[1]}")
        results[name] = {}
        for label, make in CANDIDATES.items():
            try:
                encode, decode, *group = make()  # a group size of its own, or the store's
            except ImportError as error:
                print(f"  {label:<40} skipped ({error.name} missing)")
                continue
            figures = measure(frames, encode, decode, *group)
            results[name][label] = figures
            print(
                f"  {label:<40} {figures['of_raw']:6.1%} of raw   code {figures['code_ms_per_frame']:6.1f} ms"
                f"   decode {figures['decode_ms_per_frame']:6.1f} ms a frame"
            )
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"-> {RESULTS}")


if __name__ == "__main__":
    main()
