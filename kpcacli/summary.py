"""What ``kpca info`` reports about a model file: as text for people and as JSON for scripts."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .checks import frame_size
from .modelfile import format_version, load
from .zarrmodel import stored_size

LEADING_EIGENVALUES = 10  # shown in the text; JSON lists them all


@dataclass
class ModelSummary:
    """The facts of one model file."""

    model: str
    file_size: int
    frames_raw_size: int
    format_version: int
    frames: int
    frame_shape: list[int]
    frame_dtype: str
    kernel: str
    kernel_params: dict
    centred: bool
    k: int
    explained_variance: float
    eigenvalues: list[float]

    @classmethod
    def of_file(cls, path: str | os.PathLike) -> ModelSummary:
        state = load(path)
        return cls(
            model=str(path),
            file_size=stored_size(path),
            frames_raw_size=int(np.prod(state.frames.shape)) * state.frames.dtype.itemsize,
            format_version=format_version(path),
            frames=state.n_samples,
            frame_shape=list(state.frame_shape),
            frame_dtype=str(state.frames.dtype),
            kernel=state.kernel.name,
            kernel_params=state.kernel.params(),
            centred=bool(state.centred),
            k=state.n_components,
            explained_variance=state.explained_variance_ratio,
            eigenvalues=[float(v) for v in state.eigenvalues],
        )

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def format_text(self) -> str:
        params = ", ".join(f"{key}={value:.6g}" for key, value in self.kernel_params.items())
        leading = " ".join(f"{value:.6g}" for value in self.eigenvalues[:LEADING_EIGENVALUES])
        more = f" ... ({len(self.eigenvalues)} in all)" if len(self.eigenvalues) > LEADING_EIGENVALUES else ""
        lines = [
            (
                "model",
                f"{self.model} ({human_size(self.file_size)}, {self.file_size / self.frames_raw_size:.0%} of "
                f"the frames' raw {human_size(self.frames_raw_size)}; format {self.format_version})",
            ),
            ("frames", f"{self.frames} of {frame_size(self.frame_shape)} ({self.frame_dtype})"),
            (
                "kernel",
                self.kernel + (f" ({params})" if params else "") + (", centred" if self.centred else ", uncentred"),
            ),
            ("k", f"{self.k} ({100 * self.explained_variance:.1f}% of the variance)"),
            ("eigenvalues", leading + more),
        ]
        return "\n".join(f"{label:<12} {value}" for label, value in lines)


def human_size(size: float) -> str:
    """``812 B``, ``1.5 KiB``, ``49.7 MiB``, ``2.1 GiB``: bytes for people."""
    unit = "B"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{size} B" if unit == "B" else f"{size:.1f} {unit}"
