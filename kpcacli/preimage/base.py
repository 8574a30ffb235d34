"""The interface every pre-image solver implements, and the registry behind ``--solver``.

A solver takes the fitted state (:class:`kpcacli.model.state.FittedState`), never the estimator.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np

from ..model.state import FittedState
from ..numerics.linearaxes import AxisFrames
from ..utils.checks import check_choice
from ..utils.errors import KpcaError, ParameterError, ParameterWarning, param
from ..utils.hyperparameters import check
from .synthesis import preimage_vectors


@dataclass(kw_only=True)
class Preimage:
    """The result of one solve.

    Attributes
    ----------
    indices : (M,) ndarray of int
        Training rows the pre-image is built from (``x* = Σ_j w_j x^j``, eq. 31).
    weights : (M,) ndarray
        Their weights ``w_j``.
    objective : float
        The solver's objective at the solution.
    converged : bool
        Whether the solver met its convergence test.
    iterations : int
        Iterations (or function evaluations) used.
    pixels : (d,) ndarray, optional
        The pre-image itself, for solvers that work in pixel space; when None the pre-image
        is the weighted sum of the training rows.
    move : (R,) ndarray, optional
        A move along the linear-PCA axes `axes` added to the weighted sum (the ``distance``
        solver): ``x* = Σ_j w_j x^j + Σ_r move_r a_r``.
    axes : AxisFrames, optional
        The axes ``a_r`` as frames (:class:`kpcacli.numerics.linearaxes.AxisFrames`).
    sampled : (s,) ndarray of int, optional
        When `pixels` holds some of the pre-image's values only, their flat indices into the
        frame vector: a pre-image formed to be scored (:meth:`PreimageSolver.prepare_scoring`),
        never a frame to give back.
    """

    indices: np.ndarray
    weights: np.ndarray
    objective: float
    converged: bool
    iterations: int
    pixels: np.ndarray | None = None
    move: np.ndarray | None = None
    axes: AxisFrames | None = None
    sampled: np.ndarray | None = None

    def vector(self, state: FittedState) -> np.ndarray:
        """The pre-image as a float64 frame vector, (d,): its pixels, or its weighted sum."""
        if self.sampled is not None:
            raise ValueError("a pre-image formed at some of its pixels only (to be scored) is not a frame")
        if self.pixels is not None:
            return np.asarray(self.pixels, dtype=np.float64)
        return preimage_vectors(state, [self])[0]


@dataclass
class Start:
    """Where an iterative solver starts: the input itself when denoising (Schölkopf et al.
    1998, section 3).

    Attributes
    ----------
    pixels : (d,) ndarray or None
        The input frame or point, float64; None where only its kernel arguments are read (a
        frame of more values than the model has frames, in weight space).
    arguments : (n,) ndarray
        Kernel arguments between it and every training sample (squared distances for the
        Gaussian, dot products otherwise), already computed when it was encoded.
    """

    pixels: np.ndarray | None
    arguments: np.ndarray


class PreimageSolver(ABC):
    """A method mapping a code ``z*`` back to input space, in two steps: :meth:`prepare`, what
    the method computes once per model and M before any code (the distance solver's
    calibration, the learned solver's ridge map; nothing for most), then :meth:`solve` for
    each code, given what was prepared. A solver holds nothing itself: what it prepared is
    kept per model by :func:`prepared_solver`.

    Subclasses set :attr:`name`, :attr:`summary` (the ``--solver`` help is built from it) and
    implement :meth:`solve`; :meth:`check` refuses models the method does not apply to (e.g. a
    centred kernel for the log-discrepancy solver).
    """

    name: str = ""
    summary: str = ""
    default_neighbours: int = 10  # M when the caller does not choose
    # Whether M is the caller's to choose; a solver that builds its pre-images otherwise says how
    # (`uses_instead`), and then reads `default_neighbours` nearest training samples for itself.
    takes_neighbours: bool = True
    uses_instead: str = ""
    # Solvers that read every pixel of every training frame per iteration are left out of
    # `kpca eval`'s default set above this many pixels a frame (None: never).
    default_max_pixels: int | None = None
    # Whether the solver forms its pre-images' pixels itself (optical flow, L-BFGS in pixel
    # space) rather than as weights over training frames summed in one pass (eq. 31), the pass
    # a device runs (kpcacli/numerics/arraybackend.py).
    forms_pixels: bool = False

    def check(self, state: FittedState) -> None:
        """Raise a KpcaError when the solver cannot decode codes of `state`.

        The default accepts every model; solvers with requirements override it.
        """
        return None

    def prepare(self, state: FittedState, count: int):
        """What the solver computes once for `state` and M = `count`, before any code; None
        when it needs nothing."""
        return None

    def searched(self, count: int) -> int:
        """How many nearest training samples :meth:`solve` is given for M = `count`: M, but for
        a solver that chooses its M among more of them (transport's bracketing pair)."""
        return count

    def prepare_scoring(self, state: FittedState, count: int):
        """What :meth:`prepare` gives, for pre-images that are only scored against frames (the
        solver choice, :mod:`kpcacli.preimage.measurement`): a solver that forms pixels may form
        some of them alone (:attr:`Preimage.sampled`)."""
        return self.prepare(state, count)

    @abstractmethod
    def solve(
        self,
        state: FittedState,
        code: np.ndarray,
        neighbours: np.ndarray,
        start: Start | None = None,
        prepared=None,
    ) -> Preimage:
        """Find the pre-image of one code.

        Parameters
        ----------
        state : FittedState
            A fitted model's state.
        code : (k,) ndarray
            The code ``z*``.
        neighbours : (M,) ndarray of int
            Training rows nearest to `code` in reduced space, nearest first.
        start : Start, optional
            The input, when denoising: iterative solvers (fixed-point, gradient) start there;
            the others ignore it.
        prepared : optional
            What :meth:`prepare` gave for `state` and M; prepared here when None.
        """


SOLVERS: dict[str, type[PreimageSolver]] = {}


def register(cls: type[PreimageSolver]) -> type[PreimageSolver]:
    """Class decorator adding a solver to :data:`SOLVERS` under its ``name``."""
    SOLVERS[cls.name] = cls
    return cls


def get_solver(name: str) -> PreimageSolver:
    """An instance of the solver registered as `name`."""
    return SOLVERS[check_choice("solver", name, sorted(SOLVERS))]()


@dataclass(frozen=True)
class PreparedSolver:
    """A solver with what it prepared for one model and M: ``solve(state, code, neighbours,
    start)`` as :meth:`PreimageSolver.solve`, without preparing again."""

    solver: PreimageSolver
    count: int
    prepared: object = None

    @property
    def name(self) -> str:
        return self.solver.name

    def solve(
        self, state: FittedState, code: np.ndarray, neighbours: np.ndarray, start: Start | None = None
    ) -> Preimage:
        return self.solver.solve(state, code, neighbours, start, self.prepared)

    def preimage(
        self,
        state: FittedState,
        code: np.ndarray,
        start: Start | None = None,
        exclude_view_of: int | None = None,
        exclude_copies_of: int | None = None,
    ) -> Preimage:
        """The pre-image of `code`: its M nearest training samples in reduced space (distinct
        views; none of the view of training sample `exclude_view_of`, none of the copies of
        `exclude_copies_of`: :meth:`kpcacli.model.neighbours.NeighbourSearch.nearest`), then
        :meth:`solve` (García-González et al. 2021, end of section 4). The one path from a code
        to a pre-image: decode, denoise, eval, sweep and the solver choice call it."""
        searched = self.solver.searched(self.count)
        neighbours = state.neighbours.nearest(
            code, searched, exclude_view_of=exclude_view_of, exclude_copies_of=exclude_copies_of
        )
        return self.solve(state, code, neighbours, start)


# Prepared solvers, per fitted state (by identity, dropped with the state), name and M: the
# distance solver's calibration (an n x n eigendecomposition and up to 400 decodes) is made
# once, and every call for the same state, every batch of a decode and every Dask task on a
# worker holding the state reuses it.
_SOLVERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SOLVERS_LOCK = threading.Lock()


def check_solver_options(state: FittedState, name: str, neighbours: int | None, named: bool = False) -> PreimageSolver:
    """The solver `name`, after refusing one that is unknown or does not apply to `state`, and
    `neighbours` out of range, or given to a solver that takes none when the caller `named`
    the solver (rather than taking the model's choice, which :func:`prepared_solver` warns
    of): the checks of :func:`prepared_solver`, which a workflow may make before any work."""
    solver = SOLVERS[check_choice("solver", name, sorted(SOLVERS))]()
    check("neighbours", neighbours)
    solver.check(state)
    if named and neighbours is not None and not solver.takes_neighbours:
        raise ParameterError(f"{param('neighbours')} does not apply to the {solver.name} solver: {solver.uses_instead}")
    return solver


def neighbours_help() -> str:
    """Each solver's M by default, and the solvers that take none, for ``--neighbours``' help."""
    counts = ", ".join(
        f"{name}: {solver.default_neighbours}" for name, solver in sorted(SOLVERS.items()) if solver.takes_neighbours
    )
    others = [name for name, solver in sorted(SOLVERS.items()) if not solver.takes_neighbours]
    return f"{counts}; {', '.join(others[:-1])} and {others[-1]} take none"


def prepared_solver(state: FittedState, name: str, neighbours: int | None) -> tuple[PreparedSolver, int]:
    """The solver `name` for `state`, checked against it and prepared for it, and M (its
    default when `neighbours` is None, or when the solver takes none: `neighbours` is then
    warned of as unused). Prepared once per state, name and M. (The model's default solver:
    :func:`kpcacli.preimage.choice.solver_for`.)"""
    solver = check_solver_options(state, name, neighbours)
    if neighbours is not None and not solver.takes_neighbours:
        warnings.warn(
            f"{param('neighbours')} {neighbours} is not used by the {solver.name} solver: {solver.uses_instead}",
            ParameterWarning,
            stacklevel=2,
        )
        neighbours = None
    count = solver.default_neighbours if neighbours is None else int(neighbours)
    if neighbours is not None and count > state.n_samples:
        warnings.warn(
            f"neighbours = {count} is more than the model's {state.n_samples} training frames: all "
            f"{state.n_samples} are used, each decode reading every one",
            ParameterWarning,
            stacklevel=1,
        )
    key = (solver.name, min(count, state.n_samples))
    with _SOLVERS_LOCK:  # one preparation per key, even when threads decode at once
        prepared = _SOLVERS.setdefault(state, {}).get(key)
        if prepared is None:
            prepared = PreparedSolver(solver, key[1], solver.prepare(state, key[1]))
            _SOLVERS[state][key] = prepared
    return prepared, count


def scoring_solver(state: FittedState, name: str) -> PreparedSolver:
    """The solver `name` at its default M, prepared for `state` by
    :meth:`PreimageSolver.prepare_scoring` (not kept: `state` is a model the solver choice
    fits for one fold)."""
    solver = check_solver_options(state, name, None)
    count = min(solver.default_neighbours, state.n_samples)
    return PreparedSolver(solver, count, solver.prepare_scoring(state, count))


def applicable_solvers(state: FittedState, default: str, all_sizes: bool = False) -> tuple[list[str], list[str]]:
    """The solvers that accept `state`, `default` first, and those left out for the frame size.

    Returns
    -------
    names : list of str
    left_out : list of str
        Solvers that apply but are left out because frames have more pixels than their
        ``default_max_pixels`` (unless `all_sizes`).
    """
    names, left_out = [], []
    for name in [default, *sorted(SOLVERS)]:
        if name in names or name in left_out:
            continue
        solver = SOLVERS[name]()
        try:
            solver.check(state)
        except KpcaError:
            continue
        limit = solver.default_max_pixels
        if not all_sizes and limit is not None and state.frames.shape[1] > limit:
            left_out.append(name)
        else:
            names.append(name)
    return names, left_out
