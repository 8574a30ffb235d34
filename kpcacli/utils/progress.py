"""Progress bars on standard error, silent with ``-q`` or when standard error is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


class SilentBar:
    """What a bar nobody sees does: nothing. tqdm is imported only for a bar that is shown
    (its import reads importlib.metadata for its version)."""

    def update(self, count: int = 1) -> None:
        pass

    def __enter__(self) -> SilentBar:
        return self

    def __exit__(self, *exc) -> None:
        pass


def progress_bar(enabled: bool, **kwargs):
    """A tqdm bar on standard error; a :class:`SilentBar` unless `enabled` and standard error
    is a terminal."""
    stream = sys.stderr
    if not (enabled and on_terminal(stream)):
        return SilentBar()
    from tqdm import tqdm

    return tqdm(file=stream, leave=False, dynamic_ncols=True, **kwargs)


def on_terminal(stream) -> bool:
    """Whether `stream` is a terminal, where a bar is read rather than logged."""
    return hasattr(stream, "isatty") and stream.isatty()


def counted(items: Iterable[T], bar) -> Iterator[T]:
    """`items`, passed through one at a time, each counted on `bar` once it has been made."""
    for item in items:
        bar.update()
        yield item
