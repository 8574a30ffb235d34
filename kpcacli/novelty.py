"""How far new frames or codes lie outside what a model was fitted on, for a one-line warning.

A kernel-PCA model describes the neighbourhood of its training frames. A frame unlike any of
them (another clip, a black frame) still gets codes: for the Gaussian kernel its kernel values
all but vanish and its codes sit near zero, which then decodes to some training frame without
a word. Codes far from every training code (typed by hand, scaled, or from a model of another
clip with the same k) decode to an extrapolation. Both are measured in units of the typical
spacing: the median distance from a training frame (code) to its nearest other one
(:func:`kpcacli.neighbours.typical_spacing`).

On the sample hand (even frames train, k = 3 to 8, centred or not, Gaussian or linear), the
odd frames lie at most 0.83 frame spacings from a training frame and their codes at most 1.4
code spacings from a training code; a frame of another clip lies 16 frame spacings away, a
black frame 19, the hand flipped upside down 11, the hand under noise of σ = 20 grey levels
4; zero codes lie 4 to 370 code spacings away. ``FAR_SPACINGS = 3`` separates them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAR_SPACINGS = 3.0


@dataclass(frozen=True)
class Novelty:
    """Each input's distance to the nearest training sample, in typical spacings.

    Attributes
    ----------
    what : str
        ``"frames"`` or ``"codes"``.
    spacings : (m,) ndarray
        Distance over the typical spacing, per input in order (inf where the spacing is 0:
        every training sample the same).
    """

    what: str
    spacings: np.ndarray

    @classmethod
    def of(cls, what: str, distances: np.ndarray, spacing: float) -> Novelty:
        distances = np.asarray(distances, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            spacings = distances / spacing if spacing > 0 else np.where(distances > 0, np.inf, 0.0)
        return cls(what, spacings)

    @property
    def far(self) -> np.ndarray:
        """Indices of the inputs more than ``FAR_SPACINGS`` from every training sample."""
        return np.flatnonzero(self.spacings > FAR_SPACINGS)

    def warning(self) -> str | None:
        """One line naming how many inputs are far and the farthest (by its row of codes,
        counted from 1), or None when none is."""
        far = self.far
        if far.size == 0:
            return None
        worst = int(far[np.argmax(self.spacings[far])])
        unit = "frame" if self.what == "frames" else "code"
        consequence = (
            "their codes say little about them; was the model fitted on frames like these?"
            if self.what == "frames"
            else "their frames are extrapolations; were they encoded with this model?"
        )
        return (
            f"{far.size} of {len(self.spacings)} {self.what} lie far from every training {unit} (the farthest, "
            f"codes row {worst + 1}, at {self.spacings[worst]:.3g} times the typical {unit} spacing); {consequence}"
        )
