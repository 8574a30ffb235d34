"""The transport pre-image: the code's nearest training frames moved toward one another, then
blended (``--solver transport``).

Every other solver's pre-image is a weighted sum of training frames, and where something moves
between two neighbours a weighted sum shows it twice, faded. Here the weights say *where*
between its M neighbours a code lies, and the neighbours are moved there before they are
blended (displacement interpolation, Bonneel et al. 2011; :mod:`kpcacli.numerics.displacement`):

1. the M nearest distinct training frames in reduced space, as for every solver
   (García-González et al. 2021, end of section 4); M = 2 by default, the pair that brackets
   the code: the nearest frame and, of the next ``BRACKET_SEARCH − 1`` nearest, the nearest
   one whose segment from it brackets the code (the code's nearest point on the segment lies
   strictly between them), the second nearest when none does (a code beyond the clip's ends).
   A clip that comes back (there and back, a hand closing and opening) holds two training
   frames of nearly the same view, and the two nearest are then that view twice: moving one
   onto the other gives the nearest frame back (:func:`bracketing_pair`);
2. their barycentric weights ``w ≥ 0, Σ w = 1``: the nearest point of the hull of their codes
   to the code (:func:`kpcacli.preimage.log.barycentric_weights`);
3. ``x* = Σ_i w_i · x_i moved by Σ_j w_j F_ij``, ``F_ij`` the dense displacement (optical flow)
   carrying neighbour i onto neighbour j; signals of one row or column are moved by exact 1-D
   optimal transport instead.

The fields are computed when a pair is first needed and kept for the model
(``BUDGETS.flow_cache``): consecutive codes share their pairs. Frames only: a point model's samples have no pixels to move.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict

import numpy as np

from ..numerics.displacement import (
    displacement,
    flow_view,
    grid_values,
    is_signal,
    scoring_grid,
    signal_barycentre,
    transported_frames,
    view_range,
)
from ..utils.budgets import BUDGETS, count_within
from ..utils.errors import KpcaError
from .base import Preimage, PreimageSolver, register
from .log import barycentric_weights

# The nearest training frames a code's bracketing pair is looked for among (M = 2): the two
# views on either side of the code, and their twins where the clip comes back.
BRACKET_SEARCH = 4


class Fields:
    """The displacement fields of one model's pairs of training frames, computed on first
    use and kept, the least recently used dropped beyond ``BUDGETS.flow_cache`` bytes.

    Every pixel's, or, for pre-images that are only scored (the solver choice), the pixels at
    the positions `at` alone (:func:`kpcacli.numerics.displacement.scoring_grid`); `sampled`
    then holds the flat indices of the frame values such pre-images hold."""

    def __init__(self, frame_shape: tuple[int, ...], count: int, at: np.ndarray | None = None):
        self.at, self.count = at, count  # count: M
        self.sampled = None if at is None else grid_values(at, frame_shape)
        pixels = int(np.prod(frame_shape[:2])) if at is None else at.shape[0] * at.shape[1]
        self.capacity = count_within(BUDGETS.flow_cache, pixels * 2 * 4)
        self._fields: OrderedDict[tuple[int, int], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, source: int, target: int, views) -> np.ndarray:
        """``F`` carrying training frame `source` onto `target`; ``views()`` gives the two
        frames' grey views when the field must be computed."""
        key = (source, target)
        with self._lock:
            if key in self._fields:
                self._fields.move_to_end(key)
                return self._fields[key]
        field = displacement(*views(), at=self.at)
        with self._lock:
            self._fields[key] = field
            while len(self._fields) > self.capacity:
                self._fields.popitem(last=False)
        return field


@register
class TransportSolver(PreimageSolver):
    name = "transport"
    default_neighbours = 2
    forms_pixels = True
    summary = (
        "the nearest training frames moved along the optical flow between them to where the code lies among "
        "them, then blended (displacement interpolation, Bonneel et al. 2011); frames only"
    )

    def check(self, state) -> None:
        if state.is_points:
            raise KpcaError("the transport solver moves the pixels of frames; a point model has none")

    def prepare(self, state, count: int) -> Fields:
        return Fields(state.frame_shape, count)

    def searched(self, count: int) -> int:
        return BRACKET_SEARCH if count == 2 else count

    def prepare_scoring(self, state, count: int) -> Fields:
        """Fields at a grid of pixels (:func:`kpcacli.numerics.displacement.scoring_grid`): the
        choice scores pre-images formed there alone (signals whole: they are short)."""
        if state.is_points or is_signal(state.frame_shape):
            return self.prepare(state, count)
        return Fields(state.frame_shape, count, scoring_grid(*state.frame_shape[:2]))

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        neighbours = np.asarray(neighbours)
        if prepared is not None and prepared.count == 2 and len(neighbours) > 2:
            neighbours = bracketing_pair(state.codes, code, neighbours)
        codes = state.codes[neighbours]
        weights = barycentric_weights(codes, code) if len(neighbours) > 1 else np.ones(1)
        preimage = self.transported(state, neighbours, weights, prepared)
        return dataclasses.replace(preimage, objective=float(np.linalg.norm(weights @ codes - code)))

    def transported(self, state, neighbours: np.ndarray, weights: np.ndarray, prepared=None) -> Preimage:
        """The training frames `neighbours` moved toward one another by `weights` (summing to
        one) and blended (step 3): the pre-image wherever the weights come from, reduced space
        here (≥ 0), parameter space for a parameter model's prediction, where one may be
        negative beyond the training range
        (:func:`kpcacli.estimators.parametric.predicted_frames`, :func:`transported_frames`)."""
        neighbours = np.asarray(neighbours)
        fields = prepared if prepared is not None else self.prepare(state, len(neighbours))
        signal = is_signal(state.frame_shape)
        # A frame of zero weight is neither moved nor moved toward (transported_frames): not
        # read either (a training frame's own code has its twin at weight 0, often in another
        # group of the store, whose decoding it would cost). Signals are read every one: they
        # share one floor (signal_barycentre).
        moving = np.arange(len(neighbours)) if signal else np.flatnonzero(weights != 0)
        ids = neighbours[moving]
        rows = np.stack([np.asarray(state.frames[int(row)]) for row in ids])
        if signal:
            pixels = signal_barycentre(rows, weights)
        else:
            frames = rows.reshape((len(rows),) + tuple(state.frame_shape))

            def field(i: int, j: int) -> np.ndarray:
                def views() -> tuple[np.ndarray, np.ndarray]:
                    low, high = view_range(rows[[i, j]])  # the pair's own: a field is the pair's
                    return flow_view(frames[i], low, high), flow_view(frames[j], low, high)

                return fields.get(int(ids[i]), int(ids[j]), views)

            pixels = transported_frames(frames, weights[moving], field, fields.at).reshape(-1)  # float32, as moved
        return Preimage(
            indices=neighbours,
            weights=weights,
            objective=0.0,
            converged=True,
            iterations=0,
            pixels=pixels,
            sampled=None if is_signal(state.frame_shape) else fields.sampled,
        )


def bracketing_pair(codes: np.ndarray, code: np.ndarray, nearest: np.ndarray) -> np.ndarray:
    """Of the training samples `nearest` (nearest first; their `codes` rows), the nearest and
    the first of the others whose segment from it brackets `code`: the nearest point of the
    segment to `code` lies strictly between its ends. The two nearest when none does."""
    first = int(nearest[0])
    for other in nearest[1:]:
        direction = codes[other] - codes[first]
        length2 = float(direction @ direction)
        if length2 > 0 and 0.0 < float((code - codes[first]) @ direction) < length2:
            return np.array([first, int(other)])
    return np.asarray(nearest[:2])
