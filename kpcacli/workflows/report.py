"""Pictures for `kpca eval --report DIR`, as in García-González et al. (2021), figures 3 and 4.

* ``<method>_median.png`` and ``<method>_worst.png``: original | reconstruction | error (the
  absolute error, amplified four times) for the held-out frame with the median and the lowest
  PSNR, each panel named above it and a title naming the method, the frame and its PSNR
  above the three (letters in proportion to the frame); ``<method>.png`` alone when
  one frame is held out (the median and the worst would be the same picture). These need
  only Pillow.
* ``<method>_against_transport.png``, whenever the transport solver was scored beside another
  solver (first or not, the model's choice or named): the held-out frame that the other solver
  of the highest mean PSNR decodes worst, as original | that method's pre-image | the
  transport pre-image, so that a blend's two faded copies and the moved frame can be seen
  side by side.
* with ``--mask-fraction``, ``completion_median.png`` and ``completion_worst.png`` instead:
  original | observed (hidden pixels black) | kpca reconstruct | each reference, for the held-out
  frames kpca completes with the median and the lowest PSNR; and ``estimate.png``, each frame's
  error estimate against its true error (matplotlib).
* ``codes.png``: the training codes joined in frame order with the held-out codes marked
  (3-D for k ≥ 3, 2-D for k = 2), as in their figure 3. This needs matplotlib, an optional
  extra: ``pip install 'kpcacli[plot]'``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from ..io.ownership import SOFTWARE, image_save_options
from ..numerics.metrics import data_range
from ..utils.atomic import atomic_file
from ..utils.errors import KpcaError
from .evaluation import REFERENCE_ROWS

PLOT_HINT = "plots need matplotlib, which is not installed: pip install 'kpcacli[plot]'"
ERROR_GAIN = 4.0


def require_matplotlib():
    """Import matplotlib with a headless backend, or raise KpcaError with the install hint."""
    try:
        import matplotlib
    except ImportError:
        raise KpcaError(PLOT_HINT) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def side_by_side(*frames: np.ndarray) -> np.ndarray:
    """Frames of one shape and dtype joined left to right, with a white gap between them."""
    first = frames[0]
    white = data_range(first.dtype)
    gap = np.full((first.shape[0], max(2, first.shape[1] // 100), *first.shape[2:]), white, dtype=first.dtype)
    parts = [frames[0]]
    for frame in frames[1:]:
        parts += [gap, frame]
    return np.hstack(parts)


def triptych_panels(original: np.ndarray, decoded: np.ndarray) -> list[np.ndarray]:
    """original, `decoded` (its encode-decode round trip, or its completion) and their absolute
    error amplified ``ERROR_GAIN`` times, each as 8-bit values."""
    to8 = 255.0 / data_range(original.dtype)
    first = original.astype(np.float64) * to8
    second = decoded.astype(np.float64) * to8
    error = ERROR_GAIN * np.abs(first - second)
    return [np.clip(np.rint(part), 0, 255).astype(np.uint8) for part in (first, second, error)]


def write_report(evaluation, directory: str | Path) -> list[str]:
    """Write the report pictures; returns the files written. Point models get only the plot."""
    directory = Path(directory)
    directory.mkdir(exist_ok=True)  # its parent was checked before the evaluation began
    if hasattr(evaluation, "masks"):  # kpca eval --mask-fraction
        return write_masked_report(evaluation, directory)
    written = []
    if not evaluation.state.is_points:
        for score in evaluation.scores:
            order = np.argsort(score.psnr, kind="stable")
            name = score.method.replace(" ", "-")
            chosen = [("median", order[len(order) // 2]), ("worst", order[0])] if len(order) > 1 else [("", order[0])]
            for label, position in chosen:
                path = directory / (f"{name}_{label}.png" if label else f"{name}.png")
                frame = int(evaluation.held_out[position])
                title = (
                    f"{score.method}: held-out frame {frame}{f' ({label})' if label else ''}, "
                    f"PSNR {score.psnr[position]:.2f} dB"
                )
                image = labelled_triptych(evaluation.originals[position], score.frames[position], title)
                with atomic_file(path) as out:
                    Image.fromarray(image).save(out, format="PNG", **image_save_options("PNG"))
                written.append(str(path))
        against = transport_picture(evaluation, directory)
        if against is not None:
            written.append(against)
    written.append(plot_codes(evaluation, directory / "codes.png"))
    return written


def transport_picture(evaluation, directory: Path) -> str | None:
    """``<method>_against_transport.png`` (module docstring), or None when the transport
    solver was not scored beside another."""
    scores = {score.method: score for score in evaluation.scores}
    others = [score for score in evaluation.scores if score.method not in ("transport", *REFERENCE_ROWS)]
    if "transport" not in scores or not others:
        return None
    first = max(others, key=lambda score: score.mean_psnr)  # the first of the best, on a tie
    moved = scores["transport"]
    position = int(np.argmin(first.psnr))
    original = evaluation.originals[position]
    to8 = 255.0 / data_range(original.dtype)
    panels = [
        np.clip(np.rint(frame.astype(np.float64) * to8), 0, 255).astype(np.uint8)
        for frame in (original, first.frames[position], moved.frames[position])
    ]
    names = (
        "original",
        f"{first.method}: {first.psnr[position]:.2f} dB",
        f"transport: {moved.psnr[position]:.2f} dB",
    )
    title = f"held-out frame {int(evaluation.held_out[position])}, the one {first.method} decodes worst"
    path = directory / f"{first.method.replace(' ', '-')}_against_transport.png"
    with atomic_file(path) as out:
        Image.fromarray(labelled_panels(panels, names, title)).save(out, format="PNG", **image_save_options("PNG"))
    return str(path)


def label_size(width: int) -> int:
    """Pixels of a label's letters over a panel `width` pixels wide: legible on a 320-pixel
    frame, in proportion on a 1920-pixel one (1/40 of the width, at least 14)."""
    return max(14, width // 40)


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)  # Pillow's own scalable font (Pillow >= 10.1)


def captioned(image: np.ndarray, text: str, size: int | None = None) -> np.ndarray:
    """A grey or RGB uint8 picture under a white band holding `text` in black, in letters
    `size` pixels high (default: :func:`label_size` of the picture), widened with white when
    the text is wider than the picture; the text is centred over the picture."""
    from PIL import ImageDraw

    font = _font(size or label_size(image.shape[1]))
    left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text, font=font)
    margin = max(4, (bottom - top) // 3)
    band = bottom - top + 2 * margin
    width = max(image.shape[1], right - left + 2 * margin)
    picture = Image.fromarray(image)
    canvas = Image.new(picture.mode, (width, image.shape[0] + band), "white")
    canvas.paste(picture, ((width - image.shape[1]) // 2, band))
    ImageDraw.Draw(canvas).text(((width - (right - left)) // 2 - left, margin - top), text, fill="black", font=font)
    return np.asarray(canvas)


def labelled_triptych(original: np.ndarray, decoded: np.ndarray, title: str, names=None) -> np.ndarray:
    """The :func:`triptych_panels` side by side, each named above it (`names`, default
    original | reconstruction | error xN), and `title` above the three, in letters in
    proportion to the frame (:func:`label_size`), so that they stay readable under a 1080p
    frame and the three names never run together."""
    names = names or ("original", "reconstruction", f"absolute error x{ERROR_GAIN:g}")
    return labelled_panels(triptych_panels(original, decoded), names, title)


def labelled_panels(panels: list[np.ndarray], names, title: str) -> np.ndarray:
    """8-bit `panels` of one size side by side, each named above it, `title` above them all,
    in letters in proportion to the panels (:func:`label_size`)."""
    size = label_size(panels[0].shape[1])
    labelled = [captioned(panel, name, size) for panel, name in zip(panels, names)]
    height = max(panel.shape[0] for panel in labelled)
    width = max(panel.shape[1] for panel in labelled)
    labelled = [_padded(panel, height, width) for panel in labelled]
    return captioned(side_by_side(*labelled), title, size)


def _padded(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """`image` on a white canvas of `height` x `width`, centred across, at the bottom."""
    canvas = np.full((height, width, *image.shape[2:]), 255, dtype=image.dtype)
    left = (width - image.shape[1]) // 2
    canvas[height - image.shape[0] :, left : left + image.shape[1]] = image
    return canvas


def plot_codes(evaluation, path: Path) -> str:
    """Training codes joined in frame order, held-out codes marked (García-González et al.
    2021, figure 3)."""
    plt = require_matplotlib()
    state = evaluation.state
    train = state.codes
    held = evaluation.codes
    k = train.shape[1]
    figure = plt.figure(figsize=(6, 5))
    if k >= 3:
        axes = figure.add_subplot(projection="3d")
        axes.plot(*train[:, :3].T, "--", color="tab:blue", linewidth=0.8)
        axes.scatter(*train[:, :3].T, color="tab:blue", s=12, label="training frames")
        axes.scatter(*held[:, :3].T, color="tab:red", s=18, label="held-out frames")
        axes.set_zlabel("z3")
    else:
        axes = figure.add_subplot()
        columns = [train[:, 0], train[:, 1] if k > 1 else np.zeros(len(train))]
        held_columns = [held[:, 0], held[:, 1] if k > 1 else np.zeros(len(held))]
        axes.plot(*columns, "--", color="tab:blue", linewidth=0.8)
        axes.scatter(*columns, color="tab:blue", s=12, label="training frames")
        axes.scatter(*held_columns, color="tab:red", s=18, label="held-out frames")
    axes.set_xlabel("z1")
    axes.set_ylabel("z2")
    axes.set_title(f"codes, k = {k} ({state.kernel.name} kernel)")
    axes.legend(loc="best", fontsize="small")
    with atomic_file(path) as out:
        figure.savefig(out, format="png", dpi=110, bbox_inches="tight", metadata={"Software": SOFTWARE})
    plt.close(figure)
    return str(path)


def write_masked_report(evaluation, directory: Path) -> list[str]:
    """The pictures of ``kpca eval --mask-fraction`` (module docstring)."""
    written = []
    if not evaluation.state.is_points:
        first = evaluation.scores[0]
        order = np.argsort(first.psnr, kind="stable")
        for label, position in (("median", order[len(order) // 2]), ("worst", order[0])):
            original = evaluation.originals[position]
            to8 = 255.0 / data_range(original.dtype)
            observed = np.where(evaluation.masks[position], original, 0)
            frames = [original, observed] + [score.frames[position] for score in evaluation.scores]
            panels = [np.clip(np.rint(np.asarray(f, dtype=np.float64) * to8), 0, 255).astype(np.uint8) for f in frames]
            names = ["original", f"observed ({100 * evaluation.fraction:.0f}% hidden)"] + [
                f"{score.method}: {score.psnr[position]:.2f} dB" for score in evaluation.scores
            ]
            title = f"held-out frame {int(evaluation.held_out[position])} ({label} for {first.method}), PSNR of the hidden pixels"
            path = directory / f"completion_{label}.png"
            with atomic_file(path) as out:
                Image.fromarray(labelled_panels(panels, names, title)).save(
                    out, format="PNG", **image_save_options("PNG")
                )
            written.append(str(path))
    written.append(plot_estimate(evaluation, directory / "estimate.png"))
    return written


def plot_estimate(evaluation, path: Path) -> str:
    """Each held-out frame's error estimate against its true error (root-mean-square at the
    hidden values), with Spearman's rank correlation in the title."""
    plt = require_matplotlib()
    figure = plt.figure(figsize=(5.5, 4.5))
    axes = figure.add_subplot()
    axes.scatter(evaluation.error, evaluation.estimate, s=14, color="tab:blue")
    axes.set_xlabel("true RMS error at the hidden values")
    axes.set_ylabel("estimate: RMS gap at the observed values")
    rank = evaluation.spearman
    axes.set_title(
        "error estimate" + (f": Spearman {rank:.2f}" if rank is not None else "") + f", {len(evaluation.error)} frames"
    )
    with atomic_file(path) as out:
        figure.savefig(out, format="png", dpi=110, bbox_inches="tight", metadata={"Software": SOFTWARE})
    plt.close(figure)
    return str(path)
