"""Atomic output files: a temporary file beside the target, renamed onto it when complete.

An error, Ctrl-C or SIGTERM never leaves a half-written output or clobbers the previous file:
the temporary file is removed and the target is untouched. Every file ends up with the mode a
plain ``open(path, "w")`` would give it (``0o666`` less the umask), not ``mkstemp``'s 0600, so
a model or PNG written for a colleague or a web server can be read by them.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from .errors import KpcaError

_UMASK_LOCK = threading.Lock()


def file_mode() -> int:
    """The permission bits a newly created file gets: ``0o666`` less the process umask.

    The umask can only be read by setting it, so it is set and restored under a lock.
    """
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def check_target(path: str | os.PathLike) -> None:
    """Refuse early an output path that is a folder or whose folder does not exist."""
    path = Path(path)
    if path.is_dir():
        raise KpcaError(f"'{path}' is a folder; give a file name")
    if not path.parent.is_dir():
        raise KpcaError(f"cannot write '{path}': folder '{path.parent}' does not exist")


def write_error(path: str | os.PathLike, error: OSError) -> KpcaError:
    """The one-line error for an OSError met while writing `path`."""
    if error.errno == errno.ENOSPC:
        return KpcaError(f"no space left on the device while writing '{path}'")
    return KpcaError(f"cannot write '{path}': {error.strerror or error}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside `path` (same suffix); renamed onto `path` if the block succeeds.

    On any error, or Ctrl-C, the temporary file is removed and `path` is left untouched.
    """
    path = Path(path)
    check_target(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    try:
        os.fchmod(handle, file_mode())
    finally:
        os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except OSError as error:
        remove_quietly(temporary)
        raise write_error(path, error) from None
    except BaseException:
        remove_quietly(temporary)
        raise


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, mode: str = "wb") -> Iterator:
    """Like :func:`atomic_path`, but yields the open temporary file (flushed to disk on success)."""
    with atomic_path(path) as temporary, open(temporary, mode) as out:
        yield out
        out.flush()
        os.fsync(out.fileno())


def remove_quietly(path: str | os.PathLike) -> None:
    """Delete `path` if it exists."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
