"""What ``kpca info`` reports about a model file: as text for people and as JSON for scripts."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..io.provenance import Provenance
from ..modelfile import format_version, load
from ..modelfile.zarrformat import stored_size
from ..preimage import SolverChoice, solver_choice
from ..utils.checks import frame_size, percent
from .choicesummary import choice_summary, denoising_summary

LEADING_EIGENVALUES = 10  # shown in the text; JSON lists them all
CODE_BYTES = 8  # one float64 code


@dataclass
class ModelSummary:
    """The facts of one model file."""

    model: str
    file_size: int
    frames_raw_size: int
    format_version: int
    frames: int
    frame_size: dict
    frame_dtype: str
    kernel: str
    kernel_params: dict
    centred: bool
    k: int
    explained_variance: float
    eigenvalues: list[float]
    provenance: Provenance | None  # in JSON: frame_indices, selection, frame_rate
    sizes: Sizes
    frame_store: dict | None = None  # format 3's H.264 store: CRF, choice, PSNR
    axes: str | None = None  # the stored linear-PCA axes (describe_axes), None when none are stored
    solver_choice: dict | None = None  # the default pre-image solver and its scores (SolverChoice)
    parameters: dict | None = None  # names, ranges, the map and its leave-one-out errors (describe_parameters)

    @classmethod
    def of_file(cls, path: str | os.PathLike) -> ModelSummary:
        state = load(path)
        provenance = state.provenance
        file_size = stored_size(path)
        return cls(
            model=str(path),
            file_size=file_size,
            frames_raw_size=int(np.prod(state.frames.shape)) * state.frames.dtype.itemsize,
            format_version=format_version(path),
            frames=state.n_samples,
            frame_size=size_dict(state.frame_shape),
            frame_dtype=str(state.frames.dtype),
            kernel=state.kernel.name,
            kernel_params=state.kernel.hyperparameters(),
            centred=bool(state.centred),
            k=state.n_components,
            explained_variance=state.explained_variance_ratio,
            eigenvalues=[float(v) for v in state.eigenvalues],
            provenance=provenance,
            sizes=Sizes.of(file_size, state.n_samples, state.n_components, provenance),
            frame_store=state.frame_store,
            axes=describe_axes(state.linear_axes),
            solver_choice=solver_choice(state).as_attributes(),
            parameters=describe_parameters(state.parameters),
        )

    def as_dict(self) -> dict:
        facts = dict(self.__dict__)
        provenance = facts.pop("provenance")
        del facts["sizes"]  # after the provenance's keys, as written before
        facts["frame_indices"] = list(provenance.frame_indices) if provenance is not None else None
        facts["selection"] = provenance.selection if provenance is not None else None
        facts["frame_rate"] = provenance.frame_rate if provenance is not None else None
        facts["sizes"] = self.sizes.as_dict()
        return facts

    def format_text(self) -> str:
        params = ", ".join(f"{key}={value:.6g}" for key, value in self.kernel_params.items())
        leading = " ".join(f"{value:.6g}" for value in self.eigenvalues[:LEADING_EIGENVALUES])
        count = len(self.eigenvalues)
        whole = "in all" if count == self.frames else f"leading, of {self.frames}"  # large n: Lanczos
        more = f" ... ({count} {whole})" if count > LEADING_EIGENVALUES else ""
        size = frame_size(shape_of(self.frame_size))
        lines = [
            (
                "model",
                f"{self.model} ({human_size(self.file_size)}, {self.file_size / self.frames_raw_size:.0%} of "
                f"the frames' raw {human_size(self.frames_raw_size)}; format {self.format_version})",
            ),
            ("frames", f"{self.frames} of {size} ({self.frame_dtype})"),
        ]
        if self.provenance is not None:
            lines.append(("source", self.provenance.describe_frames()))
            if self.provenance.frame_rate is not None:
                lines.append(("frame rate", f"{self.provenance.frame_rate:.6g} fps"))
        lines += [
            (
                "kernel",
                self.kernel + (f" ({params})" if params else "") + (", centred" if self.centred else ", uncentred"),
            ),
            ("k", f"{self.k} ({percent(self.explained_variance)} of the variance)"),
            ("eigenvalues", leading + more),
        ]
        lines += [("sizes" if i == 0 else "", line) for i, line in enumerate(self.sizes.lines())]
        lines.append(("store", describe_store(self.frame_store)))
        if self.axes is not None:
            lines.append(("axes", self.axes))
        if self.solver_choice is not None:
            choice = SolverChoice.from_attributes(self.solver_choice)
            lines.append(("solver", choice_summary(choice)))
            if (denoiser := denoising_summary(choice)) is not None:
                lines.append(("denoiser", denoiser))
        if self.parameters is not None:
            lines.append(("parameters", self.parameters["summary"]))
            if self.parameters.get("predictor") is not None:
                lines.append(("predictor", self.parameters["predictor"]))
        return "\n".join(f"{label:<12} {value}".rstrip() for label, value in lines)


@dataclass
class Sizes:
    """What a compression user weighs: the model's bytes, the codes' bytes per frame, and the
    source's, side by side (``kpca fit`` and ``kpca info``)."""

    model_bytes: int
    model_bytes_per_frame: float  # per training frame
    codes_bytes_per_frame: int  # float64 codes, as encode writes them by default
    source_bytes: int | None
    source_frames: int | None
    source_bytes_per_frame: float | None
    model_to_source: float | None  # the model's bytes over the source's
    source_to_codes: float | None  # a source frame's bytes over its codes'

    @classmethod
    def of(cls, model_bytes: int, n: int, k: int, provenance: Provenance | None) -> Sizes:
        source_bytes = provenance.source_bytes if provenance is not None else None
        source_frames = provenance.source_frames if provenance is not None else None
        per_frame = source_bytes / source_frames if source_bytes is not None and source_frames else None
        codes = CODE_BYTES * k
        return cls(
            model_bytes=int(model_bytes),
            model_bytes_per_frame=model_bytes / n,
            codes_bytes_per_frame=codes,
            source_bytes=source_bytes,
            source_frames=source_frames,
            source_bytes_per_frame=per_frame,
            model_to_source=model_bytes / source_bytes if source_bytes else None,
            source_to_codes=per_frame / codes if per_frame is not None else None,
        )

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def lines(self) -> list[str]:
        """``model 3.1 MiB, 45.9 KiB a training frame``, ``codes 24 B a frame (3 float64; 12 B
        with encode --dtype float32)``, ``source 588.0 KiB (4.9 KiB a frame); the model is 5.4 x
        the source, a frame's codes 1/209 of a source frame``."""
        k = self.codes_bytes_per_frame // CODE_BYTES
        lines = [
            f"model {human_size(self.model_bytes)}, {human_size(self.model_bytes_per_frame)} a training frame",
            f"codes {self.codes_bytes_per_frame} B a frame ({k} float64; "
            f"{self.codes_bytes_per_frame // 2} B with encode --dtype float32)",
        ]
        if self.source_bytes is not None:
            line = f"source {human_size(self.source_bytes)}"
            if self.source_bytes_per_frame is not None:
                line += f" ({human_size(self.source_bytes_per_frame)} a frame)"
            if self.model_to_source is not None:
                line += f"; the model is {ratio(self.model_to_source)} the source"
            if self.source_to_codes is not None:
                line += f", a frame's codes 1/{self.source_to_codes:.0f} of a source frame"
            lines.append(line)
        return lines


def shape_of(size: dict) -> list[int]:
    """The frame shape back from :func:`size_dict`."""
    if "values" in size:
        return [size["values"]]
    return [size["height"], size["width"]] + ([3] if size["channels"] == 3 else [])


def ratio(value: float) -> str:
    """``5.4 x`` or ``1/3.2 of`` : a ratio read the same way either side of one, with the
    digits it takes not to read as one when it is not (``1.04 x``, ``1/1.04 of``, never
    ``1/1 of``), and ``the size of`` when it is one to four digits."""
    shown = value if value >= 1 else 1 / value
    for digits in (2, 3, 4):
        text = f"{shown:.{digits}g}"
        if text != "1":
            return f"{text} x" if value >= 1 else f"1/{text} of"
    return "the size of"


def size_dict(shape) -> dict:
    """One frame's size for JSON: ``{"width", "height", "channels"}`` for images (1 grey, 3
    RGB), ``{"values"}`` for points."""
    shape = [int(v) for v in shape]
    if len(shape) == 1:
        return {"values": shape[0]}
    return {"width": shape[1], "height": shape[0], "channels": shape[2] if len(shape) == 3 else 1}


def human_size(size: float) -> str:
    """``812 B``, ``1.5 KiB``, ``49.7 MiB``, ``2.1 GiB``: bytes for people."""
    unit = "B"
    for larger in ("KiB", "MiB", "GiB", "TiB"):
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{size:.0f} B" if unit == "B" else f"{size:.1f} {unit}"


def describe_store(frame_store: dict | None) -> str:
    """How the model keeps its frames, why, and what that costs them: ``the clip's own h264
    packets (the frames bit for bit): every frame …``, ``H.264 CRF 19 (given), 44.32 dB
    against the frames given``."""
    if frame_store is None:
        return "each frame compressed alone, lossless"
    why = f": {frame_store['why']}" if isinstance(frame_store.get("why"), str) and frame_store["why"] else ""
    if frame_store.get("codec") == "source":
        return f"the clip's own {frame_store['source_codec']} packets, copied (the frames bit for bit){why}"
    if frame_store.get("codec") == "files":
        return f"the image files' own bytes (the frames bit for bit){why}"
    if frame_store["crf"] == 0:
        return f"H.264, lossless (the frames bit for bit){why}"
    psnr = frame_store.get("psnr")
    quality = f", {psnr:.2f} dB against the frames given" if isinstance(psnr, (int, float)) else ""
    return f"H.264 CRF {frame_store['crf']} ({frame_store.get('choice', 'given')}){quality}"


def describe_axes(axes) -> str | None:
    """The distance solver's axes as the model stores them (:mod:`kpcacli.modelfile.axes`): ``16
    linear-PCA axes (H.264 CRF 28), adding 0.15 grey levels at most``; None when none are."""
    if axes is None or axes.frames.description is None:
        return None
    description = axes.frames.description
    if description.get("codec") != "h264":
        return f"{axes.count} linear-PCA axes for the distance solver (float32)"
    noise = description.get("noise")
    cost = f", adding {noise:.2g} grey levels RMS at most" if isinstance(noise, (int, float)) else ""
    return f"{axes.count} linear-PCA axes for the distance solver (H.264 CRF {description.get('crf')}){cost}"


def describe_parameters(parameters) -> dict | None:
    """What ``info`` says of a model's parameters (:mod:`kpcacli.model.parameters`): their
    names and ranges, the map, each map's leave-one-out error and the decoded frames' PSNR."""
    if parameters is None:
        return None
    lower, upper = parameters.box_bounds()
    return {
        "names": list(parameters.names),
        "lower": lower,
        "upper": upper,
        "map": parameters.kind,
        "loo_rms": parameters.loo_rms,
        "loo_psnr": parameters.loo_psnr,
        "loo_frames": parameters.loo_frames,
        "summary": parameters.describe(),
        "prediction_solver": parameters.solver,
        "prediction_scores": parameters.solver_scores,
        "predictor": parameters.describe_solver(),
    }


def describe_solver(state) -> str:
    """The solver a model decodes with when none is named, and why: the measured choice
    (:class:`kpcacli.model.solverchoice.SolverChoice`), or the kernel's rule, unmeasured."""
    return choice_summary(solver_choice(state))


def fit_report(state, location) -> list[str]:
    """What ``kpca fit`` says of the model it wrote to `location`: its sizes (:class:`Sizes`),
    its frame store, its stored axes and its default solver."""
    sizes = Sizes.of(stored_size(location), state.n_samples, state.n_components, state.provenance).lines()
    axes = describe_axes(state.linear_axes)
    return [
        *sizes,
        f"store {describe_store(state.frame_store)}",
        *([f"axes {axes}"] if axes else []),
        f"solver {describe_solver(state)}",
        *([f"denoiser {denoiser}"] if (denoiser := denoising_summary(solver_choice(state))) else []),
        *([f"parameters {state.parameters.describe()}"] if state.parameters is not None else []),
        *([f"predictor {predictor}"] if state.parameters and (predictor := state.parameters.describe_solver()) else []),
    ]
