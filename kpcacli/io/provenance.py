"""Where a model's training frames came from: their numbers, the --frames choice, the source's
frame rate and size.

None of it enters the mathematics; it is what a video user needs afterwards: which frames of
the clip the model saw (``kpca info``), the rate to write decoded video at (``kpca decode``
and ``kpca denoise`` keep it), and the source's bytes to set the model and the codes against
(``kpca fit`` and ``kpca info`` report the ratios). Models written before it existed have
none; every reader treats it as optional.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..utils.errors import ModelFileError


@dataclass(frozen=True)
class Provenance:
    """The training frames' origin.

    Attributes
    ----------
    frame_indices : tuple of int
        Each training frame's number among all the sources' frames, 0-based, in row order:
        what ``--frames`` counts (with landmarks, only the chosen frames' numbers).
    source_frames : int or None
        How many frames the sources held in all, before ``--frames`` (None: not counted).
    selection : str or None
        The ``--frames`` text the fit was given (None: every frame).
    frame_rate : float or None
        The first video source's frame rate in frames per second (None: images or points).
    source_bytes : int or None
        The total size of the source files (None: standard input, whose size is unknown).
    """

    frame_indices: tuple[int, ...]
    source_frames: int | None = None
    selection: str | None = None
    frame_rate: float | None = None
    source_bytes: int | None = None

    def as_attributes(self) -> dict:
        """The JSON-ready form stored in a model's attributes."""
        return {
            "frame_indices": [int(i) for i in self.frame_indices],
            "source_frames": self.source_frames,
            "selection": self.selection,
            "frame_rate": self.frame_rate,
            "source_bytes": self.source_bytes,
        }

    @classmethod
    def from_attributes(cls, value, n: int) -> Provenance:
        """Read back :meth:`as_attributes` for a model of `n` training frames.

        Raises
        ------
        ModelFileError
            When any entry has the wrong type or range.
        """
        if not isinstance(value, dict):
            raise ModelFileError(f"provenance must be a mapping. Got {type(value).__name__} instead.")
        indices = value.get("frame_indices")
        if not (
            isinstance(indices, list)
            and len(indices) == n
            and all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in indices)
        ):
            raise ModelFileError(
                f"provenance.frame_indices must be {n} non-negative integers. Got another value instead."
            )
        source_frames = _optional_count(value, "source_frames")
        if source_frames is not None and indices and max(indices) >= source_frames:
            raise ModelFileError(
                f"provenance.frame_indices must be below source_frames ({source_frames}). Got {max(indices)} instead."
            )
        selection = value.get("selection")
        if selection is not None and not isinstance(selection, str):
            raise ModelFileError("provenance.selection must be a string or null. Got another value instead.")
        rate = value.get("frame_rate")
        if rate is not None and not (
            isinstance(rate, (int, float)) and not isinstance(rate, bool) and math.isfinite(rate) and rate > 0
        ):
            raise ModelFileError(f"provenance.frame_rate must be a positive number or null. Got {rate!r} instead.")
        return cls(
            frame_indices=tuple(indices),
            source_frames=source_frames,
            selection=selection,
            frame_rate=None if rate is None else float(rate),
            source_bytes=_optional_count(value, "source_bytes"),
        )

    def describe_frames(self) -> str:
        """``frames 0–68 of 70``, ``frames 0, 2, … 68 (35 of 70, step 2), --frames ::2``: for ``info``."""
        indices = self.frame_indices
        of = f" of {self.source_frames}" if self.source_frames is not None else ""
        steps = {b - a for a, b in zip(indices, indices[1:])}
        if len(indices) == 1:
            text = f"frame {indices[0]}{of}"
        elif steps == {1}:
            text = f"frames {indices[0]}–{indices[-1]}{of}"
        elif len(steps) == 1 and min(steps) > 0:
            text = f"frames {indices[0]}, {indices[1]}, … {indices[-1]} ({len(indices)}{of}, step {steps.pop()})"
        else:
            shown = ", ".join(str(i) for i in indices[:6])
            text = f"frames {shown}{', …' if len(indices) > 6 else ''} ({len(indices)}{of})"
        return text + (f", --frames {self.selection}" if self.selection else "")


def _optional_count(value: dict, name: str) -> int | None:
    count = value.get(name)
    if count is None:
        return None
    if not isinstance(count, int) or isinstance(count, bool) or count < 0:
        raise ModelFileError(f"provenance.{name} must be a non-negative integer or null. Got {count!r} instead.")
    return count
