"""The interface every pre-image solver implements, and the registry behind ``--solver``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    from ..model import KernelPCA


@dataclass
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
    """

    indices: np.ndarray
    weights: np.ndarray
    objective: float
    converged: bool
    iterations: int
    pixels: np.ndarray | None = None


@dataclass
class Start:
    """Where an iterative solver starts: the input itself when denoising (seed 002, section 3).

    Attributes
    ----------
    pixels : (d,) ndarray
        The input frame or point, float64.
    arguments : (n,) ndarray
        Kernel arguments between it and every training sample (squared distances for the
        Gaussian, dot products otherwise), already computed when it was encoded.
    """

    pixels: np.ndarray
    arguments: np.ndarray


class PreimageSolver(ABC):
    """A method mapping a code ``z*`` back to input space.

    Subclasses set :attr:`name` and implement :meth:`solve`; :meth:`check` refuses models the
    method does not apply to (e.g. a centred kernel for the log-discrepancy solver).
    """

    name: str = ""
    summary: str = ""
    default_neighbours: int = 10  # M when the caller does not choose

    def check(self, model: KernelPCA) -> None:
        """Raise a KpcaError when the solver cannot decode codes of `model`.

        The default accepts every model; solvers with requirements override it.
        """
        return None

    @abstractmethod
    def solve(self, model: KernelPCA, code: np.ndarray, neighbours: np.ndarray, start: Start | None = None) -> Preimage:
        """Find the pre-image of one code.

        Parameters
        ----------
        model : KernelPCA
            A fitted model.
        code : (k,) ndarray
            The code ``z*``.
        neighbours : (M,) ndarray of int
            Training rows nearest to `code` in reduced space, nearest first.
        start : Start, optional
            The input, when denoising: iterative solvers (fixed-point, gradient) start there;
            the others ignore it.
        """


SOLVERS: dict[str, type[PreimageSolver]] = {}


def register(cls: type[PreimageSolver]) -> type[PreimageSolver]:
    """Class decorator adding a solver to :data:`SOLVERS` under its ``name``."""
    SOLVERS[cls.name] = cls
    return cls


def get_solver(name: str) -> PreimageSolver:
    """An instance of the solver registered as `name`."""
    try:
        return SOLVERS[name]()
    except KeyError:
        raise ParameterError(f"solver must be one of {', '.join(sorted(SOLVERS))}. Got {name!r} instead.") from None
