"""Stand-ins for real video: real photographs panned, zoomed and rotated frame by frame.

Real footage is scarce on this machine; scikit-image ships real photographs, and a camera
moving over a real scene is what most clips are. Each sequence samples a window of a photo
along a smooth trajectory with cubic interpolation (sub-pixel motion, as a real camera gives).
Trajectories either go back and forth once (like the paper's hand, which closes and opens) or
run one way. scikit-image is a benchmark-only dependency (`pip install -e '.[bench]'`).
"""

from __future__ import annotations

import numpy as np
from PIL import Image
from scipy import ndimage

SIZE = (120, 160)  # height, width of every frame
N_FRAMES = 120  # 60 training frames under the even/odd hold-out, so k = 40 is below n


def _photo(name: str) -> np.ndarray:
    from skimage import data

    image = data.stereo_motorcycle()[0] if name == "motorcycle" else getattr(data, name)()
    if image.ndim == 3:
        image = np.asarray(Image.fromarray(image).convert("L"))
    return image.astype(np.float64)


def _render(photo: np.ndarray, centres, scales, angles) -> np.ndarray:
    """Sample a SIZE window centred at (row, col), magnified by `scale`, rotated by `angle`."""
    h, w = SIZE
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    ys -= (h - 1) / 2
    xs -= (w - 1) / 2
    frames = []
    for (cy, cx), scale, angle in zip(centres, scales, angles):
        cos, sin = np.cos(angle), np.sin(angle)
        rows = cy + (cos * ys - sin * xs) / scale
        cols = cx + (sin * ys + cos * xs) / scale
        frame = ndimage.map_coordinates(photo, [rows, cols], order=3, mode="reflect")
        frames.append(np.clip(np.rint(frame), 0, 255).astype(np.uint8))
    return np.stack(frames)


def _phase(n: int, there_and_back: bool) -> np.ndarray:
    # A quarter-frame offset: sampled symmetrically about the turning point, frames i and n − i
    # of a there-and-back trajectory would be bit-identical, which no camera gives and which
    # halves the kernel's rank (k could not exceed the number of distinct frames).
    t = (np.arange(n) + 0.25) / n
    return 0.5 - 0.5 * np.cos(2 * np.pi * t) if there_and_back else 0.5 - 0.5 * np.cos(np.pi * t)


def pan(name: str, distance: float = 60.0, there_and_back: bool = True, n: int = N_FRAMES) -> np.ndarray:
    photo = _photo(name)
    p = _phase(n, there_and_back)
    cy, cx = photo.shape[0] / 2, photo.shape[1] / 2
    centres = [(cy + 0.3 * distance * np.sin(np.pi * q), cx - distance / 2 + distance * q) for q in p]
    return _render(photo, centres, np.ones(n), np.zeros(n))


def zoom(name: str, factor: float = 1.6, there_and_back: bool = True, n: int = N_FRAMES) -> np.ndarray:
    photo = _photo(name)
    p = _phase(n, there_and_back)
    centre = (photo.shape[0] / 2, photo.shape[1] / 2)
    return _render(photo, [centre] * n, factor**p, np.zeros(n))


def rotate(name: str, degrees: float = 30.0, there_and_back: bool = True, n: int = N_FRAMES) -> np.ndarray:
    photo = _photo(name)
    p = _phase(n, there_and_back)
    centre = (photo.shape[0] / 2, photo.shape[1] / 2)
    return _render(photo, [centre] * n, np.full(n, 1.2), np.deg2rad(degrees) * (p - 0.5))


def orbit(name: str, radius: float = 25.0, n: int = N_FRAMES) -> np.ndarray:
    """A camera circling over the scene: a closed 1-D loop, like a periodic motion."""
    photo = _photo(name)
    t = 2 * np.pi * np.arange(n) / n
    cy, cx = photo.shape[0] / 2, photo.shape[1] / 2
    centres = [(cy + radius * np.sin(a), cx + radius * np.cos(a)) for a in t]
    return _render(photo, centres, np.ones(n), np.zeros(n))


def pan_zoom(name: str, distance: float = 60.0, factor: float = 1.5, n: int = N_FRAMES) -> np.ndarray:
    """Two degrees of freedom: a pan there and back while the camera zooms in and out twice,
    out of step, so the frames fill a 2-D sheet rather than a curve."""
    photo = _photo(name)
    t = (np.arange(n) + 0.25) / n
    p = 0.5 - 0.5 * np.cos(2 * np.pi * t)
    q = 0.5 - 0.5 * np.cos(4 * np.pi * t + 1.0)
    cy, cx = photo.shape[0] / 2, photo.shape[1] / 2
    centres = [(cy, cx - distance / 2 + distance * a) for a in p]
    return _render(photo, centres, factor**q, np.zeros(n))


def pan_rotate(name: str, distance: float = 50.0, degrees: float = 20.0, n: int = N_FRAMES) -> np.ndarray:
    """Two degrees of freedom: a one-way pan while the camera rolls back and forth three times."""
    photo = _photo(name)
    t = (np.arange(n) + 0.25) / n
    p = 0.5 - 0.5 * np.cos(np.pi * t)
    angles = np.deg2rad(degrees) * 0.5 * np.sin(6 * np.pi * t)
    cy, cx = photo.shape[0] / 2, photo.shape[1] / 2
    centres = [(cy, cx - distance / 2 + distance * a) for a in p]
    return _render(photo, centres, np.full(n, 1.2), angles)


# name -> function making the (n, 120, 160) uint8 sequence
SEQUENCES = {
    "pan-astronaut": lambda: pan("astronaut"),
    "pan-coffee-oneway": lambda: pan("coffee", distance=90.0, there_and_back=False),
    "zoom-chelsea": lambda: zoom("chelsea"),
    "rotate-camera": lambda: rotate("camera"),
    "orbit-motorcycle": lambda: orbit("motorcycle"),
    "pan-rocket-fast": lambda: pan("rocket", distance=160.0),
}


def load_sequence(name: str) -> np.ndarray:
    return SEQUENCES[name]()


def figure_eight(name: str, amplitude: float = 14.0, n: int = N_FRAMES) -> np.ndarray:
    """A pan along a figure eight: the path crosses itself, so views from distant times meet."""
    photo = _photo(name)
    t = 2 * np.pi * (np.arange(n) + 0.25) / n  # the offset keeps held-out frames off the crossing
    cy, cx = photo.shape[0] / 2, photo.shape[1] / 2
    centres = [(cy + amplitude * np.sin(2 * a), cx + 2 * amplitude * np.sin(a)) for a in t]
    return _render(photo, centres, np.ones(n), np.zeros(n))


SEQUENCES["eight-coffee"] = lambda: figure_eight("coffee")
SEQUENCES["panzoom-astronaut"] = lambda: pan_zoom("astronaut")
SEQUENCES["panroll-chelsea"] = lambda: pan_rotate("chelsea")
