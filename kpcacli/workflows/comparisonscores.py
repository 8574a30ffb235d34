"""What ``kpca compare`` reports (:mod:`.comparison` reads and scores the frames): a frame
pair's scores, their summaries over the frames that differ, apart for the training and the
held-out frames when a model says which were which, and the text and JSON they print; the two
means of PSNR and the two kinds of frames are named as :mod:`.comparison`'s docstring
explains them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..numerics.metrics import finite_or_none, mean_psnr, psnr_of_mse

MEAN_PSNR_CONVENTION = "mean of per-frame PSNR over the frames that differ"
MSE_PSNR_CONVENTION = "PSNR of the mean squared error over every frame (ffmpeg's average)"
CHANNEL_CONVENTIONS = {
    True: "RGB: every channel (ffmpeg's psnr filter on RGB)",
    False: "grey (ITU-R 601 luma of colour frames)",
}


@dataclass
class FrameScore:
    """One pair of ``kpca compare``: the frame's number, both names, MSE, PSNR (dB) and SSIM."""

    index: int
    original: str
    other: str
    mse: float
    psnr: float
    ssim: float


@dataclass
class ScoreSummary:
    """PSNR and SSIM over a group of frame pairs (all of them, the training ones, the held-out
    ones), each mean under its stated convention."""

    frames: list[FrameScore]
    peak: float  # the data range of the frames: 255 for 8-bit

    @property
    def identical(self) -> int:
        """How many frames are identical to their original."""
        return sum(score.mse == 0 for score in self.frames)

    @property
    def mean_psnr(self) -> float:
        """:data:`MEAN_PSNR_CONVENTION`; inf only when every frame is identical."""
        return mean_psnr(score.psnr for score in self.frames)

    @property
    def psnr_of_mean_mse(self) -> float:
        """:data:`MSE_PSNR_CONVENTION`; inf only when every frame is identical."""
        return psnr_of_mse(float(np.mean([score.mse for score in self.frames])), self.peak)

    @property
    def worst(self) -> FrameScore:
        return min(self.frames, key=lambda score: score.psnr)

    @property
    def mean_ssim(self) -> float:
        return float(np.mean([score.ssim for score in self.frames]))

    @property
    def min_ssim(self) -> float:
        return min(score.ssim for score in self.frames)

    def as_dict(self) -> dict:
        worst = self.worst
        return {
            "frames": len(self.frames),
            "identical_frames": self.identical,
            "mean_psnr": finite_or_none(self.mean_psnr),
            "psnr_of_mean_mse": finite_or_none(self.psnr_of_mean_mse),
            "min_psnr": finite_or_none(worst.psnr),
            "worst_frame": worst.index,
            "mean_ssim": self.mean_ssim,
            "min_ssim": self.min_ssim,
        }

    def describe(self) -> str:
        """One line: ``35 frames: mean PSNR 50.87 dB, PSNR of mean MSE 49.20 dB, worst 45.10 dB (frame 12)``."""
        worst = self.worst
        if self.identical == len(self.frames):
            return f"{len(self.frames)} frame{'s' if len(self.frames) != 1 else ''}, every one identical"
        identical = f", {self.identical} identical" if self.identical else ""
        return (
            f"{len(self.frames)} frames{identical}: mean PSNR {decibels(self.mean_psnr)}, "
            f"PSNR of mean MSE {decibels(self.psnr_of_mean_mse)}, worst {decibels(worst.psnr)} (frame {worst.index})"
        )


@dataclass
class Comparison:
    """``kpca compare`` over two sequences: a score per frame pair, summaries of all of them and,
    with a model that records its training frames, of the training and held-out frames apart;
    the PSNR of the model's mean training frame for reference."""

    frames: list[FrameScore]
    peak: float
    colour: bool = False  # scored over every RGB channel, else grey
    channels_note: str | None = None  # which sequence held colour, when only one did
    training: frozenset[int] | None = None  # the training frames' numbers, when known
    split_note: str | None = None  # why training and held-out frames are not told apart
    mean_frame_psnr: float | None = None
    groups: dict[str, ScoreSummary] = field(init=False)

    def __post_init__(self) -> None:
        self.groups = {"all": ScoreSummary(self.frames, self.peak)}
        if self.training is not None:
            for name, chosen in (("training", True), ("held_out", False)):
                members = [score for score in self.frames if (score.index in self.training) is chosen]
                if members:
                    self.groups[name] = ScoreSummary(members, self.peak)

    @property
    def all(self) -> ScoreSummary:
        return self.groups["all"]

    @property
    def worst(self) -> FrameScore:
        return self.all.worst

    def format_text(self) -> str:
        every, worst = self.all, self.all.worst
        count = len(self.frames)
        if every.identical == count:
            lines = [f"frames compared      {count}, every one identical"]
        else:
            differ = count - every.identical
            identical = f" ({every.identical} identical)" if every.identical else ""
            lines = [
                f"frames compared      {count}{identical}",
                f"mean PSNR            {decibels(every.mean_psnr)}  mean over the "
                + (f"{differ} frames that differ" if differ != 1 else "1 frame that differs"),
                f"PSNR of mean MSE     {decibels(every.psnr_of_mean_mse)}  over every frame (ffmpeg's average)",
                f"worst PSNR           {decibels(worst.psnr)}  frame {worst.index} ({worst.original} | {worst.other})",
            ]
        lines += [f"mean SSIM            {every.mean_ssim:.4f}", f"worst SSIM           {every.min_ssim:.4f}"]
        lines.append(f"channels             {CHANNEL_CONVENTIONS[self.colour]}")
        if self.channels_note is not None:
            lines.append(f"                     {self.channels_note}")
        for name, label in (("training", "training frames"), ("held_out", "held-out frames")):
            if name in self.groups:
                lines.append(f"{label:<20} {self.groups[name].describe()}")
        if self.split_note is not None:
            lines.append(f"training / held-out  {self.split_note}")
        if self.mean_frame_psnr is not None:
            lines.append(f"mean training frame  {decibels(self.mean_frame_psnr)}  (mean PSNR against the originals)")
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """For ``--json``: the summary of every frame at the top level, each mean's convention,
        ``training`` and ``held_out`` summaries when the model tells them apart, and
        ``per_frame``. A PSNR is null where it is infinite (identical frames)."""
        result = {
            **self.all.as_dict(),
            "identical": self.all.identical == len(self.frames),
            "channels": "rgb" if self.colour else "grey",
            "conventions": {
                "mean_psnr": MEAN_PSNR_CONVENTION,
                "psnr_of_mean_mse": MSE_PSNR_CONVENTION,
                "channels": CHANNEL_CONVENTIONS[self.colour],
            },
        }
        if self.channels_note is not None:
            result["channels_note"] = self.channels_note
        for name in ("training", "held_out"):
            if name in self.groups:
                result[name] = self.groups[name].as_dict()
        if self.split_note is not None:
            result["split_note"] = self.split_note
        result["mean_frame_psnr"] = finite_or_none(self.mean_frame_psnr)
        result["per_frame"] = [
            {
                "index": f.index,
                "original": f.original,
                "other": f.other,
                "psnr": finite_or_none(f.psnr),
                "ssim": f.ssim,
                **({"training": f.index in self.training} if self.training is not None else {}),
            }
            for f in self.frames
        ]
        return result


def decibels(value: float) -> str:
    """A PSNR as the tables print it, six wide; an infinite one says the frames are identical."""
    return f"{value:6.2f} dB" if np.isfinite(value) else "   inf dB (identical)"
