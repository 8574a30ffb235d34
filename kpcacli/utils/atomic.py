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


def _umask() -> int:
    """The process umask (it can only be read by setting it: set and restored under a lock)."""
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The permission bits a newly created file gets: ``0o666`` less the process umask."""
    return 0o666 & ~_umask()


def directory_mode() -> int:
    """The permission bits a newly created directory gets: ``0o777`` less the umask."""
    return 0o777 & ~_umask()


def check_target(path: str | os.PathLike) -> None:
    """Refuse early, before any work, an output path that is a folder, whose folder does not
    exist (:func:`check_place`), or where no file can be written (:func:`check_writable`)."""
    check_place(path)
    check_writable(path)


def check_place(path: str | os.PathLike) -> None:
    """Refuse an output path that is a folder or whose folder does not exist: what a writer
    checks before it creates its temporary file, whose own failure names `path` as given."""
    path = Path(path)
    if path.is_dir():
        raise KpcaError(f"'{path}' is a folder; give a file name")
    if not path.parent.is_dir():
        raise KpcaError(f"cannot write '{path}': folder '{path.parent}' does not exist")


def check_writable(path: str | os.PathLike, folder: str | os.PathLike | None = None) -> None:
    """Refuse, naming `path` as the user gave it, an output whose folder (`folder`, default its
    parent) takes no new file (read only, no permission, a pseudo file system): kpca writes
    beside it first, under a name of its own, which the system's error would name instead.
    Creates and removes an anonymous file there, so that the refusal comes before any frame
    is read."""
    try:
        AnonymousFile(Path(path).parent if folder is None else folder).close()
    except OSError as error:
        raise write_error(path, error) from None


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
    check_place(path)  # no probe of the folder: the temporary file's creation is one, named `path`
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    except OSError as error:
        raise write_error(path, error) from None
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


class AnonymousFile:
    """A temporary file in `directory` with no name until :meth:`publish` gives it one.

    On Linux it is an O_TMPFILE file, so nothing is left behind whatever ends the process,
    SIGKILL included; elsewhere (or on file systems without O_TMPFILE) it is a hidden named
    file that :meth:`close` removes. Use it as a context manager.

    Attributes
    ----------
    file : binary file opened for reading and writing
    """

    def __init__(self, directory: str | os.PathLike, prefix: str = ".kpca-"):
        self.directory = Path(directory)
        self.path: Path | None = None  # its name, unless it is anonymous
        flag = getattr(os, "O_TMPFILE", None)
        handle = None
        if flag is not None:
            with contextlib.suppress(OSError):
                handle = os.open(self.directory, flag | os.O_RDWR, 0o600)
        if handle is None:
            handle, name = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=self.directory)
            self.path = Path(name)
        self.file = os.fdopen(handle, "w+b")

    def __enter__(self) -> AnonymousFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def publish(self, target: str | os.PathLike) -> None:
        """Flush the file to disk and give it the name `target` atomically (replacing any
        file there), with the umask's mode; the file is closed afterwards."""
        target = Path(target)
        self.file.flush()
        os.fchmod(self.file.fileno(), file_mode())  # created 0600: give it the umask's mode
        os.fsync(self.file.fileno())
        if self.path is None:  # anonymous: link it into the folder under a temporary name first
            handle, name = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=self.directory)
            os.close(handle)
            os.unlink(name)
            # linkat(AT_SYMLINK_FOLLOW) through /proc names the anonymous file; CPython uses
            # linkat only when given a directory descriptor, plain link() would not follow.
            folder = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.link(f"/proc/self/fd/{self.file.fileno()}", Path(name).name, dst_dir_fd=folder, follow_symlinks=True)
            finally:
                os.close(folder)
            self.path = Path(name)
        try:
            os.replace(self.path, target)
        except OSError:
            self.path.unlink(missing_ok=True)
            raise
        self.path = None  # the file has its name now: nothing to remove
        self.close()

    def close(self) -> None:
        """Close the file and delete it unless published (safe to call more than once)."""
        if self.file is not None:
            self.file.close()
            self.file = None
        if self.path is not None:
            remove_quietly(self.path)
            self.path = None
