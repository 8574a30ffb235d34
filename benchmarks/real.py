"""Real camera footage for the benchmarks: the image sequences of Debian's
``visp-images-data`` (ViSP's test data, GPL-2, Inria), installed by ``make bench-data``.

=============  ======  ==========  =================================================
sequence       frames  size        what the camera sees
=============  ======  ==========  =================================================
``mire-2``     501     384 x 288   a card moved by hand before a street poster
``mbt-cube``   218     640 x 480   a hand moves past a cube on a desk
``cube``       80      384 x 288   a cube, the camera moving
``ellipse-1``  50      384 x 288   an ellipse, the camera moving
``line``       33      384 x 288   a line, the camera moving
=============  ======  ==========  =================================================

They are folders of PGM frames; :func:`real_clip` turns one into an H.264 clip with ``kpca
extract`` (as a user's footage arrives), kept in ``$KPCA_BENCH_DIR``. Where apt is not
available, put the ``ViSP-images`` folder anywhere and point ``KPCA_REAL_DATA`` at it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_ROOT = Path("/usr/share/visp-images-data/ViSP-images")
SEQUENCES = {"mire-2": "mire-2", "mbt-cube": "mbt/cube", "cube": "cube", "ellipse-1": "ellipse-1", "line": "line"}
# Kept apart for checking what the sequences above shaped: no choice, threshold or default was
# tuned on them (docs/quality.md, "Checked on footage nothing was tuned on"). castel: 30 frames
# of 640 x 480, a camera circling a model castle; cube.mpeg: 79 frames of 384 x 288 MPEG-1, a
# cube and the camera moving; castle-simu: 40 rendered frames of 640 x 480 of the same castle
# (added to check whole frames from part of them, docs/reconstruct.md).
UNSEEN = {
    "castel": "mbt-depth/castel/castel",
    "cube-mpeg": "video/cube.mpeg",
    "castle-simu": "mbt-depth/Castle-simu/Images",
}
CACHE = Path(os.environ.get("KPCA_BENCH_DIR") or Path(tempfile.gettempdir()) / "kpca-bench")


def real_root() -> Path:
    """Where the ViSP-images folders are: ``$KPCA_REAL_DATA``, else Debian's place."""
    return Path(os.environ.get("KPCA_REAL_DATA") or DEFAULT_ROOT)


def real_sequences(names=None, unseen: bool = False) -> dict[str, Path]:
    """The real sequences present, by name, in the order of ``SEQUENCES`` (all, or `names`);
    with `unseen`, those of ``UNSEEN`` instead."""
    root, table = real_root(), UNSEEN if unseen else SEQUENCES
    chosen = table if names is None else {name: table[name] for name in names}
    return {name: root / place for name, place in chosen.items() if (root / place).exists()}


def real_clip(name: str, crf: int = 18) -> Path:
    """The real sequence `name` as an H.264 clip at 30 fps (x264 at `crf`, made once with
    ``kpca extract``), as a camera's footage reaches a user."""
    folder = real_sequences([name]).get(name)
    if folder is None:
        sys.exit(f"no real sequence {name!r} under {real_root()}: run `make bench-data` or set KPCA_REAL_DATA")
    clip = CACHE / f"real-{name}-crf{crf}.mp4"
    if not clip.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        kpca = [sys.executable, "-m", "kpcacli"]
        subprocess.run([*kpca, "extract", str(folder), "-o", str(clip), "--fps", "30", "--crf", str(crf)], check=True)
    return clip
