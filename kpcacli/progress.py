"""Progress bars on standard error, silent with ``-q`` or when standard error is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def progress_bar(enabled: bool, **kwargs) -> tqdm:
    """A tqdm bar on standard error; disabled unless `enabled` and standard error is a terminal."""
    stream = sys.stderr
    active = bool(enabled) and on_terminal(stream)
    return tqdm(file=stream, disable=not active, leave=False, dynamic_ncols=True, **kwargs)


def on_terminal(stream) -> bool:
    """Whether `stream` is a terminal, where a bar is read rather than logged."""
    return hasattr(stream, "isatty") and stream.isatty()


def counted(items: Iterable[T], bar: tqdm) -> Iterator[T]:
    """`items`, passed through one at a time, each counted on `bar` once it has been made."""
    for item in items:
        bar.update()
        yield item
