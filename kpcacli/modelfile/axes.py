"""The distance solver's linear-PCA axes as a model stores them, prepared once at fit.

The default pre-image (:mod:`kpcacli.preimage.distance`) is a sum of the code's M nearest
training frames and a move along the R = min(2k, rank) unit axes of linear PCA on the
training frames, ``a_j = Σ_i v_ij x_i / √λ_j`` (:mod:`kpcacli.numerics.linearaxes`). Everything but
the axis frames follows from the Gram; the frames are weighted sums of *every* training frame.
Formed at decode, they made one decoded frame cost a read of the whole training set (0.34 s
on 66 frames of 720p, and growing with n). Formed here once, at fit, and stored with the
model, a decode reads its M neighbours and the R axes whatever n.

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
from ..utils.errors import KpcaError
from ..utils.parallel import available_cores, ordered_map
from .framecodec import FrameCodec, codable, encode_frames
from .zarrlayout import AxisMembers

# Grey levels (RMS) the stored axes may add to a decoded frame, as the calibration measures it.
# Calibration frames are left out of sets whose gaps are twice a clip's held-out gaps, so they
# move further: on the README's hand clip their moves were 4 x those of the held-out frames,
# and the noise the held-out frames see a quarter of this bound.
NOISE_BUDGET = 0.25
TRIAL_CRFS = (36, 28, 20, 12, 0)  # rate factors tried, coarsest first; 0 is lossless H.264 of the 8-bit values
# x264's preset for the axes: superfast, the fastest that adds no noise over veryfast's for a
# few per cent more bytes (docs/performance.md, design measurements). Without the macroblock
# tree: with it, x264 did not always code the same axes to the same bytes (FrameCodec).
AXIS_PRESET = "superfast"


@dataclasses.dataclass
class StoredAxes:
    """The axes as stored: `axes` decode with the frames a reader will read; `members` is
    what the model file holds (:class:`kpcacli.modelfile.zarrlayout.AxisMembers`)."""

    axes: LinearAxes
    members: AxisMembers


def stored_axes(state: FittedState) -> StoredAxes | None:
    """The distance solver's axes of `state`, with their frames as the model will store them;
    None when the solver does not apply to the model (another kernel, a centred one) or the
    frames span no axis. Reads every training frame once."""
    solver = DistanceSolver()
    try:
        solver.check(state)
    except KpcaError:
        return None
    axes = linear_axes(dataclasses.replace(state, linear_axes=None))
    if axes.count == 0:
        return None
    # (R, d): one pass over the training frames, in float32: the axes are stored as 8 bits or
    # float32 (0.1 against 0.3 s in float64 for 6 axes of 69 frames of 1080 x 1920).
    exact = weighted_frame_sums(state.frames, axes.frame_weights(), dtype=np.float32)
    arrays = {
        "axis_eigenvectors": axes.eigenvectors,
        "axis_eigenvalues": axes.eigenvalues,
        "axis_centred_norms": axes.centred_norms,
    }
    if not codable(state.frame_shape, state.frames.dtype):
        values = exact
        description = {"codec": "float32"}
        frames = AxisFrames(values, np.ones(axes.count), 0.0, description)
        members = AxisMembers({**arrays, "axis_scales": frames.scales}, description, values)
        return StoredAxes(axes.with_frames(frames), members)
    moves = mean_squared_moves(solver, state, axes)
    quantised = AxisFrames.quantised(exact)
    for crf in TRIAL_CRFS:
        description = {"codec": "h264", "crf": crf, "offset": quantised.offset}
        encoded = encode_frames(
            quantised.values,
            state.frame_shape,
            FrameCodec(crf, state.is_colour, AXIS_PRESET, macroblock_tree=False),
            description,
        )
        frames = AxisFrames(encoded.decoded(), quantised.scales, quantised.offset, description)
        axis_noise = squared_errors(frames, exact)
        added = float(np.sqrt(moves @ axis_noise))
        if added <= NOISE_BUDGET:
            break
    description["noise"] = round(added, 4)  # what the stored axes add to a decoded frame, RMS
    members = AxisMembers({**arrays, "axis_scales": quantised.scales}, description, encoded)
    return StoredAxes(axes.with_frames(frames), members)


def squared_errors(frames: AxisFrames, exact: np.ndarray) -> np.ndarray:
    """``|δa_j|² / d``: each stored axis's mean squared error against the `exact` axis frames
    (R, d), in float32 a row at a time (what a float64 copy of every axis cost the megapixel
    fit: 0.1 s), summed in float64; one axis per thread."""

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
