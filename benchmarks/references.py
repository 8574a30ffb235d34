"""Reference workloads the benchmarks compare kpca with, each run as its own process.

python -m benchmarks.references read FOLDER          # decode the PNGs into arrays, nothing else
python -m benchmarks.references pass MODEL FRAME     # read one frame + one pass over the store
python -m benchmarks.references neighbours MODEL OUT # read two stored frames, write a PNG
python -m benchmarks.references sklearn FOLDER       # scikit-learn KernelPCA with the inverse
python -m benchmarks.references grey VIDEO           # PyAV: decode every frame to grey, nothing else
python -m benchmarks.references sklearn-video VIDEO K  # scikit-learn KernelPCA with the inverse, on a video
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from PIL import Image


def read(folder: str) -> None:
    for path in sorted(Path(folder).glob("*.png")):
        np.asarray(Image.open(path))


def one_pass(model: str, frame: str) -> None:
    from kpcacli.modelfile import load

    frames = load(model).frames  # format 2: decompressed as the rows are read
    vector = np.asarray(Image.open(frame), dtype=np.float64).ravel()
    step = max(1, (4 * 2**20) // (8 * frames.shape[1]))
    for start in range(0, frames.shape[0], step):
        np.asarray(frames[start : start + step], dtype=np.float64) @ vector


def neighbours(model: str, out: str) -> None:
    from kpcacli.modelfile import load

    frames = load(model).frames
    rows = np.stack([np.asarray(frames[0], dtype=np.float64), np.asarray(frames[1], dtype=np.float64)])
    height = int(np.sqrt(frames.shape[1] * 9 / 16))
    image = np.clip(np.rint(0.5 * rows[0] + 0.5 * rows[1]), 0, 255).astype(np.uint8)
    Image.fromarray(image.reshape(height, -1)).save(out)


def every_row(model: str, out: str) -> None:
    """What the default (distance) decoder cannot do without: every stored frame read, summed
    in float64, and the PNG written."""
    from kpcacli.modelfile import load

    frames = load(model).frames
    total = np.zeros(frames.shape[1])
    for row in range(frames.shape[0]):
        total += np.asarray(frames[row], dtype=np.float64)
    height = int(np.sqrt(frames.shape[1] * 9 / 16))
    image = np.clip(np.rint(total / frames.shape[0]), 0, 255).astype(np.uint8)
    Image.fromarray(image.reshape(height, -1)).save(out)


def sklearn_fit(folder: str) -> None:
    from sklearn.decomposition import KernelPCA

    frames = np.stack([np.asarray(Image.open(p), dtype=np.float32).ravel() for p in sorted(Path(folder).glob("*.png"))])
    KernelPCA(n_components=3, kernel="rbf", fit_inverse_transform=True).fit(frames)


def sklearn_video(video: str, components: str = "8") -> None:
    """scikit-learn's KernelPCA with its learned inverse on a video's frames, decoded to grey
    with PyAV, as float32 rows."""
    import av
    from sklearn.decomposition import KernelPCA

    with av.open(video) as container:
        frames = np.stack([f.to_ndarray(format="gray").astype(np.float32).ravel() for f in container.decode(video=0)])
    KernelPCA(n_components=int(components), kernel="rbf", fit_inverse_transform=True).fit(frames)


def grey(video: str) -> None:
    """What a user of PyAV writes to get a video's frames in grey."""
    import av

    with av.open(video) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for frame in container.decode(stream):
            frame.to_ndarray(format="gray")


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    commands = {"read": read, "pass": one_pass, "neighbours": neighbours, "rows": every_row, "sklearn": sklearn_fit}
    {**commands, "grey": grey, "sklearn-video": sklearn_video}[name](*args)
