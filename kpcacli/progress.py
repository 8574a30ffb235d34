"""Progress bars on standard error, silent with ``-q`` or when standard error is not a terminal."""

from __future__ import annotations

import sys

from tqdm import tqdm


def progress_bar(enabled: bool, **kwargs) -> tqdm:
    """A tqdm bar on standard error; disabled unless `enabled` and standard error is a terminal."""
    stream = sys.stderr
    active = bool(enabled) and hasattr(stream, "isatty") and stream.isatty()
    return tqdm(file=stream, disable=not active, leave=False, dynamic_ncols=True, **kwargs)
