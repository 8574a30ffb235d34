"""``kpca compare``: a score per frame pair, read two sequences at a time, and summaries that
stay true for every input.

Two means of PSNR are given, as tools differ:

* **mean PSNR**: the mean of per-frame PSNR over the frames that differ. A frame reproduced
  exactly has an infinite PSNR, which would make the plain mean infinite however much the
  others differ; the identical frames are counted instead.
* **PSNR of the mean MSE**: the PSNR of the mean squared error over every frame, ffmpeg's
  ``psnr`` filter's average. It weighs the worst frames more than the mean of the logarithms.

Colour is compared as colour: when both sequences hold colour, both are read as RGB and every
channel counts, as ffmpeg's ``psnr`` filter reports RGB; otherwise both go through the one grey
conversion (ITU-R 601 luma), so a grey decode of a colour clip is scored on what it could hold.
A model never changes which (it only adds its lines). The text and the JSON say which, and
when the two sequences differ, which one held colour.

"identical" is said only when every frame is. With a model whose training frames are recorded
(:mod:`kpcacli.io.provenance`), the training frames and the held-out ones are summarised apart:
a mean over both says little about either.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
from PIL import Image

from ..estimators.estimator import FrameModel
from ..io.outputs import FrameTarget, write_frames
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..model.state import FittedState
from ..numerics.metrics import LUMA, data_range, mean_psnr, mse, psnr, psnr_of_mse, ssim
from ..utils.blas import single_threaded_blas
from ..utils.checks import frame_size
from ..utils.cores import available_cores
from ..utils.errors import InputError, ParameterError
from ..utils.parallel import joined, ordered_map
from ..utils.progress import progress_bar
from .comparisonscores import Comparison, FrameScore, decibels

COMPARE_CHUNK = 8  # frame pairs scored together, on threads


def compare_sequences(
    original: str,
    other: str,
    *,
    model_path=None,
    output=None,
    selection=None,
    stdin=None,
    progress: bool = False,
) -> Comparison:
    """``kpca compare``: PSNR and SSIM of every frame of `other` against the same frame of
    `original` (each a video, folder, glob, image or ``-``), over every RGB channel when both
    hold colour (as ffmpeg's psnr filter on RGB), else grey, with or without a model;
    summarised as this module's docstring states. `selection` chooses frames of
    both alike, or of `original` alone when `other` has exactly as many frames as it chooses
    there and `original` has more (`other` was decoded from those frames' codes). With
    `model_path`, the training and held-out frames apart (when the model records its frames,
    and they are `original`'s); the worst pair written to `output` as original | other |
    amplified difference.

    Frames stream in pairs, a few at a time, so two long clips never sit in memory.
    """
    from .report import ERROR_GAIN, labelled_triptych

    if original == "-" and other == "-":
        raise ParameterError("only one of the two sequences can come from standard input")
    if output is not None:
        output = FrameTarget.of(output)
        output.check(1)
    requests, total = _paired_requests(original, other, selection, stdin)
    mean_frame, training, split_note = None, None, None
    if model_path is not None:
        state = FrameModel.load(model_path).state_
        mean_frame = state.mean_frame()
        training, split_note = _training_frames(state, original, model_path)
    holds_colour = [_holds_colour(request) for request in requests]
    colour = all(holds_colour)
    channels_note = None
    if any(holds_colour) and not colour:
        coloured, grey = (original, other) if holds_colour[0] else (other, original)
        channels_note = f"'{coloured}' holds colour and '{grey}' grey: both were scored in grey"
    firsts, seconds = (request.in_colour(colour).frames() for request in requests)
    scores: list[FrameScore] = []
    worst = None  # (FrameScore, original, other) of the worst pair so far
    mean_frame_scores = []
    with (
        joined(firsts),
        joined(seconds),
        single_threaded_blas(),
        progress_bar(progress, desc="comparing", total=total, unit="frame") as bar,
    ):
        for chunk in _pairs(firsts, seconds, original, other):
            for pair, result in zip(chunk, ordered_map(_score, chunk, available_cores())):
                scores.append(result)
                if worst is None or result.psnr < worst[0].psnr:
                    worst = (result, pair[0].pixels, pair[1].pixels)
                if mean_frame is not None:
                    mean_frame_scores.append(_mean_frame_psnr(pair[0], mean_frame, model_path))
            bar.update(len(chunk))
    if not scores:
        raise InputError(f"'{original}' holds no frames")
    if output is not None:
        score, reference, estimate = worst
        title = f"worst frame {score.index}: PSNR {decibels(score.psnr).strip()}"
        picture = labelled_triptych(
            reference,
            estimate.astype(reference.dtype, copy=False),
            title,
            (Path(score.original).name, Path(score.other).name, f"absolute difference x{ERROR_GAIN:g}"),
        )
        write_frames(picture[np.newaxis], output)
    return Comparison(
        scores,
        peak=data_range(worst[1].dtype),
        colour=colour,
        channels_note=channels_note,
        training=training,
        split_note=split_note,
        mean_frame_psnr=mean_psnr(mean_frame_scores) if mean_frame_scores else None,
    )


def _paired_requests(original: str, other: str, selection, stdin) -> tuple[list[FrameRequest], int | None]:
    """The two sequences' requests (see :func:`compare_sequences` for what `selection` chooses)
    and their frames' count when one can be read from headers; sequences of different lengths
    are an error."""
    requests = {source: FrameRequest.of([source], selection=selection, stdin=stdin) for source in (original, other)}
    totals = {source: request.count() for source, request in requests.items() if source != "-"}
    if selection is not None and "-" not in totals and original != other:
        # Frames decoded from the selected frames' codes: the selection is the original's alone.
        whole = FrameRequest.of([other], stdin=stdin)
        if whole.count() == totals[original] != FrameRequest.of([original], stdin=stdin).count():
            requests[other], totals[other] = whole, totals[original]
    if len(totals) == 2 and totals[original] != totals[other]:
        raise InputError(f"'{original}' has {totals[original]} frames but '{other}' has {totals[other]}")
    return [requests[original], requests[other]], next(iter(totals.values()), None)


def _pairs(firsts: Iterator[Frame], seconds: Iterator[Frame], original: str, other: str) -> Iterator[list]:
    """The two sequences' frames side by side, :data:`COMPARE_CHUNK` pairs at a time; one
    sequence ending before the other is an error."""
    paired = 0
    while True:
        chunk = []
        for first in firsts:
            second = next(seconds, None)
            if second is None:
                raise InputError(f"'{other}' has fewer frames than '{original}' ({paired + len(chunk)})")
            chunk.append((first, second))
            if len(chunk) == COMPARE_CHUNK:
                break
        if not chunk:
            break
        paired += len(chunk)
        yield chunk
    if next(seconds, None) is not None:
        raise InputError(f"'{original}' has fewer frames than '{other}' ({paired})")


def _score(pair: tuple[Frame, Frame]) -> FrameScore:
    first, second = pair
    if first.pixels.shape != second.pixels.shape:
        raise InputError(
            f"'{first.name}' is {frame_size(first.pixels.shape)} but '{second.name}' is "
            f"{frame_size(second.pixels.shape)}"
        )
    reference = first.pixels
    estimate = second.pixels.astype(reference.dtype, copy=False)
    error = mse(reference, estimate)
    return FrameScore(
        first.index,
        first.name,
        second.name,
        error,
        psnr_of_mse(error, data_range(reference.dtype)),
        ssim(reference, estimate),
    )


def _holds_colour(request: FrameRequest) -> bool:
    """Whether the first frame of `request`, read as RGB, has channels that differ (a colour
    image or video; grey ones, and standard input, which can be read only once, do not)."""
    if request.reads_stdin:
        return False
    with joined(request.in_colour(True).frames()) as frames:
        first = next(frames, None)
    if first is None or first.pixels.ndim != 3:
        return False
    pixels = first.pixels
    return not (np.array_equal(pixels[..., 0], pixels[..., 1]) and np.array_equal(pixels[..., 0], pixels[..., 2]))


def _training_frames(state: FittedState, original: str, model_path) -> tuple[frozenset[int] | None, str | None]:
    """The numbers of the frames `state` was fitted on, when they are frames of `original`; else
    None and why not."""
    from ..io.sources import count_frames

    provenance = state.provenance
    if provenance is None:
        return None, f"not told apart: '{model_path}' does not record its training frames"
    if original == "-":
        return None, "not told apart: standard input's frames cannot be matched to the model's"
    total = count_frames([original], None)
    if provenance.source_frames is not None and total != provenance.source_frames:
        return None, (
            f"not told apart: '{model_path}' was fitted on a sequence of {provenance.source_frames} frames, "
            f"'{original}' has {total}"
        )
    return frozenset(provenance.frame_indices), None


def _mean_frame_psnr(frame: Frame, mean_frame: np.ndarray, model_path) -> float:
    """The PSNR of the model's mean training frame against `frame`, in the channels both have:
    grey when either is (a colour frame or mean frame through ITU-R 601 luma)."""
    pixels = frame.pixels
    if pixels.ndim == 3 and mean_frame.ndim == 2:
        pixels = np.asarray(Image.fromarray(pixels).convert("L")) if pixels.dtype == np.uint8 else _luma(pixels)
    elif mean_frame.ndim == 3 and pixels.ndim == 2:
        mean_frame = _luma(mean_frame)
    if mean_frame.shape != pixels.shape:
        raise InputError(
            f"model '{model_path}' has frames of {frame_size(mean_frame.shape)}, "
            f"'{frame.name}' is {frame_size(frame.pixels.shape)}"
        )
    return psnr(pixels, mean_frame)


def _luma(rgb: np.ndarray) -> np.ndarray:
    """ITU-R 601 luma of RGB values, in float64 (Pillow's ``L`` weights, without its rounding)."""
    return rgb.astype(np.float64) @ LUMA
