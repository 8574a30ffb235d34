"""Render the synthetic "hand closing and opening" sequence used as sample data.

The numerical test of García-González et al. (2021, section 5) uses a video of an open hand that
closes and opens once: 69 training frames plus one held-out frame from the middle, 1080 x 1920
grey pixels. This script renders a sequence of the same kind: a shaded palm with five
three-jointed fingers, lit from the upper left, over a textured background. One parameter,
the opening of the hand, drives every frame, so the sequence lies on a one-dimensional
nonlinear manifold, as in the paper.

Usage::

    python sample_data/make_hand.py -o sample_data/hand   # the committed sample (320 x 180)
    python sample_data/make_hand.py -o /tmp/hand_hd --height 1080 --width 1920
    python sample_data/make_hand.py -o /tmp/long --height 540 --width 960 --frames 1104
    python sample_data/make_hand.py -o /tmp/colour --colour           # RGB frames

The output is deterministic: the same arguments give byte-identical PNGs.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
from pathlib import Path

import numpy as np
from PIL import Image

N_FRAMES = 70

# Finger layout in units of the palm width: base position (x, y) on the palm's top edge,
# direction of the extended finger (degrees from vertical, positive = towards the thumb side),
# phalanx lengths and radius.
FINGERS = [
    # x,     y,     angle, lengths,              radius
    (-0.36, -0.50, -14.0, (0.42, 0.27, 0.21), 0.095),  # little
    (-0.13, -0.56, -5.0, (0.52, 0.33, 0.24), 0.105),  # ring
    (0.11, -0.58, 2.0, (0.57, 0.35, 0.25), 0.110),  # middle
    (0.34, -0.54, 10.0, (0.50, 0.31, 0.23), 0.105),  # index
]
THUMB = (0.45, 0.12, 45.0, (0.38, 0.30, 0.24), 0.125)


def _capsule_sdf(px, py, ax, ay, bx, by, r):
    """Signed distance from pixel centres to a capsule (segment a-b with radius r)."""
    abx, aby = bx - ax, by - ay
    apx, apy = px - ax, py - ay
    denom = max(abx * abx + aby * aby, 1e-12)
    h = np.clip((apx * abx + apy * aby) / denom, 0.0, 1.0)
    return np.hypot(apx - h * abx, apy - h * aby) - r


def _ellipse_sdf(px, py, cx, cy, rx, ry):
    """Approximate signed distance to an axis-aligned ellipse (exact on the axes)."""
    q = np.hypot((px - cx) / rx, (py - cy) / ry)
    return (q - 1.0) * min(rx, ry)


def _finger_segments(base, angle_deg, lengths, closing, curl_gain):
    """Joint positions of one finger in palm units; `closing` in [0, 1].

    Each joint bends towards the viewer by up to ~80 degrees; seen from the front, a phalanx
    bent by the cumulative angle phi shows only cos(phi) of its length (foreshortening) and
    its tip moves down towards the palm.
    """
    x, y = base
    direction = np.deg2rad(angle_deg)
    points = [(x, y)]
    cumulative = 0.0
    for joint, length in enumerate(lengths):
        cumulative += closing * curl_gain[joint]
        projected = length * np.cos(cumulative)
        # Beyond 90 degrees the phalanx folds back over the palm.
        x = x + projected * np.sin(direction)
        y = y - projected * np.cos(direction)
        points.append((x, y))
    return points, cumulative


SKIN_RGB = np.array([1.0, 0.80, 0.66])  # the hand's colour, times its grey shading
FABRIC_RGB = np.array([0.62, 0.78, 1.0])  # the background's


def render_frame(t: float, height: int, width: int, colour: bool = False) -> np.ndarray:
    """Render frame at phase `t` in [0, 1) as a (height, width) uint8 array, or with `colour`
    a (height, width, 3) one: the same shading, a skin-coloured hand on blue fabric."""
    closing = 0.5 - 0.5 * np.cos(2.0 * np.pi * t)  # 0 open -> 1 closed -> 0 open
    scale = 0.30 * height  # palm half-width unit in pixels
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    # Palm units, origin at the palm centre, which sways a little as the hand closes.
    cx = 0.5 * width + 0.04 * scale * np.sin(2.0 * np.pi * t)
    cy = 0.68 * height + 0.10 * scale * closing
    px = (xs + 0.5 - cx) / scale
    py = (ys + 0.5 - cy) / scale

    palm = _ellipse_sdf(px, py, 0.0, 0.0, 0.52, 0.62)
    wrist = _capsule_sdf(px, py, 0.0, 0.4, 0.0, 2.0, 0.36)
    sdf = np.minimum(palm, wrist)
    depth_shadow = np.zeros_like(px)  # darkening from fingers curled towards the camera
    curl = (1.15, 1.45, 1.05)
    for base_x, base_y, angle, lengths, radius in FINGERS:
        points, bend = _finger_segments((base_x, base_y), angle, lengths, closing, curl)
        for (ax, ay), (bx, by) in zip(points[:-1], points[1:]):
            seg = _capsule_sdf(px, py, ax, ay, bx, by, radius)
            sdf = np.minimum(sdf, seg)
            inside = np.clip(-seg / radius, 0.0, 1.0)
            depth_shadow = np.maximum(depth_shadow, inside * 0.35 * np.sin(min(bend, np.pi / 2)))
        # Crease where the finger meets the palm.
        crease = _capsule_sdf(px, py, base_x - radius, base_y + 0.02, base_x + radius, base_y + 0.02, 0.0)
        depth_shadow = np.maximum(depth_shadow, 0.18 * np.exp(-((crease / 0.02) ** 2)))
    # The thumb sweeps across the palm as the hand closes.
    thumb_angle = THUMB[2] + 50.0 * closing
    points, _ = _finger_segments(THUMB[:2], thumb_angle, THUMB[3], 0.6 * closing, (0.6, 0.8, 0.6))
    for (ax, ay), (bx, by) in zip(points[:-1], points[1:]):
        sdf = np.minimum(sdf, _capsule_sdf(px, py, ax, ay, bx, by, THUMB[4]))

    # Anti-aliased coverage: one pixel of soft edge.
    pixel = 1.0 / scale
    coverage = np.clip(0.5 - sdf / pixel, 0.0, 1.0)
    # Rounded shading: brightness grows with depth inside the silhouette, lit from upper left.
    interior = np.sqrt(np.clip(-sdf / 0.12, 0.0, 1.0))
    light = 0.55 + 0.35 * interior - 0.12 * (px - py) / 1.5
    skin = np.clip(light - depth_shadow, 0.05, 1.0) * 235.0

    # Background: a soft vertical gradient with a fixed fabric-like texture.
    rng = np.random.default_rng(20210114)
    texture = rng.normal(0.0, 1.0, size=(height // 4 + 1, width // 4 + 1))
    texture = np.kron(texture, np.ones((4, 4)))[:height, :width]
    background = 60.0 + 40.0 * ys / height + 4.0 * texture
    shadow = np.clip(0.5 - (sdf - 0.05) / (8 * pixel), 0.0, 1.0)  # contact shadow, offset
    background = background * (1.0 - 0.25 * np.roll(np.roll(shadow, 6, axis=0), 6, axis=1))

    if colour:
        coverage, skin, background = coverage[..., None], skin[..., None] * SKIN_RGB, background[..., None]
        background = background * FABRIC_RGB * 1.3
    image = coverage * skin + (1.0 - coverage) * background
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def _write(job: tuple[int, int, int, int, str, bool]) -> None:
    index, frames, height, width, folder, colour = job
    frame = render_frame(index / frames, height, width, colour)
    Image.fromarray(frame).save(Path(folder) / f"hand_{index:03d}.png", optimize=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        default=argparse.SUPPRESS,
        help="folder for hand_000.png, hand_001.png, ... (created; the committed sample is sample_data/hand)",
    )
    parser.add_argument("--height", type=int, default=180, help="frame height in pixels")
    parser.add_argument("--width", type=int, default=320, help="frame width in pixels")
    parser.add_argument("--frames", type=int, default=N_FRAMES, help="frames in one close-and-open cycle")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes rendering frames")
    parser.add_argument("--colour", action="store_true", help="RGB frames: a skin-coloured hand on blue fabric")
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    jobs = [(i, args.frames, args.height, args.width, str(args.output), args.colour) for i in range(args.frames)]
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            pool.map(_write, jobs, chunksize=4)
    else:
        for job in jobs:
            _write(job)
    print(f"wrote {args.frames} frames of {args.width}x{args.height} pixels to {args.output}")


if __name__ == "__main__":
    main()
