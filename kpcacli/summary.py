"""What ``kpca info`` reports about a model file: as text for people and as JSON for scripts."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .checks import frame_size
from .modelfile import FORMAT_VERSION, load

LEADING_EIGENVALUES = 10  # shown in the text; JSON lists them all


@dataclass
class ModelSummary:
    """The facts of one model file."""

    model: str
    file_size: int
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
            file_size=Path(path).stat().st_size,
            format_version=FORMAT_VERSION,
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
            ("model", f"{self.model} ({self.file_size / 2**20:.1f} MiB, format {self.format_version})"),
            ("frames", f"{self.frames} of {frame_size(self.frame_shape)} ({self.frame_dtype})"),
            (
                "kernel",
                self.kernel + (f" ({params})" if params else "") + (", centred" if self.centred else ", uncentred"),
            ),
            ("k", f"{self.k} ({100 * self.explained_variance:.1f}% of the variance)"),
            ("eigenvalues", leading + more),
        ]
        return "\n".join(f"{label:<12} {value}" for label, value in lines)
