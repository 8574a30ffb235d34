"""``kpca reconstruct``: whole frames from part of them, through a model.

Two inputs say what is observed:

* frames and a mask (:func:`reconstruct_sources`): MASK one image for every frame, or a folder
  or video of masks, one a frame in order; non-zero is observed;
* readings at sensors (:func:`reconstruct_readings`): a matrix of readings, one row a frame
  and one column a sensor of a sensor file (:mod:`kpcacli.io.sensors`).

The frames are completed in bounded batches (``BUDGETS.reconstruct_batch``) on the engine
(:func:`kpcacli.workflows.running.engine_for`: this process, or a cluster's workers), and
written as they come: a long clip streams. Each frame's error estimate is returned to be
reported (:class:`ReconstructReport`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..estimators.estimator import FrameModel
from ..estimators.reconstruction import Reconstruction, ReconstructOptions, checked_observed_rows
from ..io.codes import read_matrix_file, write_matrix
from ..io.outputs import FrameTarget, check_rows_target, check_video_options, write_frames
from ..io.readers import Frame
from ..io.request import FrameRequest
from ..io.sensors import read_sensors, write_sensors
from ..io.videowriter import DEFAULT_VIDEO, VideoSettings
from ..model.state import FittedState
from ..model.validation import check_mask, check_sensors, rows_from_readings
from ..modelfile import load as load_state
from ..preimage import checked_solver
from ..utils.budgets import BUDGETS, count_within
from ..utils.errors import InputError, param
from ..utils.hyperparameters import check
from ..utils.parallel import joined
from ..utils.progress import progress_bar
from .running import at_source_rate, engine_for

DEFAULT_OPTIONS = ReconstructOptions()


@dataclass
class ReconstructReport:
    """What ``kpca reconstruct`` did, frame by frame, in order."""

    names: list[str] = field(default_factory=list)
    hidden: list[float] = field(default_factory=list)  # the share of each frame's values hidden
    estimate: list[float] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)
    converged: list[bool] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # the candidate that filled each frame

    def add(self, names: list[str], hidden: np.ndarray, result: Reconstruction) -> None:
        self.names.extend(names)
        self.hidden.extend(float(v) for v in hidden)
        self.estimate.extend(float(v) for v in result.estimate)
        self.rounds.extend(int(v) for v in result.rounds)
        self.converged.extend(bool(v) for v in result.converged)
        self.kept.extend(str(v) for v in result.kept)

    def as_json(self) -> dict:
        """``frames``: one entry a frame (name, hidden share, estimate, rounds, converged, and
        the candidate kept: :attr:`kpcacli.estimators.reconstruction.Reconstruction.kept`); and the
        estimate's mean and largest."""
        estimate = np.asarray(self.estimate)
        return {
            "frames": [
                {
                    "name": name,
                    "hidden": hidden,
                    "estimate": value,
                    "rounds": rounds,
                    "converged": converged,
                    "kept": kept,
                }
                for name, hidden, value, rounds, converged, kept in zip(
                    self.names, self.hidden, self.estimate, self.rounds, self.converged, self.kept
                )
            ],
            "mean_estimate": float(estimate.mean()),
            "largest_estimate": float(estimate.max()),
        }


def batch_frames(state: FittedState) -> int:
    """Frames completed together: ``BUDGETS.reconstruct_batch`` of float64 working arrays."""
    return count_within(BUDGETS.reconstruct_batch, 10 * 8 * state.frames.shape[1])


def reconstruct_sources(
    request: FrameRequest,
    model_path,
    *,
    masks: FrameRequest,
    mask_threshold: float | None = None,
    output=None,
    options: ReconstructOptions = DEFAULT_OPTIONS,
    video: VideoSettings = DEFAULT_VIDEO,
    scheduler: str | None = None,
    progress: bool = False,
) -> ReconstructReport:
    """``kpca reconstruct FRAMES --mask MASK``: the frames of `request` completed where the
    masks of `masks` are zero, or with `mask_threshold` below it (one mask for all, or one a
    frame in order; :func:`kpcacli.model.validation.check_mask`), written to `output` as decode
    writes frames (rows for a point model)."""
    state = load_state(model_path)
    _check_options(state, output, video, options)
    check("mask_threshold", mask_threshold)
    done = ReconstructReport()
    with joined(request.in_colour(state.is_colour).frames()) as frames, joined(masks.frames()) as mask_stream:
        shared, mask_frames = _masks(state, mask_stream, mask_threshold)

        def batches() -> Iterator[tuple[list[Frame], np.ndarray, np.ndarray]]:
            size = batch_frames(state)
            for batch in iter(lambda: list(itertools.islice(frames, size)), []):
                if shared is not None:
                    mask = np.broadcast_to(shared, (len(batch), shared.shape[1]))
                else:
                    mask = np.concatenate(
                        [_next_mask(state, mask_frames, frame.name, mask_threshold) for frame in batch]
                    )
                # refused here, before any task: frames of another size, masks that hide everything
                _, observed = checked_observed_rows(state, [frame.pixels for frame in batch], mask)
                yield batch, np.stack([frame.pixels for frame in batch]), observed
            if shared is None and next(mask_frames, None) is not None:
                raise InputError(f"there are more masks than frames; give {param('mask')} one mask a frame, in order")

        rate = at_source_rate(video, state, request)
        _complete(state, batches(), done, output, options, video, scheduler, progress, rate)
    return done


def reconstruct_readings(
    readings_source: str,
    sensors_path: str,
    model_path,
    *,
    output=None,
    options: ReconstructOptions = DEFAULT_OPTIONS,
    video: VideoSettings = DEFAULT_VIDEO,
    scheduler: str | None = None,
    progress: bool = False,
    stdin=None,
) -> ReconstructReport:
    """``kpca reconstruct READINGS --sensors SENSORS``: one frame a row of readings (``-``:
    `stdin`), each read at the sensors of `sensors_path`, in its order."""
    state = load_state(model_path)
    _check_options(state, output, video, options)
    sensors = check_sensors(state, read_sensors(sensors_path, state.frame_shape))
    readings, _ = read_matrix_file(readings_source, stdin, what="readings", row="one row of readings per frame")
    rows = rows_from_readings(state, readings, sensors)
    if not state.is_points:
        FrameTarget.of(output).check(len(rows))
    size = batch_frames(state)
    done = ReconstructReport()

    def batches() -> Iterator[tuple[list[Frame], np.ndarray, np.ndarray]]:
        for start in range(0, len(rows), size):
            part = rows[start : start + size]
            _, observed = checked_observed_rows(state, part, None)
            names = [f"{number:06d}" for number in range(start, start + len(part))]
            yield [Frame(name, None) for name in names], part, observed

    _complete(state, batches(), done, output, options, video, scheduler, progress, at_source_rate(video, state))
    return done


def choose_sensors(model_path, count: int, *, output=None, progress: bool = False) -> np.ndarray:
    """``kpca sensors``: `count` sensor locations for the model (:meth:`FrameModel.sensors`, a
    progress bar a pick when `progress`), written as a sensor file to `output` (standard
    output when None or ``-``)."""
    state = load_state(model_path)
    indices = FrameModel.from_state(state, progress=progress).sensors(count)
    write_sensors(output, indices, state.frame_shape)
    return indices


def _check_options(state: FittedState, output, video: VideoSettings, options: ReconstructOptions) -> None:
    """Everything about the outputs and options that can be refused before any frame is read."""
    checked_solver(state, options.solver, options.neighbours)
    if state.is_points:
        check_rows_target(output)
    else:
        check_video_options(output, video)
        FrameTarget.of(output)


def _complete(state, batches, done: ReconstructReport, output, options, video, scheduler, progress, rate) -> None:
    """Complete `batches` on the engine, recording each frame in `done`, and write the frames
    to `output` as they come (rows for a point model, all at the end)."""
    pending: list = []

    def inputs() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for batch, rows, observed in batches:
            pending.append((batch, 1.0 - observed.mean(axis=1)))
            yield rows, observed

    with engine_for(scheduler, progress) as engine, progress_bar(progress, desc="reconstructing", unit="frame") as bar:

        def completed() -> Iterator[Frame]:
            for result in engine.reconstruct(state, inputs(), options):
                batch, hidden = pending.pop(0)
                done.add([frame.name for frame in batch], hidden, result)
                bar.update(len(batch))
                yield from (Frame(frame.name, pixels) for frame, pixels in zip(batch, result.frames))

        if state.is_points:
            rows = [frame.pixels for frame in completed()]
            if not rows:
                raise InputError("the sources hold no samples")
            write_matrix(np.stack(rows), output)
            return
        target = FrameTarget.of(output)
        frames = completed()
        if target.kind in ("stdout", "image"):  # one frame: a second is refused before writing
            head = list(itertools.islice(frames, 2))
            if len(head) > 1:
                where = (
                    "standard output takes one PNG" if target.kind == "stdout" else f"'{target.text}' names one image"
                )
                raise InputError(
                    f"more than one frame to reconstruct but {where}; give {param('output')} DIR/ or a video"
                )
            frames = iter(head)
        first = next(frames, None)
        if first is None:
            raise InputError("the sources hold no frames")
        write_frames(itertools.chain([first], frames), target, count=1, video=rate)


def _masks(state: FittedState, frames: Iterator, threshold: float | None) -> tuple[np.ndarray | None, Iterator]:
    """One mask for every frame, as (1, d) bool (:func:`kpcacli.model.validation.check_mask`),
    or None and the masks' frames one a frame, in order."""
    first = next(frames, None)
    if first is None:
        raise InputError(f"{param('mask')} holds no image")
    second = next(frames, None)
    if second is None:
        return check_mask(state, first.pixels, 1, threshold, f"mask '{first.name}'"), iter(())
    return None, itertools.chain([first, second], frames)


def _next_mask(state: FittedState, masks: Iterator, name: str, threshold: float | None) -> np.ndarray:
    """The next frame's mask as (1, d) bool, checked."""
    mask = next(masks, None)
    if mask is None:
        raise InputError(f"there are fewer masks than frames (none for '{name}'); give one mask a frame, in order")
    try:
        return check_mask(state, mask.pixels, 1, threshold, f"mask '{mask.name}'")
    except InputError as error:
        raise InputError(f"mask '{mask.name}': {error}") from None
