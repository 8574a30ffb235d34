"""The distance solver's linear-PCA axes as a model stores them, prepared once at fit.

The default pre-image (:mod:`kpcacli.preimage.distance`) is a sum of the code's M nearest
training frames and a move along the R = min(2k, rank) unit axes of linear PCA on the
training frames, ``a_j = Σ_i v_ij x_i / √λ_j`` (:mod:`kpcacli.numerics.linearaxes`). Everything but
the axis frames follows from the Gram; the frames are weighted sums of *every* training frame,
so formed at decode they would make each decode read the whole training set. Formed once, at
fit (:func:`stored_axes`), and stored with the model (:func:`axis_members`), a decode reads its
M neighbours and the R axes whatever n.

What is stored: the eigenvectors (n, R), eigenvalues and the training frames' centred norms
(the Gram side, exact), and the frames. For 8-bit grey or colour models the frames are
quantised to 8 bits, each axis over its own range (:meth:`AxisFrames.quantised`), and coded
as H.264 at the largest rate factor of ``TRIAL_CRFS`` whose noise, weighted by how far the
decoder moves frames along each axis, stays within ``NOISE_BUDGET``:

    added MSE = Σ_j m_j² |δa_j|² / d ≤ NOISE_BUDGET²,

with ``m_j²`` the mean squared move along axis j of the solver's calibration frames (training
frames decoded as if held out, with the default M) and ``δa_j`` the stored axis's error. The
moves are small (the fusion corrects the local pre-image, it does not build the frame), so
a coarse rate factor suffices (docs/model-format.md measures it). Other frames (points,
16-bit and float images) keep the axes as float32.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..model.state import FittedState
from ..numerics.linearaxes import AxisFrames, LinearAxes
from ..preimage.distance import DistanceSolver, fusion_factors, linear_axes
from ..preimage.synthesis import weighted_frame_sums
from ..utils.cores import available_cores
from ..utils.errors import KpcaError
from ..utils.parallel import ordered_map
from .framecodec import EncodedFrames, FrameCodec, codable, encode_frames
from .storedframes import VideoFrames
from .zarrlayout import AxisMembers

# Grey levels (RMS) the stored axes may add to a decoded frame, as the calibration measures it.
# Calibration frames are left out of sets whose gaps are twice a clip's held-out gaps, so they
# move further than held-out frames do: the bound holds for them with room to spare.
NOISE_BUDGET = 0.25
TRIAL_CRFS = (36, 28, 20, 12, 0)  # rate factors tried, coarsest first; 0 is lossless H.264 of the 8-bit values
# x264's preset for the axes: the fastest that adds no noise over veryfast's (docs/performance.md,
# design measurements).
AXIS_PRESET = "superfast"


def stored_axes(state: FittedState) -> LinearAxes | None:
    """The distance solver's axes of `state`, their frames as the model will store them (the
    quantised values as a reader decodes them, with the coded groups to write); None when the
    solver does not apply to the model (another kernel, a centred one) or the frames span no
    axis. Reads every training frame once; the fit's last step (:meth:`FrameModel.fit`)."""
    solver = DistanceSolver()
    try:
        solver.check(state)
    except KpcaError:
        return None
    axes = linear_axes(dataclasses.replace(state, linear_axes=None))
    if axes.count == 0:
        return None
    # (R, d): one pass over the training frames, in float32, as the axes are stored.
    exact = weighted_frame_sums(state.frames, axes.frame_weights(), dtype=np.float32)
    if not codable(state.frame_shape, state.frames.dtype):
        return axes.with_frames(AxisFrames(exact, np.ones(axes.count), 0.0, {"codec": "float32"}, stored=exact))
    moves = mean_squared_moves(solver, state, axes)
    quantised = AxisFrames.quantised(exact)
    for crf in TRIAL_CRFS:
        description = {"codec": "h264", "crf": crf, "offset": quantised.offset}
        encoded = encode_frames(quantised.values, state.frame_shape, axis_codec(crf, state.is_colour), description)
        frames = AxisFrames(encoded.decoded(), quantised.scales, quantised.offset, description, stored=encoded)
        added = float(np.sqrt(moves @ squared_errors(frames, exact)))
        if added <= NOISE_BUDGET:
            break
    description["noise"] = round(added, 4)  # what the stored axes add to a decoded frame, RMS
    return axes.with_frames(frames)


def axis_members(axes: LinearAxes | None, frame_shape: tuple[int, ...]) -> AxisMembers | None:
    """What a model file holds of `axes` (:class:`kpcacli.modelfile.zarrlayout.AxisMembers`):
    the arrays and the frames' store as :func:`stored_axes` prepared them or a model held them;
    None for axes no model stores (formed in memory). Codes nothing but the values of axes
    whose coded groups did not travel with them (an unpickled model), losslessly."""
    if axes is None or axes.frames is None or axes.frames.description is None:
        return None
    frames = axes.frames
    arrays = {
        "axis_eigenvectors": axes.eigenvectors,
        "axis_eigenvalues": axes.eigenvalues,
        "axis_centred_norms": axes.centred_norms,
        "axis_scales": frames.scales,
    }
    description, stored = frames.description, frames.stored
    if description["codec"] == "float32":
        return AxisMembers(arrays, description, np.asarray(stored if stored is not None else frames.values))
    if isinstance(stored, VideoFrames):  # as a model file holds them: their bytes again
        stored = stored.encoded(description)
    if not isinstance(stored, EncodedFrames):
        description = {**description, "crf": 0}
        stored = encode_frames(frames.values, frame_shape, axis_codec(0, len(frame_shape) == 3), description)
    return AxisMembers(arrays, description, stored)


# A model stores its axes when they take at most this share of its frame store's bytes. On a
# short clip of noisy footage the axes (a noise-like frame each) took 1.3 to 4 times the clip's
# own packets (ViSP's cube, ellipse-1, line: docs/model-format.md); without them the distance
# solver forms exact axes from every frame at decode, a pass over a store that small.
AXES_SHARE = 0.5


def worth_storing(axes: AxisMembers | None, encoded: EncodedFrames | None) -> bool:
    """Whether a model stores `axes` beside its frames coded as `encoded`: axes of 8-bit frames
    (H.264) when they take at most ``AXES_SHARE`` of the frames' bytes; any other axes."""
    if axes is None or encoded is None or not isinstance(axes.frames, EncodedFrames):
        return axes is not None
    return axes.frames.nbytes <= AXES_SHARE * encoded.nbytes


def axis_codec(crf: int, colour: bool) -> FrameCodec:
    """The axes' H.264 settings at `crf`: ``AXIS_PRESET``, without x264's macroblock tree,
    with which the same axes did not always code to the same bytes (:class:`FrameCodec`)."""
    return FrameCodec(crf, colour, AXIS_PRESET, macroblock_tree=False)


def squared_errors(frames: AxisFrames, exact: np.ndarray) -> np.ndarray:
    """``|δa_j|² / d``: each stored axis's mean squared error against the `exact` axis frames
    (R, d), in float32 a row at a time (no float64 copy of every axis), summed in float64; one
    axis per thread."""

    def squared_error(index: int) -> float:
        error = frames.values[index].astype(np.float32)
        error -= np.float32(frames.offset)
        error *= np.float32(frames.scales[index])
        error -= exact[index]
        np.square(error, out=error)
        return float(error.sum(dtype=np.float64)) / error.size

    return np.array(list(ordered_map(squared_error, range(frames.count), available_cores())))


def mean_squared_moves(solver: DistanceSolver, state: FittedState, axes: LinearAxes) -> np.ndarray:
    """``m_j²``: the mean squared move along each axis of the solver's calibration frames
    with its default M, (R,); zeros when no frame could be calibrated."""
    calibration = solver.calibrate(state, axes, solver.default_neighbours)
    if len(calibration.local) == 0:
        return np.zeros(axes.count)
    alpha = fusion_factors(calibration.local, calibration.estimate, calibration.truth, axes.count)
    return np.mean(calibration.moves(alpha) ** 2, axis=0)
