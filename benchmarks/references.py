"""Reference workloads the benchmarks compare kpca with, each run as its own process.

python -m benchmarks.references read FOLDER          # decode the PNGs into arrays, nothing else
python -m benchmarks.references pass MODEL FRAME     # read one frame + one pass over the store
python -m benchmarks.references neighbours MODEL OUT # read two stored frames, write a PNG
python -m benchmarks.references sklearn FOLDER       # scikit-learn KernelPCA with the inverse
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
    from kpcacli.modelfile import _frames

    frames = _frames(Path(model))
    vector = np.asarray(Image.open(frame), dtype=np.float64).ravel()
    step = max(1, (4 * 2**20) // (8 * frames.shape[1]))
    for start in range(0, frames.shape[0], step):
        np.asarray(frames[start : start + step], dtype=np.float64) @ vector


def neighbours(model: str, out: str) -> None:
    from kpcacli.modelfile import _frames

    frames = _frames(Path(model))
    rows = np.asarray(frames[[0, 1]], dtype=np.float64)
    height = int(np.sqrt(frames.shape[1] * 9 / 16))
    image = np.clip(np.rint(0.5 * rows[0] + 0.5 * rows[1]), 0, 255).astype(np.uint8)
    Image.fromarray(image.reshape(height, -1)).save(out)


def sklearn_fit(folder: str) -> None:
    from sklearn.decomposition import KernelPCA

    frames = np.stack([np.asarray(Image.open(p), dtype=np.float32).ravel() for p in sorted(Path(folder).glob("*.png"))])
    KernelPCA(n_components=3, kernel="rbf", fit_inverse_transform=True).fit(frames)


if __name__ == "__main__":
    name, *args = sys.argv[1:]
    {"read": read, "pass": one_pass, "neighbours": neighbours, "sklearn": sklearn_fit}[name](*args)
