"""``kpca encode``: frames in, k codes each out, over an engine."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..io.codes import codes_header, write_matrix
from ..io.request import FrameRequest
from ..modelfile import load as load_state
from ..numerics.novelty import Novelty
from ..utils.checks import check_choice
from .running import checked_device, engine_for

CODE_DTYPES = ("float64", "float32")


@dataclass
class EncodeResult:
    """What ``kpca encode`` wrote, and how far its frames lie from the training frames."""

    codes: np.ndarray
    novelty: Novelty


def encode_sources(
    request: FrameRequest,
    model_path,
    *,
    output=None,
    dtype: str = "float64",
    scheduler: str | None = None,
    progress: bool = False,
    device: str | None = None,
) -> EncodeResult:
    """``kpca encode``: codes of every frame of `request` (converted as the model's frames
    were: grey, or RGB for a colour model), written to `output` (text on standard output when
    None or ``-``) in `dtype`. Text starts with the model's fingerprint (:func:`codes_header`).

    float64 codes decode exactly as encoded; float32 halves their size, and moves a decoded
    frame by far less than a grey level (``tests/test_trust.py``). `device` (``cuda``): the
    products with the training frames on a GPU (:func:`kpcacli.numerics.backend.backend_for`).
    """
    dtype = check_choice("dtype", dtype, CODE_DTYPES)
    state = load_state(model_path)
    backend = checked_device(scheduler, device)
    with engine_for(scheduler, progress, backend) as engine:
        codes, distances = engine.encode(state, request.in_colour(state.is_colour))
    codes = codes.astype(dtype)
    write_matrix(codes, output, header=codes_header(state.fingerprint, state.n_components), column="z")
    return EncodeResult(codes, Novelty.of("frames", distances, state.frame_reach))
