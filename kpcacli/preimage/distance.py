"""The distance pre-image: kernel values become input-space distances (Kwok and Tsang 2004),
and every code refines the frame in the leading linear-PCA directions of the training frames.

For the Gaussian kernel a kernel value is a squared distance, ``d² = −log κ / β``. Kwok and
Tsang (2004) turn the feature-space information about the unknown frame into distances to its
nearest training frames and find the point of their affine span at those distances, in closed
form. Here the same distances to *every* training frame also give the frame's coordinates in
the linear-PCA basis of the training frames, which is how more codes give a better frame. Four
steps, all from the n x n linear Gram (pixels are read once, for the final weighted sum):

1. **The completed kernel vector** of the unknown frame against every training frame,
   ``t = V* z* + R_:N a`` — the paper's projection ``V* z*`` (García-González et al. 2021,
   eq. 35) plus the part the k codes cannot carry, interpolated from the two nearest distinct
   neighbours N (``a`` their barycentric weights, ``R = G − V* V*ᵀ G``; see
   :mod:`kpcacli.preimage.log`). Squared distances ``d_i² = −log max(t_i, t_min) / β``.

2. **The local pre-image** (Kwok and Tsang 2004, section 3): in the affine span of the M
   nearest distinct neighbours, the point at distances ``d_N``:
   ``w = v − mean(v) + 1/M`` with ``v = −½ G_c⁺ (d_N² − diag G_c)``, ``G_c = H D_NN H`` the
   neighbours' centred linear Gram.

3. **The global estimate**: with ``c_i = x_i − x̄`` the centred training frames, ``(x − x̄)·c_i
   = (|c_i|² − d_i² + |x − x̄|²) / 2``; projected on the R leading eigenvectors ``v_j`` of the
   centred linear Gram ``C`` (eigenvalues ``λ_j``) the unknown constant drops out, and the
   frame's coordinates on the unit linear-PCA axes are ``u_j = v_jᵀ g / √λ_j`` with
   ``g = (diag C − d²) / 2``. The local pre-image's own coordinates are ``√λ_j v_jᵀ w``.

4. **Fusion, axis by axis**: ``u = u_loc + α ⊙ (u_est − u_loc)``. The global estimate is
   exact when t is (k = n), and the local pre-image is better on the axes the codes say
   little about; ``α_j ∈ [0, 1]`` is the least-squares factor over the training frames, each
   decoded from its own code as if held out (leave-one-out: itself and its duplicate views
   removed from the neighbours). The frame is the local pre-image moved by ``u − u_loc``
   along the unit axes ``a_j`` (:mod:`kpcacli.numerics.linearaxes`): a sum of M neighbours and R axis
   frames, which the model stores (:mod:`kpcacli.modelfile.axes`), so a decode reads M + R frames
   whatever the number of training frames. R = min(2k, rank): beyond 2k axes the estimate
   helped on no sequence we measured (docs/quality.md).

Against eq. 35 with the same completed target (the ``log`` solver) this keeps the quality at
small k and keeps improving as k grows instead of levelling off: see docs/quality.md for the
tables per k. Like the log solver it needs the uncentred Gaussian kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..numerics.landmarks import evenly_spaced
from ..numerics.linearaxes import LinearAxes
from ..utils.errors import KpcaError, param
from .base import Preimage, PreimageSolver, register
from .log import completed_target
from .synthesis import weighted_frame_sums

# Training frames decoded as if held out to calibrate the fusion: enough for a stable
# least-squares factor per axis, few enough that a model of thousands of frames prepares fast.
MAX_CALIBRATION_FRAMES = 400


def linear_axes(state) -> LinearAxes:
    """The R = min(2k, rank) leading linear-PCA axes of `state`'s training frames: as the model
    stores them (:mod:`kpcacli.modelfile.axes`), or from the linear Gram, their frames formed from
    every training frame when a pre-image first needs them."""
    if state.linear_axes is not None:
        return state.linear_axes
    axes = LinearAxes.of_gram(state.linear_gram.shifted, 2 * state.n_components)
    # The function holds the frames, not the state: the solver prepared for a state is kept
    # in a weak mapping keyed by the state, which a reference from its value would never free.
    frames = state.frames
    return axes.with_frames(lambda: weighted_frame_sums(frames, axes.frame_weights()))


@dataclass
class Calibration:
    """Training frames decoded as if held out, in coordinates on the R linear axes.

    Attributes
    ----------
    local, estimate, truth : (m, R) ndarrays
        The local pre-image's coordinates (step 2), the global estimate's (step 3) and the
        frame's own, for the m frames calibrated.
    """

    local: np.ndarray
    estimate: np.ndarray
    truth: np.ndarray

    def moves(self, alpha: np.ndarray) -> np.ndarray:
        """What step 4 moves each calibration frame along each axis, (m, R)."""
        return alpha * (self.estimate - self.local)


@dataclass(frozen=True)
class Fusion:
    """What the solver prepares for one model and M (step 4): the linear axes and the fusion
    factor α of each, calibrated with M = `neighbours`."""

    neighbours: int
    axes: LinearAxes
    alpha: np.ndarray


@register
class DistanceSolver(PreimageSolver):
    name = "distance"
    summary = (
        "input distances from kernel values (Kwok and Tsang 2004), refined along the leading linear-PCA axes "
        "with every code: improves as k grows"
    )
    default_neighbours = 3

    def check(self, state) -> None:
        if state.kernel.name != "rbf":
            raise KpcaError(
                "the distance solver (Kwok and Tsang 2004) needs the Gaussian (rbf) kernel, whose values give "
                f"distances; this model uses {state.kernel.name}: choose another {param('solver')}"
            )
        if state.centred:
            raise KpcaError(
                "the distance solver needs an uncentred kernel: centred kernel values are not distances; refit "
                f"with {param('center', False)} or choose another {param('solver')}"
            )

    # -- the four steps ---------------------------------------------------------------------
    def squared_distances(self, state, code: np.ndarray, nearest_two: np.ndarray) -> np.ndarray:
        """Step 1: ``d² = −log max(t, t_min) / β`` from the completed kernel vector, (n,)."""
        target, _ = completed_target(state, code, nearest_two, slice(None))
        return -np.log(np.clip(target, state.smallest_kernel_value, 1.0)) / state.kernel.beta

    @staticmethod
    def local_weights(state, neighbours: np.ndarray, squared_distances: np.ndarray) -> np.ndarray:
        """Step 2: Kwok and Tsang's point in the neighbours' affine span, weights (M,)."""
        m = len(neighbours)
        if m == 1:
            return np.ones(1)
        dots = state.linear_gram.dots_among(neighbours)
        centring = np.eye(m) - 1.0 / m
        centred = centring @ dots @ centring
        v = (
            -0.5
            * np.linalg.pinv(centred, rcond=1e-10, hermitian=True)
            @ (squared_distances[neighbours] - np.diag(centred))
        )
        return v - v.mean() + 1.0 / m

    def estimates(self, state, axes: LinearAxes, code, neighbours) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Steps 1–3 for one code: local weights (M,), local and global coordinates (R,)."""
        squared = self.squared_distances(state, code, neighbours[:2])
        local = self.local_weights(state, neighbours, squared)
        return local, axes.coordinates_of_weights(neighbours, local), axes.coordinates_of_distances(squared)

    def calibrate(self, state, axes: LinearAxes, count: int) -> Calibration:
        """Up to ``MAX_CALIBRATION_FRAMES`` training frames, spread over the set, each decoded
        from its own code with M = `count` neighbours as if held out (itself and its duplicate
        views removed from the neighbours): steps 1–3 in coordinates, no pixel read."""
        n = state.n_samples
        calibration = evenly_spaced(n, MAX_CALIBRATION_FRAMES)
        local, estimate, truth = [], [], []
        for index in calibration:
            code = state.codes[index]
            chosen = state.neighbours.nearest(code, count, distinct=True, exclude_view_of=int(index))
            if len(chosen) < 2:
                continue
            _, from_local, from_distances = self.estimates(state, axes, code, chosen)
            local.append(from_local)
            estimate.append(from_distances)
            truth.append(np.sqrt(axes.eigenvalues) * axes.eigenvectors[index])
        shape = (len(local), axes.count)
        return Calibration(*(np.array(part).reshape(shape) for part in (local, estimate, truth)))

    def prepare(self, state, count: int) -> Fusion:
        """M, the linear axes and the fusion factors α (step 4), once per model and M."""
        axes = linear_axes(state)
        calibration = self.calibrate(state, axes, count)
        alpha = fusion_factors(calibration.local, calibration.estimate, calibration.truth, axes.count)
        return Fusion(neighbours=count, axes=axes, alpha=alpha)

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        neighbours = np.asarray(neighbours)
        if len(neighbours) < 2:
            return Preimage(
                indices=neighbours, weights=np.ones(len(neighbours)), objective=0.0, converged=True, iterations=0
            )
        if prepared is None or prepared.neighbours != len(neighbours):  # prepared for another M
            prepared = self.prepare(state, len(neighbours))
        axes, alpha = prepared.axes, prepared.alpha
        local, from_local, from_distances = self.estimates(state, axes, code, neighbours)
        move = alpha * (from_distances - from_local)
        # The frame is the local pre-image moved along the axes: its neighbours and R axis
        # frames, whatever the number of training frames. The objective reported is
        # |u − u_loc|²: how far the codes moved the local pre-image.
        return Preimage(
            indices=neighbours,
            weights=local,
            objective=float(move @ move),
            converged=True,
            iterations=0,
            move=move,
            axes=axes.frames,
        )


def fusion_factors(local: np.ndarray, estimate: np.ndarray, truth: np.ndarray, axes: int) -> np.ndarray:
    """α_j ∈ [0, 1] minimising ``Σ_i (local_ij + α_j (estimate_ij − local_ij) − truth_ij)²``.

    Parameters
    ----------
    local, estimate, truth : (m, R) ndarrays
        Coordinates of m calibration frames; empty when no frame could be calibrated, and then
        the local pre-image is kept (α = 0).
    """
    if len(local) == 0:
        return np.zeros(axes)
    difference = estimate - local
    denominator = np.sum(difference**2, axis=0)
    numerator = np.sum((truth - local) * difference, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.clip(alpha, 0.0, 1.0)
