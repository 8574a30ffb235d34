"""How far new frames or codes lie outside what a model was fitted on, for a one-line warning.

A kernel-PCA model describes the neighbourhood of its training frames. A frame unlike any of
them (another clip, a black frame) still gets codes: for the Gaussian kernel its kernel values
all but vanish and its codes sit near zero, which then decodes to some training frame without
a word. Codes far from every training code (typed by hand, scaled, or from a model of another
clip with the same k) decode to an extrapolation.

Both are measured against the training set's **reach**: the longest edge of the training
frames' (codes') minimum spanning tree (:func:`kpcacli.model.neighbours.reach`), the widest gap
between parts of the set, which a frame of the same clip can fall in. A frame (code) is far
when it lies farther than ``FAR_REACHES`` reaches from every training frame (code). A median
spacing would let the slow part of a clip whose camera speeds up call its fast frames far;
the largest nearest-other distance collapses on clips that pass each place twice (each
frame's nearest other is its twin); the tree's longest edge does neither.

Codes are held to less than frames: the codes of another stretch of the same texture lie among
the training codes, so decoding them is no extrapolation and draws no warning; ``kpca encode``
has already said that the frame itself is far. docs/quality.md gives the reaches measured on
the sample hand and a stand-in (``python benchmarks/experiments.py novelty``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAR_REACHES = 1.0


@dataclass(frozen=True)
class Novelty:
    """Each input's distance to the nearest training sample, in reaches of the training set.

    Attributes
    ----------
    what : str
        ``"frames"`` or ``"codes"``.
    reaches : (m,) ndarray
        Distance over the training set's reach, per input in order (inf where the reach is 0:
        every training sample the same).
    """

    what: str
    reaches: np.ndarray

    @classmethod
    def of(cls, what: str, distances: np.ndarray, reach: float) -> Novelty:
        distances = np.asarray(distances, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            reaches = distances / reach if reach > 0 else np.where(distances > 0, np.inf, 0.0)
        return cls(what, reaches)

    @property
    def far(self) -> np.ndarray:
        """Indices of the inputs more than ``FAR_REACHES`` from every training sample."""
        return np.flatnonzero(self.reaches > FAR_REACHES)

    def warning(self) -> str | None:
        """One line naming how many inputs are far and the farthest (by its row, counted from
        0 as ``--frames`` counts), or None when none is."""
        far = self.far
        if far.size == 0:
            return None
        worst = int(far[np.argmax(self.reaches[far])])
        unit = "frame" if self.what == "frames" else "code"
        consequence = (
            "their codes say little about them; was the model fitted on frames like these?"
            if self.what == "frames"
            else "their frames are extrapolations; were they encoded with this model?"
        )
        return (
            f"{far.size} of {len(self.reaches)} {self.what} lie far from every training {unit} (the farthest, "
            f"row {worst}, at {self.reaches[worst]:.3g} times the widest gap between training "
            f"{unit}s); {consequence}"
        )
