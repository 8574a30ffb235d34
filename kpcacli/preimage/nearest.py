"""The nearest training frame in reduced space: a baseline, and a floor for the other solvers."""

from __future__ import annotations

import numpy as np

from .base import Preimage, PreimageSolver, register


@register
class NearestSolver(PreimageSolver):
    name = "nearest"
    default_neighbours = 1
    takes_neighbours = False
    uses_instead = "it is the nearest training frame alone"
    summary = "the training frame whose code is nearest (a baseline)"

    def solve(self, state, code, neighbours, start=None, prepared=None) -> Preimage:
        distance = float(np.linalg.norm(state.codes[neighbours[0]] - code))
        return Preimage(
            indices=np.asarray(neighbours[:1]), weights=np.ones(1), objective=distance, converged=True, iterations=0
        )
