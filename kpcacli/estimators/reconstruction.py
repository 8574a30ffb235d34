"""Whole frames from part of them: codes and pixels of frames seen at some of their values.

A frame is seen through a mask (True where observed: pixels, or a point's features); the model
gives back the rest. The codes are those of the whole frame, found by alternating between the
two maps the model has, as gappy POD alternates between projection and refill (Everson and
Sirovich 1995), here through the kernel model and its pre-images:

1. the hidden values start as those of the training frame nearest on the observed values;
2. each round encodes the whole frame (eqs. 29–30), decodes the codes (the model's pre-image)
   and refills the hidden values from the pre-image, the observed values kept as given;
3. the rounds stop when the hidden values change by less than ``CHANGE_TOLERANCE`` of the
   training frames' root-mean-square value, or after `rounds`;
4. of the candidates (the nearest training frame, the model's frame between the two nearest,
   and each round's pre-image) the one that agrees best with the frame where it is observed
   fills its hidden values.

The rounds can walk away from a good start (a blend of frames that fits the observed values
worse, and puts what moves in two places), and nothing in them checks that they did better:
step 4 does, with what the frame says, so a completion is never further from the observed
values than the nearest training frame is. The observed agreement ranks the candidates as
their error at the hidden values does (docs/reconstruct.md). The codes kept are the chosen
candidate's: a round's, the two nearest frames' codes between them, or the nearest training
frame's own. From sparse readings (sensors) the rounds cannot leave the nearest frame, whose
codes the readings barely move; the frame between the two nearest, fitted to the readings and
decoded by the model's solver (transport where things move), is what gains there.

Evaluating the kernel on the observed values alone (the training frames restricted to them) was
measured beside this and decodes the hidden pixels worse on all five real sequences
(docs/reconstruct.md).

Each frame also gets an estimate of its error without ground truth
(:attr:`Reconstruction.estimate`): the root-mean-square difference, on its observed values,
between the frame as given and the candidate kept. A frame the model cannot represent where it
is seen is one it fills in badly where it is not.

For integer frames every round is exact (products of integers; pre-images rounded to the
frames' dtype), and the candidates are compared by exact sums of squared integers (the first of
equals kept), so the same frames and masks give the same bytes on any machine.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..model.state import FittedState
from ..model.validation import check_observed_rows
from ..numerics.gram import CrossProducts, frame_products
from ..numerics.hidden import HiddenValues
from ..preimage.choice import prepared_for
from ..preimage.decoding import decoded_by
from ..preimage.synthesis import to_frame_dtype
from ..utils.errors import InputWarning
from ..utils.hyperparameters import check

# A round that changes the hidden values by less than this fraction of the training frames'
# root-mean-square value ends the rounds: the pre-images of 8-bit frames are whole grey levels,
# and rounds below a third of a level (8-bit frames) no longer change the result visibly
# (docs/reconstruct.md).
CHANGE_TOLERANCE = 3e-3
DEFAULT_ROUNDS = 8  # enough on the real sequences measured (docs/reconstruct.md)
# Labels of the candidates of step 4 (:attr:`Reconstruction.kept`); a round's is "round N".
NEAREST = "nearest"
BETWEEN = "between"


@dataclass
class Reconstruction:
    """Frames completed from their observed values (:func:`reconstruct`).

    Attributes
    ----------
    frames : (m, *frame_shape) ndarray
        The whole frames, in the training frames' dtype: the observed values as given and the
        hidden ones from the candidate kept (or that candidate everywhere, with `replace`).
    codes : (m, k) ndarray
        Each frame's codes: those of the candidate that filled its hidden values (the
        training frame's own codes where that frame was kept).
    estimate : (m,) ndarray
        The error estimate: root-mean-square difference between the observed values and the
        candidate kept there, in the frames' units (every frame has an observed value).
    kept : (m,) ndarray of str
        The candidate that filled each frame: ``"nearest"``, the training frame nearest on
        the observed values; ``"between"``, the model's frame between the two nearest
        (:func:`_between_nearest`); ``"round N"``, the pre-image of round N.
    rounds : (m,) ndarray of int
        Encode-decode rounds run for each frame (one when every value is observed: encoded and
        decoded once, for its codes and estimate).
    converged : (m,) ndarray of bool
        Whether the last round changed the hidden values by less than the tolerance.
    """

    frames: np.ndarray
    codes: np.ndarray
    estimate: np.ndarray
    rounds: np.ndarray
    converged: np.ndarray
    kept: np.ndarray


@dataclass(frozen=True)
class ReconstructOptions:
    """How frames are completed (:func:`reconstruct`'s options), to hand to an engine."""

    replace: bool = False
    rounds: int = DEFAULT_ROUNDS
    solver: str | None = None
    neighbours: int | None = None

    def run(self, state: FittedState, frames: np.ndarray, observed: np.ndarray) -> Reconstruction:
        """The rounds (:func:`reconstruct_rows`) with these options, on an engine, for `frames`
        (m, ...) and where each is observed, (m, d) bool, as the workflow feeding the engine
        checked them (:func:`checked_observed_rows`, which warned where it runs: a worker's
        warning would be lost)."""
        rows = np.asarray(frames).reshape(len(frames), -1)
        return reconstruct_rows(
            state,
            rows,
            observed,
            replace=self.replace,
            rounds=self.rounds,
            solver=self.solver,
            neighbours=self.neighbours,
        )


def reconstruct(
    state: FittedState,
    frames,
    mask=None,
    *,
    replace: bool = False,
    rounds: int = DEFAULT_ROUNDS,
    solver: str | None = None,
    neighbours: int | None = None,
) -> Reconstruction:
    """Whole frames from the values of `frames` where `mask` is True.

    Parameters
    ----------
    state : FittedState
    frames : (m, ...) array-like
        Frames of the model's shape (one frame is accepted). Hidden values are ignored and
        may be NaN.
    mask : array-like of bool, optional
        True where observed: one frame's shape (every frame the same mask), or one mask per
        frame; a colour model also takes a mask of height x width for all three channels.
        Default: where `frames` is not NaN.
    replace : bool
        Give back the candidate kept everywhere, the observed values too: the pre-image of
        the codes, or the nearest training frame itself (:attr:`Reconstruction.kept`).
    rounds : int
        The most encode-decode rounds (the module docstring).
    solver, neighbours :
        The pre-image solver and its M (:meth:`kpcacli.FrameModel.decode`).
    """
    rows, observed = checked_observed_rows(state, frames, mask)
    return reconstruct_rows(state, rows, observed, replace=replace, rounds=rounds, solver=solver, neighbours=neighbours)


def reconstruct_rows(
    state: FittedState,
    rows: np.ndarray,
    observed: np.ndarray,
    *,
    replace: bool = False,
    rounds: int = DEFAULT_ROUNDS,
    solver: str | None = None,
    neighbours: int | None = None,
) -> Reconstruction:
    """:func:`reconstruct`'s rounds on frames checked already (:func:`checked_observed_rows`):
    `rows` (m, d), their values where hidden ignored (0 or NaN), and `observed` (m, d) bool."""
    rounds = check("rounds", rounds)
    method = prepared_for(state, solver, neighbours)  # auto resolved once, for every round
    k = state.n_components
    seen = observed.sum(axis=1)
    hidden = ~observed
    filled = np.where(observed, rows, 0.0)
    groups = _grouped(state, hidden)
    # y·x_j for every frame y and training frame x_j, kept as the hidden values change: first
    # with the hidden values at 0, which is also the observed part's product.
    dots, order = _observed_products(state, filled, groups)
    nearest = order[:, 0]
    nearest_frames = np.asarray(state.frames[nearest], dtype=np.float64)  # read once: a store may decode them
    change = np.where(hidden, nearest_frames, 0.0)
    tolerance = CHANGE_TOLERANCE * np.sqrt(np.mean(state.squared_norms) / state.frames.shape[1])
    # Step 4's candidates, offered as they come; a frame seen whole keeps its own codes, from
    # the first round.
    kept = _Kept(filled, observed, k)
    partial = np.flatnonzero(hidden.any(axis=1))
    kept.offer(partial, nearest_frames[partial], state.codes[nearest[partial]], NEAREST)
    if order.shape[1] > 1 and len(partial):
        between = _between_nearest(
            state, filled[partial], observed[partial], order[partial], nearest_frames[partial], method
        )
        kept.offer(partial, *between, BETWEEN)
    codes = np.zeros((len(rows), k))
    pictures = np.empty_like(filled)
    ran = np.zeros(len(rows), dtype=int)
    converged = np.zeros(len(rows), dtype=bool)
    active = np.arange(len(rows))
    filled += change
    for _ in range(rounds):
        _add_change(state, groups, active, change, dots)
        codes[active] = state.codes_of_products(_cross_products(state, filled[active], dots[active]))
        pictures[active] = np.stack(list(decoded_by(state, codes[active], method))).reshape(len(active), -1)
        ran[active] += 1
        kept.offer(active, pictures[active], codes[active], [f"round {r}" for r in ran[active]])
        change[active] = np.where(hidden[active], pictures[active] - filled[active], 0.0)
        moved = np.sqrt(np.sum(change[active] ** 2, axis=1) / np.maximum(hidden[active].sum(axis=1), 1))
        converged[active] = moved <= tolerance
        filled[active] = np.where(hidden[active], pictures[active], filled[active])
        active = active[~converged[active]]
        change[converged] = 0.0
        if not len(active):
            break
    whole = kept.pictures if replace else np.where(observed, filled, kept.pictures)
    whole = to_frame_dtype(whole, state.frames.dtype)  # readings may be off the grid
    return Reconstruction(
        frames=whole.reshape(len(rows), *state.frame_shape),
        codes=kept.codes,
        estimate=np.sqrt(kept.errors / seen),
        rounds=ran,
        converged=converged,
        kept=kept.labels,
    )


class _Kept:
    """Step 4: for each of m frames, the candidate nearest the frame where it is observed so
    far, its codes, its squared error there and its label. Errors are sums of squares formed
    directly (exact for integer frames); a candidate replaces the one kept only when strictly
    nearer, so the first of equals stays."""

    def __init__(self, given: np.ndarray, observed: np.ndarray, k: int):
        self.given, self.observed = given, observed  # the frames (0 where hidden), where observed
        m = len(given)
        self.pictures = np.zeros_like(given)
        self.codes = np.zeros((m, k))
        self.errors = np.full(m, np.inf)
        self.labels = np.full(m, "", dtype=object)

    def offer(self, frames: np.ndarray, pictures, codes, labels) -> None:
        """Candidates `pictures` (len(frames), d) with their `codes` for `frames` (indices),
        labelled `labels` (one label, or one each)."""
        if not len(frames):
            return
        pictures = np.asarray(pictures, dtype=np.float64).reshape(len(frames), -1)
        gaps = pictures - self.given[frames]
        gaps *= self.observed[frames]  # 0 where hidden
        errors = np.einsum("ij,ij->i", gaps, gaps)
        nearer = errors < self.errors[frames]
        chosen = frames[nearer]
        self.errors[chosen] = errors[nearer]
        self.pictures[chosen] = pictures[nearer]
        self.codes[chosen] = np.asarray(codes, dtype=np.float64).reshape(len(frames), -1)[nearer]
        self.labels[chosen] = labels if isinstance(labels, str) else np.asarray(labels, dtype=object)[nearer]


def _between_nearest(state: FittedState, given, observed, order, first, method) -> tuple[np.ndarray, np.ndarray]:
    """The model's frames between each frame's two training frames nearest on its observed
    values, a and b: the codes ``(1 − t) z_a + t z_b`` with t in [0, 1] the point of the
    segment from a to b nearest the observed values, ``t = (y − x_a)·(x_b − x_a) / |x_b − x_a|²``
    over them, decoded by `method` (the model's solver, prepared). A frame between two training
    frames in time lies between them; the transport solver moves what moves there instead of
    blending two frames, and from sparse readings the rounds cannot leave the nearest frame
    (the readings barely move its codes). `first`: the nearest training frames, (m, d) float64,
    read already. Returns the pictures (m, d) and their codes (m, k)."""
    second = np.asarray(state.frames[order[:, 1]], dtype=np.float64)
    step = np.where(observed, second - first, 0.0)
    lengths = np.einsum("ij,ij->i", step, step)
    along = np.einsum("ij,ij->i", np.where(observed, given - first, 0.0), step)
    t = np.clip(np.divide(along, lengths, out=np.zeros_like(along), where=lengths > 0), 0.0, 1.0)
    codes = (1.0 - t)[:, None] * state.codes[order[:, 0]] + t[:, None] * state.codes[order[:, 1]]
    pictures = np.stack(list(decoded_by(state, codes, method))).reshape(len(given), -1)
    return pictures, codes


def nearest_on_observed(state: FittedState, frames, mask=None) -> np.ndarray:
    """For each of `frames` seen at `mask` (as :func:`reconstruct` takes them), the training
    frame nearest on its observed values, ``Σ_observed (x_p − x_jp)²`` smallest (the first of
    equals; exact for integer frames): where the rounds start, and what a reduced model gives
    without them. Returns (m,) indices into the training frames."""
    rows, observed = check_observed_rows(state, frames, mask)
    groups = _grouped(state, ~observed)
    return _observed_products(state, np.where(observed, rows, 0.0), groups)[1][:, 0]


def _observed_products(state: FittedState, filled: np.ndarray, groups: list) -> tuple[np.ndarray, np.ndarray]:
    """The products (m, n) of `filled` (the frames, 0 where hidden) with the training frames,
    and each frame's two training frames nearest on its observed values, (m, 2), the nearest
    first (the first of equals; one column when there is one training frame): one pass over the
    store, and one over the hidden values of each mask for ``Σ_hidden x_jp²``."""
    dots = frame_products(state.frames, filled.T).T
    hidden_squares = np.empty_like(dots)
    for group in groups:
        hidden_squares[group.members] = group.values.squared_sums(state.frames, group.gathered)
    observed_distances = (
        np.sum(filled * filled, axis=1)[:, None] - 2.0 * dots + state.squared_norms[None, :] - hidden_squares
    )
    return dots, np.argsort(observed_distances, axis=1, kind="stable")[:, :2]


def checked_observed_rows(state: FittedState, frames, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """`frames` and `mask` checked (:func:`kpcacli.model.validation.check_observed_rows`): the
    frames as (m, d) rows and where each is observed; a warning when a frame has fewer observed
    values than k."""
    rows, observed = check_observed_rows(state, frames, mask)
    k = state.n_components
    seen = observed.sum(axis=1)
    if np.any(seen < k):
        first = int(np.argmax(seen < k))
        warnings.warn(
            f"frame {first} has {int(seen[first])} observed values, fewer than the model's k = {k}: its codes "
            "are underdetermined, and the hidden values only one of many fits",
            InputWarning,
            stacklevel=3,
        )
    return rows, observed


@dataclass
class _Group:
    """Frames under one mask: where they are hidden, which they are, and the training frames at
    their hidden values when gathered (:meth:`kpcacli.numerics.hidden.HiddenValues.gathered`)."""

    values: HiddenValues
    members: np.ndarray
    gathered: np.ndarray | None


def _grouped(state: FittedState, hidden: np.ndarray) -> list[_Group]:
    """The frames' hidden values (m, d), one group for each distinct mask: frames under one
    mask are read together."""
    groups: dict[bytes, list[int]] = {}
    for index, row in enumerate(hidden):
        groups.setdefault(np.packbits(row).tobytes(), []).append(index)
    width = hidden.shape[1] // (1 if state.is_points else state.frame_shape[0])
    out = []
    for members in groups.values():
        values = HiddenValues.of(hidden[members[0]], width)
        out.append(_Group(values, np.array(members), values.gathered(state.frames)))
    return out


def _add_change(state: FittedState, groups: list, active: np.ndarray, change: np.ndarray, dots: np.ndarray) -> None:
    """The products with the training frames of the `change` of the `active` frames' hidden
    values, ``X_H Δ_H`` (a group of frames under one mask at a time), added to `dots`."""
    for group in groups:
        members = np.intersect1d(group.members, active)
        if len(members) and group.values.count:
            change_there = change[members][:, group.values.indices].T
            dots[members] += group.values.products(state.frames, change_there, group.gathered).T


def _cross_products(state: FittedState, rows: np.ndarray, dots: np.ndarray) -> CrossProducts:
    """:class:`kpcacli.numerics.gram.CrossProducts` of `rows` (m, d) from their dot products
    with the training frames, `dots` (m, n): ``(y − s)·(x_j − s) = y·x_j − t_j − y·s`` with
    ``t = (X − s) s`` (the Gram's), as :meth:`kpcacli.numerics.gram.LinearGram.cross` forms them."""
    gram = state.linear_gram
    origin = gram.origin.astype(np.float64)
    origin_dots = rows @ origin  # y·s
    shifted = dots - gram.origin_dots[None, :] - origin_dots[:, None]
    norms = np.einsum("ij,ij->i", rows, rows) - 2.0 * origin_dots + gram.origin_norm2
    return CrossProducts(gram, shifted, norms, origin_dots - gram.origin_norm2)
